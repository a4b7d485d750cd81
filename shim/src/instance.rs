//! One container of the task API: created, started, signalled, waited for, deleted.

use std::sync::{Condvar, Mutex, OnceLock};

use anyhow::Result;
use chrono::{DateTime, Utc};
use containerd_shim::monitor::{ExitEvent, Subject, Topic, monitor_subscribe};
use containerd_shimkit::sandbox::InstanceConfig;

use crate::container::Container;

/// The exit status reported when a container's end was not seen: its start failed, or it was
/// deleted without a start (a `SIGKILL` of the container's process is seen, and is 137 too).
pub const EXIT_UNSEEN: u32 = 137;

/// A container's exit status and when it was seen.
pub type Exit = (u32, DateTime<Utc>);

/// One container of the runtime `io.containerd.wrt.v1`.
pub struct WrtInstance {
    container: Container,
    /// The container's first process, once started.
    pid: OnceLock<u32>,
    exit: Mutex<Option<Exit>>,
    exited: Condvar,
}

impl std::fmt::Debug for WrtInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WrtInstance").field("pid", &self.pid.get()).finish_non_exhaustive()
    }
}

impl WrtInstance {
    /// Creates container `id` (compiling its guest into the node's cache first).
    pub fn create(id: &str, cfg: &InstanceConfig) -> Result<Self> {
        crate::prepare::compile_into_cache(&cfg.bundle);
        let container = Container::create(id, cfg)?;
        Ok(Self { container, pid: OnceLock::new(), exit: Mutex::new(None), exited: Condvar::new() })
    }

    /// The container's first process: created, not yet started, until [`Self::start`].
    pub fn process(&self) -> Result<u32> {
        Ok(self.container.pid()?.unsigned_abs())
    }

    /// The started container's first process.
    pub fn pid(&self) -> Option<u32> {
        self.pid.get().copied()
    }

    /// Starts the container and watches for its end; returns its first process.
    pub fn start(self: &std::sync::Arc<Self>) -> Result<u32> {
        let pid = self.container.pid()?;
        // Subscribed before the start, so that the exit cannot come first. The shim's reaper
        // collects the container's process (created as a child of the shim) and publishes it.
        let exits = monitor_subscribe(Topic::Pid)?;
        if let Err(err) = self.container.start() {
            self.set_exit(EXIT_UNSEEN);
            return Err(err);
        }
        let _ = self.pid.set(pid.unsigned_abs());
        let this = std::sync::Arc::clone(self);
        std::thread::spawn(move || {
            while let Ok(ExitEvent { subject, exit_code }) = exits.rx.recv() {
                if matches!(subject, Subject::Pid(p) if p == pid) {
                    this.set_exit(u32::try_from(exit_code).unwrap_or(EXIT_UNSEEN));
                    return;
                }
            }
            this.set_exit(EXIT_UNSEEN);
        });
        Ok(pid.unsigned_abs())
    }

    /// Sends `signal` to every process of the container.
    pub fn kill(&self, signal: u32) -> Result<()> {
        self.container.kill(signal)
    }

    /// Removes the container; a wait for a container deleted before its end returns.
    pub fn delete(&self) -> Result<()> {
        self.container.delete()?;
        self.set_exit(EXIT_UNSEEN);
        Ok(())
    }

    /// The container's exit, if it has ended.
    pub fn exit(&self) -> Option<Exit> {
        *self.exit.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits for the container's end.
    pub fn wait(&self) -> Exit {
        let exit = self.exit.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let exit =
            self.exited.wait_while(exit, |exit| exit.is_none()).unwrap_or_else(std::sync::PoisonError::into_inner);
        exit.unwrap_or((EXIT_UNSEEN, Utc::now()))
    }

    /// Records the first exit seen; later ones change nothing.
    fn set_exit(&self, status: u32) {
        let mut exit = self.exit.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if exit.is_none() {
            *exit = Some((status, Utc::now()));
            self.exited.notify_all();
        }
    }
}

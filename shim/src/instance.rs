//! containerd's task API for one container: create, start, kill, delete and wait, as
//! containerd-shimkit's [`Instance`] (shimkit serves the API and reaps the shim's children).

use chrono::{DateTime, Utc};
use containerd_shim::monitor::{ExitEvent, Subject, Topic, monitor_subscribe};
use containerd_shimkit::sandbox::sync::WaitableCell;
use containerd_shimkit::sandbox::{Error, Instance, InstanceConfig};

use crate::container::Container;

/// The exit status reported when a container's end was not seen: its start failed, or it was
/// deleted without a start (a `SIGKILL` of the container's process is seen, and is 137 too).
const EXIT_UNSEEN: u32 = 137;

/// One container of the runtime `io.containerd.wrt.v1`.
pub struct WrtInstance {
    container: Container,
    exit: WaitableCell<(u32, DateTime<Utc>)>,
}

impl std::fmt::Debug for WrtInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WrtInstance").field("pid", &self.container.pid().ok()).finish_non_exhaustive()
    }
}

impl Instance for WrtInstance {
    async fn new(id: String, cfg: &InstanceConfig) -> Result<Self, Error> {
        crate::prepare::compile_into_cache(&cfg.bundle);
        let container = Container::create(&id, cfg)?;
        Ok(Self { container, exit: WaitableCell::new() })
    }

    async fn start(&self) -> Result<u32, Error> {
        // An exit status is set however the wait below ends, even by a panic.
        let unseen = self.exit.clone().set_guard_with(|| (EXIT_UNSEEN, Utc::now()));
        let pid = self.container.pid()?;
        // Subscribed before the start, so that the exit cannot come first. The shim's reaper
        // collects the container's process (created as a child of the shim) and publishes it.
        let exits = monitor_subscribe(Topic::Pid)?;
        self.container.start()?;
        let exit = self.exit.clone();
        std::thread::spawn(move || {
            let _unseen = unseen;
            while let Ok(ExitEvent { subject, exit_code }) = exits.rx.recv() {
                if matches!(subject, Subject::Pid(p) if p == pid) {
                    let _ = exit.set((u32::try_from(exit_code).unwrap_or(EXIT_UNSEEN), Utc::now()));
                    return;
                }
            }
        });
        Ok(pid.unsigned_abs())
    }

    async fn kill(&self, signal: u32) -> Result<(), Error> {
        Ok(self.container.kill(signal)?)
    }

    async fn delete(&self) -> Result<(), Error> {
        self.container.delete()?;
        // A container deleted without a start has ended too: a wait for it returns.
        let _ = self.exit.set((EXIT_UNSEEN, Utc::now()));
        Ok(())
    }

    async fn wait(&self) -> (u32, DateTime<Utc>) {
        *self.exit.wait().await
    }
}

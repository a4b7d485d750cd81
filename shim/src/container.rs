//! One container, created and driven by libcontainer inside a process of its own: a zygote,
//! forked from the shim's global zygote (which the shim forks before it starts any thread).
//! libcontainer forks and changes process state, which a multi-threaded shim may not do, and
//! the container's process is created as the zygote's sibling, so the shim (a subreaper)
//! collects its exit. Each operation runs in the zygote and sends back its result.

use std::cell::RefCell;

use anyhow::{Result, anyhow};
use containerd_shimkit::sandbox::InstanceConfig;
use libcontainer::container::Container as Youki;
use libcontainer::container::builder::ContainerBuilder;
use libcontainer::signal::Signal;
use libcontainer::syscall::syscall::SyscallType;
use serde::Serialize;
use serde::de::DeserializeOwned;
use zygote::Zygote;

use crate::executor::WrtExecutor;

thread_local! {
    /// The zygote's container (each zygote holds one).
    static CONTAINER: RefCell<Option<Youki>> = const { RefCell::new(None) };
}

/// A created container, held by its zygote; dropping it ends the zygote.
pub struct Container(Zygote);

impl Container {
    /// Creates container `id` from its bundle (`cfg.bundle`), with the task's stdio.
    pub fn create(id: &str, cfg: &InstanceConfig) -> Result<Self> {
        let zygote = Zygote::global().spawn();
        let container = Container(zygote);
        container.run(create, (id.to_owned(), cfg.clone()))?;
        Ok(container)
    }

    /// The container's first process.
    pub fn pid(&self) -> Result<i32> {
        self.run(pid, ())
    }

    /// Lets the container's first process run its workload.
    pub fn start(&self) -> Result<()> {
        self.run(start, ())
    }

    /// Sends `signal` to every process of the container.
    pub fn kill(&self, signal: u32) -> Result<()> {
        self.run(kill, signal)
    }

    /// Removes the container: its cgroup and libcontainer's state.
    pub fn delete(&self) -> Result<()> {
        self.run(delete, ())
    }

    fn run<A: Serialize + DeserializeOwned + 'static, T: Serialize + DeserializeOwned + 'static>(
        &self,
        f: fn(A) -> Result<T, String>,
        arg: A,
    ) -> Result<T> {
        self.0
            .try_run(f, arg)
            .map_err(|err| anyhow!("the container's zygote failed: {err}"))?
            .map_err(|err| anyhow!(err))
    }
}

fn create((id, cfg): (String, InstanceConfig)) -> Result<(), String> {
    crate::prepare::prepare(&cfg.bundle)?;
    let text = |err: &dyn std::fmt::Display| err.to_string();
    let root = cfg.determine_rootdir(crate::NAME).map_err(|e| text(&e))?;
    let mut builder = ContainerBuilder::new(id, SyscallType::Linux)
        .with_executor(WrtExecutor)
        .with_root_path(root)
        .map_err(|e| text(&e))?;
    if let Ok(stdin) = cfg.open_stdin() {
        builder = builder.with_stdin(stdin);
    }
    if let Ok(stdout) = cfg.open_stdout() {
        builder = builder.with_stdout(stdout);
    }
    if let Ok(stderr) = cfg.open_stderr() {
        builder = builder.with_stderr(stderr);
    }
    let container = builder
        .as_init(&cfg.bundle)
        .as_sibling(true)
        .with_systemd(cfg.config.systemd_cgroup)
        .build()
        .map_err(|e| text(&e))?;
    CONTAINER.with_borrow_mut(|held| *held = Some(container));
    Ok(())
}

/// Runs `f` on the zygote's container.
fn with_container<T>(f: impl FnOnce(&mut Youki) -> Result<T, String>) -> Result<T, String> {
    CONTAINER.with_borrow_mut(|held| f(held.as_mut().ok_or("the container was not created")?))
}

fn pid((): ()) -> Result<i32, String> {
    with_container(|c| c.pid().map(|pid| pid.as_raw()).ok_or_else(|| "the container has no process".to_owned()))
}

fn start((): ()) -> Result<(), String> {
    with_container(|c| c.start().map_err(|e| e.to_string()))
}

fn kill(signal: u32) -> Result<(), String> {
    let signal = i32::try_from(signal).ok().and_then(|s| Signal::try_from(s).ok());
    let signal = signal.ok_or_else(|| "not a signal number".to_owned())?;
    with_container(|c| c.kill(signal, true).map_err(|e| e.to_string()))
}

fn delete((): ()) -> Result<(), String> {
    with_container(|c| c.delete(true).map_err(|e| e.to_string()))
}

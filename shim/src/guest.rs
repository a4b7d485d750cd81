//! One container's guest, loaded before the container was created
//! ([`prepare`](crate::prepare)), run by `wrt-runtime` as the container's first process (its
//! root file system, namespaces and cgroup in place), with the container's arguments, stdio
//! and environment, and the [`Config`] of its `WRT_*` variables.

use std::io::Write as _;

use anyhow::{Context as _, Result};
use wrt_runtime::wrt_host_spawn::{AuditSink, Policy};
use wrt_runtime::{GuestOutput, GuestStdin, RunOptions};

use crate::config::{Audit, Config};
use crate::prepare::{Loaded, Ready};

/// The exit status of a container whose guest could not be run at all (bad settings, a
/// module that is not valid wasm, a policy file that does not parse), as `docker run` reports
/// errors of the runtime itself. The reason is written to the task's stderr first.
pub const EXIT_NOT_RUN: i32 = 125;

/// Runs the guest (`loaded`, or the reason it could not be) to its end and returns the
/// container's exit status: the guest's own, or wrt's for a trap, a timeout or
/// [`EXIT_NOT_RUN`].
pub fn run(ready: &Ready, loaded: &Loaded) -> i32 {
    match try_run(ready, loaded) {
        Ok(status) => i32::from(status),
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "wrt: {err:#}");
            EXIT_NOT_RUN
        }
    }
}

fn try_run(ready: &Ready, loaded: &Loaded) -> Result<u8> {
    let guest = &ready.guest;
    let config = Config::from_env(&guest.env)?;
    let policy = match &config.policy {
        Some(path) => {
            let policy = Policy::from_file(path).with_context(|| format!("WRT_POLICY={path:?}"))?;
            ready.spawn.check(&policy).map_err(|refused| anyhow::anyhow!("WRT_POLICY={path:?}: {refused}"))?;
            policy
        }
        None => Policy::deny_all(),
    };
    let module = loaded.as_ref().map_err(|err| anyhow::anyhow!("{err}"))?;
    let mut options = RunOptions::new()
        .argv0(&guest.argv0)
        .args(&guest.args)
        .stdin(GuestStdin::Inherit)
        .stdout(GuestOutput::Inherit)
        .stderr(GuestOutput::Inherit)
        // The container is the guest's view already (its own mount, PID and IPC namespaces,
        // made by the shim as runc makes them); inside it, a runtime's seccomp profile and its
        // masked `/proc` refuse the namespaces and the `/proc` a child view needs.
        .child_view(false)
        .spawn_policy(&policy)?;
    for (name, value) in config.guest_env {
        options = options.env(name, value)?;
    }
    if let Some(timeout) = config.timeout {
        options = options.timeout(timeout);
    }
    if let Some(bytes) = config.max_memory {
        options = options.max_memory(bytes);
    }
    match config.audit {
        Some(Audit::Stderr) => options = options.audit_sink(AuditSink::new(std::io::stderr())),
        Some(Audit::File(path)) => options = options.audit_log(path),
        None => {}
    }
    Ok(module.run(&options)?.outcome.exit_status())
}

//! One container's run: the guest the image's entrypoint names, run by `wrt-runtime` inside the
//! container (its root file system, namespaces and cgroup already set up by the shim), with the
//! container's arguments and stdio and the [`Config`] of its `WRT_*` variables.

use std::io::Write as _;

use anyhow::{Context as _, Result};
use containerd_shim_wasm::sandbox::Sandbox;
use containerd_shim_wasm::sandbox::context::{RuntimeContext, Source};
use wrt_runtime::wrt_host_spawn::{AuditSink, Policy};
use wrt_runtime::{GuestOutput, GuestStdin, RunOptions, Runtime};

use crate::config::{Audit, Config};

/// The exit status of a container whose guest could not be run at all (bad settings, a
/// module that is not wasm, a policy file that does not parse), as `docker run` reports errors
/// of the runtime itself. The reason is written to the task's stderr first.
const EXIT_NOT_RUN: i32 = 125;

/// Runs one container's guest: one per container, made by the shim.
#[derive(Debug, Default)]
pub struct WrtSandbox;

impl Sandbox for WrtSandbox {
    async fn run_wasi(&self, ctx: &impl RuntimeContext) -> Result<i32> {
        match run(ctx).await {
            Ok(status) => Ok(i32::from(status)),
            Err(err) => {
                let _ = writeln!(std::io::stderr(), "wrt: {err:#}");
                Ok(EXIT_NOT_RUN)
            }
        }
    }
}

async fn run(ctx: &impl RuntimeContext) -> Result<u8> {
    let config = Config::from_env(ctx.envs())?;
    let entrypoint = ctx.entrypoint();
    let runtime = Runtime::new()?;
    let guest = match &entrypoint.source {
        Source::File(path) => runtime.load_file(path)?,
        Source::Oci(_) => {
            let name = entrypoint.name.as_deref().unwrap_or("guest");
            runtime.load_bytes(name, &entrypoint.source.as_bytes()?)?
        }
    };
    let mut options = RunOptions::new()
        .args(ctx.args().iter().skip(1))
        .stdin(GuestStdin::Inherit)
        .stdout(GuestOutput::Inherit)
        .stderr(GuestOutput::Inherit);
    if let Some(arg0) = entrypoint.arg0 {
        options = options.argv0(arg0.to_string_lossy());
    }
    for (name, value) in config.guest_env {
        options = options.env(name, value)?;
    }
    let policy = match &config.policy {
        Some(path) => Policy::from_file(path).with_context(|| format!("WRT_POLICY={}", path.display()))?,
        None => Policy::deny_all(),
    };
    options = options.spawn_policy(&policy)?;
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
    let report = if entrypoint.func == "_start" {
        guest.run_async(&options).await?
    } else {
        anyhow::bail!("entrypoint `#{}`: the shim runs `_start` only", entrypoint.func);
    };
    Ok(report.outcome.exit_status())
}

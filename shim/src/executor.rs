//! What libcontainer runs as a container's first process, once the container's namespaces,
//! cgroup and root file system are in place: what [`prepare`](crate::prepare) decided before
//! the process was forked. A guest runs in this process through [`guest::run`]; a pod's
//! sandbox container is executed natively.

use std::collections::HashMap;

use libcontainer::workload::default::DefaultExecutor;
use libcontainer::workload::{Executor, ExecutorError, ExecutorSetEnvsError, ExecutorValidationError};
use runtime_spec::runtime::Spec;
use wrt_runtime::CacheMode;

use crate::guest;
use crate::prepare::{Prepared, prepared};

/// What a container forked without [`prepare`](crate::prepare::prepare) says.
const UNPREPARED: &str = "wrt's shim did not prepare this container";

/// The shim's libcontainer executor.
#[derive(Debug, Clone, Copy, Default)]
pub struct WrtExecutor;

impl Executor for WrtExecutor {
    fn validate(&self, spec: &Spec) -> Result<(), ExecutorValidationError> {
        match prepared() {
            Some(Prepared::PodSandbox) => DefaultExecutor {}.validate(spec),
            Some(Prepared::Guest(_)) => Ok(()),
            None => Err(ExecutorValidationError::ArgValidationError(UNPREPARED.to_owned())),
        }
    }

    fn exec(&self, spec: &Spec) -> Result<(), ExecutorError> {
        match prepared() {
            Some(Prepared::PodSandbox) => DefaultExecutor {}.exec(spec),
            Some(Prepared::Guest(ready)) => {
                // What runc's process holds once it has called `execve`, which wrt never does.
                let capabilities = spec.process().as_ref().and_then(|p| p.capabilities().as_ref());
                crate::credentials::as_after_exec(capabilities)
                    .map_err(|err| ExecutorError::Other(format!("{err:#}")))?;
                own_the_container().map_err(|err| ExecutorError::Other(format!("{err:#}")))?;
                let compiled_here;
                let loaded = match &ready.loaded {
                    Some(loaded) => loaded,
                    None => {
                        compiled_here =
                            crate::prepare::load(&ready.guest, &ready.guest.bytes, CacheMode::Disabled, true);
                        &compiled_here
                    }
                };
                let code = guest::run(ready, loaded);
                // A `SIGTERM` that came meanwhile decides the status (143), even if the guest
                // ended first because its children died of the signal's cleanup.
                wrt_runtime::containment::hold_exit_while_ending();
                std::process::exit(code)
            }
            None => Err(ExecutorError::Other(UNPREPARED.to_owned())),
        }
    }

    /// For a guest, leaves this process's environment as it is: the container's environment is
    /// given to the guest alone (wrt's own process does not take the workload's variables).
    /// A pod's sandbox container gets the container's environment, and nothing of the shim's.
    fn setup_envs(&self, envs: HashMap<String, String>) -> Result<(), ExecutorSetEnvsError> {
        match prepared() {
            Some(Prepared::PodSandbox) => DefaultExecutor {}.setup_envs(envs),
            _ => Ok(()),
        }
    }
}

/// What wrt does as the owner of the container's first process, as `wrt run` does of its own:
/// orphans of the guest's children are reaped as they exit (the process is the PID namespace's
/// init, which the kernel gives every orphan); `SIGTERM`, `SIGINT` and `SIGHUP` end every
/// descendant and exit with 128 + the signal (the kernel delivers no signal to a namespace's
/// init that it does not handle, so without this `ctr task kill` and a pod's deletion could not
/// stop the guest before `SIGKILL`). The process is also made not dumpable, so that no
/// process of the container can open what it holds through `/proc/1/fd` (its compiled code is
/// a sealed copy of the node's cache entry, which no descriptor can write, however opened).
fn own_the_container() -> anyhow::Result<()> {
    use anyhow::Context as _;
    use wrt_runtime::containment;
    nix::sys::prctl::set_dumpable(false).context("failed to make the guest's process not dumpable")?;
    containment::contain_descendants().context("failed to become the subreaper of the guest's children")?;
    containment::end_on_signals().context("failed to set up signal handling")?;
    Ok(())
}

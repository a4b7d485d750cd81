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
                let (guest, loaded) = &**ready;
                let compiled_here;
                let loaded = match loaded {
                    Some(loaded) => loaded,
                    None => {
                        compiled_here = crate::prepare::load(guest, &guest.bytes, CacheMode::Disabled, true);
                        &compiled_here
                    }
                };
                std::process::exit(guest::run(guest, loaded))
            }
            None => Err(ExecutorError::Other(UNPREPARED.to_owned())),
        }
    }

    /// Leaves this process's environment as it is: a guest's environment is the container's,
    /// given to the guest alone (wrt's own process does not take the workload's variables),
    /// and the pod's sandbox container needs none.
    fn setup_envs(&self, _: HashMap<String, String>) -> Result<(), ExecutorSetEnvsError> {
        Ok(())
    }
}

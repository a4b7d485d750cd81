//! What libcontainer runs as a container's first process, once the container's namespaces,
//! cgroup and root file system are in place: the [`Workload`] its spec names. A guest runs
//! in this process through [`guest::run`]; a pod's sandbox container is executed natively;
//! any other container fails to start, with the reason.

use std::collections::HashMap;
use std::path::Path;

use libcontainer::workload::default::DefaultExecutor;
use libcontainer::workload::{Executor, ExecutorError, ExecutorSetEnvsError, ExecutorValidationError};
use runtime_spec::runtime::Spec;

use crate::guest;
use crate::workload::Workload;

/// The shim's libcontainer executor.
#[derive(Debug, Clone, Copy, Default)]
pub struct WrtExecutor;

impl Executor for WrtExecutor {
    fn validate(&self, spec: &Spec) -> Result<(), ExecutorValidationError> {
        match Workload::of(spec, Path::new("/")) {
            Ok(Workload::PodSandbox) => DefaultExecutor {}.validate(spec),
            Ok(Workload::Guest(_)) => Ok(()),
            Err(reason) => Err(ExecutorValidationError::ArgValidationError(reason)),
        }
    }

    fn exec(&self, spec: &Spec) -> Result<(), ExecutorError> {
        match Workload::of(spec, Path::new("/")).map_err(ExecutorError::Other)? {
            Workload::PodSandbox => DefaultExecutor {}.exec(spec),
            Workload::Guest(guest) => std::process::exit(guest::run(&guest)),
        }
    }

    /// Leaves this process's environment as it is: a guest's environment is the container's,
    /// given to the guest alone (wrt's own process does not take the workload's variables),
    /// and the pod's sandbox container needs none.
    fn setup_envs(&self, _: HashMap<String, String>) -> Result<(), ExecutorSetEnvsError> {
        Ok(())
    }
}

//! The node's settings, one for every container of the shim: the environment of containerd
//! (and so of its shims), which the node's operator sets and no workload reaches.
//!
//! | variable | meaning | unset |
//! |---|---|---|
//! | `CONTAINERD_SHIM_WRT_CACHE` | the directory of compiled guests, or `off` (each container compiles its guest inside itself) | [`DEFAULT_CACHE_DIR`] |
//! | `CONTAINERD_SHIM_WRT_SPAWN` | the most a workload's policy may allow: `policy` (what it says), `sandboxed` (only with the child sandbox on, never audit-only), `deny` (no host program) | `policy` |

use std::path::{Path, PathBuf};

use wrt_runtime::CacheMode;
use wrt_runtime::wrt_host_spawn::Policy;

/// The variable that places the node's cache of compiled guests.
pub const CACHE_VAR: &str = "CONTAINERD_SHIM_WRT_CACHE";

/// Where compiled guests are cached unless [`CACHE_VAR`] says otherwise. No container sees it:
/// the shim reads it on the host, before the container's root is in place.
pub const DEFAULT_CACHE_DIR: &str = "/var/cache/containerd-shim-wrt";

/// The variable that caps what a workload's spawn policy (`WRT_POLICY`) may allow.
pub const SPAWN_VAR: &str = "CONTAINERD_SHIM_WRT_SPAWN";

/// The node's cache, from [`CACHE_VAR`]: a relative path is refused (with a warning in the
/// shim's log) and means no cache.
pub fn cache() -> CacheMode {
    match std::env::var_os(CACHE_VAR) {
        None => CacheMode::Dir(PathBuf::from(DEFAULT_CACHE_DIR)),
        Some(value) if value == "off" => CacheMode::Disabled,
        Some(dir) if Path::new(&dir).is_absolute() => CacheMode::Dir(PathBuf::from(dir)),
        Some(dir) => {
            log::warn!("{CACHE_VAR}={dir:?} is not an absolute path: compiled guests are not cached");
            CacheMode::Disabled
        }
    }
}

/// The most a workload's spawn policy may allow on this node ([`SPAWN_VAR`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SpawnCeiling {
    /// The workload's policy as it is written.
    #[default]
    Policy,
    /// A policy only with the child sandbox on and not in audit-only mode.
    Sandboxed,
    /// No host program: a workload that names a policy is refused.
    Deny,
}

impl SpawnCeiling {
    /// The node's ceiling, from [`SPAWN_VAR`]. An unknown value is an error: a container is
    /// not created on a node whose ceiling cannot be read.
    pub fn of_node() -> Result<Self, String> {
        match std::env::var(SPAWN_VAR).as_deref() {
            Err(std::env::VarError::NotPresent) | Ok("policy") => Ok(SpawnCeiling::Policy),
            Ok("sandboxed") => Ok(SpawnCeiling::Sandboxed),
            Ok("deny") => Ok(SpawnCeiling::Deny),
            Ok(other) => Err(format!("{SPAWN_VAR}={other:?}: expected `policy`, `sandboxed` or `deny`")),
            Err(std::env::VarError::NotUnicode(other)) => {
                Err(format!("{SPAWN_VAR}={other:?}: expected `policy`, `sandboxed` or `deny`"))
            }
        }
    }

    /// Checks the workload's `policy` against the ceiling; the error says which part of the
    /// policy the node refuses.
    pub fn check(self, policy: &Policy) -> Result<(), String> {
        match self {
            SpawnCeiling::Policy => Ok(()),
            SpawnCeiling::Deny => Err(format!("host programs are off on this node ({SPAWN_VAR}=deny)")),
            SpawnCeiling::Sandboxed if !policy.is_child_sandboxed() => {
                Err(format!("the node requires the child sandbox ({SPAWN_VAR}=sandboxed); the policy turns it off"))
            }
            SpawnCeiling::Sandboxed if policy.is_audit_only() => {
                Err(format!("the node refuses audit-only policies ({SPAWN_VAR}=sandboxed)"))
            }
            SpawnCeiling::Sandboxed => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_ceiling_refuses_what_it_names_and_nothing_else() {
        let plain = Policy::deny_all().allow_program("/bin/sh");
        let unsandboxed = Policy::deny_all().allow_program("/bin/sh").child_sandbox(false);
        let audit_only = Policy::deny_all().audit_only(true);
        for policy in [&plain, &unsandboxed, &audit_only] {
            assert_eq!(SpawnCeiling::Policy.check(policy), Ok(()));
            assert!(SpawnCeiling::Deny.check(policy).unwrap_err().contains("=deny"));
        }
        assert_eq!(SpawnCeiling::Sandboxed.check(&plain), Ok(()));
        assert!(SpawnCeiling::Sandboxed.check(&unsandboxed).unwrap_err().contains("child sandbox"));
        assert!(SpawnCeiling::Sandboxed.check(&audit_only).unwrap_err().contains("audit-only"));
    }
}

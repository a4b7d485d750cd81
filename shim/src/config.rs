//! A container's wrt settings, from its environment: the image's `Env` or the pod's `env`, the
//! one channel every workload has (a pod's annotations reach a shim only where containerd's CRI
//! configuration passes them through). Every variable named here is removed from the guest's
//! environment; anything unset keeps wrt's deny-by-default value.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `WRT_POLICY` | path, in the container's root, of a spawn policy file (TOML) | no program may run |
//! | `WRT_TIMEOUT` | wall-clock limit of the run, such as `30s` or `500ms` | none |
//! | `WRT_MAX_MEMORY` | the guest's memory limit, such as `256MiB` | wrt's default |
//! | `WRT_AUDIT` | `stderr` (JSON lines on the task's stderr) or a file path | no audit log |

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use wrt_text::{parse_bytes, parse_duration};

/// Where a container's audit records go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Audit {
    Stderr,
    File(PathBuf),
}

/// What the `WRT_*` variables asked for, and the guest's own environment.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Config {
    pub policy: Option<PathBuf>,
    pub timeout: Option<Duration>,
    pub max_memory: Option<u64>,
    pub audit: Option<Audit>,
    /// The container's environment without the `WRT_*` variables above, as `(name, value)`.
    pub guest_env: Vec<(String, String)>,
}

impl Config {
    /// Reads `NAME=value` entries (the OCI process's `env`). An unknown `WRT_` variable is an
    /// error, so that a misspelt limit is not silently dropped.
    pub fn from_env(env: &[String]) -> Result<Self> {
        let mut config = Config::default();
        for entry in env {
            let (name, value) = entry.split_once('=').unwrap_or((entry, ""));
            match name {
                "WRT_POLICY" => config.policy = Some(PathBuf::from(value)),
                "WRT_TIMEOUT" => {
                    config.timeout = Some(parse_duration(value).with_context(|| format!("WRT_TIMEOUT={value:?}"))?);
                }
                "WRT_MAX_MEMORY" => {
                    config.max_memory = Some(parse_bytes(value).with_context(|| format!("WRT_MAX_MEMORY={value:?}"))?);
                }
                "WRT_AUDIT" if value == "stderr" => config.audit = Some(Audit::Stderr),
                "WRT_AUDIT" if value.starts_with('/') => config.audit = Some(Audit::File(PathBuf::from(value))),
                "WRT_AUDIT" => bail!("WRT_AUDIT={value:?}: expected `stderr` or an absolute path"),
                _ if name.starts_with("WRT_") => {
                    bail!(
                        "unknown setting {name:?}: the settings are WRT_POLICY, WRT_TIMEOUT, WRT_MAX_MEMORY and WRT_AUDIT"
                    )
                }
                _ => config.guest_env.push((name.to_owned(), value.to_owned())),
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|e| (*e).to_owned()).collect()
    }

    #[test]
    fn settings_are_read_and_kept_from_the_guest() {
        let config = Config::from_env(&env(&[
            "PATH=/bin",
            "WRT_POLICY=/etc/wrt/policy.toml",
            "WRT_TIMEOUT=2s",
            "WRT_MAX_MEMORY=64MiB",
            "WRT_AUDIT=stderr",
            "GREETING=a=b",
        ]))
        .unwrap();
        assert_eq!(config.policy, Some(PathBuf::from("/etc/wrt/policy.toml")));
        assert_eq!(config.timeout, Some(Duration::from_secs(2)));
        assert_eq!(config.max_memory, Some(64 << 20));
        assert_eq!(config.audit, Some(Audit::Stderr));
        let names: Vec<_> = config.guest_env.iter().map(|(n, v)| format!("{n}={v}")).collect();
        assert_eq!(names, ["PATH=/bin", "GREETING=a=b"]);
    }

    #[test]
    fn nothing_set_is_deny_by_default() {
        let config = Config::from_env(&[]).unwrap();
        assert_eq!(config, Config::default());
        assert!(config.policy.is_none() && config.timeout.is_none() && config.audit.is_none());
    }

    #[test]
    fn bad_and_unknown_settings_are_refused_by_name() {
        for (entry, says) in [
            ("WRT_TIMEOUT=soon", "WRT_TIMEOUT"),
            ("WRT_MAX_MEMORY=lots", "WRT_MAX_MEMORY"),
            ("WRT_AUDIT=relative.jsonl", "WRT_AUDIT"),
            ("WRT_POLCY=/p.toml", "unknown setting \"WRT_POLCY\""),
            ("WRT_\u{1b}[2J=x", "unknown setting \"WRT_\\u{1b}[2J\""),
        ] {
            let err = format!("{:#}", Config::from_env(&env(&[entry])).unwrap_err());
            assert!(err.contains(says), "{entry}: {err}");
        }
    }
}

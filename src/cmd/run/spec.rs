//! The spellings of `--dir`/`--ro-dir` (`HOST[::GUEST]`) and `--env` (`NAME[=VALUE]`), parsed
//! into the runtime's typed settings.

use wrt_runtime::{ConfigError, DirAccess, Preopen, RunOptions};

/// A `HOST[::GUEST]` directory mapping is malformed.
#[derive(Debug)]
pub(super) struct BadDirSpec {
    /// The mapping as given.
    spec: String,
    /// What is wrong.
    reason: &'static str,
}

impl std::fmt::Display for BadDirSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid directory mapping `{}`: {}", self.spec, self.reason)
    }
}

impl std::error::Error for BadDirSpec {}

/// Parses `HOST[::GUEST]`. Without `::GUEST` the guest sees the directory under the same path
/// as the host.
pub(super) fn preopen(spec: &str, access: DirAccess) -> Result<Preopen, BadDirSpec> {
    let bad = |reason| BadDirSpec { spec: spec.to_owned(), reason };
    let (host, guest) = spec.split_once("::").unwrap_or((spec, spec));
    if host.is_empty() {
        return Err(bad("the host directory is empty"));
    }
    if guest.is_empty() {
        return Err(bad("the guest path after `::` is empty"));
    }
    Ok(Preopen::new(host, guest, access))
}

/// Sets a variable from `NAME=VALUE`, or from `NAME` alone with the host's value of `NAME`, as
/// `wasmtime run --env` does.
pub(super) fn env(options: RunOptions, spec: &str) -> Result<RunOptions, ConfigError> {
    match spec.split_once('=') {
        Some((name, value)) => options.env(name, value),
        None => options.env_from_host(spec),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preopen_forms() {
        let p = preopen("/tmp", DirAccess::ReadWrite).unwrap();
        assert_eq!((p.host.to_str().unwrap(), p.guest.as_str(), p.access), ("/tmp", "/tmp", DirAccess::ReadWrite));
        let p = preopen("./x::/y", DirAccess::ReadOnly).unwrap();
        assert_eq!((p.host.to_str().unwrap(), p.guest.as_str(), p.access), ("./x", "/y", DirAccess::ReadOnly));
        let err = preopen("::/y", DirAccess::ReadOnly).unwrap_err().to_string();
        assert_eq!(err, "invalid directory mapping `::/y`: the host directory is empty");
        let err = preopen("/x::", DirAccess::ReadOnly).unwrap_err().to_string();
        assert_eq!(err, "invalid directory mapping `/x::`: the guest path after `::` is empty");
    }

    #[test]
    fn env_forms() {
        let options = env(RunOptions::new(), "A=1=2").unwrap();
        assert!(format!("{options:?}").contains(r#"("A", "1=2")"#), "{options:?}");
        for bad in ["", "=x", "A\0"] {
            let err = env(RunOptions::new(), bad).unwrap_err();
            assert!(matches!(err, ConfigError::BadEnv { .. }), "{bad:?}: {err}");
        }
        let err = env(RunOptions::new(), "WRT_TEST_SURELY_UNSET_VARIABLE").unwrap_err();
        assert!(matches!(err, ConfigError::EnvNotSet { .. }), "{err}");
    }
}

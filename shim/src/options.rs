//! The runtime's options, as containerd sends them with a task's creation: what a node's
//! containerd configuration says under `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.wrt.options]`.
//!
//! containerd sends a runtime that is not runc's a `runtimeoptions.v1.Options` message, made from
//! the table: containerd 1.6 keeps its `TypeUrl` and `ConfigPath` keys and drops every other
//! (so an `options` table holding only `SystemdCgroup = false`, which cluster installers write for
//! every runtime, arrives empty); later releases may send a `ConfigBody` too. `ConfigBody` is
//! TOML; `ConfigPath` names a TOML file on the node, read when there is no `ConfigBody`. Their
//! keys:
//!
//! | key | meaning |
//! |---|---|
//! | `SystemdCgroup` (or `systemd_cgroup`) | whether the node's cgroups are systemd's; checked against the form of each container's cgroup path, which decides (see [`crate::cgroup`]) |
//!
//! Any other key is refused by name, so that a misspelt option is not silently dropped.

use std::path::Path;

use anyhow::{Context as _, Result, bail};
use containerd_shim::protos::protobuf::CodedInputStream;
use containerd_shim::protos::protobuf::well_known_types::any::Any;
use serde::Deserialize;

/// The type of the options containerd sends a runtime that is not runc's.
pub const OPTIONS_TYPE: &str = "runtimeoptions.v1.Options";

/// The runtime's options.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// `SystemdCgroup`: `None` when the options leave it out.
    #[serde(rename = "SystemdCgroup", alias = "systemd_cgroup", default)]
    pub systemd_cgroup: Option<bool>,
}

impl Options {
    /// The options of a task's creation request, `None` meaning none were sent.
    pub fn of_request(options: Option<&Any>) -> Result<Options> {
        let Some(any) = options else { return Ok(Options::default()) };
        let type_name = any.type_url.rsplit('/').next().unwrap_or_default();
        if type_name != OPTIONS_TYPE {
            bail!(
                "options of type {:?}: the runtime io.containerd.wrt.v1 takes {OPTIONS_TYPE} (an `options` table with `ConfigPath` or `ConfigBody`)",
                any.type_url
            );
        }
        let (config_path, config_body) = decode(&any.value).context("the options message does not decode")?;
        if !config_body.is_empty() {
            return Options::of_toml(&config_body).context("the options' ConfigBody");
        }
        if !config_path.is_empty() {
            return Options::of_file(Path::new(&config_path));
        }
        Ok(Options::default())
    }

    fn of_file(path: &Path) -> Result<Options> {
        let text = std::fs::read_to_string(path).with_context(|| format!("the options' ConfigPath {path:?}"))?;
        Options::of_toml(&text).with_context(|| format!("the options' ConfigPath {path:?}"))
    }

    fn of_toml(text: &str) -> Result<Options> {
        toml::from_str(text).map_err(|err| anyhow::anyhow!("{}", err.message()))
    }
}

/// The `config_path` (field 2) and `config_body` (field 3) of a `runtimeoptions.v1.Options`;
/// its `type_url` (field 1) and unknown fields are skipped.
fn decode(bytes: &[u8]) -> Result<(String, String)> {
    let mut input = CodedInputStream::from_bytes(bytes);
    let (mut path, mut body) = (String::new(), String::new());
    while let Some(tag) = input.read_raw_tag_or_eof()? {
        match tag {
            // (field number << 3) | 2, the wire type of a string.
            0x12 => path = input.read_string()?,
            0x1a => body = input.read_string()?,
            tag => input.skip_field(
                containerd_shim::protos::protobuf::rt::WireType::new(tag & 7).context("a bad wire type")?,
            )?,
        }
    }
    Ok((path, body))
}

#[cfg(test)]
mod tests {
    use containerd_shim::protos::protobuf::CodedOutputStream;

    use super::*;

    fn options(path: &str, body: &str) -> Any {
        let mut value = Vec::new();
        let mut out = CodedOutputStream::vec(&mut value);
        out.write_string(1, "").unwrap();
        out.write_string(2, path).unwrap();
        out.write_string(3, body).unwrap();
        out.flush().unwrap();
        drop(out);
        Any { type_url: OPTIONS_TYPE.into(), value, ..Any::default() }
    }

    #[test]
    fn no_options_and_an_empty_table_are_the_defaults() {
        assert_eq!(Options::of_request(None).unwrap(), Options::default());
        // An `options` table with `SystemdCgroup = false` alone arrives as this.
        assert_eq!(Options::of_request(Some(&options("", ""))).unwrap(), Options::default());
    }

    #[test]
    fn the_body_and_the_path_are_read_in_both_spellings() {
        let body = options("", "SystemdCgroup = true");
        assert_eq!(Options::of_request(Some(&body)).unwrap().systemd_cgroup, Some(true));
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "systemd_cgroup = false\n").unwrap();
        let path = options(file.path().to_str().unwrap(), "");
        assert_eq!(Options::of_request(Some(&path)).unwrap().systemd_cgroup, Some(false));
    }

    #[test]
    fn unknown_keys_bad_values_and_other_types_are_refused_by_name() {
        for (any, says) in [
            (options("", "SystemdCgroups = true"), "unknown field `SystemdCgroups`"),
            (options("", "SystemdCgroup = \"yes\""), "invalid type"),
            (options("/nonexistent/wrt.toml", ""), "ConfigPath \"/nonexistent/wrt.toml\""),
            (
                Any { type_url: "containerd.runc.v1.Options".into(), ..Any::default() },
                "options of type \"containerd.runc.v1.Options\"",
            ),
        ] {
            let err = format!("{:#}", Options::of_request(Some(&any)).unwrap_err());
            assert!(err.contains(says), "{err}");
        }
    }
}

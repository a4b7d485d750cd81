//! A running container's new resource limits (containerd's `Update`, the CRI's
//! `UpdateContainerResources`, `kubectl` resizing a pod), written into its cgroup by youki's
//! cgroup managers, the code that set them at the container's creation: CPU shares (as
//! `cpu.weight` on cgroup v2), quota and period, cpusets, memory and swap limits, pids, hugepages.
//!
//! Devices are left as they are: the CRI never changes them, and rewriting a running
//! container's device rules (deny all, then allow) would leave it without its devices between
//! the two writes.

use anyhow::{Context as _, Result, anyhow, bail};
use containerd_shim::protos::protobuf::well_known_types::any::Any;
use libcgroups::common::{CgroupConfig, CgroupManager as _, ControllerOpt, create_cgroup_manager};
use runtime_spec::runtime::LinuxResources;

use crate::cgroup::Cgroup;

/// The name containerd gives the resources it sends (JSON, in an `Any`).
const RESOURCES_TYPE: &str = "opencontainers/runtime-spec/1/LinuxResources";

/// The resources of an `Update` request.
pub fn of_request(resources: Option<&Any>) -> Result<LinuxResources> {
    let any = resources.context("the update names no resources")?;
    if !any.type_url.ends_with(RESOURCES_TYPE) {
        bail!("resources of type {:?}: expected {RESOURCES_TYPE}", any.type_url);
    }
    let mut resources: LinuxResources =
        serde_json::from_slice(&any.value).context("the resources are not a runtime spec's LinuxResources")?;
    resources.set_devices(None);
    Ok(resources)
}

/// Writes `resources` into `cgroup`.
pub fn apply(cgroup: &Cgroup, resources: &LinuxResources) -> Result<()> {
    let path = cgroup.relative_path().context("the container's cgroup has no memory controller")?;
    let manager = create_cgroup_manager(CgroupConfig {
        cgroup_path: path.clone(),
        systemd_cgroup: false,
        container_name: String::new(),
    })
    .map_err(|err| anyhow!("the container's cgroup {path:?}: {err}"))?;
    let controllers = ControllerOpt { resources, disable_oom_killer: false, oom_score_adj: None, freezer_state: None };
    manager.apply(&controllers).map_err(|err| anyhow!("failed to update the container's cgroup {path:?}: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_are_read_from_containerds_json_without_their_devices() {
        let json = serde_json::json!({
            "devices": [{ "allow": false, "access": "rwm" }],
            "memory": { "limit": 67108864 },
            "cpu": { "shares": 4, "quota": 50000, "period": 100000 },
        });
        let any = Any {
            type_url: format!("types.containerd.io/{RESOURCES_TYPE}"),
            value: serde_json::to_vec(&json).unwrap(),
            ..Any::default()
        };
        let resources = of_request(Some(&any)).unwrap();
        assert_eq!(resources.memory().as_ref().unwrap().limit(), Some(64 << 20));
        assert_eq!(resources.cpu().as_ref().unwrap().shares(), Some(4));
        assert!(resources.devices().is_none());
        let wrong = Any { type_url: "types.containerd.io/other".into(), ..Any::default() };
        assert!(of_request(Some(&wrong)).unwrap_err().to_string().contains("expected opencontainers"));
        assert!(of_request(None).is_err());
    }
}

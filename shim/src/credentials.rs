//! The guest's process gets the capabilities runc's container process has after its `execve`.
//!
//! libcontainer sets the container's user, groups, no-new-privileges and seccomp profile as runc
//! does, but it leaves a capability set the spec does not name as it found it (the shim's, every
//! capability), where runc empties it; containerd leaves empty sets out of the spec, so a pod
//! that drops every capability would keep them all. And runc's process then calls `execve`, which
//! transforms the sets (capabilities(7): a non-root user keeps only its ambient set, root gets its
//! bounding and inheritable sets), while wrt runs the guest in this very process, without one.
//! [`as_after_exec`] does both: every set as the spec says (a missing set is empty), then what
//! `execve` of a program without file capabilities or set-user-ID bit would make of them.

use anyhow::{Context as _, Result};
use caps::{CapSet, Capability, CapsHashSet};
use libcontainer::capabilities::CapabilityExt as _;
use runtime_spec::runtime::{Capabilities, LinuxCapabilities};

/// The five capability sets of a process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sets {
    pub bounding: CapsHashSet,
    pub effective: CapsHashSet,
    pub permitted: CapsHashSet,
    pub inheritable: CapsHashSet,
    pub ambient: CapsHashSet,
}

impl Sets {
    /// The sets the spec names; a set it leaves out is empty, as runc reads it.
    pub fn of_spec(spec: Option<&LinuxCapabilities>) -> Sets {
        let set = |caps: Option<&Capabilities>| -> CapsHashSet {
            caps.map(|caps| caps.iter().map(|cap| cap.to_cap()).collect()).unwrap_or_default()
        };
        let Some(spec) = spec else { return Sets::default() };
        Sets {
            bounding: set(spec.bounding().as_ref()),
            effective: set(spec.effective().as_ref()),
            permitted: set(spec.permitted().as_ref()),
            inheritable: set(spec.inheritable().as_ref()),
            ambient: set(spec.ambient().as_ref()),
        }
    }

    /// What `execve` of a plain program (no file capabilities, no set-user-ID bit) makes of
    /// these sets, for a process whose real or effective user is `root` (user 0) and with
    /// `no_new_privs`. The ambient set holds only what is both permitted and inheritable (the
    /// kernel refuses the rest, and runc goes on without them); root's new permitted set is
    /// its bounding and inheritable sets, and no-new-privileges keeps it within the old one; a
    /// non-root user keeps its ambient set alone. The bounding and inheritable sets stay.
    pub fn after_exec(&self, root: bool, no_new_privs: bool) -> Sets {
        let ambient: CapsHashSet = self.ambient.intersection(&self.permitted).copied().collect();
        let ambient: CapsHashSet = ambient.intersection(&self.inheritable).copied().collect();
        let mut permitted: CapsHashSet =
            if root { self.bounding.union(&self.inheritable).copied().collect() } else { CapsHashSet::new() };
        if no_new_privs && !permitted.is_subset(&self.permitted) {
            permitted = permitted.intersection(&self.permitted).copied().collect();
        }
        permitted.extend(ambient.iter().copied());
        let effective = if root { permitted.clone() } else { ambient.clone() };
        Sets { bounding: self.bounding.clone(), effective, permitted, inheritable: self.inheritable.clone(), ambient }
    }

    /// This process's sets.
    pub fn current() -> Result<Sets> {
        let read = |set| caps::read(None, set).with_context(|| format!("failed to read the {set:?} capabilities"));
        Ok(Sets {
            bounding: read(CapSet::Bounding)?,
            effective: read(CapSet::Effective)?,
            permitted: read(CapSet::Permitted)?,
            inheritable: read(CapSet::Inheritable)?,
            ambient: read(CapSet::Ambient)?,
        })
    }
}

/// Gives this process (the container's first, its user and no-new-privileges already set by
/// libcontainer) the capabilities runc's process would have after `execve`, from the spec's
/// `capabilities`. Nothing is raised that the process does not hold: a set can only shrink.
pub fn as_after_exec(spec: Option<&LinuxCapabilities>) -> Result<()> {
    let uid = nix::unistd::getresuid().context("failed to read the user")?;
    let root = uid.real.is_root() || uid.effective.is_root();
    let no_new_privs = nix::sys::prctl::get_no_new_privs().context("failed to read no-new-privileges")?;
    let held = Sets::current()?;
    let mut want = Sets::of_spec(spec).after_exec(root, no_new_privs);
    // What this process does not hold it cannot take, and runc's would not have it either
    // unless the spec's permitted set were smaller than its bounding set without
    // no-new-privileges, which the kernel lets `execve` alone fill.
    want.permitted.retain(|cap| held.permitted.contains(cap));
    want.effective.retain(|cap| want.permitted.contains(cap));
    want.ambient.retain(|cap| want.permitted.contains(cap) && want.inheritable.contains(cap));
    apply(&held, &want)
}

/// Moves this process from the sets `held` to `want`, in the order the kernel allows: the
/// bounding and inheritable sets while `CAP_SETPCAP` is still effective, then the effective set
/// (within the new permitted one) and the permitted set, then the ambient set.
fn apply(held: &Sets, want: &Sets) -> Result<()> {
    let setpcap = Capability::CAP_SETPCAP;
    if held.permitted.contains(&setpcap) && !held.effective.contains(&setpcap) {
        caps::raise(None, CapSet::Effective, setpcap).context("failed to raise CAP_SETPCAP")?;
    }
    for cap in held.bounding.difference(&want.bounding) {
        caps::drop(None, CapSet::Bounding, *cap)
            .with_context(|| format!("failed to drop {cap} from the bounding set"))?;
    }
    caps::clear(None, CapSet::Ambient).context("failed to clear the ambient set")?;
    caps::set(None, CapSet::Inheritable, &want.inheritable).context("failed to set the inheritable set")?;
    caps::set(None, CapSet::Effective, &want.effective).context("failed to set the effective set")?;
    caps::set(None, CapSet::Permitted, &want.permitted).context("failed to set the permitted set")?;
    for cap in &want.ambient {
        caps::raise(None, CapSet::Ambient, *cap)
            .with_context(|| format!("failed to raise {cap} in the ambient set"))?;
    }
    // libcontainer kept the capabilities across its change of user; `execve` forgets that.
    caps::securebits::set_keepcaps(false).context("failed to clear keep-capabilities")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(caps: &[Capability]) -> CapsHashSet {
        caps.iter().copied().collect()
    }

    /// containerd's default set for a container, abridged: what it writes into the bounding,
    /// effective and permitted sets, with the inheritable and ambient sets left out.
    fn default_pod() -> Sets {
        let default = set(&[Capability::CAP_CHOWN, Capability::CAP_KILL, Capability::CAP_NET_BIND_SERVICE]);
        Sets { bounding: default.clone(), effective: default.clone(), permitted: default, ..Sets::default() }
    }

    #[test]
    fn root_keeps_its_bounding_set_after_exec() {
        let after = default_pod().after_exec(true, false);
        assert_eq!(after.permitted, default_pod().bounding);
        assert_eq!(after.effective, default_pod().bounding);
        assert!(after.inheritable.is_empty() && after.ambient.is_empty());
        assert_eq!(default_pod().after_exec(true, true), after);
    }

    #[test]
    fn a_non_root_user_keeps_only_its_ambient_set_after_exec() {
        let after = default_pod().after_exec(false, false);
        assert!(after.permitted.is_empty() && after.effective.is_empty(), "{after:?}");
        assert_eq!(after.bounding, default_pod().bounding);
        let mut with_ambient = default_pod();
        with_ambient.inheritable = set(&[Capability::CAP_KILL]);
        with_ambient.ambient = set(&[Capability::CAP_KILL, Capability::CAP_CHOWN]);
        let after = with_ambient.after_exec(false, true);
        // CAP_CHOWN is not inheritable, so the kernel never lets it into the ambient set.
        assert_eq!(after.ambient, set(&[Capability::CAP_KILL]));
        assert_eq!(after.permitted, set(&[Capability::CAP_KILL]));
        assert_eq!(after.effective, set(&[Capability::CAP_KILL]));
    }

    #[test]
    fn a_set_the_spec_leaves_out_is_empty() {
        assert_eq!(Sets::of_spec(None), Sets::default());
        // containerd writes no set that is empty.
        let json = serde_json::json!({ "bounding": ["CAP_KILL"] });
        let sparse: LinuxCapabilities = serde_json::from_value(json).unwrap();
        let sets = Sets::of_spec(Some(&sparse));
        assert_eq!(sets.bounding, set(&[Capability::CAP_KILL]));
        assert!(sets.effective.is_empty() && sets.permitted.is_empty(), "{sets:?}");
        assert!(sets.inheritable.is_empty() && sets.ambient.is_empty(), "{sets:?}");
    }

    #[test]
    fn no_new_privileges_keeps_root_within_what_it_was_permitted() {
        let mut narrowed = default_pod();
        narrowed.permitted = set(&[Capability::CAP_CHOWN]);
        assert_eq!(narrowed.after_exec(true, true).permitted, set(&[Capability::CAP_CHOWN]));
        assert_eq!(narrowed.after_exec(true, false).permitted, default_pod().bounding);
    }
}

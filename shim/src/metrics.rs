//! A container's resource usage, for containerd's `Stats` (the CRI's `ContainerStats`, what the
//! kubelet and `kubectl top` report): read from the container's cgroup in the form containerd
//! expects for the node's cgroup version. On cgroup v1 (and hybrid) that is an
//! `io.containerd.cgroups.v1.Metrics`, CPU in nanoseconds (`cpuacct.usage`); on cgroup v2 an
//! `io.containerd.cgroups.v2.Metrics`, CPU in microseconds (`cpu.stat`'s `usage_usec`), which
//! containerd multiplies by 1,000. Memory's working set is computed by containerd from the usage
//! and the inactive file pages, both given.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context as _, Result};
use containerd_shim::protos::cgroups::metrics::{
    CPUStat, CPUUsage, MemoryEntry, MemoryStat, Metrics, PidsStat, Throttle,
};
use containerd_shim::protos::protobuf::well_known_types::any::Any;
use containerd_shim::protos::protobuf::{CodedOutputStream, Message as _};

use crate::cgroup::Cgroup;

/// The type of cgroup v2 metrics, which containerd's shim protocol crate does not define.
const V2_METRICS_TYPE: &str = "io.containerd.cgroups.v2.Metrics";

/// The metrics of `cgroup`, in the form containerd expects for its version.
pub fn of(cgroup: &Cgroup) -> Result<Any> {
    match cgroup {
        Cgroup::V1(_) => {
            let metrics = v1(cgroup)?;
            let value = metrics.write_to_bytes().context("failed to encode the metrics")?;
            Ok(Any { type_url: "io.containerd.cgroups.v1.Metrics".into(), value, ..Any::default() })
        }
        Cgroup::V2(dir) => Ok(Any { type_url: V2_METRICS_TYPE.into(), value: v2(dir)?, ..Any::default() }),
    }
}

/// One number of a cgroup file, or 0 where the file is missing (a controller or accounting
/// the kernel does not have) or says `max`.
fn number(path: &Path) -> u64 {
    std::fs::read_to_string(path).ok().and_then(|text| text.trim().parse().ok()).unwrap_or(0)
}

/// The `key value` lines of a cgroup file (`memory.stat`, `cpu.stat`); empty where it is missing.
fn keyed(path: &Path) -> HashMap<String, u64> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(' ')?;
            Some((key.to_owned(), value.trim().parse().ok()?))
        })
        .collect()
}

fn v1(cgroup: &Cgroup) -> Result<Metrics> {
    let dir = |controller: &str| {
        cgroup.v1_dir(controller).with_context(|| format!("the container has no {controller} cgroup"))
    };
    let cpuacct = dir("cpuacct")?;
    let per_cpu = std::fs::read_to_string(cpuacct.join("cpuacct.usage_percpu")).unwrap_or_default();
    let usage = CPUUsage {
        total: number(&cpuacct.join("cpuacct.usage")),
        kernel: number(&cpuacct.join("cpuacct.usage_sys")),
        user: number(&cpuacct.join("cpuacct.usage_user")),
        per_cpu: per_cpu.split_whitespace().filter_map(|n| n.parse().ok()).collect(),
        ..CPUUsage::default()
    };
    let throttled = cgroup.v1_dir("cpu").map(|cpu| keyed(&cpu.join("cpu.stat"))).unwrap_or_default();
    let throttling = Throttle {
        periods: throttled.get("nr_periods").copied().unwrap_or(0),
        throttled_periods: throttled.get("nr_throttled").copied().unwrap_or(0),
        throttled_time: throttled.get("throttled_time").copied().unwrap_or(0),
        ..Throttle::default()
    };
    let memory = dir("memory")?;
    let entry = |prefix: &str| MemoryEntry {
        usage: number(&memory.join(format!("{prefix}usage_in_bytes"))),
        max: number(&memory.join(format!("{prefix}max_usage_in_bytes"))),
        limit: number(&memory.join(format!("{prefix}limit_in_bytes"))),
        failcnt: number(&memory.join(format!("{prefix}failcnt"))),
        ..MemoryEntry::default()
    };
    let stat = keyed(&memory.join("memory.stat"));
    let at = |key: &str| stat.get(key).copied().unwrap_or(0);
    let memory_stat = MemoryStat {
        cache: at("cache"),
        rss: at("rss"),
        rss_huge: at("rss_huge"),
        mapped_file: at("mapped_file"),
        dirty: at("dirty"),
        writeback: at("writeback"),
        pg_fault: at("pgfault"),
        pg_maj_fault: at("pgmajfault"),
        inactive_anon: at("inactive_anon"),
        active_anon: at("active_anon"),
        inactive_file: at("inactive_file"),
        active_file: at("active_file"),
        unevictable: at("unevictable"),
        hierarchical_memory_limit: at("hierarchical_memory_limit"),
        total_cache: at("total_cache"),
        total_rss: at("total_rss"),
        total_mapped_file: at("total_mapped_file"),
        total_inactive_anon: at("total_inactive_anon"),
        total_active_anon: at("total_active_anon"),
        total_inactive_file: at("total_inactive_file"),
        total_active_file: at("total_active_file"),
        total_unevictable: at("total_unevictable"),
        usage: Some(entry("memory.")).into(),
        swap: Some(entry("memory.memsw.")).into(),
        kernel: Some(entry("memory.kmem.")).into(),
        ..MemoryStat::default()
    };
    let pids = cgroup.v1_dir("pids").map_or_else(PidsStat::default, |pids| PidsStat {
        current: number(&pids.join("pids.current")),
        limit: number(&pids.join("pids.max")),
        ..PidsStat::default()
    });
    Ok(Metrics {
        cpu: Some(CPUStat { usage: Some(usage).into(), throttling: Some(throttling).into(), ..CPUStat::default() })
            .into(),
        memory: Some(memory_stat).into(),
        pids: Some(pids).into(),
        ..Metrics::default()
    })
}

/// An `io.containerd.cgroups.v2.Metrics` of the cgroup at `dir`, encoded: its `pids` (field 1),
/// `cpu` (2) and `memory` (4) messages, each field numbered as in containerd's `metrics.proto`.
fn v2(dir: &Path) -> Result<Vec<u8>> {
    let message = |fields: &[(u32, u64)]| -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        let mut out = CodedOutputStream::vec(&mut bytes);
        for &(field, value) in fields {
            out.write_uint64(field, value)?;
        }
        out.flush()?;
        drop(out);
        Ok(bytes)
    };
    let pids = message(&[(1, number(&dir.join("pids.current"))), (2, number(&dir.join("pids.max")))])?;
    let cpu = keyed(&dir.join("cpu.stat"));
    let cpu_at = |key: &str| cpu.get(key).copied().unwrap_or(0);
    let cpu = message(&[
        (1, cpu_at("usage_usec")),
        (2, cpu_at("user_usec")),
        (3, cpu_at("system_usec")),
        (4, cpu_at("nr_periods")),
        (5, cpu_at("nr_throttled")),
        (6, cpu_at("throttled_usec")),
    ])?;
    let stat = keyed(&dir.join("memory.stat"));
    let at = |key: &str| stat.get(key).copied().unwrap_or(0);
    let memory = message(&[
        (1, at("anon")),
        (2, at("file")),
        (3, at("kernel_stack")),
        (4, at("slab")),
        (5, at("sock")),
        (6, at("shmem")),
        (7, at("file_mapped")),
        (8, at("file_dirty")),
        (9, at("file_writeback")),
        (11, at("inactive_anon")),
        (12, at("active_anon")),
        (13, at("inactive_file")),
        (14, at("active_file")),
        (15, at("unevictable")),
        (18, at("pgfault")),
        (19, at("pgmajfault")),
        (32, number(&dir.join("memory.current"))),
        (33, number(&dir.join("memory.max"))),
        (34, number(&dir.join("memory.swap.current"))),
        (35, number(&dir.join("memory.swap.max"))),
        (36, number(&dir.join("memory.peak"))),
    ])?;
    let mut bytes = Vec::new();
    let mut out = CodedOutputStream::vec(&mut bytes);
    out.write_bytes(1, &pids)?;
    out.write_bytes(2, &cpu)?;
    out.write_bytes(4, &memory)?;
    out.flush()?;
    drop(out);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use containerd_shim::protos::protobuf::CodedInputStream;

    use super::*;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    #[test]
    fn cgroup_v1_reports_nanoseconds_and_the_inactive_file_pages() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            &[
                ("cpuacct/c/cpuacct.usage", "930000000\n"),
                ("cpuacct/c/cpuacct.usage_percpu", "900000000 30000000 \n"),
                ("cpu/c/cpu.stat", "nr_periods 5\nnr_throttled 2\nthrottled_time 77\n"),
                ("memory/c/memory.usage_in_bytes", "10485760\n"),
                ("memory/c/memory.limit_in_bytes", "67108864\n"),
                ("memory/c/memory.stat", "cache 4096\ntotal_inactive_file 1048576\ntotal_rss 8388608\n"),
                ("pids/c/pids.current", "3\n"),
                ("pids/c/pids.max", "max\n"),
            ],
        );
        let dir = |c: &str| (c.to_owned(), root.path().join(c).join("c"));
        let cgroup = Cgroup::V1(vec![dir("cpuacct"), dir("cpu"), dir("memory"), dir("pids")]);
        let any = of(&cgroup).unwrap();
        assert_eq!(any.type_url, "io.containerd.cgroups.v1.Metrics");
        let metrics = Metrics::parse_from_bytes(&any.value).unwrap();
        assert_eq!(metrics.cpu.usage.total, 930_000_000);
        assert_eq!(metrics.cpu.usage.per_cpu, [900_000_000, 30_000_000]);
        assert_eq!(metrics.cpu.throttling.throttled_periods, 2);
        assert_eq!(metrics.memory.usage.usage, 10 << 20);
        assert_eq!(metrics.memory.usage.limit, 64 << 20);
        assert_eq!(metrics.memory.total_inactive_file, 1 << 20);
        assert_eq!((metrics.pids.current, metrics.pids.limit), (3, 0));
    }

    /// The `(field, value)` pairs of an encoded message of numbers and sub-messages.
    fn fields(bytes: &[u8]) -> HashMap<u32, Vec<u8>> {
        let mut input = CodedInputStream::from_bytes(bytes);
        let mut fields = HashMap::new();
        while let Some(tag) = input.read_raw_tag_or_eof().unwrap() {
            let value = if tag & 7 == 2 {
                input.read_bytes().unwrap()
            } else {
                input.read_uint64().unwrap().to_le_bytes().to_vec()
            };
            fields.insert(tag >> 3, value);
        }
        fields
    }

    fn number_of(bytes: &[u8]) -> u64 {
        u64::from_le_bytes(bytes.try_into().unwrap())
    }

    #[test]
    fn cgroup_v2_reports_microseconds_in_v2s_own_message() {
        let root = tempfile::tempdir().unwrap();
        write(
            root.path(),
            &[
                ("cpu.stat", "usage_usec 930000\nuser_usec 900000\nsystem_usec 30000\n"),
                ("memory.current", "10485760\n"),
                ("memory.max", "max\n"),
                ("memory.stat", "anon 8388608\ninactive_file 1048576\n"),
                ("pids.current", "3\n"),
            ],
        );
        let any = of(&Cgroup::V2(root.path().to_owned())).unwrap();
        assert_eq!(any.type_url, V2_METRICS_TYPE);
        let metrics = fields(&any.value);
        let cpu = fields(&metrics[&2]);
        assert_eq!(number_of(&cpu[&1]), 930_000, "usage_usec");
        let memory = fields(&metrics[&4]);
        assert_eq!(number_of(&memory[&32]), 10 << 20, "usage");
        assert_eq!(number_of(&memory[&13]), 1 << 20, "inactive_file");
        assert_eq!(number_of(&fields(&metrics[&1])[&1]), 3, "pids.current");
    }
}

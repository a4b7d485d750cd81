//! How a table names configurations of one workload: by the parameters they share, and each by
//! the parameters that differ.

use super::Workload;

/// The value of `key` in `params`, as `--compare` would take it back.
fn value(params: &dyn Workload, key: &str) -> Option<String> {
    params.get(key).map(|setting| setting.value())
}

/// The parameters of `params` as `key=value` pairs, in [`Workload::keys`] order.
pub fn key_values(params: &dyn Workload) -> String {
    let pairs: Vec<String> =
        params.keys().iter().filter_map(|k| value(params, k).map(|v| format!("{k}={v}"))).collect();
    pairs.join(" ")
}

/// `wrt bench <workload>: ` and the parameters all of `all` share.
///
/// # Panics
///
/// When `all` is empty.
pub fn common_line(all: &[&dyn Workload]) -> String {
    let first = all[0];
    let shared: Vec<String> = first
        .keys()
        .iter()
        .filter(|k| all.iter().all(|p| value(*p, k) == value(first, k)))
        .filter_map(|k| value(first, k).map(|v| format!("{k}={v}")))
        .collect();
    format!("wrt bench {}: {}", first.name(), shared.join(" "))
}

/// A short label for a configuration, naming only the keys that differ between `all`.
pub fn short_label(params: &dyn Workload, all: &[&dyn Workload]) -> String {
    let varying: Vec<&str> =
        params.keys().iter().copied().filter(|k| all.iter().any(|p| value(*p, k) != value(params, k))).collect();
    let pairs: Vec<String> = varying.iter().filter_map(|k| value(params, k).map(|v| format!("{k}={v}"))).collect();
    if pairs.is_empty() { params.name().to_owned() } else { pairs.join(" ") }
}

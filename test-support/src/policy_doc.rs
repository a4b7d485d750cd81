//! The environment variables docs/policy.md says the policy refuses always ("Variables refused
//! always"), read from the doc, so that the code's list and the copies that test it can be held
//! to one statement: `wrt-host-spawn`'s unit tests (which see the code's list), its integration
//! tests and the fuzz target `policy_decide` (whose model keeps its own copy) each read the doc
//! the same way, through this one function.

/// The heading the list sits under.
const HEADING: &str = "### Variables refused always";

/// The names listed under "Variables refused always" in docs/policy.md (found from this
/// crate's directory, a sibling of `docs/`), in the doc's order. Between the heading and the next heading (a line
/// starting with `#`), every line starting with `- ` is an item and must be exactly
/// `` - `NAME` ``; other lines are prose. Panics if the heading is missing, the list is empty,
/// a name is listed twice, or an item has any other form: an item written some other way must
/// not drop out of the list unnoticed.
pub fn documented_unsafe_env() -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/policy.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let mut lines = doc.lines().skip_while(|line| *line != HEADING);
    assert!(lines.next().is_some(), "{} has no heading `{HEADING}`", path.display());
    let mut names: Vec<String> = Vec::new();
    for item in lines.take_while(|line| !line.starts_with('#')).filter(|line| line.starts_with("- ")) {
        let name = item
            .strip_prefix("- `")
            .and_then(|rest| rest.strip_suffix('`'))
            .filter(|name| !name.is_empty() && !name.contains('`'))
            .unwrap_or_else(|| panic!("under `{HEADING}`, the item {item:?} is not \"- `NAME`\""));
        assert!(!names.iter().any(|listed| listed == name), "under `{HEADING}`, `{name}` is listed twice");
        names.push(name.to_owned());
    }
    assert!(!names.is_empty(), "no items under `{HEADING}` in {}", path.display());
    names
}

//! What the Python and JavaScript component guests (`py`, `js`) share: running them with `wrt`,
//! each compiled at most once per test binary (a component of 12-18 MB takes seconds to compile,
//! and `wrt`'s compile cache serves the runs after the first), and the output of `ls -l`.

use std::process::Output;
use std::sync::{Arc, Mutex};

use crate::util::run;

/// `wrt run <flags> <component> <args>`. The first run of a component compiles it into the test
/// cache while other runs of it wait, so it is compiled once, not once per test.
pub(crate) fn run_component(component: &'static str, flags: &[&str], args: &[&str]) -> Output {
    /// Whether a component was compiled; held while its first run compiles it.
    type Compiled = Arc<Mutex<bool>>;
    static COMPILED: Mutex<Vec<(&str, Compiled)>> = Mutex::new(Vec::new());
    let slot = {
        let mut compiled = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
        match compiled.iter().find(|(c, _)| *c == component) {
            Some((_, slot)) => Arc::clone(slot),
            None => {
                let slot = Arc::new(Mutex::new(false));
                compiled.push((component, Arc::clone(&slot)));
                slot
            }
        }
    };
    let mut argv = vec!["run"];
    argv.extend(flags);
    argv.push(component);
    argv.extend(args);
    let mut compiled = slot.lock().unwrap_or_else(|e| e.into_inner());
    if *compiled {
        drop(compiled);
        return run(argv);
    }
    let out = run(argv);
    *compiled = true;
    out
}

/// Asserts that `stdout` is what an `ls` guest prints for `ls -l /`: the header, `ls`'s lines
/// (one per entry of the host's `/`) and the exit status.
#[track_caller]
/// A directory to give a guest read-only, with a few entries; its canonical path.
pub(crate) fn listed_dir() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["alpha.txt", "beta", "gamma.wasm"] {
        std::fs::write(dir.path().join(name), name).expect("write");
    }
    let path = std::fs::canonicalize(dir.path()).expect("canonical").into_os_string().into_string().expect("UTF-8");
    (dir, path)
}

/// `ls -l DIR` listed every entry of `dir` and exited 0.
pub(crate) fn assert_ls_dir(stdout: &str, dir: &str) {
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some(format!("`ls -l {dir}` on the host printed:").as_str()), "{stdout}");
    assert!(lines.next().is_some_and(|l| l.starts_with("total ")), "{stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.starts_with("exit code 0, in ") && last.contains(" ms (user "), "{stdout}");
    let entries = std::fs::read_dir(dir).expect("read the directory");
    for name in entries.map(|e| e.expect("entry").file_name().into_string().expect("UTF-8 name")) {
        if name.starts_with('.') {
            continue;
        }
        let listed = stdout.lines().any(|l| l.ends_with(&format!(" {name}")) || l.contains(&format!(" {name} -> ")));
        assert!(listed, "`{name}` missing:\n{stdout}");
    }
}

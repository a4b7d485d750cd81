//! The Python component guests (`guests/test-guests/python`, built by componentize-py): `wrt:process`
//! commands run by `wrt run`, allowed and denied.

use wrt_test_guests::*;

use crate::component_guests::{assert_ls_dir, listed_dir, run_component};
use crate::util::{assert_code, json_number, stats_line, stderr, stdout};

foreach_py!(assert_test_exists);
use crate::assert_test_exists;

const MIB: u64 = 1 << 20;

#[test]
fn py_ls() {
    let (_dir, dir) = listed_dir();
    let out = run_component(PY_LS, &["--allow-run", "ls", "--ro-dir", &dir], &[&dir]);
    assert_code(&out, 0);
    assert_ls_dir(&stdout(&out), &dir);
    assert_eq!(stderr(&out), "");
    // Under the child sandbox `ls` reaches only what the guest was given: not `/`.
    let out = run_component(PY_LS, &["--allow-run", "ls"], &[]);
    assert_code(&out, 1);
    assert!(stdout(&out).contains("ls: cannot open directory '/': Permission denied"), "{}", stdout(&out));
}

#[test]
fn py_ls_denied() {
    let out = run_component(PY_LS, &[], &[]);
    assert_code(&out, 1);
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    let guest_line = err.lines().find(|l| l.starts_with("py_ls: ")).unwrap_or_else(|| panic!("{err}"));
    // The host's message, whose resolved path depends on the host's layout.
    assert!(guest_line.starts_with("py_ls: the sandbox did not allow it: spawning `ls` is denied: "), "{err}");
    assert!(guest_line.ends_with("; allow it with `--allow-run ls`"), "{err}");
}

/// `ls` runs and fails: the guest prints its stderr and exit code, and exits with 1.
#[test]
fn py_ls_failing_ls() {
    let out = run_component(PY_LS, &["--allow-run", "ls"], &["/nonexistent-wrt-dir"]);
    assert_code(&out, 1);
    let text = stdout(&out);
    assert!(text.starts_with("`ls -l /nonexistent-wrt-dir` on the host printed:\nand on stderr:\nls: "), "{text}");
    assert!(text.contains("/nonexistent-wrt-dir"), "{text}");
    assert!(text.lines().last().is_some_and(|l| l.starts_with("exit code 2, in ")), "{text}");
}

#[test]
fn py_buffers() {
    let out = run_component(PY_BUFFERS, &[], &["basic"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "py buffers ok\n");
    assert_eq!(stderr(&out), "");
}

/// Live buffers past `--max-memory`: the host refuses the allocation with `no-memory`, a full
/// collection frees nothing, the retry fails too, and the guest says which buffer failed and exits
/// with 1.
#[test]
fn py_buffers_live_past_the_memory_limit() {
    let out = run_component(PY_BUFFERS, &["--max-memory", "64MiB"], &["live", "100", "1048576"]);
    assert_code(&out, 1);
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(err.starts_with("py_buffers: buffer "), "{err}");
    assert!(err.contains(" of 1048576 bytes: no-memory: "), "{err}");
}

/// 500 × 4 MiB of buffers, each garbage at once but in a reference cycle, which Python's own
/// collector (counting objects, not bytes) frees only after hundreds of them: the guest pulls
/// the host's young collections (`collection-due`) and runs Python's collector, and 2000 MiB of
/// buffers go through a 256 MiB sandbox with at most about `Y` (2 MiB) and the newest buffer of them live.
#[test]
fn py_buffers_cycles_collected_when_the_host_says() {
    let out = run_component(PY_BUFFERS, &["--stats=json", "--max-memory", "256MiB"], &["cycles", "500", "4194304"]);
    assert_code(&out, 0);
    let line = stdout(&out);
    assert_eq!(json_number(&line, "bytes") as u64, 500 * 4 * MIB, "{line}");
    assert!(json_number(&line, "young") > 0.0, "{line}");
    let stats = stats_line(&out);
    // Every collection the guest ran is counted, the last one included (it ends with the run).
    assert_eq!(json_number(&stats, "young_collections"), json_number(&line, "young"), "{stats}\n{line}");
    assert_eq!(json_number(&stats, "full_collections"), 0.0, "{stats}");
    assert!((json_number(&stats, "peak_external") as u64) < 64 * MIB, "{stats}");
}

/// The same with `--gc off`: no collection is due until the memory limit refuses a buffer; then
/// a full one is, and the guest collects and retries.
#[test]
fn py_buffers_cycles_gc_off_collects_at_the_limit() {
    let out = run_component(
        PY_BUFFERS,
        &["--stats=json", "--max-memory", "256MiB", "--gc", "off"],
        &["cycles", "500", "4194304"],
    );
    assert_code(&out, 0);
    let line = stdout(&out);
    assert_eq!(json_number(&line, "young"), 0.0, "{line}");
    assert!(json_number(&line, "full") > 0.0, "{line}");
    let stats = stats_line(&out);
    assert_eq!(json_number(&stats, "full_collections"), json_number(&line, "full"), "{stats}\n{line}");
    assert!((json_number(&stats, "peak_external") as u64) > 128 * MIB, "{stats}");
}

#[test]
fn py_buffers_bad_arguments() {
    let out = run_component(PY_BUFFERS, &[], &["cycles", "1"]);
    assert_code(&out, 1);
    assert_eq!(stderr(&out), "usage: py_buffers basic | cycles COUNT SIZE | live COUNT SIZE\n");
}

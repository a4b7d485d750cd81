//! The JavaScript component guests (`guests/test-guests/js`, built by componentize-js): `wrt:process`
//! commands run by `wrt run`, allowed and denied.

use wrt_test_guests::*;

use crate::component_guests::{assert_ls_dir, run_component};
use crate::util::{assert_code, stderr, stdout};

foreach_js!(assert_test_exists);
use crate::assert_test_exists;

#[test]
fn js_ls() {
    // The guest lists `/`, which only an unconfined `ls` may read.
    let out = run_component(JS_LS, &["--allow-run", "ls", "--child-sandbox", "off"], &[]);
    assert_code(&out, 0);
    assert_ls_dir(&stdout(&out), "/");
    assert_eq!(stderr(&out), "");
    // Under the child sandbox `ls` reaches only what the guest was given: not `/`.
    let out = run_component(JS_LS, &["--allow-run", "ls"], &[]);
    assert_code(&out, 1);
    assert!(stdout(&out).contains("ls: cannot open directory '/': Permission denied"), "{}", stdout(&out));
}

#[test]
fn js_ls_denied() {
    let out = run_component(JS_LS, &[], &[]);
    assert_code(&out, 1);
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    let guest_line = err.lines().find(|l| l.starts_with("js_ls: ")).unwrap_or_else(|| panic!("{err}"));
    // The host's message, whose resolved path depends on the host's layout.
    assert!(guest_line.starts_with("js_ls: the sandbox did not allow it: spawning `ls` is denied: "), "{err}");
    assert!(guest_line.ends_with("; allow it with `--allow-run ls`"), "{err}");
}

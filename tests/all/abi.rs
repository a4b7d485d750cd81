//! The guest ABI at its edges: every bad input to every host function gets its documented error
//! code, and the host stays up.

use wrt_runtime::wrt_host_spawn::Policy;
use wrt_runtime::{GuestOutput, Outcome, Sandbox};
use wrt_test_guests::*;

use crate::util::{assert_code, run, stdout};

foreach_abi!(assert_test_exists);
use crate::assert_test_exists;

#[test]
fn abi_bad_inputs() {
    // The guest exits with the number of the first check that failed (listed in its header).
    let out = run(["run", "--allow-run", "true", ABI_BAD_INPUTS]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "every bad input got its documented error code\n");
}

#[test]
fn abi_bad_inputs_leave_the_host_usable() {
    // The same sandbox runs the hostile guest many times, then an ordinary one.
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let policy = Policy::deny_all().allow_program("true");
    let sandbox =
        Sandbox::builder().spawn_policy(policy).stdout(GuestOutput::Capture { limit: 1 << 16 }).build().unwrap();
    let guest = sandbox.load_file(ABI_BAD_INPUTS).unwrap();
    for _ in 0..20 {
        assert_eq!(sandbox.run(&guest).unwrap().outcome, Outcome::Exited(0));
    }
    let hello = sandbox.load_file(CLI_HELLO).unwrap();
    assert_eq!(sandbox.run(&hello).unwrap().outcome, Outcome::Exited(0));
}

#[test]
fn abi_no_memory() {
    let out = run(["run", ABI_NO_MEMORY]);
    assert_code(&out, 0);
}

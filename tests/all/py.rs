//! The Python component guests (`guests/python`, built by componentize-py): `wrt:process`
//! commands, checked against what wrt provides.

use wrt_test_guests::*;

use crate::component_guests::world;

foreach_py!(assert_test_exists);
use crate::assert_test_exists;

#[test]
fn py_ls() {
    world(PY_LS).assert_process_command();
}

#[test]
fn py_buffers() {
    let world = world(PY_BUFFERS);
    world.assert_process_command();
    assert!(world.exports.iter().any(|e| e == "wrt:process/collector@0.1.0"), "exports: {:?}", world.exports);
}

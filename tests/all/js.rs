//! The JavaScript component guests (`guests/js`, built by componentize-js): `wrt:process`
//! commands, checked against what wrt provides.

use wrt_test_guests::*;

use crate::component_guests::world;

foreach_js!(assert_test_exists);
use crate::assert_test_exists;

#[test]
fn js_ls() {
    world(JS_LS).assert_process_command();
}

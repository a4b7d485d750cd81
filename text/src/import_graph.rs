//! Dependencies point one way inside `wrt-text`: no module imports, directly or through others,
//! a module that imports it back, at the top level and inside every folder; the workspace's
//! one checker (`wrt_test_support::import_graph`) reads every crate of the package (its build
//! script's too) and names each circle it finds.

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    wrt_test_support::import_graph::assert_no_circles(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
}

//! What the Python and JavaScript component guests (`py`, `js`) share: each is compiled once per
//! test binary (a component of 10-20 MB takes seconds to compile), and its world is checked
//! against what wrt provides.

use std::sync::{Arc, Mutex, OnceLock};

use wrt_runtime::wasmtime::component::Component;
use wrt_runtime::wasmtime::{Config, Engine};

/// The interfaces a component may import: wrt's `wrt:process` and the WASI 0.2 interfaces that
/// wasmtime-wasi provides (`wasi:http` is not among them).
const PROVIDED: &[&str] = &[
    "wrt:process/types@0.1.",
    "wrt:process/buffers@0.1.",
    "wrt:process/process@0.1.",
    "wasi:io/",
    "wasi:clocks/",
    "wasi:random/",
    "wasi:cli/",
    "wasi:filesystem/",
    "wasi:sockets/",
];

/// The import and export names of a component guest.
pub(crate) struct World {
    pub(crate) imports: Vec<String>,
    pub(crate) exports: Vec<String>,
}

impl World {
    /// Asserts that the guest is a `wrt:process` command: it imports `wrt:process/process`,
    /// exports `wasi:cli/run`, and imports nothing wrt does not provide.
    #[track_caller]
    pub(crate) fn assert_process_command(&self) {
        assert!(self.imports.iter().any(|i| i == "wrt:process/process@0.1.0"), "imports: {:?}", self.imports);
        assert!(self.exports.iter().any(|e| e.starts_with("wasi:cli/run@0.2.")), "exports: {:?}", self.exports);
        let unprovided: Vec<&String> =
            self.imports.iter().filter(|i| !PROVIDED.iter().any(|p| i.starts_with(p))).collect();
        assert!(unprovided.is_empty(), "imports that wrt does not provide: {unprovided:?}");
    }
}

/// The world of the component at `path`, compiled at most once per test binary (tests of other
/// components compile theirs meanwhile).
pub(crate) fn world(path: &'static str) -> Arc<World> {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    /// A component's world, once compiled.
    type Slot = Arc<OnceLock<Arc<World>>>;
    static WORLDS: Mutex<Vec<(&str, Slot)>> = Mutex::new(Vec::new());
    let slot = {
        let mut worlds = WORLDS.lock().unwrap_or_else(|e| e.into_inner());
        match worlds.iter().find(|(p, _)| *p == path) {
            Some((_, slot)) => Arc::clone(slot),
            None => {
                let slot = Arc::new(OnceLock::new());
                worlds.push((path, Arc::clone(&slot)));
                slot
            }
        }
    };
    let world = slot.get_or_init(|| {
        let engine = ENGINE.get_or_init(|| {
            let mut config = Config::new();
            config.wasm_component_model(true);
            Engine::new(&config).expect("engine")
        });
        let component = Component::from_file(engine, path).unwrap_or_else(|e| panic!("compile `{path}`: {e:#}"));
        let ty = component.component_type();
        Arc::new(World {
            imports: ty.imports(engine).map(|(name, _)| name.to_owned()).collect(),
            exports: ty.exports(engine).map(|(name, _)| name.to_owned()).collect(),
        })
    });
    Arc::clone(world)
}

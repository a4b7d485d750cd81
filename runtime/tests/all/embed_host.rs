//! The embedder's own host functions (`RuntimeBuilder::link_modules`, `link_components`),
//! per-run data (`RunOptions::host_data`), typed calls of exports (`Instance::call`,
//! `Instance::typed_call`) and access to guest memory (`Instance::read_memory`, `write_memory`).

use std::sync::{Arc, Mutex};

use wrt_runtime::wasmtime::component::Linker as ComponentLinker;
use wrt_runtime::wasmtime::{self, Caller, Linker, Val};
use wrt_runtime::{GuestState, InstantiateError, Outcome, RunOptions, Runtime};

/// What one run's host functions saw: the run's own data.
#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

/// `host::note(ptr, len)`: reads the guest's string from its memory into the run's [`Seen`] and
/// returns its length; `host::fail()` stops the guest with an error of the host function's.
fn link_notes(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
    linker.func_wrap("host", "note", |mut caller: Caller<'_, GuestState>, ptr: i32, len: i32| {
        let memory = caller.get_export("memory").and_then(|e| e.into_memory()).expect("a memory");
        let mut bytes = vec![0; len as usize];
        memory.read(&caller, ptr as usize, &mut bytes)?;
        let note = format!("{}: {}", caller.data().guest_name(), String::from_utf8_lossy(&bytes));
        caller.data().host_data::<Seen>().expect("the run's data").0.lock().unwrap().push(note);
        Ok(len)
    })?;
    linker.func_wrap("host", "fail", || -> wasmtime::Result<()> {
        Err(wasmtime::format_err!("the host function refused"))
    })?;
    Ok(())
}

const NOTES: &str = r#"(module
  (import "host" "note" (func $note (param i32 i32) (result i32)))
  (import "host" "fail" (func $fail))
  (memory (export "memory") 1)
  (data (i32.const 16) "hello host")
  (global $inits (mut i32) (i32.const 0))
  (func (export "_initialize") (global.set $inits (i32.add (global.get $inits) (i32.const 1))))
  (func (export "inits") (result i32) (global.get $inits))
  (func (export "greet") (result i32) (call $note (i32.const 16) (i32.const 10)))
  (func (export "note_at") (param i32 i32) (result i32) (call $note (local.get 0) (local.get 1)))
  (func (export "fail") (call $fail))
  (func (export "swap") (param i64 f32) (result f32 i64) (local.get 1) (local.get 0)))"#;

#[test]
fn a_core_module_calls_the_embedders_host_function_with_the_runs_own_data() {
    let runtime = Runtime::builder().link_modules(link_notes).build().unwrap();
    let guest = runtime.load_bytes("notes.wat", NOTES.as_bytes()).unwrap();
    let seen = Arc::new(Seen::default());
    let mut instance = guest.instantiate(&RunOptions::new().host_data(seen.clone())).unwrap();
    assert_eq!(instance.typed_call::<(), i32>("greet", ()).unwrap(), Ok(10));
    // The guest's memory, written by the embedder, read by the host function.
    instance.write_memory(1000, b"from the embedder").unwrap();
    let returned = instance.call("note_at", &[Val::I32(1000), Val::I32(17)]).unwrap().unwrap();
    assert!(matches!(returned[..], [Val::I32(17)]));
    assert_eq!(*seen.0.lock().unwrap(), ["notes.wat: hello host", "notes.wat: from the embedder"]);
    let mut back = [0; 10];
    instance.read_memory(16, &mut back).unwrap();
    assert_eq!(&back, b"hello host");
    // `_initialize` ran once, before the first call.
    assert_eq!(instance.typed_call::<(), i32>("inits", ()).unwrap(), Ok(1));
    // Every value type passes both ways.
    let swapped = instance.call("swap", &[Val::I64(-7), Val::from(2.5f32)]).unwrap().unwrap();
    assert!(matches!(swapped[..], [Val::F32(bits), Val::I64(-7)] if f32::from_bits(bits) == 2.5));
    // A host function's error stops the guest, with its message; its instance still answers.
    match instance.call("fail", &[]).unwrap() {
        Err(Outcome::Trapped(trap)) => assert!(trap.message.contains("the host function refused"), "{trap}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(instance.typed_call::<(), i32>("greet", ()).unwrap(), Ok(10));
}

#[test]
fn bad_calls_and_memory_accesses_are_errors_that_say_so() {
    let runtime = Runtime::builder().link_modules(link_notes).build().unwrap();
    let guest = runtime.load_bytes("notes.wat", NOTES.as_bytes()).unwrap();
    let options = RunOptions::new().host_data(Arc::new(Seen::default()));
    let mut instance = guest.instantiate(&options).unwrap();
    let err = instance.read_memory(65530, &mut [0; 10]).unwrap_err();
    assert!(
        matches!(err.downcast_ref(), Some(InstantiateError::MemoryAccess { offset: 65530, len: 10, size: 65536, .. })),
        "{err:#}"
    );
    assert!(format!("{err:#}").contains("10 bytes at offset 65530 are outside its memory (65536 bytes)"), "{err:#}");
    assert!(instance.write_memory(usize::MAX, b"x").is_err());
    let err = instance.call("missing", &[]).unwrap_err();
    assert!(matches!(err.downcast_ref(), Some(InstantiateError::NoSuchExport { .. })), "{err:#}");
    let err = instance.call("note_at", &[Val::I64(1)]).unwrap_err();
    assert!(format!("{err:#}").contains("type mismatch") || format!("{err:#}").contains("expected"), "{err:#}");
    let err = instance.typed_call::<i64, i32>("greet", 1).unwrap_err();
    assert!(format!("{err:#}").contains("type mismatch"), "{err:#}");
    // A guest importing a function no one defined is still refused at load.
    let missing = r#"(module (import "host" "missing" (func)))"#;
    let err = runtime.load_bytes("missing.wat", missing.as_bytes()).unwrap_err();
    assert!(matches!(err.downcast_ref(), Some(InstantiateError::UnknownImport { .. })), "{err:#}");
}

/// An embedder's function may not take the name of one of wrt's, even with shadowing turned on.
#[test]
fn host_functions_may_not_take_the_names_of_wrts() {
    for (module, name) in [("wrt_v1", "spawn"), ("wasi_snapshot_preview1", "fd_write")] {
        let err = Runtime::builder()
            .link_modules(move |linker| {
                linker.allow_shadowing(true);
                linker.func_wrap(module, name, || {})?;
                Ok(())
            })
            .build()
            .unwrap_err();
        assert!(format!("{err:#}").contains("takes the name of one of wrt's"), "{module}::{name}: {err:#}");
    }
    let runtime = Runtime::builder()
        .link_components(|linker| {
            linker.allow_shadowing(true);
            linker
                .instance("wasi:cli/environment@0.2.12")?
                .func_wrap("get-arguments", |_, (): ()| Ok((Vec::<String>::new(),)))?;
            Ok(())
        })
        .build()
        .unwrap();
    let err = runtime.load_file(wrt_test_guests::COMPONENT_HELLO).unwrap_err();
    assert!(format!("{err:#}").contains("takes the name of one of wrt's"), "{err:#}");
}

/// A `wasi:cli/command` component, written in the component text format, whose `run` returns
/// success when the host's `double` doubles 21.
const DOUBLING_COMPONENT: &str = r#"(component
  (import "double" (func $double (param "x" u32) (result u32)))
  (core module $m
    (import "host" "double" (func $d (param i32) (result i32)))
    (func (export "run") (result i32)
      (if (result i32) (i32.eq (call $d (i32.const 21)) (i32.const 42))
        (then (i32.const 0)) (else (i32.const 1)))))
  (core func $d (canon lower (func $double)))
  (core instance $i (instantiate $m (with "host" (instance (export "double" (func $d))))))
  (func $run (result (result)) (canon lift (core func $i "run")))
  (instance $cli (export "run" (func $run)))
  (export "wasi:cli/run@0.2.12" (instance $cli)))"#;

#[test]
fn a_component_calls_the_embedders_host_function() {
    let calls = Arc::new(Mutex::new(0u32));
    let counted = Arc::clone(&calls);
    let link = move |linker: &mut ComponentLinker<GuestState>| {
        let counted = Arc::clone(&counted);
        linker.root().func_wrap("double", move |_, (x,): (u32,)| {
            *counted.lock().unwrap() += 1;
            Ok((x * 2,))
        })?;
        Ok(())
    };
    let runtime = Runtime::builder().link_components(link).build().unwrap();
    let guest = runtime.load_bytes("doubling.wat", DOUBLING_COMPONENT.as_bytes()).unwrap();
    assert!(guest.is_component());
    assert_eq!(guest.run(&RunOptions::new()).unwrap().outcome, Outcome::Exited(0));
    assert_eq!(*calls.lock().unwrap(), 1);
    // Without the embedder's function the component does not link.
    let plain = Runtime::new().unwrap();
    let err = plain.load_bytes("doubling.wat", DOUBLING_COMPONENT.as_bytes()).unwrap_err();
    assert!(format!("{err:#}").contains("double"), "{err:#}");
}

//! A command's entry point, type-checked once when its module is loaded, so that no run pays
//! for the check again.
//!
//! `Func::typed` loads the function's type from the engine's registry twice (to check it, then
//! to build the typed handle), and drops it twice: about a tenth of a trivial guest's run. The
//! type of a module's export never changes, so [`EntryPoint::find`] checks it when the guest is
//! loaded and [`EntryPoint::func`] builds the handle without checking.

use wasmtime::{AsContextMut, ExternType, Instance, Module, ModuleExport, TypedFunc};

/// An export of a module that is a function taking and returning nothing (`_start`, or the
/// empty name of a WASI command).
#[derive(Clone, Copy)]
pub(crate) struct EntryPoint(ModuleExport);

impl EntryPoint {
    /// The first of `names` that `module` exports as a function of type `[] -> []`.
    pub(crate) fn find(module: &Module, names: &[&str]) -> Option<Self> {
        names.iter().find_map(|&name| match module.get_export(name)? {
            ExternType::Func(ty) if ty.params().len() == 0 && ty.results().len() == 0 => {
                module.get_export_index(name).map(Self)
            }
            _ => None,
        })
    }

    /// The entry point in `instance`, an instance of the module it was found in (`None` for an
    /// instance of another module).
    pub(crate) fn func(&self, mut store: impl AsContextMut, instance: Instance) -> Option<TypedFunc<(), ()>> {
        // `get_module_export` checks that `instance` is of the module `self.0` came from.
        let func = instance.get_module_export(&mut store, &self.0)?.into_func()?;
        debug_assert!(func.typed::<(), ()>(&store).is_ok(), "checked by `find`");
        // SAFETY: `find` took this export only as a function of type `[] -> []`, and the
        // function is that export of an instance of the same module (checked above), so
        // `Func::typed::<(), ()>` would return `Ok`, which is what `new_unchecked` requires.
        Some(unsafe { TypedFunc::new_unchecked(&store, func) })
    }
}

#[cfg(test)]
mod tests {
    use wasmtime::{Engine, Store};

    use super::*;

    fn module(wat: &str) -> (Engine, Module) {
        let engine = Engine::default();
        let module = Module::new(&engine, wat).unwrap();
        (engine, module)
    }

    #[test]
    fn only_a_function_taking_and_returning_nothing_is_an_entry_point() {
        let (_, m) = module(r#"(module (func (export "_start") (param i32)) (global (export "") i32 (i32.const 0)))"#);
        assert!(EntryPoint::find(&m, &["_start", ""]).is_none());
        let (engine, m) = module(r#"(module (func (export "_start") (result i32) i32.const 1) (func (export "")))"#);
        let entry = EntryPoint::find(&m, &["_start", ""]).expect("the empty name");
        let mut store = Store::new(&engine, ());
        let instance = Instance::new(&mut store, &m, &[]).unwrap();
        entry.func(&mut store, instance).unwrap().call(&mut store, ()).unwrap();
    }

    #[test]
    fn an_instance_of_another_module_has_no_entry_point() {
        let (engine, m) = module(r#"(module (func (export "_start")))"#);
        let other = Module::new(&engine, r#"(module (func (export "_start") (param i32)))"#).unwrap();
        let entry = EntryPoint::find(&m, &["_start"]).unwrap();
        let mut store = Store::new(&engine, ());
        let instance = Instance::new(&mut store, &other, &[]).unwrap();
        assert!(entry.func(&mut store, instance).is_none());
    }
}

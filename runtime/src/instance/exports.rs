//! Calls of an instance's exports (`run_start`, `invoke`, `call`, `typed_call`) and access to
//! its exported memory.

use std::ops::Range;

use wasmtime::{Store, Val, ValType};

use super::{Instance, State};
use crate::error::InstantiateError;
#[cfg(doc)]
use crate::guest::Guest;
use crate::guest_state::GuestState;
use crate::host_fn::{call_wasm, now};
use crate::outcome::Outcome;
use crate::value::{WasmType, WasmValue};

impl Instance {
    /// How the guest ended, if it has: at instantiation (its start function trapped, exited,
    /// timed out or ran out of fuel) or by exiting in a call (`_start` returned, or
    /// `proc_exit`). Such an instance runs nothing more.
    pub fn ended(&self) -> Option<&Outcome> {
        match &self.state {
            State::Ready(_) | State::Command(_) | State::CommandAsync(_) | State::CommandP3(_) | State::Service(_) => {
                None
            }
            State::Ended(outcome) => Some(outcome),
        }
    }

    /// Runs the WASI command entry point (`_start`, or the empty-named export).
    ///
    /// # Errors
    ///
    /// [`InstantiateError::NoSuchExport`] when the guest has neither; a failure of the host
    /// (not of the guest) while it runs.
    pub fn run_start(&mut self) -> wasmtime::Result<Outcome> {
        let instance = match &self.state {
            State::Ready(instance) => *instance,
            State::Command(command) => {
                let run = command.wasi_cli_run().clone();
                // `run` returning `Err(())` is a failure without a code: exit 1, as `wasmtime
                // run` gives it.
                return self.run_call(move |store| {
                    run.call_run(store).map(|result| Outcome::Exited(if result.is_ok() { 0 } else { 1 }))
                });
            }
            State::CommandAsync(_) => return Err(self.wrong_mode()),
            // Its `run` is an async function: this thread waits for it.
            State::CommandP3(_) => return crate::tokio_runtime::block_on(self.run_start_async()),
            State::Service(_) => return Err(self.service_not_run()),
            State::Ended(outcome) => return Ok(outcome.clone()),
        };
        let func = self.start_func(instance)?;
        self.run_call(|store| func.call(store, ()).map(|()| Outcome::Exited(0)))
    }

    /// The guest's command entry point (`_start`, or the empty-named export).
    pub(super) fn start_func(
        &mut self,
        instance: wasmtime::Instance,
    ) -> Result<wasmtime::TypedFunc<(), ()>, InstantiateError> {
        self.entry.and_then(|entry| entry.func(&mut self.store, instance)).ok_or_else(|| {
            InstantiateError::NoSuchExport {
                guest: self.guest_name.to_string(),
                export: "_start".into(),
                functions: self.exported_functions(),
            }
        })
    }

    /// Calls the exported function `name` with `args` as its parameters and returns the
    /// values it returned ([`Outcome::Returned`]). Calls `_initialize` first if the guest
    /// exports it and no call has run it yet (once per instance, as for a WASI reactor), under
    /// the same timeout and fuel. [`Guest::export_params`] gives the types
    /// the arguments must have.
    ///
    /// # Errors
    ///
    /// [`InstantiateError`] when the guest is a component, the export is missing or is not a
    /// function, the arguments do not match its parameters in number or type, or a result has
    /// a type no [`WasmValue`] holds; a failure of the host while it runs.
    pub fn invoke(&mut self, name: &str, args: &[WasmValue]) -> wasmtime::Result<Outcome> {
        let (instance, func) = match self.export_func(name)? {
            Ok(found) => found,
            Err(outcome) => return Ok(outcome),
        };
        let ty = func.ty(&self.store);
        let bad_args = |reason: String| InstantiateError::BadInvokeArgs {
            guest: self.guest_name.to_string(),
            export: name.to_owned(),
            reason,
        };
        if ty.params().len() != args.len() {
            return Err(bad_args(format!("expects {} arguments, got {}", ty.params().len(), args.len())).into());
        }
        for (i, (ty, arg)) in ty.params().zip(args).enumerate() {
            match WasmType::of(&ty) {
                WasmType::Unsupported(ty) => {
                    return Err(bad_args(format!("argument {}: parameter type `{ty}` is not supported", i + 1)).into());
                }
                ty if ty != arg.ty() => {
                    let reason =
                        format!("argument {}: the parameter is `{ty}`, the value `{arg}` is `{}`", i + 1, arg.ty());
                    return Err(bad_args(reason).into());
                }
                _ => {}
            }
        }
        let params: Vec<Val> = args.iter().map(|arg| arg.to_val()).collect();
        let mut results = Vec::new();
        for ty in ty.results() {
            results.push(default_val(&ty).ok_or_else(|| bad_args(format!("result type `{ty}` is not supported")))?);
        }
        let init = self.initializer(instance);
        self.run_call(|store| {
            now(initialize(store, init))?;
            func.call(&mut *store, &params, &mut results)?;
            Ok(Outcome::Returned(results.iter().filter_map(WasmValue::from_val).collect()))
        })
    }

    /// Calls the exported function `name` with `params`, after the guest's `_initialize` if it
    /// exports one and it has not run yet, under the run's timeout, fuel and cancel token: the
    /// values it returned, or how the guest stopped (as [`Instance::invoke`] would return it;
    /// an exit or a cancel ends the instance, and a stop ends its children). Values of any type
    /// the export has pass, references included.
    ///
    /// # Examples
    ///
    /// ```
    /// use wrt_runtime::wasmtime::Val;
    /// use wrt_runtime::{RunOptions, Runtime};
    ///
    /// # fn main() -> wrt_runtime::Result<()> {
    /// let wat = r#"(module (func (export "mul") (param f64 f64) (result f64)
    ///     (f64.mul (local.get 0) (local.get 1))))"#;
    /// let guest = Runtime::new()?.load_bytes("mul.wat", wat.as_bytes())?;
    /// let mut instance = guest.instantiate(&RunOptions::new())?;
    /// let results = instance.call("mul", &[Val::from(1.5f64), Val::from(4.0f64)])?;
    /// assert_eq!(results.expect("returned")[0].unwrap_f64(), 6.0);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`InstantiateError`] when the guest is a component or has no such export; wasmtime's
    /// error when the values do not match the export's parameters; a failure of the host while
    /// it runs.
    pub fn call(&mut self, name: &str, params: &[Val]) -> wasmtime::Result<Result<Vec<Val>, Outcome>> {
        let (instance, func) = match self.export_func(name)? {
            Ok(found) => found,
            Err(outcome) => return Ok(Err(outcome)),
        };
        let ty = func.ty(&self.store);
        let mut results: Vec<Val> = ty.results().map(|ty| Val::default_for_ty(&ty).unwrap_or(Val::I32(0))).collect();
        let init = self.initializer(instance);
        let called = self.enter(|store| {
            now(initialize(store, init))?;
            func.call(&mut *store, params, &mut results)
        })?;
        Ok(match called {
            Ok(()) => Ok(results),
            Err(outcome) => {
                self.settle(&outcome);
                Err(outcome)
            }
        })
    }

    /// [`Instance::call`] with the export's types given: `P` and `R` are wasmtime's typed
    /// parameters and results (`i32`, `(i64, f32)`, `()`, …), checked once against the export.
    /// The fastest way to call an export many times.
    ///
    /// # Errors
    ///
    /// As [`Instance::call`]; wasmtime's error when the types do not match the export's.
    pub fn typed_call<P, R>(&mut self, name: &str, params: P) -> wasmtime::Result<Result<R, Outcome>>
    where
        P: wasmtime::WasmParams + Send,
        R: wasmtime::WasmResults + Send,
    {
        let (instance, func) = match self.export_func(name)? {
            Ok(found) => found,
            Err(outcome) => return Ok(Err(outcome)),
        };
        let typed = func.typed::<P, R>(&self.store)?;
        let init = self.initializer(instance);
        let called = self.enter(|store| {
            now(initialize(store, init))?;
            typed.call(&mut *store, params)
        })?;
        if let Err(outcome) = &called {
            self.settle(outcome);
        }
        Ok(called)
    }

    /// The instance and its exported function `name`, or the outcome of an instance that ended.
    pub(super) fn export_func(
        &mut self,
        name: &str,
    ) -> wasmtime::Result<Result<(wasmtime::Instance, wasmtime::Func), Outcome>> {
        let instance = match &self.state {
            State::Ready(instance) => *instance,
            State::Command(_) | State::CommandAsync(_) | State::CommandP3(_) | State::Service(_) => {
                return Err(InstantiateError::InvokeComponent { guest: self.guest_name.to_string() }.into());
            }
            State::Ended(outcome) => return Ok(Err(outcome.clone())),
        };
        let func = instance.get_func(&mut self.store, name).ok_or_else(|| InstantiateError::NoSuchExport {
            guest: self.guest_name.to_string(),
            export: name.to_owned(),
            functions: self.exported_functions(),
        })?;
        Ok(Ok((instance, func)))
    }

    /// The guest's `_initialize`, the first time a call asks (later calls get `None`: it runs
    /// once per instance, as for a WASI reactor).
    pub(super) fn initializer(&mut self, instance: wasmtime::Instance) -> Option<wasmtime::TypedFunc<(), ()>> {
        if std::mem::replace(&mut self.initialized, true) {
            return None;
        }
        // Looked up as a plain export first: a failed typed lookup builds an error (and its
        // backtrace), which costs more than the call itself for most guests.
        instance.get_func(&mut self.store, "_initialize").and_then(|init| init.typed::<(), ()>(&self.store).ok())
    }

    /// Copies `buf.len()` bytes of the guest's exported `memory`, from `offset`, into `buf`.
    ///
    /// # Errors
    ///
    /// [`InstantiateError::MemoryAccess`] when the bytes reach past the memory's end, or the
    /// guest (a component, or a module without one) exports no `memory`.
    pub fn read_memory(&mut self, offset: usize, buf: &mut [u8]) -> crate::Result<()> {
        let len = buf.len();
        let (memory, size) = self.memory_for(offset, len)?;
        memory.read(&self.store, offset, buf).map_err(|_| self.outside(offset, len, size))
    }

    /// Copies `bytes` into the guest's exported `memory` at `offset`.
    ///
    /// # Errors
    ///
    /// As [`Instance::read_memory`].
    pub fn write_memory(&mut self, offset: usize, bytes: &[u8]) -> crate::Result<()> {
        let (memory, size) = self.memory_for(offset, bytes.len())?;
        memory.write(&mut self.store, offset, bytes).map_err(|_| self.outside(offset, bytes.len(), size))
    }

    /// The guest's memory and its size, for an access of `len` bytes at `offset`.
    fn memory_for(&mut self, offset: usize, len: usize) -> crate::Result<(wasmtime::Memory, usize)> {
        let memory = match &self.state {
            State::Ready(instance) => instance.get_memory(&mut self.store, "memory"),
            _ => self.store.data().memory,
        };
        match memory {
            Some(memory) => Ok((memory, memory.data_size(&self.store))),
            None => Err(self.outside(offset, len, 0)),
        }
    }

    fn outside(&self, offset: usize, len: usize, size: usize) -> wasmtime::Error {
        InstantiateError::MemoryAccess { guest: self.guest_name.to_string(), offset, len, size }.into()
    }

    /// The names of the functions the guest exports, in its order.
    fn exported_functions(&self) -> Vec<String> {
        let State::Ready(instance) = &self.state else { return Vec::new() };
        let module = instance.module(&self.store);
        module.exports().filter(|e| e.ty().func().is_some()).map(|e| e.name().to_owned()).collect()
    }

    /// The address range of the guest's exported `memory` in this process, for inspecting the
    /// mapping (for example in `/proc/self/smaps`).
    pub fn memory_range(&mut self) -> Option<Range<usize>> {
        let State::Ready(instance) = &self.state else { return None };
        let memory = instance.get_memory(&mut self.store, "memory")?;
        let base = memory.data_ptr(&self.store) as usize;
        Some(base..base + memory.data_size(&self.store))
    }
}

/// Runs the guest's `_initialize` if given; an exit with status 0 from it is no stop.
pub(super) async fn initialize(
    store: &mut Store<GuestState>,
    init: Option<wasmtime::TypedFunc<(), ()>>,
) -> wasmtime::Result<()> {
    let Some(init) = init else { return Ok(()) };
    match call_wasm(store, &init, ()).await {
        Ok(()) => Ok(()),
        Err(err) if err.downcast_ref::<wasmtime_wasi::I32Exit>().is_some_and(|exit| exit.0 == 0) => Ok(()),
        Err(err) => Err(err),
    }
}

fn default_val(ty: &ValType) -> Option<Val> {
    Some(match ty {
        ValType::I32 => Val::I32(0),
        ValType::I64 => Val::I64(0),
        ValType::F32 => Val::F32(0),
        ValType::F64 => Val::F64(0),
        _ => return None,
    })
}

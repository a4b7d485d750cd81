//! One instantiated guest in its own store: run `_start`, invoke exports, inspect memory.

use std::ops::Range;
use std::time::{Duration, Instant};

use wasmtime::{Store, Trap, Val, ValType, WasmBacktrace};

use crate::abi::spawn_state::SpawnState;
use crate::deadline::{self, DeadlineExceeded, Ticker};
use crate::error::InstantiateError;
use crate::external::accountant::Accountant;
use crate::guest::Guest;
use crate::limiter::Limiter;
use crate::outcome::{Outcome, TrapInfo, WasmValue};
use crate::sandbox::Sandbox;
use crate::state::{ExternalState, GuestState};
use crate::stats::Stats;
use crate::wasi_ctx::{self, Captured};

/// What a finished run returns: how it ended and what it wrote to captured streams.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Report {
    /// How the guest ended.
    pub outcome: Outcome,
    /// Captured standard output (empty unless captured).
    pub stdout: Vec<u8>,
    /// Captured standard error (empty unless captured).
    pub stderr: Vec<u8>,
    /// What the guest used: memory, collections, spawns.
    pub stats: Stats,
}

/// A guest instantiated in its own store. Its memories live until it is dropped.
pub struct Instance {
    store: Store<GuestState>,
    instance: wasmtime::Instance,
    captured: Captured,
    guest_name: String,
    fuel: Option<u64>,
    timeout: Option<Duration>,
    engine: wasmtime::Engine,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance").field("guest", &self.guest_name).finish_non_exhaustive()
    }
}

impl Instance {
    pub(crate) fn new(sandbox: &Sandbox, guest: &Guest) -> wasmtime::Result<Self> {
        let settings = &sandbox.settings;
        let (wasi, captured) = wasi_ctx::build(settings, &guest.name)?;
        let inherit = [
            matches!(settings.stdin, crate::GuestStdin::Inherit),
            matches!(settings.stdout, crate::GuestOutput::Inherit),
            matches!(settings.stderr, crate::GuestOutput::Inherit),
        ];
        let spawn = SpawnState::new(settings.spawner()?, settings.denials.clone(), guest.name.clone(), inherit);
        let accountant = Accountant::new(settings.gc_policy.clone());
        let external = ExternalState::new(accountant, settings.dontfork);
        let limiter = Limiter::new(settings.max_memory, std::sync::Arc::clone(&external.pool));
        let state = GuestState { wasi, limiter, deadline: None, spawn, external };
        let mut store = Store::new(&sandbox.engine, state);
        store.limiter(|state| &mut state.limiter);
        if settings.timeout.is_some() {
            deadline::install(&mut store);
        }
        if let Some(fuel) = settings.fuel {
            // Instantiation runs wasm too (the start function, data and element segments).
            store.set_fuel(fuel)?;
        }
        let trapping_linker;
        let linker = if settings.unknown_imports_trap {
            let mut linker = (*sandbox.linker).clone();
            linker.define_unknown_imports_as_traps(&guest.module)?;
            trapping_linker = linker;
            &trapping_linker
        } else {
            &*sandbox.linker
        };
        for import in guest.module.imports() {
            if linker.get_by_import(&mut store, &import).is_none() {
                return Err(InstantiateError::UnknownImport {
                    guest: guest.name.clone(),
                    module: import.module().to_owned(),
                    name: import.name().to_owned(),
                }
                .into());
            }
        }
        check_collector_hook(guest)?;
        let instance = linker.instantiate(&mut store, &guest.module).map_err(|e| {
            match (store.data().limiter.refused_minimum, settings.max_memory) {
                (Some(minimum), Some(limit)) if !e.is::<Trap>() => {
                    InstantiateError::MemoryLimit { guest: guest.name.clone(), minimum, limit }.into()
                }
                _ => e.context(format!("failed to instantiate guest `{}`", guest.name)),
            }
        })?;
        Ok(Self {
            store,
            instance,
            captured,
            guest_name: guest.name.clone(),
            fuel: settings.fuel,
            timeout: settings.timeout,
            engine: sandbox.engine.clone(),
        })
    }

    /// Runs the WASI command entry point (`_start`, or the empty-named export).
    ///
    /// # Errors
    ///
    /// [`InstantiateError::NoSuchExport`] when the guest has neither; a failure of the host
    /// (not of the guest) while it runs.
    pub fn run_start(&mut self) -> wasmtime::Result<Outcome> {
        let func = ["_start", ""]
            .iter()
            .find_map(|name| self.instance.get_typed_func::<(), ()>(&mut self.store, name).ok())
            .ok_or_else(|| InstantiateError::NoSuchExport {
                guest: self.guest_name.clone(),
                export: "_start".into(),
                functions: self.exported_functions(),
            })?;
        self.call(|store| func.call(store, ()).map(|()| Outcome::Exited(0)))
    }

    /// Calls an exported function with `args` parsed as its parameters (`i32`, `i64`, `f32`,
    /// `f64`; integers may be written in hex with `0x`). Calls `_initialize` first if the guest
    /// exports it.
    ///
    /// # Errors
    ///
    /// [`InstantiateError`] when the export is missing, is not a function, or the arguments do
    /// not fit its parameters; a failure of the host while it runs.
    pub fn invoke(&mut self, name: &str, args: &[String]) -> wasmtime::Result<Outcome> {
        let func = self.instance.get_func(&mut self.store, name).ok_or_else(|| InstantiateError::NoSuchExport {
            guest: self.guest_name.clone(),
            export: name.to_owned(),
            functions: self.exported_functions(),
        })?;
        let ty = func.ty(&self.store);
        let bad_args = |reason: String| InstantiateError::BadInvokeArgs {
            guest: self.guest_name.clone(),
            export: name.to_owned(),
            reason,
        };
        if ty.params().len() != args.len() {
            return Err(bad_args(format!("expects {} arguments, got {}", ty.params().len(), args.len())).into());
        }
        let params = ty
            .params()
            .zip(args)
            .enumerate()
            .map(|(i, (ty, arg))| parse_val(&ty, arg).map_err(|why| bad_args(format!("argument {}: {why}", i + 1))))
            .collect::<Result<Vec<_>, _>>()?;
        let mut results = Vec::new();
        for ty in ty.results() {
            results.push(default_val(&ty).ok_or_else(|| bad_args(format!("result type `{ty}` is not supported")))?);
        }
        if let Ok(init) = self.instance.get_typed_func::<(), ()>(&mut self.store, "_initialize") {
            let outcome = self.call(|store| init.call(store, ()).map(|()| Outcome::Exited(0)))?;
            if outcome != Outcome::Exited(0) {
                return Ok(outcome);
            }
        }
        self.call(|store| {
            func.call(&mut *store, &params, &mut results)?;
            Ok(Outcome::Returned(results.iter().filter_map(wasm_value).collect()))
        })
    }

    /// The names of the functions the guest exports, in its order.
    fn exported_functions(&self) -> Vec<String> {
        let module = self.instance.module(&self.store);
        module.exports().filter(|e| e.ty().func().is_some()).map(|e| e.name().to_owned()).collect()
    }

    /// The address range of the guest's exported `memory` in this process, for inspecting the
    /// mapping (for example in `/proc/self/smaps`).
    pub fn memory_range(&mut self) -> Option<Range<usize>> {
        let memory = self.instance.get_memory(&mut self.store, "memory")?;
        let base = memory.data_ptr(&self.store) as usize;
        Some(base..base + memory.data_size(&self.store))
    }

    /// What the guest used so far: memory, collections, spawns.
    pub fn stats(&self) -> Stats {
        let state = self.store.data();
        let accountant = &state.external.accountant;
        Stats {
            peak_linear_memory: state.limiter.peak_linear,
            peak_external: accountant.ledger.peak(),
            peak_buffer_memory: state.external.pool.peak_footprint(),
            final_external: accountant.ledger.live(),
            young_collections: accountant.young_collections,
            full_collections: accountant.full_collections,
            spawns: state.spawn.spawns,
            gc_time: accountant.gc_time,
        }
    }

    /// Ends the instance and returns the report of a run that ended with `outcome`.
    pub fn into_report(self, outcome: Outcome) -> Report {
        let take = |pipe: &Option<wasmtime_wasi::p2::pipe::MemoryOutputPipe>| {
            pipe.as_ref().map(|p| p.contents().to_vec()).unwrap_or_default()
        };
        let stats = self.stats();
        Report { stdout: take(&self.captured.stdout), stderr: take(&self.captured.stderr), outcome, stats }
    }

    /// Runs one call into the guest with the fuel and deadline of the sandbox, and turns the
    /// ways a guest stops into an [`Outcome`].
    fn call(
        &mut self,
        f: impl FnOnce(&mut Store<GuestState>) -> wasmtime::Result<Outcome>,
    ) -> wasmtime::Result<Outcome> {
        if let Some(fuel) = self.fuel {
            self.store.set_fuel(fuel)?;
        }
        let _ticker = match self.timeout {
            Some(timeout) => {
                self.store.data_mut().deadline = Some(Instant::now() + timeout);
                Some(Ticker::start(&self.engine)?)
            }
            None => None,
        };
        let result = f(&mut self.store);
        self.store.data_mut().deadline = None;
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(err) => self.outcome_of(err)?,
        };
        // A guest that ended (exit, trap, timeout, fuel) takes its children with it; a call that
        // returned leaves them to the next call.
        if !matches!(outcome, Outcome::Returned(_)) {
            self.store.data_mut().spawn.end_children();
        }
        Ok(outcome)
    }

    fn outcome_of(&self, err: wasmtime::Error) -> wasmtime::Result<Outcome> {
        if let Some(exit) = err.downcast_ref::<wasmtime_wasi::I32Exit>() {
            return Ok(Outcome::Exited(exit.0));
        }
        if err.is::<DeadlineExceeded>() {
            return Ok(Outcome::TimedOut(self.timeout.unwrap_or_default()));
        }
        let trap = err.downcast_ref::<Trap>().copied();
        match trap {
            Some(Trap::OutOfFuel) => return Ok(Outcome::OutOfFuel(self.fuel.unwrap_or_default())),
            Some(Trap::Interrupt) if self.timeout.is_some() => {
                return Ok(Outcome::TimedOut(self.timeout.unwrap_or_default()));
            }
            _ => {}
        }
        let backtrace = err.downcast_ref::<WasmBacktrace>();
        if trap.is_none() && backtrace.is_none() {
            // Not raised while guest code ran: a failure of the host.
            return Err(err);
        }
        // wasmtime adds the address the guest reached for, and the size of the memory it missed,
        // as context of an out-of-bounds trap (its `WasmFault` is not public).
        let fault = err.chain().map(|e| e.to_string()).find(|m| m.starts_with("memory fault at wasm address"));
        let message = match (trap, fault) {
            (Some(trap), Some(fault)) => format!("{trap}: {fault}"),
            (Some(trap), None) => trap.to_string(),
            (None, _) => format!("{:#}", err.root_cause()),
        };
        let backtrace = backtrace.filter(|bt| !bt.frames().is_empty()).map(format_backtrace);
        Ok(Outcome::Trapped(TrapInfo { trap, message, backtrace }))
    }
}

/// Fails when the guest exports `wrt_gc` with another type than the collector hook's.
fn check_collector_hook(guest: &Guest) -> Result<(), InstantiateError> {
    let Some(export) = guest.module.get_export(crate::external::collector::GUEST_GC_EXPORT) else {
        return Ok(());
    };
    let found = match export {
        wasmtime::ExternType::Func(ty) if ty.params().len() == 1 && ty.results().len() == 0 => {
            match ty.params().next() {
                Some(ValType::I32) => return Ok(()),
                _ => format!("a function of type {ty}"),
            }
        }
        wasmtime::ExternType::Func(ty) => format!("a function of type {ty}"),
        wasmtime::ExternType::Global(_) => "a global".into(),
        wasmtime::ExternType::Table(_) => "a table".into(),
        wasmtime::ExternType::Memory(_) => "a memory".into(),
        wasmtime::ExternType::Tag(_) => "a tag".into(),
    };
    Err(InstantiateError::BadCollectorHook { guest: guest.name.clone(), found })
}

/// `wasm backtrace:` and one line a frame, innermost first: index, module offset, module and
/// demangled function name, as wasmtime prints them, without its notes about environment
/// variables.
fn format_backtrace(backtrace: &WasmBacktrace) -> String {
    let text = backtrace.to_string();
    let frames = text.lines().filter(|line| line.starts_with(' ') && !line.trim_start().starts_with("note:"));
    std::iter::once("wasm backtrace:").chain(frames).collect::<Vec<_>>().join("\n")
}

fn parse_val(ty: &ValType, arg: &str) -> Result<Val, String> {
    let int = |s: &str| -> Result<i128, String> {
        let (negative, digits) = s.strip_prefix('-').map_or((false, s), |d| (true, d));
        let value = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
            Some(hex) => i128::from_str_radix(hex, 16),
            None => digits.parse::<i128>(),
        }
        .map_err(|_| format!("`{s}` is not an integer"))?;
        Ok(if negative { -value } else { value })
    };
    let out_of_range = || format!("`{arg}` is out of range for `{ty}`");
    Ok(match ty {
        ValType::I32 => {
            let v = int(arg)?;
            Val::I32(i32::try_from(v).or_else(|_| u32::try_from(v).map(|u| u as i32)).map_err(|_| out_of_range())?)
        }
        ValType::I64 => {
            let v = int(arg)?;
            Val::I64(i64::try_from(v).or_else(|_| u64::try_from(v).map(|u| u as i64)).map_err(|_| out_of_range())?)
        }
        ValType::F32 => Val::F32(arg.parse::<f32>().map_err(|_| format!("`{arg}` is not a number"))?.to_bits()),
        ValType::F64 => Val::F64(arg.parse::<f64>().map_err(|_| format!("`{arg}` is not a number"))?.to_bits()),
        other => return Err(format!("parameter type `{other}` is not supported")),
    })
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

fn wasm_value(val: &Val) -> Option<WasmValue> {
    Some(match *val {
        Val::I32(v) => WasmValue::I32(v),
        Val::I64(v) => WasmValue::I64(v),
        Val::F32(bits) => WasmValue::F32(f32::from_bits(bits)),
        Val::F64(bits) => WasmValue::F64(f64::from_bits(bits)),
        _ => return None,
    })
}

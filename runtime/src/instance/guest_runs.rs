//! Running a [`Guest`]: `instantiate`, `run` and `invoke`, each run in a fresh instance.

use super::{Instance, Report};
#[cfg(doc)]
use crate::error::InstantiateError;
use crate::guest::Guest;
use crate::options::RunOptions;
use crate::value::WasmValue;

/// Running a guest: each run in a fresh instance.
///
/// These calls block the calling thread while the guest runs, and work on any thread,
/// inside a tokio runtime too: in a multi-thread runtime's task (or its `block_on`) the guest
/// runs on the same thread through `tokio::task::block_in_place`, which hands the thread's
/// other tasks to another worker; in a current-thread runtime it runs on a thread of its own,
/// started and joined for each call. A server with many runs in flight does better with
/// [`Guest::run_async`], which holds no thread while the guest waits. The guest's WASI calls
/// use wrt's own runtime, never the caller's.
impl Guest {
    /// Creates an instance in a fresh store with `options`, ready to run.
    ///
    /// # Errors
    ///
    /// [`crate::ConfigError`] when the options are invalid (a zero limit, fuel on a runtime
    /// without fuel metering, a preopened directory that cannot be opened, an allowed program
    /// inside a read-write preopen); [`InstantiateError::MemoryLimit`] when the guest's own
    /// minimum memory is over the memory limit.
    pub fn instantiate(&self, options: &RunOptions) -> crate::Result<Instance> {
        Instance::new(self, options)
    }

    /// Runs the guest's `_start` in a fresh instance and returns how it ended.
    ///
    /// # Errors
    ///
    /// As [`Guest::instantiate`]; a guest ending badly (trap, timeout, no fuel) is an
    /// [`crate::Outcome`], not an error.
    pub fn run(&self, options: &RunOptions) -> crate::Result<Report> {
        crate::tokio_runtime::blocking(|| {
            let mut instance = self.instantiate(options)?;
            let outcome = instance.run_start()?;
            Ok(instance.into_report(outcome))
        })
    }

    /// Calls the export `name` of a fresh instance with `args` as its parameters, after the
    /// guest's `_initialize` if it has one (as `wasmtime run --invoke` does);
    /// [`Instance::invoke`] in a fresh instance.
    ///
    /// # Examples
    ///
    /// ```
    /// use wrt_runtime::{Outcome, RunOptions, Runtime, WasmType, WasmValue};
    ///
    /// # fn main() -> wrt_runtime::Result<()> {
    /// let wat = r#"(module (func (export "add") (param i32 i64) (result i64)
    ///     (i64.add (i64.extend_i32_s (local.get 0)) (local.get 1))))"#;
    /// let guest = Runtime::new()?.load_bytes("add.wat", wat.as_bytes())?;
    /// assert_eq!(guest.export_params("add")?, [WasmType::I32, WasmType::I64]);
    /// let report = guest.invoke(&RunOptions::new(), "add", &[WasmValue::I32(-1), WasmValue::I64(1 << 40)])?;
    /// assert_eq!(report.outcome, Outcome::Returned(vec![WasmValue::I64((1 << 40) - 1)]));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Guest::instantiate`], and [`InstantiateError`] when the export is missing or the
    /// arguments do not match its parameters.
    pub fn invoke(&self, options: &RunOptions, name: &str, args: &[WasmValue]) -> crate::Result<Report> {
        crate::tokio_runtime::blocking(|| {
            let mut instance = self.instantiate(options)?;
            let outcome = instance.invoke(name, args)?;
            Ok(instance.into_report(outcome))
        })
    }
}

//! How a call that stopped becomes an [`Outcome`]: an exit, a cancel, the deadline, no fuel
//! left, or a trap with its wasm backtrace.

use wasmtime::{Trap, WasmBacktrace};

use super::Instance;
use crate::epoch_ticker::DeadlineExceeded;
use crate::outcome::{Outcome, TrapInfo};
use crate::stop::Cancelled;

impl Instance {
    /// The outcome of a call that failed with `err`: how the guest stopped, or `err` itself when
    /// the host failed.
    pub(super) fn outcome_of(&self, err: wasmtime::Error) -> wasmtime::Result<Outcome> {
        if let Some(exit) = err.downcast_ref::<wasmtime_wasi::I32Exit>() {
            return Ok(Outcome::Exited(exit.0));
        }
        let trap = err.downcast_ref::<Trap>().copied();
        let stopped = err.is::<DeadlineExceeded>() || err.is::<Cancelled>() || trap == Some(Trap::Interrupt);
        if stopped && self.cancel.as_ref().is_some_and(|run| run.token().is_cancelled()) {
            // A cancel stops the guest through the deadline's paths too (its cell, the ticker).
            return Ok(Outcome::Cancelled);
        }
        if err.is::<DeadlineExceeded>() {
            return Ok(Outcome::TimedOut(self.deadline.timeout().unwrap_or_default()));
        }
        match trap {
            Some(Trap::OutOfFuel) => return Ok(Outcome::OutOfFuel(self.fuel.unwrap_or_default())),
            Some(Trap::Interrupt) if self.deadline.timeout().is_some() => {
                return Ok(Outcome::TimedOut(self.deadline.timeout().unwrap_or_default()));
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
            (None, _) => crate::shown_text::shown_line(&format!("{:#}", err.root_cause())),
        };
        let backtrace = backtrace.filter(|bt| !bt.frames().is_empty()).map(format_backtrace);
        Ok(Outcome::Trapped(TrapInfo { trap, message, backtrace }))
    }
}

/// `wasm backtrace:` and one line a frame, innermost first: index, module offset, module and
/// demangled function name, as wasmtime prints them, without its notes about environment
/// variables.
///
/// Module and function names come from the module's name section: a line break in one would
/// start a line of the module's choosing, so every line that does not start the next frame
/// (`N:`) or give a frame's source location (`at …`) is joined to the line before it, and every
/// line is escaped and capped.
fn format_backtrace(backtrace: &WasmBacktrace) -> String {
    let text = backtrace.to_string();
    let mut lines: Vec<String> = vec!["wasm backtrace:".into()];
    let mut next_frame = 0usize;
    let mut in_frames = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let frame_start = trimmed
            .split_once(':')
            .is_some_and(|(index, _)| line.starts_with(' ') && index.parse::<usize>() == Ok(next_frame));
        if frame_start {
            next_frame += 1;
            in_frames = true;
            lines.push(line.to_owned());
        } else if !in_frames || (line.starts_with(' ') && trimmed.starts_with("note:")) {
            // wasmtime's header and notes.
        } else if line.starts_with(' ') && trimmed.starts_with("at ") {
            lines.push(line.to_owned());
        } else if let Some(last) = lines.last_mut() {
            last.push('\n');
            last.push_str(line);
        }
    }
    let shown: Vec<String> =
        lines.iter().take(crate::shown_text::MAX_LINES).map(|l| crate::shown_text::shown_line(l)).collect();
    let mut shown = shown.join("\n");
    if lines.len() > crate::shown_text::MAX_LINES {
        shown.push_str(&format!("\n  … ({} more lines)", lines.len() - crate::shown_text::MAX_LINES));
    }
    shown
}

//! Waiting for a child together with `wasi:io` streams: [`Child::subscribe`] (only
//! `wrt-process` has it: core modules wait with `wrt-guest`'s `Child::poll` instead).

use wasip2::io::poll::Pollable;

use crate::child::Child;

impl Child {
    /// A pollable that is ready once the child has ended (`wasi:io/poll`), to wait for it
    /// together with streams or other children: `child.subscribe().block()` waits without
    /// reaping it.
    pub fn subscribe(&self) -> Pollable {
        self.handle().subscribe()
    }
}

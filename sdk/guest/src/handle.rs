//! An owned `wrt_v1` child handle.

use crate::sys;

/// A handle returned by `spawn`, released (which kills a child still running) when dropped.
///
/// A [`Child`](crate::Child) and its pipes share one `Handle` through an `Arc`, so the handle
/// lives until the last of them is dropped.
#[derive(Debug)]
pub(crate) struct Handle(i32);

impl Handle {
    /// Takes ownership of `raw`, a handle `spawn` just returned.
    pub(crate) fn new(raw: i32) -> Self {
        Self(raw)
    }

    pub(crate) fn raw(&self) -> i32 {
        self.0
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // Only fails for a handle that is not ours, which `new`'s caller rules out.
        let _ = sys::release(self.0);
    }
}

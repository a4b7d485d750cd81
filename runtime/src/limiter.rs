//! The store's resource limiter: one instance, and linear memories (with the GC heap) that,
//! together with the guest's external bytes, stay within the sandbox's memory limit.

use std::sync::Arc;

use wasmtime::ResourceLimiter;

use crate::external::accountant::Ledger;

#[derive(Debug)]
pub(crate) struct Limiter {
    max_memory: Option<u64>,
    ledger: Arc<Ledger>,
    /// Bytes of all linear memories (and the GC heap) now.
    linear: u64,
    /// The most `linear` has been.
    pub(crate) peak_linear: u64,
}

impl Limiter {
    pub(crate) fn new(max_memory: Option<u64>, ledger: Arc<Ledger>) -> Self {
        Self { max_memory, ledger, linear: 0, peak_linear: 0 }
    }

    /// The sandbox's memory limit.
    pub(crate) fn max_memory(&self) -> Option<u64> {
        self.max_memory
    }

    /// Bytes of linear memory now.
    pub(crate) fn linear(&self) -> u64 {
        self.linear
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        if maximum.is_some_and(|max| desired > max) {
            return Ok(false);
        }
        let growth = desired.saturating_sub(current) as u64;
        let after = self.linear.saturating_add(growth);
        if let Some(max) = self.max_memory
            && after.saturating_add(self.ledger.live()) > max
        {
            return Ok(false);
        }
        self.linear = after;
        self.peak_linear = self.peak_linear.max(after);
        Ok(true)
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        // `memory.grow` returns -1 to the guest, as with any refused growth.
        Ok(())
    }

    fn table_growing(&mut self, _current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(maximum.is_none_or(|max| desired <= max))
    }

    fn instances(&self) -> usize {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_bytes_count_against_the_limit() {
        let ledger = Arc::new(Ledger::default());
        let mut limiter = Limiter::new(Some(100), Arc::clone(&ledger));
        assert!(limiter.memory_growing(0, 60, None).unwrap());
        ledger.charge(30);
        assert!(!limiter.memory_growing(60, 80, None).unwrap());
        assert!(limiter.memory_growing(60, 70, None).unwrap());
        assert_eq!((limiter.linear(), limiter.peak_linear), (70, 70));
        assert!(!limiter.memory_growing(70, 80, Some(75)).unwrap(), "the memory's own maximum");
    }
}

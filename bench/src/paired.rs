//! Paired timing: each timed call of a variant follows an untimed call of its partner, so that
//! drift on a shared machine (another build, a CI run) hits the variant and its partner alike.

use std::time::{Duration, Instant};

/// Runs `partner` (untimed) then `measured` (timed), `iters` times, and returns the time
/// `measured` took in all.
pub fn paired(iters: u64, measured: &dyn Fn(), partner: &dyn Fn()) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        partner();
        let start = Instant::now();
        measured();
        total += start.elapsed();
    }
    total
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    #[test]
    fn only_the_measured_call_is_timed() {
        let calls = Cell::new(0u32);
        let slow = || std::thread::sleep(Duration::from_millis(20));
        let count = || calls.set(calls.get() + 1);
        let total = paired(3, &count, &slow);
        assert_eq!(calls.get(), 3);
        assert!(total < Duration::from_millis(20), "{total:?}");
    }
}

//! Wakes that a future gives itself while it is being polled, taken in place.
//!
//! wasmtime's concurrent event loop runs a component's tasks, streams and host futures inside
//! the one future that drives it: a guest writing a response's body wakes the host's reader of
//! that body, a task returning wakes its caller, all from inside the same poll. Each such wake
//! is a wake of the executor's task while it runs. Tokio's multi-thread scheduler treats that as
//! a yield: the task goes to the back of its worker's queue, and an idle worker is woken (a
//! write to its event fd) to steal it. A request answered on a kept instance then costs two
//! thread wake-ups and often a move to the other core.
//!
//! [`Repoll`] polls such a future with a waker of its own. A wake that comes while the future is
//! being polled, from any thread, makes the poll go round again at once, on this thread; a wake
//! at any other time goes to the executor's waker, as if the future had been polled with it.
//! Going round again is bounded, in rounds and in time: a future that keeps waking itself (a
//! guest yielding at its epoch tick) yields to the executor after [`IN_PLACE`] or
//! [`MAX_ROUNDS`], whichever comes first, and at once when the task has spent its tokio
//! cooperative budget (tokio's resources then wake themselves until the executor refills it).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use futures::task::AtomicWaker;

/// How long one poll of the executor may go round again in place: longer, and a self-woken
/// future yields to the executor, as it asked.
pub(crate) const IN_PLACE: Duration = Duration::from_micros(50);

/// The most rounds one poll of the executor goes (a bound where the clock is coarse).
pub(crate) const MAX_ROUNDS: u32 = 16;

/// Not being polled: a wake goes to the executor.
const IDLE: u8 = 0;
/// Being polled, not woken.
const POLLING: u8 = 1;
/// Woken while being polled: the poll goes round again.
const WOKEN: u8 = 2;

/// The waker a future is polled with through [`Repoll::poll`].
#[derive(Debug)]
struct Shared {
    state: AtomicU8,
    /// The executor's waker of the latest poll (taken by the wake that uses it).
    outer: AtomicWaker,
}

impl Wake for Shared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // A wake racing the end of a poll either flips it to WOKEN before the poll reads its
        // state (and the poll goes round again), or finds IDLE after (and wakes the executor):
        // never lost. One that finds IDLE as a new poll starts wakes the executor for nothing.
        if let Err(IDLE) = self.state.compare_exchange(POLLING, WOKEN, Ordering::AcqRel, Ordering::Acquire) {
            self.outer.wake();
        }
    }
}

/// Polls futures one at a time (an instance's calls, one after another), taking the wakes each
/// gives itself in place. A waker a finished future left behind that fires later wakes the
/// executor of the latest poll, or makes a poll in progress go round once more: a spurious
/// wake, which futures allow.
#[derive(Debug)]
pub(crate) struct Repoll {
    shared: Arc<Shared>,
    waker: Waker,
    /// How long one poll of the executor may go round ([`IN_PLACE`]).
    in_place: Duration,
    /// The most rounds of one poll of the executor ([`MAX_ROUNDS`]).
    max_rounds: u32,
}

impl Repoll {
    pub(crate) fn new() -> Self {
        Self::with_bounds(IN_PLACE, MAX_ROUNDS)
    }

    fn with_bounds(in_place: Duration, max_rounds: u32) -> Self {
        let shared = Arc::new(Shared { state: AtomicU8::new(IDLE), outer: AtomicWaker::new() });
        let waker = Waker::from(Arc::clone(&shared));
        Self { shared, waker, in_place, max_rounds }
    }

    /// Polls with `poll` (which polls the future with the context it is given) under `cx`:
    /// again at once while the future woke itself during the last round, up to [`IN_PLACE`]
    /// and [`MAX_ROUNDS`]; past those, the executor is woken to poll again later.
    pub(crate) fn poll<T>(&self, cx: &mut Context<'_>, mut poll: impl FnMut(&mut Context<'_>) -> Poll<T>) -> Poll<T> {
        // Every poll ends IDLE, and a poll is never re-entered: a nested one would register this
        // waker as its own executor's, and a wake would go round to nothing.
        debug_assert_eq!(self.shared.state.load(Ordering::Acquire), IDLE, "a nested poll");
        self.shared.outer.register(cx.waker());
        let mut inner = Context::from_waker(&self.waker);
        let started = Instant::now();
        let mut rounds = 1;
        loop {
            self.shared.state.store(POLLING, Ordering::Release);
            let polled = poll(&mut inner);
            let woken = self.shared.state.swap(IDLE, Ordering::AcqRel) == WOKEN;
            if polled.is_ready() {
                // The executor's waker is not kept past the future it was for (a kept instance
                // would hold the last connection's task).
                drop(self.shared.outer.take());
                return polled;
            }
            if !woken {
                return polled;
            }
            if rounds == self.max_rounds
                || started.elapsed() >= self.in_place
                || !tokio::task::coop::has_budget_remaining()
            {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            rounds += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Counts the executor's wakes.
    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counting() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (Arc::clone(&count), Waker::from(count))
    }

    /// Bounded in rounds only: a preempted test thread must not run out of time.
    fn rounds_only() -> Repoll {
        Repoll::with_bounds(Duration::from_secs(3600), MAX_ROUNDS)
    }

    #[test]
    fn a_future_that_wakes_itself_is_polled_again_in_place_without_waking_the_executor() {
        let (count, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        let repoll = rounds_only();
        let mut polls = 0;
        let polled = repoll.poll(&mut cx, |cx| {
            polls += 1;
            if polls < 3 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(polls)
        });
        assert_eq!(polled, Poll::Ready(3));
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_future_that_keeps_waking_itself_yields_to_the_executor_after_the_rounds() {
        let (count, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        let repoll = rounds_only();
        let mut polls = 0;
        let polled: Poll<()> = repoll.poll(&mut cx, |cx| {
            polls += 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        });
        assert_eq!(polled, Poll::Pending);
        assert_eq!(polls, MAX_ROUNDS);
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "the executor is woken once, to poll again");
    }

    #[test]
    fn a_future_that_computes_past_the_time_in_place_yields_at_its_first_self_wake() {
        let (count, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        let repoll = Repoll::new();
        let mut polls = 0;
        let polled: Poll<()> = repoll.poll(&mut cx, |cx| {
            polls += 1;
            std::thread::sleep(IN_PLACE * 2);
            cx.waker().wake_by_ref();
            Poll::Pending
        });
        assert_eq!(polled, Poll::Pending);
        assert_eq!(polls, 1);
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_wake_after_the_poll_reaches_the_executor_of_the_latest_poll() {
        let (first, first_waker) = counting();
        let (latest, latest_waker) = counting();
        let repoll = Repoll::new();
        let mut saved = None;
        for waker in [&first_waker, &latest_waker] {
            let polled: Poll<()> = repoll.poll(&mut Context::from_waker(waker), |cx| {
                saved = Some(cx.waker().clone());
                Poll::Pending
            });
            assert_eq!(polled, Poll::Pending);
        }
        let saved = saved.expect("polled");
        std::thread::spawn(move || saved.wake()).join().expect("the wake returns");
        assert_eq!(first.0.load(Ordering::SeqCst), 0);
        assert_eq!(latest.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn the_executor_is_not_kept_past_the_future_it_was_for() {
        let (count, waker) = counting();
        let repoll = Repoll::new();
        let mut saved = None;
        let polled = repoll.poll(&mut Context::from_waker(&waker), |cx| {
            saved = Some(cx.waker().clone());
            Poll::Ready(())
        });
        assert_eq!(polled, Poll::Ready(()));
        drop(waker);
        assert_eq!(Arc::strong_count(&count), 1, "the executor's waker was let go");
        saved.expect("polled").wake();
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
    }
}

//! Helpers shared by the test modules.

use std::sync::Mutex;

/// Held by tests that fork, wait on children or send signals, until their children are reaped.
pub(crate) use wrt_test_support::SPAWN_LOCK;

/// A writer whose bytes the test reads afterwards.
#[derive(Clone, Default)]
pub(crate) struct Collected(pub(crate) std::sync::Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Collected {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Collected {
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

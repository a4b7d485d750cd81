//! What the workspace's tests share (dev-only, never shipped).
//!
//! - [`token`]: a marker unique to one test on this machine, for command lines and
//!   environments that the test later looks for in `/proc`. The machine runs other copies of
//!   the same commands (other test runs, other users' shell loops), so a fixed command line or
//!   a pid-based number is not a marker.
//! - [`processes`]: scans of the process table for live processes carrying such a marker, or
//!   children of this process.
//! - [`known_state`]: a command that starts in the state a test assumes (every signal at its
//!   default disposition, none blocked, a process group of its own), whatever state the test
//!   runner itself was started in (`nohup`, a background job, a CI runner).
//! - [`SPAWN_LOCK`] ([`spawn_lock`]): held by the tests that fork, wait on children, send
//!   signals or count open fds, until their children have been waited on.
//! - [`documented_unsafe_env`]: the environment variables docs/policy.md says the spawn policy
//!   refuses always, read from the doc, for the tests that hold a list to it.
//! - [`import_graph`]: the checker every crate of the workspace runs on itself: no module
//!   imports, directly or through others, a module that imports it back.
//!
//! # Examples
//!
//! ```no_run
//! let token = wrt_test_support::token();
//! let mut cmd = std::process::Command::new("sh");
//! wrt_test_support::known_state(&mut cmd).args(["-c", &format!("sleep 1000.{token}")]);
//! let mut child = cmd.spawn().unwrap();
//! assert!(!wrt_test_support::processes::live_with_arg(&token).is_empty());
//! child.kill().unwrap();
//! ```

pub mod import_graph;
mod known_state;
mod marker;
mod policy_doc;
pub mod processes;
mod spawn_lock;

pub use known_state::known_state;
pub use marker::token;
pub use policy_doc::documented_unsafe_env;
pub use spawn_lock::{SPAWN_LOCK, spawn_lock};

//! Spawning host programs for wrt guests under a deny-by-default policy.
#![cfg(unix)]
#![deny(unsafe_code)]
#![deny(missing_docs)]

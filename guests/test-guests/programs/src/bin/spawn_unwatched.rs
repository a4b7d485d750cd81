//! A child's own timeout holds while the guest never looks at the child. Spawns `sleep <argv[1]>`
//! with a 300 ms timeout, prints `started`, sleeps 3 s itself, then waits: the child must have
//! ended by its timeout meanwhile (the test looks for its process while the guest sleeps), and the
//! status says so. Needs `sleep`.
use std::io::Write;
use std::time::Duration;

use wrt_guest::Command;

fn main() {
    let mark = std::env::args().nth(1).expect("an argument for `sleep`");
    let mut child = Command::new("sleep").arg(&mark).timeout(Duration::from_millis(300)).spawn().expect("spawn");
    println!("started");
    std::io::stdout().flush().expect("flush");
    std::thread::sleep(Duration::from_secs(3));
    let status = child.wait().expect("wait");
    println!("{status}");
    assert!(status.timed_out(), "{status}");
    assert_eq!(status.signal(), Some(15), "{status}");
}

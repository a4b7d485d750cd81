//! 10,000 sequential spawns leave the host's fd count and RSS flat.

use std::fs;

use wrt_host_spawn::{AuditLog, Command, Policy, Spawner};

use crate::{lock, open_fds};

fn rss_bytes() -> u64 {
    let statm = fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split(' ').nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[test]
fn ten_thousand_spawns_leave_fds_and_rss_flat() {
    let _lock = lock();
    let spawner = Spawner::new(Policy::deny_all().allow_program("/bin/true"))
        .unwrap()
        .with_audit_log(AuditLog::new(std::io::sink()));
    // Pipes for stdout and stderr (the default), /dev/null for stdin.
    let command = Command::new("/bin/true");
    let run = |n: usize| {
        for _ in 0..n {
            let mut child = spawner.spawn(&command).unwrap();
            assert!(child.wait().unwrap().success());
        }
    };
    run(500);
    let (fds, rss) = (open_fds("self"), rss_bytes());
    run(10_000);
    let (fds_after, rss_after) = (open_fds("self"), rss_bytes());
    assert_eq!(fds_after, fds);
    // A leak of 100 bytes per spawn would add 1 MB.
    let growth = rss_after.saturating_sub(rss);
    assert!(growth < 512 * 1024, "RSS grew by {growth} bytes over 10,000 spawns");
    assert_eq!(spawner.running(), 0);
}

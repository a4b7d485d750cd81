//! Holds `MIB` MiB of linear memory (every page touched), then runs `sh -c SCRIPT` and prints
//! `peak BYTES`: the child's peak memory as the host reports it (0: not known).
use wrt_guest::Command;

fn main() {
    let mut args = std::env::args().skip(1);
    let mib: usize = args.next().and_then(|m| m.parse().ok()).expect("MiB to hold");
    let script = args.next().expect("a shell script");
    let held = vec![1u8; mib << 20];
    let out = Command::new("sh").args(["-c", &script]).output().expect("run sh");
    assert!(out.status.success(), "sh: {}", String::from_utf8_lossy(&out.stderr));
    println!("peak {}", out.status.peak_rss());
    std::hint::black_box(held);
}

//! The nodejs/node#1671 analogue: `TOTAL` allocations (default 800000) of `SIZE`-byte buffers
//! (default 16384) spread round-robin over `CHAINS` chains (default 20). Each turn makes a new
//! zeroed buffer, writes a few bytes into it, makes it its chain's current buffer and drops the
//! chain's previous one, so at most `CHAINS` buffers are live. Prints
//! `{"total":..,"chains":..,"size":..,"ms":..}`.
use std::process::ExitCode;
use std::time::Instant;

use wrt_guest::Buffer;

fn arg(index: usize, default: usize) -> usize {
    std::env::args().nth(index).map_or(default, |arg| arg.parse().expect("a count"))
}

fn main() -> ExitCode {
    let (total, chains, size) = (arg(1, 800_000), arg(2, 20).max(1), arg(3, 16384));
    let mut current: Vec<Option<Buffer>> = (0..chains).map(|_| None).collect();
    let started = Instant::now();
    for i in 0..total {
        let stamp = (i as u64).to_le_bytes();
        let mut buffer = match Buffer::zeroed(size) {
            Ok(buffer) => buffer,
            Err(err) => {
                println!("allocation {i}: cannot make a buffer of {size} bytes: {err}");
                return ExitCode::FAILURE;
            }
        };
        if let Err(err) = buffer.write_at(0, &stamp[..size.min(8)]) {
            println!("allocation {i}: cannot write: {err}");
            return ExitCode::FAILURE;
        }
        current[i % chains] = Some(buffer);
    }
    // Each chain's last buffer holds the number of its last turn.
    for (chain, buffer) in current.iter().enumerate().filter_map(|(c, b)| Some((c, b.as_ref()?))) {
        let mut stamp = [0; 8];
        let n = buffer.read_at(0, &mut stamp).unwrap_or(0);
        let last = (total - 1 - chain) / chains * chains + chain;
        if stamp[..n] != (last as u64).to_le_bytes()[..n] {
            println!("chain {chain}: its buffer holds {stamp:?}, expected turn {last}");
            return ExitCode::FAILURE;
        }
    }
    drop(current);
    let ms = started.elapsed().as_secs_f64() * 1e3;
    println!(r#"{{"total":{total},"chains":{chains},"size":{size},"ms":{ms:.1}}}"#);
    ExitCode::SUCCESS
}

//! The readable-push-buffer-burst workload (nodejs/node#63863)
//! with `wrt_guest::Buffer`: each of `N` iterations (default 20000) turns the 9 chunks of an HTML
//! page into buffers, concatenates them and drops everything. The 5 small pieces (at most 64
//! bytes) stay inline; the 1 KiB, 2 KiB, `BODY_SIZE` (default 120 KiB) and 2 KiB bodies become
//! host buffers. Prints `{"n":..,"body_size":..,"ms":..,"ops_per_s":..,"total":..}`, with
//! `total` the number of chunks handled (9 per iteration, as in the JS peer).
use std::process::ExitCode;
use std::time::Instant;

use wrt_guest::Buffer;

/// The 9 chunks of the page, as in the JS peer's `makeBurstChunks`.
fn burst_chunks(body_size: usize) -> [Vec<u8>; 9] {
    [
        b"<!doctype html><html><head><title>burst</title><style>".to_vec(),
        vec![b'a'; 1024],
        b"</style></head><body><header>".to_vec(),
        vec![b'b'; 2048],
        b"</header><main>".to_vec(),
        vec![b'c'; body_size],
        b"</main><script>".to_vec(),
        vec![b'd'; 2048],
        b"</script></body></html>".to_vec(),
    ]
}

fn arg(index: usize, default: usize) -> usize {
    std::env::args().nth(index).map_or(default, |arg| arg.parse().expect("a count"))
}

fn main() -> ExitCode {
    let (n, body_size) = (arg(1, 20_000), arg(2, 120 * 1024));
    let chunks = burst_chunks(body_size);
    let expected: usize = chunks.iter().map(Vec::len).sum();
    let mut buffers = Vec::with_capacity(chunks.len());
    let mut total = 0_u64;
    let started = Instant::now();
    for i in 0..n {
        buffers.clear();
        for chunk in &chunks {
            match Buffer::from_slice(chunk) {
                Ok(buffer) => buffers.push(buffer),
                Err(err) => {
                    println!("iteration {i}: cannot make a buffer of {} bytes: {err}", chunk.len());
                    return ExitCode::FAILURE;
                }
            }
        }
        let parts: Vec<&Buffer> = buffers.iter().collect();
        let page = match Buffer::concat(&parts) {
            Ok(page) => page,
            Err(err) => {
                println!("iteration {i}: cannot concatenate: {err}");
                return ExitCode::FAILURE;
            }
        };
        if page.len() != expected {
            println!("iteration {i}: the page has {} bytes, expected {expected}", page.len());
            return ExitCode::FAILURE;
        }
        total += buffers.len() as u64;
    }
    drop(buffers);
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let ops_per_s = if ms > 0.0 { (n as f64 / ms * 1e3).round() } else { 0.0 };
    println!(r#"{{"n":{n},"body_size":{body_size},"ms":{ms:.1},"ops_per_s":{ops_per_s},"total":{total}}}"#);
    ExitCode::SUCCESS
}

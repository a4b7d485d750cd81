//! A WASI 0.3 command: it exports `wasi:cli/run@0.3.0`, an async function, and does its I/O
//! through WASI 0.3's streams. Its first argument picks what it does, so that one guest covers
//! the options of a run:
//! - `hello`: writes a line to stdout; `stderr TEXT`: writes TEXT to stderr;
//! - `args`: writes its arguments, one a line; `env`: writes its environment, `NAME=VALUE` a line;
//! - `exit CODE`: exits with CODE (`exit-with-code`); `fail`: returns `Err(())`; `trap`: traps;
//! - `read PATH`: writes the file PATH of its first preopened directory to stdout;
//! - `cat`: copies stdin to stdout;
//! - `sleep MS`: waits MS milliseconds (`wait-for`), then writes `slept`;
//! - `spin`: computes without end; `grow MIB`: allocates and touches MIB MiB, then writes `grew`;
//! - `spawn PROGRAM ARGS...`: runs PROGRAM through `wrt:process` and writes its stdout and exit
//!   code;
//! - `connect ADDR`: connects a WASI 0.3 TCP socket to ADDR (IPv4 `a.b.c.d:port`) and writes
//!   `connected` or the error; `spawn-connect PROGRAM ADDR`: runs PROGRAM through `wrt:process`
//!   first, then connects as `connect` does; `listen ADDR`: listens on ADDR through Rust's std
//!   (WASI 0.2's sockets) and writes `listening` or the error.

use wasip3::cli::{environment, exit, stderr, stdin, stdout};
use wasip3::filesystem::preopens;
use wasip3::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};

wasip3::cli::command::export!(Command);

struct Command;

impl wasip3::exports::cli::run::Guest for Command {
    async fn run() -> Result<(), ()> {
        let args = environment::get_arguments();
        let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
        match arg(1) {
            "hello" => print(b"hello from WASI 0.3\n").await,
            "stderr" => write_to(stderr::write_via_stream, arg(2).as_bytes().to_vec()).await,
            "args" => print(args.iter().map(|a| format!("{a}\n")).collect::<String>().as_bytes()).await,
            "env" => {
                let env = environment::get_environment();
                print(env.iter().map(|(k, v)| format!("{k}={v}\n")).collect::<String>().as_bytes()).await
            }
            "exit" => exit::exit_with_code(arg(2).parse().unwrap_or(255)),
            "fail" => return Err(()),
            "trap" => std::process::abort(),
            "read" => {
                let Some((dir, _)) = preopens::get_directories().into_iter().next() else {
                    print(b"no preopened directory\n").await;
                    return Err(());
                };
                let file = dir
                    .open_at(PathFlags::empty(), arg(2).to_owned(), OpenFlags::empty(), DescriptorFlags::READ)
                    .await
                    .map_err(|e| eprintln_p2(&format!("open: {e:?}")))?;
                let (data, done) = file.read_via_stream(0);
                let bytes = data.collect().await;
                done.await.map_err(|e| eprintln_p2(&format!("read: {e:?}")))?;
                print(&bytes).await;
            }
            "cat" => {
                let (data, done) = stdin::read_via_stream();
                let bytes = data.collect().await;
                done.await.map_err(|e| eprintln_p2(&format!("stdin: {e:?}")))?;
                print(&bytes).await;
            }
            "sleep" => {
                let ms: u64 = arg(2).parse().unwrap_or(0);
                wasip3::clocks::monotonic_clock::wait_for(ms * 1_000_000).await;
                print(b"slept\n").await;
            }
            "spin" => {
                let mut x: u64 = 1;
                loop {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            }
            "grow" => {
                let mib: usize = arg(2).parse().unwrap_or(0);
                let mut block = vec![0u8; mib << 20];
                for page in block.chunks_mut(4096) {
                    page[0] = 1;
                }
                std::hint::black_box(&block);
                print(b"grew\n").await;
            }
            "spawn" => {
                let mut command = wrt_process::Command::new(arg(2));
                command.args(&args[3.min(args.len())..]);
                let output = command.output().map_err(|e| eprintln_p2(&format!("spawn: {e}")))?;
                let code = output.status.code().map_or("none".to_owned(), |c| c.to_string());
                let mut text = output.stdout;
                text.extend_from_slice(format!("exit {code}\n").as_bytes());
                print(&text).await;
            }
            "connect" => print(connect(arg(2)).await.as_bytes()).await,
            "spawn-connect" => {
                let ran =
                    wrt_process::Command::new(arg(2)).output().map_err(|e| eprintln_p2(&format!("spawn: {e}")))?;
                let mut text = format!("ran: {}\n", ran.status.code().map_or("none".to_owned(), |c| c.to_string()));
                text.push_str(&connect(arg(3)).await);
                print(text.as_bytes()).await;
            }
            "listen" => {
                let answer = match std::net::TcpListener::bind(arg(2)) {
                    Ok(_) => "listening\n".to_owned(),
                    Err(err) => format!("listen: {err}\n"),
                };
                print(answer.as_bytes()).await;
            }
            other => {
                eprintln_p2(&format!("unknown mode `{other}`"));
                return Err(());
            }
        }
        Ok(())
    }
}

/// Connects a WASI 0.3 TCP socket to `addr`: `connected`, or what failed.
async fn connect(addr: &str) -> String {
    use wasip3::sockets::types::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress, TcpSocket};
    let Ok(addr) = addr.parse::<std::net::SocketAddrV4>() else {
        return format!("not an IPv4 socket address: `{addr}`\n");
    };
    let [a, b, c, d] = addr.ip().octets();
    let remote = IpSocketAddress::Ipv4(Ipv4SocketAddress { port: addr.port(), address: (a, b, c, d) });
    let socket = match TcpSocket::create(IpAddressFamily::Ipv4) {
        Ok(socket) => socket,
        Err(err) => return format!("create: {err:?}\n"),
    };
    match socket.connect(remote).await {
        Ok(()) => "connected\n".to_owned(),
        Err(err) => format!("connect: {err:?}\n"),
    }
}

/// Writes `bytes` to stdout through WASI 0.3's stream.
async fn print(bytes: &[u8]) {
    write_to(stdout::write_via_stream, bytes.to_vec()).await;
}

/// Writes `bytes` to the stream that `open` (stdout's or stderr's `write-via-stream`) reads.
async fn write_to(
    open: fn(
        wasip3::wit_bindgen::StreamReader<u8>,
    ) -> wasip3::wit_bindgen::FutureReader<Result<(), wasip3::cli::types::ErrorCode>>,
    bytes: Vec<u8>,
) {
    let (mut tx, rx) = wasip3::wit_stream::new();
    let done = open(rx);
    let left = tx.write_all(bytes).await;
    assert!(left.is_empty(), "the host stopped reading");
    drop(tx);
    let _ = done.await;
}

/// Says what went wrong on stderr (Rust std's WASI 0.2 stream, which needs no task).
fn eprintln_p2(message: &str) {
    eprintln!("{message}");
}

/// The WASI 0.2 entry point (`wasi:cli/run@0.2.0`) that Rust's std exports for every bin: a
/// runtime that runs WASI 0.3 calls the `run` above instead, and one that ran this would say so.
fn main() {
    eprintln!("ran the WASI 0.2 entry point");
    std::process::exit(3);
}

//! `wrt-example-server GUEST.wasm [--listen ADDR] [--profile NAME=PROGRAM,…]… [--max-timeout-ms N]`:
//! serves `POST /run` (see the library's docs) on two executor threads, audit records on stderr.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use wrt_example_server::{Config, Profile, Service};
use wrt_runtime::wrt_host_spawn::{AuditSink, Policy};

const USAGE: &str =
    "usage: wrt-example-server GUEST.wasm [--listen ADDR] [--profile NAME=PROGRAM,...]... [--max-timeout-ms N]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("wrt-example-server: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut guest = None;
    let mut listen = "127.0.0.1:8080".to_owned();
    let mut profiles = Vec::new();
    let mut max_timeout = None;
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--listen" => listen = value("--listen")?,
            "--profile" => {
                let spec = value("--profile")?;
                let (name, programs) = spec.split_once('=').ok_or(format!("--profile {spec:?}: NAME=PROGRAM,..."))?;
                let policy =
                    programs.split(',').filter(|p| !p.is_empty()).fold(Policy::deny_all(), Policy::allow_program);
                profiles.push(Profile::new(name, policy));
            }
            "--max-timeout-ms" => {
                let ms = value("--max-timeout-ms")?;
                max_timeout = Some(ms.parse().map_err(|_| format!("--max-timeout-ms {ms:?} is not a number"))?);
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ if arg.starts_with('-') || guest.is_some() => return Err(format!("unexpected {arg:?}\n{USAGE}")),
            _ => guest = Some(arg),
        }
    }
    let mut config = Config::new(guest.ok_or(USAGE)?);
    config.audit = Some(AuditSink::new(std::io::stderr()));
    if let Some(ms) = max_timeout {
        config.max_timeout = Duration::from_millis(ms);
    }
    let config = profiles.into_iter().fold(config, Config::profile);
    let service = Arc::new(Service::new(&config).map_err(|err| format!("{err:#}"))?);
    let executor = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|err| format!("cannot start the executor: {err}"))?;
    executor.block_on(async {
        let listener =
            tokio::net::TcpListener::bind(&listen).await.map_err(|err| format!("cannot listen on {listen}: {err}"))?;
        let addr = listener.local_addr().map_err(|err| err.to_string())?;
        println!("listening on http://{addr}");
        wrt_example_server::serve(listener, service).await.map_err(|err| format!("accept failed: {err}"))
    })
}

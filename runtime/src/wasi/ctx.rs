//! The WASI preview 1 context of a guest, built from the sandbox settings.

use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::MemoryInputPipe;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use super::blocking_calls::{DeadlineStdin, DeadlineStdout};
use crate::capture::Capture;
use crate::error::ConfigError;
use crate::guest_stdio::{GuestOutput, GuestStdin};
use crate::host_fn::Mode;
use crate::options::RunOptions;
use crate::preopen::DirAccess;
use crate::stop::StopCell;

/// Captured output streams of one guest instance.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    pub(crate) stdout: Option<Capture>,
    pub(crate) stderr: Option<Capture>,
}

/// The streams the embedder captures, whether or not the guest can write them (its children
/// may: see `process_service::drain`).
pub(crate) fn captures(settings: &RunOptions) -> Captured {
    let capture = |output: &GuestOutput| match output {
        GuestOutput::Capture { limit } => Some(Capture::new(*limit)),
        GuestOutput::Writer(writer) => Some(Capture::writer(writer.clone())),
        GuestOutput::Inherit | GuestOutput::Null => None,
    };
    Captured { stdout: capture(&settings.stdout), stderr: capture(&settings.stderr) }
}

/// Checks that every preopened directory is one, for an error that names it and says why:
/// for every guest, whether it imports WASI or not, so the same options fail the same way.
pub(crate) fn check_preopens(settings: &RunOptions) -> Result<(), ConfigError> {
    for preopen in &settings.preopens {
        match std::fs::metadata(&preopen.host) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                let reason = std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory");
                return Err(ConfigError::Preopen { path: preopen.host.clone(), reason });
            }
            Err(reason) => return Err(ConfigError::Preopen { path: preopen.host.clone(), reason }),
        }
    }
    Ok(())
}

/// Builds the preview 1 context of a core module (see [`builder`]).
pub(crate) fn build(
    settings: &RunOptions,
    guest_name: &str,
    deadline: &StopCell,
    captured: &Captured,
    mode: Mode,
) -> wasmtime::Result<WasiP1Ctx> {
    Ok(builder(settings, guest_name, deadline, captured, mode)?.build_p1())
}

/// The context of a guest, core module or component: argv, environment, preopens and stdio
/// (`captured`, from [`captures`], for the captured streams), and the socket addresses the
/// settings grant. Nothing of the host (env, args, network) is inherited unless the settings
/// say so. With a timeout, an inherited stdin stops the guest at `deadline` (see
/// `wasi::blocking_calls`). The preopens were checked with [`check_preopens`].
pub(crate) fn builder(
    settings: &RunOptions,
    guest_name: &str,
    deadline: &StopCell,
    captured: &Captured,
    mode: Mode,
) -> wasmtime::Result<WasiCtxBuilder> {
    let mut wasi = WasiCtxBuilder::new();
    // A synchronous run reads and writes files on the guest's thread, straight between the
    // file and linear memory: no copy of the guest's buffer in host memory (`wasi::limits`),
    // and a call blocked past the deadline is interrupted there (`epoch_ticker`). An asynchronous
    // run must not block its executor's thread: WASI does the work on wrt's blocking threads,
    // through a host copy of the guest's buffer, and sleeps on a timer; a call that blocks
    // past the deadline or a cancel is abandoned there (the instance ends).
    wasi.allow_blocking_current_thread(mode == Mode::Sync);
    if !settings.network.is_empty() {
        let rules = std::sync::Arc::clone(&settings.network);
        wasi.allow_tcp(true).allow_udp(true).socket_addr_check(move |addr, use_| {
            let allowed = crate::network::socket_allows(&rules, addr, use_);
            Box::pin(std::future::ready(allowed))
        });
    }
    wasi.max_random_size(u64::from(crate::wasi::limits::MAX_HOST_COPY));
    wasi.arg(settings.argv0.as_deref().unwrap_or(guest_name));
    wasi.args(&settings.args);
    for (name, value) in &settings.env {
        wasi.env(name, value);
    }
    for preopen in &settings.preopens {
        let perms = match preopen.access {
            DirAccess::ReadOnly => FsPerms::ReadOnly,
            DirAccess::ReadWrite => FsPerms::ReadWrite,
        };
        wasi.preopened_dir(&preopen.host, &preopen.guest, perms).map_err(|e| {
            let reason = std::io::Error::other(format!("{e:#}"));
            ConfigError::Preopen { path: preopen.host.clone(), reason }.into_error()
        })?;
    }
    match &settings.stdin {
        GuestStdin::Null => {}
        GuestStdin::Inherit if settings.timeout.is_some() => {
            wasi.stdin(DeadlineStdin { inner: wasmtime_wasi::cli::stdin(), deadline: deadline.clone() });
        }
        GuestStdin::Inherit => {
            wasi.inherit_stdin();
        }
        GuestStdin::Bytes(bytes) => {
            wasi.stdin(MemoryInputPipe::new(bytes.clone()));
        }
        GuestStdin::Reader(reader) => {
            wasi.stdin(reader.clone());
        }
    }
    match (&settings.stdout, &captured.stdout) {
        (_, Some(capture)) => {
            wasi.stdout(capture.clone());
        }
        (GuestOutput::Inherit, None) if settings.timeout.is_some() => {
            wasi.stdout(DeadlineStdout { handle: std::io::stdout, deadline: deadline.clone() });
        }
        (GuestOutput::Inherit, None) => {
            wasi.inherit_stdout();
        }
        _ => {}
    }
    match (&settings.stderr, &captured.stderr) {
        (_, Some(capture)) => {
            wasi.stderr(capture.clone());
        }
        (GuestOutput::Inherit, None) if settings.timeout.is_some() => {
            wasi.stderr(DeadlineStdout { handle: std::io::stderr, deadline: deadline.clone() });
        }
        (GuestOutput::Inherit, None) => {
            wasi.inherit_stderr();
        }
        _ => {}
    }
    Ok(wasi)
}

//! The WASI preview 1 context of a guest, built from the sandbox settings.

use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::MemoryInputPipe;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use crate::capture::Capture;
use crate::deadline::DeadlineCell;
use crate::error::ConfigError;
use crate::options::RunOptions;
use crate::preopen::DirAccess;
use crate::stdio::{GuestOutput, GuestStdin};
use crate::wasi_deadline::{DeadlineStdin, DeadlineStdout};

/// Captured output streams of one guest instance.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    pub(crate) stdout: Option<Capture>,
    pub(crate) stderr: Option<Capture>,
}

/// Builds the context: argv, environment, preopens and stdio. Nothing of the host (env, args,
/// network) is inherited unless the settings say so. With a timeout, an inherited stdin stops
/// the guest at `deadline` (see `wasi_deadline`).
pub(crate) fn build(
    settings: &RunOptions,
    guest_name: &str,
    deadline: &DeadlineCell,
) -> wasmtime::Result<(WasiP1Ctx, Captured)> {
    let mut wasi = WasiCtxBuilder::new();
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
        // Check the directory first, for an error that names it and says why.
        match std::fs::metadata(&preopen.host) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                let source = std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory");
                return Err(ConfigError::Preopen { path: preopen.host.clone(), reason: source }.into());
            }
            Err(reason) => return Err(ConfigError::Preopen { path: preopen.host.clone(), reason }.into()),
        }
        wasi.preopened_dir(&preopen.host, &preopen.guest, perms).map_err(|e| ConfigError::Preopen {
            path: preopen.host.clone(),
            reason: std::io::Error::other(format!("{e:#}")),
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
    }
    let mut captured = Captured::default();
    match settings.stdout {
        GuestOutput::Inherit if settings.timeout.is_some() => {
            wasi.stdout(DeadlineStdout { handle: std::io::stdout, deadline: deadline.clone() });
        }
        GuestOutput::Inherit => {
            wasi.inherit_stdout();
        }
        GuestOutput::Null => {}
        GuestOutput::Capture { limit } => {
            let capture = Capture::new(limit);
            wasi.stdout(capture.clone());
            captured.stdout = Some(capture);
        }
    }
    match settings.stderr {
        GuestOutput::Inherit if settings.timeout.is_some() => {
            wasi.stderr(DeadlineStdout { handle: std::io::stderr, deadline: deadline.clone() });
        }
        GuestOutput::Inherit => {
            wasi.inherit_stderr();
        }
        GuestOutput::Null => {}
        GuestOutput::Capture { limit } => {
            let capture = Capture::new(limit);
            wasi.stderr(capture.clone());
            captured.stderr = Some(capture);
        }
    }
    Ok((wasi.build_p1(), captured))
}

//! `wrt:process` in Rust: the bindings of its WIT package (`wit/`), the resources a component
//! holds (`child`, `buffer`), and the WIT form of the core ABI's error codes. What every file
//! of the component layer shares, below all of them.

use wrt_abi::ErrorCode;

use crate::process_service::Failure;

pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "wrt:process/imports",
        imports: { default: trappable },
        with: {
            "wasi:io": wasmtime_wasi::p2::bindings::sync::io,
            "wrt:process/process.child": crate::component::wit::ChildHandle,
            "wrt:process/buffers.buffer": crate::component::wit::BufferHandle,
        },
    });
}

use bindings::wrt::process::types::{self, Error};

/// How the name of every interface of the `wrt:process` package starts, as a component's
/// imports spell it (`wrt:process/process@0.1.0`): the package of `wit/process.wit`.
pub(crate) const PACKAGE_PREFIX: &str = "wrt:process/";

/// A `child` resource: a child handle of the core ABI, in the guest's `SpawnState`.
#[derive(Debug)]
pub struct ChildHandle(pub(crate) i32);

/// A `buffer` resource: a buffer handle of the core ABI.
#[derive(Debug)]
pub struct BufferHandle(pub(crate) i32);

/// The WIT code of a core ABI code: the two enums list the same codes in the same order (a test
/// ties them).
pub(crate) fn wit_code(code: ErrorCode) -> types::ErrorCode {
    use types::ErrorCode as W;
    match code {
        ErrorCode::Denied => W::Denied,
        ErrorCode::NotFound => W::NotFound,
        ErrorCode::NotExecutable => W::NotExecutable,
        ErrorCode::SpawnFailed => W::SpawnFailed,
        ErrorCode::Timeout => W::Timeout,
        ErrorCode::OutputLimit => W::OutputLimit,
        ErrorCode::TooManyChildren => W::TooManyChildren,
        ErrorCode::BadHandle => W::BadHandle,
        ErrorCode::InvalidArgument => W::InvalidArgument,
        ErrorCode::NoMemory => W::NoMemory,
        ErrorCode::WouldBlock => W::WouldBlock,
        ErrorCode::OutOfBounds => W::OutOfBounds,
        ErrorCode::BadUtf8 => W::BadUtf8,
        ErrorCode::NotPiped => W::NotPiped,
        ErrorCode::BrokenPipe => W::BrokenPipe,
        ErrorCode::Io => W::Io,
        ErrorCode::OutOfRange => W::OutOfRange,
        _ => W::Io,
    }
}

/// The WIT error of a service failure.
pub(crate) fn wit(failure: Failure) -> Error {
    Error { code: wit_code(failure.code), message: failure.message }
}

/// The WIT error of a failure the component layer itself raises.
pub(crate) fn wit_fail(code: ErrorCode, message: impl Into<String>) -> Error {
    Error { code: wit_code(code), message: message.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One fact, one definition: the WIT enum lists the core ABI's codes in its order, and
    /// `wit_code` maps each to its namesake.
    #[test]
    fn wit_error_codes_are_the_core_abi_codes() {
        for (index, code) in ErrorCode::ALL.into_iter().enumerate() {
            let wit = wit_code(code);
            assert_eq!(wit as usize, index, "{code:?}");
            let name = format!("{wit:?}").rsplit("::").next().unwrap().to_lowercase();
            assert_eq!(name, code.name().replace('_', "").to_lowercase(), "{code:?}");
        }
        let wit = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../wit/process.wit")).unwrap();
        let cases = wit.split("enum error-code {").nth(1).unwrap().split('}').next().unwrap();
        let cases: Vec<&str> = cases
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with("///"))
            .map(|line| line.trim_end_matches(','))
            .collect();
        let names: Vec<String> =
            ErrorCode::ALL.iter().map(|code| code.name().to_lowercase().replace('_', "-")).collect();
        assert_eq!(cases, names);
    }

    #[test]
    fn the_package_prefix_is_the_wit_files_package() {
        let wit = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../wit/process.wit")).unwrap();
        let package = wit.lines().find_map(|line| line.strip_prefix("package ")).unwrap();
        let name = package.split('@').next().unwrap();
        assert_eq!(format!("{name}/"), PACKAGE_PREFIX);
    }
}

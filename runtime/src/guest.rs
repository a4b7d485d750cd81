//! A compiled guest module.

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, mpsc};

use crate::builder::SlowCompileHook;

/// A guest compiled for one [`crate::Sandbox`]'s engine, ready to be instantiated any number of
/// times.
#[derive(Debug, Clone)]
pub struct Guest {
    pub(crate) module: wasmtime::Module,
    pub(crate) name: String,
    pub(crate) from_cache: bool,
}

impl Guest {
    /// The guest's name: its file name, or the name given with its bytes.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the compiled code came from the on-disk cache.
    pub fn from_cache(&self) -> bool {
        self.from_cache
    }
}

/// Compiles a binary module or WebAssembly text. A text syntax error names `path` (or `name`
/// for bytes without a file). `on_slow_compile` is called, from another thread, if compiling
/// takes longer than its delay.
pub(crate) fn compile(
    engine: &wasmtime::Engine,
    name: &str,
    path: Option<&Path>,
    bytes: &[u8],
    on_slow_compile: Option<&SlowCompileHook>,
) -> wasmtime::Result<wasmtime::Module> {
    let binary = match sniff(bytes) {
        Format::Text => wat::parse_bytes(bytes).map_err(|mut e| {
            e.set_path(path.unwrap_or(Path::new(name)));
            e
        })?,
        _ => Cow::Borrowed(bytes),
    };
    let (done, wait) = mpsc::channel::<()>();
    let watcher = on_slow_compile.map(|hook| {
        let (after, hook, name, size) = (hook.after, Arc::clone(&hook.hook), name.to_owned(), bytes.len() as u64);
        std::thread::spawn(move || {
            if wait.recv_timeout(after) == Err(mpsc::RecvTimeoutError::Timeout) {
                hook(&name, size);
            }
        })
    });
    let module = wasmtime::Module::from_binary(engine, &binary);
    drop(done);
    if let Some(watcher) = watcher {
        let _ = watcher.join();
    }
    module
}

/// What kind of WebAssembly `bytes` hold, by their header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Module,
    Component,
    Text,
    Unknown,
}

pub(crate) fn sniff(bytes: &[u8]) -> Format {
    match bytes {
        [0, b'a', b's', b'm', _, _, 0, 0, ..] => Format::Module,
        [0, b'a', b's', b'm', _, _, 1, 0, ..] => Format::Component,
        [0, b'a', b's', b'm', ..] => Format::Unknown,
        _ => {
            // WebAssembly text starts with `(` after white space and comments.
            let Ok(text) = std::str::from_utf8(bytes) else { return Format::Unknown };
            let mut rest = text.trim_start();
            loop {
                if let Some(line_comment) = rest.strip_prefix(";;") {
                    rest = line_comment.split_once('\n').map_or("", |(_, r)| r).trim_start();
                } else if let Some(block) = rest.strip_prefix("(;") {
                    rest = block.split_once(";)").map_or("", |(_, r)| r).trim_start();
                } else {
                    break;
                }
            }
            if rest.starts_with('(') { Format::Text } else { Format::Unknown }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
        assert_eq!(sniff(b"\0asm\x01\0\0\0"), Format::Module);
        assert_eq!(sniff(b"\0asm\x0d\0\x01\0"), Format::Component);
        assert_eq!(sniff(b"  ;; hi\n(; block ;) (module)"), Format::Text);
        assert_eq!(sniff(b"\x7fELF\x02\x01"), Format::Unknown);
        assert_eq!(sniff(b"hello"), Format::Unknown);
        assert_eq!(sniff(b""), Format::Unknown);
    }
}

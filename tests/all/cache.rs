//! The compile cache as part of the trusted base: entries are authenticated before wasmtime
//! loads them, the directory and entries are owner-only, and a directory others may write is
//! not used.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Output;

use wrt_runtime::{CacheMode, Runtime};
use wrt_test_guests::*;

use crate::util::{assert_code, stderr, stdout, wrt, wrt_lines, xattr};

foreach_cache!(assert_test_exists);
use crate::assert_test_exists;
use crate::verified_code::cache_rewrite_code;

/// `wrt` with its cache under `home` (`$XDG_CACHE_HOME`).
fn wrt_in(home: &Path, args: &[&str]) -> Output {
    wrt().env("XDG_CACHE_HOME", home).args(args).output().unwrap()
}

/// The entries of a cache directory, sorted.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(".cwasm"))
        .collect();
    entries.sort();
    entries
}

/// The entry that a run added to `dir`, given the entries before it.
fn added(dir: &Path, before: &[PathBuf]) -> PathBuf {
    let mut new: Vec<_> = entries(dir).into_iter().filter(|e| !before.contains(e)).collect();
    assert_eq!(new.len(), 1, "{new:?}");
    new.pop().unwrap()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// A guest given `--dir` of the cache's parent overwrote the entry of another module with the
/// entry of a third, by plain writes, and the next `wrt run` of that module ran the planted
/// code: nothing checked an entry before wasmtime loaded it.
#[test]
fn cache_overwrite_entry() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("wrt").join("modules");
    let out = wrt_in(home.path(), &["run", CLI_HELLO]);
    assert_code(&out, 0);
    let victim = added(&cache, &[]);
    let out = wrt_in(home.path(), &["run", CLI_EXIT_CODE, "42"]);
    assert_code(&out, 42);
    let planted = added(&cache, std::slice::from_ref(&victim));
    // The guest sees the cache's parent as `/home`.
    let spec = format!("{}::/home", home.path().display());
    let in_guest = |entry: &Path| format!("/home/wrt/modules/{}", entry.file_name().unwrap().to_str().unwrap());
    let out =
        wrt_in(home.path(), &["run", "--dir", &spec, CACHE_OVERWRITE_ENTRY, &in_guest(&planted), &in_guest(&victim)]);
    assert_code(&out, 0);
    assert!(stdout(&out).starts_with("overwrote"), "{}", stdout(&out));
    assert_eq!(std::fs::read(&victim).unwrap(), std::fs::read(&planted).unwrap());
    // The planted code (exit with the code of the first argument) must not run: the module is
    // compiled again, and the entry replaced.
    let out = wrt_in(home.path(), &["run", CLI_HELLO, "7"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "hello from a wrt guest, args = [\"7\"]\n");
    assert!(wrt_lines(&out).is_empty(), "{}", stderr(&out));
    assert_ne!(std::fs::read(&victim).unwrap(), std::fs::read(&planted).unwrap());
    // The replaced entry is a cache hit again (for a runtime compiling as `wrt run` without
    // `--timeout` does).
    let runtime = Runtime::builder().cache(CacheMode::Dir(cache.clone())).timeouts(false).build().unwrap();
    assert!(runtime.load_file(CLI_HELLO).unwrap().from_cache());
}

/// An entry copied from another cache directory (written by wrt, with that directory's key)
/// was loaded: entries were not tied to the directory that wrote them.
#[test]
fn an_entry_copied_from_another_cache_is_not_loaded() {
    let (one, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let runtime = |dir: &Path| Runtime::builder().cache(CacheMode::Dir(dir.to_owned())).build().unwrap();
    assert!(!runtime(one.path()).load_file(CLI_HELLO).unwrap().from_cache());
    // The other cache has its own key, and an entry of another module.
    assert!(!runtime(other.path()).load_file(CLI_EXIT_CODE).unwrap().from_cache());
    let entry = entries(one.path()).pop().unwrap();
    let copy = other.path().join(entry.file_name().unwrap());
    std::fs::copy(&entry, &copy).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(!runtime(other.path()).load_file(CLI_HELLO).unwrap().from_cache());
    // Compiled again and replaced: now a hit there, and the first cache still hits.
    assert!(runtime(other.path()).load_file(CLI_HELLO).unwrap().from_cache());
    assert!(runtime(one.path()).load_file(CLI_HELLO).unwrap().from_cache());
    // The key is the directory's extended attribute, and differs between the two.
    let key = |dir: &Path| xattr(dir, wrt_runtime::CACHE_KEY_ATTR);
    assert_eq!(key(one.path()).len(), 32);
    assert_ne!(key(one.path()), key(other.path()));
}

/// Under umask 000 the cache directory and its entries were created world-writable
/// (drwxrwxrwx, -rw-rw-rw-): their modes came from the umask.
#[test]
fn cache_is_owner_only_whatever_the_umask() {
    let home = tempfile::tempdir().unwrap();
    let out = crate::util::wrt_under_sh("umask 000; exec \"$0\" \"$@\"")
        .args(["run", CLI_HELLO])
        .env("XDG_CACHE_HOME", home.path())
        .output()
        .unwrap();
    assert_code(&out, 0);
    let wrt_dir = home.path().join("wrt");
    let cache = wrt_dir.join("modules");
    assert_eq!(mode(&wrt_dir), 0o700);
    assert_eq!(mode(&cache), 0o700);
    let entries = entries(&cache);
    assert_eq!(entries.len(), 1);
    assert_eq!(mode(&entries[0]), 0o600);
}

/// A cache directory that group or others may write, or that another user owns, was used:
/// anyone who could write it could plant native code.
#[test]
fn a_cache_directory_others_may_write_is_not_used() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("wrt").join("modules");
    std::fs::create_dir_all(&cache).unwrap();
    for loose in [0o777, 0o720, 0o702] {
        std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(loose)).unwrap();
        let out = wrt_in(home.path(), &["run", CLI_HELLO]);
        assert_code(&out, 0);
        assert_eq!(
            wrt_lines(&out),
            [format!(
                "wrt: compile cache not used: cache directory `{}` is writable by group or others (mode {loose:03o}): \
                 `chmod go-w` it",
                cache.display()
            )]
        );
        assert!(entries(&cache).is_empty());
        // `--no-cache` says nothing.
        let out = wrt_in(home.path(), &["run", "--no-cache", CLI_HELLO]);
        assert!(wrt_lines(&out).is_empty(), "{}", stderr(&out));
    }
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = wrt_in(home.path(), &["run", CLI_HELLO]);
    assert!(wrt_lines(&out).is_empty(), "{}", stderr(&out));
    assert_eq!(entries(&cache).len(), 1);
}

/// A cache directory owned by another user was used (another local user could have planted
/// entries in it).
#[test]
fn a_cache_directory_of_another_user_is_not_used() {
    if !nix::unistd::Uid::effective().is_root() {
        eprintln!("SKIPPED a_cache_directory_of_another_user_is_not_used: only root can give a directory away");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("wrt").join("modules");
    std::fs::create_dir_all(&cache).unwrap();
    std::os::unix::fs::chown(&cache, Some(65534), None).unwrap();
    let out = wrt_in(home.path(), &["run", CLI_HELLO]);
    assert_code(&out, 0);
    assert_eq!(
        wrt_lines(&out),
        [format!(
            "wrt: compile cache not used: cache directory `{}` belongs to uid 65534, not to this user (uid 0)",
            cache.display()
        )]
    );
    assert!(entries(&cache).is_empty());
    // Nor through the library.
    let reported = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&reported);
    let runtime = Runtime::builder()
        .cache(CacheMode::Dir(cache.clone()))
        .on_cache_unusable(move |err| seen.lock().unwrap().push(err.to_string()))
        .build()
        .unwrap();
    for _ in 0..2 {
        assert!(!runtime.load_file(CLI_HELLO).unwrap().from_cache());
    }
    // Said once per runtime.
    assert_eq!(reported.lock().unwrap().len(), 1);
    assert!(entries(&cache).is_empty());
    assert_eq!(std::fs::metadata(&cache).unwrap().uid(), 65534);
}

/// A symbolic link in place of the cache directory, and entries that are symbolic links, FIFOs
/// or writable by others, are not followed, opened or trusted: each is compiled again.
#[test]
fn cache_entries_that_are_not_private_files_are_replaced() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("modules");
    let runtime = Runtime::builder().cache(CacheMode::Dir(cache.clone())).build().unwrap();
    assert!(!runtime.load_file(CLI_HELLO).unwrap().from_cache());
    let entry = entries(&cache).pop().unwrap();
    let saved = home.path().join("saved");
    std::fs::copy(&entry, &saved).unwrap();
    // Writable by others, though authentic: compiled again, and the replacement is private.
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert!(!runtime.load_file(CLI_HELLO).unwrap().from_cache());
    assert_eq!(mode(&entry), 0o600);
    assert!(runtime.load_file(CLI_HELLO).unwrap().from_cache());
    // A symbolic link to an authentic copy.
    std::fs::remove_file(&entry).unwrap();
    std::os::unix::fs::symlink(&saved, &entry).unwrap();
    assert!(!runtime.load_file(CLI_HELLO).unwrap().from_cache());
    assert!(std::fs::symlink_metadata(&entry).unwrap().is_file());
    // A FIFO: opening it must not wait for a writer.
    std::fs::remove_file(&entry).unwrap();
    nix::unistd::mkfifo(&entry, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    assert!(!runtime.load_file(CLI_HELLO).unwrap().from_cache());
    assert!(std::fs::symlink_metadata(&entry).unwrap().is_file());
    // The directory itself a symbolic link: not used.
    let moved = home.path().join("moved");
    std::fs::rename(&cache, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &cache).unwrap();
    let reported = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&reported);
    let runtime = Runtime::builder()
        .cache(CacheMode::Dir(cache.clone()))
        .on_cache_unusable(move |err| seen.lock().unwrap().push(format!("{err}")))
        .build()
        .unwrap();
    assert!(!runtime.load_file(CLI_HELLO).unwrap().from_cache());
    assert_eq!(*reported.lock().unwrap(), [format!("failed to open cache directory `{}`", cache.display())]);
}

/// The module through which wrt's wrappers reach WASI's own path functions was compiled again
/// by every run that opened a file (about 11 ms of CPU each time): it is kept in the compile
/// cache like a guest, so the second run of a guest that opens files adds no entry.
#[test]
fn the_wasi_trampoline_is_compiled_once_per_cache() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("wrt").join("modules");
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("input.txt"), "line one\n").unwrap();
    let spec = format!("{}::/data", data.path().display());
    let out = wrt_in(home.path(), &["run", "--ro-dir", &spec, FS_READ_DIR]);
    assert_code(&out, 0);
    let first = entries(&cache);
    assert_eq!(first.len(), 2, "the guest and the trampoline: {first:?}");
    let out = wrt_in(home.path(), &["run", "--ro-dir", &spec, FS_READ_DIR]);
    assert_code(&out, 0);
    assert_eq!(entries(&cache), first);
}

#[test]
fn compiling_on_one_thread_makes_the_code_and_cache_entries_of_many() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().join("modules");
    let runtime = |parallel: bool| {
        Runtime::builder().cache(CacheMode::Dir(dir.clone())).parallel_compilation(parallel).build().unwrap()
    };
    let bytes = std::fs::read(CLI_HELLO).unwrap();
    let many = runtime(true).load_bytes("hello.wasm", &bytes).unwrap();
    assert!(!many.from_cache());
    let one = runtime(false);
    assert!(one.load_bytes("hello.wasm", &bytes).unwrap().from_cache(), "the entry compiled on many threads");
    let entry = entries(&dir);
    assert_eq!(entry.len(), 1, "{entry:?}");
    std::fs::remove_file(&entry[0]).unwrap();
    assert!(!one.load_bytes("hello.wasm", &bytes).unwrap().from_cache());
    assert!(runtime(true).load_bytes("hello.wasm", &bytes).unwrap().from_cache(), "the entry compiled on one thread");
}

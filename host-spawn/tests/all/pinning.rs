//! An allow rule pinned to a SHA-256 runs only that file, executed from the descriptor that was
//! hashed, with both strategies.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use wrt_host_spawn::{
    AuditLog, Command, Denial, OutputError, Policy, PolicyError, ProgramRule, Sha256, SpawnError, Spawner, Stdio,
    Strategy,
};

use crate::{LogBuffer, lock, open_fds};

/// A copy of a system program in a fresh directory, so the test may replace it.
fn copy_of(program: &str, dir: &Path) -> PathBuf {
    let source = fs::canonicalize(Path::new("/bin").join(program)).unwrap();
    let path = dir.join(program);
    fs::copy(&source, &path).unwrap();
    path
}

fn digest(path: &Path) -> Sha256 {
    Sha256::of(&fs::read(path).unwrap())
}

fn pinned_cat_runs_from_its_descriptor(strategy: Strategy) {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let cat = copy_of("cat", dir.path());
    let buffer = LogBuffer::default();
    let policy = Policy::deny_all().allow(ProgramRule::new(&cat).sha256(digest(&cat)));
    let spawner = Spawner::new(policy)
        .unwrap()
        .with_strategy(strategy)
        .strict(true)
        .with_audit_log(AuditLog::new(buffer.clone()));
    let mut child = spawner.spawn(Command::new(&cat).stdin(Stdio::Piped)).unwrap();
    child.write_stdin(b"ping\n").unwrap();
    let mut buf = [0u8; 5];
    let mut got = 0;
    while got < buf.len() {
        got += child.read_stdout(&mut buf[got..]).unwrap();
    }
    assert_eq!(&buf, b"ping\n");
    // The descriptor it ran from is gone: the child sees only its stdio.
    assert_eq!(open_fds(&child.pid().to_string()), BTreeSet::from([0, 1, 2]));
    assert_eq!(fs::read_link(format!("/proc/{}/exe", child.pid())).unwrap(), fs::canonicalize(&cat).unwrap());
    child.close_stdin();
    assert!(child.wait().unwrap().success());
    drop(spawner);

    let text = buffer.text();
    let record: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(record["decision"], "allow");
    assert_eq!(record["sha256"], digest(&cat).to_string());
}

#[test]
fn pinned_program_runs_with_posix_spawn() {
    pinned_cat_runs_from_its_descriptor(Strategy::PosixSpawn);
}

#[test]
fn pinned_program_runs_with_fork_exec() {
    pinned_cat_runs_from_its_descriptor(Strategy::ForkExec);
}

fn replaced_program_is_denied(strategy: Strategy) {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let prog = copy_of("true", dir.path());
    let spawner = Spawner::new(Policy::deny_all().allow(ProgramRule::new(&prog).sha256(digest(&prog))))
        .unwrap()
        .with_strategy(strategy)
        .strict(true);
    assert!(spawner.output(&Command::new(&prog), None).unwrap().outcome.success());

    // Swap in another program under the allowed name, as a rename (what an attacker with
    // write access to the directory does).
    let other = dir.path().join("other");
    fs::copy(fs::canonicalize("/bin/false").unwrap(), &other).unwrap();
    fs::rename(&other, &prog).unwrap();
    let err = spawner.spawn(&Command::new(&prog)).unwrap_err();
    match &err {
        SpawnError::Denied { path, reason: Denial::Sha256 { actual, .. }, .. } => {
            assert_eq!(path.as_deref(), Some(prog.as_path()));
            assert_eq!(*actual, digest(&prog).to_string());
        }
        other => panic!("expected a SHA-256 denial, got {other:?}"),
    }
    assert!(err.to_string().contains("does not have the SHA-256"), "{err}");
}

#[test]
fn replaced_pinned_program_is_denied_posix_spawn() {
    replaced_program_is_denied(Strategy::PosixSpawn);
}

#[test]
fn replaced_pinned_program_is_denied_fork_exec() {
    replaced_program_is_denied(Strategy::ForkExec);
}

#[test]
fn pin_is_checked_when_the_policy_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let prog = copy_of("true", dir.path());
    let wrong = Sha256::of(b"not true");
    let err = Policy::deny_all().allow(ProgramRule::new(&prog).sha256(wrong)).validate().unwrap_err();
    assert!(matches!(err, PolicyError::Sha256 { index: 0, .. }), "{err:?}");
    assert!(err.to_string().contains(&format!("not the pinned {wrong}")), "{err}");

    let script = dir.path().join("script");
    fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let err = Policy::deny_all().allow(ProgramRule::new(&script).sha256(digest(&script))).validate().unwrap_err();
    assert!(err.to_string().contains("script"), "{err}");
}

#[test]
fn sha256_in_a_policy_file_is_parsed_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let prog = copy_of("true", dir.path());
    let toml = format!("[[allow]]\nprogram = {:?}\nsha256 = \"{}\"\n", prog.display().to_string(), digest(&prog));
    Policy::from_toml_str(&toml).unwrap();
    let bad = format!("[[allow]]\nprogram = {:?}\nsha256 = \"xyz\"\n", prog.display().to_string());
    let err = Policy::from_toml_str(&bad).unwrap_err();
    assert!(format!("{err:#}").contains("line 3") || wrt_text::error_chain(&err).contains("64 hexadecimal"), "{err:?}");
    let mismatch = format!("[[allow]]\nprogram = {:?}\nsha256 = \"{}\"\n", prog.display().to_string(), "0".repeat(64));
    let err = Policy::from_toml_str(&mismatch).unwrap_err();
    assert!(wrt_text::error_chain(&err).contains("not the pinned"), "{err:?}");
}

/// A pinned rule's error counts allow rules from 1, as every other policy message does, and a
/// policy file's points at the rule's `program`.
#[test]
fn sha256_errors_count_allow_rules_from_1() {
    let dir = tempfile::tempdir().unwrap();
    let prog = copy_of("true", dir.path());
    let wrong = Sha256::of(b"not true");
    let err =
        Policy::deny_all().allow_program("echo").allow(ProgramRule::new(&prog).sha256(wrong)).validate().unwrap_err();
    assert!(matches!(err, PolicyError::Sha256 { index: 1, .. }), "{err:?}");
    let digest_now = digest(&prog);
    let want = format!("allow rule 2: `{}` has SHA-256 {digest_now}, not the pinned {wrong}", prog.display());
    assert_eq!(err.to_string(), want);

    let text = format!(
        "[[allow]]\nprogram = \"echo\"\n\n[[allow]]\nprogram = {:?}\nsha256 = \"{wrong}\"\n",
        prog.display().to_string()
    );
    let err = Policy::from_toml_str(&text).unwrap_err();
    assert_eq!(wrt_text::error_chain(&err), format!("invalid policy file `<string>` at line 5: {want}"));
}

/// A shared, writable mapping of a whole file, unmapped on drop.
struct SharedMap {
    ptr: std::ptr::NonNull<u8>,
    len: std::num::NonZeroUsize,
}

#[allow(unsafe_code, reason = "a shared writable mapping: the write path whose metadata lags")]
impl SharedMap {
    fn new(file: &fs::File) -> Self {
        let len = usize::try_from(file.metadata().unwrap().len()).unwrap().try_into().unwrap();
        let prot = nix::sys::mman::ProtFlags::PROT_READ | nix::sys::mman::ProtFlags::PROT_WRITE;
        // SAFETY: a fresh mapping of a file only this test uses; nothing else aliases it.
        let ptr = unsafe { nix::sys::mman::mmap(None, len, prot, nix::sys::mman::MapFlags::MAP_SHARED, file, 0) };
        Self { ptr: ptr.unwrap().cast(), len }
    }

    /// Writes `byte` at `offset` through the mapping.
    fn write(&self, offset: usize, byte: u8) {
        assert!(offset < self.len.get());
        // SAFETY: `offset` is inside the mapping, which is writable and lives as long as `self`.
        unsafe { self.ptr.as_ptr().add(offset).write_volatile(byte) };
    }

    fn read(&self, offset: usize) -> u8 {
        assert!(offset < self.len.get());
        // SAFETY: `offset` is inside the mapping, which is readable and lives as long as `self`.
        unsafe { self.ptr.as_ptr().add(offset).read_volatile() }
    }
}

#[allow(unsafe_code, reason = "a shared writable mapping: the write path whose metadata lags")]
impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `new` and is unmapped once; no reference into it remains.
        let _ = unsafe { nix::sys::mman::munmap(self.ptr.cast(), self.len.get()) };
    }
}

/// `(inode, size, mtime, ctime)` of `path`, what a digest cache would key on.
fn metadata_key(path: &Path) -> (u64, u64, i64, i64, i64, i64) {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(path).unwrap();
    (m.ino(), m.size(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec())
}

/// A pin is checked against the bytes on every spawn, never against a digest cached by the
/// file's metadata (a cache that would make spawns cheaper). The program is changed in place
/// between two spawns through a shared mapping, in a page the mapping had already dirtied
/// before the first spawn: the kernel then updates neither `mtime` nor `ctime` (nor the inode
/// or size) until the page is written back, so a cache keyed on them would run the changed
/// bytes. (While the mapping is writable, Linux fails `execve` of the file with `ETXTBSY`: the
/// first spawn passes the pin and then fails; the mapping is gone before the second.)
fn rewritten_through_a_mapping_is_denied(strategy: Strategy) {
    let _lock = lock();
    let dir = tempfile::tempdir().unwrap();
    let prog = copy_of("true", dir.path());
    let pinned = digest(&prog);
    let spawner = Spawner::new(Policy::deny_all().allow(ProgramRule::new(&prog).sha256(pinned)))
        .unwrap()
        .with_strategy(strategy)
        .strict(true);
    assert!(spawner.output(&Command::new(&prog), None).unwrap().outcome.success());
    let file = fs::File::options().read(true).write(true).open(&prog).unwrap();
    let map = SharedMap::new(&file);
    drop(file);
    // Dirty the page with the byte it already holds: the bytes, and so the digest, are unchanged.
    let offset = 200;
    let original = map.read(offset);
    map.write(offset, original);
    // The pin passes; Linux refuses to execute a file mapped writable (ETXTBSY).
    match spawner.output(&Command::new(&prog), None) {
        Ok(output) => assert!(output.outcome.success()),
        Err(OutputError::Spawn(SpawnError::Spawn { source: nix::errno::Errno::ETXTBSY, .. })) => {}
        Err(other) => panic!("the pin passes, then the exec runs or fails with ETXTBSY: {other:?}"),
    }

    let before = metadata_key(&prog);
    map.write(offset, !original);
    drop(map);
    let after = metadata_key(&prog);
    assert_ne!(digest(&prog), pinned);
    let err = spawner.spawn(&Command::new(&prog)).unwrap_err();
    assert!(
        matches!(&err, SpawnError::Denied { reason: Denial::Sha256 { .. }, .. }),
        "expected a SHA-256 denial, got {err:?} (metadata before {before:?}, after {after:?})"
    );
}

#[test]
fn pinned_program_rewritten_in_place_is_denied_posix_spawn() {
    rewritten_through_a_mapping_is_denied(Strategy::PosixSpawn);
}

#[test]
fn pinned_program_rewritten_in_place_is_denied_fork_exec() {
    rewritten_through_a_mapping_is_denied(Strategy::ForkExec);
}

//! Verified code stays verified: the compiled code wrt checks (a cache entry's MAC) or is told
//! to trust (`--allow-precompiled`) is the code it runs, unchanged until the guest ends,
//! whatever a guest, a child or another process of the user does to the file afterwards, and the
//! key that authenticates cache entries stays out of reach of guests and confined children.
//!
//! Each attack runs as a hostile guest or child would make it: writing an entry in place while
//! another run has it loaded, truncating it, rewriting it between check and use, reading and
//! replacing the key, rewriting an artifact from inside the run that loaded it.

use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use wrt_test_guests::*;

use crate::util::{assert_code, stderr, stdout, wrt};

/// `wrt` with its compile cache under `home` (`$XDG_CACHE_HOME`).
fn wrt_in(home: &Path) -> std::process::Command {
    let mut cmd = wrt();
    cmd.env("XDG_CACHE_HOME", home);
    cmd
}

/// The cache directory under `home`.
fn cache_of(home: &Path) -> PathBuf {
    home.join("wrt").join("modules")
}

/// The entries of the cache under `home`.
fn entries(home: &Path) -> Vec<PathBuf> {
    let Ok(listing) = std::fs::read_dir(cache_of(home)) else { return Vec::new() };
    let mut entries: Vec<PathBuf> =
        listing.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "cwasm")).collect();
    entries.sort();
    entries
}

/// Runs `args` once under `home` so that its code is cached, and returns the entries the run
/// added: the guest's, and the WASI trampoline's if the run was the first to need it (an attack
/// on the guest's code goes for both).
fn warm(home: &Path, args: &[&str]) -> Vec<PathBuf> {
    let before = entries(home);
    let out = wrt_in(home).args(args).output().unwrap();
    assert!(out.status.code().is_some(), "warming {args:?}: {}", stderr(&out));
    let new: Vec<PathBuf> = entries(home).into_iter().filter(|e| !before.contains(e)).collect();
    assert!(!new.is_empty(), "warming {args:?} cached nothing");
    new
}

/// The one entry a run added (a guest that needs no WASI trampoline, or a later one).
fn warm_one(home: &Path, args: &[&str]) -> PathBuf {
    let mut new = warm(home, args);
    assert_eq!(new.len(), 1, "{new:?}");
    new.pop().unwrap()
}

/// The arguments of a run that sleeps `seconds` in a host call and then returns to its own
/// code, prints the export's (empty) result and exits 0.
fn sleeper_args(seconds: &'static str) -> [&'static str; 5] {
    ["run", "--invoke", "sleep", LIMITS_SLEEP, seconds]
}

/// Starts a warm sleeper under `home`, and waits until it has loaded its code (it is asleep in
/// `poll_oneoff`, its only host call).
fn start_sleeper(home: &Path, seconds: &'static str) -> Child {
    let mut child =
        wrt_in(home).args(sleeper_args(seconds)).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let end = Instant::now() + Duration::from_secs(20);
    let wchan = format!("/proc/{}/wchan", child.id());
    // Asleep in the kernel's poll (`do_sys_poll` or a wait helper of it), not loading.
    while !std::fs::read_to_string(&wchan).is_ok_and(|w| w.contains("poll") || w.contains("hrtimer")) {
        assert!(Instant::now() < end, "the sleeper never went to sleep");
        assert!(child.try_wait().unwrap().is_none(), "the sleeper exited early");
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

/// The sleeper's end: it returned to its own code, printed and exited 0 (not `SIGBUS`,
/// `SIGTRAP`, `SIGSEGV` or `SIGILL`).
#[track_caller]
fn assert_woke_unharmed(child: Child) {
    let out = child.wait_with_output().unwrap();
    assert_code(&out, 0);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

/// A guest given `--dir` over the cache's parent overwrites, with plain WASI writes, the entry
/// that another run of wrt has loaded and is running: that run goes on with the code it checked.
#[test]
fn an_entry_overwritten_by_a_guest_while_another_run_has_it_loaded_changes_nothing_there() {
    let home = tempfile::tempdir().unwrap();
    let victims = warm(home.path(), &sleeper_args("0"));
    let planted = warm_one(home.path(), &["run", CLI_EXIT_CODE, "42"]);
    let sleeper = start_sleeper(home.path(), "1");
    let spec = format!("{}::/home", home.path().display());
    let in_guest = |entry: &Path| format!("/home/wrt/modules/{}", entry.file_name().unwrap().to_str().unwrap());
    for victim in &victims {
        let out = wrt_in(home.path())
            .args(["run", "--dir", &spec, CACHE_OVERWRITE_ENTRY, &in_guest(&planted), &in_guest(victim)])
            .output()
            .unwrap();
        assert_code(&out, 0);
        assert_eq!(std::fs::read(victim).unwrap(), std::fs::read(&planted).unwrap(), "the attack did not happen");
    }
    assert_woke_unharmed(sleeper);
}

/// An entry truncated, by a confined child of another guest (`: > ENTRY`), while a run of wrt
/// has it loaded: that run does not die of `SIGBUS`.
#[test]
fn an_entry_truncated_by_a_child_while_another_run_has_it_loaded_changes_nothing_there() {
    let home = tempfile::tempdir().unwrap();
    let victims = warm(home.path(), &sleeper_args("0"));
    let sleeper = start_sleeper(home.path(), "1");
    let spec = home.path().display().to_string();
    let script: Vec<String> = victims.iter().map(|victim| format!(": > '{}'", victim.display())).collect();
    let script = script.join("; ");
    let out = wrt_in(home.path())
        .args(["run", "--dir", &spec, "--allow-run", "sh", CONTAIN_SH, &script, "exit"])
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert!(stdout(&out).contains("sh ended: exit status: 0"), "{}", stdout(&out));
    for victim in &victims {
        assert_eq!(std::fs::metadata(victim).unwrap().len(), 0, "the attack did not happen");
    }
    assert_woke_unharmed(sleeper);
}

/// An entry's code overwritten in place (same length, every byte a breakpoint instruction) by
/// another process of the user while a run has it loaded: that run goes on with its own code.
#[test]
fn an_entry_rewritten_in_place_while_a_run_has_it_loaded_changes_nothing_there() {
    let home = tempfile::tempdir().unwrap();
    let victims = warm(home.path(), &sleeper_args("0"));
    let sleeper = start_sleeper(home.path(), "1");
    for victim in &victims {
        let len = std::fs::metadata(victim).unwrap().len();
        let file = std::fs::OpenOptions::new().write(true).open(victim).unwrap();
        file.write_all_at(&vec![0xCC; usize::try_from(len).unwrap()], 0).unwrap();
    }
    assert_woke_unharmed(sleeper);
}

/// A writer that rewrites an entry in place, over and over, with the bytes of another module's
/// entry (a valid entry with another MAC), while runs of the victim start one after another: a
/// run never executes the planted code, whether the entry changed before, during or after its
/// check (with the file mapped, a rewrite between the MAC check and wasmtime's mapping ran the
/// planted code).
#[test]
fn an_entry_rewritten_between_check_and_use_never_runs_the_planted_code() {
    let home = tempfile::tempdir().unwrap();
    let victim = warm_one(home.path(), &["run", CLI_HELLO]);
    let planted = warm_one(home.path(), &["run", CLI_EXIT_CODE, "42"]);
    let (victim_bytes, planted_bytes) = (std::fs::read(&victim).unwrap(), std::fs::read(&planted).unwrap());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, victim) = (stop.clone(), victim.clone());
        std::thread::spawn(move || {
            let mut rewrites = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Whatever file holds the name now (a recompiled entry is a new file).
                if let Ok(file) = std::fs::OpenOptions::new().write(true).open(&victim) {
                    let bytes = if rewrites.is_multiple_of(2) { &planted_bytes } else { &victim_bytes };
                    let _ = file.write_all_at(bytes, 0);
                    rewrites += 1;
                }
            }
            rewrites
        })
    };
    let mut outcomes = Vec::new();
    for _ in 0..20 {
        let out = wrt_in(home.path()).args(["run", CLI_HELLO, "7"]).output().unwrap();
        outcomes.push((out.status.code(), stdout(&out)));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(writer.join().unwrap() > 20, "the writer hardly ran");
    for (code, out) in outcomes {
        assert_eq!(code, Some(0), "a run ended otherwise: {out}");
        assert_eq!(out, "hello from a wrt guest, args = [\"7\"]\n");
    }
}

/// A confined child with no preopen reads the cache directory's key (an extended attribute,
/// which Landlock does not govern) and replaces it: every extended attribute call of a
/// confined child fails as on a file system without them, and the key stays as it was.
#[test]
fn a_confined_child_can_neither_read_nor_replace_the_cache_key() {
    let Some(python) = ["/usr/bin/python3", "/usr/local/bin/python3"].into_iter().find(|p| Path::new(p).exists())
    else {
        eprintln!("SKIPPED: no python3 on this host to read extended attributes with");
        return;
    };
    let home = tempfile::tempdir().unwrap();
    warm(home.path(), &["run", CLI_HELLO]);
    let cache = cache_of(home.path());
    let key_before = key_of(&cache);
    // The direct calls, and `getxattrat` (Linux 6.13, number 464) by number, the way a program
    // would go around a filter that knows only the old calls.
    let script = format!(
        r#"
import ctypes, errno, os
d = {dir:?}
for name, call in [
    ("get", lambda: os.getxattr(d, "user.wrt.cache-key")),
    ("list", lambda: os.listxattr(d)),
    ("set", lambda: os.setxattr(d, "user.wrt.cache-key", b"\0" * 32)),
    ("remove", lambda: os.removexattr(d, "user.wrt.cache-key")),
]:
    try:
        print(name, "ok", call())
    except OSError as e:
        print(name, errno.errorcode[e.errno])
libc = ctypes.CDLL(None, use_errno=True)
value = ctypes.create_string_buffer(64)
xattr_args = (ctypes.c_uint64 * 2)(ctypes.addressof(value), 64)
args = (ctypes.c_int(-100), ctypes.c_char_p(d.encode()), ctypes.c_uint(0), ctypes.c_char_p(b"user.wrt.cache-key"), ctypes.byref(xattr_args), ctypes.c_size_t(16))
r = libc.syscall(ctypes.c_long(464), *args)
print("getxattrat", errno.errorcode.get(ctypes.get_errno(), "ok") if r < 0 else "ok")
"#,
        dir = cache.display().to_string()
    );
    assert!(!script.contains('\''), "the script is quoted in single quotes");
    let shell = format!("exec {python} -c '{script}'");
    let out = wrt_in(home.path()).args(["run", "--allow-run", "sh", CONTAIN_SH, &shell, "exit"]).output().unwrap();
    let text = stdout(&out);
    // 95: `ENOTSUP`, which is `EOPNOTSUPP` on Linux.
    for line in ["get ENOTSUP", "list ENOTSUP", "set ENOTSUP", "remove ENOTSUP", "getxattrat ENOTSUP"] {
        assert!(text.contains(line), "expected `{line}`:\n{text}\n{}", stderr(&out));
    }
    assert_eq!(key_of(&cache), key_before, "the key changed");
}

/// The cache key of directory `dir` (its extended attribute).
fn key_of(dir: &Path) -> Vec<u8> {
    crate::util::xattr(dir, wrt_runtime::CACHE_KEY_ATTR)
}

/// `wrt compile` of the guest that rewrites files into `dir`, and the artifact's path.
fn compiled_rewriter(dir: &Path) -> PathBuf {
    let artifact = dir.join("app.cwasm");
    let out = wrt().args(["compile", CACHE_REWRITE_CODE, "-o"]).arg(&artifact).output().unwrap();
    assert_code(&out, 0);
    artifact
}

/// A guest run with `--allow-precompiled` from an artifact in a directory it was given
/// read-write rewrites its own compiled code: truncated, or every byte a breakpoint, then it
/// runs on. It runs on with the code that was loaded.
#[test]
pub(crate) fn cache_rewrite_code() {
    for how in ["truncate", "trap"] {
        let dir = tempfile::tempdir().unwrap();
        let artifact = compiled_rewriter(dir.path());
        let spec = format!("{}::/app", dir.path().display());
        let out: Output = wrt()
            .args(["run", "--allow-precompiled", "--dir", &spec])
            .arg(&artifact)
            .args(["/app/app.cwasm", how])
            .output()
            .unwrap();
        assert_code(&out, 0);
        assert!(stdout(&out).starts_with("still running"), "{how}: {}", stdout(&out));
        let len = std::fs::metadata(&artifact).unwrap().len();
        assert!(if how == "truncate" { len == 0 } else { len > 0 }, "the attack did not happen");
    }
}

/// `wrt compile` under umask 000 wrote a world-writable artifact: anyone could then plant code
/// in what a user runs with `--allow-precompiled`. The artifact is writable by its owner only,
/// whatever the umask, and an artifact already there is replaced rather than rewritten.
#[test]
fn a_compiled_artifact_is_writable_by_its_owner_only_whatever_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let artifact = dir.path().join("app.cwasm");
    std::fs::write(&artifact, b"old").unwrap();
    std::fs::set_permissions(&artifact, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = crate::util::wrt_under_sh("umask 000; exec \"$0\" \"$@\"")
        .args(["compile", CLI_HELLO, "-o"])
        .arg(&artifact)
        .output()
        .unwrap();
    assert_code(&out, 0);
    let mode = std::fs::metadata(&artifact).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o644, "mode {mode:o}");
    let out = wrt().args(["run", "--allow-precompiled"]).arg(&artifact).output().unwrap();
    assert_code(&out, 0);
    assert!(stdout(&out).starts_with("hello from a wrt guest"), "{}", stdout(&out));
}

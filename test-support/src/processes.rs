//! Scans of the process table for live (not zombie) processes that carry a test's marker, in
//! their command line or their environment, or that are children of this process.

use std::path::Path;

/// Whether the process at `dir` (`/proc/PID`) is a zombie (or gone).
fn zombie_or_gone(dir: &Path) -> bool {
    let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else { return true };
    // The command name may hold spaces and parentheses: the state follows the last `)`.
    stat.rsplit_once(')').is_none_or(|(_, rest)| rest.trim_start().starts_with('Z'))
}

/// Pids of live processes for which `matches` holds, given the process's `/proc/PID`.
pub fn live_where(matches: impl Fn(&Path) -> bool) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return pids };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else { continue };
        let dir = entry.path();
        if matches(&dir) && !zombie_or_gone(&dir) {
            pids.push(pid);
        }
    }
    pids
}

/// The command line of the process at `dir`, its arguments joined by spaces.
fn command_line(dir: &Path) -> Option<String> {
    let bytes = std::fs::read(dir.join("cmdline")).ok()?;
    Some(String::from_utf8_lossy(&bytes).replace('\0', " "))
}

/// Pids of live processes whose command line (arguments joined by spaces) contains `needle`.
pub fn live_with_arg(needle: &str) -> Vec<u32> {
    live_where(|dir| command_line(dir).is_some_and(|line| line.contains(needle)))
}

/// Pids of live processes whose command line starts with `program` as `argv[0]` and contains
/// `needle` (for example the `sleep` that carries a marker, not the shell that started it).
pub fn live_program_with_arg(program: &str, needle: &str) -> Vec<u32> {
    let head = format!("{program} ");
    live_where(|dir| command_line(dir).is_some_and(|line| line.starts_with(&head) && line.contains(needle)))
}

/// Pids of live processes whose environment holds `name=value` (a marker that a child carries
/// whatever its command line; readable for processes of the test's own user).
pub fn live_with_env(name: &str, value: &str) -> Vec<u32> {
    let entry = format!("{name}={value}");
    live_where(|dir| {
        std::fs::read(dir.join("environ"))
            .is_ok_and(|environ| environ.split(|&b| b == 0).any(|e| e == entry.as_bytes()))
    })
}

/// Live (not zombie) processes whose parent is this process: pid, state and command line, from
/// `/proc/<pid>/stat` and `/proc/<pid>/cmdline`, for checks that no child outlives the guest
/// (or instance) that spawned it. Not AddressSanitizer's symbolizer (`llvm-symbolizer`), which
/// it starts to print a report or a warning and keeps running: it is no child of a guest, and
/// would fail every check after the first warning.
pub fn live_children() -> Vec<(u32, String, String)> {
    let me = std::process::id().to_string();
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The command name may contain spaces and parentheses: the fields start after the last `)`.
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 1 && fields[1] == me && fields[0] != "Z" && fields[0] != "X" {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            if cmdline.split(|&b| b == 0).next().is_some_and(|exe| exe.ends_with(b"llvm-symbolizer")) {
                continue;
            }
            live.push((pid, fields[0].to_owned(), String::from_utf8_lossy(&cmdline).replace('\0', " ")));
        }
    }
    live
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    #[test]
    fn a_marked_process_is_found_by_argument_and_environment_until_it_exits() {
        let token = crate::token();
        let mut cmd = Command::new("sleep");
        cmd.arg(format!("1000.{token}")).env("WRT_TEST_MARK", &token);
        let mut child = crate::known_state(&mut cmd).spawn().unwrap();
        let pid = child.id();
        let found_by_arg = super::live_with_arg(&token);
        let found_by_program = super::live_program_with_arg("sleep", &token);
        let found_by_env = super::live_with_env("WRT_TEST_MARK", &token);
        let not_sh = super::live_program_with_arg("sh", &token);
        let children: Vec<u32> = super::live_children().into_iter().map(|(pid, _, _)| pid).collect();
        child.kill().unwrap();
        // A zombie until it is waited on: not live.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let while_zombie = super::live_with_arg(&token);
        let children_while_zombie = super::live_children();
        child.wait().unwrap();
        assert_eq!(found_by_arg, [pid]);
        assert_eq!(found_by_program, [pid]);
        assert_eq!(found_by_env, [pid]);
        assert_eq!(not_sh, Vec::<u32>::new());
        assert_eq!(while_zombie, Vec::<u32>::new());
        assert!(children.contains(&pid), "{children:?}");
        assert!(children_while_zombie.iter().all(|(child, _, _)| *child != pid), "{children_while_zombie:?}");
    }
}

//! The children of this fuzz target's process that are still running, for the targets that
//! check that no child outlives the guest (or instance) that spawned it (`host_calls`,
//! `process_ops`). Included by each with `#[path]`: every target is its own crate.

/// Live (not zombie) processes whose parent is this process: pid, state and command line, from
/// `/proc/<pid>/stat` and `/proc/<pid>/cmdline`. Not AddressSanitizer's symbolizer
/// (`llvm-symbolizer`), which it starts to print a report or a warning and keeps running: it is
/// no child of a guest, and would fail every check after the first warning.
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

//! Spawns `true` with piped stdio and keeps each finished child's handle (and so its pipes) until a
//! spawn fails, at most `argv[1]` times (default 1000). The failure must come from the host's
//! descriptor budget (NO_MEMORY or TOO_MANY_CHILDREN, with a message), never from the operating
//! system (SPAWN_FAILED); once the handles are released, spawns work again. Prints `held N` and, if
//! one was refused, `refused after N: MESSAGE`. Needs `true`.
use wrt_guest::{Command, ErrorCode, Stdio};

fn main() {
    let max: usize = std::env::args().nth(1).map_or(1000, |arg| arg.parse().expect("a count"));
    let mut children = Vec::new();
    while children.len() < max {
        match Command::new("true").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn() {
            Ok(mut child) => {
                assert!(child.wait().expect("wait").success());
                children.push(child);
            }
            Err(err) => {
                let code = ErrorCode::of(&err);
                assert!(
                    matches!(code, Some(ErrorCode::NoMemory | ErrorCode::TooManyChildren)),
                    "spawn {} failed with {code:?}: {err}",
                    children.len() + 1
                );
                println!("refused after {}: {err}", children.len());
                break;
            }
        }
    }
    println!("held {}", children.len());
    children.clear();
    let output = Command::new("true").output().expect("a spawn once the handles are released");
    assert!(output.status.success());
}

//! Policy files: any text loads to a policy or to an error that says where (the line of every
//! bad key, value or entry, within the text), never a panic; a loaded policy compiles or is
//! refused with an error, and `explain` of a few requests on it answers.

#![no_main]

use libfuzzer_sys::fuzz_target;
use wrt_host_spawn::{Command, Policy, PolicyFileError};

fuzz_target!(|text: &str| {
    let lines = text.lines().count().max(1) + 1;
    let line_in_text = |line: usize| assert!((1..=lines).contains(&line), "line {line} of {lines}: {text:?}");
    match Policy::from_toml_str(text) {
        Ok(policy) => {
            if policy.compile().is_ok() {
                for program in ["true", "/bin/true", "sh", "", "../x", "/nonexistent"] {
                    let _ = policy.explain(Command::new(program).arg("-c").arg("x").env("HOME", "/"));
                }
            }
        }
        Err(PolicyFileError::Parse { source, .. }) => {
            let span = source.span().unwrap_or_else(|| panic!("no line for {source}: {text:?}"));
            let start = span.start.min(text.len());
            line_in_text(1 + text.as_bytes()[..start].iter().filter(|&&b| b == b'\n').count());
        }
        Err(PolicyFileError::UnknownKeys { keys, .. }) => {
            assert!(!keys.is_empty());
            for key in &keys {
                line_in_text(key.line);
            }
        }
        Err(PolicyFileError::AllowNotList { line, .. }) | Err(PolicyFileError::Invalid { line, .. }) => {
            line_in_text(line);
        }
        Err(PolicyFileError::InvalidEntries { errors, .. }) => {
            assert!(!errors.is_empty());
            for (line, _) in &errors {
                line_in_text(*line);
            }
        }
        Err(other) => panic!("a policy from text gave {other:?}"),
    }
});

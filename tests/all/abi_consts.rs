//! The AssemblyScript guest library (guests/test-guests/assemblyscript/assembly/wrt.ts) spells the ABI's
//! constants out in TypeScript; this checks every one of them against `wrt-abi`, the ABI's one
//! definition, so a value that drifts fails here.

use wrt_abi::ErrorCode;
use wrt_abi::consts::{INLINE_MAX, MAX_CONCAT_PARTS};

const WRT_TS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/guests/test-guests/assemblyscript/assembly/wrt.ts");

/// Every `export const NAME: i32 = VALUE;` of `source`, as (name, value).
fn exported_consts(source: &str) -> Vec<(String, i64)> {
    source
        .lines()
        .filter_map(|line| line.trim().strip_prefix("export const "))
        .map(|rest| {
            let (name, rest) = rest.split_once(':').unwrap_or_else(|| panic!("no type in `export const {rest}`"));
            let (_, value) = rest.split_once('=').unwrap_or_else(|| panic!("no value in `export const {rest}`"));
            let value = value.trim().trim_end_matches(';').trim();
            let value = value.parse().unwrap_or_else(|_| panic!("`{name}` is not a decimal literal: `{value}`"));
            (name.trim().to_owned(), value)
        })
        .collect()
}

/// What `wrt-abi` says `name` is, or `None` if it defines no such constant.
fn abi_value(name: &str) -> Option<i64> {
    if let Some(code) = ErrorCode::ALL.into_iter().find(|code| code.name() == name) {
        return Some(code.raw().into());
    }
    match name {
        "INLINE_MAX" => Some(INLINE_MAX as i64),
        "MAX_PARTS" => Some(MAX_CONCAT_PARTS.into()),
        _ => None,
    }
}

#[test]
fn assemblyscript_constants_match_the_abi_crate() {
    let source = std::fs::read_to_string(WRT_TS).expect("read wrt.ts");
    let consts = exported_consts(&source);
    assert!(consts.len() >= 7, "found only {consts:?} in wrt.ts");
    for (name, value) in consts {
        let expected = abi_value(&name)
            .unwrap_or_else(|| panic!("wrt.ts exports `{name}`, which wrt-abi does not define: map it in abi_value"));
        assert_eq!(value, expected, "wrt.ts says `{name}` is {value}, wrt-abi says {expected}");
    }
}

#[test]
fn the_parser_reads_what_it_checks() {
    let consts =
        exported_consts("export const NO_MEMORY: i32 = 10;\nconst PRIVATE: i32 = 1;\n  export const X: i32 = 7;");
    assert_eq!(consts, [("NO_MEMORY".to_owned(), 10), ("X".to_owned(), 7)]);
    assert_eq!(abi_value("NO_MEMORY"), Some(10));
    assert_eq!(abi_value("NOT_A_CONSTANT"), None);
}

//! Writes `/out/result.txt`. With argument `expect-denied`, asserts the write is refused with
//! `PermissionDenied` and the directory is unchanged.
fn main() {
    let expect_denied = std::env::args().nth(1).as_deref() == Some("expect-denied");
    let result = std::fs::write("/out/result.txt", b"written by the guest\n");
    if expect_denied {
        let err = result.expect_err("the write should be refused");
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied, "{err}");
        assert!(std::fs::metadata("/out/result.txt").is_err());
        println!("write refused");
    } else {
        result.expect("write /out/result.txt");
        println!("write ok");
    }
}

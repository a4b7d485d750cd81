//! Markers unique to one test on this machine.

/// 18 random decimal digits: unique to the test that asked, on this machine and among
/// concurrent runs of the same tests. Digits only, so that `sleep 1000.<token>` is a valid
/// command line and sorts among the test's own processes.
///
/// # Panics
///
/// If the kernel has no random bytes to give (`getrandom` fails).
pub fn token() -> String {
    let n = getrandom::u64().expect("the kernel's random bytes");
    format!("{:018}", n % 1_000_000_000_000_000_000)
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_are_digits_and_differ() {
        let (a, b) = (super::token(), super::token());
        assert_eq!(a.len(), 18);
        assert!(a.bytes().all(|b| b.is_ascii_digit()), "{a}");
        assert_ne!(a, b);
    }
}

//! [`error_chain`]: an error and its causes on one line.

/// `err` and its sources, joined with `: `: one line with everything each layer knows, for a
/// message that goes where `{:#}` formatting is not available (an audit record, a guest's
/// `last_error`, an error that is not an `anyhow` or wasmtime error).
///
/// # Examples
///
/// ```
/// use std::{error::Error, fmt, io};
///
/// #[derive(Debug)]
/// struct Load(io::Error);
///
/// impl fmt::Display for Load {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         f.write_str("failed to load `app.wasm`")
///     }
/// }
///
/// impl Error for Load {
///     fn source(&self) -> Option<&(dyn Error + 'static)> {
///         Some(&self.0)
///     }
/// }
///
/// let err = Load(io::Error::from(io::ErrorKind::NotFound));
/// assert_eq!(wrt_text::error_chain(&err), "failed to load `app.wasm`: entity not found");
/// ```
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use std::error::Error;
    use std::fmt;

    use super::*;

    /// An error that says `text` and has `source` as its cause.
    #[derive(Debug)]
    struct Layer {
        text: &'static str,
        source: Option<Box<Layer>>,
    }

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.text)
        }
    }

    impl Error for Layer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.source.as_deref().map(|s| s as _)
        }
    }

    fn layer(text: &'static str, source: Option<Layer>) -> Layer {
        Layer { text, source: source.map(Box::new) }
    }

    #[test]
    fn every_cause_follows_outermost_first() {
        let err = layer("outer", Some(layer("middle", Some(layer("root", None)))));
        assert_eq!(error_chain(&err), "outer: middle: root");
    }

    #[test]
    fn an_error_without_cause_is_its_message() {
        assert_eq!(error_chain(&layer("alone", None)), "alone");
    }
}

//! Guest-controlled strings as `String`s, escaped and capped ([`Shown`]), and lists of them
//! capped at [`SHOWN_ITEMS`] elements, for audit records and messages.

use std::ffi::OsStr;

use wrt_text::Shown;

/// The most list elements (arguments, variable names) an audit record shows.
pub(crate) const SHOWN_ITEMS: usize = 64;

/// `s` escaped and capped, as a `String`.
pub(crate) fn shown(s: &(impl AsRef<OsStr> + ?Sized)) -> String {
    Shown::new(s).to_string()
}

/// `items` shown one by one; past [`SHOWN_ITEMS`] items, one last item says how many there
/// were in all.
pub(crate) fn shown_list<'a>(items: impl IntoIterator<Item = &'a OsStr>) -> Vec<String> {
    let mut items = items.into_iter();
    let mut list: Vec<String> = items.by_ref().take(SHOWN_ITEMS).map(shown).collect();
    let rest = items.count();
    if rest > 0 {
        list.push(format!("…({} items)", SHOWN_ITEMS + rest));
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_capped() {
        let items: Vec<&OsStr> = (0..100).map(|_| OsStr::new("a\n")).collect();
        let list = shown_list(items);
        assert_eq!(list.len(), SHOWN_ITEMS + 1);
        assert_eq!(list[0], r"a\n");
        assert_eq!(list[SHOWN_ITEMS], "…(100 items)");
    }
}

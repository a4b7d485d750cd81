//! The directory listings one store keeps for `fd_readdir` (`wasi::readdir`): each the entries
//! of one descriptor's directory in WASI preview 1's encoding, as WASI's own `fd_readdir`
//! wrote them when the pass started, with where each entry starts, so that a call with any
//! cookie is answered by a slice of it.
//!
//! Host memory: at most [`MAX_LISTED`] bytes of listings in all (the oldest listing makes room
//! for a new one), the listing being made included, and at most [`MAX_LISTINGS`] listings.

/// The most bytes of listings kept at once, and so the longest listing (about 13,000 entries
/// of 10-byte names): 512 KiB.
pub(crate) const MAX_LISTED: u32 = 512 << 10;
/// The most listings kept at once (one per descriptor being read).
pub(crate) const MAX_LISTINGS: usize = 4;
/// The size of a `dirent` in WASI's encoding: `d_next` (u64), `d_ino` (u64), `d_namlen` (u32),
/// `d_type` (u8), padding.
const DIRENT: usize = 24;

/// The listings a guest's store keeps.
#[derive(Default)]
pub(crate) struct Listings {
    listings: Vec<Listing>,
}

/// One descriptor's listing: its entries in WASI's encoding, or a note that it was too long.
pub(crate) struct Listing {
    pub(crate) fd: i32,
    /// The listing, or `None` when it is longer than [`MAX_LISTED`].
    pub(crate) entries: Option<Entries>,
}

/// A complete listing: the entries, and where each starts.
pub(crate) struct Entries {
    bytes: Vec<u8>,
    /// Where each entry starts in `bytes`: entry `i` is the one cookie `i` starts at.
    starts: Vec<u32>,
}

impl Listings {
    /// Drops the listing of `fd`, which was closed or renumbered.
    pub(crate) fn end(&mut self, fd: i32) {
        self.listings.retain(|listing| listing.fd != fd);
    }

    pub(crate) fn get(&self, fd: i32) -> Option<&Listing> {
        self.listings.iter().find(|listing| listing.fd == fd)
    }

    /// The host memory the listings hold.
    fn held(&self) -> usize {
        self.listings.iter().filter_map(|listing| listing.entries.as_ref()).map(Entries::size).sum()
    }

    /// Drops the oldest listings until `bytes` more fit within [`MAX_LISTED`] and one more
    /// within [`MAX_LISTINGS`].
    pub(crate) fn make_room(&mut self, bytes: usize) {
        while !self.listings.is_empty()
            && (self.held() + bytes > MAX_LISTED as usize || self.listings.len() >= MAX_LISTINGS)
        {
            self.listings.remove(0);
        }
    }

    pub(crate) fn keep(&mut self, listing: Listing) {
        self.end(listing.fd);
        self.make_room(listing.entries.as_ref().map_or(0, Entries::size));
        self.listings.push(listing);
    }
}

impl Entries {
    /// The host memory the listing holds.
    pub(crate) fn size(&self) -> usize {
        self.bytes.len() + self.starts.len() * size_of::<u32>()
    }

    /// The entries of `bytes`, a complete listing in WASI's encoding, or `None` if `bytes` is
    /// not one (entry `i`'s `d_next` is `i + 1`).
    pub(crate) fn parse(bytes: Vec<u8>) -> Option<Self> {
        let mut starts = Vec::new();
        let mut at = 0usize;
        while at < bytes.len() {
            let header = bytes.get(at..at + DIRENT)?;
            let next = u64::from_le_bytes(header[0..8].try_into().ok()?);
            let name_len = u32::from_le_bytes(header[16..20].try_into().ok()?) as usize;
            if next != starts.len() as u64 + 1 {
                return None;
            }
            starts.push(u32::try_from(at).ok()?);
            at = at.checked_add(DIRENT + name_len)?;
        }
        (at == bytes.len()).then_some(Entries { bytes, starts })
    }

    /// What a call with `cookie` and a buffer of `len` bytes returns.
    pub(crate) fn at_cookie(&self, cookie: u64, len: u32) -> &[u8] {
        let start = usize::try_from(cookie)
            .ok()
            .and_then(|cookie| self.starts.get(cookie))
            .map_or(self.bytes.len(), |&start| start as usize);
        let rest = &self.bytes[start..];
        &rest[..rest.len().min(len as usize)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirent(next: u64, name: &str) -> Vec<u8> {
        let mut entry = vec![0u8; DIRENT];
        entry[0..8].copy_from_slice(&next.to_le_bytes());
        entry[16..20].copy_from_slice(&(name.len() as u32).to_le_bytes());
        entry.extend_from_slice(name.as_bytes());
        entry
    }

    fn listing(names: &[&str]) -> Vec<u8> {
        names.iter().zip(1..).flat_map(|(name, next)| dirent(next, name)).collect()
    }

    #[test]
    fn a_cookie_starts_the_answer_at_its_entry_and_the_buffer_cuts_it() {
        let bytes = listing(&[".", "..", "alpha", "b"]);
        let entries = Entries::parse(bytes.clone()).expect("a listing");
        assert_eq!(entries.at_cookie(0, 4096), &bytes[..]);
        let third = DIRENT + 1 + DIRENT + 2;
        assert_eq!(entries.at_cookie(2, 4096), &bytes[third..]);
        assert_eq!(entries.at_cookie(2, 30), &bytes[third..third + 30], "cut inside the name, as WASI cuts");
        assert!(entries.at_cookie(4, 4096).is_empty(), "past the last entry");
        assert!(entries.at_cookie(u64::MAX, 4096).is_empty());
    }

    #[test]
    fn bytes_that_are_not_a_listing_give_none() {
        let mut bytes = listing(&[".", ".."]);
        assert!(Entries::parse(bytes[..bytes.len() - 1].to_vec()).is_none(), "a cut name");
        bytes[0] = 7;
        assert!(Entries::parse(bytes).is_none(), "a d_next out of order");
        assert!(Entries::parse(Vec::new()).is_some_and(|entries| entries.starts.is_empty()));
    }

    #[test]
    fn listings_stay_within_their_bytes_and_count() {
        let mut listings = Listings::default();
        let names: Vec<String> = (0..1500).map(|i| format!("{i:0>100}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let big = Entries::parse(listing(&names)).expect("a listing");
        assert!(big.size() > MAX_LISTED as usize / 4);
        for fd in 3..7 {
            listings.keep(Listing { fd, entries: Entries::parse(big.bytes.clone()) });
            assert!(listings.held() <= MAX_LISTED as usize, "{} bytes held", listings.held());
        }
        assert!(listings.get(3).is_none() && listings.get(6).is_some(), "the oldest made room");
        listings.make_room(MAX_LISTED as usize);
        assert_eq!(listings.held(), 0, "a listing of the most bytes is made alone");
    }

    #[test]
    fn a_closed_descriptor_loses_its_listing_and_the_oldest_makes_room() {
        let mut listings = Listings::default();
        for fd in 3..3 + MAX_LISTINGS as i32 + 1 {
            listings.keep(Listing { fd, entries: None });
        }
        assert!(listings.get(3).is_none(), "the oldest made room");
        assert!(listings.get(4).is_some());
        listings.end(4);
        assert!(listings.get(4).is_none());
        assert_eq!(listings.listings.len(), MAX_LISTINGS - 1);
    }
}

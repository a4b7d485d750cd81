//! The guest's handles: positive `i32`s that are never reused while the sandbox lives, so a
//! released handle stays invalid.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use wrt_abi::ErrorCode;

// A finished child's handle keeps its pipes open until released (up to three descriptors), so
// `MAX_LIVE_HANDLES` also bounds the descriptors one guest holds. Buffer handles and child
// handles never coincide, so one passed where the other is expected is `BAD_HANDLE`.
use wrt_abi::consts::{FIRST_BUFFER_HANDLE, MAX_LIVE_BUFFERS, MAX_LIVE_HANDLES};

/// Hashes a handle for the table. Keys are the table's own sequential numbers, never chosen by the
/// guest (a guest only looks keys up), so SipHash's defence against chosen keys buys nothing, and
/// its cost showed in every buffer call. A multiplication by an odd constant maps consecutive
/// handles to distinct low bits (the bucket) and mixes them into the high bits (the tag).
#[derive(Debug, Default, Clone, Copy)]
struct HandleHasher(u64);

/// The odd multiplier of [`HandleHasher`]: 2⁶⁴ divided by the golden ratio.
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(MIX);
        }
    }

    fn write_i32(&mut self, handle: i32) {
        self.0 = (self.0 ^ u64::from(handle as u32)).wrapping_mul(MIX);
    }
}

/// Values behind handles.
#[derive(Debug)]
pub(crate) struct Handles<T> {
    live: HashMap<i32, T, BuildHasherDefault<HandleHasher>>,
    /// The first handle of this table.
    first: i32,
    next: i32,
    /// One past the last handle of this table.
    end: i32,
    max_live: usize,
}

/// A table of child handles: `1..FIRST_BUFFER_HANDLE`, at most [`MAX_LIVE_HANDLES`] live.
impl<T> Default for Handles<T> {
    fn default() -> Self {
        Self { live: HashMap::default(), first: 1, next: 1, end: FIRST_BUFFER_HANDLE, max_live: MAX_LIVE_HANDLES }
    }
}

impl<T> Handles<T> {
    /// A table of buffer handles: `FIRST_BUFFER_HANDLE..i32::MAX`, at most
    /// [`MAX_LIVE_BUFFERS`] live.
    pub(crate) fn for_buffers() -> Self {
        Self {
            live: HashMap::default(),
            first: FIRST_BUFFER_HANDLE,
            next: FIRST_BUFFER_HANDLE,
            end: i32::MAX,
            max_live: MAX_LIVE_BUFFERS,
        }
    }

    /// How many handles are live.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether another handle can be handed out while at most `max_live` are live: below that
    /// many, and not every handle of the table's range used up.
    pub(crate) fn has_room(&self, max_live: usize) -> bool {
        self.live.len() < max_live.min(self.max_live) && self.next < self.end
    }

    /// Whether `handle` was handed out by this table (it may have been released since).
    pub(crate) fn was_issued(&self, handle: i32) -> bool {
        (self.first..self.next).contains(&handle)
    }

    /// The value behind `handle`.
    pub(crate) fn get(&self, handle: i32) -> Result<&T, ErrorCode> {
        self.live.get(&handle).ok_or(ErrorCode::BadHandle)
    }

    /// Stores `value` under a new handle.
    pub(crate) fn insert(&mut self, value: T) -> Result<i32, ErrorCode> {
        if self.live.len() >= self.max_live || self.next == self.end {
            return Err(ErrorCode::NoMemory);
        }
        let handle = self.next;
        self.next += 1;
        self.live.insert(handle, value);
        Ok(handle)
    }

    pub(crate) fn get_mut(&mut self, handle: i32) -> Result<&mut T, ErrorCode> {
        self.live.get_mut(&handle).ok_or(ErrorCode::BadHandle)
    }

    pub(crate) fn remove(&mut self, handle: i32) -> Result<T, ErrorCode> {
        self.live.remove(&handle).ok_or(ErrorCode::BadHandle)
    }

    /// The values behind `handles`, each paired with the index of its first occurrence in
    /// `handles` (a handle listed twice appears once), in that order.
    ///
    /// # Errors
    ///
    /// The first handle that is not live.
    pub(crate) fn get_many_mut(&mut self, handles: &[i32]) -> Result<Vec<(usize, &mut T)>, i32> {
        if let Some(&bad) = handles.iter().find(|h| !self.live.contains_key(h)) {
            return Err(bad);
        }
        let first_index = |handle: i32| handles.iter().position(|&h| h == handle);
        let mut found: Vec<(usize, &mut T)> =
            self.live.iter_mut().filter_map(|(&handle, value)| Some((first_index(handle)?, value))).collect();
        found.sort_by_key(|(index, _)| *index);
        Ok(found)
    }

    /// Removes and returns every value.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.live.drain().map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_handles_stay_invalid() {
        let mut handles = Handles::default();
        let a = handles.insert("a").unwrap();
        assert_eq!(handles.remove(a), Ok("a"));
        assert_eq!(handles.remove(a), Err(ErrorCode::BadHandle));
        assert!(handles.was_issued(a));
        let b = handles.insert("b").unwrap();
        assert!(!handles.was_issued(b + 1) && !handles.was_issued(0));
        assert_ne!(a, b);
        assert!(a > 0 && b > 0);
        assert_eq!(handles.get_mut(0).err(), Some(ErrorCode::BadHandle));
        assert_eq!(handles.get_mut(-5).err(), Some(ErrorCode::BadHandle));
    }

    #[test]
    fn many_at_once_in_request_order_without_duplicates() {
        let mut handles = Handles::default();
        let a = handles.insert('a').unwrap();
        let b = handles.insert('b').unwrap();
        let _c = handles.insert('c').unwrap();
        let got: Vec<(usize, char)> =
            handles.get_many_mut(&[b, a, b]).unwrap().into_iter().map(|(i, v)| (i, *v)).collect();
        assert_eq!(got, [(0, 'b'), (1, 'a')]);
        assert_eq!(handles.get_many_mut(&[a, 77]).err(), Some(77));
    }

    #[test]
    fn consecutive_handles_hash_to_distinct_buckets_and_tags() {
        use std::hash::BuildHasher;
        let build = BuildHasherDefault::<HandleHasher>::default();
        let hashes: Vec<u64> = (FIRST_BUFFER_HANDLE..FIRST_BUFFER_HANDLE + 1024).map(|h| build.hash_one(h)).collect();
        let buckets: std::collections::HashSet<u64> = hashes.iter().map(|h| h & 1023).collect();
        assert_eq!(buckets.len(), 1024, "1,024 consecutive handles fill 1,024 buckets");
        let tags: std::collections::HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        assert!(tags.len() > 100, "the top seven bits vary: {}", tags.len());
    }

    #[test]
    fn live_handles_are_bounded() {
        let mut handles = Handles::default();
        for _ in 0..MAX_LIVE_HANDLES {
            handles.insert(()).unwrap();
        }
        assert_eq!(handles.insert(()), Err(ErrorCode::NoMemory));
    }

    #[test]
    fn buffer_and_child_handles_never_coincide() {
        let mut children = Handles::default();
        let mut buffers = Handles::for_buffers();
        let child = children.insert('c').unwrap();
        let buffer = buffers.insert('b').unwrap();
        assert!(child < FIRST_BUFFER_HANDLE && buffer >= FIRST_BUFFER_HANDLE);
        assert_eq!(buffers.get(child).err(), Some(ErrorCode::BadHandle));
        assert_eq!(children.get(buffer).err(), Some(ErrorCode::BadHandle));
        for _ in 1..MAX_LIVE_BUFFERS {
            buffers.insert('x').unwrap();
        }
        assert_eq!(buffers.len(), MAX_LIVE_BUFFERS);
        assert_eq!(buffers.insert('y'), Err(ErrorCode::NoMemory));
    }
}

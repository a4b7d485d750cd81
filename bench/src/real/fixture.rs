//! The inputs of `wrt bench real`, the same in every run: a tree of text files in nested
//! directories, some of whose lines contain the needle, with the summary that tree-search must
//! print for it; and a file of pseudo-random bytes for hexdump.

use std::io;
use std::path::Path;

/// A pseudo-random sequence (xorshift64*), seeded alike in every run.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (not 0).
    fn below(&mut self, n: u64) -> u64 {
        (self.next() >> 32) % n
    }
}

/// The words of the text lines: lower-case letters only, so that the needle, which has a
/// hyphen, is only where a line was given it.
const WORDS: &str = "sandbox runtime module component memory table import export function stream buffer policy \
                     spawn child process signal exit status error result cache engine store instance linker fuel \
                     epoch deadline file directory path read write seek close open pipe socket clock random \
                     environment argument the a of to and in is it";

/// What tree-search must find in a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tree {
    /// Files.
    pub(super) files: u32,
    /// Bytes in all of them.
    pub(super) bytes: u64,
    /// Lines containing the needle.
    pub(super) matches: u64,
}

impl Tree {
    /// The line tree-search prints for the tree.
    pub(super) fn summary(&self) -> String {
        format!("files={} bytes={} matches={}\n", self.files, self.bytes, self.matches)
    }
}

/// The text of file `i`: lines of 4 to 15 words until it holds about 2 KiB (1.5 to 2.5 KiB),
/// about one line in eight with `needle` among its words; and how many lines have it.
fn text(i: u32, needle: &str) -> (Vec<u8>, u64) {
    let mut rng = Rng::new(0x5eed_0000_0000_0000 ^ u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let words: Vec<&str> = WORDS.split_whitespace().collect();
    let target = 1536 + rng.below(1024) as usize;
    let (mut text, mut matches) = (Vec::with_capacity(target + 128), 0);
    while text.len() < target {
        let count = 4 + rng.below(12);
        let needle_at = (rng.below(8) == 0).then(|| rng.below(count));
        for w in 0..count {
            if w > 0 {
                text.push(b' ');
            }
            if needle_at == Some(w) {
                text.extend_from_slice(needle.as_bytes());
                matches += 1;
            } else {
                text.extend_from_slice(words[rng.below(words.len() as u64) as usize].as_bytes());
            }
        }
        text.push(b'\n');
    }
    (text, matches)
}

/// Writes `files` text files into `dir` (which must not exist), ten to a directory, ten such
/// directories to a directory above them (`d000/d0/f000000.txt`), and returns what tree-search
/// must find there for `needle`. `needle` must contain a character that no word has.
///
/// # Errors
///
/// When a directory or file cannot be written.
pub(super) fn tree(dir: &Path, files: u32, needle: &str) -> io::Result<Tree> {
    let mut tree = Tree { files, bytes: 0, matches: 0 };
    for i in 0..files {
        let leaf = dir.join(format!("d{:03}", i / 100)).join(format!("d{}", i / 10 % 10));
        if i % 10 == 0 {
            std::fs::create_dir_all(&leaf)?;
        }
        let (text, matches) = text(i, needle);
        std::fs::write(leaf.join(format!("f{i:06}.txt")), &text)?;
        tree.bytes += text.len() as u64;
        tree.matches += matches;
    }
    Ok(tree)
}

/// Writes `len` pseudo-random bytes to `path`, every byte value about as often as another.
///
/// # Errors
///
/// When the file cannot be written.
pub(super) fn bytes(path: &Path, len: usize) -> io::Result<()> {
    let mut rng = Rng::new(0xb17e_5000_0000_0000);
    let bytes: Vec<u8> = (0..len).map(|_| rng.next().to_le_bytes()[7]).collect();
    std::fs::write(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees_are_the_same_every_time_and_count_their_needles() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let first = tree(&a.path().join("t"), 250, "wrt-needle").unwrap();
        let second = tree(&b.path().join("t"), 250, "wrt-needle").unwrap();
        assert_eq!(first, second);
        assert_eq!(first.files, 250);
        // About 2 KiB a file, in lines of about 60 bytes, one in eight with the needle: about
        // four a file.
        let per_file = first.bytes / 250;
        assert!((1536..=2600).contains(&per_file), "{first:?}");
        assert!((750..=1500).contains(&first.matches), "{first:?}");
        let file = a.path().join("t/d002/d4/f000245.txt");
        assert_eq!(std::fs::read(&file).unwrap(), std::fs::read(b.path().join("t/d002/d4/f000245.txt")).unwrap());
        let text = std::fs::read_to_string(&file).unwrap();
        let counted = text.lines().filter(|l| l.contains("wrt-needle")).count() as u64;
        assert_eq!(counted, self::text(245, "wrt-needle").1);
        assert_eq!(first.summary(), format!("files=250 bytes={} matches={}\n", first.bytes, first.matches));
    }

    /// The default tree is the same from one version to the next, so that runs of different
    /// versions walk the same files (docs/benchmarks.md quotes this line).
    #[test]
    fn the_default_tree_stays_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let tree = tree(&dir.path().join("t"), 2000, "wrt-needle").unwrap();
        assert_eq!(tree.summary(), "files=2000 bytes=4168732 matches=8691\n");
    }

    #[test]
    fn bytes_are_the_same_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        bytes(&a, 4096).unwrap();
        bytes(&b, 4096).unwrap();
        let data = std::fs::read(&a).unwrap();
        assert_eq!(data, std::fs::read(&b).unwrap());
        assert_eq!(data.len(), 4096);
        // All 256 values, none of them most of the file.
        let mut seen = [0_u32; 256];
        data.iter().for_each(|&b| seen[usize::from(b)] += 1);
        assert!(seen.iter().all(|&n| (1..64).contains(&n)), "{seen:?}");
    }
}

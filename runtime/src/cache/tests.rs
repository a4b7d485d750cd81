use std::io::Write;

use super::*;

#[test]
fn entries_decompress_with_or_without_their_size() {
    let bytes: Vec<u8> = (0..100_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
    let sized = zstd::bulk::compress(&bytes, ZSTD_LEVEL).unwrap();
    assert!(matches!(zstd::zstd_safe::get_frame_content_size(&sized), Ok(Some(_))));
    assert_eq!(decompress(&sized).unwrap(), bytes);
    // A streamed frame records no size: it is read by streaming.
    let mut encoder = zstd::Encoder::new(Vec::new(), ZSTD_LEVEL).unwrap();
    encoder.write_all(&bytes).unwrap();
    let streamed = encoder.finish().unwrap();
    assert!(matches!(zstd::zstd_safe::get_frame_content_size(&streamed), Ok(None)));
    assert_eq!(decompress(&streamed).unwrap(), bytes);
}

#[test]
fn a_corrupt_entry_is_refused_without_allocating_what_it_claims() {
    let bytes = vec![7u8; 4096];
    let mut sized = zstd::bulk::compress(&bytes, ZSTD_LEVEL).unwrap();
    // Claim 2^62 bytes: the header's single-segment size field is rewritten.
    let frame = zstd::zstd_safe::get_frame_content_size(&sized).unwrap();
    assert_eq!(frame, Some(4096));
    sized[4] = 0xe0; // frame header descriptor: 8-byte content size, single segment
    let claimed = 1u64 << 62;
    sized.splice(5..7, claimed.to_le_bytes());
    assert_eq!(zstd::zstd_safe::get_frame_content_size(&sized).unwrap(), Some(claimed));
    assert!(decompress(&sized).is_none());
    assert!(decompress(b"not zstd").is_none());
    assert!(decompress(&[]).is_none());
}

/// A compiled empty module, and what `load_or_compile` reports.
fn load(engine: &Engine, dir: &Path) -> (bool, Vec<String>) {
    let mut unusable = Vec::new();
    let compile = || Ok(crate::guest::Compiled::Module(wasmtime::Module::new(engine, "(module)")?));
    let (_, hit) = load_or_compile(engine, dir, b"(module)", compile, |e| unusable.push(e.to_string())).unwrap();
    (hit, unusable)
}

fn stored(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
}

#[test]
fn a_file_system_without_user_attributes_runs_without_the_cache() {
    let engine = Engine::default();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("modules");
    crate::sys::xattr::tests::inject(Some(Errno::ENOTSUP));
    for _ in 0..2 {
        let (hit, unusable) = load(&engine, &dir);
        assert!(!hit);
        assert_eq!(
            unusable,
            [format!(
                "cache directory `{}` is on a file system without user extended attributes, which hold the cache's key",
                dir.display()
            )]
        );
    }
    assert!(stored(&dir).is_empty());
    crate::sys::xattr::tests::inject(None);
    assert_eq!(load(&engine, &dir), (false, vec![]));
    assert_eq!(load(&engine, &dir), (true, vec![]));
}

#[test]
fn an_entry_is_loaded_only_with_its_mac() {
    let engine = Engine::default();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("modules");
    assert_eq!(load(&engine, &dir), (false, vec![]));
    let [entry] = stored(&dir).try_into().unwrap();
    let authentic = std::fs::read(&entry).unwrap();
    // One bit of the code, or of the MAC, changed; the MAC alone; nothing.
    let mut code = authentic.clone();
    *code.last_mut().unwrap() ^= 1;
    let mut mac = authentic.clone();
    mac[0] ^= 1;
    for tampered in [code, mac, authentic[..MAC_LEN].to_vec(), Vec::new()] {
        std::fs::write(&entry, &tampered).unwrap();
        assert_eq!(load(&engine, &dir), (false, vec![]));
        assert_eq!(std::fs::read(&entry).unwrap(), authentic, "replaced");
    }
    // A new key (the attribute removed, or of another length) invalidates every entry.
    let cache = CacheDir::open(&dir).unwrap();
    crate::sys::xattr::set(cache.fd.as_fd(), CACHE_KEY_ATTR_C, b"short", false).unwrap();
    assert_eq!(load(&engine, &dir), (false, vec![]));
    assert_eq!(load(&engine, &dir), (true, vec![]));
    assert_ne!(CacheDir::open(&dir).unwrap().key, cache.key);
}

use super::*;

/// A compiled empty module, and what `load_or_compile` reports.
fn load(engine: &Engine, dir: &Path) -> (bool, Vec<String>) {
    load_text(engine, dir, "(module)", DEFAULT_CACHE_LIMIT)
}

/// The module `text`, compiled or loaded under `limit`, and what `load_or_compile` reports.
fn load_text(engine: &Engine, dir: &Path, text: &str, limit: u64) -> (bool, Vec<String>) {
    let mut unusable = Vec::new();
    let compile = || Ok(Compiled::Module(Module::new(engine, text)?));
    let (module, hit) =
        load_or_compile(engine, dir, limit, text.as_bytes(), Load::Map, compile, |e| unusable.push(e.to_string()))
            .unwrap();
    // The loaded code runs.
    let Compiled::Module(module) = module else { panic!("a module") };
    let mut store = wasmtime::Store::new(engine, ());
    wasmtime::Instance::new(&mut store, &module, &[]).unwrap();
    (hit, unusable)
}

fn mac_of(entry: &Path) -> Vec<u8> {
    let file = File::open(entry).unwrap();
    let mut mac = [0u8; 64];
    let len = crate::sys::xattr::get(file.as_fd(), ENTRY_MAC_ATTR_C, &mut mac).unwrap();
    mac[..len].to_vec()
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
    let authentic_mac = mac_of(&entry);
    // One bit of the code changed; the code cut short; nothing.
    let mut code = authentic.clone();
    *code.last_mut().unwrap() ^= 1;
    for tampered in [code, authentic[..authentic.len() / 2].to_vec(), Vec::new()] {
        std::fs::write(&entry, &tampered).unwrap();
        assert_eq!(load(&engine, &dir), (false, vec![]));
        assert_eq!(std::fs::read(&entry).unwrap(), authentic, "replaced");
        assert_eq!(mac_of(&entry), authentic_mac);
    }
    // One bit of the MAC changed; the MAC cut short; no MAC.
    let mut flipped = authentic_mac.clone();
    flipped[0] ^= 1;
    for mac in [Some(flipped), Some(authentic_mac[..16].to_vec()), None] {
        let file = File::open(&entry).unwrap();
        match &mac {
            Some(mac) => crate::sys::xattr::set(file.as_fd(), ENTRY_MAC_ATTR_C, mac, false).unwrap(),
            None => {
                // A fresh file under the name, without the attribute.
                std::fs::remove_file(&entry).unwrap();
                std::fs::write(&entry, &authentic).unwrap();
            }
        }
        assert_eq!(load(&engine, &dir), (false, vec![]), "{mac:?}");
        assert_eq!(mac_of(&entry), authentic_mac, "replaced");
    }
    // A new key (the attribute removed, or of another length) invalidates every entry.
    let cache = CacheDir::open(&dir).unwrap();
    crate::sys::xattr::set(cache.fd.as_fd(), CACHE_KEY_ATTR_C, b"short", false).unwrap();
    assert_eq!(load(&engine, &dir), (false, vec![]));
    assert_eq!(load(&engine, &dir), (true, vec![]));
    assert_ne!(CacheDir::open(&dir).unwrap().key, cache.key);
}

/// Past its limit, the cache removes the entries used longest ago, never the one just stored.
#[test]
fn the_cache_stays_within_its_limit_dropping_the_least_recently_used() {
    let engine = Engine::default();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("modules");
    let module = |n: u32| format!("(module (func (export \"f{n}\") (result i32) i32.const {n}))");
    let usage = || CacheMode::Dir(dir.clone()).usage().unwrap();
    assert_eq!(load_text(&engine, &dir, &module(1), DEFAULT_CACHE_LIMIT), (false, vec![]));
    let one = usage().bytes;
    // Room for two entries, not three.
    let limit = one * 5 / 2;
    assert_eq!(load_text(&engine, &dir, &module(2), limit), (false, vec![]));
    assert_eq!(usage().entries, 2);
    // Using the first makes the second the one used longest ago.
    assert_eq!(load_text(&engine, &dir, &module(1), limit), (true, vec![]));
    assert_eq!(load_text(&engine, &dir, &module(3), limit), (false, vec![]));
    assert_eq!(usage().entries, 2);
    assert!(usage().bytes <= limit, "{} > {limit}", usage().bytes);
    assert_eq!(load_text(&engine, &dir, &module(1), limit), (true, vec![]), "kept: used recently");
    assert_eq!(load_text(&engine, &dir, &module(3), limit), (true, vec![]), "kept: just stored");
    assert_eq!(load_text(&engine, &dir, &module(2), limit), (false, vec![]), "removed");
    // A limit below one entry keeps the entry just stored, and only it.
    assert_eq!(load_text(&engine, &dir, &module(4), 1), (false, vec![]));
    assert_eq!(usage().entries, 1);
    assert_eq!(load_text(&engine, &dir, &module(4), 1), (true, vec![]));
}

//! Conformance tests for the `Store` implementations: one suite run against both
//! `MemoryStore` and `RocksStore`, plus what only one of them can do (survive a reopen,
//! refuse a second opener, simulate a failed write).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use mobiwf_runtime::store::{Batch, Durability, MemoryStore, RocksStore, Store};
use tempfile::TempDir;

fn put(store: &dyn Store, key: &[u8], value: &[u8]) {
    let mut batch = Batch::default();
    batch.put(key, value);
    store.write(batch, Durability::Synced).unwrap();
}

fn delete(store: &dyn Store, key: &[u8]) {
    let mut batch = Batch::default();
    batch.delete(key);
    store.write(batch, Durability::Synced).unwrap();
}

fn keys(entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<Vec<u8>> {
    entries.iter().map(|(k, _)| k.clone()).collect()
}

// ---- the conformance suite -------------------------------------------------------------

fn put_and_get(store: &dyn Store) {
    assert_eq!(store.get(b"a").unwrap(), None);
    put(store, b"a", b"1");
    put(store, b"b", b"");
    assert_eq!(store.get(b"a").unwrap(), Some(b"1".to_vec()));
    // An empty value is a value, not an absence.
    assert_eq!(store.get(b"b").unwrap(), Some(Vec::new()));
    assert_eq!(store.get(b"c").unwrap(), None);
    // Binary keys and values round-trip.
    put(store, &[0, 0xff, 0x80], &[0xff, 0, 1]);
    assert_eq!(store.get(&[0, 0xff, 0x80]).unwrap(), Some(vec![0xff, 0, 1]));
}

fn overwrite(store: &dyn Store) {
    put(store, b"k", b"first");
    put(store, b"k", b"second");
    assert_eq!(store.get(b"k").unwrap(), Some(b"second".to_vec()));
    assert_eq!(store.scan_prefix(b"k").unwrap().len(), 1);
}

fn delete_entries(store: &dyn Store) {
    put(store, b"k", b"v");
    delete(store, b"k");
    assert_eq!(store.get(b"k").unwrap(), None);
    assert!(store.scan_prefix(b"").unwrap().is_empty());
    // Deleting what is absent is no error.
    delete(store, b"never-there");
    // A key can come back after deletion.
    put(store, b"k", b"again");
    assert_eq!(store.get(b"k").unwrap(), Some(b"again".to_vec()));
}

fn batch_applies_in_order(store: &dyn Store) {
    put(store, b"old", b"x");
    let mut batch = Batch::default();
    batch.put(b"a".to_vec(), b"1".to_vec());
    batch.put(b"a".to_vec(), b"2".to_vec()); // later put wins
    batch.put(b"b".to_vec(), b"1".to_vec());
    batch.delete(b"b".to_vec()); // delete after put: gone
    batch.delete(b"c".to_vec());
    batch.put(b"c".to_vec(), b"3".to_vec()); // put after delete: present
    batch.delete(b"old".to_vec());
    store.write(batch, Durability::Synced).unwrap();
    assert_eq!(store.get(b"a").unwrap(), Some(b"2".to_vec()));
    assert_eq!(store.get(b"b").unwrap(), None);
    assert_eq!(store.get(b"c").unwrap(), Some(b"3".to_vec()));
    assert_eq!(store.get(b"old").unwrap(), None);
    assert_eq!(
        keys(&store.scan_prefix(b"").unwrap()),
        vec![b"a".to_vec(), b"c".to_vec()]
    );
}

fn empty_batch_and_lazy(store: &dyn Store) {
    store.write(Batch::default(), Durability::Synced).unwrap();
    store.write(Batch::default(), Durability::Lazy).unwrap();
    let mut batch = Batch::default();
    batch.put(b"lazy".to_vec(), b"1".to_vec());
    store.write(batch, Durability::Lazy).unwrap();
    // Lazy writes are visible to the process at once.
    assert_eq!(store.get(b"lazy").unwrap(), Some(b"1".to_vec()));
}

fn scan_prefix_boundaries(store: &dyn Store) {
    let all: Vec<&[u8]> = vec![
        b"",
        b"a",
        b"ab",
        b"ab\x00",
        b"ab\xff",
        b"ab\xff\xff",
        b"ac",
        b"b",
        b"\xff",
        b"\xff\x00",
        b"\xff\xff",
        b"\xff\xff\xff",
    ];
    // Write them in a scrambled order: scans must come back in key order regardless.
    let mut batch = Batch::default();
    for key in all.iter().rev() {
        batch.put(key.to_vec(), [b"v:", *key].concat());
    }
    store.write(batch, Durability::Synced).unwrap();

    let expect = |prefix: &[u8], want: &[&[u8]]| {
        let got = store.scan_prefix(prefix).unwrap();
        let want: Vec<Vec<u8>> = want.iter().map(|k| k.to_vec()).collect();
        assert_eq!(keys(&got), want, "scan_prefix({prefix:?})");
        for (key, value) in &got {
            assert_eq!(value, &[b"v:", key.as_slice()].concat());
        }
    };

    // The empty prefix is everything, including the empty key, in order.
    expect(b"", &all);
    expect(
        b"a",
        &[b"a", b"ab", b"ab\x00", b"ab\xff", b"ab\xff\xff", b"ac"],
    );
    expect(b"ab", &[b"ab", b"ab\x00", b"ab\xff", b"ab\xff\xff"]);
    expect(b"ab\xff", &[b"ab\xff", b"ab\xff\xff"]);
    expect(b"ab\xff\xff", &[b"ab\xff\xff"]);
    expect(b"ab\xff\xff\xff", &[]);
    expect(b"b", &[b"b"]);
    expect(
        b"\xff",
        &[b"\xff", b"\xff\x00", b"\xff\xff", b"\xff\xff\xff"],
    );
    expect(b"\xff\xff", &[b"\xff\xff", b"\xff\xff\xff"]);
    expect(b"\xff\xff\xff\xff", &[]);
    // Prefixes that fall between keys, or before or after all of them.
    expect(b"aa", &[]);
    expect(b"abc", &[]);
    expect(b"\x00", &[]);
    expect(b"c", &[]);
}

macro_rules! conformance {
    ($module:ident, $make:expr) => {
        mod $module {
            use super::*;

            #[test]
            fn put_and_get() {
                let (store, _guard) = $make;
                super::put_and_get(&store);
            }

            #[test]
            fn overwrite() {
                let (store, _guard) = $make;
                super::overwrite(&store);
            }

            #[test]
            fn delete() {
                let (store, _guard) = $make;
                super::delete_entries(&store);
            }

            #[test]
            fn batch_applies_in_order() {
                let (store, _guard) = $make;
                super::batch_applies_in_order(&store);
            }

            #[test]
            fn empty_batch_and_lazy() {
                let (store, _guard) = $make;
                super::empty_batch_and_lazy(&store);
            }

            #[test]
            fn scan_prefix_boundaries() {
                let (store, _guard) = $make;
                super::scan_prefix_boundaries(&store);
            }
        }
    };
}

fn memory() -> (MemoryStore, ()) {
    (MemoryStore::new(), ())
}

fn rocks() -> (RocksStore, TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = RocksStore::open(&dir.path().join("db")).unwrap();
    (store, dir)
}

conformance!(memory_store, memory());
conformance!(rocks_store, rocks());

// ---- RocksStore only ---------------------------------------------------------------------

#[test]
fn rocks_synced_writes_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let store = RocksStore::open(&path).unwrap();
        let mut batch = Batch::default();
        batch.put(b"job/1".to_vec(), b"running".to_vec());
        batch.put(b"job/2".to_vec(), b"done".to_vec());
        batch.put(b"other".to_vec(), b"x".to_vec());
        store.write(batch, Durability::Synced).unwrap();
        let mut batch = Batch::default();
        batch.delete(b"job/2".to_vec());
        batch.put(b"job/1".to_vec(), b"done".to_vec());
        store.write(batch, Durability::Synced).unwrap();
    }
    let store = RocksStore::open(&path).unwrap();
    assert_eq!(store.get(b"job/1").unwrap(), Some(b"done".to_vec()));
    assert_eq!(store.get(b"job/2").unwrap(), None);
    assert_eq!(
        store.scan_prefix(b"job/").unwrap(),
        vec![(b"job/1".to_vec(), b"done".to_vec())]
    );
    assert_eq!(store.get(b"other").unwrap(), Some(b"x".to_vec()));
}

#[test]
fn rocks_second_open_of_same_dir_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let _first = RocksStore::open(&path).unwrap();
    let err = RocksStore::open(&path).unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        err.contains("is another mobiwf process using this data directory?"),
        "{err}"
    );
}

#[test]
fn rocks_open_of_unusable_path_names_it() {
    let dir = tempfile::tempdir().unwrap();
    // A regular file where the database directory should be.
    let path = dir.path().join("not-a-dir");
    std::fs::write(&path, b"").unwrap();
    let err = RocksStore::open(&path).unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
}

// ---- MemoryStore only --------------------------------------------------------------------

#[test]
fn memory_fail_writes_changes_nothing() {
    let store = MemoryStore::new();
    put(&store, b"k", b"before");

    store.fail_writes(true);
    let mut batch = Batch::default();
    batch.put(b"k".to_vec(), b"after".to_vec());
    batch.put(b"new".to_vec(), b"1".to_vec());
    assert!(store.write(batch.clone(), Durability::Synced).is_err());
    assert!(store.write(batch.clone(), Durability::Lazy).is_err());
    // Nothing of the failed batches is visible; reads still work.
    assert_eq!(store.get(b"k").unwrap(), Some(b"before".to_vec()));
    assert_eq!(store.get(b"new").unwrap(), None);
    assert_eq!(store.scan_prefix(b"").unwrap().len(), 1);

    store.fail_writes(false);
    store.write(batch, Durability::Synced).unwrap();
    assert_eq!(store.get(b"k").unwrap(), Some(b"after".to_vec()));
    assert_eq!(store.get(b"new").unwrap(), Some(b"1".to_vec()));
}

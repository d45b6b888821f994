//! Hash index and table of `service.point_select`: every inserted key is found at its row,
//! absent keys are rejected, and a select returns the checksum of the right row.

use hwsurvey_workloads::service::index::HashIndex;
use hwsurvey_workloads::service::rng::SplitMix64;
use hwsurvey_workloads::service::table::{key_of, row_checksum, Table, WordStorage, ROW_BYTES};
use hwsurvey_workloads::service::{PointSelect, ServiceError};
use std::collections::HashSet;

fn storage(words: usize) -> Box<dyn WordStorage> {
    Box::new(vec![0u64; words])
}

#[test]
fn every_inserted_key_is_found_at_its_row() {
    let rows = 100_000;
    let ps = PointSelect::build(
        rows,
        storage(Table::required_words(rows)),
        storage(HashIndex::required_words(rows)),
    )
    .unwrap();
    assert_eq!(ps.index().len(), rows);
    for i in 0..rows {
        assert_eq!(ps.index().get(key_of(i as u64)), Some(i), "row {i}");
    }
    // 100_000 keys -> 262_144 slots of 16 bytes; rows of 128 bytes.
    assert_eq!(ps.index().slot_bytes(), 262_144 * 16);
    assert_eq!(ps.table().data_bytes(), 100_000 * ROW_BYTES as u64);
}

#[test]
fn absent_keys_are_rejected() {
    let rows = 50_000;
    let ps = PointSelect::build(
        rows,
        storage(Table::required_words(rows)),
        storage(HashIndex::required_words(rows)),
    )
    .unwrap();
    // Keys of rows past the end are not in the table (key_of is a bijection).
    for i in rows..rows + 50_000 {
        assert_eq!(ps.index().get(key_of(i as u64)), None, "row {i}");
        assert_eq!(ps.select(key_of(i as u64)), None);
    }
    // Arbitrary keys, including 0 and u64::MAX, unless they happen to be present.
    let present: HashSet<u64> = (0..rows as u64).map(key_of).collect();
    let mut g = SplitMix64::new(99);
    let probes = [0, 1, u64::MAX, u64::MAX - 1]
        .into_iter()
        .chain((0..50_000).map(|_| g.next_u64()));
    for k in probes {
        assert_eq!(
            ps.index().get(k).is_some(),
            present.contains(&k),
            "key {k:#x}"
        );
    }
}

#[test]
fn select_returns_the_checksum_of_the_keyed_row() {
    let rows = 1000;
    let ps = PointSelect::build(
        rows,
        storage(Table::required_words(rows)),
        storage(HashIndex::required_words(rows)),
    )
    .unwrap();
    for i in [0usize, 1, 499, 999] {
        let expect = row_checksum(ps.table().row(i).unwrap());
        assert_eq!(ps.select(key_of(i as u64)), Some(expect));
    }
    // select_random only ever picks present rows: no miss (0) over many draws.
    let mut g = SplitMix64::new(1);
    let mut seen = HashSet::new();
    for _ in 0..20_000 {
        let c = ps.select_random(g.next_u64());
        assert_ne!(c, 0);
        seen.insert(c);
    }
    // Uniform over 1000 rows: 20_000 draws reach (nearly) all of them.
    assert!(seen.len() > 990, "{} distinct rows", seen.len());
}

#[test]
fn arbitrary_keys_including_zero_and_max_round_trip() {
    let mut idx = HashIndex::new(8, storage(HashIndex::required_words(8))).unwrap();
    let keys = [0u64, u64::MAX, 1, 1 << 63, 42, 43, 44, 45];
    for (row, &k) in keys.iter().enumerate() {
        idx.insert(k, row).unwrap();
    }
    for (row, &k) in keys.iter().enumerate() {
        assert_eq!(idx.get(k), Some(row));
    }
    assert_eq!(idx.get(2), None);
}

#[test]
fn duplicate_full_and_small_storage_are_typed_errors() {
    let mut idx = HashIndex::new(2, storage(HashIndex::required_words(2))).unwrap();
    idx.insert(7, 0).unwrap();
    assert!(matches!(
        idx.insert(7, 1),
        Err(ServiceError::DuplicateKey { key: 7 })
    ));
    // 2 entries -> 4 slots -> capacity 2 at load factor 1/2.
    idx.insert(8, 1).unwrap();
    assert!(matches!(
        idx.insert(9, 2),
        Err(ServiceError::IndexFull { capacity: 2 })
    ));
    let e = HashIndex::new(1000, storage(10)).err().unwrap();
    assert_eq!(
        e.to_string(),
        "index storage too small: needs 4096 words, got 10"
    );
}

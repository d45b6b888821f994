//! The in-memory table of `service.point_select`: fixed-size rows in one flat allocation.
//!
//! A row is [`ROW_WORDS`] native-endian `u64` words ([`ROW_BYTES`] bytes): word 0 is the key,
//! the other words are payload derived from the key, so any row read can be verified. Keys are
//! `key_of(row)`, a bijection of the row number, so they are distinct and scattered over `u64`.
//! Memory comes from a [`WordStorage`], so the caller chooses the page backing (base pages,
//! THP via madvise, hugetlbfs) and this module stays free of system calls.

use super::rng::mix64;
use super::ServiceError;

/// Words per row.
pub const ROW_WORDS: usize = 16;
/// Bytes per row (128: two 64-byte cache lines, one on machines with 128-byte lines).
pub const ROW_BYTES: usize = ROW_WORDS * 8;

/// Memory that holds `u64` words: a `Vec<u64>`, or a mapping with a chosen page mode.
pub trait WordStorage: Send + Sync {
    /// The words, shared.
    fn words(&self) -> &[u64];
    /// The words, exclusive.
    fn words_mut(&mut self) -> &mut [u64];
    /// What backs the memory (page sizes obtained), when the storage can tell; call after the
    /// memory was touched. `None` for plain heap memory.
    fn backing(&self) -> Option<serde_json::Value> {
        None
    }
}

impl WordStorage for Vec<u64> {
    fn words(&self) -> &[u64] {
        self
    }
    fn words_mut(&mut self) -> &mut [u64] {
        self
    }
}

/// The key stored in row `row`.
#[inline]
pub fn key_of(row: u64) -> u64 {
    mix64(row ^ 0x5eed_7ab1_e000_0000)
}

/// Payload word `word` (1..ROW_WORDS) of the row whose key is `key`.
#[inline]
fn payload(key: u64, word: usize) -> u64 {
    mix64(key.wrapping_add(word as u64))
}

/// Checksum of one row as a point select computes it: a rotate-xor-add fold of every word.
#[inline]
pub fn row_checksum(row: &[u64]) -> u64 {
    row.iter().fold(0u64, |acc, &w| {
        acc.rotate_left(5).wrapping_add(w) ^ (w >> 17)
    })
}

/// A table of `rows` rows of [`ROW_BYTES`] bytes each.
pub struct Table {
    storage: Box<dyn WordStorage>,
    rows: usize,
}

impl Table {
    /// Words of storage a table of `rows` rows needs.
    pub fn required_words(rows: usize) -> usize {
        rows.saturating_mul(ROW_WORDS)
    }

    /// Fills `storage` with `rows` rows (row `i` has key `key_of(i)`).
    ///
    /// Errors: [`ServiceError::StorageTooSmall`] when `storage` has fewer than
    /// [`Table::required_words`] words.
    pub fn build(rows: usize, mut storage: Box<dyn WordStorage>) -> Result<Self, ServiceError> {
        let needed = Self::required_words(rows);
        let words = storage.words_mut();
        if words.len() < needed {
            return Err(ServiceError::StorageTooSmall {
                what: "table",
                needed_words: needed,
                got_words: words.len(),
            });
        }
        for (i, row) in words[..needed].chunks_exact_mut(ROW_WORDS).enumerate() {
            let key = key_of(i as u64);
            row[0] = key;
            for (w, slot) in row.iter_mut().enumerate().skip(1) {
                *slot = payload(key, w);
            }
        }
        Ok(Self { storage, rows })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Row `i`, or `None` past the end.
    #[inline]
    pub fn row(&self, i: usize) -> Option<&[u64]> {
        let start = i.checked_mul(ROW_WORDS)?;
        if i >= self.rows {
            return None;
        }
        self.storage.words().get(start..start + ROW_WORDS)
    }

    /// Whether row `i` holds exactly what [`Table::build`] wrote (key and payload).
    pub fn row_is_intact(&self, i: usize) -> bool {
        let Some(row) = self.row(i) else {
            return false;
        };
        let key = key_of(i as u64);
        row[0] == key && (1..ROW_WORDS).all(|w| row[w] == payload(key, w))
    }

    /// Bytes of row data (rows x [`ROW_BYTES`]).
    pub fn data_bytes(&self) -> u64 {
        (self.rows as u64) * ROW_BYTES as u64
    }

    /// What backs the row memory ([`WordStorage::backing`]).
    pub fn backing(&self) -> Option<serde_json::Value> {
        self.storage.backing()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_hold_their_keys_and_payload() {
        let t = Table::build(1000, Box::new(vec![0u64; Table::required_words(1000)])).unwrap();
        assert_eq!(t.rows(), 1000);
        assert!((0..1000).all(|i| t.row_is_intact(i)));
        assert_eq!(t.row(3).map(|r| r[0]), Some(key_of(3)));
        assert!(t.row(1000).is_none());
        assert_eq!(t.data_bytes(), 128_000);
    }

    #[test]
    fn too_small_storage_is_an_error_naming_sizes() {
        let e = Table::build(10, Box::new(vec![0u64; 159])).err().unwrap();
        assert_eq!(
            e.to_string(),
            "table storage too small: needs 160 words, got 159"
        );
    }

    #[test]
    fn checksum_depends_on_every_word() {
        let row: Vec<u64> = (0..ROW_WORDS as u64).collect();
        let base = row_checksum(&row);
        for i in 0..ROW_WORDS {
            let mut r = row.clone();
            r[i] ^= 1 << 40;
            assert_ne!(row_checksum(&r), base, "word {i}");
        }
    }
}

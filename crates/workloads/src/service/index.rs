//! Hash index of `service.point_select`: open addressing with linear probing, load factor
//! at most 1/2, slots stored as `[key, row + 1]` word pairs (a value word of 0 means empty, so
//! every `u64` is a valid key). Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4) picks the home
//! slot. Memory comes from a [`WordStorage`] so the page backing is the caller's choice.

use super::table::WordStorage;
use super::ServiceError;

/// Hash index from `u64` key to row number.
pub struct HashIndex {
    slots: Box<dyn WordStorage>,
    shift: u32,
    mask: usize,
    len: usize,
}

impl HashIndex {
    /// Slots for `entries` keys: the next power of two >= 2 x entries (at least 2).
    pub fn slots_for(entries: usize) -> usize {
        entries.saturating_mul(2).max(2).next_power_of_two()
    }

    /// Words of storage an index for `entries` keys needs (2 per slot).
    pub fn required_words(entries: usize) -> usize {
        Self::slots_for(entries).saturating_mul(2)
    }

    /// An empty index for up to `entries` keys over `storage` (zeroed here).
    ///
    /// Errors: [`ServiceError::StorageTooSmall`] when `storage` has fewer than
    /// [`HashIndex::required_words`] words.
    pub fn new(entries: usize, mut storage: Box<dyn WordStorage>) -> Result<Self, ServiceError> {
        let slots = Self::slots_for(entries);
        let needed = Self::required_words(entries);
        let words = storage.words_mut();
        if words.len() < needed {
            return Err(ServiceError::StorageTooSmall {
                what: "index",
                needed_words: needed,
                got_words: words.len(),
            });
        }
        words[..needed].fill(0);
        Ok(Self {
            slots: storage,
            shift: 64 - slots.trailing_zeros(),
            mask: slots - 1,
            len: 0,
        })
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// Number of keys inserted.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no key was inserted.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Maps `key` to `row`.
    ///
    /// Errors: [`ServiceError::DuplicateKey`] when `key` is present, [`ServiceError::IndexFull`]
    /// when the index already holds half its slots (the load factor it was sized for).
    pub fn insert(&mut self, key: u64, row: usize) -> Result<(), ServiceError> {
        // Load factor 1/2 of a power-of-two slot count.
        let capacity = (self.mask >> 1) + 1;
        if self.len >= capacity {
            return Err(ServiceError::IndexFull { capacity });
        }
        let mut i = self.home(key);
        let mask = self.mask;
        let words = self.slots.words_mut();
        loop {
            let (k, v) = (words[2 * i], words[2 * i + 1]);
            if v == 0 {
                words[2 * i] = key;
                words[2 * i + 1] = row as u64 + 1;
                self.len += 1;
                return Ok(());
            }
            if k == key {
                return Err(ServiceError::DuplicateKey { key });
            }
            i = (i + 1) & mask;
        }
    }

    /// Row of `key`, or `None` when absent.
    #[inline]
    pub fn get(&self, key: u64) -> Option<usize> {
        let words = self.slots.words();
        let mut i = self.home(key);
        loop {
            let k = *words.get(2 * i)?;
            let v = *words.get(2 * i + 1)?;
            if v == 0 {
                return None;
            }
            if k == key {
                return Some((v - 1) as usize);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Bytes of slot memory.
    pub fn slot_bytes(&self) -> u64 {
        (self.mask as u64 + 1) * 16
    }

    /// What backs the slot memory ([`WordStorage::backing`]).
    pub fn backing(&self) -> Option<serde_json::Value> {
        self.slots.backing()
    }
}

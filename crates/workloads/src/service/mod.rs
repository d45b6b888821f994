//! Latency-bounded throughput: the building blocks of `service.point_select` and
//! `mem.loaded_latency`.
//!
//! - [`table`] and [`index`]: an in-memory table of fixed-size rows and its hash index, over
//!   caller-provided memory (so the page backing is chosen outside);
//! - [`PointSelect`]: one point select (random key -> index -> row -> checksum);
//! - [`closed_loop`]: N client threads, each sending its next request as soon as the last one
//!   returned; throughput and latency per N;
//! - [`open_loop`]: fixed arrival rate, latency from the *intended* send time (no coordinated
//!   omission); [`search`]: highest rate whose p99 stays under a bound (critical-jOPS style);
//! - [`histogram`]: HdrHistogram-backed latency summaries with their error bound;
//! - [`loaded`]: chase latency while other threads stream memory;
//! - [`clock`]: the time seam ([`clock::ManualClock`] makes the rate limiter testable exactly).
//!
//! Nothing here makes a system call except reading the clock, sleeping and starting threads.

pub mod clock;
pub mod closed_loop;
pub mod histogram;
pub mod index;
pub mod loaded;
pub mod open_loop;
pub mod rng;
pub mod search;
pub mod table;

use index::HashIndex;
use table::{row_checksum, Table, WordStorage};

/// Errors of the service building blocks.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Provided memory is smaller than the structure needs.
    #[error("{what} storage too small: needs {needed_words} words, got {got_words}")]
    StorageTooSmall {
        /// "table" or "index".
        what: &'static str,
        /// Words needed.
        needed_words: usize,
        /// Words provided.
        got_words: usize,
    },
    /// A key was inserted twice.
    #[error("hash index: key {key:#018x} inserted twice")]
    DuplicateKey {
        /// The key.
        key: u64,
    },
    /// The index holds as many keys as it was sized for.
    #[error("hash index full: capacity {capacity} keys")]
    IndexFull {
        /// Keys it was sized for.
        capacity: usize,
    },
    /// A driver setting is out of range.
    #[error("bad service configuration: {0}")]
    BadConfig(String),
    /// The operating system refused a thread.
    #[error("could not start {threads} threads: {message}")]
    Spawn {
        /// Threads asked for.
        threads: usize,
        /// The OS error.
        message: String,
    },
}

/// The point-select service: a [`Table`] and a [`HashIndex`] over all its keys.
pub struct PointSelect {
    table: Table,
    index: HashIndex,
}

impl PointSelect {
    /// Builds a table of `rows` rows in `table_storage` and indexes every key in
    /// `index_storage` (sizes: [`Table::required_words`], [`HashIndex::required_words`]).
    ///
    /// Errors: storage too small ([`ServiceError::StorageTooSmall`]).
    pub fn build(
        rows: usize,
        table_storage: Box<dyn WordStorage>,
        index_storage: Box<dyn WordStorage>,
    ) -> Result<Self, ServiceError> {
        let table = Table::build(rows, table_storage)?;
        let mut index = HashIndex::new(rows, index_storage)?;
        for i in 0..rows {
            index.insert(table::key_of(i as u64), i)?;
        }
        Ok(Self { table, index })
    }

    /// The table.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The index.
    pub fn index(&self) -> &HashIndex {
        &self.index
    }

    /// Looks `key` up and returns the checksum of its row, `None` when absent.
    #[inline]
    pub fn select(&self, key: u64) -> Option<u64> {
        let row = self.index.get(key)?;
        self.table.row(row).map(row_checksum)
    }

    /// One request of the benchmark: the row picked by `r` (uniform over the rows), looked up
    /// by its key. Returns the row checksum (0 on a miss, which a correct index never has).
    #[inline]
    pub fn select_random(&self, r: u64) -> u64 {
        let row = rng::below(r, self.table.rows() as u64);
        self.select(table::key_of(row)).unwrap_or(0)
    }
}

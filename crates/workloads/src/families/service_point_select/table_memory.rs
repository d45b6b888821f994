//! The memory of `service.point_select`'s table and index: allocated with the point's page
//! mode ([`PageBuffer`], backing read back from `/proc/self/smaps`), the service built on it,
//! and the details every point records about it.

use std::time::Instant;

use super::TablePages;
use crate::service::index::HashIndex;
use crate::service::table::{Table, WordStorage, ROW_BYTES};
use crate::service::PointSelect;
use hwsurvey_engine::outcome::{Measurement, PointOutcome};
use hwsurvey_engine::pages::PageBuffer;

/// A [`PageBuffer`] seen as `u64` words.
struct PageWords(PageBuffer);

// On 64-bit targets `usize` and `u64` have the same size and alignment, so the buffer's `usize`
// words can be viewed as `u64` words. Elsewhere the family uses `Vec<u64>` (base pages only).
#[cfg(target_pointer_width = "64")]
impl WordStorage for PageWords {
    fn words(&self) -> &[u64] {
        let w = self.0.as_words();
        // SAFETY: usize and u64 are both 8 bytes with 8-byte alignment on 64-bit targets; the
        // slice is valid for reads while `&self` lives and every bit pattern is a u64.
        unsafe { std::slice::from_raw_parts(w.as_ptr().cast::<u64>(), w.len()) }
    }
    fn words_mut(&mut self) -> &mut [u64] {
        let w = self.0.as_words_mut();
        // SAFETY: as above; `&mut self` gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(w.as_mut_ptr().cast::<u64>(), w.len()) }
    }
    fn backing(&self) -> Option<serde_json::Value> {
        serde_json::to_value(self.0.verify()).ok()
    }
}

/// Allocated and built service with what backs it.
pub(super) struct Built {
    pub(super) service: PointSelect,
    pub(super) backing_table: serde_json::Value,
    pub(super) backing_index: serde_json::Value,
    pub(super) build_s: f64,
}

fn alloc_words(mode: TablePages, words: usize) -> Result<Box<dyn WordStorage>, String> {
    #[cfg(target_pointer_width = "64")]
    {
        PageBuffer::allocate(mode.mode(), words.max(1) * 8)
            .map(|b| Box::new(PageWords(b)) as Box<dyn WordStorage>)
            .map_err(|e| e.to_string())
    }
    #[cfg(not(target_pointer_width = "64"))]
    {
        let _ = PageBuffer::allocate;
        match mode {
            TablePages::Base => Ok(Box::new(vec![0u64; words])),
            TablePages::Thp => Err(format!("{} backing needs a 64-bit target", mode.mode())),
        }
    }
}

/// Allocates the table and index of `rows` rows with `mode`'s pages and builds the service.
pub(super) fn build(mode: TablePages, rows: u64) -> Result<Built, String> {
    let rows = usize::try_from(rows).map_err(|_| format!("{rows} rows do not fit usize"))?;
    let t0 = Instant::now();
    let table = alloc_words(mode, Table::required_words(rows))?;
    let index = alloc_words(mode, HashIndex::required_words(rows))?;
    let service = PointSelect::build(rows, table, index).map_err(|e| e.to_string())?;
    let build_s = t0.elapsed().as_secs_f64();
    Ok(Built {
        backing_table: service.table().backing().unwrap_or(serde_json::Value::Null),
        backing_index: service.index().backing().unwrap_or(serde_json::Value::Null),
        service,
        build_s,
    })
}

/// The details every point of `mode` records: the backing obtained, sizes, build time.
pub(super) fn base_details(b: &Built, mode: TablePages) -> Measurement {
    Measurement::default()
        .detail("page_mode_requested", mode)
        .detail("backing_table", &b.backing_table)
        .detail("backing_index", &b.backing_index)
        .detail("table_bytes", b.service.table().data_bytes())
        .detail("index_bytes", b.service.index().slot_bytes())
        .detail("row_bytes", ROW_BYTES)
        .detail("build_s", b.build_s)
        .detail("clients_pinned", false)
}

/// The outcome of a point whose table memory could not be had: THP skipped, base failed.
pub(super) fn unavailable(mode: TablePages, reason: String) -> PointOutcome {
    match mode {
        TablePages::Thp => PointOutcome::Skipped {
            reason: format!("THP table memory unavailable: {reason}"),
        },
        TablePages::Base => PointOutcome::Failed { error: reason },
    }
}

//! The page mode a point asks for (base pages, THP by `madvise`, a hugetlbfs page size), as
//! recorded in a result file. The engine allocates and verifies (`hwsurvey_engine::pages`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// How the pages of a buffer are to be backed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum PageMode {
    /// Base pages; `madvise(MADV_NOHUGEPAGE)` keeps THP "always" from promoting them.
    Base,
    /// Whatever the system's THP setting gives an anonymous mapping (no `madvise`), as STREAM
    /// and most programs run; the engine's `PageBuffer::verify` tells what that was.
    Default,
    /// Transparent huge pages requested by `madvise(MADV_HUGEPAGE)` on a PMD-aligned range.
    Thp,
    /// hugetlbfs pages of one size, `mmap(MAP_HUGETLB | log2(size) << MAP_HUGE_SHIFT)`; the size
    /// comes from `/sys/kernel/mm/hugepages/hugepages-<N>kB`.
    HugeTlb {
        /// Huge page size in bytes (e.g. 2097152).
        page_size_bytes: u64,
    },
}

impl PageMode {
    /// Short stable label for tables and result keys: `base`, `thp`, `hugetlb-2MiB`, `hugetlb-64KiB`.
    pub fn label(&self) -> String {
        match self {
            PageMode::Base => "base".to_string(),
            PageMode::Default => "default".to_string(),
            PageMode::Thp => "thp".to_string(),
            PageMode::HugeTlb { page_size_bytes } => {
                format!("hugetlb-{}", binary_size(*page_size_bytes))
            }
        }
    }
}

impl fmt::Display for PageMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// `2097152` -> `2MiB`, `65536` -> `64KiB`, `1073741824` -> `1GiB`; other values in bytes.
pub fn binary_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{}", bytes / unit, name);
        }
    }
    format!("{bytes}B")
}

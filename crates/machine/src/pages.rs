//! Pages: base page size, hugetlb pools of every size (system-wide and per NUMA node), the
//! total across sizes in bytes, and transparent huge pages (THP) with per-size mTHP settings.
//!
//! Sources: `sysconf(_SC_PAGESIZE)` on the live machine (the `sys` feature; without it
//! `/proc/self/smaps` `KernelPageSize`), `KernelPageSize` of a captured `/proc/self/smaps`, or
//! the architecture's fixed page size; `/sys/kernel/mm/hugepages/hugepages-<size>kB/
//! {nr,free,resv,surplus,nr_overcommit}_hugepages`; `/sys/devices/system/node/nodeN/hugepages`;
//! `/proc/meminfo` `Hugepagesize` (the default size only); `/sys/kernel/mm/transparent_hugepage/
//! {enabled,defrag,shmem_enabled,hpage_pmd_size,khugepaged/*,hugepages-<size>kB/{enabled,shmem_enabled}}`.
//!
//! numastat before numactl PR #157 summed only the default size's pool; here every size
//! is read and the totals are sums over sizes of pages x page size.

use crate::cpu::Arch;
use crate::memory::meminfo::{MeminfoFields, MEMINFO};
use crate::ParseError;
use hwsurvey_model::{NodeId, Probed, Unknown};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Pages of the machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pages {
    /// Base page size in bytes.
    pub base_page_size_bytes: Probed<u64>,
    /// How [`Pages::base_page_size_bytes`] was found.
    pub base_page_size_source: String,
    /// `Hugepagesize` of /proc/meminfo: the default huge page size, bytes.
    pub default_hugepage_size_bytes: Probed<u64>,
    /// One pool per huge page size, ascending.
    pub hugetlb: Vec<HugePool>,
    /// Where [`Pages::hugetlb`] came from: `/sys/kernel/mm/hugepages`, or, on kernels and
    /// captures without it, the default size's `HugePages_*` lines of `/proc/meminfo`.
    pub hugetlb_source: String,
    /// Sum over sizes of total pages x size, bytes (B10: 2 x 1 GiB + 1024 x 2 MiB = 4 GiB).
    pub hugetlb_total_bytes: Probed<u64>,
    /// Sum over sizes of free pages x size, bytes.
    pub hugetlb_free_bytes: Probed<u64>,
    /// Per node: sum over sizes of the node's pages x size.
    pub hugetlb_per_node: Vec<NodeHugeTotal>,
    /// Transparent huge pages.
    pub thp: Thp,
    /// Files that were there but could not be read or parsed.
    pub problems: Vec<Unknown>,
}

/// Counters of one pool (one size; system-wide or on one node).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolCounts {
    /// Huge page size, bytes.
    pub page_size_bytes: u64,
    /// `nr_hugepages`.
    pub total_pages: Probed<u64>,
    /// `free_hugepages`.
    pub free_pages: Probed<u64>,
    /// `resv_hugepages`; `None` in the per-node folders, which have no such file (the kernel
    /// keeps reservations system-wide only).
    pub reserved_pages: Option<Probed<u64>>,
    /// `surplus_hugepages`.
    pub surplus_pages: Probed<u64>,
    /// `total_pages x page_size_bytes`.
    pub total_bytes: Probed<u64>,
}

/// One huge page size, system-wide and per node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HugePool {
    /// System-wide counters.
    pub system: PoolCounts,
    /// `nr_overcommit_hugepages`.
    pub overcommit_pages: Probed<u64>,
    /// Per-node counters.
    pub per_node: Vec<(NodeId, PoolCounts)>,
}

impl HugePool {
    /// The pool's system-wide size and page counts, as a run environment and a result file's
    /// `environment.huge_pools[]` hold them. A count the probe could not read, or refused as
    /// implausible, stays unknown with its reason.
    pub fn totals(&self) -> PoolTotals {
        PoolTotals {
            page_size_bytes: self.system.page_size_bytes,
            total_pages: self.system.total_pages.clone(),
            free_pages: self.system.free_pages.clone(),
        }
    }
}

/// The system-wide counts of one hugetlb pool ([`HugePool::totals`]): what the plan, the
/// qualification rules and a result file's `environment.huge_pools[]` need of a pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolTotals {
    /// Huge page size, bytes (the folder name `hugepages-<N>kB`, kB = KiB).
    pub page_size_bytes: u64,
    /// `nr_hugepages`.
    pub total_pages: Probed<u64>,
    /// `free_hugepages`.
    pub free_pages: Probed<u64>,
}

/// Huge page memory of one node, all sizes together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeHugeTotal {
    /// Node id.
    pub node: NodeId,
    /// Sum over sizes of pages x size, bytes.
    pub total_bytes: Probed<u64>,
    /// Sum over sizes of free pages x size, bytes.
    pub free_bytes: Probed<u64>,
}

/// A sysfs multiple-choice setting such as `always [madvise] never`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// The bracketed choice.
    pub selected: String,
    /// All choices offered.
    pub choices: Vec<String>,
}

/// Parses `always [madvise] never` into the selected and offered choices.
pub fn parse_choice(text: &str) -> Option<Choice> {
    let mut selected = None;
    let mut choices = Vec::new();
    for w in text.split_whitespace() {
        if let Some(inner) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            if selected.is_some() || inner.is_empty() {
                return None;
            }
            selected = Some(inner.to_string());
            choices.push(inner.to_string());
        } else if w.contains('[') || w.contains(']') {
            return None;
        } else {
            choices.push(w.to_string());
        }
    }
    Some(Choice {
        selected: selected?,
        choices,
    })
}

/// Transparent huge pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thp {
    /// `enabled`.
    pub enabled: Probed<Choice>,
    /// `defrag`.
    pub defrag: Probed<Choice>,
    /// `shmem_enabled`.
    pub shmem_enabled: Probed<Choice>,
    /// `hpage_pmd_size`, bytes.
    pub pmd_size_bytes: Probed<u64>,
    /// `khugepaged/*` values (defrag, pages_to_scan, scan_sleep_millisecs, ...), as written.
    pub khugepaged: BTreeMap<String, String>,
    /// Per-size (mTHP, kernel >= 6.8) settings, ascending by size.
    pub sizes: Vec<MthpSize>,
}

/// One mTHP size's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MthpSize {
    /// Folio size, bytes.
    pub size_bytes: u64,
    /// `hugepages-<size>kB/enabled` (`inherit` follows the top-level `enabled`).
    pub enabled: Probed<Choice>,
    /// `hugepages-<size>kB/shmem_enabled`.
    pub shmem_enabled: Probed<Choice>,
}

/// `hugepages-2048kB` -> 2 MiB in bytes (the kernel's "kB" here is KiB).
pub fn parse_hugepages_dir_name(name: &str) -> Option<u64> {
    name.strip_prefix("hugepages-")?
        .strip_suffix("kB")?
        .parse::<u64>()
        .ok()?
        .checked_mul(1024)
        .filter(|s| *s > 0)
}

/// The huge page lines of /proc/meminfo: the default size's pool and, since Linux 4.16,
/// `Hugetlb:` (all sizes together, kB = KiB).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeminfoHuge {
    /// `HugePages_Total`.
    pub total_pages: u64,
    /// `HugePages_Free`.
    pub free_pages: u64,
    /// `HugePages_Rsvd`.
    pub reserved_pages: u64,
    /// `HugePages_Surp`.
    pub surplus_pages: u64,
    /// `Hugepagesize`, bytes.
    pub page_size_bytes: u64,
    /// `Hugetlb`, bytes (all sizes), when the kernel prints it.
    pub hugetlb_bytes: Option<u64>,
}

/// `Hugepagesize` of `/proc/meminfo` (parsed by [`crate::memory::meminfo::parse_meminfo`]),
/// bytes: the default huge page size; `Ok(None)` when the line is absent.
///
/// # Errors
/// [`ParseError`] naming the line when it is not `N kB`.
pub fn default_hugepage_size_bytes(fields: &MeminfoFields) -> Result<Option<u64>, ParseError> {
    fields.bytes("Hugepagesize")
}

impl MeminfoHuge {
    /// The huge page lines of `/proc/meminfo` (parsed by
    /// [`crate::memory::meminfo::parse_meminfo`]); `Ok(None)` when the pool lines are absent
    /// (a kernel without hugetlb).
    ///
    /// # Errors
    /// [`ParseError`] naming the line: a pool line whose count is not a number, or a
    /// `Hugepagesize` that is not `N kB`; a pool without its `Hugepagesize` line.
    pub fn of(fields: &MeminfoFields) -> Result<Option<MeminfoHuge>, ParseError> {
        let Some(total_pages) = fields.count("HugePages_Total")? else {
            return Ok(None);
        };
        let count = |key: &str| -> Result<u64, ParseError> {
            fields
                .count(key)?
                .ok_or_else(|| ParseError::new(MEMINFO, format!("a {key} line"), "no such line"))
        };
        Ok(Some(MeminfoHuge {
            total_pages,
            free_pages: count("HugePages_Free")?,
            reserved_pages: count("HugePages_Rsvd")?,
            surplus_pages: count("HugePages_Surp")?,
            page_size_bytes: fields
                .bytes("Hugepagesize")?
                .ok_or_else(|| ParseError::new(MEMINFO, "a Hugepagesize line", "no such line"))?,
            hugetlb_bytes: fields.bytes("Hugetlb")?,
        }))
    }
}

/// The base page size an architecture always has, or, for aarch64 (4/16/64 KiB kernels), what
/// its hugetlb sizes imply: a 64 KiB (contiguous-PTE) size exists only with 4 KiB pages, a
/// 512 MiB size only with 64 KiB pages. `None` when nothing tells.
pub fn infer_base_page_size(arch: Arch, hugepage_sizes: &[u64]) -> Option<(u64, String)> {
    match arch {
        Arch::X86_64 | Arch::X86 => Some((4096, "x86 base pages are always 4 KiB".into())),
        Arch::Sparc64 => Some((8192, "Linux on sparc64 uses 8 KiB pages".into())),
        Arch::S390x => Some((4096, "s390x base pages are always 4 KiB".into())),
        Arch::Aarch64 => {
            if hugepage_sizes.contains(&(64 << 10)) {
                Some((
                    4096,
                    "aarch64 with a 64 KiB hugetlb size (contiguous PTEs of 4 KiB pages)".into(),
                ))
            } else if hugepage_sizes.contains(&(512 << 20)) {
                Some((
                    65536,
                    "aarch64 with a 512 MiB hugetlb size (PMD of 64 KiB pages)".into(),
                ))
            } else {
                None
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::meminfo::parse_meminfo;

    #[test]
    fn meminfo_huge_lines() {
        let f = parse_meminfo(
            "MemTotal: 16384 kB\nHugePages_Total:      16\nHugePages_Free:       12\n\
             HugePages_Rsvd:        1\nHugePages_Surp:        0\nHugepagesize:       2048 kB\n\
             Hugetlb:           36864 kB\n",
        );
        assert_eq!(
            MeminfoHuge::of(&f),
            Ok(Some(MeminfoHuge {
                total_pages: 16,
                free_pages: 12,
                reserved_pages: 1,
                surplus_pages: 0,
                page_size_bytes: 2 << 20,
                hugetlb_bytes: Some(36864 << 10),
            }))
        );
        assert_eq!(
            MeminfoHuge::of(&parse_meminfo("MemTotal: 1 kB\n")),
            Ok(None)
        );
        let e = MeminfoHuge::of(&parse_meminfo("HugePages_Total: 16\nHugePages_Free: x\n"));
        assert_eq!(e.unwrap_err().text, "HugePages_Free: x");
        let e = MeminfoHuge::of(&parse_meminfo(
            "HugePages_Total: 1\nHugePages_Free: 1\nHugePages_Rsvd: 0\nHugePages_Surp: 0\n",
        ));
        assert_eq!(e.unwrap_err().expected, "a Hugepagesize line");
    }

    #[test]
    fn choices() {
        let c = parse_choice("always [madvise] never").unwrap();
        assert_eq!(c.selected, "madvise");
        assert_eq!(c.choices, vec!["always", "madvise", "never"]);
        assert_eq!(parse_choice("always madvise never"), None);
        assert_eq!(parse_choice("[a] [b]"), None);
    }
    #[test]
    fn dir_names() {
        assert_eq!(
            parse_hugepages_dir_name("hugepages-1048576kB"),
            Some(1 << 30)
        );
        assert_eq!(parse_hugepages_dir_name("hugepages-64kB"), Some(64 << 10));
        assert_eq!(parse_hugepages_dir_name("hugepages-kB"), None);
        assert_eq!(parse_hugepages_dir_name("hugepages-0kB"), None);
    }
    #[test]
    fn base_page_inference() {
        assert_eq!(infer_base_page_size(Arch::Sparc64, &[]).unwrap().0, 8192);
        let kunpeng = [64 << 10, 2 << 20, 32 << 20, 1 << 30];
        assert_eq!(
            infer_base_page_size(Arch::Aarch64, &kunpeng).unwrap().0,
            4096
        );
        assert_eq!(
            infer_base_page_size(Arch::Aarch64, &[2 << 20, 512 << 20])
                .unwrap()
                .0,
            65536
        );
        assert_eq!(infer_base_page_size(Arch::Aarch64, &[]), None);
        assert_eq!(infer_base_page_size(Arch::Ppc64, &[16 << 20]), None);
    }
}

//! `/proc/<pid>/smaps`: the mappings of a process with their sizes and page sizes
//! (Documentation/filesystems/proc.rst, "smaps"), parsed ([`parse_smaps`]). The one reader is
//! `hwsurvey_probe::smaps`; the engine reads its own `/proc/self/smaps` through it to check the
//! backing a buffer actually obtained (base pages, THP, hugetlbfs), the probe the base page
//! size of a capture ([`first_kernel_page_size`]).
//!
//! Sizes are bytes; smaps' "kB" fields are KiB (1024 bytes), converted in [`parse_smaps`].

use serde::{Deserialize, Serialize};

/// The smaps of the calling process.
pub const SELF_SMAPS_PATH: &str = "/proc/self/smaps";

/// One mapping of `/proc/self/smaps`, with the fields the page-mode check needs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SmapsMapping {
    /// First address of the mapping (inclusive).
    pub start: u64,
    /// End address of the mapping (exclusive).
    pub end: u64,
    /// `Rss:` in bytes.
    pub rss_bytes: Option<u64>,
    /// `AnonHugePages:` in bytes (THP-backed part of an anonymous mapping).
    pub anon_huge_pages_bytes: Option<u64>,
    /// `Private_Hugetlb:` + `Shared_Hugetlb:` in bytes (hugetlbfs-backed part).
    pub hugetlb_bytes: Option<u64>,
    /// `KernelPageSize:` in bytes (the page size the kernel uses for this VMA).
    pub kernel_page_size_bytes: Option<u64>,
    /// `MMUPageSize:` in bytes (the page size the MMU uses for this VMA).
    pub mmu_page_size_bytes: Option<u64>,
}

impl SmapsMapping {
    /// Length of the mapping in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// Whether `addr` lies inside the mapping.
    pub fn contains(&self, addr: u64) -> bool {
        self.start <= addr && addr < self.end
    }
}

/// Error parsing `/proc/self/smaps` text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{source_name} line {line}: expected {expected}, got {}",
    hwsurvey_model::text::quote(text)
)]
pub struct SmapsError {
    /// Where the text came from (a path, or "smaps text").
    pub source_name: String,
    /// 1-based line number.
    pub line: usize,
    /// The offending line.
    pub text: String,
    /// What the parser expected.
    pub expected: &'static str,
}

/// Parses the text of `/proc/<pid>/smaps` (Documentation/filesystems/proc.rst, "smaps") into
/// mappings. Header lines are `start-end perms offset dev inode [path]` (hex addresses); field
/// lines are `Name: <n> kB` (KiB, converted to bytes here) or other `Name: value` lines, which are
/// ignored (`VmFlags:`, `THPeligible:`, `ProtectionKey:`).
///
/// Errors: a field line before any header, a header with non-hex addresses, or a `kB` field whose
/// number does not parse.
pub fn parse_smaps(text: &str, source_name: &str) -> Result<Vec<SmapsMapping>, SmapsError> {
    let mut out: Vec<SmapsMapping> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let err = |expected: &'static str| SmapsError {
            source_name: source_name.to_string(),
            line: i + 1,
            text: line.to_string(),
            expected,
        };
        let line_trim = line.trim();
        if line_trim.is_empty() {
            continue;
        }
        let first = line_trim.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if !first.ends_with(':') {
                let start =
                    u64::from_str_radix(a, 16).map_err(|_| err("hex start-end address range"))?;
                let end =
                    u64::from_str_radix(b, 16).map_err(|_| err("hex start-end address range"))?;
                out.push(SmapsMapping {
                    start,
                    end,
                    ..SmapsMapping::default()
                });
                continue;
            }
        }
        let Some((name, value)) = line_trim.split_once(':') else {
            return Err(err("a `start-end ...` header or a `Name: value` field"));
        };
        let Some(current) = out.last_mut() else {
            return Err(err("a mapping header before the first field"));
        };
        let value = value.trim();
        let Some(number) = value.strip_suffix("kB") else {
            continue; // VmFlags, THPeligible, ProtectionKey: not sizes
        };
        let kib: u64 = number.trim().parse().map_err(|_| err("`<integer> kB`"))?;
        let bytes = kib.saturating_mul(1024); // the kernel's "kB" is KiB
        match name {
            "Rss" => current.rss_bytes = Some(bytes),
            "AnonHugePages" => current.anon_huge_pages_bytes = Some(bytes),
            "Private_Hugetlb" | "Shared_Hugetlb" => {
                current.hugetlb_bytes = Some(current.hugetlb_bytes.unwrap_or(0) + bytes)
            }
            "KernelPageSize" => current.kernel_page_size_bytes = Some(bytes),
            "MMUPageSize" => current.mmu_page_size_bytes = Some(bytes),
            _ => {}
        }
    }
    Ok(out)
}

/// The page size the kernel backs the first mapping with (its `KernelPageSize`, bytes), read
/// with [`parse_smaps`]. A damaged text (a capture cut short mid-line) still yields the size of
/// the mappings before the first bad line. `None` when no intact mapping states a size above 0.
pub fn first_kernel_page_size(text: &str) -> Option<u64> {
    let maps = match parse_smaps(text, "smaps text") {
        Ok(maps) => maps,
        Err(e) => {
            let intact: Vec<&str> = text.lines().take(e.line.saturating_sub(1)).collect();
            parse_smaps(&intact.join("\n"), "smaps text").ok()?
        }
    };
    maps.iter()
        .find_map(|m| m.kernel_page_size_bytes)
        .filter(|s| *s > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// testkit's `SMAPS_EXCERPT` (a dev-dependency on testkit would build the probe here).
    const SMAPS: &str = include_str!("../../testkit/data/smaps-excerpt.txt");

    #[test]
    fn first_kernel_page_size_of_whole_and_damaged_texts() {
        assert_eq!(first_kernel_page_size(SMAPS), Some(4096));
        // arm64 with 64 KiB pages
        let arm = SMAPS.replacen(
            "KernelPageSize:        4 kB",
            "KernelPageSize:       64 kB",
            1,
        );
        assert_eq!(first_kernel_page_size(&arm), Some(65536));
        // cut short in the second mapping's header: the first mapping still counts
        let cut = &SMAPS[..SMAPS.find("7f2a40000000-").unwrap() + 5];
        assert_eq!(first_kernel_page_size(cut), Some(4096));
        // damaged before the first size: nothing intact states one
        let early = SMAPS.replacen("Size:                132 kB", "Size: 13x kB", 1);
        assert_eq!(first_kernel_page_size(&early), None);
        // a field line with no mapping header is no smaps
        assert_eq!(first_kernel_page_size("KernelPageSize: 4 kB\n"), None);
        assert_eq!(first_kernel_page_size(""), None);
    }

    #[test]
    fn smaps_fields_in_bytes() {
        let maps = parse_smaps(SMAPS, "smaps text").unwrap();
        assert_eq!(maps.len(), 3);
        assert_eq!(maps[1].start, 0x7f2a40000000);
        assert_eq!(maps[1].size_bytes(), 8 << 20);
        assert_eq!(maps[1].anon_huge_pages_bytes, Some(6144 * 1024));
        assert_eq!(maps[2].kernel_page_size_bytes, Some(2 << 20));
        assert_eq!(maps[2].hugetlb_bytes, Some(4 << 20));
    }

    #[test]
    fn smaps_errors_name_line_and_text() {
        let e = parse_smaps("Rss: 4 kB\n", "x").unwrap_err();
        assert_eq!(e.line, 1);
        let e =
            parse_smaps("7f00-7f10 rw-p 0 0 0\nRss: four kB\n", "/proc/self/smaps").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("/proc/self/smaps line 2"), "{e}");
        assert!(e.to_string().contains("four"), "{e}");
        assert!(parse_smaps("zz-7f10 rw-p 0 0 0\n", "x").is_err());
    }
}

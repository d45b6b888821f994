//! `/proc/meminfo` totals. The kernel writes "kB" and means KiB (1024 bytes; see
//! `fs/proc/meminfo.c`, `show_val_kb`): converted here, once, to bytes.

use hwsurvey_model::{Probed, Unknown};

use crate::{ProbeError, SysRoot};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::memory::meminfo::*;

/// Path of the file parsed here.
pub const MEMINFO: &str = "/proc/meminfo";

/// Parses `/proc/meminfo` text. `MemTotal` is required; values are `N kB` (KiB).
/// Errors name [`MEMINFO`] and the offending line.
pub fn parse_meminfo(text: &str) -> Result<MemInfo, ProbeError> {
    let mut total = None;
    let mut available = None;
    let mut full = None;
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let slot = match key.trim() {
            "MemTotal" => &mut total,
            "MemAvailable" => &mut available,
            "MemFullSize" => &mut full,
            _ => continue,
        };
        let mut words = rest.split_whitespace();
        let value: u64 = words
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| ProbeError::invalid(MEMINFO, "\"<key>: <number> kB\"", line))?;
        let bytes = match words.next() {
            Some("kB") => value.checked_mul(1024),
            None => Some(value),
            Some(_) => None,
        }
        .ok_or_else(|| ProbeError::invalid(MEMINFO, "\"<key>: <number> kB\"", line))?;
        *slot = Some(bytes);
    }
    let mem_total_bytes =
        total.ok_or_else(|| ProbeError::invalid(MEMINFO, "a MemTotal line", text))?;
    Ok(MemInfo {
        mem_total_bytes,
        mem_available_bytes: available,
        mem_full_size_bytes: full,
    })
}

/// Reads and parses [`MEMINFO`] under `root`.
pub fn read(root: &SysRoot) -> Probed<MemInfo> {
    match root.read(MEMINFO).and_then(|t| parse_meminfo(&t)) {
        Ok(m) => Probed::Known(m),
        Err(e) => Probed::Unknown(Unknown::from(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kb_is_kib() {
        let m = parse_meminfo("MemTotal:       16384 kB\nMemFree: 1 kB\nMemAvailable:    8 kB\n")
            .unwrap();
        assert_eq!(m.mem_total_bytes, 16384 * 1024);
        assert_eq!(m.mem_available_bytes, Some(8192));
        assert_eq!(m.mem_full_size_bytes, None);
    }

    #[test]
    fn bad_lines_name_the_file() {
        let e = parse_meminfo("MemTotal: lots kB\n").unwrap_err();
        assert_eq!(e.path(), MEMINFO);
        assert!(e.to_string().contains("lots"), "{e}");
        assert!(parse_meminfo("").is_err());
    }
}

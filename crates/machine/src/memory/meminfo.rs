//! `/proc/meminfo` totals. The kernel writes "kB" and means KiB (1024 bytes; see
//! `fs/proc/meminfo.c`, `show_val_kb`): converted here, once, to bytes.

use serde::{Deserialize, Serialize};

/// Parses `/proc/meminfo` (or `/proc/self/status`, same form) and returns the named field in
/// bytes (the kernel's "kB" is KiB).
pub fn parse_meminfo_bytes(text: &str, field: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, rest) = line.split_once(':')?;
        if name.trim() != field {
            return None;
        }
        let mut it = rest.split_whitespace();
        let value: u64 = it.next()?.parse().ok()?;
        match it.next() {
            Some("kB") => value.checked_mul(1024),
            None => Some(value),
            Some(_) => None,
        }
    })
}

/// Memory totals from `/proc/meminfo`, in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemInfo {
    /// `MemTotal`: RAM the kernel manages (installed minus firmware and kernel reservations).
    pub mem_total_bytes: u64,
    /// `MemAvailable` (kernels >= 3.14), if present.
    pub mem_available_bytes: Option<u64>,
    /// `MemFullSize`: installed RAM as the e2k (Elbrus) kernel reports it; other kernels lack it.
    pub mem_full_size_bytes: Option<u64>,
}

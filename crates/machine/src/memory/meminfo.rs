//! `/proc/meminfo`, the one parser of it ([`parse_meminfo`]) and the facts taken from it:
//! the totals of the machine document ([`MemInfo`]), `MemAvailable`, and the default huge
//! page pool ([`crate::pages::MeminfoHuge`]). The kernel writes "kB" and means KiB (1024
//! bytes; see `fs/proc/meminfo.c`, `show_val_kb`): converted here, once, to bytes. The one
//! reader is `hwsurvey_probe::memory::meminfo`.

use serde::{Deserialize, Serialize};

use crate::ParseError;

/// Path of the file parsed here.
pub const MEMINFO: &str = "/proc/meminfo";

/// What the kernel writes on each line of [`MEMINFO`].
const LINE: &str = "\"<key>: <number> kB\" or \"<key>: <number>\"";

/// The lines of `/proc/meminfo`: `Key:   N kB` (sizes, KiB) or `Key:   N` (page counts such
/// as `HugePages_Total`), each value read on demand ([`MeminfoFields::bytes`],
/// [`MeminfoFields::count`]) so that a bad value is refused where it is used, naming its line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MeminfoFields {
    /// `(key, value text)` in file order, both trimmed.
    lines: Vec<(String, String)>,
}

/// Splits `/proc/meminfo` text into its `Key: value` lines. Never fails: a line without a
/// colon (the tail of a capture cut mid-line) is skipped, as no key can be read from it; the
/// values are checked where they are read.
pub fn parse_meminfo(text: &str) -> MeminfoFields {
    MeminfoFields {
        lines: text
            .lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect(),
    }
}

impl MeminfoFields {
    /// The value text of `key` (its first line), if the file has it.
    fn value(&self, key: &str) -> Option<&str> {
        self.lines
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// `key`'s size in bytes (`N kB`, KiB), `None` when the file has no such line.
    ///
    /// # Errors
    /// [`ParseError`] naming [`MEMINFO`] and the line when the value is not `N kB` or
    /// overflows 64 bits in bytes.
    pub fn bytes(&self, key: &str) -> Result<Option<u64>, ParseError> {
        let Some(v) = self.value(key) else {
            return Ok(None);
        };
        let bad = || ParseError::new(MEMINFO, LINE, &format!("{key}: {v}"));
        let mut words = v.split_whitespace();
        let n: u64 = words.next().and_then(|n| n.parse().ok()).ok_or_else(bad)?;
        match (words.next(), words.next()) {
            (Some("kB"), None) => n.checked_mul(1024).map(Some).ok_or_else(bad),
            _ => Err(bad()),
        }
    }

    /// `key`'s count (`N`, no unit: `HugePages_Total`), `None` when the file has no such line.
    ///
    /// # Errors
    /// [`ParseError`] naming [`MEMINFO`] and the line when the value is not one number.
    pub fn count(&self, key: &str) -> Result<Option<u64>, ParseError> {
        let Some(v) = self.value(key) else {
            return Ok(None);
        };
        v.parse()
            .map(Some)
            .map_err(|_| ParseError::new(MEMINFO, LINE, &format!("{key}: {v}")))
    }

    /// `MemAvailable`, bytes: the memory a new workload can take without swapping (kernels
    /// >= 3.14).
    ///
    /// # Errors
    /// [`ParseError`] when the line is missing (`a MemAvailable line`) or its value is bad.
    pub fn mem_available_bytes(&self) -> Result<u64, ParseError> {
        self.bytes("MemAvailable")?
            .ok_or_else(|| ParseError::new(MEMINFO, "a MemAvailable line", "no such line"))
    }
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

impl MemInfo {
    /// The totals of `fields`.
    ///
    /// # Errors
    /// [`ParseError`] naming [`MEMINFO`]: no `MemTotal` line, or a bad value on one of the
    /// three lines read.
    pub fn of(fields: &MeminfoFields) -> Result<MemInfo, ParseError> {
        Ok(MemInfo {
            mem_total_bytes: fields
                .bytes("MemTotal")?
                .ok_or_else(|| ParseError::new(MEMINFO, "a MemTotal line", "no such line"))?,
            mem_available_bytes: fields.bytes("MemAvailable")?,
            mem_full_size_bytes: fields.bytes("MemFullSize")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kb_is_kib() {
        let f = parse_meminfo("MemTotal:       16384 kB\nMemFree: 1 kB\nMemAvailable:    8 kB\n");
        let m = MemInfo::of(&f).unwrap();
        assert_eq!(m.mem_total_bytes, 16384 * 1024);
        assert_eq!(m.mem_available_bytes, Some(8192));
        assert_eq!(m.mem_full_size_bytes, None);
        assert_eq!(f.mem_available_bytes(), Ok(8192));
        assert_eq!(f.count("HugePages_Total"), Ok(None));
    }

    #[test]
    fn bad_lines_name_the_file_and_the_line() {
        let e = MemInfo::of(&parse_meminfo("MemTotal: lots kB\n")).unwrap_err();
        assert_eq!(e.path, MEMINFO);
        assert_eq!(e.text, "MemTotal: lots kB");
        // a size without its unit is not what the kernel writes
        let e = MemInfo::of(&parse_meminfo("MemTotal: 16384\n")).unwrap_err();
        assert_eq!(e.text, "MemTotal: 16384");
        assert!(MemInfo::of(&parse_meminfo("")).is_err());
        let e = parse_meminfo("MemTotal: 1 kB\n")
            .mem_available_bytes()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "/proc/meminfo: expected a MemAvailable line, got \"no such line\""
        );
        let e = parse_meminfo("HugePages_Total: 4 kB\n")
            .count("HugePages_Total")
            .unwrap_err();
        assert_eq!(e.text, "HugePages_Total: 4 kB");
        // 2^64 KiB is more bytes than 64 bits hold
        let huge = format!("MemTotal: {} kB\n", u64::MAX);
        assert!(MemInfo::of(&parse_meminfo(&huge)).is_err());
    }

    /// The tail of a capture cut mid-line has no key: skipped, the lines before still read.
    #[test]
    fn a_line_cut_short_is_skipped() {
        let f = parse_meminfo("MemTotal:       16318412 kB\nMemAv");
        assert_eq!(MemInfo::of(&f).unwrap().mem_total_bytes, 16318412 * 1024);
    }
}

//! PCIe Advanced Error Reporting counters of one function:
//! `/sys/bus/pci/devices/<address>/aer_dev_{correctable,nonfatal,fatal}` (Linux 5.1+,
//! Documentation/ABI/testing/sysfs-bus-pci-devices-aer-stats), one line per error kind,
//! `<name> <count>`, then the total:
//!
//! ```text
//! RxErr 1
//! BadTLP 0
//! ...
//! TOTAL_ERR_COR 1
//! ```
//!
//! The names are the kernel's (`RxErr`, `BadTLP`; kernels before 5.13 wrote `Receiver Error`,
//! `Bad TLP`, with spaces): the count is the last word of a line, the name the words before
//! it. The total is the `TOTAL_ERR_COR` / `TOTAL_ERR_NONFATAL` / `TOTAL_ERR_FATAL` line: one
//! message may report several kinds, so it can be less than the sum of the kinds.

use serde::{Deserialize, Serialize};

/// The three files, by the severity of what they count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AerSeverity {
    /// `aer_dev_correctable` (ERR_COR messages): corrected by the link, counted.
    Correctable,
    /// `aer_dev_nonfatal`: uncorrectable, the link still works.
    Nonfatal,
    /// `aer_dev_fatal`: uncorrectable, the link is unreliable (reset).
    Fatal,
}

impl AerSeverity {
    /// All three, in file order.
    pub const ALL: [AerSeverity; 3] = [
        AerSeverity::Correctable,
        AerSeverity::Nonfatal,
        AerSeverity::Fatal,
    ];

    /// The sysfs file name.
    pub fn file(self) -> &'static str {
        match self {
            AerSeverity::Correctable => "aer_dev_correctable",
            AerSeverity::Nonfatal => "aer_dev_nonfatal",
            AerSeverity::Fatal => "aer_dev_fatal",
        }
    }

    /// The total line's name.
    pub fn total_key(self) -> &'static str {
        match self {
            AerSeverity::Correctable => "TOTAL_ERR_COR",
            AerSeverity::Nonfatal => "TOTAL_ERR_NONFATAL",
            AerSeverity::Fatal => "TOTAL_ERR_FATAL",
        }
    }

    /// In words: `correctable`, `uncorrectable non-fatal`, `uncorrectable fatal`.
    pub fn words(self) -> &'static str {
        match self {
            AerSeverity::Correctable => "correctable",
            AerSeverity::Nonfatal => "uncorrectable non-fatal",
            AerSeverity::Fatal => "uncorrectable fatal",
        }
    }
}

/// One `aer_dev_*` file read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AerStats {
    /// `(name, count)` per error kind, in file order.
    pub kinds: Vec<(String, u64)>,
    /// The `TOTAL_ERR_*` line (the sum of the kinds where a kernel writes none).
    pub total: u64,
}

/// Parses one `aer_dev_*` file of `severity`.
///
/// # Errors
/// A line whose last word is no count, or no line at all: the words say which line.
pub fn parse_aer_stats(text: &str, severity: AerSeverity) -> Result<AerStats, String> {
    let mut kinds = Vec::new();
    let mut total = None;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (name, count) = line
            .rsplit_once(char::is_whitespace)
            .ok_or_else(|| format!("expected \"<name> <count>\", got {line:?}"))?;
        let count: u64 = count
            .parse()
            .map_err(|_| format!("expected a count at the end of {line:?}"))?;
        let name = name.trim();
        if name == severity.total_key() {
            total = Some(count);
        } else {
            kinds.push((name.to_string(), count));
        }
    }
    if kinds.is_empty() && total.is_none() {
        return Err(format!(
            "expected lines \"<name> <count>\" and {}, got an empty file",
            severity.total_key()
        ));
    }
    let total = total.unwrap_or_else(|| kinds.iter().map(|k| k.1).sum());
    Ok(AerStats { kinds, total })
}

/// The kinds that rose from `before` to `after`, `RxErr +2`, in file order.
pub fn kinds_moved(before: &AerStats, after: &AerStats) -> Vec<String> {
    after
        .kinds
        .iter()
        .filter_map(|(name, a)| {
            let b = before
                .kinds
                .iter()
                .find(|(n, _)| n == name)
                .map_or(0, |k| k.1);
            (*a > b).then(|| format!("{name} +{}", a - b))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_and_older_kernel_names_and_totals() {
        let now = "RxErr 2\nBadTLP 0\nBadDLLP 1\nRollover 0\nTimeout 0\nNonFatalErr 0\n\
                   CorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 2\n";
        let s = parse_aer_stats(now, AerSeverity::Correctable).unwrap();
        assert_eq!(s.total, 2);
        assert_eq!(s.kinds[0], ("RxErr".to_string(), 2));
        let old = "Receiver Error 2\nBad TLP 0\nTOTAL_ERR_COR 2\n";
        let o = parse_aer_stats(old, AerSeverity::Correctable).unwrap();
        assert_eq!(o.kinds[0], ("Receiver Error".to_string(), 2));
        let before = parse_aer_stats(
            "RxErr 0\nBadDLLP 0\nTOTAL_ERR_COR 0\n",
            AerSeverity::Correctable,
        )
        .unwrap();
        assert_eq!(kinds_moved(&before, &s), ["RxErr +2", "BadDLLP +1"]);
        assert!(parse_aer_stats("RxErr x\n", AerSeverity::Correctable)
            .unwrap_err()
            .contains("expected a count at the end of \"RxErr x\""));
        assert!(parse_aer_stats("", AerSeverity::Fatal)
            .unwrap_err()
            .contains("TOTAL_ERR_FATAL"));
    }
}

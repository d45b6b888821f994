//! CPU lists and masks as sysfs and procfs write them (`0-3,8`, `ff,00000001`), parsed
//! bounded by [`MAX_CPUS`] before they are expanded, with errors that name the file and the
//! bad text ([`parse_cpulist_at`], [`parse_cpumask_at`]). The readers are
//! `hwsurvey_probe::cpu` (`read_cpuset`).

use hwsurvey_model::CpuSet;

use crate::ParseError;

/// The most CPUs a probe accepts: Linux's largest `NR_CPUS` (8192, `CONFIG_MAXSMP` on x86_64
/// and the powerpc maximum). A list or mask naming CPU [`MAX_CPUS`] or above is a damaged
/// file, refused before it is expanded (`0-1048575` in `possible` once took 11.8 s and
/// 1.28 GB).
pub const MAX_CPUS: u32 = 8192;

/// The largest CPU number a kernel list names (without expanding it), or `None` when the
/// text is not a list (the parser then says why).
pub fn list_max_id(text: &str) -> Option<u64> {
    let mut max = None;
    for item in text.trim().split(',') {
        let range = item.split(':').next().unwrap_or(item);
        for n in range.split('-') {
            let n = n.trim();
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let v = n.parse::<u64>().unwrap_or(u64::MAX);
            max = Some(max.map_or(v, |m: u64| m.max(v)));
        }
    }
    max
}

/// The highest set bit of a hex CPU mask (without expanding it), or `None` for an empty or
/// malformed mask.
pub fn mask_max_id(text: &str) -> Option<u64> {
    let hex: String = text.trim().chars().filter(|c| *c != ',').collect();
    let digits = hex.trim_start_matches('0');
    let first = digits.chars().next()?.to_digit(16)?;
    let bits_below = 4 * (digits.len() as u64 - 1);
    Some(bits_below + (31 - first.leading_zeros()) as u64)
}

/// The refusal of a list or mask of `path` that names CPU `id` (>= [`MAX_CPUS`]).
pub fn beyond_max(path: &str, id: u64, text: &str) -> ParseError {
    ParseError::new(
        path,
        format!("CPU numbers below {MAX_CPUS} (the most any Linux kernel supports), not {id}"),
        &shorten(text),
    )
}

/// The first few dozen characters of a bad value, for an error line.
pub fn shorten(text: &str) -> String {
    let t = text.trim();
    if t.chars().count() > 40 {
        t.chars().take(40).collect::<String>() + "..."
    } else {
        t.to_string()
    }
}

/// Parses CPU list text read from `path`, refusing numbers of [`MAX_CPUS`] and above.
///
/// # Errors
/// [`ParseError`] naming `path` and the text (shortened): not a list, or a CPU number of
/// [`MAX_CPUS`] or above.
pub fn parse_cpulist_at(path: &str, text: &str) -> Result<CpuSet, ParseError> {
    if let Some(m) = list_max_id(text) {
        if m >= MAX_CPUS as u64 {
            return Err(beyond_max(path, m, text));
        }
    }
    CpuSet::parse_list(text)
        .map_err(|_| ParseError::new(path, "a CPU list like \"0-3,8\"", &shorten(text)))
}

/// Parses a hex CPU mask read from `path`, refusing bits of [`MAX_CPUS`] and above.
///
/// # Errors
/// [`ParseError`] naming `path` and the text (shortened): not a mask, or a bit of
/// [`MAX_CPUS`] or above.
pub fn parse_cpumask_at(path: &str, text: &str) -> Result<CpuSet, ParseError> {
    if let Some(m) = mask_max_id(text) {
        if m >= MAX_CPUS as u64 {
            return Err(beyond_max(path, m, text));
        }
    }
    CpuSet::parse_mask(text)
        .map_err(|_| ParseError::new(path, "a hex CPU mask like \"ff,00000001\"", &shorten(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_masks_bounded_before_they_are_expanded() {
        let online = "/sys/devices/system/cpu/online";
        assert_eq!(
            parse_cpulist_at(online, "0-3,8\n")
                .unwrap()
                .to_list_string(),
            "0-3,8"
        );
        assert_eq!(
            parse_cpumask_at("/x/cpumap", "ff,00000001")
                .unwrap()
                .to_list_string(),
            "0,32-39"
        );
        let e = parse_cpulist_at(online, "0-1048575").unwrap_err();
        assert_eq!(e.path, online);
        assert!(e.expected.contains("below 8192"), "{e}");
        let e = parse_cpulist_at(online, "0-x").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("{online}: expected a CPU list like \"0-3,8\", got \"0-x\"")
        );
        assert!(parse_cpumask_at("/x/cpumap", &format!("1{}", "0".repeat(2048))).is_err());
        assert_eq!(list_max_id("0-3,8"), Some(8));
        assert_eq!(mask_max_id("ff,00000001"), Some(39));
    }
}

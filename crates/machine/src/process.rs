//! The probing process's own files under `/proc/self` (proc(5)), parsed: `status`
//! ([`parse_status`]: the CPUs it may run on, its virtual memory, its user) and `limits`
//! ([`parse_limits`]: the soft resource limits). Its cgroups are [`crate::os::cgroup`]. The
//! one reader of each file is `hwsurvey_probe::process`.

use hwsurvey_model::CpuSet;

use crate::cpu::sets::parse_cpulist_at;
use crate::ParseError;

/// The process's status.
pub const STATUS: &str = "/proc/self/status";

/// The process's resource limits.
pub const LIMITS: &str = "/proc/self/limits";

/// The lines of [`STATUS`] that hwsurvey reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStatus {
    /// `Cpus_allowed_list`: the CPUs the process may run on (its affinity); `None` when the
    /// line is absent (kernels before 2.6.26), `Err` when it is not a CPU list.
    pub cpus_allowed: Option<Result<CpuSet, ParseError>>,
    /// `VmSize`, bytes (the kernel's kB = KiB): the address space in use, what `RLIMIT_AS`
    /// counts; `None` when absent or not `N kB`.
    pub vm_size_bytes: Option<u64>,
    /// `VmData`, bytes: data and stack, what `RLIMIT_DATA` counts; `None` as `vm_size_bytes`.
    pub vm_data_bytes: Option<u64>,
    /// `Uid` (real, effective, saved, file system): the effective user id, the second;
    /// `None` when absent or not a number.
    pub effective_uid: Option<u32>,
}

/// Parses the text of [`STATUS`] (`Name:<TAB>value` lines). Never fails: each line read is
/// `None` when absent; a `Cpus_allowed_list` that is not a CPU list is kept as its error.
pub fn parse_status(text: &str) -> ProcStatus {
    let value = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim())
        })
    };
    let kib = |key: &str| {
        let v = value(key)?;
        let n: u64 = v.strip_suffix("kB")?.trim().parse().ok()?;
        n.checked_mul(1024)
    };
    ProcStatus {
        cpus_allowed: value("Cpus_allowed_list").map(|v| {
            parse_cpulist_at(STATUS, v).map_err(|e| ParseError {
                expected: format!("Cpus_allowed_list: {}", e.expected),
                ..e
            })
        }),
        vm_size_bytes: kib("VmSize"),
        vm_data_bytes: kib("VmData"),
        effective_uid: value("Uid")
            .and_then(|v| v.split_whitespace().nth(1))
            .and_then(|u| u.parse().ok()),
    }
}

/// The soft limit of each row of [`LIMITS`] (`Max address space`, `Max data size`, ...):
/// `Some(bytes)` or `None` for `unlimited`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcLimits {
    /// `(row name, soft limit)` in file order, the header left out.
    rows: Vec<(String, Option<u64>)>,
}

impl ProcLimits {
    /// The soft limit of `row` (`Max address space`): `Some(Some(n))`, `Some(None)` for
    /// unlimited, `None` when the row is absent or its soft limit is neither a number nor
    /// `unlimited`.
    pub fn soft(&self, row: &str) -> Option<Option<u64>> {
        self.rows.iter().find(|(r, _)| r == row).map(|(_, v)| *v)
    }
}

/// Parses [`LIMITS`]: `Limit  Soft Limit  Hard Limit  Units` rows, the name being the words
/// before the first number or `unlimited`. Rows that do not read so are left out.
pub fn parse_limits(text: &str) -> ProcLimits {
    let rows = text
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words
                .iter()
                .position(|w| *w == "unlimited" || w.parse::<u64>().is_ok())?;
            let soft = match words[at] {
                "unlimited" => None,
                n => Some(n.parse().ok()?),
            };
            (at > 0).then(|| (words[..at].join(" "), soft))
        })
        .collect();
    ProcLimits { rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS_TEXT: &str = "Name:\thwsurvey\nUid:\t1000\t0\t0\t0\nVmSize:\t   21504 kB\n\
                               VmData:\t    2048 kB\nCpus_allowed:\t0000010f\n\
                               Cpus_allowed_list:\t0-3,8\n";

    #[test]
    fn status_lines() {
        let s = parse_status(STATUS_TEXT);
        assert_eq!(
            s.cpus_allowed,
            Some(Ok(CpuSet::parse_list("0-3,8").unwrap()))
        );
        assert_eq!(s.vm_size_bytes, Some(21504 << 10));
        assert_eq!(s.vm_data_bytes, Some(2 << 20));
        assert_eq!(s.effective_uid, Some(0));
        let bad = parse_status("Cpus_allowed_list:\t0-x\n");
        let e = bad.cpus_allowed.unwrap().unwrap_err();
        assert_eq!(
            e.to_string(),
            "/proc/self/status: expected Cpus_allowed_list: a CPU list like \"0-3,8\", got \"0-x\""
        );
        assert_eq!(
            parse_status("Name: x\n"),
            ProcStatus {
                cpus_allowed: None,
                vm_size_bytes: None,
                vm_data_bytes: None,
                effective_uid: None
            }
        );
    }

    #[test]
    fn limits_rows() {
        let text = "Limit                     Soft Limit           Hard Limit           Units     \n\
                    Max cpu time              unlimited            unlimited            seconds   \n\
                    Max data size             1073741824           unlimited            bytes     \n\
                    Max address space         unlimited            unlimited            bytes     \n";
        let l = parse_limits(text);
        assert_eq!(l.soft("Max data size"), Some(Some(1 << 30)));
        assert_eq!(l.soft("Max address space"), Some(None));
        assert_eq!(l.soft("Max stack size"), None);
        assert_eq!(l.soft("Limit"), None);
    }
}

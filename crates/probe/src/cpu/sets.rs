//! CPU lists and masks read from sysfs and procfs (`0-3,8`, `ff,00000001`), bounded by
//! [`MAX_CPUS`] before they are expanded, with errors that name the file and the bad text.

use hwsurvey_model::{CpuId, CpuSet};

use crate::{ProbeError, SysRoot};

/// The most CPUs a probe accepts: Linux's largest `NR_CPUS` (8192, `CONFIG_MAXSMP` on x86_64
/// and the powerpc maximum). A list or mask naming CPU [`MAX_CPUS`] or above is a damaged
/// file, refused before it is expanded (`0-1048575` in `possible` once took 11.8 s and
/// 1.28 GB).
pub const MAX_CPUS: u32 = 8192;

/// The largest CPU number a kernel list names (without expanding it), or `None` when the
/// text is not a list (the parser then says why).
pub(crate) fn list_max_id(text: &str) -> Option<u64> {
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
pub(crate) fn mask_max_id(text: &str) -> Option<u64> {
    let hex: String = text.trim().chars().filter(|c| *c != ',').collect();
    let digits = hex.trim_start_matches('0');
    let first = digits.chars().next()?.to_digit(16)?;
    let bits_below = 4 * (digits.len() as u64 - 1);
    Some(bits_below + (31 - first.leading_zeros()) as u64)
}

pub(crate) fn beyond_max(path: &str, id: u64, text: &str) -> ProbeError {
    ProbeError::invalid(
        path,
        format!("CPU numbers below {MAX_CPUS} (the most any Linux kernel supports), not {id}"),
        &shorten(text),
    )
}

/// The first few dozen characters of a bad value, for an error line.
pub(crate) fn shorten(text: &str) -> String {
    let t = text.trim();
    if t.chars().count() > 40 {
        t.chars().take(40).collect::<String>() + "..."
    } else {
        t.to_string()
    }
}

/// Parses CPU list text read from `path`, refusing numbers of [`MAX_CPUS`] and above.
pub(crate) fn parse_cpulist_at(path: &str, text: &str) -> Result<CpuSet, ProbeError> {
    if let Some(m) = list_max_id(text) {
        if m >= MAX_CPUS as u64 {
            return Err(beyond_max(path, m, text));
        }
    }
    CpuSet::parse_list(text)
        .map_err(|_| ProbeError::invalid(path, "a CPU list like \"0-3,8\"", &shorten(text)))
}

/// Parses a hex CPU mask read from `path`, refusing bits of [`MAX_CPUS`] and above.
pub(crate) fn parse_cpumask_at(path: &str, text: &str) -> Result<CpuSet, ProbeError> {
    if let Some(m) = mask_max_id(text) {
        if m >= MAX_CPUS as u64 {
            return Err(beyond_max(path, m, text));
        }
    }
    CpuSet::parse_mask(text).map_err(|_| {
        ProbeError::invalid(path, "a hex CPU mask like \"ff,00000001\"", &shorten(text))
    })
}

/// Reads a CPU list file; a missing list falls back to the mask file `mask_path` if given.
/// CPU numbers of [`MAX_CPUS`] and above are refused with an error naming the file.
pub(crate) fn read_cpuset(
    root: &SysRoot,
    path: &str,
    mask_path: Option<&str>,
) -> Result<CpuSet, ProbeError> {
    match root.read_value(path) {
        Ok(text) => parse_cpulist_at(path, &text),
        Err(e) if e.is_missing() && mask_path.is_some() => {
            let mask = mask_path.unwrap_or_default();
            let text = root.read_value(mask)?;
            parse_cpumask_at(mask, &text)
        }
        Err(e) => Err(e),
    }
}

/// Reads a sibling or sharing list of CPU `cpu` (see [`read_cpuset`]); a list that does not
/// contain `cpu` itself is not what the kernel writes there.
pub(crate) fn read_own_cpuset(
    root: &SysRoot,
    path: &str,
    mask_path: Option<&str>,
    cpu: CpuId,
) -> Result<CpuSet, ProbeError> {
    let set = read_cpuset(root, path, mask_path)?;
    if set.contains(cpu) {
        Ok(set)
    } else {
        Err(ProbeError::invalid(
            path,
            format!("a CPU list containing cpu{cpu} itself"),
            &shorten(&set.to_list_string()),
        ))
    }
}

/// Reads topology file `name` of `topo` as a list (`<name>_list`), falling back to the mask
/// (`<name>`) when the list is absent (kernels before the `_list` files, some captures).
pub(crate) fn read_topology_set(
    root: &SysRoot,
    topo: &str,
    name: &str,
    cpu: CpuId,
) -> Result<CpuSet, ProbeError> {
    read_own_cpuset(
        root,
        &format!("{topo}/{name}_list"),
        Some(&format!("{topo}/{name}")),
        cpu,
    )
}

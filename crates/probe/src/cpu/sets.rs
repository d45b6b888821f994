//! The readers of CPU lists and masks in sysfs and procfs: [`read_cpuset`] and its forms;
//! the parsers, bounded by [`MAX_CPUS`], are `hwsurvey_machine::cpu::sets`.

use hwsurvey_model::{CpuId, CpuSet};

use crate::{ProbeError, SysRoot};

pub use hwsurvey_machine::cpu::sets::{parse_cpulist_at, parse_cpumask_at, shorten, MAX_CPUS};

/// Reads a CPU list file; a missing list falls back to the mask file `mask_path` if given.
/// CPU numbers of [`MAX_CPUS`] and above are refused with an error naming the file.
pub(crate) fn read_cpuset(
    root: &SysRoot,
    path: &str,
    mask_path: Option<&str>,
) -> Result<CpuSet, ProbeError> {
    match root.read_value(path) {
        Ok(text) => Ok(parse_cpulist_at(path, &text)?),
        Err(e) if e.is_missing() && mask_path.is_some() => {
            let mask = mask_path.unwrap_or_default();
            let text = root.read_value(mask)?;
            Ok(parse_cpumask_at(mask, &text)?)
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

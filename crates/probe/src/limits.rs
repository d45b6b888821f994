//! Limits a run must honour: the memory the process may use and the CPUs it may run on.
//!
//! Memory: the lowest of
//! - `/proc/meminfo` `MemAvailable`;
//! - cgroup v1 `memory.limit_in_bytes` and `memory.memsw.limit_in_bytes`, in the process's
//!   memory cgroup and every ancestor up to the hierarchy's root;
//! - cgroup v2 `memory.max` and `memory.high`, likewise up the hierarchy;
//! - `RLIMIT_AS` and `RLIMIT_DATA` (`/proc/self/limits`, "Max address space" and
//!   "Max data size", soft limit).
//!
//! Each limit keeps what already counts against it ([`MemoryLimit::in_use_bytes`]): the
//! cgroup's `memory.current` (v2) or `memory.usage_in_bytes` / `memory.memsw.usage_in_bytes`
//! (v1), beside the limit file; the process's `VmSize` / `VmData` (`/proc/self/status`) for
//! `RLIMIT_AS` / `RLIMIT_DATA`. A run may use only the rest ([`MemoryLimit::headroom_bytes`]):
//! a 2 GiB cgroup that other processes already fill to 1.5 GiB leaves 0.5 GiB, and the tool's
//! own footprint counts too.
//!
//! CPUs: the intersection of the affinity mask (`sched_getaffinity` on the live machine,
//! `Cpus_allowed_list` of `/proc/self/status` in a capture), the cgroup v2
//! `cpuset.cpus.effective`, the cgroup v1 `cpuset.effective_cpus` / `cpuset.cpus`, and the
//! legacy cpuset file system (`/proc/self/cpuset` names the cpuset; its mount holds
//! `effective_cpus` / `cpus`).
//!
//! CPU time: the lowest CFS bandwidth limit ([`CpuQuota`]) of the cgroup v2 `cpu.max` and the
//! cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`, in the process's cgroup and every
//! ancestor: a quota of 1.5 CPUs lets the process's threads run 150 ms of every 100 ms period
//! together, however many CPUs they may run on, and throttles them for the rest.
//!
//! The cgroup files are read through [`crate::cgroup`] (one read of `/proc/self/cgroup` and
//! of the mounts, one walk up each hierarchy); `/proc/meminfo` through [`crate::memory::meminfo`];
//! `/proc/self/status` and `/proc/self/limits` through [`crate::process`]. Every read is under
//! a [`SysRoot`], so a capture gives the same answer as the live machine.

use hwsurvey_model::{Probed, Unknown};
use serde::{Deserialize, Serialize};

use crate::process::{ProcStatus, LIMITS, STATUS};
use crate::{ProbeError, SysRoot};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::limits::*;

/// Every limit found for the probing process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// `/proc/meminfo` `MemAvailable`, bytes (kernel kB = KiB).
    pub mem_available_bytes: Probed<u64>,
    /// Finite memory limits (cgroup v1, v2, rlimits), in the order found.
    pub memory_limits: Vec<MemoryLimit>,
    /// CPU sets the process is confined to (affinity, cpusets).
    pub cpu_limits: Vec<CpuLimit>,
    /// CFS bandwidth limits of its cgroups, innermost first (empty in values written before
    /// 2026-12-04).
    #[serde(default)]
    pub cpu_quotas: Vec<CpuQuota>,
    /// Files that were there but could not be read or parsed.
    pub problems: Vec<Unknown>,
}

impl Limits {
    /// The one of MemAvailable and every finite limit that leaves the least headroom
    /// ([`MemoryLimit::headroom_bytes`]), with its source; `None` when none is known.
    pub fn memory_cap(&self) -> Option<MemoryLimit> {
        let avail = self.mem_available_bytes.known().map(|b| MemoryLimit {
            bytes: *b,
            source: "MemAvailable (/proc/meminfo)".into(),
            in_use_bytes: None,
        });
        avail
            .into_iter()
            .chain(self.memory_limits.iter().cloned())
            .min_by_key(MemoryLimit::headroom_bytes)
    }

    /// The finite limit other than MemAvailable (cgroups, rlimits) that leaves the least
    /// headroom, if any.
    pub fn lowest_limit(&self) -> Option<&MemoryLimit> {
        self.memory_limits.iter().min_by_key(|l| l.headroom_bytes())
    }

    /// The lowest finite cgroup limit (v1 or v2), bytes, if any.
    pub fn cgroup_limit_bytes(&self) -> Option<u64> {
        self.memory_limits
            .iter()
            .filter(|l| l.source.starts_with("cgroup"))
            .map(|l| l.bytes)
            .min()
    }

    /// The CPU quota that allows the least run time ([`lowest_cpu_quota`]), if any.
    pub fn cpu_quota(&self) -> Option<&CpuQuota> {
        lowest_cpu_quota(&self.cpu_quotas)
    }

    /// The CPUs usable by the process: the intersection of every CPU limit, with the sources
    /// joined by " ∩ "; `None` when there is none or the intersection is empty (a damaged
    /// capture: the kernel never runs a process on no CPU).
    pub fn usable_cpus(&self) -> Option<CpuLimit> {
        intersect(&self.cpu_limits)
    }
}

/// The process's affinity: `sched_getaffinity` on the live machine (with the `sys` feature),
/// else `Cpus_allowed_list` of `/proc/self/status` (`status`, as read).
fn affinity(
    root: &SysRoot,
    status: &Result<ProcStatus, ProbeError>,
    problems: &mut Vec<Unknown>,
) -> Option<CpuLimit> {
    #[cfg(feature = "sys")]
    if root.is_live() {
        if let Ok(set) = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)) {
            let cpus: hwsurvey_model::CpuSet = (0..nix::sched::CpuSet::count() as u32)
                .filter(|&c| set.is_set(c as usize).unwrap_or(false))
                .collect();
            if !cpus.is_empty() {
                return Some(CpuLimit {
                    cpus,
                    source: "sched_getaffinity".into(),
                });
            }
        }
    }
    #[cfg(not(feature = "sys"))]
    let _ = root;
    match status {
        Ok(s) => match &s.cpus_allowed {
            Some(Ok(cpus)) if !cpus.is_empty() => Some(CpuLimit {
                cpus: cpus.clone(),
                source: format!("Cpus_allowed_list ({STATUS})"),
            }),
            Some(Ok(_)) => {
                problems.push(Unknown::Invalid {
                    path: STATUS.into(),
                    detail: "Cpus_allowed_list is empty: the kernel never runs a process on no CPU"
                        .into(),
                });
                None
            }
            Some(Err(e)) => {
                problems.push(e.clone().into());
                None
            }
            None => None,
        },
        Err(e) => {
            if !e.is_missing() {
                problems.push(e.clone().into());
            }
            None
        }
    }
}

/// Reads every limit of the probing process under `root`. Never fails: unreadable files
/// are listed in [`Limits::problems`].
pub fn probe(root: &SysRoot) -> Limits {
    let mut problems = Vec::new();
    let mem_available_bytes = crate::memory::meminfo::mem_available(root);
    let cgroups = match crate::cgroup::read(root) {
        Ok(c) => {
            problems.extend(c.problems.iter().cloned());
            Some(c)
        }
        Err(e) => {
            if !e.is_missing() {
                problems.push(e.into());
            }
            None
        }
    };
    let mut memory_limits = Vec::new();
    let mut cpu_quotas = Vec::new();
    let mut cpusets = Vec::new();
    if let Some(c) = &cgroups {
        let memory = c.memory_files(root);
        memory_limits.extend(memory.found.iter().filter_map(|f| f.limit()));
        problems.extend(memory.problems);
        let cpu = c.cpu_files(root);
        cpu_quotas.extend(cpu.found.iter().filter_map(|f| f.quota()));
        problems.extend(cpu.problems);
        let sets = c.cpusets(root);
        cpusets = sets.found;
        problems.extend(sets.problems);
    }
    let status = crate::process::read_status(root);
    if let Ok(limits) = crate::process::read_limits(root) {
        let status = status.as_ref().ok();
        for (row, name, in_use_bytes) in [
            (
                "Max address space",
                "RLIMIT_AS",
                status.and_then(|s| s.vm_size_bytes),
            ),
            (
                "Max data size",
                "RLIMIT_DATA",
                status.and_then(|s| s.vm_data_bytes),
            ),
        ] {
            if let Some(Some(bytes)) = limits.soft(row) {
                memory_limits.push(MemoryLimit {
                    bytes,
                    source: format!("{name} ({LIMITS})"),
                    in_use_bytes,
                });
            }
        }
    }
    let mut cpu_limits: Vec<CpuLimit> =
        affinity(root, &status, &mut problems).into_iter().collect();
    cpu_limits.extend(cpusets);
    Limits {
        mem_available_bytes,
        memory_limits,
        cpu_limits,
        cpu_quotas,
        problems,
    }
}

#[cfg(test)]
mod tests;

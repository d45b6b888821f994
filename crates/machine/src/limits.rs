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
//! Mount points come from `/proc/self/mountinfo` (cgroup v2 may sit at `/sys/fs/cgroup` or
//! `/sys/fs/cgroup/unified`); without it the usual places under `/sys/fs/cgroup` are tried.
//! Here: the limits a result file records ([`MemoryLimit`], [`CpuQuota`]); the readers over a
//! `SysRoot` are `hwsurvey_probe::limits`, so a capture gives the same answer as the live
//! machine.

use hwsurvey_model::CpuSet;
use serde::{Deserialize, Serialize};

/// One limit on the memory of the process, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryLimit {
    /// The limit, bytes.
    pub bytes: u64,
    /// What set it, e.g. `cgroup v1 memory.limit_in_bytes (/sys/fs/cgroup/memory/a/memory.limit_in_bytes)`,
    /// `MemAvailable (/proc/meminfo)`, `RLIMIT_AS (/proc/self/limits)`.
    pub source: String,
    /// Bytes already counted against the limit when it was read (see the module doc);
    /// `None` when unknown (no usage file, or a value written before 2026-12-03).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_use_bytes: Option<u64>,
}

impl MemoryLimit {
    /// What is left under the limit: `bytes` less `in_use_bytes` (all of it when the use is
    /// unknown), bytes.
    pub fn headroom_bytes(&self) -> u64 {
        self.bytes.saturating_sub(self.in_use_bytes.unwrap_or(0))
    }
}

/// A CFS bandwidth limit on the process's cgroup or an ancestor: its threads together may run
/// `quota_us` of every `period_us` (Documentation/scheduler/sched-bwc.rst).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuQuota {
    /// Run time allowed per period, microseconds.
    pub quota_us: u64,
    /// The period, microseconds (> 0).
    pub period_us: u64,
    /// What set it: `cgroup v2 cpu.max (<file>)` or `cgroup v1 cpu.cfs_quota_us (<file>)`.
    pub source: String,
}

impl CpuQuota {
    /// CPUs' worth of run time: quota / period (1.5 = one and a half CPUs busy all the time).
    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us as f64
    }
}

/// The one of `quotas` that allows the least run time ([`CpuQuota::cpus`]): the one that binds.
pub fn lowest_cpu_quota(quotas: &[CpuQuota]) -> Option<&CpuQuota> {
    quotas.iter().min_by(|a, b| a.cpus().total_cmp(&b.cpus()))
}

/// One set of CPUs the process is confined to, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuLimit {
    /// The CPUs.
    pub cpus: CpuSet,
    /// What gave it: `sched_getaffinity`, a `Cpus_allowed_list` or a cpuset file path.
    pub source: String,
}

/// The intersection of `limits`, with the sources joined by " ∩ " where more than one
/// narrows it; `None` when there is none or the intersection is empty (a damaged capture: the
/// kernel never runs a process on no CPU).
pub fn intersect(limits: &[CpuLimit]) -> Option<CpuLimit> {
    let mut it = limits.iter();
    let first = it.next()?.clone();
    let out = it.fold(first, |acc, l| {
        let cpus: CpuSet = acc.cpus.intersection(&l.cpus);
        if cpus == acc.cpus {
            acc
        } else if cpus == l.cpus {
            l.clone()
        } else {
            CpuLimit {
                cpus,
                source: format!("{} ∩ {}", acc.source, l.source),
            }
        }
    });
    (!out.cpus.is_empty()).then_some(out)
}

//! This process's cgroup limits (v1 and v2): the controllers' versions, the CPU bandwidth
//! limit, the cpuset and the memory limit, read from `/proc/self/cgroup` and `/sys/fs/cgroup`.

use hwsurvey_model::{CpuSet, Probed};
use serde::{Deserialize, Serialize};

/// cgroup version in force for a controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CgroupVersion {
    /// cgroup v1 (per-controller hierarchies).
    V1,
    /// cgroup v2 (unified).
    V2,
}

/// A CPU bandwidth limit (`cpu.max` or `cpu.cfs_quota_us`/`cpu.cfs_period_us`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuMax {
    /// Quota per period, microseconds; `None` = no limit (`max` or -1).
    pub quota_us: Option<u64>,
    /// Period, microseconds.
    pub period_us: u64,
    /// The file of the quota when it was found in an ancestor cgroup or named by the walk up
    /// the hierarchy (`hwsurvey_probe::limits::cpu_quotas`); `None` for the process's own cgroup's
    /// file read directly, and in values written before 2026-12-04.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// This process's cgroup limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cgroup {
    /// Version governing the cpu controller.
    pub cpu_version: Option<CgroupVersion>,
    /// Version governing the memory controller.
    pub memory_version: Option<CgroupVersion>,
    /// CPU bandwidth limit.
    pub cpu_max: Probed<CpuMax>,
    /// `cpuset.cpus.effective` (v2) or `cpuset.cpus` (v1).
    pub cpuset_cpus: Probed<CpuSet>,
    /// `memory.max` (v2) or `memory.limit_in_bytes` (v1), bytes; `None` = unlimited
    /// (`max`, or v1's page-rounded i64::MAX).
    pub memory_max_bytes: Probed<Option<u64>>,
}

/// Parses v2 `cpu.max` (`max 100000`, `50000 100000`; [`crate::limits::parse_cpu_max_fields`]).
pub fn parse_cpu_max(text: &str) -> Option<CpuMax> {
    crate::limits::parse_cpu_max_fields(text).map(|(quota_us, period_us)| CpuMax {
        quota_us,
        period_us,
        source: None,
    })
}

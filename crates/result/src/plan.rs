//! The plan as recorded in a result file: concrete points to measure (family, id, threads,
//! CPUs, parameters, memory and time estimate) and the points skipped with their reasons.
//! The engine builds it (`hwsurvey_bench::plan::build_plan`); readers only read it.

use hwsurvey_model::CpuId;
use serde::{Deserialize, Serialize};

use crate::placement::Placement;

/// One concrete measurement to make.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Family id (`mem.bandwidth`).
    pub family: String,
    /// Id unique within the family, readable: `stream.triad/threads=2`.
    pub id: String,
    /// Worker threads.
    pub threads: usize,
    /// Placement policy.
    pub placement: Placement,
    /// CPU of each worker, in worker order (wraps around when oversubscribed).
    pub cpus: Vec<CpuId>,
    /// Family-specific parameters, units in the names (`block_size_bytes`). Read back with
    /// [`Point::params`].
    pub params: serde_json::Value,
    /// Memory this point allocates at most, bytes (checked against the run's memory cap).
    pub memory_bytes: u64,
    /// Estimated wall time, seconds (warm-up + minimum samples).
    pub estimated_s: f64,
}

impl Point {
    /// The family's parameters back as its own type.
    pub fn params<T: serde::de::DeserializeOwned>(&self) -> Result<T, String> {
        serde_json::from_value(self.params.clone())
            .map_err(|e| format!("point {} of {}: bad params: {e}", self.id, self.family))
    }
}

/// A point that will not be measured, and why (page mode unavailable, no storage dir,
/// over the memory cap or the time budget).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedPoint {
    /// Family id.
    pub family: String,
    /// Point id, or `*` when the whole family is skipped.
    pub id: String,
    /// What the point would have been.
    pub params: serde_json::Value,
    /// Why it is skipped.
    pub reason: String,
}

/// One family's part of the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyPlan {
    /// Family id.
    pub family: String,
    /// Budget from the profile, seconds.
    pub budget_s: f64,
    /// Sum of the points' estimates, seconds.
    pub estimated_s: f64,
    /// Points to measure, in order.
    pub points: Vec<Point>,
    /// Points not measured, with reasons.
    pub skipped: Vec<SkippedPoint>,
}

/// The whole plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Profile id.
    pub profile_id: String,
    /// Profile revision.
    pub profile_version: u32,
    /// Usable CPUs the thread rules used.
    pub usable_cpus: usize,
    /// Thread counts by the rule 1, 2, 4, ..., n, n (without oversubscription).
    pub thread_counts: Vec<usize>,
    /// Total last-level cache the working-set rule used, bytes, if known.
    pub llc_total_bytes: Option<u64>,
    /// The "memory" working set by the rule, bytes.
    pub memory_working_set_bytes: u64,
    /// Memory cap of the run (fraction x the lowest of MemAvailable, the cgroup v1/v2 limits
    /// and RLIMIT_AS/RLIMIT_DATA), bytes, if known.
    pub memory_cap_bytes: Option<u64>,
    /// Which limit set [`Plan::memory_cap_bytes`] (e.g. `cgroup v1 memory.limit_in_bytes
    /// (/sys/fs/cgroup/memory/x/memory.limit_in_bytes)`); `None` when the cap is unknown, or in
    /// plans written before it was kept.
    #[serde(default)]
    pub memory_cap_source: Option<String>,
    /// Families in run order.
    pub families: Vec<FamilyPlan>,
}

impl Plan {
    /// Number of points to measure.
    pub fn point_count(&self) -> usize {
        self.families.iter().map(|f| f.points.len()).sum()
    }
    /// Sum of all estimates, seconds.
    pub fn estimated_s(&self) -> f64 {
        self.families.iter().map(|f| f.estimated_s).sum()
    }
}

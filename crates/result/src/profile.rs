//! The engine rules of a profile (`[run]`) as recorded in a result file. The profile loader
//! (`hwsurvey_engine::profile`) reads and range-checks them; the serde checks here hold for
//! both.

use serde::{Deserialize, Deserializer, Serialize};

use crate::placement::Placement;

/// Engine rules shared by every family: `[run]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSettings {
    /// Thread placement policy for every point.
    pub placement: Placement,
    /// Each timed sample lasts at least this long, seconds (0.2 in the standard profile);
    /// range (0, 60].
    pub sample_min_s: f64,
    /// ... and at least this many ticks of the clock's measured resolution (20); 1..=1000000.
    pub sample_min_clock_ticks: u32,
    /// Untimed warm-up before the first sample of a point, seconds; [0, 60].
    pub warmup_s: f64,
    /// Samples always taken per point; 2..=1000.
    #[serde(deserialize_with = "at_least_two")]
    pub samples_min: usize,
    /// Hard cap of samples per point; samples_min..=1000.
    pub samples_max: usize,
    /// Take more samples (up to the cap) while the CV exceeds this fraction; (0, 1].
    pub target_cv: f64,
    /// The run never allocates more than this fraction of min(MemAvailable, cgroup limit);
    /// (0, 1].
    #[serde(deserialize_with = "fraction")]
    pub memory_fraction: f64,
    /// "Memory" working sets are at least this multiple of the total last-level cache;
    /// (0, 64].
    pub memory_llc_multiple: f64,
    /// Floor of a "memory" working set when the LLC is unknown, bytes; 4096..=2^40 (1 TiB).
    pub memory_min_working_set_bytes: u64,
    /// Ceiling of any working set, bytes (the quick profile keeps qemu runs short); absent =
    /// only the memory fraction bounds it; 4096..=2^40 and >= `memory_min_working_set_bytes`.
    #[serde(default)]
    pub memory_max_working_set_bytes: Option<u64>,
    /// Oversubscription points use this multiple of the usable CPUs; 1..=64, and the point's
    /// threads are cut to `MAX_THREADS_PER_POINT` (4096).
    pub oversubscription_factor: usize,
    /// Obsolete, seconds: profiles before issue 13 gave a whole-run time budget here, and
    /// family budgets that dropped points. The profile now defines the points; a run is
    /// bounded only by `hwsurvey run --max-time`. Accepted (range (0, 86400]) so that older
    /// profiles and result files load; it changes nothing, and `run` prints a note when a
    /// profile gives it. Absent in new files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
}

fn fraction<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(serde::de::Error::custom(format!(
            "expected a fraction in (0, 1], got {v}"
        )))
    }
}

fn at_least_two<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let v = usize::deserialize(d)?;
    if v >= 2 {
        Ok(v)
    } else {
        Err(serde::de::Error::custom(format!(
            "expected at least 2 (a sample needs two values for a spread), got {v}"
        )))
    }
}

impl RunSettings {
    /// The "memory" working set these rules ask for, before any memory cap, bytes: the larger
    /// of `memory_llc_multiple` x the total last-level cache (`llc_total_bytes`, 0 when
    /// unknown) and `memory_min_working_set_bytes`, at most `memory_max_working_set_bytes`.
    /// The plan takes the smaller of this and the memory cap.
    pub fn working_set_rule_bytes(&self, llc_total_bytes: Option<u64>) -> u64 {
        let from_llc = llc_total_bytes
            .map(|b| (b as f64 * self.memory_llc_multiple) as u64)
            .unwrap_or(0);
        let ws = from_llc.max(self.memory_min_working_set_bytes);
        match self.memory_max_working_set_bytes {
            Some(max) => ws.min(max),
            None => ws,
        }
    }
}

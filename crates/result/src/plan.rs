//! The plan as recorded in a result file: concrete points to measure (family, id, threads,
//! CPUs, parameters, memory and time estimate) and the points skipped with their reasons.
//! The engine builds it (`hwsurvey_engine::plan::build_plan`); readers only read it.

use hwsurvey_model::CpuId;
use serde::{Deserialize, Serialize};

use crate::placement::Placement;

/// A point may take this multiple of its estimate ([`Point::estimated_s`]): the profile's
/// `samples_min` samples are always taken; extra samples (while the CV is over the target) stop
/// when the allowance is spent.
pub const POINT_ALLOWANCE_FACTOR: f64 = 1.25;

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
    /// Estimated wall time, seconds (warm-up, calibration, the profile's minimum samples and
    /// the family's own setup).
    pub estimated_s: f64,
    /// Topology landmarks whose CPUs this point's workers occupy exactly, one thread each
    /// (names as in [`Landmark::name`]: `smt_core`, `cluster`, `llc_group`, `numa_node`,
    /// `package`, `cores`, `all`, `oversubscribed`), so that `compare` can line up "one package"
    /// of machines of different sizes. Empty for points between landmarks (and in files
    /// written before landmarks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub landmarks: Vec<String>,
}

impl Point {
    /// The most this point may take, seconds: [`Point::estimated_s`] x
    /// [`POINT_ALLOWANCE_FACTOR`].
    pub fn allowance_s(&self) -> f64 {
        self.estimated_s * POINT_ALLOWANCE_FACTOR
    }

    /// The family's parameters back as its own type.
    pub fn params<T: serde::de::DeserializeOwned>(&self) -> Result<T, String> {
        serde_json::from_value(self.params.clone())
            .map_err(|e| format!("point {} of {}: bad params: {e}", self.id, self.family))
    }
}

/// The thread part of a point id on the thread ladder: `threads=48`, or `threads=48/cores` for
/// a landmark rung with CPUs of its own (`own`, a landmark name, [`Landmark`]). The engine's
/// ladder writes it; [`split_rung`] reads it back.
pub fn rung_id_part(threads: usize, own: Option<&str>) -> String {
    match own {
        Some(name) => format!("threads={threads}/{name}"),
        None => format!("threads={threads}"),
    }
}

/// A point id split at its thread rung ([`rung_id_part`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RungId<'a> {
    /// What comes before `/threads=N` (`stream.triad`, `read/block=1MiB`).
    pub prefix: &'a str,
    /// N, the worker threads.
    pub threads: usize,
    /// The landmark of a rung with CPUs of its own (`cores`), else `None`.
    pub own: Option<&'a str>,
}

/// Splits `stream.triad/threads=48/cores` into prefix, threads and own landmark. `None` when
/// the id does not end in a thread rung: no `/threads=N`, N not a whole number, or something
/// after it that is not a landmark name (`storage.iops`'s `.../threads=4/qd=8`).
pub fn split_rung(id: &str) -> Option<RungId<'_>> {
    let (prefix, rest) = id.rsplit_once("/threads=")?;
    let (n, own) = match rest.split_once('/') {
        Some((n, own)) if LANDMARK_NAMES.contains(&own) => (n, Some(own)),
        Some(_) => return None,
        None => (rest, None),
    };
    let threads = n.parse().ok()?;
    Some(RungId {
        prefix,
        threads,
        own,
    })
}

/// Every landmark name ([`Landmark`]), in ladder order.
pub const LANDMARK_NAMES: [&str; 9] = [
    "smt_core",
    "cluster",
    "llc_group",
    "numa_node",
    "package",
    // one thread per core of one package (cpu.clock's own CPU set)
    "package_cores",
    "cores",
    "all",
    "oversubscribed",
];

/// A point that will not be measured, and why (page mode unavailable, no storage dir,
/// over the memory cap; at run time: interrupted, or dropped by `--max-time`).
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
    /// Time allowance of the family, seconds: the sum of its points' allowances (each point
    /// may take its estimate x [`POINT_ALLOWANCE_FACTOR`] before its adaptive extra samples
    /// stop). Never a reason to drop a point. (Result files written before issue 13 held the
    /// profile's family budget here, which dropped points.)
    pub budget_s: f64,
    /// Sum of the points' estimates, seconds: the expected time of the family.
    pub estimated_s: f64,
    /// Points to measure, in order.
    pub points: Vec<Point>,
    /// Points not measured, with reasons.
    pub skipped: Vec<SkippedPoint>,
}

/// A topology landmark of the thread ladder: a set of CPUs with a meaning, taken from the
/// probe's `Machine` and limited to the usable CPUs.
///
/// Names: `smt_core` (the hardware threads of one core, where a core has more than one),
/// `cluster` (one cluster, `topology/cluster_id`, where it is more than a core and less than an
/// LLC group), `llc_group` (the CPUs sharing one last-level cache instance), `numa_node` (one
/// NUMA node's CPUs), `package` (one package), `cores` (every physical core, one thread each),
/// `all` (every usable CPU), `oversubscribed` (`oversubscription_factor` x all, for families that
/// ask). Each is the group of the first usable CPU in compact order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Landmark {
    /// Landmark name (above).
    pub name: String,
    /// Its thread count: the number of CPUs (`oversubscribed`: the threads).
    pub threads: usize,
    /// Its CPUs, in the order workers take them (siblings of a core adjacent; for `cores` the
    /// first thread of each core). Empty for `oversubscribed` (workers wrap around `all`).
    pub cpus: Vec<CpuId>,
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
    /// The thread ladder without oversubscription: 1, 2, 4, ... below the usable CPUs, the
    /// usable CPUs, and the thread counts of the topology landmarks, ascending.
    pub thread_counts: Vec<usize>,
    /// The topology landmarks of the ladder (empty in files written before landmarks).
    #[serde(default)]
    pub landmarks: Vec<Landmark>,
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
    /// The cgroup CPU quota in force when planning (`RunEnv::cpu_quota`): threads past its
    /// CPUs' worth are throttled. `None` when there is none, or in plans written before
    /// 2026-12-04.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<hwsurvey_machine::limits::CpuQuota>,
    /// The machine's speed at fixed work (memory first touch, pointer-chain layout, thread
    /// start) that the time estimates used; `None` in files written before it was kept.
    #[serde(default)]
    pub fixed_work: Option<FixedWorkSpeed>,
    /// Families in run order.
    pub families: Vec<FamilyPlan>,
}

/// How fast this machine does the fixed work of a point, the part of its time that is not a
/// timed sample: allocating and first touching its memory, laying out a pointer chain or a
/// hash table, starting its threads. Measured by `hwsurvey_engine::speed::measure` just before
/// planning (about 0.1 s here; seconds in an emulator), so that the estimate follows the
/// machine: a 16-vCPU qemu TCG guest on 2 host cores does this work 5-20x slower than this
/// VM while its timed samples last as long (issue 13).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixedWorkSpeed {
    /// First touch and fill of fresh memory by one thread, seconds per byte.
    pub touch_s_per_byte: f64,
    /// One step of Sattolo's shuffle (a random draw and a swap) over an 8 MiB chain of 8-byte
    /// slots by one thread, in cache, seconds: a chase's layout costs about two such steps a
    /// line beside the first touch of its memory ([`FixedWorkSpeed::chain_layout_s`]).
    pub layout_s_per_slot: f64,
    /// Starting one worker thread that fills a 256 KiB buffer (a latency histogram's size) while
    /// others run, and joining it, seconds.
    pub spawn_s: f64,
    /// Seconds until a busy thread beyond the CPUs sees a stop flag and exits: with more
    /// runnable threads than CPUs, each waits for a scheduler slice (`8 x` the usable CPUs,
    /// at most 256, spin on a flag; the time to drain them per thread beyond the CPUs). `None`
    /// in files written before it was kept.
    #[serde(default)]
    pub drain_s_per_thread: Option<f64>,
    /// CPUs that really run at once: `parallel_threads` threads doing the touch job together
    /// against one thread doing it alone (1 ..= `parallel_threads`). Below the usable CPUs on
    /// an oversubscribed virtual machine.
    pub parallel_cpus: f64,
    /// Threads of the parallel measurement (the usable CPUs, at most 64); 0 when not measured.
    pub parallel_threads: usize,
    /// "measured", or why the figures are the reference machine's (e.g. a plan for a capture).
    pub source: String,
}

impl FixedWorkSpeed {
    /// The reference figures: this project's 2-vCPU build VM (AMD EPYC, KVM), a release build of
    /// `hwsurvey_engine::speed::measure`. Used where nothing was measured; every thread is
    /// taken to run at once (`parallel_cpus` 4096, `parallel_threads` 0: not measured), as on
    /// real hardware.
    pub fn reference(source: impl Into<String>) -> Self {
        FixedWorkSpeed {
            touch_s_per_byte: REFERENCE_TOUCH_S_PER_BYTE,
            layout_s_per_slot: REFERENCE_LAYOUT_S_PER_SLOT,
            spawn_s: REFERENCE_SPAWN_S,
            drain_s_per_thread: Some(REFERENCE_DRAIN_S_PER_THREAD),
            parallel_cpus: 4096.0,
            parallel_threads: 0,
            source: source.into(),
        }
    }

    /// [`FixedWorkSpeed::drain_s_per_thread`], or the reference machine's where a file did
    /// not keep it.
    pub fn drain_s(&self) -> f64 {
        self.drain_s_per_thread
            .unwrap_or(REFERENCE_DRAIN_S_PER_THREAD)
    }

    /// Seconds to lay out a random pointer chain over `lines` lines of `line_bytes` bytes: the
    /// first touch of the lines and of the successor array (8 bytes a line) at
    /// `touch_s_per_byte`, and one Sattolo step a line beyond the caches, taken as two in-cache
    /// steps (`layout_s_per_slot`): on a 2-vCPU Zen 2 VM a step took 11.5 ns in an 8 MiB chain
    /// and 25.5 ns in a 32 MiB one, and 256 MiB of 64-byte lines were laid out in 0.19-0.21 s
    /// (`chase_setup_s`); this gives 0.19 s (touch 0.263 ns a byte, in-cache step 13.2 ns).
    /// Measuring the step beyond the cache instead cost about 2 s a run in a TCG guest.
    pub fn chain_layout_s(&self, lines: u64, line_bytes: u64) -> f64 {
        lines as f64
            * ((line_bytes + 8) as f64 * self.touch_s_per_byte + 2.0 * self.layout_s_per_slot)
    }

    /// Seconds for `n` inserts at random places of a table far larger than the caches (a hash
    /// index's build): one step beyond the caches each (two in-cache steps, as
    /// [`FixedWorkSpeed::chain_layout_s`]). The table's first touch is counted apart
    /// ([`FixedWorkSpeed::touch_and_start_s`]).
    pub fn random_inserts_s(&self, n: u64) -> f64 {
        n as f64 * 2.0 * self.layout_s_per_slot
    }

    /// Seconds to allocate and first touch `bytes` of memory split over `threads` threads
    /// (they run `min(threads, parallel_cpus)` at once) and to start those threads.
    pub fn touch_and_start_s(&self, bytes: u64, threads: usize) -> f64 {
        let at_once = (threads.max(1) as f64).min(self.parallel_cpus.max(1.0));
        bytes as f64 * self.touch_s_per_byte / at_once + threads as f64 * self.spawn_s
    }
}

/// [`FixedWorkSpeed::reference`]'s first touch, seconds per byte.
pub const REFERENCE_TOUCH_S_PER_BYTE: f64 = 0.55e-9;
/// [`FixedWorkSpeed::reference`]'s chain layout, seconds per slot.
pub const REFERENCE_LAYOUT_S_PER_SLOT: f64 = 4e-9;
/// [`FixedWorkSpeed::reference`]'s drain time per busy thread beyond the CPUs, seconds.
pub const REFERENCE_DRAIN_S_PER_THREAD: f64 = 3e-3;
/// [`FixedWorkSpeed::reference`]'s thread start and join, seconds.
pub const REFERENCE_SPAWN_S: f64 = 150e-6;

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout of a 256 MiB chase of 64-byte lines on the 2-vCPU Zen 2 VM of 2026-12-06:
    /// its plan measured a first touch of 0.263 ns a byte and an in-cache Sattolo step of 13.2
    /// ns, and mem.loaded_latency recorded 0.19-0.21 s laid out (`chase_setup_s`). The estimate
    /// lies within the 25 % of that; the former one (200 ns a line scaled by the
    /// in-cache step's 13.2 ns against 4) planned 2.8 s.
    #[test]
    fn a_chase_layout_is_estimated_from_the_touch_and_the_step() {
        let zen2 = FixedWorkSpeed {
            touch_s_per_byte: 0.263e-9,
            layout_s_per_slot: 13.2e-9,
            ..FixedWorkSpeed::reference("test")
        };
        let lines = (256u64 << 20) / 64;
        let s = zen2.chain_layout_s(lines, 64);
        assert!((0.190..0.191).contains(&s), "{s}");
        assert!((0.19 * 0.75..=0.21 * 1.25).contains(&s), "{s}");
        // a million random inserts of a point-select index: 26 ms (its build took 0.11 s with
        // the first touch of 160 MiB, counted apart at 0.263 ns a byte: 44 ms)
        assert!((zen2.random_inserts_s(1_000_000) - 0.0264).abs() < 1e-9);
    }

    #[test]
    fn rung_ids_round_trip_and_other_suffixes_are_not_rungs() {
        for (threads, own) in [(1, None), (48, Some("cores")), (64, Some("oversubscribed"))] {
            let id = format!("stream.triad/{}", rung_id_part(threads, own));
            assert_eq!(
                split_rung(&id),
                Some(RungId {
                    prefix: "stream.triad",
                    threads,
                    own
                }),
                "{id}"
            );
        }
        assert_eq!(
            split_rung("read/block=1MiB/threads=4/package")
                .unwrap()
                .prefix,
            "read/block=1MiB"
        );
        // storage.iops: a queue depth after the threads is no landmark
        assert_eq!(split_rung("randread/target=dir0/threads=4/qd=8"), None);
        assert_eq!(split_rung("stream.triad/threads=x"), None);
        assert_eq!(split_rung("closed/clients=2/pages=thp"), None);
    }
}

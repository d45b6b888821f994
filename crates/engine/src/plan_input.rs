//! What a family's `plan` gets and returns ([`PlanInput`], [`FamilyPoints`]) and the command
//! line options families read ([`RunOptions`]), with the shared planning rules a family applies
//! through [`PlanInput`]: the thread ladder, CPUs by placement, working set and memory cap,
//! points and skips. The plan as a whole is built in [`crate::plan`].

use hwsurvey_model::CpuId;
use hwsurvey_probe::Machine;
use serde::{Deserialize, Serialize};

use crate::affinity::cpu_order;
use crate::env::RunEnv;
use crate::ladder::{Landmark, Rung};
use crate::profile::{RunSettings, Section};
use hwsurvey_result::plan::{Point, SkippedPoint};

/// Options from the command line that families read (storage targets).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunOptions {
    /// `--storage-dir DIR` (repeatable): directories where storage test files may be created.
    pub storage_dirs: Vec<std::path::PathBuf>,
    /// `--storage-device /dev/X` (repeatable): raw devices, used only with `destructive`.
    pub storage_devices: Vec<std::path::PathBuf>,
    /// `--destructive`: the user allows writing to the raw devices above.
    pub destructive: bool,
    /// `--confirm-device SERIAL|SIZE` (repeatable): a raw device without any signature that
    /// holds data where the run writes, or whose users cannot all be read, is written only
    /// when one of these names it (its serial, or its size in bytes).
    #[serde(default)]
    pub confirm_devices: Vec<String>,
    /// `run --plan-only --root`: planning for a captured machine. Facts a capture may not
    /// hold do not skip points: without a memory size the plan has no memory cap (it says so)
    /// instead of assuming 1 GiB, and with the THP state unknown the THP points are planned.
    #[serde(default)]
    pub capture: bool,
    /// This machine's speed at fixed work, measured before planning
    /// ([`crate::speed::measure`]; not a command-line option). `None`: the reference
    /// machine's figures, stated in the plan ([`RunOptions::fixed_work`]).
    #[serde(default)]
    pub speed: Option<crate::speed::FixedWorkSpeed>,
}

impl RunOptions {
    /// The fixed-work speed the estimates use: the measured one, or the reference machine's
    /// with the reason (a plan for a capture cannot measure the captured machine).
    pub fn fixed_work(&self) -> crate::speed::FixedWorkSpeed {
        self.speed.clone().unwrap_or_else(|| {
            crate::speed::FixedWorkSpeed::reference(if self.capture {
                "reference machine (a plan for a captured machine cannot measure it)"
            } else {
                "reference machine (not measured)"
            })
        })
    }
}

/// What a family's `plan` gets.
pub struct PlanInput<'a> {
    /// Its section of the profile.
    pub section: &'a Section,
    /// Engine rules.
    pub settings: &'a RunSettings,
    /// The probe document.
    pub machine: &'a Machine,
    /// Live facts.
    pub env: &'a RunEnv,
    /// Command-line options for families.
    pub options: &'a RunOptions,
    /// The topology landmarks of the usable CPUs ([`crate::ladder::landmarks`]).
    pub landmarks: &'a [Landmark],
    /// The fixed-work speed of the estimates ([`RunOptions::fixed_work`]).
    pub speed: &'a crate::speed::FixedWorkSpeed,
}

impl PlanInput<'_> {
    /// The thread ladder ([`crate::ladder::ladder`]): 1, 2, 4, ... below the usable CPUs, the
    /// usable CPUs and the landmarks' counts; with `oversubscribe`, also
    /// `oversubscription_factor` x usable. Every count is at most
    /// [`crate::profile::MAX_THREADS_PER_POINT`] (4096). Build points of a rung with
    /// [`PlanInput::rung_point`] and ids with [`crate::ladder::Rung::id_part`].
    pub fn ladder(&self, oversubscribe: bool) -> Vec<Rung> {
        crate::ladder::ladder(
            self.env,
            self.landmarks,
            self.settings.placement,
            oversubscribe.then_some(self.settings.oversubscription_factor),
            crate::profile::MAX_THREADS_PER_POINT,
        )
    }

    /// The distinct thread counts of [`PlanInput::ladder`], ascending (rungs of their own,
    /// such as every core with one thread, share a count with a placement rung or add one).
    pub fn thread_counts(&self, oversubscribe: bool) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .ladder(oversubscribe)
            .iter()
            .map(|r| r.threads)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// A point on `rung`: its threads, its CPUs and its landmarks, the standard estimate.
    pub fn rung_point(
        &self,
        id: impl Into<String>,
        rung: &Rung,
        params: impl Serialize,
        memory_bytes: u64,
    ) -> Point {
        let mut p = self.point(id, rung.threads, params, memory_bytes);
        p.cpus = rung.cpus.clone();
        p.landmarks = rung.landmarks.clone();
        p
    }

    /// Worker CPUs for `threads` workers under the profile's placement.
    pub fn cpus_for(&self, threads: usize) -> Vec<CpuId> {
        let order = cpu_order(&self.env.cpus, self.settings.placement);
        let order = if order.is_empty() {
            self.env.usable_cpus.iter().collect()
        } else {
            order
        };
        (0..threads)
            .map(|i| order.get(i % order.len().max(1)).copied().unwrap_or(0))
            .collect()
    }

    /// The run's memory cap, bytes; when MemAvailable and the cgroup limit are both
    /// unknown, 1 GiB (stated in the plan), or no cap (`u64::MAX`) with
    /// [`RunOptions::capture`].
    pub fn memory_cap_bytes(&self) -> u64 {
        match self.env.memory_cap_bytes(self.settings.memory_fraction) {
            Some(b) => b,
            None if self.options.capture => u64::MAX,
            None => 1 << 30,
        }
    }

    /// Total working set of a "memory" point, bytes: max(k x total LLC, floor), bounded by
    /// the profile's ceiling and the memory cap.
    pub fn memory_working_set_bytes(&self) -> u64 {
        memory_working_set_bytes(self.settings, self.env, self.memory_cap_bytes())
    }

    /// Seconds of fixed work for a point of `threads` threads over `memory_bytes`: first touch
    /// of its memory and the start of its threads at this machine's measured speed
    /// ([`RunOptions::fixed_work`]).
    pub fn fixed_work_s(&self, memory_bytes: u64, threads: usize) -> f64 {
        self.speed().touch_and_start_s(memory_bytes, threads)
    }

    /// The fixed-work speed of the plan ([`RunOptions::fixed_work`]), measured once per plan.
    pub fn speed(&self) -> &crate::speed::FixedWorkSpeed {
        self.speed
    }

    /// Expected time of a point whose repetition is short, seconds: warm-up and calibration
    /// (doubling up to 1/4 of a sample: about half a sample in all), the profile's
    /// `samples_min` samples plus one (the adaptive rule's usual extra sample, measured on a
    /// 2-CPU VM: 3.9 samples on average with `samples_min` 3; none when `samples_max` is
    /// `samples_min`), and 0.05 s of thread start and
    /// bookkeeping. A point may take [`crate::plan::POINT_ALLOWANCE_FACTOR`] times its
    /// estimate.
    pub fn estimate_point_s(&self) -> f64 {
        self.settings.warmup_s.max(0.5 * self.settings.sample_min_s)
            + (self.settings.samples_min + 1).min(self.settings.samples_max) as f64
                * self.settings.sample_min_s
                * 1.05
            + 0.05
    }

    /// Samples a point whose samples are fixed windows (no calibration: sync.contention,
    /// mem.loaded_latency) is expected to take: the profile's `samples_min` (at least 2, as
    /// [`RunContext::repeat`](crate::runner::RunContext::repeat) takes) and half a sample more
    /// when `samples_max` allows more. Half: on a quiet host such a point stops at the minimum
    /// (every sync.contention point of the standard run took 3 samples on the 2-vCPU Zen 2 VM,
    /// 0.705-0.717 s a point; loaded-latency points 3 in one run, 3 to 5 in the next), on a
    /// busy one it takes one or two more. [`PlanInput::estimate_point_s`]'s whole extra
    /// calibrated sample put those families at 0.72 and 0.74 of their estimates there.
    pub fn windowed_samples(&self) -> f64 {
        let s = self.settings;
        let min = s.samples_min.max(2);
        min as f64 + if s.samples_max > min { 0.5 } else { 0.0 }
    }

    /// Expected time of a point whose samples are fixed windows of `sample_min_s`
    /// (sync.contention), seconds: its warm-up window (`warmup_s`), [`PlanInput::windowed_samples`]
    /// windows, and 0.05 s of thread start and bookkeeping.
    pub fn windowed_point_s(&self) -> f64 {
        let s = self.settings;
        s.warmup_s.max(0.0) + self.windowed_samples() * s.sample_min_s + 0.05
    }

    /// Builds a point with the profile's placement and the standard estimate plus the fixed
    /// work of its threads and memory ([`PlanInput::fixed_work_s`]).
    pub fn point(
        &self,
        id: impl Into<String>,
        threads: usize,
        params: impl Serialize,
        memory_bytes: u64,
    ) -> Point {
        Point {
            family: self.section.family.clone(),
            id: id.into(),
            threads,
            placement: self.settings.placement,
            cpus: self.cpus_for(threads),
            params: serde_json::to_value(params).unwrap_or(serde_json::Value::Null),
            memory_bytes,
            estimated_s: self.estimate_point_s() + self.fixed_work_s(memory_bytes, threads),
            landmarks: vec![],
        }
    }

    /// Builds a skipped point.
    pub fn skip(
        &self,
        id: impl Into<String>,
        params: impl Serialize,
        reason: impl Into<String>,
    ) -> SkippedPoint {
        SkippedPoint {
            family: self.section.family.clone(),
            id: id.into(),
            params: serde_json::to_value(params).unwrap_or(serde_json::Value::Null),
            reason: reason.into(),
        }
    }
}

pub(crate) fn memory_working_set_bytes(settings: &RunSettings, env: &RunEnv, cap: u64) -> u64 {
    settings
        .working_set_rule_bytes(env.llc.known().map(|l| l.total_size_bytes))
        .min(cap)
}

/// What a family returns from `plan`.
#[derive(Debug, Clone, Default)]
pub struct FamilyPoints {
    /// Points to measure, in run order.
    pub points: Vec<Point>,
    /// Points not measured, with reasons.
    pub skipped: Vec<SkippedPoint>,
}

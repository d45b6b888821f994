//! The plan: a pure function (profile, Machine, RunEnv) -> concrete points.
//!
//! Each family turns its profile section into [`Point`]s (and [`SkippedPoint`]s with reasons)
//! through [`PlanInput`], which applies the shared rules: thread counts 1, 2, 4, ... up to the
//! usable CPUs plus that count plus oversubscription, working sets >= k x the total
//! last-level cache, the memory cap, and the time estimate of a point.
//!
//! The profile defines the points: no time budget drops one (issue 13). The run time follows
//! from the plan, growing with the number of thread counts (about log2 of the CPUs); the
//! plan's estimate ([`Plan::estimated_s`]) is printed before the run and each family's
//! estimated and actual time goes into the result file. Only a point that cannot run here (over
//! the memory cap, a page mode or storage target this machine lacks) is skipped, with its
//! reason.

use std::collections::BTreeMap;

use hwsurvey_model::CpuId;
use hwsurvey_probe::Machine;
use serde::{Deserialize, Serialize};

use crate::affinity::cpu_order;
use crate::env::RunEnv;
use crate::ladder::{Landmark, Rung};
use crate::profile::{Profile, RunSettings, Section};

/// Options from the command line that families read (storage targets).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunOptions {
    /// `--storage-dir DIR` (repeatable): directories where storage test files may be created.
    pub storage_dirs: Vec<std::path::PathBuf>,
    /// `--storage-device /dev/X` (repeatable): raw devices, used only with `destructive`.
    pub storage_devices: Vec<std::path::PathBuf>,
    /// `--destructive`: the user allows writing to the raw devices above.
    pub destructive: bool,
    /// `run --plan-only --root`: planning for a captured machine. Facts a capture may not
    /// hold do not skip points: without a memory size the plan has no memory cap (it says so)
    /// instead of assuming 1 GiB, and with the THP state unknown the THP points are planned.
    #[serde(default)]
    pub capture: bool,
}

/// Memory cap source stated in a plan of a capture without memory sizes.
pub const UNCAPPED_SOURCE: &str =
    "none: the capture holds no memory size (/proc/meminfo, node meminfo), no cap applied";

pub use hwsurvey_result::plan::{FamilyPlan, Plan, Point, SkippedPoint, POINT_ALLOWANCE_FACTOR};

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

    /// Builds a point with the profile's placement and the standard estimate.
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
            estimated_s: self.estimate_point_s(),
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

/// 1, 2, 4, ... below `n`, then `n` (n >= 1).
pub fn thread_counts(n: usize) -> Vec<usize> {
    let n = n.max(1);
    let mut v = Vec::new();
    let mut t = 1;
    while t < n {
        v.push(t);
        t *= 2;
    }
    v.push(n);
    v
}

fn memory_working_set_bytes(settings: &RunSettings, env: &RunEnv, cap: u64) -> u64 {
    let from_llc = env
        .llc
        .known()
        .map(|l| (l.total_size_bytes as f64 * settings.memory_llc_multiple) as u64)
        .unwrap_or(0);
    let mut ws = from_llc.max(settings.memory_min_working_set_bytes);
    if let Some(max) = settings.memory_max_working_set_bytes {
        ws = ws.min(max);
    }
    ws.min(cap)
}

/// What a family returns from `plan`.
#[derive(Debug, Clone, Default)]
pub struct FamilyPoints {
    /// Points to measure, in run order.
    pub points: Vec<Point>,
    /// Points not measured, with reasons.
    pub skipped: Vec<SkippedPoint>,
}

/// Builds the plan: every enabled family of `profile` that is in `families` (and in `only`,
/// when given), in registry order. Pure: reads nothing but its arguments.
pub fn build_plan(
    profile: &Profile,
    families: &[&dyn crate::families::Family],
    machine: &Machine,
    env: &RunEnv,
    options: &RunOptions,
    only: &[String],
) -> Result<Plan, crate::profile::ProfileError> {
    // one source of machine facts: CPU places and the last-level cache from the probe
    let env = &crate::ladder::with_machine_facts(machine, env.clone());
    let marks = crate::ladder::landmarks(machine, env);
    let mut out = Vec::new();
    let cap_with_source = env.memory_cap(profile.run.memory_fraction);
    let cap = cap_with_source.as_ref().map(|(b, _)| *b);
    let uncapped = cap.is_none() && options.capture;
    let cap_source = cap_with_source
        .as_ref()
        .map(|(_, s)| s.clone())
        .unwrap_or_else(|| "unknown: 1 GiB assumed".into());
    for family in families {
        let id = family.id();
        if !only.is_empty()
            && !only
                .iter()
                .any(|o| o == id || id.starts_with(&format!("{o}.")))
        {
            continue;
        }
        let Some(section) = profile.families.get(id) else {
            continue;
        };
        if !section.common.enabled {
            out.push(FamilyPlan {
                family: id.into(),
                budget_s: 0.0,
                estimated_s: 0.0,
                points: vec![],
                skipped: vec![SkippedPoint {
                    family: id.into(),
                    id: "*".into(),
                    params: serde_json::Value::Null,
                    reason: "disabled in the profile".into(),
                }],
            });
            continue;
        }
        let input = PlanInput {
            section,
            settings: &profile.run,
            machine,
            env,
            options,
            landmarks: &marks,
        };
        let planned = family.plan(&input)?;
        let mem_cap = input.memory_cap_bytes();
        let mut fp = FamilyPlan {
            family: id.into(),
            budget_s: 0.0,
            estimated_s: 0.0,
            points: vec![],
            skipped: planned.skipped,
        };
        for p in planned.points {
            if p.memory_bytes > mem_cap {
                fp.skipped.push(SkippedPoint {
                    family: id.into(),
                    id: p.id.clone(),
                    params: p.params.clone(),
                    reason: format!(
                        "needs {} bytes, over the memory cap of {} bytes ({} x {cap_source})",
                        p.memory_bytes, mem_cap, profile.run.memory_fraction
                    ),
                });
            } else {
                fp.estimated_s += p.estimated_s;
                fp.budget_s += p.allowance_s();
                fp.points.push(p);
            }
        }
        out.push(fp);
    }
    let mut unknown_only: Vec<&String> = only
        .iter()
        .filter(|o| {
            !families
                .iter()
                .any(|f| f.id() == o.as_str() || f.id().starts_with(&format!("{o}.")))
        })
        .collect();
    if let Some(o) = unknown_only.pop() {
        return Err(crate::profile::ProfileError {
            file: profile.source.clone(),
            line: None,
            key: None,
            message: format!(
                "--only {o}: no such family; known: {}",
                families
                    .iter()
                    .map(|f| f.id())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    let settings = &profile.run;
    Ok(Plan {
        profile_id: profile.id.clone(),
        profile_version: profile.version,
        usable_cpus: env.cpu_count(),
        thread_counts: {
            let mut v: Vec<usize> = crate::ladder::ladder(
                env,
                &marks,
                settings.placement,
                None,
                crate::profile::MAX_THREADS_PER_POINT,
            )
            .iter()
            .map(|r| r.threads)
            .collect();
            v.dedup();
            v
        },
        landmarks: marks.clone(),
        llc_total_bytes: env.llc.known().map(|l| l.total_size_bytes),
        memory_working_set_bytes: memory_working_set_bytes(
            settings,
            env,
            cap.unwrap_or(if uncapped { u64::MAX } else { 1 << 30 }),
        ),
        memory_cap_bytes: cap,
        memory_cap_source: match cap_with_source {
            Some((_, s)) => Some(s),
            None if uncapped => Some(UNCAPPED_SOURCE.into()),
            None => None,
        },
        families: out,
    })
}

/// The plan of `profile` fitted into `max_time_s` seconds (`hwsurvey run --max-time`): the
/// profile, possibly with shortened engine rules, the plan built from it, and what was changed
/// (`None`: the full plan fits, nothing changed).
///
/// The full plan when its estimate fits. Otherwise samples and repetitions are shortened
/// first, step by step, until the estimate fits: no adaptive extra samples (`samples_max` =
/// `samples_min`), then 2 samples per point, then `sample_min_s` and `warmup_s` halved (at
/// most three times, `sample_min_s` not below 0.05 s). Only when the shortest rules still do
/// not fit are points dropped, as a last resort: the last point of the family with the largest
/// estimate, again and again, each recorded as skipped with the reason.
pub fn fit_plan(
    profile: &Profile,
    families: &[&dyn crate::families::Family],
    machine: &Machine,
    env: &RunEnv,
    options: &RunOptions,
    only: &[String],
    max_time_s: f64,
) -> Result<(Profile, Plan, Option<hwsurvey_result::TimeLimit>), crate::profile::ProfileError> {
    let full = build_plan(profile, families, machine, env, options, only)?;
    let full_s = full.estimated_s();
    if full_s <= max_time_s {
        return Ok((profile.clone(), full, None));
    }
    let mut p = profile.clone();
    let mut shortened = Vec::new();
    let mut plan = full;
    let steps: [fn(&mut RunSettings) -> Option<String>; 5] = [
        |r| {
            (r.samples_max > r.samples_min).then(|| {
                let line = format!("samples_max {} -> {}", r.samples_max, r.samples_min);
                r.samples_max = r.samples_min;
                line
            })
        },
        |r| {
            (r.samples_min > 2).then(|| {
                let line = format!("samples_min {} -> 2", r.samples_min);
                r.samples_min = 2;
                r.samples_max = 2;
                line
            })
        },
        halve_samples,
        halve_samples,
        halve_samples,
    ];
    for step in steps {
        if let Some(line) = step(&mut p.run) {
            shortened.push(line);
            plan = build_plan(&p, families, machine, env, options, only)?;
            if plan.estimated_s() <= max_time_s {
                break;
            }
        }
    }
    let reason = format!(
        "dropped by --max-time {max_time_s} s: the plan with the shortest samples was \
         estimated over it"
    );
    let mut dropped = 0;
    while plan.estimated_s() > max_time_s {
        let Some(f) = plan
            .families
            .iter_mut()
            .filter(|f| !f.points.is_empty())
            .max_by(|a, b| a.estimated_s.total_cmp(&b.estimated_s))
        else {
            break;
        };
        let Some(point) = f.points.pop() else { break };
        f.estimated_s -= point.estimated_s;
        f.budget_s -= point.allowance_s();
        f.skipped.push(SkippedPoint {
            family: point.family.clone(),
            id: point.id.clone(),
            params: point.params.clone(),
            reason: reason.clone(),
        });
        dropped += 1;
    }
    let limit = hwsurvey_result::TimeLimit {
        max_time_s,
        estimated_full_s: full_s,
        estimated_s: plan.estimated_s(),
        shortened,
        dropped_points: dropped,
    };
    Ok((p, plan, Some(limit)))
}

/// Halves `sample_min_s` (not below 0.05 s) and `warmup_s`; `None` when neither changes.
fn halve_samples(r: &mut RunSettings) -> Option<String> {
    let sample = (r.sample_min_s / 2.0).max(0.05);
    let warmup = r.warmup_s / 2.0;
    if sample >= r.sample_min_s && r.warmup_s == 0.0 {
        return None;
    }
    let line = format!(
        "sample_min_s {} -> {sample}, warmup_s {} -> {warmup}",
        r.sample_min_s, r.warmup_s
    );
    r.sample_min_s = sample;
    r.warmup_s = warmup;
    Some(line)
}

/// Groups the plan's points for printing: family -> point ids.
pub fn outline(plan: &Plan) -> BTreeMap<String, Vec<String>> {
    plan.families
        .iter()
        .map(|f| {
            (
                f.family.clone(),
                f.points.iter().map(|p| p.id.clone()).collect(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::env::{CpuPlace, LastLevelCache};
    use hwsurvey_model::{Probed, Unknown};
    use hwsurvey_probe::{probe_machine, SysRoot};

    /// A 4-CPU environment (2 cores x 2 threads), 8 MiB LLC, 100 MiB available, no cgroup limit.
    fn env4() -> RunEnv {
        let mut env = RunEnv::read(&SysRoot::new("/nonexistent-root"));
        env.usable_cpus = (0..4).collect();
        env.cpus = (0..4)
            .map(|cpu| CpuPlace {
                cpu,
                package: Some(0),
                core: Some(i64::from(cpu % 2)),
                node: Some(0),
            })
            .collect();
        env.llc = Probed::Known(LastLevelCache {
            level: 3,
            instance_size_bytes: 8 << 20,
            instances: 1,
            total_size_bytes: 8 << 20,
        });
        env.mem_available_bytes = Probed::Known(100 << 20);
        env.cgroup_memory_limit_bytes = Probed::Unknown(Unknown::Other {
            detail: "test".into(),
        });
        env
    }

    fn profile(budget_s: f64) -> Profile {
        let text = format!(
            "format_version = 1\nid = \"t\"\nversion = 1\ndescription = \"d\"\n[run]\nplacement = \"compact\"\nsample_min_s = 0.2\nsample_min_clock_ticks = 20\nwarmup_s = 0.1\nsamples_min = 3\nsamples_max = 5\ntarget_cv = 0.03\nmemory_fraction = 0.5\nmemory_llc_multiple = 4.0\nmemory_min_working_set_bytes = 1048576\noversubscription_factor = 2\nbudget_s = 100\n[families.\"mem.bandwidth\"]\nbudget_s = {budget_s}\n[families.\"mem.bandwidth\".params]\nstream_kernels = [\"triad\"]\nblock_sizes_bytes = [1024, 67108864]\nblock_ops = [\"read\"]\n"
        );
        Profile::parse("t.toml", &text, &crate::families::ids()).unwrap()
    }

    #[test]
    fn plan_applies_the_rules() {
        let env = env4();
        let machine = probe_machine(&SysRoot::new("/nonexistent-root"));
        let fams = crate::families::registry();
        let plan = build_plan(
            &profile(90.0),
            &fams,
            &machine,
            &env,
            &RunOptions::default(),
            &[],
        )
        .unwrap();
        assert_eq!(plan.thread_counts, vec![1, 2, 4]);
        // 4 x 8 MiB LLC = 32 MiB, under the 50 MiB cap (0.5 x 100 MiB)
        assert_eq!(plan.memory_working_set_bytes, 32 << 20);
        assert_eq!(plan.memory_cap_bytes, Some(50 << 20));
        let f = &plan.families[0];
        let ids: Vec<&str> = f.points.iter().map(|p| p.id.as_str()).collect();
        // 2 cores x 2 threads: every core with one thread (CPUs 0, 1) is a rung of its own
        assert_eq!(
            ids,
            [
                "stream.triad/threads=1",
                "stream.triad/threads=2",
                "stream.triad/threads=2/cores",
                "stream.triad/threads=4",
                "read/block=1KiB/threads=1",
                "read/block=1KiB/threads=2",
                "read/block=1KiB/threads=2/cores",
                "read/block=1KiB/threads=4",
            ]
        );
        // compact placement: SMT siblings (same core) first
        assert_eq!(f.points[1].cpus, vec![0, 2]);
        assert_eq!(f.points[1].landmarks, ["smt_core"]);
        assert_eq!(f.points[2].cpus, vec![0, 1]);
        assert_eq!(f.points[2].landmarks, ["cores"]);
        assert_eq!(f.points[3].landmarks, ["numa_node", "package", "all"]);
        assert!(f.points[0].landmarks.is_empty());
        let names: Vec<(&str, usize)> = plan
            .landmarks
            .iter()
            .map(|m| (m.name.as_str(), m.threads))
            .collect();
        assert_eq!(
            names,
            [
                ("smt_core", 2),
                ("numa_node", 4),
                ("package", 4),
                ("cores", 2),
                ("all", 4)
            ]
        );
        // 64 MiB blocks x threads exceed the 50 MiB cap
        assert_eq!(f.skipped.len(), 4);
        assert!(f.skipped.iter().all(|s| s.reason.contains("memory cap")));
        assert!(f.points.iter().all(|p| p.memory_bytes <= 50 << 20));
    }

    #[test]
    fn an_obsolete_budget_drops_no_point_and_only_filters() {
        let env = env4();
        let machine = probe_machine(&SysRoot::new("/nonexistent-root"));
        let fams = crate::families::registry();
        let plan = build_plan(
            &profile(2.0),
            &fams,
            &machine,
            &env,
            &RunOptions::default(),
            &[],
        )
        .unwrap();
        let f = &plan.families[0];
        // issue 13: a 2 s budget (obsolete) used to keep 2 of these points; all 8 are planned
        assert_eq!(f.points.len(), 8);
        assert!(f.skipped.iter().all(|s| s.reason.contains("memory cap")));
        let sum: f64 = f.points.iter().map(|p| p.estimated_s).sum();
        assert!((f.estimated_s - sum).abs() < 1e-9 && f.estimated_s > 2.0);
        assert!(
            (f.budget_s - 1.25 * sum).abs() < 1e-9,
            "allowance {}",
            f.budget_s
        );
        let only = build_plan(
            &profile(90.0),
            &fams,
            &machine,
            &env,
            &RunOptions::default(),
            &["cpu".to_string()],
        )
        .unwrap();
        assert!(only.families.is_empty(), "mem.bandwidth filtered out");
        let bad = build_plan(
            &profile(90.0),
            &fams,
            &machine,
            &env,
            &RunOptions::default(),
            &["nosuch".to_string()],
        );
        assert!(bad.unwrap_err().message.contains("--only nosuch"));
    }

    #[test]
    fn oversubscription_is_capped_at_max_threads_per_point() {
        // 128 usable CPUs x factor 64 = 8192 threads: the point gets 4096
        let mut env = env4();
        env.usable_cpus = (0..128).collect();
        env.cpus.clear();
        let text = "format_version = 1\nid = \"t\"\nversion = 1\ndescription = \"d\"\n[run]\nplacement = \"compact\"\nsample_min_s = 0.01\nsample_min_clock_ticks = 20\nwarmup_s = 0.0\nsamples_min = 2\nsamples_max = 3\ntarget_cv = 0.03\nmemory_fraction = 0.5\nmemory_llc_multiple = 4.0\nmemory_min_working_set_bytes = 1048576\noversubscription_factor = 64\nbudget_s = 100\n[families.\"sync.contention\"]\nbudget_s = 90\n[families.\"sync.contention\".params]\nprimitives = [\"mutex\"]\noversubscribe = true\n";
        let profile = Profile::parse("t.toml", text, &crate::families::ids()).unwrap();
        let machine = probe_machine(&SysRoot::new("/nonexistent-root"));
        let fams = crate::families::registry();
        let plan =
            build_plan(&profile, &fams, &machine, &env, &RunOptions::default(), &[]).unwrap();
        let ids: Vec<&str> = plan.families[0]
            .points
            .iter()
            .map(|p| p.id.as_str())
            .collect();
        assert_eq!(ids.last(), Some(&"mutex/threads=4096"), "{ids:?}");
        assert!(plan.families[0]
            .points
            .iter()
            .all(|p| p.cpus.len() <= crate::profile::MAX_THREADS_PER_POINT));
    }

    #[test]
    fn max_time_shortens_samples_first_and_drops_points_last() {
        let env = env4();
        let machine = probe_machine(&SysRoot::new("/nonexistent-root"));
        let fams = crate::families::registry();
        let profile = profile(90.0);
        let fit = |max: f64| {
            fit_plan(
                &profile,
                &fams,
                &machine,
                &env,
                &RunOptions::default(),
                &[],
                max,
            )
            .unwrap()
        };
        let full = build_plan(&profile, &fams, &machine, &env, &RunOptions::default(), &[])
            .unwrap()
            .estimated_s();
        // fits: nothing changed, not time-limited
        let (p, plan, limit) = fit(full + 1.0);
        assert_eq!((p.run.samples_min, limit), (3, None));
        assert_eq!(plan.point_count(), 8);
        // a little less: no extra samples first, every point kept
        let (p, plan, limit) = fit(full - 0.5);
        let limit = limit.unwrap();
        assert_eq!(limit.shortened, ["samples_max 5 -> 3"]);
        assert_eq!((p.run.samples_max, limit.dropped_points), (3, 0));
        assert_eq!(plan.point_count(), 8);
        assert!(plan.estimated_s() <= full - 0.5, "{}", plan.estimated_s());
        // far less: every shortening, then points dropped from the largest family, named
        let (p, plan, limit) = fit(1.0);
        let limit = limit.unwrap();
        assert_eq!(limit.shortened.len(), 5, "{:?}", limit.shortened);
        assert_eq!((p.run.samples_min, p.run.samples_max), (2, 2));
        assert_eq!(p.run.sample_min_s, 0.05);
        assert!(plan.estimated_s() <= 1.0);
        assert!(limit.dropped_points > 0 && limit.dropped_points < 8);
        assert_eq!(plan.point_count(), 8 - limit.dropped_points);
        let dropped: Vec<&str> = plan.families[0]
            .skipped
            .iter()
            .filter(|s| s.reason.starts_with("dropped by --max-time 1 s"))
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(dropped.len(), limit.dropped_points);
        assert_eq!(
            dropped[0], "read/block=1KiB/threads=4",
            "the last point goes first"
        );
        assert!(
            limit.summary().contains("points dropped"),
            "{}",
            limit.summary()
        );
    }

    #[test]
    fn thread_rule() {
        assert_eq!(thread_counts(1), vec![1]);
        assert_eq!(thread_counts(2), vec![1, 2]);
        assert_eq!(thread_counts(6), vec![1, 2, 4, 6]);
        assert_eq!(thread_counts(8), vec![1, 2, 4, 8]);
        assert_eq!(thread_counts(0), vec![1]);
    }
}

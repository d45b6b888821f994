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

use hwsurvey_probe::Machine;

use crate::env::RunEnv;
use crate::family::DynFamily;
pub use crate::ladder::thread_counts;
use crate::plan_input::memory_working_set_bytes;
pub use crate::plan_input::{FamilyPoints, PlanInput, RunOptions};
use crate::profile::{Profile, RunSettings};

/// Memory cap source stated in a plan of a capture without memory sizes.
pub const UNCAPPED_SOURCE: &str =
    "none: the capture holds no memory size (/proc/meminfo, node meminfo), no cap applied";

pub use hwsurvey_result::plan::{FamilyPlan, Plan, Point, SkippedPoint, POINT_ALLOWANCE_FACTOR};

/// Builds the plan: every enabled family of `profile` that is in `families` (and in `only`,
/// when given), in registry order. Pure: reads nothing but its arguments.
pub fn build_plan(
    profile: &Profile,
    families: &[&dyn DynFamily],
    machine: &Machine,
    env: &RunEnv,
    options: &RunOptions,
    only: &[String],
) -> Result<Plan, crate::profile::ProfileError> {
    // one source of machine facts: CPU places and the last-level cache from the probe
    let env = &crate::ladder::with_machine_facts(machine, env.clone());
    let marks = crate::ladder::landmarks(machine, env);
    let speed = options.fixed_work();
    let mut out = Vec::new();
    let cap_with_source = env.memory_cap(profile.run.memory_fraction);
    let cap = cap_with_source.as_ref().map(|(b, _)| *b);
    let uncapped = cap.is_none() && options.capture;
    let cap_source = cap_with_source
        .as_ref()
        .map(|(_, s)| s.clone())
        .unwrap_or_else(|| "unknown: 1 GiB assumed".into());
    // points planned so far, run and skipped: at most MAX_PLAN_POINTS
    let mut planned_points = 0usize;
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
            speed: &speed,
        };
        let planned = family.plan(&input)?;
        let these = planned.points.len() + planned.skipped.len();
        planned_points += these;
        if planned_points > crate::profile::MAX_PLAN_POINTS {
            let before = if planned_points > these {
                format!(" ({planned_points} with the families before it)")
            } else {
                String::new()
            };
            return Err(crate::profile::ProfileError {
                file: profile.source.clone(),
                line: None,
                key: Some(format!("families.\"{id}\"")),
                message: format!(
                    "plans {these} points{before}, more than the {} points a plan may hold: \
                     shorten its lists",
                    crate::profile::MAX_PLAN_POINTS
                ),
            });
        }
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
        cpu_quota: env.cpu_quota.clone(),
        fixed_work: Some(speed),
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
    families: &[&dyn DynFamily],
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

    #[test]
    fn thread_rule() {
        assert_eq!(thread_counts(1), vec![1]);
        assert_eq!(thread_counts(2), vec![1, 2]);
        assert_eq!(thread_counts(6), vec![1, 2, 4, 6]);
        assert_eq!(thread_counts(8), vec![1, 2, 4, 8]);
        assert_eq!(thread_counts(0), vec![1]);
    }
}

//! The run loop: every point of a [`Plan`] in order (none dropped for time: each point takes
//! at least the profile's minimum samples, and extra samples within its allowance), the result
//! file rewritten atomically after every test with each family's estimated and actual time,
//! SIGINT/SIGTERM/SIGHUP handled (the flag and the handler: [`crate::signals`]). The energy
//! counters (`hwsurvey_probe::energy`, under the request's root) are found once and read
//! just before and just after every point: the point's joules and mean watts per domain go
//! into its record, and a run without counters says why once, in the file's `energy`.

use hwsurvey_probe::run_env::ReadLoad as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use hwsurvey_probe::{Machine, SysRoot};

use crate::env::{LoadSnapshot, RunEnv};
use crate::family::DynFamily;
use crate::outcome::PointOutcome;
use crate::plan::{Plan, Point, RunOptions, SkippedPoint};
use crate::profile::Profile;
use crate::result::{
    rfc3339, ClocksourceChange, FamilyTime, ProfileRef, Qualifier, ResultError, ResultFile,
    RunEnergy, RunStatus, TestResult, TimeLimit, Tool, RESULT_SCHEMA, RESULT_SCHEMA_VERSION,
};
use crate::runner::RunContext;
use crate::signals::{interrupt_cause, INTERRUPTED};

/// Progress callbacks, for display only (the CLI draws a progress bar from these): they see
/// the run, never the file being written, which the [`RunRequest`] alone decides.
pub trait Observer {
    /// A point is about to run: its index among all points (0-based) and the total.
    fn point_started(&mut self, point: &Point, index: usize, total: usize);
    /// A point finished and the file was written.
    fn point_finished(&mut self, result: &TestResult);
}

/// An observer that does nothing.
pub struct Silent;

impl Observer for Silent {
    fn point_started(&mut self, _: &Point, _: usize, _: usize) {}
    fn point_finished(&mut self, _: &TestResult) {}
}

/// Everything a run needs, and everything its result file holds besides what the run
/// measures and reads live (load, clocksource, energy, times): two callers with one request
/// get one file.
pub struct RunRequest<'a> {
    /// The loaded profile.
    pub profile: &'a Profile,
    /// The plan built from it.
    pub plan: &'a Plan,
    /// The families (registry).
    pub families: &'a [&'a dyn DynFamily],
    /// Probe document.
    pub machine: &'a Machine,
    /// Live facts.
    pub env: &'a RunEnv,
    /// Command-line options for families.
    pub options: &'a RunOptions,
    /// Where the result file goes.
    pub output: &'a Path,
    /// Root for the load snapshots (the live `/`).
    pub root: &'a SysRoot,
    /// Tool version and git revision.
    pub tool: Tool,
    /// What `--max-time` changed to fit the run (`hwsurvey_engine::plan::fit_plan`), stored
    /// in the file's `time_limit`; `None`: the full plan.
    pub time_limit: Option<TimeLimit>,
    /// The qualification stored in the file's `qualification` before every write, evaluated
    /// on the file as it stands, labelled with `output` as given (`hwsurvey run` passes
    /// `hwsurvey_qualify::stored::RunQualifier`); `None`: the file holds none.
    pub qualifier: Option<&'a dyn Qualifier>,
}

/// Runs the plan, writing the whole result file to `output` (atomically: a new file renamed
/// over the old) at the start, after every test and at the end, the run's status and the
/// findings of `req.qualifier` included. Returns the final file contents; an interrupted run
/// (SIGINT, SIGTERM, SIGHUP) ends with the finished tests written and status "interrupted".
pub fn run(req: &RunRequest<'_>, observer: &mut dyn Observer) -> Result<ResultFile, ResultError> {
    run_with_cancel(req, observer, &INTERRUPTED)
}

/// [`run`] with an explicit cancel flag (tests).
pub fn run_with_cancel(
    req: &RunRequest<'_>,
    observer: &mut dyn Observer,
    cancel: &AtomicBool,
) -> Result<ResultFile, ResultError> {
    let counters = hwsurvey_probe::energy::discover(req.root);
    let mut file = ResultFile {
        schema: RESULT_SCHEMA.into(),
        schema_version: RESULT_SCHEMA_VERSION,
        status: RunStatus::Running,
        tool: req.tool.clone(),
        profile: ProfileRef {
            id: req.profile.id.clone(),
            version: req.profile.version,
            source: req.profile.source.clone(),
            run: req.profile.run.clone(),
            fingerprint: Some(req.profile.fingerprint.clone()).filter(|f| !f.is_empty()),
            point_settings: req.profile.point_settings.clone(),
        },
        started_at: rfc3339(SystemTime::now()),
        finished_at: None,
        machine: serde_json::to_value(req.machine).unwrap_or(serde_json::Value::Null),
        environment: req.env.clone(),
        load_before: LoadSnapshot::read(req.root),
        load_after: None,
        plan: req.plan.clone(),
        tests: Vec::new(),
        skipped: req
            .plan
            .families
            .iter()
            .flat_map(|f| f.skipped.iter().cloned())
            .collect(),
        qualification: None,
        family_times: Vec::new(),
        time_limit: req.time_limit.clone(),
        clocksource_changes: Vec::new(),
        energy: Some(match &counters {
            Ok(c) => RunEnergy {
                counters: c.clone(),
                unavailable: None,
            },
            Err(why) => RunEnergy {
                counters: Vec::new(),
                unavailable: Some(why.clone()),
            },
        }),
    };
    let counters = counters.unwrap_or_default();
    let label = req.output.display().to_string();
    let write = |file: &mut ResultFile| {
        if let Some(q) = req.qualifier {
            file.qualification = q.qualification(&label, file, rfc3339(SystemTime::now()));
        }
        file.write_atomic(req.output)
    };
    write(&mut file)?;
    let total = req.plan.point_count();
    let mut index = 0;
    let mut clocksource = file.load_before.clocksource.known().cloned();
    'families: for fplan in &req.plan.families {
        let Some(family) = req.families.iter().find(|f| f.id() == fplan.family) else {
            for p in &fplan.points {
                file.skipped.push(skip(p, "family not in this build"));
            }
            continue;
        };
        if fplan.points.is_empty() {
            continue;
        }
        let family_start = Instant::now();
        file.family_times.push(FamilyTime {
            family: fplan.family.clone(),
            points_planned: fplan.points.len(),
            points_run: 0,
            estimated_s: 0.0,
            actual_s: 0.0,
        });
        for point in fplan.points.iter() {
            if cancel.load(Ordering::SeqCst) {
                break 'families;
            }
            // The profile's minimum samples are always taken; extra samples stop when the
            // point's allowance (its estimate x POINT_ALLOWANCE_FACTOR) is spent.
            let deadline = Instant::now() + Duration::from_secs_f64(point.allowance_s());
            let ctx = RunContext::new(&req.profile.run, req.env, req.options, cancel, deadline);
            observer.point_started(point, index, total);
            let started = SystemTime::now();
            let t0 = Instant::now();
            let energy_before =
                (!counters.is_empty()).then(|| hwsurvey_probe::energy::read(req.root, &counters));
            let outcome = family.run_point(point, &ctx);
            let energy = energy_before.map(|before| {
                let after = hwsurvey_probe::energy::read(req.root, &counters);
                hwsurvey_probe::energy::between(&counters, &before, &after)
            });
            let outcome = if cancel.load(Ordering::SeqCst) {
                match outcome {
                    PointOutcome::Measured(m) if m.metrics.iter().all(|x| x.samples.len() >= 2) => {
                        PointOutcome::Measured(m)
                    }
                    _ => {
                        file.skipped
                            .push(skip(point, &format!("interrupted ({})", interrupt_cause())));
                        break 'families;
                    }
                }
            } else {
                outcome
            };
            let mut result = TestResult::new(
                point.clone(),
                outcome,
                rfc3339(started),
                t0.elapsed().as_secs_f64(),
            );
            result.energy = energy;
            file.tests.push(result);
            watch_clocksource(
                req.root,
                point,
                &mut clocksource,
                &mut file.clocksource_changes,
            );
            if let Some(ft) = file.family_times.last_mut() {
                ft.points_run += 1;
                ft.estimated_s += point.estimated_s;
                ft.actual_s = family_start.elapsed().as_secs_f64();
            }
            write(&mut file)?;
            if let Some(r) = file.tests.last() {
                observer.point_finished(r);
            }
            index += 1;
        }
    }
    let interrupted = cancel.load(Ordering::SeqCst);
    if interrupted {
        let done: std::collections::BTreeSet<(String, String)> = file
            .tests
            .iter()
            .map(|t| (t.point.family.clone(), t.point.id.clone()))
            .chain(
                file.skipped
                    .iter()
                    .map(|s| (s.family.clone(), s.id.clone())),
            )
            .collect();
        for f in &req.plan.families {
            for p in &f.points {
                if !done.contains(&(p.family.clone(), p.id.clone())) {
                    file.skipped.push(skip(
                        p,
                        &format!("not run: interrupted ({})", interrupt_cause()),
                    ));
                }
            }
        }
    }
    file.status = if interrupted {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    file.finished_at = Some(rfc3339(SystemTime::now()));
    file.load_after = Some(LoadSnapshot::read(req.root));
    write(&mut file)?;
    Ok(file)
}

/// Reads the clocksource after `point` and records a change of counter against `last` (the
/// kernel's watchdog may replace an unstable TSC by the HPET in the middle of a run; see
/// `hwsurvey_probe::clocksource`). An unreadable clocksource changes nothing.
fn watch_clocksource(
    root: &SysRoot,
    point: &Point,
    last: &mut Option<String>,
    changes: &mut Vec<ClocksourceChange>,
) {
    let Some(now) = hwsurvey_probe::clocksource::current(root).known().cloned() else {
        return;
    };
    if let Some(before) = last.as_deref() {
        if !hwsurvey_probe::clocksource::same_counter(before, &now) {
            changes.push(ClocksourceChange {
                from: before.to_string(),
                to: now.clone(),
                seen_after: format!("{} {}", point.family, point.id),
            });
        }
    }
    *last = Some(now);
}

fn skip(p: &Point, reason: &str) -> SkippedPoint {
    SkippedPoint {
        family: p.family.clone(),
        id: p.id.clone(),
        params: p.params.clone(),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::Family;
    use crate::outcome::{Measurement, Metric};
    use crate::plan::{FamilyPlan, FamilyPoints, PlanInput};
    use crate::profile::{CheckedParams, Checker, ProfileError};
    use hwsurvey_probe::run_env::ReadRunEnv as _;

    /// A family whose every point takes 60 ms, far over its 10 ms estimate.
    struct Slow;

    /// No params.
    #[derive(serde::Deserialize)]
    struct NoParams {}

    impl CheckedParams for NoParams {
        fn check(&self, _: &Checker<'_>) -> Result<(), ProfileError> {
            Ok(())
        }
    }

    impl Family for Slow {
        type Params = NoParams;
        type PointParams = NoParams;
        fn id(&self) -> &'static str {
            "test.slow"
        }
        fn describe(&self) -> &'static str {
            "sleeps"
        }
        fn plan(&self, _: NoParams, _: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
            Ok(FamilyPoints::default())
        }
        fn run_point(&self, _: NoParams, _: &Point, _: &RunContext<'_>) -> PointOutcome {
            std::thread::sleep(Duration::from_millis(60));
            PointOutcome::Measured(Measurement {
                metrics: vec![Metric::latency("latency_ns", vec![1.0, 2.0])],
                pins: vec![],
                details: Default::default(),
            })
        }
    }

    fn point(id: &str) -> Point {
        serde_json::from_value(serde_json::json!({
            "family": "test.slow", "id": id, "threads": 1, "placement": "compact",
            "cpus": [0], "params": {}, "memory_bytes": 0, "estimated_s": 0.01
        }))
        .unwrap()
    }

    #[test]
    fn no_point_is_dropped_for_time_and_the_family_time_is_recorded() {
        // the run settings alone: the engine knows no family's section
        let text = "format_version = 1\nid = \"quick\"\nversion = 1\ndescription = \"d\"\n[run]\nplacement = \"compact\"\nsample_min_s = 0.2\nsample_min_clock_ticks = 20\nwarmup_s = 0.1\nsamples_min = 3\nsamples_max = 5\ntarget_cv = 0.03\nmemory_fraction = 0.5\nmemory_llc_multiple = 4.0\nmemory_min_working_set_bytes = 1048576\noversubscription_factor = 2\n";
        let profile = Profile::parse("t.toml", text, &[]).unwrap();
        let root = SysRoot::live();
        let machine = hwsurvey_probe::probe_machine(&root);
        let env = RunEnv::read(&root);
        let plan = Plan {
            profile_id: "quick".into(),
            profile_version: 1,
            usable_cpus: 1,
            thread_counts: vec![1],
            landmarks: vec![],
            llc_total_bytes: None,
            memory_working_set_bytes: 1 << 20,
            memory_cap_bytes: None,
            memory_cap_source: None,
            cpu_quota: None,
            fixed_work: None,
            families: vec![FamilyPlan {
                family: "test.slow".into(),
                budget_s: 0.05,
                estimated_s: 0.03,
                points: vec![point("a"), point("b"), point("c")],
                skipped: vec![],
            }],
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        let families: [&dyn DynFamily; 1] = [&Slow];
        let req = RunRequest {
            profile: &profile,
            plan: &plan,
            families: &families,
            machine: &machine,
            env: &env,
            options: &RunOptions::default(),
            output: &out,
            root: &root,
            tool: Tool::this_build(),
            time_limit: None,
            qualifier: None,
        };
        let file = run_with_cancel(&req, &mut Silent, &AtomicBool::new(false)).unwrap();
        assert_eq!(file.status, RunStatus::Complete);
        // issue 13: the old 0.05 s budget kept only "a"; every point of the plan runs now
        let ran: Vec<&str> = file.tests.iter().map(|t| t.point.id.as_str()).collect();
        assert_eq!(ran, ["a", "b", "c"]);
        assert!(file.skipped.is_empty(), "{:?}", file.skipped);
        assert_eq!(file.family_times.len(), 1);
        let ft = &file.family_times[0];
        assert_eq!(
            (ft.family.as_str(), ft.points_planned, ft.points_run),
            ("test.slow", 3, 3)
        );
        assert!((ft.estimated_s - 0.03).abs() < 1e-9, "{}", ft.estimated_s);
        assert!(ft.actual_s >= 0.18 && ft.actual_s < 5.0, "{}", ft.actual_s);
        assert!(ft.actual_over_estimate().unwrap() >= 6.0);
        // ... and so in the file on disk
        let loaded = crate::result::load(&out).unwrap();
        assert_eq!(loaded.family_times, file.family_times);
    }
}

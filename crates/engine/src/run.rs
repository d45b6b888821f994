//! The run loop: every point of a [`Plan`] in order (none dropped for time: each point takes
//! at least the profile's minimum samples, and extra samples within its allowance), the result
//! file rewritten atomically after every test with each family's estimated and actual time,
//! SIGINT/SIGTERM/SIGHUP handled (the flag and the handler: [`crate::signals`]). The energy
//! counters (`hwsurvey_probe::energy`, under the request's root) are found once and read
//! just before and just after every point: the point's joules and mean watts per domain go
//! into its record, and a run without counters says why once, in the file's `energy`. The
//! hardware watch ([`crate::watch`]: EDAC, AER, links, throttle counters, the kernel log) is
//! read the same way, and the clock measured at the run's start and end ([`ClockCheck`]).
//!
//! [`soak`] runs the plan again and again for a given time (`hwsurvey run --soak`): round 1
//! is the file's tests, every round's figures and watch go into its `soak`.

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
    RunEnergy, RunStatus, Soak, SoakPoint, SoakRound, TestResult, TimeLimit, Tool, RESULT_SCHEMA,
    RESULT_SCHEMA_VERSION,
};
use crate::runner::RunContext;
use crate::signals::{interrupt_cause, INTERRUPTED};
use crate::watch::{clock_seconds, ClockCheck, Watcher};

/// Progress callbacks, for display only (the CLI draws a progress bar from these): they see
/// the run, never the file being written, which the [`RunRequest`] alone decides.
pub trait Observer {
    /// A point is about to run: its index among all points (0-based) and the total.
    fn point_started(&mut self, point: &Point, index: usize, total: usize);
    /// A point finished and the file was written.
    fn point_finished(&mut self, result: &TestResult);
    /// A round of a soak ([`soak`]) finished and the file was written: the round, and the
    /// file as it stands (its earlier rounds and the watch's totals).
    fn round_finished(&mut self, _round: &SoakRound, _file: &ResultFile) {}
}

/// An observer that does nothing.
pub struct Silent;

impl Observer for Silent {
    fn point_started(&mut self, _: &Point, _: usize, _: usize) {}
    fn point_finished(&mut self, _: &TestResult) {}
}

/// Everything a run needs, and everything its result file holds besides what the run
/// measures and reads live (load, clocksource, energy, the hardware watch, times): two
/// callers with one request get one file.
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
    /// Root for the load snapshots, the energy counters and the hardware watch (the live
    /// `/`).
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
    /// The clock measured at the run's start and end by the watch
    /// (`hwsurvey_workloads::watch_clock::AddChain`); `None`: the file says it was not.
    pub clock: Option<&'a dyn ClockCheck>,
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
    let mut r = Running::start(req)?;
    r.round(observer, cancel, None)?;
    r.finish(cancel)
}

/// Runs the plan again and again until `duration` has passed since the start (a round that
/// has begun is finished; at least one round runs), watching the hardware around every point
/// as [`run`] does: round 1's records are the file's tests, every round's headline figures
/// and watch are in its `soak` ([`Soak`]), written after every point. Ctrl-C stops as in
/// [`run`], keeping the rounds that finished.
pub fn soak(
    req: &RunRequest<'_>,
    duration: Duration,
    observer: &mut dyn Observer,
    cancel: &AtomicBool,
) -> Result<ResultFile, ResultError> {
    let started = Instant::now();
    let mut r = Running::start(req)?;
    r.file.soak = Some(Soak {
        duration_s: duration.as_secs_f64(),
        families: req
            .plan
            .families
            .iter()
            .filter(|f| !f.points.is_empty())
            .map(|f| f.family.clone())
            .collect(),
        rounds: Vec::new(),
    });
    let mut round = 1u32;
    loop {
        r.round(observer, cancel, Some(round))?;
        if let Some(last) = r.file.soak.as_ref().and_then(|s| s.rounds.last()) {
            observer.round_finished(last, &r.file);
        }
        if cancel.load(Ordering::SeqCst) || started.elapsed() >= duration {
            break;
        }
        round += 1;
    }
    r.finish(cancel)
}

/// One run in progress: its file and what it reads around every point.
struct Running<'r, 'a> {
    req: &'r RunRequest<'a>,
    file: ResultFile,
    counters: Vec<hwsurvey_probe::energy::EnergyCounter>,
    watcher: Watcher<'a>,
    clocksource: Option<String>,
    label: String,
}

impl<'r, 'a> Running<'r, 'a> {
    /// The file at the start (written once), the counters found and the clock measured.
    fn start(req: &'r RunRequest<'a>) -> Result<Self, ResultError> {
        // the load and the clocksource first: what the run starts on, before it reads
        // anything of its own
        let load_before = LoadSnapshot::read(req.root);
        let counters = hwsurvey_probe::energy::discover(req.root);
        let watcher = Watcher::start(req.root, req.machine, &req.env.cpus);
        let file = ResultFile {
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
            machine: req.machine.clone(),
            environment: req.env.clone(),
            load_before,
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
            watch: Some(watcher.run().clone()),
            soak: None,
        };
        let mut r = Running {
            req,
            clocksource: file.load_before.clocksource.known().cloned(),
            file,
            counters: counters.unwrap_or_default(),
            watcher,
            label: req.output.display().to_string(),
        };
        r.write()?;
        r.clock(false);
        Ok(r)
    }

    /// Measures the watch's clock on the first usable CPU.
    fn clock(&mut self, end: bool) {
        let cpu = self.req.env.usable_cpus.iter().next().unwrap_or(0);
        let seconds = clock_seconds(&self.req.profile.run);
        self.watcher.clock(self.req.clock, cpu, seconds, end);
        self.file.watch = Some(self.watcher.run().clone());
    }

    /// Writes the file as it stands, with the qualification of it.
    fn write(&mut self) -> Result<(), ResultError> {
        if let Some(q) = self.req.qualifier {
            self.file.qualification =
                q.qualification(&self.label, &self.file, rfc3339(SystemTime::now()));
        }
        self.file.write_atomic(self.req.output)
    }

    /// Runs every point of the plan once. `soak_round`: the soak round this is (round 1
    /// records tests as a plain run does; later rounds only go into the file's `soak`).
    /// Returns early, with what finished written, when `cancel` is set.
    fn round(
        &mut self,
        observer: &mut dyn Observer,
        cancel: &AtomicBool,
        soak_round: Option<u32>,
    ) -> Result<(), ResultError> {
        let req = self.req;
        let tests = soak_round.is_none_or(|r| r == 1);
        let round_start = Instant::now();
        if let (Some(n), Some(s)) = (soak_round, self.file.soak.as_mut()) {
            s.rounds.push(SoakRound {
                round: n,
                started_at: rfc3339(SystemTime::now()),
                duration_s: 0.0,
                points: Vec::new(),
            });
        }
        let total = req.plan.point_count();
        let mut index = 0;
        'families: for fplan in &req.plan.families {
            let Some(family) = req.families.iter().find(|f| f.id() == fplan.family) else {
                if tests {
                    for p in &fplan.points {
                        self.file.skipped.push(skip(p, "family not in this build"));
                    }
                }
                continue;
            };
            if fplan.points.is_empty() {
                continue;
            }
            let family_start = Instant::now();
            if tests {
                self.file.family_times.push(FamilyTime {
                    family: fplan.family.clone(),
                    points_planned: fplan.points.len(),
                    points_run: 0,
                    estimated_s: 0.0,
                    actual_s: 0.0,
                });
            }
            for point in fplan.points.iter() {
                if cancel.load(Ordering::SeqCst) {
                    break 'families;
                }
                observer.point_started(point, index, total);
                let Some(result) = self.point(*family, point, cancel, tests) else {
                    break 'families;
                };
                if let Some(r) = self.file.soak.as_mut().and_then(|s| s.rounds.last_mut()) {
                    // round 1's watch is its test's
                    r.points.push(SoakPoint::of(&result, !tests));
                    r.duration_s = round_start.elapsed().as_secs_f64();
                }
                let later_round = if tests {
                    self.file.tests.push(result);
                    if let Some(ft) = self.file.family_times.last_mut() {
                        ft.points_run += 1;
                        ft.estimated_s += point.estimated_s;
                        ft.actual_s = family_start.elapsed().as_secs_f64();
                    }
                    None
                } else {
                    Some(result)
                };
                self.write()?;
                if let Some(r) = later_round.as_ref().or(self.file.tests.last()) {
                    observer.point_finished(r);
                }
                index += 1;
            }
        }
        Ok(())
    }

    /// Runs one point with the energy and the watch read around it. `None` when Ctrl-C came
    /// before it had two samples (the point is then listed as skipped, when `record_skip`: a
    /// soak's later round lists none, its point has a test already).
    fn point(
        &mut self,
        family: &dyn DynFamily,
        point: &Point,
        cancel: &AtomicBool,
        record_skip: bool,
    ) -> Option<TestResult> {
        let req = self.req;
        // The profile's minimum samples are always taken; extra samples stop when the
        // point's allowance (its estimate x POINT_ALLOWANCE_FACTOR) is spent.
        let deadline = Instant::now() + Duration::from_secs_f64(point.allowance_s());
        let ctx = RunContext::new(&req.profile.run, req.env, req.options, cancel, deadline);
        let started = SystemTime::now();
        let t0 = Instant::now();
        let watch_before = self.watcher.before();
        let energy_before = (!self.counters.is_empty())
            .then(|| hwsurvey_probe::energy::read(req.root, &self.counters));
        let outcome = family.run_point(point, &ctx);
        let energy = energy_before.map(|before| {
            let after = hwsurvey_probe::energy::read(req.root, &self.counters);
            hwsurvey_probe::energy::between(&self.counters, &before, &after)
        });
        let watch = self.watcher.after(watch_before, point);
        self.file.watch = Some(self.watcher.run().clone());
        let outcome = if cancel.load(Ordering::SeqCst) {
            match outcome {
                PointOutcome::Measured(m) if m.metrics.iter().all(|x| x.samples.len() >= 2) => {
                    PointOutcome::Measured(m)
                }
                _ => {
                    if record_skip {
                        self.file
                            .skipped
                            .push(skip(point, &format!("interrupted ({})", interrupt_cause())));
                    }
                    return None;
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
        result.watch = Some(watch);
        watch_clocksource(
            req.root,
            point,
            &mut self.clocksource,
            &mut self.file.clocksource_changes,
        );
        Some(result)
    }

    /// Lists what an interruption left unrun, measures the clock at the end (unless
    /// interrupted), and writes the final file.
    fn finish(mut self, cancel: &AtomicBool) -> Result<ResultFile, ResultError> {
        let req = self.req;
        let interrupted = cancel.load(Ordering::SeqCst);
        if interrupted {
            let done: std::collections::BTreeSet<(String, String)> = self
                .file
                .tests
                .iter()
                .map(|t| (t.point.family.clone(), t.point.id.clone()))
                .chain(
                    self.file
                        .skipped
                        .iter()
                        .map(|s| (s.family.clone(), s.id.clone())),
                )
                .collect();
            for f in &req.plan.families {
                for p in &f.points {
                    if !done.contains(&(p.family.clone(), p.id.clone())) {
                        self.file.skipped.push(skip(
                            p,
                            &format!("not run: interrupted ({})", interrupt_cause()),
                        ));
                    }
                }
            }
            self.watcher
                .clock_skipped(&format!("the run was interrupted ({})", interrupt_cause()));
            self.file.watch = Some(self.watcher.run().clone());
        } else {
            self.clock(true);
        }
        self.file.status = if interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        };
        self.file.finished_at = Some(rfc3339(SystemTime::now()));
        self.file.load_after = Some(LoadSnapshot::read(req.root));
        self.write()?;
        Ok(self.file)
    }
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
            clock: None,
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

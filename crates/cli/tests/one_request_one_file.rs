//! The engine writes the whole result file: a second caller of the engine, handed
//! the request `hwsurvey run` made, gets the file the CLI wrote, `time_limit` and the stored
//! qualification included; only what a run reads live (times, load, energy per point) differs.
//!
//! The second caller replays the CLI's outcomes through a family of its own (the measured
//! samples of two runs differ, the file around them must not).

use std::sync::atomic::AtomicBool;

use hwsurvey_engine::family::DynFamily;
use hwsurvey_engine::plan::{FamilyPoints, PlanInput, RunOptions};
use hwsurvey_engine::profile::{ProfileError, Section};
use hwsurvey_engine::run::{run_with_cancel, RunRequest, Silent};
use hwsurvey_engine::{Measurement, Metric, Point, PointOutcome, RunContext};
use hwsurvey_probe::run_env::RunEnv;
use hwsurvey_probe::{Machine, SysRoot};
use hwsurvey_qualify::stored::RunQualifier;
use hwsurvey_result::{load, Outcome, ResultFile, TestResult, Tool};
use hwsurvey_testkit::hwsurvey;
use hwsurvey_workloads::families;

/// A family that gives back, point by point, the outcomes a finished run recorded.
struct Replay {
    id: &'static str,
    tests: Vec<TestResult>,
}

impl DynFamily for Replay {
    fn id(&self) -> &'static str {
        self.id
    }
    fn describe(&self) -> &'static str {
        "replays a recorded run"
    }
    fn check_section(&self, _: &Section) -> Result<(), ProfileError> {
        Ok(())
    }
    fn plan(&self, _: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        Ok(FamilyPoints::default())
    }
    fn run_point(&self, point: &Point, _: &RunContext<'_>) -> PointOutcome {
        let Some(t) = self.tests.iter().find(|t| t.point.id == point.id) else {
            return PointOutcome::Failed {
                error: format!("{} is not in the recorded run", point.id),
            };
        };
        let reason = t.reason.clone().unwrap_or_default();
        match t.outcome {
            Outcome::Measured => PointOutcome::Measured(Measurement {
                metrics: t
                    .metrics
                    .iter()
                    .map(|m| Metric {
                        name: m.name.clone(),
                        better: m.better,
                        samples: m.samples.clone(),
                        report_peak: m.peak.is_some(),
                    })
                    .collect(),
                pins: t.pins.clone(),
                details: t.details.clone(),
            }),
            Outcome::Skipped if t.details.is_empty() => PointOutcome::Skipped { reason },
            Outcome::Skipped => PointOutcome::SkippedAfterTrying {
                reason,
                details: t.details.clone(),
            },
            Outcome::Failed => PointOutcome::Failed { error: reason },
        }
    }
}

/// The file as JSON without what a run reads live or times: start and end times, the load
/// snapshots, clocksource changes, each test's start, duration, energy and hardware watch,
/// the watch's clock and totals and the findings of the watch rules on them, each family's
/// actual time, and when the findings were evaluated.
fn comparable(file: &ResultFile) -> serde_json::Value {
    let mut v = serde_json::to_value(file).unwrap();
    let o = v.as_object_mut().unwrap();
    for key in [
        "started_at",
        "finished_at",
        "load_before",
        "load_after",
        "clocksource_changes",
    ] {
        o.remove(key);
    }
    for t in o["tests"].as_array_mut().unwrap() {
        let t = t.as_object_mut().unwrap();
        for key in ["started_at", "duration_s", "energy", "watch"] {
            t.remove(key);
        }
    }
    if let Some(w) = o.get_mut("watch").and_then(|w| w.as_object_mut()) {
        w.remove("clock");
        w.remove("totals");
    }
    for f in o["family_times"].as_array_mut().unwrap() {
        f.as_object_mut().unwrap().remove("actual_s");
    }
    if let Some(q) = o.get_mut("qualification").and_then(|q| q.as_object_mut()) {
        q.remove("evaluated_at");
        // the watch rules judge what the run read live (its clock at the start and the end)
        if let Some(f) = q.get_mut("findings").and_then(|f| f.as_array_mut()) {
            f.retain(|f| !f["rule"].as_str().is_some_and(|r| r.starts_with("watch.")));
        }
    }
    v
}

/// Whether `a` and `b` are the same tree, their fractional numbers equal within a relative 1e-9:
/// serde_json's default float parser can move the last digit of a value read back, so the
/// statistics the second caller computes from the samples it read may differ from the CLI's in
/// the 16th digit. (Rounding both to 12 digits first failed when a value lay on a rounding
/// boundary: a cv of 0.00239486772819 against 0.0023948677282, fresh-check of 2026-12-06.)
fn same_within(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value::{Array, Number, Object};
    match (a, b) {
        (Number(x), Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs())
        }
        (Array(x), Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_within(x, y))
        }
        (Object(x), Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_within(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn a_second_caller_of_the_engine_gets_the_file_the_cli_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run.json");
    // --max-time below the plan's estimate (about 1 s for the quick profile's mem.latency on a
    // 2-vCPU VM): the file must hold a time_limit
    let output = hwsurvey()
        .args([
            "run",
            "--profile",
            "quick",
            "--only",
            "mem.latency",
            "--max-time",
            "0.3",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "exit {:?}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let cli = load(&out).unwrap();
    assert!(cli.time_limit.is_some(), "no time_limit in the CLI's file");
    assert!(
        cli.qualification.is_some(),
        "no qualification in the CLI's file"
    );
    assert!(
        cli.tests.iter().any(|t| t.outcome == Outcome::Measured),
        "{:?}",
        cli.tests
    );
    // the findings name the file by its path: the second caller writes to the same path
    std::fs::rename(&out, dir.path().join("cli.json")).unwrap();

    // the request `hwsurvey run` made: the profile with the engine rules it ran under, its
    // plan, machine and environment, the time limit, and the built-in qualifier
    let mut profile = families::load_profile("quick").unwrap();
    profile.run = cli.profile.run.clone();
    let machine: Machine = cli.machine.clone();
    let env: RunEnv = cli.environment.clone();
    let qualifier =
        RunQualifier::builtin(&machine, &families::mem_latency::hugetlb_needs(&cli.plan));
    let replay = Replay {
        id: "mem.latency",
        tests: cli.tests.clone(),
    };
    let registry: [&dyn DynFamily; 1] = [&replay];
    let root = SysRoot::live();
    let req = RunRequest {
        profile: &profile,
        plan: &cli.plan,
        families: &registry,
        machine: &machine,
        env: &env,
        options: &RunOptions::default(),
        output: &out,
        root: &root,
        tool: Tool::this_build(),
        time_limit: cli.time_limit.clone(),
        qualifier: Some(&qualifier),
        clock: Some(&hwsurvey_workloads::watch_clock::AddChain),
    };
    let engine = run_with_cancel(&req, &mut Silent, &AtomicBool::new(false)).unwrap();
    // what it returned is what it wrote (both read back: serde_json's default float parser
    // may move a value's last digit), and what it wrote is the CLI's file
    let written = load(&out).unwrap();
    let returned: ResultFile =
        serde_json::from_str(&serde_json::to_string(&engine).unwrap()).unwrap();
    assert_same(
        "the engine's return",
        &comparable(&returned),
        "its file",
        &comparable(&written),
    );
    assert_same(
        "the CLI's file",
        &comparable(&cli),
        "the engine's file",
        &comparable(&written),
    );
}

/// Panics with the first lines that differ when `a` and `b` differ.
fn assert_same(what_a: &str, a: &serde_json::Value, what_b: &str, b: &serde_json::Value) {
    if same_within(a, b) {
        return;
    }
    let text = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap();
    let (a, b) = (text(a), text(b));
    let first = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or(0);
    let around = |t: &str| {
        t.lines()
            .skip(first.saturating_sub(8))
            .take(16)
            .collect::<Vec<_>>()
            .join("\n")
    };
    panic!(
        "{what_a} differs from {what_b} from line {first}:\n{what_a}:\n{}\n{what_b}:\n{}",
        around(&a),
        around(&b)
    );
}

//! `RunContext::measure_parallel` when the machine's pace changes after the calibration run:
//! a neighbour had the CPU while the repetitions were fixed, then gave it back.

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hwsurvey_engine::affinity::Placement;
use hwsurvey_engine::env::RunEnv;
use hwsurvey_engine::plan::{Point, RunOptions};
use hwsurvey_engine::profile::RunSettings;
use hwsurvey_engine::RunContext;

fn settings() -> RunSettings {
    RunSettings {
        placement: Placement::Compact,
        sample_min_s: 0.2,
        sample_min_clock_ticks: 20,
        warmup_s: 0.0,
        samples_min: 3,
        samples_max: 3,
        target_cv: 0.5,
        memory_fraction: 0.5,
        memory_llc_multiple: 1.0,
        memory_min_working_set_bytes: 1 << 20,
        memory_max_working_set_bytes: None,
        oversubscription_factor: 2,
        budget_s: None,
    }
}

/// The kernel "works" by sleeping: 2 ms a repetition during the calibration runs (reps 1, 2,
/// 4, ... 32: the sixth run is the first of at least 1/4 of the 0.2 s minimum), 0.2 ms after.
/// The calibration fixes 0.21 s / 2 ms = 105 repetitions, so the first sample lasts 21 ms.
/// It is dropped and the repetitions fixed again from it: every kept sample lasts at least the
/// 0.2 s minimum, with about 1050 repetitions.
#[test]
fn a_first_sample_far_from_the_minimum_refits_the_repetitions() {
    let settings = settings();
    let env = RunEnv::read(&hwsurvey_probe::SysRoot::new("/nonexistent-root"));
    let options = RunOptions::default();
    let cancel = AtomicBool::new(false);
    let deadline = Instant::now() + Duration::from_secs(30);
    let ctx = RunContext::new(&settings, &env, &options, &cancel, deadline);
    let point = Point {
        family: "test.pace".into(),
        id: "sleep".into(),
        threads: 1,
        placement: Placement::Compact,
        cpus: vec![0],
        params: serde_json::Value::Null,
        memory_bytes: 0,
        estimated_s: 2.0,
        landmarks: vec![],
    };
    let calls = AtomicUsize::new(0);
    let timed = ctx
        .measure_parallel(
            &point,
            |_| (),
            |_, reps| {
                let call = calls.fetch_add(1, Ordering::SeqCst) + 1;
                let per_rep = if call <= 6 { 2e-3 } else { 0.2e-3 };
                std::thread::sleep(Duration::from_secs_f64(per_rep * reps as f64));
            },
        )
        .unwrap();
    assert_eq!(timed.sample_s.len(), 3, "{timed:?}");
    assert!(
        timed.sample_s.iter().all(|&s| s >= 0.2),
        "every kept sample lasts the minimum: {timed:?}"
    );
    // 0.21 s / 0.2 ms = 1050; sleeping overshoots a little, so the refit gives somewhat fewer
    assert!(
        (800..=1050).contains(&timed.reps_per_sample),
        "{}",
        timed.reps_per_sample
    );
}

//! `mem.loaded_latency` end to end on this machine with the built-in profile named by
//! `HWSURVEY_SERVICE_PROFILE` (default `quick`): plan, then every point through `run_point`.
//! Checks what it records (latency and bandwidth per window, no bandwidth metric when idle, pinning
//! of every thread), not speed. With `--nocapture` it prints the curve.

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use hwsurvey_engine::env::RunEnv;
use hwsurvey_engine::plan::{build_plan, RunOptions};
use hwsurvey_engine::PointOutcome;
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_workloads::families;

fn samples<'a>(m: &'a hwsurvey_engine::Measurement, name: &str) -> &'a [f64] {
    m.metrics
        .iter()
        .find(|x| x.name == name)
        .map(|x| x.samples.as_slice())
        .unwrap_or_else(|| panic!("metric {name} missing"))
}

#[test]
fn quick_profile_curve_runs_and_describes_itself() {
    let name = std::env::var("HWSURVEY_SERVICE_PROFILE").unwrap_or_else(|_| "quick".into());
    let profile = families::load_profile(&name).unwrap();
    let root = SysRoot::new("/");
    let machine = probe_machine(&root);
    let env = RunEnv::read(&root);
    let options = RunOptions::default();
    let registry = families::registry();
    let plan = build_plan(
        &profile,
        &registry,
        &machine,
        &env,
        &options,
        &["mem.loaded_latency".to_string()],
    )
    .unwrap();
    let fam = registry
        .iter()
        .find(|f| f.id() == "mem.loaded_latency")
        .unwrap();
    let fplan = &plan.families[0];
    assert_eq!(fplan.points[0].id, "idle");
    assert!(
        fplan.points.len() >= 3,
        "idle plus loaded points for each kind"
    );
    println!(
        "plan: {} points, estimated {:.1} s",
        fplan.points.len(),
        fplan.estimated_s
    );
    let cancel = AtomicBool::new(false);
    let t_all = Instant::now();
    for point in &fplan.points {
        let deadline = Instant::now() + Duration::from_secs_f64(point.estimated_s * 3.0 + 1.0);
        let ctx = hwsurvey_engine::RunContext::new(&profile.run, &env, &options, &cancel, deadline);
        let t0 = Instant::now();
        let m = match fam.run_point(point, &ctx) {
            PointOutcome::Measured(m) => m,
            other => panic!("{}: {other:?}", point.id),
        };
        let lat = samples(&m, "latency_ns");
        assert!(lat.len() >= 2);
        assert!(lat.iter().all(|&l| l > 0.0 && l.is_finite()));
        let load_threads = m.details["load_threads"].as_u64().unwrap();
        let bw: &[f64] = if load_threads == 0 {
            // Idle: no streaming threads, so no bandwidth metric at all (absent, not 0).
            assert!(
                m.metrics.iter().all(|x| x.name != "bandwidth_bytes_per_s"),
                "idle point records no bandwidth"
            );
            &[0.0]
        } else {
            let bw = samples(&m, "bandwidth_bytes_per_s");
            assert_eq!(lat.len(), bw.len());
            // Bytes are counted per 4 KiB chunk; a window in which a starved streaming thread
            // got no CPU at all on a loaded machine may truly be 0, but not every window.
            assert!(
                bw.iter().all(|&b| b >= 0.0) && bw.iter().any(|&b| b > 0.0),
                "{}: {bw:?}",
                point.id
            );
            bw
        };
        // One pin record per thread: the chaser and each streaming thread.
        assert_eq!(m.pins.len() as u64, load_threads + 1);
        println!(
            "{}: latency {:.1} ns at {:.2} GB/s ({:.2} s)",
            point.id,
            lat[0],
            bw[0] / 1e9,
            t0.elapsed().as_secs_f64()
        );
    }
    println!("all points: {:.1} s", t_all.elapsed().as_secs_f64());
}

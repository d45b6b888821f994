//! `service.point_select` end to end on this machine with the built-in profile named by
//! `HWSURVEY_SERVICE_PROFILE` (default `quick`): plan, then every point through `run_point`.
//! Checks the shape of what it records (metrics with units, latency order, backing, search
//! trials), not speed. With `--nocapture` it prints the figures.

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use hwsurvey_engine::env::RunEnv;
use hwsurvey_engine::plan::{build_plan, RunOptions};
use hwsurvey_engine::PointOutcome;
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_workloads::families;

fn metric<'a>(m: &'a hwsurvey_engine::Measurement, name: &str) -> &'a [f64] {
    m.metrics
        .iter()
        .find(|x| x.name == name)
        .map(|x| x.samples.as_slice())
        .unwrap_or_else(|| panic!("metric {name} missing"))
}

#[test]
fn quick_profile_points_run_and_describe_themselves() {
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
        &["service.point_select".to_string()],
    )
    .unwrap();
    let fam = registry
        .iter()
        .find(|f| f.id() == "service.point_select")
        .unwrap();
    let fplan = &plan.families[0];
    let cpus = env.cpu_count();
    let closed = fplan
        .points
        .iter()
        .filter(|p| p.id.starts_with("closed/"))
        .count();
    assert!(
        closed >= 2,
        "{:?}",
        fplan.points.iter().map(|p| &p.id).collect::<Vec<_>>()
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
        let out = fam.run_point(point, &ctx);
        let took = t0.elapsed().as_secs_f64();
        let m = match out {
            PointOutcome::Measured(m) => m,
            PointOutcome::Skipped { reason } => {
                assert!(
                    point.id.contains("pages=thp")
                        || (point.id.starts_with("critical/")
                            && reason.starts_with("no open-loop rate kept p99 <=")),
                    "{}: skipped: {reason}",
                    point.id
                );
                println!("{}: skipped: {reason}", point.id);
                continue;
            }
            PointOutcome::SkippedAfterTrying { reason, details } => {
                // No rate met the bound: the reason names the failing criterion with its
                // numbers, and every trial is kept.
                assert!(point.id.starts_with("critical/"), "{}: {reason}", point.id);
                assert!(
                    reason.starts_with("no open-loop rate kept p99 <=")
                        && reason.contains("lowest rate tried: ")
                        && reason.contains("failed: "),
                    "{}: {reason}",
                    point.id
                );
                let trials = details["search"]["trials"].as_array().unwrap();
                assert!(!trials.is_empty());
                for t in trials {
                    assert!(!t["failed"].as_array().unwrap().is_empty(), "{t}");
                }
                println!("{}: skipped: {reason}", point.id);
                continue;
            }
            PointOutcome::Failed { error } => panic!("{}: {error}", point.id),
        };
        assert!(m.details.contains_key("backing_table"), "{}", point.id);
        if point.id.starts_with("closed/") {
            let tput = metric(&m, "throughput_ops_per_s");
            let (p50, p99, p999) = (
                metric(&m, "latency_p50_ns"),
                metric(&m, "latency_p99_ns"),
                metric(&m, "latency_p999_ns"),
            );
            assert!(tput.len() >= 2 && tput.iter().all(|&t| t > 0.0));
            assert_eq!(p99.len(), tput.len());
            for i in 0..p99.len() {
                assert!(p50[i] <= p99[i] && p99[i] <= p999[i]);
            }
            println!(
                "{}: {:.0} ops/s, p50 {:.0} ns, p99 {:.0} ns, p99.9 {:.0} ns ({took:.2} s, build {:.3} s, table {})",
                point.id, tput[0], p50[0], p99[0], p999[0], m.details["build_s"], m.details["backing_table"]
            );
        } else {
            let c = metric(&m, "critical_throughput_ops_per_s");
            let search = &m.details["search"];
            assert!(!search["trials"].as_array().unwrap().is_empty());
            // No rate under the bound is a skipped point, never measured with no samples.
            assert!(!c.is_empty(), "{}: measured without samples", point.id);
            println!(
                "{}: critical {:?} ops/s, p99 {:?} ns, stop {}, {} trials, start {:.0} ops/s ({took:.2} s)",
                point.id,
                c,
                metric(&m, "critical_p99_ns"),
                search["stop"],
                search["trials"].as_array().unwrap().len(),
                m.details["start_closed_loop"]["throughput_ops_per_s"].as_f64().unwrap_or(0.0)
            );
            if std::env::var_os("HWSURVEY_SERVICE_TRIALS").is_some() {
                for t in search["trials"].as_array().unwrap() {
                    let p = &t["point"];
                    println!(
                        "  rate {:.0} -> {:.0} ops/s, p99 {} ns, max lag {} ns, abandoned {}, passed {}",
                        p["requested_rate_ops_per_s"].as_f64().unwrap_or(0.0),
                        p["achieved_rate_ops_per_s"].as_f64().unwrap_or(0.0),
                        p["latency"]["p99_ns"],
                        p["max_send_lag_ns"],
                        p["abandoned_ops"],
                        t["passed"]
                    );
                }
            }
        }
    }
    // (per-trial lines printed above when HWSURVEY_SERVICE_TRIALS is set)
    println!(
        "all points: {:.1} s on {cpus} CPUs",
        t_all.elapsed().as_secs_f64()
    );
}

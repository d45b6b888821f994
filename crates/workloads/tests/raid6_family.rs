//! raid.parity through the engine: the standard plan has the 4+2, 8+2 and 18+2 geometries with
//! 64 KiB chunks within the budget, and the quick profile measures positive, checked figures.

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::sync::atomic::AtomicBool;

use hwsurvey_engine::env::RunEnv;
use hwsurvey_engine::result::Tool;
use hwsurvey_engine::run::{run_with_cancel, RunRequest, Silent};
use hwsurvey_engine::DynFamily;
use hwsurvey_engine::{build_plan, Profile, RunOptions};
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_testkit::ALL_FAMILIES;
use hwsurvey_workloads::families::raid_parity::RaidParity;

fn load(name: &str) -> Profile {
    let profile = Profile::load(name, &ALL_FAMILIES).unwrap();
    RaidParity
        .check_section(
            profile
                .families
                .get("raid.parity")
                .expect("raid.parity section"),
        )
        .unwrap();
    profile
}

#[test]
fn standard_plan_has_the_geometries_within_budget() {
    let profile = load("standard");
    let root = SysRoot::live();
    let env = RunEnv::read(&root);
    let fams: Vec<&dyn DynFamily> = vec![&RaidParity];
    let plan = build_plan(
        &profile,
        &fams,
        &probe_machine(&root),
        &env,
        &RunOptions::default(),
        &[],
    )
    .unwrap();
    let fp = plan
        .families
        .iter()
        .find(|f| f.family == "raid.parity")
        .unwrap();
    assert!(fp.estimated_s <= fp.budget_s);
    for g in ["4+2", "8+2", "18+2"] {
        assert!(
            fp.points
                .iter()
                .any(|p| p.id == format!("gen.best/{g}/threads=1")),
            "{g}"
        );
        assert!(
            fp.points
                .iter()
                .any(|p| p.id == format!("recov_2data.best/{g}/threads=1")),
            "{g}"
        );
    }
    assert!(fp.points.iter().all(|p| p.params["chunk_bytes"] == 65536));
    let most = fp.points.iter().map(|p| p.threads).max().unwrap();
    assert_eq!(most, env.cpu_count());
}

#[test]
fn quick_profile_measures_checked_figures() {
    let profile = load("quick");
    let root = SysRoot::live();
    let machine = probe_machine(&root);
    let env = RunEnv::read(&root);
    let options = RunOptions::default();
    let fams: Vec<&dyn DynFamily> = vec![&RaidParity];
    let plan = build_plan(&profile, &fams, &machine, &env, &options, &[]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("q.json");
    let req = RunRequest {
        profile: &profile,
        plan: &plan,
        families: &fams,
        machine: &machine,
        env: &env,
        options: &options,
        output: &out,
        root: &root,
        tool: Tool::this_build(),
        time_limit: None,
        qualifier: None,
        clock: None,
    };
    let file = run_with_cancel(&req, &mut Silent, &AtomicBool::new(false)).unwrap();
    let measured: Vec<_> = file
        .tests
        .iter()
        .filter(|t| {
            t.point.family == "raid.parity"
                && t.outcome == hwsurvey_engine::result::Outcome::Measured
        })
        .collect();
    assert!(
        !measured.is_empty(),
        "{:?}",
        file.tests
            .iter()
            .map(|t| (&t.point.id, &t.reason))
            .collect::<Vec<_>>()
    );
    for t in &measured {
        assert_eq!(t.metrics[0].name, "bandwidth_bytes_per_s");
        assert!(t.metrics[0]
            .samples
            .iter()
            .all(|v| v.is_finite() && *v > 0.0));
        // `best` is the fastest path of the selection, and a best point ran it.
        let measured = t.details["paths_measured"].as_array().unwrap();
        let names: Vec<&str> = measured
            .iter()
            .map(|f| f["algorithm"].as_str().unwrap())
            .collect();
        let avail = hwsurvey_workloads::raid6::Algorithm::available();
        assert_eq!(names, avail.iter().map(|a| a.name()).collect::<Vec<_>>());
        let top = measured
            .iter()
            .max_by(|a, b| {
                a["gen_bytes_per_s"]
                    .as_f64()
                    .unwrap()
                    .total_cmp(&b["gen_bytes_per_s"].as_f64().unwrap())
            })
            .unwrap();
        assert_eq!(t.details["best"], top["algorithm"]);
        if t.point.id.contains(".best/") {
            assert_eq!(t.details["algorithm"], t.details["best"]);
        }
        assert!(t.details["paths_unbuilt"].is_array());
        assert_eq!(t.details["checked_against_reference"], true);
    }
    assert!(file
        .tests
        .iter()
        .filter(|t| t.point.family == "raid.parity")
        .all(|t| t.outcome != hwsurvey_engine::result::Outcome::Failed));
}

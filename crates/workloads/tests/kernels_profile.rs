//! The four kernel families end to end: their sections of the built-in profiles parse, the plan
//! on this machine has their points (or skips with reasons), and the quick profile runs them to
//! a result file with checked, positive figures. Under qemu-user this is the plumbing check.

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::sync::atomic::AtomicBool;

use hwsurvey_engine::env::RunEnv;
use hwsurvey_engine::result::Tool;
use hwsurvey_engine::run::{run_with_cancel, RunRequest, Silent};
use hwsurvey_engine::{build_plan, Profile, RunOptions};
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_testkit::ALL_FAMILIES;
use hwsurvey_workloads::families::{
    c2c_latency::C2cLatency, cpu_scaling::CpuScaling, mem_latency::MemLatency,
    sync_contention::SyncContention, DynFamily,
};

const MINE: [&str; 4] = [
    "mem.latency",
    "cpu.scaling",
    "c2c.latency",
    "sync.contention",
];

fn families() -> Vec<&'static dyn DynFamily> {
    vec![&MemLatency, &CpuScaling, &C2cLatency, &SyncContention]
}

/// Loads a built-in profile and checks the kernel families' sections with their families.
fn load(name: &str) -> Profile {
    let profile = Profile::load(name, &ALL_FAMILIES).unwrap();
    for f in families() {
        let section = profile
            .families
            .get(f.id())
            .unwrap_or_else(|| panic!("{name} lacks {}", f.id()));
        f.check_section(section).unwrap();
    }
    profile
}

#[test]
fn standard_plan_has_every_kernel_family_and_drops_nothing_for_time() {
    let profile = load("standard");
    let root = SysRoot::live();
    let machine = probe_machine(&root);
    let env = RunEnv::read(&root);
    let plan = build_plan(
        &profile,
        &families(),
        &machine,
        &env,
        &RunOptions::default(),
        &[],
    )
    .unwrap();
    for fp in &plan.families {
        assert!(
            !fp.points.is_empty(),
            "{}: no points; skipped {:?}",
            fp.family,
            fp.skipped
        );
        // the profile defines the points: a skip is for what this machine lacks, never time
        assert!(
            fp.skipped
                .iter()
                .all(|s| !s.reason.is_empty() && !s.reason.contains("budget")),
            "{}: {:?}",
            fp.family,
            fp.skipped
        );
    }
    let lat = plan
        .families
        .iter()
        .find(|f| f.family == "mem.latency")
        .unwrap();
    // the first point is the "memory" working set with base pages, full random
    let first = &lat.points[0];
    assert!(first.id.starts_with("full_random/base/"), "{}", first.id);
    assert_eq!(first.memory_bytes, plan.memory_working_set_bytes / 64 * 64);
    // the smallest working set is 16 KiB
    assert!(
        lat.points
            .iter()
            .any(|p| p.id == "full_random/base/ws=16KiB"),
        "{:?}",
        lat.points.iter().map(|p| &p.id).collect::<Vec<_>>()
    );
    let sync = plan
        .families
        .iter()
        .find(|f| f.family == "sync.contention")
        .unwrap();
    let most = sync.points.iter().map(|p| p.threads).max().unwrap();
    assert_eq!(most, 2 * env.cpu_count(), "oversubscription point");
}

#[test]
fn quick_profile_runs_the_kernel_families() {
    let profile = load("quick");
    let root = SysRoot::live();
    let machine = probe_machine(&root);
    let env = RunEnv::read(&root);
    let options = RunOptions::default();
    let fams = families();
    let plan = build_plan(&profile, &fams, &machine, &env, &options, &[]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("quick.json");
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
    assert!(out.exists());
    for id in MINE {
        let measured: Vec<_> = file
            .tests
            .iter()
            .filter(|t| {
                t.point.family == id && t.outcome == hwsurvey_engine::result::Outcome::Measured
            })
            .collect();
        assert!(
            !measured.is_empty(),
            "{id}: nothing measured: {:?}",
            file.tests
                .iter()
                .filter(|t| t.point.family == id)
                .map(|t| (&t.point.id, &t.reason))
                .collect::<Vec<_>>()
        );
        for t in measured {
            let m = &t.metrics[0];
            assert!(m.samples.len() >= 2, "{}: {:?}", t.point.id, m.samples);
            assert!(
                m.samples.iter().all(|v| v.is_finite() && *v > 0.0),
                "{}: {:?}",
                t.point.id,
                m.samples
            );
        }
    }
    for t in file
        .tests
        .iter()
        .filter(|t| MINE.contains(&t.point.family.as_str()))
    {
        assert_ne!(
            t.outcome,
            hwsurvey_engine::result::Outcome::Failed,
            "{}: {:?}",
            t.point.id,
            t.reason
        );
    }
}

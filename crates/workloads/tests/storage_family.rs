//! storage.iops through the engine: skipped with the reason without targets, refused devices,
//! a quick run in a temporary directory with figures and no file left behind, and a cancelled
//! run (the engine's Ctrl-C flag) leaving nothing either.

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use hwsurvey_engine::env::RunEnv;
use hwsurvey_engine::result::{ResultFile, Tool};
use hwsurvey_engine::run::{run_with_cancel, RunRequest, Silent};
use hwsurvey_engine::DynFamily;
use hwsurvey_engine::{build_plan, Profile, RunOptions};
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_testkit::ALL_FAMILIES;
use hwsurvey_workloads::families::storage_iops::{StorageIops, NO_TARGET_REASON};

fn fams() -> Vec<&'static dyn DynFamily> {
    vec![&StorageIops]
}

/// The storage.iops part of `profile`'s plan for this machine with `opts`.
fn storage_plan(profile: &Profile, opts: &RunOptions) -> hwsurvey_engine::plan::FamilyPlan {
    let root = SysRoot::live();
    build_plan(
        profile,
        &fams(),
        &probe_machine(&root),
        &RunEnv::read(&root),
        opts,
        &[],
    )
    .unwrap()
    .families
    .into_iter()
    .find(|f| f.family == "storage.iops")
    .unwrap()
}

fn load(name: &str) -> Profile {
    let profile = Profile::load(name, &ALL_FAMILIES).unwrap();
    StorageIops
        .check_section(
            profile
                .families
                .get("storage.iops")
                .expect("storage.iops section"),
        )
        .unwrap();
    profile
}

fn run(profile: &Profile, options: &RunOptions, cancel: bool) -> ResultFile {
    let root = SysRoot::live();
    let machine = probe_machine(&root);
    let env = RunEnv::read(&root);
    let fams = fams();
    let plan = build_plan(profile, &fams, &machine, &env, options, &[]).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("r.json");
    let req = RunRequest {
        profile,
        plan: &plan,
        families: &fams,
        machine: &machine,
        env: &env,
        options,
        output: &out,
        root: &root,
        tool: Tool::this_build(),
        time_limit: None,
        qualifier: None,
        clock: None,
    };
    run_with_cancel(&req, &mut Silent, &AtomicBool::new(cancel)).unwrap()
}

#[test]
fn skipped_with_reason_without_storage_dir() {
    let profile = load("standard");
    let fp = storage_plan(&profile, &RunOptions::default());
    assert!(fp.points.is_empty());
    assert_eq!(fp.skipped.len(), 1);
    assert_eq!(fp.skipped[0].reason, NO_TARGET_REASON);
    assert!(fp.skipped[0].reason.contains("--storage-dir"));
    // A device without --destructive is skipped in the plan, naming the flag.
    let opts = RunOptions {
        storage_devices: vec![PathBuf::from("/dev/sdz")],
        ..Default::default()
    };
    let fp = storage_plan(&profile, &opts);
    assert!(fp.points.is_empty());
    assert!(
        fp.skipped[0].reason.contains("--destructive"),
        "{}",
        fp.skipped[0].reason
    );
}

#[test]
fn standard_plan_with_two_dirs_drops_nothing_for_time() {
    let profile = load("standard");
    let opts = RunOptions {
        storage_dirs: vec![PathBuf::from("/a"), PathBuf::from("/b")],
        ..Default::default()
    };
    let fp = storage_plan(&profile, &opts);
    assert!(
        fp.skipped.iter().all(|s| !s.reason.contains("budget")),
        "{:?}",
        fp.skipped
    );
    assert!(
        fp.points[0]
            .id
            .starts_with("randread_4k/target=dir0/threads=1/qd=1"),
        "{}",
        fp.points[0].id
    );
    // the 'all targets together' points are planned (no budget cuts them)
    let all = fp.points.iter().any(|p| p.id.contains("target=all"));
    assert!(
        all,
        "{:?}",
        fp.points.iter().map(|p| &p.id).collect::<Vec<_>>()
    );
}

/// Six directories: each alone, then the device-count ladder 2, 4 and all 6 at once, every
/// pattern x threads x queue depth of the standard profile, with 1 thread per target per device
/// (the ladder's points use threads x devices CPUs).
#[test]
fn six_dirs_plan_each_then_a_device_count_ladder() {
    use hwsurvey_workloads::families::storage_iops::device_ladder;
    assert_eq!(device_ladder(1), Vec::<usize>::new());
    assert_eq!(device_ladder(2), [2]);
    assert_eq!(device_ladder(4), [2, 4]);
    assert_eq!(device_ladder(6), [2, 4, 6]);
    assert_eq!(device_ladder(16), [2, 4, 8, 16]);
    let profile = load("standard");
    let opts = RunOptions {
        storage_dirs: (0..6).map(|i| PathBuf::from(format!("/d{i}"))).collect(),
        ..Default::default()
    };
    let fp = storage_plan(&profile, &opts);
    let targets: Vec<&str> = fp
        .points
        .iter()
        .filter(|p| p.id.starts_with("randread_4k/") && p.id.ends_with("/threads=1/qd=16"))
        .map(|p| p.id.split('/').nth(1).unwrap())
        .collect();
    assert_eq!(
        targets,
        [
            "target=dir0",
            "target=dir1",
            "target=dir2",
            "target=dir3",
            "target=dir4",
            "target=dir5",
            "target=first2",
            "target=first4",
            "target=all"
        ]
    );
    let four = fp
        .points
        .iter()
        .find(|p| p.id == "randread_4k/target=first4/threads=2/qd=16")
        .unwrap();
    assert_eq!(four.threads, 8);
    let params: hwsurvey_workloads::families::storage_iops::PointParams = four.params().unwrap();
    assert_eq!(
        params.targets,
        (0..4)
            .map(
                |i| hwsurvey_workloads::families::storage_iops::TargetSpec::Dir {
                    path: PathBuf::from(format!("/d{i}"))
                }
            )
            .collect::<Vec<_>>()
    );
    // 4 patterns x 2 thread counts x 2 queue depths x (6 + 3) groups
    assert_eq!(fp.points.len(), 4 * 2 * 2 * 9);
}

#[test]
fn refused_device_is_skipped_and_never_written() {
    use hwsurvey_testkit::blockdev::{blank_image, find_tool, make, Kind};
    let profile = load("quick");
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("ext4.img");
    blank_image(&img).unwrap();
    let has_ext4 = find_tool("mkfs.ext4").is_some();
    if has_ext4 {
        make(Kind::Ext4, &img, dir.path()).unwrap();
    } else {
        println!("SKIPPED (ext4 part): mkfs.ext4 not installed");
    }
    let before = std::fs::read(&img).unwrap();
    let opts = RunOptions {
        storage_devices: vec![img.clone()],
        destructive: true,
        ..Default::default()
    };
    let file = run(&profile, &opts, false);
    let tests: Vec<_> = file
        .tests
        .iter()
        .filter(|t| t.point.family == "storage.iops")
        .collect();
    assert!(!tests.is_empty());
    for t in tests {
        assert_eq!(
            t.outcome,
            hwsurvey_engine::result::Outcome::Skipped,
            "{}: {:?}",
            t.point.id,
            t.reason
        );
        let r = t.reason.clone().unwrap_or_default();
        assert!(
            r.contains("refused") && r.contains("not a block device"),
            "{r}"
        );
        if has_ext4 {
            assert!(r.contains("holds a signature: ext4 (filesystem)"), "{r}");
        }
    }
    assert!(
        std::fs::read(&img).unwrap() == before,
        "the refused device was modified"
    );
}

#[cfg(feature = "sys")]
#[test]
fn quick_run_measures_and_leaves_nothing() {
    let profile = load("quick");
    let dir = tempfile::tempdir().unwrap();
    if let Err(e) = hwsurvey_workloads::storage::target::check_dir(dir.path()) {
        println!("SKIPPED: temporary directory unusable for O_DIRECT: {e}");
        return;
    }
    let opts = RunOptions {
        storage_dirs: vec![dir.path().to_path_buf()],
        ..Default::default()
    };
    let file = run(&profile, &opts, false);
    let measured: Vec<_> = file
        .tests
        .iter()
        .filter(|t| {
            t.point.family == "storage.iops"
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
        assert!(t.metrics.iter().any(|m| m.name == "iops"));
        assert!(t.metrics.iter().any(|m| m.name == "latency_p99_ns"));
        for m in t.metrics.iter().filter(|m| m.name != "cpu_ns_per_io") {
            assert!(
                m.samples.iter().all(|v| v.is_finite() && *v > 0.0),
                "{}: {:?}",
                t.point.id,
                m.samples
            );
        }
        let engine = t.details["io_engine"]["engine"].as_str().unwrap();
        assert!(engine == "io_uring" || engine == "pread_pwrite");
        let p50 = t.details["latency_p50_ns"].as_u64().unwrap();
        let p99 = t.details["latency_p99_ns"].as_u64().unwrap();
        assert!(p50 > 0 && p50 <= p99);
        assert!(t.details["targets"].is_array());
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "test file left behind"
    );
    // Cancelled from the start (Ctrl-C): nothing measured, nothing left.
    let file = run(&profile, &opts, true);
    assert!(file
        .tests
        .iter()
        .all(|t| t.outcome != hwsurvey_engine::result::Outcome::Measured
            || t.point.family != "storage.iops"));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "test file left behind after Ctrl-C"
    );
}

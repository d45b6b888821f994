//! The plan's rules over the registered families (mem.bandwidth, sync.contention): thread
//! ladder with topology landmarks, working set and memory cap, `--only`, the obsolete budget,
//! the thread cap per point, and `--max-time` shortening samples before dropping points.

use hwsurvey_engine::env::{CpuPlace, LastLevelCache, RunEnv};
use hwsurvey_engine::plan::{build_plan, fit_plan, RunOptions};
use hwsurvey_engine::profile::{Profile, MAX_THREADS_PER_POINT};
use hwsurvey_model::{Probed, Unknown};
use hwsurvey_probe::run_env::ReadRunEnv as _;
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_workloads::families;

/// A 4-CPU environment (2 cores x 2 threads), 8 MiB LLC, 100 MiB available, no cgroup limit.
fn env4() -> RunEnv {
    let mut env = RunEnv::read(&SysRoot::new("/nonexistent-root"));
    env.usable_cpus = (0..4).collect();
    env.cpus = (0..4)
        .map(|cpu| CpuPlace {
            cpu,
            package: Some(0),
            core: Some(i64::from(cpu % 2)),
            node: Some(0),
        })
        .collect();
    env.llc = Probed::Known(LastLevelCache {
        level: 3,
        instance_size_bytes: 8 << 20,
        instances: 1,
        total_size_bytes: 8 << 20,
    });
    env.mem_available_bytes = Probed::Known(100 << 20);
    env.cgroup_memory_limit_bytes = Probed::Unknown(Unknown::Other {
        detail: "test".into(),
    });
    env
}

fn profile(budget_s: f64) -> Profile {
    let text = format!(
        "format_version = 1\nid = \"t\"\nversion = 1\ndescription = \"d\"\n[run]\nplacement = \"compact\"\nsample_min_s = 0.2\nsample_min_clock_ticks = 20\nwarmup_s = 0.1\nsamples_min = 3\nsamples_max = 5\ntarget_cv = 0.03\nmemory_fraction = 0.5\nmemory_llc_multiple = 4.0\nmemory_min_working_set_bytes = 1048576\noversubscription_factor = 2\nbudget_s = 100\n[families.\"mem.bandwidth\"]\nbudget_s = {budget_s}\n[families.\"mem.bandwidth\".params]\nstream_kernels = [\"triad\"]\nblock_sizes_bytes = [1024, 67108864]\nblock_ops = [\"read\"]\n"
    );
    Profile::parse("t.toml", &text, &families::ids()).unwrap()
}

#[test]
fn plan_applies_the_rules() {
    let env = env4();
    let machine = probe_machine(&SysRoot::new("/nonexistent-root"));
    let fams = families::registry();
    let plan = build_plan(
        &profile(90.0),
        &fams,
        &machine,
        &env,
        &RunOptions::default(),
        &[],
    )
    .unwrap();
    assert_eq!(plan.thread_counts, vec![1, 2, 4]);
    // 4 x 8 MiB LLC = 32 MiB, under the 50 MiB cap (0.5 x 100 MiB)
    assert_eq!(plan.memory_working_set_bytes, 32 << 20);
    assert_eq!(plan.memory_cap_bytes, Some(50 << 20));
    let f = &plan.families[0];
    let ids: Vec<&str> = f.points.iter().map(|p| p.id.as_str()).collect();
    // 2 cores x 2 threads: every core with one thread (CPUs 0, 1) is a rung of its own
    assert_eq!(
        ids,
        [
            "stream.triad/threads=1",
            "stream.triad/threads=2",
            "stream.triad/threads=2/cores",
            "stream.triad/threads=4",
            "read/block=1KiB/threads=1",
            "read/block=1KiB/threads=2",
            "read/block=1KiB/threads=2/cores",
            "read/block=1KiB/threads=4",
        ]
    );
    // compact placement: SMT siblings (same core) first
    assert_eq!(f.points[1].cpus, vec![0, 2]);
    assert_eq!(f.points[1].landmarks, ["smt_core"]);
    assert_eq!(f.points[2].cpus, vec![0, 1]);
    assert_eq!(f.points[2].landmarks, ["cores"]);
    assert_eq!(f.points[3].landmarks, ["numa_node", "package", "all"]);
    assert!(f.points[0].landmarks.is_empty());
    let names: Vec<(&str, usize)> = plan
        .landmarks
        .iter()
        .map(|m| (m.name.as_str(), m.threads))
        .collect();
    assert_eq!(
        names,
        [
            ("smt_core", 2),
            ("numa_node", 4),
            ("package", 4),
            ("cores", 2),
            ("all", 4)
        ]
    );
    // 64 MiB blocks x threads exceed the 50 MiB cap
    assert_eq!(f.skipped.len(), 4);
    assert!(f.skipped.iter().all(|s| s.reason.contains("memory cap")));
    assert!(f.points.iter().all(|p| p.memory_bytes <= 50 << 20));
}

#[test]
fn an_obsolete_budget_drops_no_point_and_only_filters() {
    let env = env4();
    let machine = probe_machine(&SysRoot::new("/nonexistent-root"));
    let fams = families::registry();
    let plan = build_plan(
        &profile(2.0),
        &fams,
        &machine,
        &env,
        &RunOptions::default(),
        &[],
    )
    .unwrap();
    let f = &plan.families[0];
    // a 2 s budget (obsolete) used to keep 2 of these points; all 8 are planned
    assert_eq!(f.points.len(), 8);
    assert!(f.skipped.iter().all(|s| s.reason.contains("memory cap")));
    let sum: f64 = f.points.iter().map(|p| p.estimated_s).sum();
    assert!((f.estimated_s - sum).abs() < 1e-9 && f.estimated_s > 2.0);
    assert!(
        (f.budget_s - 1.25 * sum).abs() < 1e-9,
        "allowance {}",
        f.budget_s
    );
    let only = build_plan(
        &profile(90.0),
        &fams,
        &machine,
        &env,
        &RunOptions::default(),
        &["cpu".to_string()],
    )
    .unwrap();
    assert!(only.families.is_empty(), "mem.bandwidth filtered out");
    let bad = build_plan(
        &profile(90.0),
        &fams,
        &machine,
        &env,
        &RunOptions::default(),
        &["nosuch".to_string()],
    );
    assert!(bad.unwrap_err().message.contains("--only nosuch"));
}

#[test]
fn oversubscription_is_capped_at_max_threads_per_point() {
    // 128 usable CPUs x factor 64 = 8192 threads: the point gets 4096
    let mut env = env4();
    env.usable_cpus = (0..128).collect();
    env.cpus.clear();
    let text = "format_version = 1\nid = \"t\"\nversion = 1\ndescription = \"d\"\n[run]\nplacement = \"compact\"\nsample_min_s = 0.01\nsample_min_clock_ticks = 20\nwarmup_s = 0.0\nsamples_min = 2\nsamples_max = 3\ntarget_cv = 0.03\nmemory_fraction = 0.5\nmemory_llc_multiple = 4.0\nmemory_min_working_set_bytes = 1048576\noversubscription_factor = 64\nbudget_s = 100\n[families.\"sync.contention\"]\nbudget_s = 90\n[families.\"sync.contention\".params]\nprimitives = [\"mutex\"]\noversubscribe = true\n";
    let profile = Profile::parse("t.toml", text, &families::ids()).unwrap();
    let machine = probe_machine(&SysRoot::new("/nonexistent-root"));
    let fams = families::registry();
    let plan = build_plan(&profile, &fams, &machine, &env, &RunOptions::default(), &[]).unwrap();
    let ids: Vec<&str> = plan.families[0]
        .points
        .iter()
        .map(|p| p.id.as_str())
        .collect();
    assert_eq!(ids.last(), Some(&"mutex/threads=4096"), "{ids:?}");
    assert!(plan.families[0]
        .points
        .iter()
        .all(|p| p.cpus.len() <= MAX_THREADS_PER_POINT));
}

#[test]
fn max_time_shortens_samples_first_and_drops_points_last() {
    let env = env4();
    let machine = probe_machine(&SysRoot::new("/nonexistent-root"));
    let fams = families::registry();
    let profile = profile(90.0);
    let fit = |max: f64| {
        fit_plan(
            &profile,
            &fams,
            &machine,
            &env,
            &RunOptions::default(),
            &[],
            max,
        )
        .unwrap()
    };
    let full = build_plan(&profile, &fams, &machine, &env, &RunOptions::default(), &[])
        .unwrap()
        .estimated_s();
    // fits: nothing changed, not time-limited
    let (p, plan, limit) = fit(full + 1.0);
    assert_eq!((p.run.samples_min, limit), (3, None));
    assert_eq!(plan.point_count(), 8);
    // a little less: no extra samples first, every point kept
    let (p, plan, limit) = fit(full - 0.5);
    let limit = limit.unwrap();
    assert_eq!(limit.shortened, ["samples_max 5 -> 3"]);
    assert_eq!((p.run.samples_max, limit.dropped_points), (3, 0));
    assert_eq!(plan.point_count(), 8);
    assert!(plan.estimated_s() <= full - 0.5, "{}", plan.estimated_s());
    // far less: every shortening, then points dropped from the largest family, named
    let (p, plan, limit) = fit(1.0);
    let limit = limit.unwrap();
    assert_eq!(limit.shortened.len(), 5, "{:?}", limit.shortened);
    assert_eq!((p.run.samples_min, p.run.samples_max), (2, 2));
    assert_eq!(p.run.sample_min_s, 0.05);
    assert!(plan.estimated_s() <= 1.0);
    assert!(limit.dropped_points > 0 && limit.dropped_points < 8);
    assert_eq!(plan.point_count(), 8 - limit.dropped_points);
    let dropped: Vec<&str> = plan.families[0]
        .skipped
        .iter()
        .filter(|s| s.reason.starts_with("dropped by --max-time 1 s"))
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(dropped.len(), limit.dropped_points);
    assert_eq!(
        dropped[0], "read/block=1KiB/threads=4",
        "the last point goes first"
    );
    assert!(
        limit.summary().contains("points dropped"),
        "{}",
        limit.summary()
    );
}

/// sync.contention's samples are fixed windows of `sample_min_s`: a point is estimated as its
/// warm-up window, `samples_min` windows and half a window, and the start of its threads.
/// The standard profile's points took 0.705-0.717 s each on the 2-vCPU Zen 2 VM (`cargo bench
/// -p hwsurvey --bench estimate`, 2026-12-06: every point 3 samples, spawn 85 us a thread)
/// against 0.99 s planned (0.72 of the estimate, outside the ±25 % it is held to); now 0.85 s
/// and the threads' start, within ±25 % of each recorded point.
#[test]
fn sync_contention_is_estimated_as_its_windows() {
    let plan = zen2_standard_plan("sync.contention");
    let fp = &plan.families[0];
    let recorded = [
        ("mutex/threads=1", 0.704911632),
        ("mutex/threads=2", 0.705167302),
        ("mutex/threads=4", 0.713631276),
        ("atomic_increment/threads=1", 0.704897356),
        ("atomic_increment/threads=2", 0.705047057),
        ("atomic_increment/threads=4", 0.717171977),
    ];
    assert_eq!(
        fp.points.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(),
        recorded.iter().map(|r| r.0).collect::<Vec<_>>()
    );
    for (p, (_, took)) in fp.points.iter().zip(recorded) {
        let expected = 0.1 + 3.5 * 0.2 + 0.05 + p.threads as f64 * 8.51553125e-05;
        assert!((p.estimated_s - expected).abs() < 1e-9, "{p:?}");
        let ratio = took / p.estimated_s;
        assert!((0.75..=1.25).contains(&ratio), "{}: {ratio}", p.id);
    }
}

/// The standard plan of `family` for the 2-vCPU Zen 2 VM of 2026-12-06: 2 CPUs, a 16 MiB L3,
/// 23.5 GiB available, its measured fixed-work speeds (the estimate bench's plan).
fn zen2_standard_plan(family: &str) -> hwsurvey_engine::plan::Plan {
    let profile = Profile::load("standard", &families::ids()).unwrap();
    let mut speed = hwsurvey_engine::speed::FixedWorkSpeed::reference("Zen 2 VM, 2026-12-06");
    speed.spawn_s = 8.51553125e-05;
    speed.touch_s_per_byte = 3.030614256858826e-10;
    speed.layout_s_per_slot = 1.1787044525146485e-08;
    speed.drain_s_per_thread = Some(2.219592857142857e-05);
    speed.parallel_cpus = 1.0;
    speed.parallel_threads = 2;
    let options = RunOptions {
        speed: Some(speed),
        ..RunOptions::default()
    };
    let mut env = env4();
    env.usable_cpus = (0..2).collect();
    env.cpus.truncate(2);
    env.llc = Probed::Known(LastLevelCache {
        level: 3,
        instance_size_bytes: 16 << 20,
        instances: 1,
        total_size_bytes: 16 << 20,
    });
    env.mem_available_bytes = Probed::Known(23_500 << 20);
    let machine = probe_machine(&SysRoot::new("/nonexistent-root"));
    build_plan(
        &profile,
        &families::registry(),
        &machine,
        &env,
        &options,
        &[family.to_string()],
    )
    .unwrap()
}

/// mem.loaded_latency's samples are fixed windows too: a point is estimated at `samples_min`
/// and half a sample. Two standard runs on the Zen 2 VM the same hour (estimate bench,
/// 2026-12-06): every point 3 samples (5.64 s in all), and 3 to 5 samples (7.10 s); against
/// an estimate of 4 samples a point they were 0.74 and 0.94 of it, the first outside issue
/// 38's ±25 %. Both runs are within it now.
#[test]
fn loaded_latency_is_estimated_at_the_minimum_samples_and_a_half() {
    let plan = zen2_standard_plan("mem.loaded_latency");
    let fp = &plan.families[0];
    assert_eq!(fp.points.len(), 7, "{:?}", fp.points);
    let estimated: f64 = fp.points.iter().map(|p| p.estimated_s).sum();
    for took in [
        [0.78, 0.80, 0.80, 0.80, 0.80, 0.83, 0.83],
        [0.80, 1.01, 1.22, 1.24, 1.21, 0.81, 0.81],
    ] {
        let ratio = took.iter().sum::<f64>() / estimated;
        assert!(
            (0.75..=1.25).contains(&ratio),
            "{ratio} of {estimated} s: {:?}",
            fp.points
        );
    }
}

/// A plan holds at most `MAX_PLAN_POINTS` points: 48 storage folders of 256 points each (and
/// their groups: 2, 4, ... all) would plan over 13000; refused, naming the family, before a
/// run or `--plan-only` holds them.
#[test]
fn a_plan_of_more_than_max_plan_points_is_refused() {
    let list = |n: usize| {
        format!(
            "[{}]",
            (1..=n)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let text = format!(
        "format_version = 1\nid = \"t\"\nversion = 1\ndescription = \"d\"\n[run]\nplacement = \"compact\"\nsample_min_s = 0.2\nsample_min_clock_ticks = 20\nwarmup_s = 0.1\nsamples_min = 3\nsamples_max = 5\ntarget_cv = 0.03\nmemory_fraction = 0.5\nmemory_llc_multiple = 4.0\nmemory_min_working_set_bytes = 1048576\noversubscription_factor = 2\n[families.\"storage.iops\"]\n[families.\"storage.iops\".params]\npatterns = [\"randread_4k\", \"seqwrite_1m\"]\nthreads_per_target = [1, 2]\nqueue_depths = {}\nfile_size_bytes = 8388608\nwindow_s = 0.02\nall_targets_together = true\n",
        list(64)
    );
    let profile = Profile::parse("big.toml", &text, &families::ids()).unwrap();
    let env = env4();
    let machine = probe_machine(&SysRoot::new("/nonexistent-root"));
    let fams = families::registry();
    let options = RunOptions {
        storage_dirs: (0..48).map(|i| format!("/tmp/d{i}").into()).collect(),
        ..RunOptions::default()
    };
    let e = build_plan(&profile, &fams, &machine, &env, &options, &[]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("big.toml: key `families.\"storage.iops\"`: plans 13824 points, "),
        "{e}"
    );
    assert!(
        e.to_string()
            .ends_with("more than the 10000 points a plan may hold: shorten its lists"),
        "{e}"
    );
    // 8 folders: 256 x (8 + 3 groups) = 2816 points, planned
    let options = RunOptions {
        storage_dirs: (0..8).map(|i| format!("/tmp/d{i}").into()).collect(),
        ..RunOptions::default()
    };
    let plan = build_plan(&profile, &fams, &machine, &env, &options, &[]).unwrap();
    assert!(plan.families.iter().map(|f| f.points.len()).sum::<usize>() > 2000);
}

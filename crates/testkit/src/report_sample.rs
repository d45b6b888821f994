//! Synthetic result files for the report's tests, snapshots and the 50-file benchmark, built
//! in code: what a test needs to control and a real run cannot give on demand (a hostile
//! hostname, a chosen spread, a skipped hugetlb point, a profile version, any number of
//! platforms), where `reports/examples/` holds real runs as they came. Values are plausible,
//! labelled as synthetic in the profile source, and deterministic; the latencies are scaled
//! by architecture only so that the platforms differ. Never shipped: a module of the test
//! support crate (it was `hwsurvey_testkit::report_sample`).

use hwsurvey_model::{CpuSet, Probed, Unknown};
use hwsurvey_probe::run_env::{LoadSnapshot, RunEnv};
use hwsurvey_result::outcome::{Metric, PointOutcome};
use hwsurvey_result::plan::{FamilyPlan, Plan, Point, SkippedPoint};
use hwsurvey_result::Measurement;
use hwsurvey_result::Placement;
use hwsurvey_result::RunSettings;
use hwsurvey_result::{
    ProfileRef, ResultFile, RunStatus, TestResult, Tool, RESULT_SCHEMA, RESULT_SCHEMA_VERSION,
};

/// What differs between the synthetic platforms.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Hostname (may be hostile: tests use `<script>`).
    pub hostname: String,
    /// `x86_64`, `aarch64`, `sparc64`.
    pub arch: String,
    /// Kernel release.
    pub kernel: String,
    /// Online CPUs.
    pub cpus: usize,
    /// Triad bandwidth of one thread, bytes/s; scales with threads up to `cpus`.
    pub triad_one_thread: f64,
    /// Relative spread of the samples (0.02 = +-2%).
    pub spread: f64,
    /// Profile version.
    pub profile_version: u32,
    /// Whether the hugetlb latency point was skipped.
    pub hugetlb_skipped: bool,
}

fn samples(center: f64, spread: f64) -> Vec<f64> {
    [-1.0, -0.5, 0.0, 0.5, 1.0]
        .iter()
        .map(|k| center * (1.0 + k * spread))
        .collect()
}

fn point(family: &str, id: &str, threads: usize, params: serde_json::Value) -> Point {
    Point {
        family: family.into(),
        id: id.into(),
        threads,
        placement: Placement::Compact,
        cpus: (0..threads as u32).collect(),
        params,
        memory_bytes: 1 << 28,
        estimated_s: 1.0,
        landmarks: vec![],
    }
}

/// A complete synthetic result file.
pub fn result(s: &Spec) -> ResultFile {
    let unknown = |d: &str| Unknown::Other { detail: d.into() };
    let mut threads = vec![1usize];
    while threads.last().copied().unwrap_or(1) * 2 <= s.cpus {
        threads.push(threads.last().copied().unwrap_or(1) * 2);
    }
    if threads.last() != Some(&s.cpus) {
        threads.push(s.cpus);
    }
    let mut points = Vec::new();
    let mut tests = Vec::new();
    for &t in &threads {
        let p = point(
            "mem.bandwidth",
            &format!("stream.triad/threads={t}"),
            t,
            // the run's memory working set, as the engine sizes STREAM's arrays
            serde_json::json!({"test": "stream", "kernel": "triad", "working_set_bytes": 1u64 << 28}),
        );
        let bw = s.triad_one_thread * (t as f64).powf(0.8);
        let m = Measurement {
            metrics: vec![Metric::bandwidth_bytes_per_s(samples(bw, s.spread))],
            ..Default::default()
        };
        tests.push(TestResult::new(
            p.clone(),
            PointOutcome::Measured(m),
            "2026-11-29T20:00:00Z".into(),
            1.0,
        ));
        points.push(p);
    }
    let mut lat_points = Vec::new();
    for (ws, ns) in [(1u64 << 20, 4.0), (1 << 28, 110.0)] {
        for mode in ["base", "hugetlb"] {
            let id = format!(
                "chase.random/ws={}/pages={mode}",
                hwsurvey_model::units::format_bytes_binary(ws).replace(' ', "")
            );
            let p = point(
                "mem.latency",
                &id,
                1,
                serde_json::json!({"working_set_bytes": ws, "page_mode": mode}),
            );
            if mode == "hugetlb" && s.hugetlb_skipped {
                tests.push(TestResult::new(
                    p.clone(),
                    PointOutcome::Skipped {
                        reason: "hugetlb pool empty (nr_hugepages = 0)".into(),
                    },
                    "2026-11-29T20:00:00Z".into(),
                    0.0,
                ));
            } else {
                let f = if s.arch == "sparc64" {
                    1.6
                } else if s.arch == "aarch64" {
                    1.2
                } else {
                    1.0
                };
                let m = Measurement {
                    metrics: vec![Metric::latency("latency_ns", samples(ns * f, s.spread))],
                    ..Default::default()
                };
                tests.push(TestResult::new(
                    p.clone(),
                    PointOutcome::Measured(m),
                    "2026-11-29T20:00:00Z".into(),
                    1.0,
                ));
            }
            lat_points.push(p);
        }
    }
    let mut families = vec![
        FamilyPlan {
            family: "mem.bandwidth".into(),
            budget_s: 60.0,
            estimated_s: 10.0,
            points,
            skipped: vec![],
        },
        FamilyPlan {
            family: "mem.latency".into(),
            budget_s: 60.0,
            estimated_s: 10.0,
            points: lat_points,
            skipped: vec![],
        },
    ];
    let mut skipped = Vec::new();
    if s.arch != "x86_64" {
        skipped.push(SkippedPoint {
            family: "raid.parity".into(),
            id: "*".into(),
            params: serde_json::Value::Null,
            reason: format!("unsupported: no vector RAID-6 kernel for {}", s.arch),
        });
        families.push(FamilyPlan {
            family: "raid.parity".into(),
            budget_s: 30.0,
            estimated_s: 0.0,
            points: vec![],
            skipped: skipped.clone(),
        });
    } else {
        let p = point("raid.parity", "gen/threads=1", 1, serde_json::json!({}));
        let m = Measurement {
            metrics: vec![Metric::throughput(
                "bandwidth_bytes_per_s",
                samples(9.0e9, s.spread),
            )],
            ..Default::default()
        };
        tests.push(TestResult::new(
            p.clone(),
            PointOutcome::Measured(m),
            "2026-11-29T20:00:00Z".into(),
            1.0,
        ));
        families.push(FamilyPlan {
            family: "raid.parity".into(),
            budget_s: 30.0,
            estimated_s: 1.0,
            points: vec![p],
            skipped: vec![],
        });
    }
    // A real probe document (of an empty root: every field unknown with its reason), with
    // the synthetic identity set where the probe would have found one.
    let mut machine =
        hwsurvey_probe::probe_machine(&hwsurvey_probe::SysRoot::new("/nonexistent-synthetic-root"));
    let cpus = u32::try_from(s.cpus).expect("a synthetic platform of at most 2^32 CPUs");
    let all: CpuSet = (0..cpus).collect();
    machine.root = "synthetic".into();
    machine.cpu.identity.model_name = Some(format!("Synthetic {} CPU", s.arch));
    let topology = &mut machine.cpu.topology;
    topology.packages = Probed::Known(1);
    topology.cores = Probed::Known(cpus);
    topology.threads = Probed::Known(cpus);
    machine.cpu.possible = Probed::Known(all.clone());
    machine.cpu.present = Probed::Known(all.clone());
    machine.cpu.online = Probed::Known(all);
    machine.pages.base_page_size_bytes =
        Probed::Known(if s.arch == "sparc64" { 8192 } else { 4096 });
    ResultFile {
        schema: RESULT_SCHEMA.into(),
        schema_version: RESULT_SCHEMA_VERSION,
        status: RunStatus::Complete,
        tool: Tool {
            version: "0.1.0".into(),
            git_revision: "synthetic".into(),
            arch: s.arch.clone(),
        },
        profile: ProfileRef {
            id: "standard".into(),
            version: s.profile_version,
            source: "synthetic (hwsurvey_testkit::report_sample)".into(),
            run: RunSettings {
                placement: Placement::Compact,
                sample_min_s: 0.1,
                sample_min_clock_ticks: 1000,
                warmup_s: 0.1,
                samples_min: 5,
                samples_max: 20,
                target_cv: 0.03,
                memory_fraction: 0.5,
                memory_llc_multiple: 4.0,
                memory_min_working_set_bytes: 1 << 26,
                memory_max_working_set_bytes: None,
                oversubscription_factor: 2,
                budget_s: None,
            },
            fingerprint: None,
            point_settings: None,
        },
        started_at: "2026-11-29T20:00:00Z".into(),
        finished_at: Some("2026-11-29T20:10:00Z".into()),
        machine,
        environment: RunEnv {
            arch: s.arch.clone(),
            hostname: Probed::Known(s.hostname.clone()),
            kernel_release: Probed::Known(s.kernel.clone()),
            usable_cpus: (0..s.cpus as u32).collect::<CpuSet>(),
            usable_cpus_source: "synthetic".into(),
            cpus: vec![],
            llc: Probed::Unknown(unknown("synthetic")),
            mem_available_bytes: Probed::Known(8 << 30),
            cgroup_memory_limit_bytes: Probed::Known(None),
            memory_limit: None,
            cpu_quota: None,
            base_page_size_bytes: Probed::Known(4096),
            huge_pools: vec![],
            thp_enabled: Probed::Known("madvise".into()),
            governor: if s.arch == "x86_64" {
                Probed::Known("performance".into())
            } else {
                Probed::Unknown(Unknown::Missing {
                    path: "/sys/devices/system/cpu/cpufreq".into(),
                })
            },
            smt_control: Probed::Unknown(unknown("synthetic")),
            numa_balancing: Probed::Unknown(unknown("synthetic")),
        },
        load_before: LoadSnapshot {
            load_average: Probed::Known([0.1, 0.1, 0.1]),
            mem_available_bytes: Probed::Known(8 << 30),
            clocksource: Probed::Unknown(unknown("synthetic")),
        },
        load_after: None,
        plan: Plan {
            profile_id: "standard".into(),
            profile_version: s.profile_version,
            usable_cpus: s.cpus,
            thread_counts: threads,
            landmarks: vec![],
            llc_total_bytes: None,
            memory_working_set_bytes: 1 << 28,
            memory_cap_bytes: None,
            memory_cap_source: None,
            cpu_quota: None,
            fixed_work: None,
            families,
        },
        tests,
        skipped,
        qualification: None,
        family_times: vec![],
        time_limit: None,
        clocksource_changes: vec![],
        energy: None,
        watch: None,
        soak: None,
    }
}

/// The three standard synthetic platforms: x86_64 (baseline), aarch64, sparc64.
pub fn three() -> Vec<ResultFile> {
    let spec = |host: &str, arch: &str, kernel: &str, cpus: usize, bw: f64, spread: f64| Spec {
        hostname: host.into(),
        arch: arch.into(),
        kernel: kernel.into(),
        cpus,
        triad_one_thread: bw,
        spread,
        profile_version: 1,
        hugetlb_skipped: arch != "x86_64",
    };
    vec![
        result(&spec("xeon", "x86_64", "6.1.0-18-amd64", 4, 12e9, 0.02)),
        result(&spec("tx2", "aarch64", "5.4.0-65-generic", 8, 8e9, 0.02)),
        result(&spec("t2000", "sparc64", "2.6.32", 4, 2e9, 0.02)),
    ]
}

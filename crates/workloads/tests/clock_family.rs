//! cpu.clock: the add chains execute every add (their sums), the chain of this build is not
//! folded by the compiler (a folded chain reads thousands of GHz), the standard profile plans
//! the 1-thread, package-cores and all-CPU points inside the 2 s the issue allows, and a run
//! stores the clock with its method and its side sources (cpufreq, APERF/MPERF) or their
//! reasons.

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::sync::atomic::AtomicBool;

use hwsurvey_engine::env::RunEnv;
use hwsurvey_engine::result::Tool;
use hwsurvey_engine::run::{run_with_cancel, RunRequest, Silent};
use hwsurvey_engine::{build_plan, Profile, RunOptions};
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_testkit::ALL_FAMILIES;
use hwsurvey_workloads::clock::{self, add_chain, expected, portable, ADDS_PER_BLOCK};
use hwsurvey_workloads::families::{cpu_clock::CpuClock, DynFamily};

fn load(name: &str) -> Profile {
    let profile = Profile::load(name, &ALL_FAMILIES).unwrap();
    CpuClock
        .check_section(
            profile
                .families
                .get("cpu.clock")
                .expect("cpu.clock section"),
        )
        .unwrap();
    profile
}

/// Every chain returns seed + blocks x 64 x step (wrapping): 0 blocks, 1 block, a wrap.
#[test]
fn chains_execute_every_add() {
    for (blocks, seed, step) in [
        (0u64, 5u64, 7u64),
        (1, 5, 7),
        (1000, u64::MAX - 3, 0x0123_4567_89ab_cdef),
    ] {
        let want = expected(blocks, seed, step);
        assert_eq!(
            add_chain(blocks, seed, step),
            want,
            "native, {blocks} blocks"
        );
        assert_eq!(
            portable::add_chain(blocks, seed, step),
            want,
            "portable, {blocks} blocks"
        );
    }
    assert_eq!(expected(1, 0, 1), ADDS_PER_BLOCK);
    // the build's method: assembly (a clock) on x86_64 and aarch64, portable elsewhere
    let m = clock::method();
    let asm = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));
    assert_eq!(m.reliable, asm, "{m:?}");
    assert_eq!(m.caveat.is_none(), asm, "{m:?}");
    assert!(!portable::METHOD.reliable && portable::METHOD.caveat.is_some());
}

/// Adds per second of this build's chain, the best of five ~20 ms runs: under 10 GHz on any
/// machine, emulated or not (a chain the compiler folded into one multiply would read
/// thousands of GHz; one that lost its adds fails the sum). Where cpufreq gives cpuinfo_max_freq, a clock
/// chain cannot run faster than that (+5% for the timer): checked where it exists.
#[test]
fn the_chain_is_not_folded() {
    let blocks = clock::calibrate(0.02).unwrap();
    let best = (0..5)
        .map(|_| clock::timed(blocks).unwrap().hz())
        .fold(0.0, f64::max);
    assert!(best > 1e6 && best < 10e9, "{best} adds/s");
    // the test thread may run on any CPU: compare with the largest cpuinfo_max_freq
    let root = SysRoot::live();
    let max_khz = (0..env_cpus())
        .filter_map(|c| hwsurvey_probe::freq::cpufreq_khz(&root, c, "cpuinfo_max_freq").ok())
        .max();
    if let (true, Some(max)) = (clock::method().reliable, max_khz) {
        assert!(
            best <= max as f64 * 1e3 * 1.05,
            "{best} adds/s over {max} kHz"
        );
    }
}

fn env_cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// The standard plan: a 1-thread point and an all-CPU point (one point when they are the
/// same CPUs), each pinned to its CPUs, estimated at under 2 s together.
#[test]
fn standard_plan_of_cpu_clock() {
    let profile = load("standard");
    let root = SysRoot::live();
    let machine = probe_machine(&root);
    let env = RunEnv::read(&root);
    let fams: Vec<&dyn DynFamily> = vec![&CpuClock];
    let plan = build_plan(&profile, &fams, &machine, &env, &RunOptions::default(), &[]).unwrap();
    let fp = plan
        .families
        .iter()
        .find(|f| f.family == "cpu.clock")
        .unwrap();
    let n = env.usable_cpus.len();
    assert_eq!(fp.points[0].id, "add_chain/threads=1");
    assert_eq!(fp.points[0].cpus.len(), 1);
    let all = fp.points.last().unwrap();
    assert_eq!(all.threads, n, "{:?}", fp.points);
    assert_eq!(all.cpus.len(), n);
    assert!(all.landmarks.iter().any(|l| l == "all"), "{all:?}");
    assert_eq!(
        all.params["sets"].as_array().unwrap().last().unwrap(),
        "all_cpus"
    );
    // every landmark a point names is one of the plan's (ladder_fixtures holds it on captures)
    for p in &fp.points {
        for name in &p.landmarks {
            assert!(plan.landmarks.iter().any(|m| &m.name == name), "{p:?}");
        }
    }
    let total: f64 = fp.points.iter().map(|p| p.estimated_s).sum();
    assert!(
        total < 2.0,
        "estimated {total} s for {} points",
        fp.points.len()
    );
}

/// A run of cpu.clock alone (quick profile): every point measured with `clock_hz` samples,
/// the method and per-CPU figures stored; cpufreq "read" exactly where the CPU has
/// `scaling_cur_freq`, else its reason naming the file.
#[test]
fn a_run_stores_the_clock_and_its_sources() {
    let profile = load("quick");
    let root = SysRoot::live();
    let machine = probe_machine(&root);
    let env = RunEnv::read(&root);
    let options = RunOptions::default();
    let fams: Vec<&dyn DynFamily> = vec![&CpuClock];
    let plan = build_plan(&profile, &fams, &machine, &env, &options, &[]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("clock.json");
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
    run_with_cancel(&req, &mut Silent, &AtomicBool::new(false)).unwrap();
    // the file as compare and qualify read it: every metric's unit is one the loader knows
    let file = hwsurvey_engine::result::load(&out).unwrap_or_else(|e| panic!("{e}"));
    let tests: Vec<_> = file
        .tests
        .iter()
        .filter(|t| t.point.family == "cpu.clock")
        .collect();
    assert!(!tests.is_empty());
    for t in tests {
        assert_eq!(
            t.outcome,
            hwsurvey_engine::result::Outcome::Measured,
            "{}: {:?}",
            t.point.id,
            t.reason
        );
        let m = &t.metrics[0];
        assert_eq!(m.name, "clock_hz");
        assert!(m.samples.len() >= 2, "{:?}", m.samples);
        assert!(
            m.samples.iter().all(|v| *v > 1e6 && *v < 10e9),
            "{:?}",
            m.samples
        );
        assert_eq!(t.details["method"], clock::method().name);
        assert_eq!(t.details["reliable"], clock::method().reliable);
        let per_cpu = t.details["per_cpu"].as_array().unwrap();
        assert_eq!(per_cpu.len(), t.point.threads, "{per_cpu:?}");
        let cpu0 = t.point.cpus[0];
        let has = root
            .read(&format!(
                "/sys/devices/system/cpu/cpu{cpu0}/cpufreq/scaling_cur_freq"
            ))
            .is_ok();
        let note = t.details["cpufreq"].as_str().unwrap();
        if has {
            assert_eq!(note, "read");
            assert!(t.metrics.iter().any(|m| m.name == "cpufreq_cur_hz"));
        } else {
            assert!(
                note.starts_with("unavailable: ") && note.contains("scaling_cur_freq"),
                "{note}"
            );
        }
        let aperf = t.details["aperf_mperf"].as_str().unwrap();
        assert!(
            aperf == "read" || aperf.starts_with("unavailable: "),
            "{aperf}"
        );
    }
}

//! The hardware watch end to end: the engine's run loop over a synthetic root whose
//! EDAC, AER and thermal throttle counters and kernel log move during chosen points writes each
//! point's watch into its record; the stored qualification fails or warns naming the DIMM
//! slot, the PCIe device, the CPU bank and the point; compare marks the affected points and
//! counts none of them as a win or a loss; fleet names the host by them; a soak repeats the
//! plan and keeps every round's figures; `hwsurvey run --soak` prints the rounds and the
//! verdicts.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hwsurvey_engine::family::{DynFamily, Family};
use hwsurvey_engine::plan::{FamilyPlan, FamilyPoints, Plan, PlanInput, Point, RunOptions};
use hwsurvey_engine::profile::{CheckedParams, Checker, Profile, ProfileError};
use hwsurvey_engine::run::{run_with_cancel, soak, RunRequest, Silent};
use hwsurvey_engine::runner::RunContext;
use hwsurvey_engine::{Measurement, Metric, PointOutcome};
use hwsurvey_probe::run_env::{CpuPlace, ReadRunEnv as _, RunEnv};
use hwsurvey_probe::SysRoot;
use hwsurvey_qualify::stored::RunQualifier;
use hwsurvey_result::qualification::Verdict;
use hwsurvey_result::{ResultFile, Tool};
use hwsurvey_testkit::watch as tree;

use super::hwsurvey;

/// What a point does to the hardware of the tree while it runs.
#[derive(Clone, Copy, PartialEq)]
enum Happens {
    Nothing,
    /// 2,314 corrected errors on mc0/dimm1 (slot DIMM_P0_B0).
    CorrectedOnDimm,
    /// Package 0 throttles (12 events, on CPU 0's counter).
    Throttle,
    /// A machine check on CPU 1 bank 4, and an uncorrectable AER error on the NVMe drive
    /// 0000:03:00.0.
    MachineCheckAndAer,
}

/// A family that reports fixed figures and does `what(point id)` to the tree's counters.
struct Fake {
    id: &'static str,
    root: PathBuf,
    what: fn(&str) -> Happens,
    value: f64,
}

#[derive(serde::Deserialize)]
struct NoParams {}

impl CheckedParams for NoParams {
    fn check(&self, _: &Checker<'_>) -> Result<(), ProfileError> {
        Ok(())
    }
}

impl Family for Fake {
    type Params = NoParams;
    type PointParams = NoParams;
    fn id(&self) -> &'static str {
        self.id
    }
    fn describe(&self) -> &'static str {
        "moves the hardware watch's counters"
    }
    fn plan(&self, _: NoParams, _: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        Ok(FamilyPoints::default())
    }
    fn run_point(&self, _: NoParams, p: &Point, _: &RunContext<'_>) -> PointOutcome {
        let root = &self.root;
        match (self.what)(&p.id) {
            Happens::Nothing => {}
            Happens::CorrectedOnDimm => tree::add_edac_errors(root, 0, 1, 2314, 0),
            Happens::Throttle => tree::add_throttle(root, 0, "package", 12),
            Happens::MachineCheckAndAer => {
                tree::log(
                    root,
                    &["mce: [Hardware Error]: CPU 1: Machine Check: 0 Bank 4: bd000000000000c0"],
                );
                tree::aer_files(root, "0000:03:00.0", &[], &[("CmpltTO", 1)], &[]);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
        PointOutcome::Measured(Measurement {
            metrics: vec![Metric::throughput(
                "bandwidth_bytes_per_s",
                vec![self.value, self.value * 1.001, self.value * 0.999],
            )],
            pins: vec![],
            details: Default::default(),
        })
    }
}

fn point(family: &str, id: &str) -> Point {
    serde_json::from_value(serde_json::json!({
        "family": family, "id": id, "threads": 1, "placement": "compact",
        "cpus": [0], "params": {}, "memory_bytes": 0, "estimated_s": 0.02
    }))
    .unwrap()
}

fn plan() -> Plan {
    let fam = |family: &str, ids: &[&str]| FamilyPlan {
        family: family.into(),
        budget_s: 1.0,
        estimated_s: 0.1,
        points: ids.iter().map(|id| point(family, id)).collect(),
        skipped: vec![],
    };
    Plan {
        profile_id: "standard".into(),
        profile_version: 1,
        usable_cpus: 2,
        thread_counts: vec![1],
        landmarks: vec![],
        llc_total_bytes: None,
        memory_working_set_bytes: 1 << 20,
        memory_cap_bytes: None,
        memory_cap_source: None,
        cpu_quota: None,
        fixed_work: None,
        families: vec![
            fam(
                "mem.bandwidth",
                &["stream.copy/threads=1", "stream.triad/threads=1"],
            ),
            fam("cpu.scaling", &["integer/threads=1", "integer/threads=2"]),
        ],
    }
}

fn profile() -> Profile {
    let text = "format_version = 1\nid = \"standard\"\nversion = 1\ndescription = \"d\"\n[run]\nplacement = \"compact\"\nsample_min_s = 0.01\nsample_min_clock_ticks = 20\nwarmup_s = 0.0\nsamples_min = 2\nsamples_max = 3\ntarget_cv = 0.05\nmemory_fraction = 0.25\nmemory_llc_multiple = 1.0\nmemory_min_working_set_bytes = 1048576\noversubscription_factor = 2\n";
    Profile::parse("t.toml", text, &[]).unwrap()
}

/// The tree: the R181's DIMMs (ghes labels), the seed PCIe tree with AER statistics, thermal
/// throttle counters of CPUs 0 and 1 (one package, two cores) and a kernel log.
fn tree_root(dir: &Path) {
    tree::edac_tree(dir, &tree::R181_GHES);
    hwsurvey_testkit::pcie_switch_tree(dir);
    tree::aer_files(dir, "0000:03:00.0", &[], &[], &[]);
    tree::thermal_throttle_tree(dir, &[0, 1], 0);
    tree::kmsg_file(dir);
}

/// The R181's SMBIOS memory records, from its real `dmidecode` (read in place; the test
/// fails naming `../shared` when it is absent).
fn machine(root: &SysRoot) -> hwsurvey_probe::Machine {
    let rel = "aarch64-cavium-thunderx2-gigabyte-r181-2s/dmidecode-memory.txt";
    let fx = hwsurvey_testkit::fixtures()
        .unwrap_or_else(|| panic!("../shared/fixtures not found: this test reads {rel} there"));
    let text = std::fs::read_to_string(fx.join(rel)).unwrap();
    let mut m = hwsurvey_probe::probe_machine(root);
    m.memory = hwsurvey_probe::memory::probe_with_dmidecode_text(root, &text);
    m
}

fn env(root: &SysRoot) -> RunEnv {
    let mut env = RunEnv::read(root);
    env.cpus = (0..2)
        .map(|cpu| CpuPlace {
            cpu,
            package: Some(0),
            core: Some(i64::from(cpu)),
            node: Some(0),
        })
        .collect();
    env
}

/// Runs the plan over the tree with `what` per point id, the built-in qualification stored.
fn watched_run(
    dir: &Path,
    what: fn(&str) -> Happens,
    value: f64,
    soak_for: Option<Duration>,
) -> ResultFile {
    let root = SysRoot::new(dir);
    let machine = machine(&root);
    let env = env(&root);
    let (profile, plan) = (profile(), plan());
    let mem = Fake {
        id: "mem.bandwidth",
        root: dir.to_path_buf(),
        what,
        value,
    };
    let cpu = Fake {
        id: "cpu.scaling",
        root: dir.to_path_buf(),
        what,
        value,
    };
    let families: [&dyn DynFamily; 2] = [&mem, &cpu];
    let qualifier = RunQualifier::builtin(&machine, &[]);
    let out = dir.join("r.json");
    let req = RunRequest {
        profile: &profile,
        plan: &plan,
        families: &families,
        machine: &machine,
        env: &env,
        options: &RunOptions::default(),
        output: &out,
        root: &root,
        tool: Tool::this_build(),
        time_limit: None,
        qualifier: Some(&qualifier),
        clock: Some(&hwsurvey_workloads::watch_clock::AddChain),
    };
    let cancel = AtomicBool::new(false);
    match soak_for {
        Some(d) => soak(&req, d, &mut Silent, &cancel).unwrap(),
        None => run_with_cancel(&req, &mut Silent, &cancel).unwrap(),
    };
    hwsurvey_result::load(&out).unwrap()
}

fn finding<'a>(file: &'a ResultFile, rule: &str) -> &'a hwsurvey_result::qualification::Finding {
    file.qualification
        .as_ref()
        .unwrap()
        .findings
        .iter()
        .find(|f| f.rule == rule)
        .unwrap_or_else(|| panic!("no {rule} finding"))
}

fn what_happens(id: &str) -> Happens {
    match id {
        "stream.triad/threads=1" => Happens::CorrectedOnDimm,
        "integer/threads=2" => Happens::Throttle,
        _ => Happens::Nothing,
    }
}

fn machine_check(id: &str) -> Happens {
    if id == "stream.copy/threads=1" {
        Happens::MachineCheckAndAer
    } else {
        Happens::Nothing
    }
}

#[test]
fn corrected_errors_on_one_dimm_and_throttling_are_named_and_marked() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    tree_root(dir.path());
    let file = watched_run(dir.path(), what_happens, 10e9, None);
    // said once: what is watched, the DIMMs and their slots, the clock at start and end
    let w = file.watch.as_ref().expect("watch");
    assert!(w
        .source(hwsurvey_probe::watch::WatchSource::Edac)
        .unwrap()
        .unavailable
        .is_none());
    assert_eq!(w.dimms[1].slot.as_deref(), Some("DIMM_P0_B0"));
    let (start, end) = (
        w.clock.start.as_ref().unwrap(),
        w.clock.end.as_ref().unwrap(),
    );
    assert!(start.clock_hz > 0.0 && end.clock_hz > 0.0, "{:?}", w.clock);
    assert_eq!(start.cpu, 0);
    // the deltas, against the points they happened in
    let by_id = |id: &str| file.tests.iter().find(|t| t.point.id == id).unwrap();
    let triad = by_id("stream.triad/threads=1").watch.as_ref().unwrap();
    assert_eq!(triad.edac.len(), 1);
    assert_eq!(triad.edac[0].words(), "DIMM_P0_B0 (mc0/dimm1)");
    assert_eq!(triad.edac[0].corrected, 2314);
    assert_eq!(
        by_id("integer/threads=2").watch.as_ref().unwrap().throttle[0].events,
        12
    );
    for id in ["stream.copy/threads=1", "integer/threads=1"] {
        assert!(by_id(id).watch.as_ref().unwrap().marks().is_empty(), "{id}");
    }
    let totals = w.totals.as_ref().unwrap();
    assert_eq!(totals.edac[0].corrected, 2314);
    // qualify: a warning naming the slot and the point; throttling warned with the point
    let corrected = finding(&file, "watch.corrected");
    assert_eq!(corrected.verdict, Verdict::Warn, "{corrected:?}");
    assert!(
        corrected.summary.starts_with(
            "2,314 corrected errors on DIMM_P0_B0 (mc0/dimm1) (2,314 during mem.bandwidth \
             stream.triad/threads=1;"
        ),
        "{}",
        corrected.summary
    );
    let throttle = finding(&file, "watch.throttle");
    assert_eq!(throttle.verdict, Verdict::Warn);
    assert!(
        throttle
            .summary
            .contains("package 0 (CPU 0): 12 events during cpu.scaling integer/threads=2"),
        "{}",
        throttle.summary
    );
    assert_eq!(finding(&file, "watch.errors").verdict, Verdict::Pass);
    assert_eq!(finding(&file, "watch.link").verdict, Verdict::Pass);

    // compare against a sound run of the same machine, 10 % faster: the affected points are
    // marked and are no win or loss; the sound points are
    let mut sound = file.clone();
    sound.environment.hostname = hwsurvey_model::Probed::Known("sound".into());
    for t in &mut sound.tests {
        t.watch = Some(Default::default());
        for m in &mut t.metrics {
            for s in &mut m.samples {
                *s *= 1.1;
            }
            *m = hwsurvey_result::MetricResult::from_metric(Metric::throughput(
                m.name.clone(),
                m.samples.clone(),
            ));
        }
    }
    let inputs = vec![
        hwsurvey_report::Input {
            label: "sound".into(),
            file: sound,
        },
        hwsurvey_report::Input {
            label: "watched".into(),
            file: file.clone(),
        },
    ];
    let cmp = hwsurvey_report::compare(&inputs, Some("sound"), false).unwrap();
    let table = |id: &str| cmp.tables.iter().find(|t| t.id == id).unwrap();
    let rel = |t: &str, row: &str| {
        let r = table(t).rows.iter().find(|r| r.label == row).unwrap();
        r.cells.last().unwrap().note.clone().unwrap()
    };
    assert_eq!(
        rel("family:mem.bandwidth", "stream.triad/threads=1"),
        "hardware errors during this point"
    );
    assert_eq!(
        rel("family:cpu.scaling", "integer/threads=2"),
        "throttled during this point"
    );
    assert_eq!(
        rel("family:mem.bandwidth", "stream.copy/threads=1"),
        "-9% worse"
    );
    let text = hwsurvey_report::render(&cmp, hwsurvey_report::Format::Markdown, &[]);
    assert!(text.contains("throttled during this point"), "{text}");

    // fleet names the host by it
    let lines = file.watch_lines();
    assert!(
        lines.contains(
            &"2,314 corrected errors on DIMM_P0_B0 (mc0/dimm1) during mem.bandwidth".to_string()
        ),
        "{lines:?}"
    );
    assert!(
        lines.contains(
            &"throttled during cpu.scaling (1 of its points; package 0: 12 events)".to_string()
        ),
        "{lines:?}"
    );
}

#[test]
fn a_machine_check_and_an_uncorrectable_aer_error_fail_the_run_naming_bank_device_and_point() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    tree_root(dir.path());
    let file = watched_run(dir.path(), machine_check, 10e9, None);
    let copy = file.tests[0].watch.as_ref().unwrap();
    assert_eq!(copy.aer[0].device, "0000:03:00.0");
    assert_eq!(
        (copy.kernel_log[0].cpu, copy.kernel_log[0].bank),
        (Some(1), Some(4))
    );
    let errors = finding(&file, "watch.errors");
    assert_eq!(errors.verdict, Verdict::Fail);
    assert!(
        errors.summary.starts_with("2 uncorrected errors or machine checks during the run: 1 uncorrectable non-fatal AER error on 0000:03:00.0"),
        "{}",
        errors.summary
    );
    assert!(
        errors.summary.contains(
            "machine check on CPU 1 bank 4 (uncorrected): mce: [Hardware Error]: CPU 1: Machine \
             Check: 0 Bank 4: bd000000000000c0 during mem.bandwidth stream.copy/threads=1"
        ),
        "{}",
        errors.summary
    );
    // the exit status of `hwsurvey qualify r.json`: 2, a failure
    let out = hwsurvey()
        .arg("qualify")
        .arg(dir.path().join("r.json"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_soak_keeps_every_round_with_its_watch() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    tree_root(dir.path());
    fn every_triad(id: &str) -> Happens {
        if id == "stream.triad/threads=1" {
            Happens::CorrectedOnDimm
        } else {
            Happens::Nothing
        }
    }
    let file = watched_run(
        dir.path(),
        every_triad,
        10e9,
        Some(Duration::from_millis(300)),
    );
    let soak = file.soak.as_ref().unwrap();
    assert!(soak.rounds.len() >= 2, "{} rounds", soak.rounds.len());
    assert_eq!(file.tests.len(), 4, "round 1 is the tests");
    for r in &soak.rounds {
        assert_eq!(r.points.len(), 4);
        assert_eq!(r.points[0].median, Some(10e9));
    }
    // round 1's watch is its tests'; later rounds keep theirs
    assert!(soak.rounds[0].points[1].watch.is_none());
    assert_eq!(
        soak.rounds[1].points[1].watch.as_ref().unwrap().edac[0].corrected,
        2314
    );
    let n = soak.rounds.len() as u64;
    assert_eq!(
        file.watch.as_ref().unwrap().totals.as_ref().unwrap().edac[0].corrected,
        2314 * n
    );
    let lines = file.watch_lines();
    assert!(
        lines[0].starts_with(&format!(
            "{} corrected errors on DIMM_P0_B0 (mc0/dimm1) during mem.bandwidth",
            hwsurvey_result::watch::thousands(2314 * n)
        )),
        "{lines:?}"
    );
    let text = hwsurvey_report::soak::round_text(&soak.rounds[1], &file);
    assert!(text.starts_with("round 2 ("), "{text}");
    assert!(text.contains("1.00x round 1"), "{text}");
    assert!(text.contains("hardware errors during this point"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}

/// `hwsurvey run --soak 1s --profile quick`: the subset's rounds are printed, then the soak's
/// drift and the verdicts; the file holds the rounds.
#[test]
fn run_soak_prints_each_round_and_the_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("soak.json");
    let out = hwsurvey()
        .args(["run", "--profile", "quick", "--soak", "1s", "-o"])
        .arg(&out_file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("round 1 ("), "{stdout}");
    assert!(
        stdout.contains("  mem.bandwidth\n    stream.copy/threads=1"),
        "{stdout}"
    );
    assert!(stdout.contains("soak: "), "{stdout}");
    assert!(stdout.contains("watch.errors"), "{stdout}");
    let file = hwsurvey_result::load(&out_file).unwrap();
    let soak = file.soak.as_ref().unwrap();
    let mut families = soak.families.clone();
    families.sort();
    assert_eq!(families, ["cpu.clock", "cpu.scaling", "mem.bandwidth"]);
    assert!(file
        .tests
        .iter()
        .all(|t| hwsurvey_workloads::soak::in_subset(&t.point.family, &t.point.id)));
}

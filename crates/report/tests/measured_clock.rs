//! The measured clock in the report: the machine line and the per-GHz views take the clock
//! cpu.clock measured where cpufreq is absent (marked "measured"), never the portable chain's
//! adds per second.

use std::path::PathBuf;

use hwsurvey_report::headline::MACHINES_ID;
use hwsurvey_report::{compare, inputs_with_default_labels, Comparison, Table};
use hwsurvey_result::outcome::{Measurement, Metric, PointOutcome};
use hwsurvey_result::{ResultFile, TestResult};
use serde_json::json;

fn example(name: &str) -> ResultFile {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/examples")
        .join(name);
    hwsurvey_result::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The VM example (no cpufreq) without its cpu.clock points (3.76 GHz at 1 thread, 3.74 GHz
/// at 2): as a run without the family.
fn without_clock() -> ResultFile {
    let mut f = example("vm-x86_64-standard.json");
    let before = f.tests.len();
    f.tests.retain(|t| t.point.family != "cpu.clock");
    assert_eq!(
        before - f.tests.len(),
        2,
        "the example's two cpu.clock points"
    );
    f
}

/// The VM example (no cpufreq) with one cpu.clock point, at 1 thread: medians 3.1 GHz.
fn with_clock(reliable: bool) -> ResultFile {
    let mut f = without_clock();
    let mut point = f.tests[0].point.clone();
    point.family = "cpu.clock".into();
    point.id = "add_chain/threads=1".into();
    point.threads = 1;
    point.cpus = vec![0];
    point.params = json!({"threads": 1, "sets": ["one_cpu"], "sample_s": 0.03, "warmup_s": 0.02});
    let m = Measurement {
        metrics: vec![Metric::throughput("clock_hz", vec![3.0e9, 3.1e9, 3.2e9])],
        ..Default::default()
    }
    .detail(
        "method",
        if reliable {
            "asm_add_chain_x86_64"
        } else {
            "portable_add_chain"
        },
    )
    .detail("reliable", reliable)
    .detail("caveat", (!reliable).then_some("portable Rust add chain"));
    f.tests.push(TestResult::new(
        point,
        PointOutcome::Measured(m),
        "2026-12-04T00:00:00Z".into(),
        0.2,
    ));
    f
}

fn table<'a>(c: &'a Comparison, id: &str) -> &'a Table {
    c.tables.iter().find(|t| t.id == id).unwrap()
}

fn machine_line(f: ResultFile) -> String {
    let c = compare(&inputs_with_default_labels(vec![f]), None, true).unwrap();
    table(&c, MACHINES_ID).rows[0].cells[0].text.clone()
}

#[test]
fn the_machine_line_shows_the_measured_clock_where_cpufreq_is_absent() {
    // the example as run: no cpufreq, cpu.clock measured 3.76 GHz at 1 thread
    let run = machine_line(example("vm-x86_64-standard.json"));
    assert!(run.contains(", 3.76 GHz measured ["), "{run}");
    // without the family: unknown
    let plain = machine_line(without_clock());
    assert!(plain.contains("clock unknown ["), "{plain}");
    let measured = machine_line(with_clock(true));
    // (its note says it against the TSC the probe read on this Xeon)
    assert!(measured.contains(", 3.10 GHz measured ["), "{measured}");
    // adds per second of the portable chain is no clock
    let portable = machine_line(with_clock(false));
    assert!(
        portable.contains("clock unknown [") && !portable.contains("measured"),
        "{portable}"
    );
}

#[test]
fn per_ghz_views_divide_by_the_measured_clock_and_say_so() {
    let f = with_clock(true);
    let c = compare(&inputs_with_default_labels(vec![f]), None, true).unwrap();
    let t = table(&c, "normalised");
    let per_core = t
        .rows
        .iter()
        .find(|r| r.label == "cpu.scaling all-core best per core")
        .expect("cpu.scaling per core row");
    let per_ghz = t
        .rows
        .iter()
        .find(|r| r.label == "cpu.scaling all-core best per GHz")
        .unwrap();
    let core = per_core.cells[0].value.expect("per core figure");
    let ghz = per_ghz.cells[0]
        .value
        .expect("per GHz figure with a measured clock");
    // cores / GHz: the VM example has 2 cores, the clock is 3.1 GHz
    assert!((ghz - core * 2.0 / 3.1).abs() < 1e-6 * ghz, "{core} {ghz}");
    assert_eq!(per_ghz.cells[0].note.as_deref(), Some("measured clock"));
    // the clock family itself has no per-core or per-GHz row
    assert!(!t.rows.iter().any(|r| r.label.starts_with("cpu.clock")));
}

/// A measured cpu.clock point (the x86 assembly chain) whose samples lie 1 % about `ghz`.
fn clock_test(point: hwsurvey_result::Point, ghz: f64) -> TestResult {
    let m = Measurement {
        metrics: vec![Metric::throughput(
            "clock_hz",
            vec![ghz * 0.99e9, ghz * 1e9, ghz * 1.01e9],
        )],
        ..Default::default()
    }
    .detail("method", "asm_add_chain_x86_64")
    .detail("reliable", true);
    TestResult::new(
        point,
        PointOutcome::Measured(m),
        "2026-12-06T01:40:00Z".into(),
        0.2,
    )
}

/// The VM example with a measured clock of `ghz` at 1 thread and the nominal clock the probe
/// reads from the Firecracker guest capture's /proc/cpuinfo (bogomips 5192.24: the TSC's
/// 2596.12 MHz, the 2-vCPU EPYC guest the example ran on), through the probe's own reader.
fn with_nominal(ghz: f64) -> Option<ResultFile> {
    let fixtures = hwsurvey_testkit::fixtures()?;
    let archive = fixtures
        .join("x86_64-firecracker-guest-epyc-2vcpu-thp-mthp/firecracker-guest-capture.tar.gz");
    let text = hwsurvey_testkit::archive_text(&archive, "proc/cpuinfo").expect("cpuinfo");
    let ci = hwsurvey_probe::cpu::cpuinfo::parse_cpuinfo(&text);
    let nominal = hwsurvey_probe::cpu::nominal::nominal_clock(
        hwsurvey_probe::cpu::Arch::X86_64,
        &hwsurvey_model::Probed::Unknown(hwsurvey_model::Unknown::Other {
            detail: "not in a capture".into(),
        }),
        Some(&ci),
    );
    let mut f = with_clock(true);
    let last = f.tests.len() - 1;
    f.tests[last] = clock_test(f.tests[last].point.clone(), ghz);
    f.machine.cpu.nominal_clock = nominal;
    Some(f)
}

/// Where the measured clock is more than 5 % from the nominal clock the
/// probe knows, the machine line says so against it (turbo above, a cap or the host below);
/// within 5 % it says nothing more.
#[test]
fn the_measured_clock_is_said_against_the_nominal_clock() {
    let Some(turbo) = with_nominal(3.64) else {
        return;
    };
    let c = compare(&inputs_with_default_labels(vec![turbo]), None, true).unwrap();
    let t = table(&c, MACHINES_ID);
    let line = &t.rows[0].cells[0].text;
    let mark = line
        .split(", 3.64 GHz measured [")
        .nth(1)
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("{line}"));
    let note = t
        .notes
        .iter()
        .find(|n| n.starts_with(&format!("[{mark}] ")))
        .unwrap_or_else(|| panic!("{:?}", t.notes));
    assert_eq!(
        note,
        &format!(
            "[{mark}] measured 3.64 GHz at 1 thread, 1.40x the TSC's 2.60 GHz (/proc/cpuinfo \
             bogomips 5192.24 / 2, the kernel timing its delay loop by the TSC): turbo or the \
             host's clock"
        )
    );
    let near = machine_line(with_nominal(2.65).unwrap());
    assert!(near.contains(", 2.65 GHz measured, "), "{near}");
}

/// "A thread ladder shows the clock per thread count": the scaling summary
/// gives cpu.clock's clock at each thread count and the most threads' over 1 thread's, never a
/// parallel efficiency (a clock is each worker's own, averaged: 2 workers at 3.71 GHz read
/// "52 %" as a throughput). The medians this 2-vCPU VM measured (2026-12-06, `hwsurvey run
/// --profile standard --only cpu.clock`): 3.59 GHz at 1 thread, 3.71 GHz at 2.
#[test]
fn the_scaling_summary_shows_the_clock_per_thread_count() {
    let mut f = with_clock(true);
    let last = f.tests.len() - 1;
    let one = f.tests[last].clone();
    for (i, (threads, ghz)) in [(1usize, 3.592), (2, 3.715)].into_iter().enumerate() {
        let mut point = one.point.clone();
        point.id = format!("add_chain/threads={threads}");
        point.threads = threads;
        point.cpus = (0..threads as u32).collect();
        let t = clock_test(point, ghz);
        if i == 0 {
            f.tests[last] = t;
        } else {
            f.tests.push(t);
        }
    }
    let c = compare(&inputs_with_default_labels(vec![f]), None, true).unwrap();
    let t = table(&c, hwsurvey_report::summary::SCALING_ID);
    let row = t
        .rows
        .iter()
        .find(|r| r.label == "cpu.clock add_chain")
        .unwrap_or_else(|| panic!("{:?}", t.rows));
    assert_eq!(row.cells[0].text, "3.59 GHz @1, 3.71 GHz @2: 1.03x");
    assert!((row.cells[0].value.unwrap() - 3.715e9).abs() < 1.0);
    assert!(
        t.notes.iter().any(|n| n.starts_with("a clock (cpu.clock")),
        "{:?}",
        t.notes
    );
}

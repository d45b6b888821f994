//! A host's verdict weighs everything the fleet found: a host that stands out or
//! drifts is never "pass" (four copies of one result, one with STREAM Triad cut by 30 %, all
//! said "pass"); rules not evaluated make it "incomplete"; an emulated host gets no hardware
//! verdict; the exit status follows the gravest verdict. The fleets are copies of the real
//! result files of reports/examples/.

use std::path::Path;

use hwsurvey_fleet::{analyse, collect, load_all, Fleet, Options, Verdict};
use hwsurvey_result::ResultFile;
use hwsurvey_testkit::fleet_sample::{every_rule_evaluated, example, scale};

/// The options `hwsurvey fleet` runs with: pages.hugetlb and pages.thp are preconditions of
/// the profile, never a host's fault.
fn opts() -> Options {
    Options {
        precondition_rules: ["pages.hugetlb".to_string(), "pages.thp".to_string()].into(),
        ..Options::default()
    }
}

fn fleet_of(dir: &Path, opts: &Options) -> Fleet {
    analyse(
        load_all(collect(&[dir.to_path_buf()], &[]).unwrap().sources),
        opts,
    )
}

/// `base` copied into `dir/n1/` ... `dir/nN/` (one host folder each, as a rack's run folder
/// holds them), host `k` (1-based) scaled on `mem.bandwidth` by `factors[k - 1]`.
fn rack(dir: &Path, base: &ResultFile, factors: &[f64]) {
    for (i, f) in factors.iter().enumerate() {
        let file = if *f == 1.0 {
            base.clone()
        } else {
            scale(base.clone(), Some("mem.bandwidth"), *f)
        };
        file.write_atomic(&dir.join(format!("n{}", i + 1)).join("result.json"))
            .unwrap();
    }
}

fn host<'a>(fleet: &'a Fleet, name: &str) -> &'a hwsurvey_fleet::Host {
    fleet.hosts.iter().find(|h| h.name == name).unwrap()
}

fn verdicts(fleet: &Fleet) -> Vec<(&str, Verdict)> {
    fleet
        .hosts
        .iter()
        .map(|h| (h.name.as_str(), h.verdict))
        .collect()
}

/// The rack: four copies of one result (every rule evaluated), n4's STREAM Triad
/// 30 % low. n4 fails by the --fail-pct rule (default 20 %), the others pass, exit 2; the
/// report says the four are one run. With --fail-pct 35 n4 warns (exit 1): standing out is
/// never a pass.
#[test]
fn a_host_30_percent_slow_fails_and_the_exit_status_follows() {
    let dir = tempfile::tempdir().unwrap();
    let base = every_rule_evaluated(example("x86_64-standard.json"));
    rack(dir.path(), &base, &[1.0, 1.0, 1.0, 0.7]);
    let fleet = fleet_of(dir.path(), &opts());
    assert_eq!(
        verdicts(&fleet),
        [
            ("n1", Verdict::Pass),
            ("n2", Verdict::Pass),
            ("n3", Verdict::Pass),
            ("n4", Verdict::Fail)
        ]
    );
    assert_eq!(
        host(&fleet, "n4").why,
        ["STREAM Triad, all threads -30.0 % from the group median, worse by --fail-pct 20 % or more"]
    );
    assert_eq!(fleet.exit_code(), 2);
    assert!(
        fleet
            .notes
            .iter()
            .any(|n| n.starts_with("n1, n2, n3, n4: one run (started ")
                && n.ends_with(
                    " under 4 host names: copies of one result file, not separate measurements"
                )),
        "{:?}",
        fleet.notes
    );
    let json: serde_json::Value =
        serde_json::from_str(&hwsurvey_fleet::render::json(&fleet)).unwrap();
    let n4 = json["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "n4")
        .unwrap();
    assert_eq!(n4["verdict"], "fail");
    assert!(json["rules"]["verdict"]
        .as_str()
        .unwrap()
        .contains("worse than its group median by 20 % or more (--fail-pct)"));
    let text =
        hwsurvey_testkit::fleet_sample::unwrapped(&hwsurvey_fleet::render::terminal(&fleet, None));
    assert!(
        text.contains("4 hosts from 4 result files in 1 group: 1 stood out or drifted, 1 failed; verdicts: 1 fail, 3 pass (exit 2)"),
        "{text}"
    );
    assert!(
        text.contains("\n  verdict: fail: STREAM Triad, all threads -30.0 % from the group median"),
        "{text}"
    );
    // a wider --fail-pct: the same outlier warns
    let fleet = fleet_of(
        dir.path(),
        &Options {
            fail_pct: 35.0,
            ..opts()
        },
    );
    assert_eq!(host(&fleet, "n4").verdict, Verdict::Warn);
    assert_eq!(
        host(&fleet, "n4").why,
        ["STREAM Triad, all threads -30.0 % from the group median (the worse way)"]
    );
    assert_eq!(fleet.exit_code(), 1);
}

/// A host 30 % faster than its identical siblings stands out as much: it warns (it never
/// fails: the better way), never passes.
#[test]
fn a_host_that_stands_out_the_better_way_warns() {
    let dir = tempfile::tempdir().unwrap();
    let base = every_rule_evaluated(example("x86_64-standard.json"));
    rack(dir.path(), &base, &[1.0, 1.0, 1.3, 1.0]);
    let fleet = fleet_of(dir.path(), &opts());
    assert_eq!(host(&fleet, "n3").verdict, Verdict::Warn);
    assert_eq!(
        host(&fleet, "n3").why,
        ["STREAM Triad, all threads +30.0 % from the group median (the better way)"]
    );
    assert_eq!(fleet.exit_code(), 1);
}

/// The example files as they are (run in VMs): the DIMM, EDAC and PCIe rules were not
/// evaluated, so no host passes: incomplete, the rules named, exit 4. The KVM VM's says these
/// are the rules this virtual machine could not check.
#[test]
fn rules_not_evaluated_make_a_host_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    rack(
        dir.path(),
        &example("x86_64-standard.json"),
        &[1.0, 1.0, 1.0],
    );
    let fleet = fleet_of(dir.path(), &opts());
    assert!(
        fleet.hosts.iter().all(|h| h.verdict == Verdict::Incomplete),
        "{:?}",
        verdicts(&fleet)
    );
    assert_eq!(
        host(&fleet, "n1").why,
        ["8 rules not evaluated: cpu.governor, memory.balance, memory.channels, memory.mixed, memory.speed, memory.triad_share, memory.edac, io.pcie_link"]
    );
    assert_eq!(fleet.exit_code(), 4);
    let dir = tempfile::tempdir().unwrap();
    let vm = hwsurvey_result::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports/examples/vm-x86_64-standard.json"),
    )
    .unwrap();
    rack(dir.path(), &vm, &[1.0, 1.0, 1.0]);
    let fleet = fleet_of(dir.path(), &opts());
    assert_eq!(host(&fleet, "n2").verdict, Verdict::Incomplete);
    assert!(
        host(&fleet, "n2").why[0].starts_with(
            "this virtual machine (KVM) could not check 11 rules: cpu.governor, memory.balance,"
        ),
        "{:?}",
        host(&fleet, "n2").why
    );
}

/// Three copies of the x86 TCG guest's result: no hardware verdict ("emulated"), never a pass,
/// exit 5; one of them 30 % slow stands out in the table, but an emulator's figure is never a
/// loss: it stays "emulated", not "fail".
#[test]
fn emulated_hosts_get_no_hardware_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let guest = hwsurvey_result::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports/examples/guest-x86-2s4n-smt-standard.json"),
    )
    .unwrap();
    rack(dir.path(), &guest, &[1.0, 1.0, 1.0, 0.7]);
    let fleet = fleet_of(dir.path(), &opts());
    assert!(
        fleet.hosts.iter().all(|h| h.verdict == Verdict::Emulated),
        "{:?}",
        verdicts(&fleet)
    );
    let n4 = host(&fleet, "n4");
    assert_eq!(n4.outliers.len(), 1, "{:?}", n4.outliers);
    assert_eq!(
        n4.why,
        ["full-system emulation: figures measure the emulator: no hardware verdict"]
    );
    assert_eq!(fleet.exit_code(), 5);
}

/// The fleet table fits 80 columns in a pipe or a file as on an 80-column terminal (it was
/// 150 characters wide), every word of it whole.
#[test]
fn the_fleet_table_fits_80_columns_into_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let base = every_rule_evaluated(example("x86_64-standard.json"));
    rack(dir.path(), &base, &[1.0, 1.0, 1.0, 0.7]);
    let fleet = fleet_of(dir.path(), &opts());
    let text =
        hwsurvey_testkit::fleet_sample::unwrapped(&hwsurvey_fleet::render::terminal(&fleet, None));
    let table: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(['┌', '│', '├', '└']))
        .collect();
    assert!(table.len() > 8, "{text}");
    for l in &table {
        assert!(
            l.chars().count() <= 80,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    // the row of n4 holds its verdict
    assert!(
        table
            .iter()
            .any(|l| l.starts_with("│ n4 ") && l.contains(" fail ")),
        "{text}"
    );
}

/// The guests' fleet (tests/guests/tests/fleet.rs) in small: TCG guests whose one host's
/// configuration differs (THP never where the others run madvise). Its configuration counts
/// though it is emulated: it warns; its siblings get no hardware verdict.
#[test]
fn an_emulated_host_that_stands_out_by_its_configuration_warns() {
    let dir = tempfile::tempdir().unwrap();
    let guest = hwsurvey_result::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports/examples/guest-x86-2s4n-smt-standard.json"),
    )
    .unwrap();
    for host in ["x86-a", "x86-b", "x86-c"] {
        let mut file = hwsurvey_testkit::fleet_sample::with_host(guest.clone(), host);
        if host == "x86-c" {
            file = hwsurvey_testkit::fleet_sample::set_thp(file, "never");
        }
        file.write_atomic(&dir.path().join(host).join("result.json"))
            .unwrap();
    }
    let fleet = fleet_of(dir.path(), &opts());
    assert_eq!(
        verdicts(&fleet),
        [
            ("x86-a", Verdict::Emulated),
            ("x86-b", Verdict::Emulated),
            ("x86-c", Verdict::Warn)
        ]
    );
    assert_eq!(
        host(&fleet, "x86-c").why,
        ["configuration differs from the group's majority (THP)"]
    );
    assert_eq!(fleet.exit_code(), 1);
}

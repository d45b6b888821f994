//! The energy counter reader over synthetic powercap and hwmon trees: discovery, wrap-around,
//! unreadable files, a VM without counters.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use hwsurvey_model::Unknown;
use hwsurvey_probe::energy::{self, EnergyMethod};
use hwsurvey_probe::{ProbeError, SysRoot};

fn write(root: &Path, path: &str, text: &str) {
    let p = root.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A two-package Intel server: package-0, its core and dram subzones, package-1, psys.
fn rapl_tree(root: &Path) {
    for (zone, name, uj, max) in [
        ("intel-rapl:0", "package-0", "262143000000", "262143328850"),
        ("intel-rapl:0:0", "core", "5", "262143328850"),
        ("intel-rapl:0:1", "dram", "1000000", "65712999613"),
        ("intel-rapl:1", "package-1", "7000000", "262143328850"),
        ("intel-rapl:2", "psys", "9000000", "262143328850"),
    ] {
        write(root, &format!("/sys/class/powercap/{zone}/name"), name);
        write(root, &format!("/sys/class/powercap/{zone}/energy_uj"), uj);
        write(
            root,
            &format!("/sys/class/powercap/{zone}/max_energy_range_uj"),
            max,
        );
    }
}

#[test]
fn rapl_packages_and_dram_with_wrap_around() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    rapl_tree(dir.path());
    let root = SysRoot::new(dir.path());
    let counters = energy::discover(&root).unwrap();
    assert_eq!(
        counters
            .iter()
            .map(|c| (c.domain.as_str(), c.max_range_uj, c.in_total))
            .collect::<Vec<_>>(),
        [
            ("package-0", Some(262_143_328_850), true),
            ("dram", Some(65_712_999_613), true),
            ("package-1", Some(262_143_328_850), true),
            ("psys", Some(262_143_328_850), false),
        ]
    );
    assert_eq!(
        counters[1].source,
        "/sys/class/powercap/intel-rapl:0:1/energy_uj"
    );
    let before = energy::read(&root, &counters);
    // package-0 wraps: 262143000000 -> max 262143328850 -> 0 -> 171150 uJ = 0.5 J in all
    write(
        dir.path(),
        "/sys/class/powercap/intel-rapl:0/energy_uj",
        "171150",
    );
    write(
        dir.path(),
        "/sys/class/powercap/intel-rapl:0:1/energy_uj",
        "1250000",
    );
    write(
        dir.path(),
        "/sys/class/powercap/intel-rapl:1/energy_uj",
        "7400000",
    );
    write(
        dir.path(),
        "/sys/class/powercap/intel-rapl:2/energy_uj",
        "10000000",
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    let after = energy::read(&root, &counters);
    let e = energy::between(&counters, &before, &after);
    assert!(e.problems.is_empty(), "{:?}", e.problems);
    let got: Vec<(&str, f64, bool)> = e
        .domains
        .iter()
        .map(|d| (d.domain.as_str(), d.joules, d.wrapped))
        .collect();
    assert_eq!(
        got,
        [
            ("package-0", 0.5, true),
            ("dram", 0.25, false),
            ("package-1", 0.4, false),
            ("psys", 1.0, false),
        ]
    );
    // psys holds the packages: not in the total
    assert!((e.total_joules().unwrap() - 1.15).abs() < 1e-9);
    assert!(e.seconds >= 0.02);
    let w = e.total_mean_watts().unwrap();
    assert!((w - 1.15 / e.seconds).abs() < 1e-9, "{w}");
    assert_eq!(e.domains_words(), "package-0 + dram + package-1");
}

#[test]
fn a_counter_going_backwards_without_a_range_and_an_unreadable_one_say_so() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    write(
        dir.path(),
        "/sys/class/powercap/intel-rapl:0/name",
        "package-0",
    );
    write(
        dir.path(),
        "/sys/class/powercap/intel-rapl:0/energy_uj",
        "5000",
    );
    write(
        dir.path(),
        "/sys/class/powercap/intel-rapl:1/name",
        "package-1",
    );
    write(
        dir.path(),
        "/sys/class/powercap/intel-rapl:1/energy_uj",
        "100",
    );
    let root = SysRoot::new(dir.path());
    let counters = energy::discover(&root).unwrap();
    assert_eq!(counters[0].max_range_uj, None);
    let before = energy::read(&root, &counters);
    write(
        dir.path(),
        "/sys/class/powercap/intel-rapl:0/energy_uj",
        "10",
    );
    write(
        dir.path(),
        "/sys/class/powercap/intel-rapl:1/energy_uj",
        "not a number",
    );
    let after = energy::read(&root, &counters);
    let e = energy::between(&counters, &before, &after);
    assert!(e.domains.is_empty(), "{:?}", e.domains);
    assert_eq!(e.total_joules(), None);
    assert_eq!(
        e.problems,
        [
            "/sys/class/powercap/intel-rapl:0/energy_uj: went from 5000 to 10 uJ and gives no \
             max_energy_range_uj to unwrap it",
            "/sys/class/powercap/intel-rapl:1/energy_uj: expected an unsigned integer, got \
             \"not a number\""
        ]
    );
}

#[test]
fn energy_uj_root_only_is_permission_denied_with_the_file() {
    // the reason for a denied energy_uj (the reader's SysRoot maps EACCES to this error)
    let denied = ProbeError::PermissionDenied {
        path: "/sys/class/powercap/intel-rapl:0/energy_uj".into(),
    };
    let expected = Unknown::PermissionDenied {
        path: "/sys/class/powercap/intel-rapl:0/energy_uj (root-only since Linux 5.10)".into(),
    };
    assert_eq!(energy::unavailable(Some(denied)), expected);
    // and through a real tree, where the file permissions apply (not to root)
    if is_root() {
        return;
    }
    let dir = hwsurvey_testkit::scratch_tempdir();
    rapl_tree(dir.path());
    let f = dir.path().join("sys/class/powercap/intel-rapl:0/energy_uj");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    assert_eq!(energy::discover(&SysRoot::new(dir.path())), Err(expected));
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
fn permission_denied_through_a_directory_the_reader_cannot_enter() {
    // root reads any file; a directory planted where energy_uj should be fails for root too
    // (an I/O error naming the file): the reader says why instead of reporting no counters
    let dir = hwsurvey_testkit::scratch_tempdir();
    rapl_tree(dir.path());
    let f = dir.path().join("sys/class/powercap/intel-rapl:0/energy_uj");
    std::fs::remove_file(&f).unwrap();
    std::fs::create_dir(&f).unwrap();
    let e = energy::discover(&SysRoot::new(dir.path())).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/sys/class/powercap/intel-rapl:0/energy_uj"),
        "{e}"
    );
}

#[test]
fn hwmon_energy_on_an_arm64_server_and_power_inputs_elsewhere() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    // Ampere Altra smpro: energy totals with labels
    write(dir.path(), "/sys/class/hwmon/hwmon0/name", "smpro");
    write(
        dir.path(),
        "/sys/class/hwmon/hwmon0/energy1_input",
        "1000000",
    );
    write(
        dir.path(),
        "/sys/class/hwmon/hwmon0/energy1_label",
        "CPU energy",
    );
    write(
        dir.path(),
        "/sys/class/hwmon/hwmon0/energy2_input",
        "2000000",
    );
    write(
        dir.path(),
        "/sys/class/hwmon/hwmon0/energy2_label",
        "DIMM energy",
    );
    write(
        dir.path(),
        "/sys/class/hwmon/hwmon0/power1_input",
        "90000000",
    );
    // a chip with power only (microwatts)
    write(dir.path(), "/sys/class/hwmon/hwmon1/name", "xgene");
    write(
        dir.path(),
        "/sys/class/hwmon/hwmon1/power1_input",
        "40000000",
    );
    // a temperature chip: nothing
    write(dir.path(), "/sys/class/hwmon/hwmon2/name", "coretemp");
    write(dir.path(), "/sys/class/hwmon/hwmon2/temp1_input", "40000");
    let root = SysRoot::new(dir.path());
    let counters = energy::discover(&root).unwrap();
    assert_eq!(
        counters
            .iter()
            .map(|c| (c.domain.as_str(), c.method))
            .collect::<Vec<_>>(),
        [
            ("smpro/CPU energy", EnergyMethod::Counter),
            ("smpro/DIMM energy", EnergyMethod::Counter),
            ("xgene/power1", EnergyMethod::PowerSampled),
        ]
    );
    let before = energy::read(&root, &counters);
    write(
        dir.path(),
        "/sys/class/hwmon/hwmon0/energy1_input",
        "4000000",
    );
    write(
        dir.path(),
        "/sys/class/hwmon/hwmon0/energy2_input",
        "2500000",
    );
    write(
        dir.path(),
        "/sys/class/hwmon/hwmon1/power1_input",
        "60000000",
    );
    std::thread::sleep(std::time::Duration::from_millis(10));
    let after = energy::read(&root, &counters);
    let e = energy::between(&counters, &before, &after);
    assert_eq!(e.domains[0].joules, 3.0);
    assert_eq!(e.domains[1].joules, 0.5);
    // 40 W then 60 W: 50 W x the time between the readings
    let sampled = &e.domains[2];
    assert_eq!(sampled.method, EnergyMethod::PowerSampled);
    assert!((sampled.joules - 50.0 * e.seconds).abs() < 1e-6);
    assert!((sampled.mean_watts.unwrap() - 50.0).abs() < 1e-6);
}

#[test]
fn this_vm_has_no_counters_and_says_why() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    let e = energy::discover(&SysRoot::new(dir.path())).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no energy counters: neither /sys/class/powercap/intel-rapl:* nor a hwmon \
         energy*_input or power*_input under /sys/class/hwmon (a VM, or a platform whose \
         kernel exposes none)"
    );
}

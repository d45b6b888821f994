//! The hardware watch's readers over synthetic trees whose counters move between two readings
//! (EDAC per DIMM with ghes labels mapped to the SMBIOS slots of a real `dmidecode`, AER
//! statistics, a retrained link, thermal throttle counters, kernel log records), a real
//! EDAC capture, and a VM where nothing is watched, each absence with its reason.

use std::path::PathBuf;

use hwsurvey_probe::run_env::CpuPlace;
use hwsurvey_probe::watch::{self, LogKind, LogSeverity, ThrottleKind, WatchSource};
use hwsurvey_probe::SysRoot;
use hwsurvey_testkit::watch as tree;

/// A file of `../shared/fixtures`; the test fails naming it when `../shared` is absent.
fn fixture(rel: &str) -> PathBuf {
    let f = hwsurvey_testkit::fixtures()
        .unwrap_or_else(|| panic!("../shared/fixtures not found: this test reads {rel} there"));
    f.join(rel)
}

fn cpus() -> Vec<CpuPlace> {
    // 2 packages x 2 cores
    [(0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 1)]
        .into_iter()
        .map(|(cpu, package, core)| CpuPlace {
            cpu,
            package: Some(package),
            core: Some(core),
            node: Some(0),
        })
        .collect()
}

/// The R181's four DIMMs (ghes labels), the seed PCIe tree with AER statistics, thermal
/// throttle counters and a kernel log; the machine's SMBIOS records from the R181's real
/// `dmidecode`.
fn server() -> (tempfile::TempDir, hwsurvey_probe::Machine) {
    let dir = hwsurvey_testkit::scratch_tempdir();
    let root = dir.path();
    tree::edac_tree(root, &tree::R181_GHES);
    hwsurvey_testkit::pcie_switch_tree(root);
    for a in ["0000:00:01.0", "0000:03:00.0"] {
        tree::aer_files(root, a, &[("RxErr", 2)], &[], &[]);
    }
    tree::thermal_throttle_tree(root, &[0, 1, 2, 3], 7);
    tree::kmsg_file(root);
    let sys = SysRoot::new(root);
    let mut machine = hwsurvey_probe::probe_machine(&sys);
    let text = std::fs::read_to_string(fixture(
        "aarch64-cavium-thunderx2-gigabyte-r181-2s/dmidecode-memory.txt",
    ))
    .unwrap();
    machine.memory = hwsurvey_probe::memory::probe_with_dmidecode_text(&sys, &text);
    (dir, machine)
}

#[test]
fn counts_that_change_between_two_reads_are_named_by_slot_device_and_cpu() {
    let (dir, machine) = server();
    let root = dir.path();
    let sys = SysRoot::new(root);
    let mut live = watch::start(&sys, &machine, &cpus());
    let plan = &live.plan;
    // every source found, said once
    let watched: Vec<(WatchSource, usize)> =
        plan.sources.iter().map(|s| (s.source, s.watched)).collect();
    assert_eq!(
        watched,
        [
            (WatchSource::Edac, 6),
            (WatchSource::Aer, 2),
            (WatchSource::Link, 11),
            (WatchSource::ThermalThrottle, 6),
            (WatchSource::Cpufreq, 0),
            (WatchSource::KernelLog, 1),
        ],
        "{:#?}",
        plan.sources
    );
    // the slots: ghes labels "<Bank Locator> <Locator>" of the dmidecode records, sizes agree
    let slots: Vec<(&str, Option<&str>)> = plan
        .edac
        .iter()
        .map(|u| (u.slot.dimm.as_str(), u.slot.slot.as_deref()))
        .collect();
    assert_eq!(
        slots,
        [
            ("mc0/dimm0", Some("DIMM_P0_A0")),
            ("mc0/dimm1", Some("DIMM_P0_B0")),
            ("mc0/noinfo", None),
            ("mc1/dimm0", Some("DIMM_P1_I0")),
            ("mc1/dimm1", Some("DIMM_P1_J0")),
            ("mc1/noinfo", None),
        ]
    );
    assert!(
        plan.sources[1]
            .what
            .contains("aer_dev_{correctable,nonfatal,fatal}"),
        "{}",
        plan.sources[1].what
    );
    let before = watch::read(&sys, plan);
    // during the point: 2,314 corrected errors on DIMM_P0_B0, an uncorrectable AER error on
    // the NVMe drive, the root port retrains at Gen1, package 1 and core 1 of package 0
    // throttle, and the kernel logs a machine check
    tree::add_edac_errors(root, 0, 1, 2314, 0);
    tree::aer_files(
        root,
        "0000:03:00.0",
        &[("RxErr", 2)],
        &[("CmpltTO", 1)],
        &[],
    );
    tree::set_link(root, "0000:00:01.0", "2.5 GT/s PCIe", 8);
    tree::add_throttle(root, 2, "package", 12);
    tree::add_throttle(root, 1, "core", 3);
    tree::log(
        root,
        &[
            "mce: [Hardware Error]: CPU 2: Machine Check: 0 Bank 4: bd000000000000c0",
            "random: crng init done",
        ],
    );
    let after = watch::read(&sys, plan);
    let events = live.kmsg.as_mut().unwrap().events(32).unwrap();
    let d = watch::delta(plan, &before, &after, 2.0, events.events, 32);
    assert!(d.problems.is_empty(), "{:?}", d.problems);
    assert_eq!(d.edac.len(), 1);
    assert_eq!(d.edac[0].words(), "DIMM_P0_B0 (mc0/dimm1)");
    assert_eq!((d.edac[0].corrected, d.edac[0].uncorrected), (2314, 0));
    assert_eq!(d.aer.len(), 1);
    assert_eq!(
        (
            d.aer[0].device.as_str(),
            d.aer[0].nonfatal,
            d.aer[0].kinds.clone()
        ),
        ("0000:03:00.0", 1, vec!["CmpltTO +1".to_string()])
    );
    assert_eq!(d.links.len(), 1);
    assert_eq!(
        (
            d.links[0].before.as_str(),
            d.links[0].after.as_str(),
            d.links[0].below_max
        ),
        ("8 GT/s x8", "2.5 GT/s x8", true)
    );
    let throttle: Vec<(ThrottleKind, u32, u64)> = d
        .throttle
        .iter()
        .map(|t| (t.kind, t.cpu, t.events))
        .collect();
    assert_eq!(
        throttle,
        [(ThrottleKind::Core, 1, 3), (ThrottleKind::Package, 2, 12)]
    );
    assert_eq!(d.kernel_log.len(), 1);
    let mce = &d.kernel_log[0];
    assert_eq!(
        (mce.kind, mce.severity, mce.cpu, mce.bank),
        (
            LogKind::MachineCheck,
            LogSeverity::Uncorrected,
            Some(2),
            Some(4)
        )
    );
    let failures = d.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    // the drive's name is the PCI ID database's, where the host has one
    assert!(
        failures[0].starts_with("1 uncorrectable non-fatal AER error on 0000:03:00.0"),
        "{failures:?}"
    );
    assert_eq!(
        failures[1],
        "machine check on CPU 2 bank 4 (uncorrected): mce: [Hardware Error]: CPU 2: \
         Machine Check: 0 Bank 4: bd000000000000c0"
    );
    // a second pair of readings with nothing moving: nothing kept
    let again = watch::read(&sys, plan);
    let quiet = watch::delta(plan, &after, &again, 1.0, vec![], 32);
    assert_eq!(quiet.marks(), Vec::<&str>::new());
}

#[test]
fn a_real_edac_capture_reads_its_counts_and_says_why_no_slot() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    let read = |f: &str| {
        std::fs::read_to_string(fixture(&format!("aarch64-thunderx2-edac-ghes-16dimm/{f}")))
            .unwrap()
    };
    tree::edac_from_capture(
        dir.path(),
        &read("edac-dimm-labels.txt"),
        &read("edac-error-counts.txt"),
    );
    let sys = SysRoot::new(dir.path());
    let machine = hwsurvey_probe::probe_machine(&sys);
    let plan = watch::discover(&sys, &machine, &[]);
    // 16 DIMMs and the two controllers' unattributed counts
    assert_eq!(plan.edac.len(), 18);
    assert!(plan.sources[0]
        .what
        .starts_with("16 DIMMs on 2 memory controllers"));
    let r = watch::read(&sys, &plan);
    let ce: Vec<(String, u64)> = plan
        .edac
        .iter()
        .zip(&r.edac)
        .filter_map(|(u, (ce, _))| {
            let n = *ce.as_ref().unwrap();
            (n > 0).then(|| {
                (
                    format!("{} {}", u.slot.dimm, u.slot.label.as_deref().unwrap_or("")),
                    n,
                )
            })
        })
        .collect();
    // the capture's facts: mc0 dimm0 1, dimm3 1, dimm4 1, dimm6 2; mc1 dimm0 1, dimm3 1, dimm6 2
    assert_eq!(
        ce,
        [
            ("mc0/dimm0 N0 DIMM_A0".to_string(), 1),
            ("mc0/dimm3 N0 DIMM_D0".to_string(), 1),
            ("mc0/dimm4 N0 DIMM_E0".to_string(), 1),
            ("mc0/dimm6 N0 DIMM_G0".to_string(), 2),
            ("mc1/dimm0 N1 DIMM_I0".to_string(), 1),
            ("mc1/dimm3 N1 DIMM_L0".to_string(), 1),
            ("mc1/dimm6 N1 DIMM_O0".to_string(), 2),
        ]
    );
    // no SMBIOS in this capture: no slot, and why
    let note = &plan.edac[0].slot.slot_note;
    assert!(
        plan.edac[0].slot.slot.is_none() && note.starts_with("no SMBIOS memory devices"),
        "{note}"
    );
}

#[test]
fn a_vm_watches_nothing_and_says_why_each_time() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    // a CPU without thermal_throttle or cpufreq, no EDAC, no PCI, no /dev/kmsg
    hwsurvey_testkit::write(
        dir.path(),
        "/sys/devices/system/cpu/cpu0/topology/core_id",
        "0",
    );
    let sys = SysRoot::new(dir.path());
    let machine = hwsurvey_probe::probe_machine(&sys);
    let live = watch::start(&sys, &machine, &cpus()[..1]);
    assert!(live.kmsg.is_none());
    let why: Vec<(WatchSource, String)> = live
        .plan
        .sources
        .iter()
        .map(|s| {
            (
                s.source,
                s.unavailable
                    .as_ref()
                    .map(|u| u.to_string())
                    .unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(why.len(), 6);
    assert!(why.iter().all(|(_, w)| !w.is_empty()), "{why:#?}");
    assert!(why[0].1.contains("no EDAC driver bound"), "{}", why[0].1);
    assert!(
        why[3].1.contains("thermal_throttle is missing"),
        "{}",
        why[3].1
    );
    assert!(why[4].1.contains("no cpufreq driver"), "{}", why[4].1);
    assert_eq!(why[5].1, "/dev/kmsg is missing");
    // a planted FIFO is refused, never opened (a read would block)
    let fifo = dir.path().join("dev/kmsg");
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    nix_mkfifo(&fifo);
    let err = hwsurvey_probe::kmsg::Follower::open(&sys)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a regular file"), "{err}");
}

fn nix_mkfifo(p: &std::path::Path) {
    nix::unistd::mkfifo(p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
}

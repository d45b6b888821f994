//! PCI functions named from the PCI ID database as lspci names them, and the uncore functions
//! of a 2-socket Xeon E5-2680 (114 of its 137 functions) in one line: the real capture
//! `x86_64-intel-2s-2numa-dmi-type17-raw`, named with Debian's `/usr/share/misc/pci.ids`
//! (package pci.ids), and without a database.

use std::path::Path;

use hwsurvey_model::Probed;
use hwsurvey_probe::{io, SysRoot};
use hwsurvey_testkit::shared;

const DEBIAN_PCI_IDS: &str = "/usr/share/misc/pci.ids";

/// The capture extracted, probed with the PCI ID database at `db`; `None` (after the SKIPPED
/// line) without ../shared.
fn intel_2s(db: impl FnOnce(&Path) -> std::path::PathBuf) -> Option<(tempfile::TempDir, io::Io)> {
    let archive = shared()?.join(
        "fixtures/x86_64-intel-2s-2numa-dmi-type17-raw/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2",
    );
    let (dir, root) = hwsurvey_testkit::extract(&archive);
    let db = db(dir.path());
    let io = io::probe_with_pci_ids(&SysRoot::new(&root), &[&db]);
    Some((dir, io))
}

#[test]
fn intel_capture_functions_are_named_as_lspci_names_them() {
    if !hwsurvey_testkit::tool(DEBIAN_PCI_IDS) {
        return;
    }
    let Some((_dir, io)) = intel_2s(|_| DEBIAN_PCI_IDS.into()) else {
        return;
    };
    let source = io.pci_ids.as_ref().unwrap().known().unwrap();
    assert_eq!(source.path, DEBIAN_PCI_IDS);
    // the header's version, YYYY.MM.DD (Debian 12's package: 2023.04.10)
    let version = source.version.as_deref().unwrap();
    assert!(
        version.len() == 10 && version.split('.').count() == 3,
        "{version}"
    );
    let pci = io.pci.known().unwrap();
    let names = |a: &str| {
        let d = pci.iter().find(|d| d.address == a).unwrap();
        (
            d.names.vendor.as_deref(),
            d.names.device.as_deref(),
            d.names.class.as_deref(),
        )
    };
    assert_eq!(
        names("0000:02:00.0"),
        (
            Some("Intel Corporation"),
            Some("I350 Gigabit Network Connection"),
            Some("Ethernet controller")
        )
    );
    assert_eq!(
        names("0000:82:00.0"),
        (
            Some("Mellanox Technologies"),
            Some("MT27500 Family [ConnectX-3]"),
            Some("Network controller")
        )
    );
    assert_eq!(
        names("0000:00:02.0"),
        (
            Some("Intel Corporation"),
            Some("PCIe Data Center SSD"),
            Some("Non-Volatile memory controller")
        )
    );
    assert_eq!(
        names("0000:7f:0e.1"),
        (
            Some("Intel Corporation"),
            Some("Xeon E5/Core i7 Processor Home Agent Performance Monitoring"),
            Some("Performance counters")
        )
    );
    let text = io::summary(&io);
    assert!(
        text.contains(&format!(
            "  PCI: 137 functions, named from pci.ids {version} (/usr/share/misc/pci.ids)\n"
        )),
        "{text}"
    );
    for line in [
        "    0000:00:00.0 Host bridge: Intel Corporation Xeon E5/Core i7 DMI2 [8086:3c00], node 0\n",
        "    0000:00:01.0 root port: Intel Corporation Xeon E5/Core i7 IIO PCI Express Root Port 1a [8086:3c02], node 0\n",
        "    0000:00:02.0 Non-Volatile memory controller: Intel Corporation PCIe Data Center SSD [8086:0953], no node\n",
        "    0000:02:00.0 Ethernet controller: Intel Corporation I350 Gigabit Network Connection [8086:1521], node 0\n",
        "    0000:05:00.0 VGA compatible controller: ASPEED Technology, Inc. ASPEED Graphics Family [1a03:2000], node 0\n",
        "    0000:82:00.0 Network controller: Mellanox Technologies MT27500 Family [ConnectX-3] [15b3:1003], node 1\n",
        "    0000:83:00.0 Co-processor: Intel Corporation Xeon Phi coprocessor SE10/7120 series [8086:225c], node 1\n",
        // buses 7f and ff hold nothing else; the DMA channels, VT-d and I/O APIC of 00:04-05
        // and 80:04-05 are uncore too
        "    114 Intel uncore functions (Xeon E5/Core i7 ...) on buses 0000:00, 0000:7f, 0000:80, \
         0000:ff: 104 System peripheral, 8 Performance counters, 2 PIC (each in --json)\n",
    ] {
        assert!(text.contains(line), "{line}in:\n{text}");
    }
    let listed = text.lines().filter(|l| l.starts_with("    0000:")).count();
    assert_eq!(listed, 23, "{text}");
    // the JSON keeps every function and its names
    let uncore = pci
        .iter()
        .filter(|d| hwsurvey_probe::pci_text::is_intel_uncore(d))
        .count();
    assert_eq!((pci.len(), uncore), (137, 114));
}

#[test]
fn without_a_database_the_names_are_unknown_with_the_reason() {
    let Some((dir, io)) = intel_2s(|d| d.join("misc/pci.ids")) else {
        return;
    };
    let missing = dir.path().join("misc/pci.ids");
    let why = format!(
        "names unknown: {} missing (Debian package pci.ids)",
        missing.display()
    );
    match io.pci_ids.as_ref().unwrap() {
        Probed::Unknown(u) => assert_eq!(u.to_string(), why),
        known => panic!("{known:?}"),
    }
    let text = io::summary(&io);
    for line in [
        format!("  PCI: 137 functions; {why}\n"),
        "    0000:02:00.0 Ethernet controller [8086:1521], node 0\n".into(),
        "    114 Intel uncore functions on buses 0000:00, 0000:7f, 0000:80, 0000:ff: \
         106 System peripheral, 8 Signal processing controller (each in --json)\n"
            .into(),
    ] {
        assert!(text.contains(&line), "{line}in:\n{text}");
    }
}

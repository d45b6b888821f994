//! The machine table says what was read, and never renders absent data as "none", 0 or empty:
//! PCIe links (the Intel 2-socket capture: 137 PCI functions from a 2013 kernel without link
//! files), NUMA nodes and hugetlb sizes of a probe that read nothing, and links whose speed the
//! kernel reports as "Unknown".

use hwsurvey_probe::{io, SysRoot};
use hwsurvey_report::{
    compare, default_label, inputs_with_default_labels, Cell, Comparison, Input,
};
use hwsurvey_testkit::report_sample::three;
use hwsurvey_testkit::shared;
use hwsurvey_testkit::write;

/// The synthetic result files with the first one's `machine.io` replaced by `io`.
fn comparison_with_io(io: &io::Io) -> Comparison {
    let mut files = three();
    files[0].machine.io = io.clone();
    compare(&inputs_with_default_labels(files), None, false).unwrap()
}

fn machine_cell(c: &Comparison, row: &str, col: usize) -> Cell {
    let t = c.tables.iter().find(|t| t.id == "machine").unwrap();
    t.rows.iter().find(|r| r.label == row).unwrap().cells[col].clone()
}

#[test]
fn pcie_without_link_files_is_no_data_not_none() {
    let Some(shared) = shared() else {
        return;
    };
    let archive = shared.join(
        "fixtures/x86_64-intel-2s-2numa-dmi-type17-raw/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2",
    );
    let (_dir, root) = hwsurvey_testkit::extract(&archive);
    let io = io::probe(&SysRoot::new(&root));
    let cell = machine_cell(&comparison_with_io(&io), "PCIe links below maximum", 0);
    assert_eq!(
        cell.missing.as_deref(),
        Some("no PCIe link data read (137 PCI functions, none with current_link_speed or max_link_speed: conventional PCI, a VM or an older kernel)")
    );
    assert_eq!(cell.text, "");
}

#[test]
fn pcie_links_judged_slow_unknown_and_none() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let dev = |addr: &str, cur: &str, cur_w: &str, max: &str, max_w: &str| {
        let d = format!("/sys/bus/pci/devices/{addr}");
        write(root, &format!("{d}/class"), "0x010802");
        write(root, &format!("{d}/vendor"), "0x144d");
        write(root, &format!("{d}/device"), "0xa808");
        write(root, &format!("{d}/current_link_speed"), cur);
        write(root, &format!("{d}/current_link_width"), cur_w);
        write(root, &format!("{d}/max_link_speed"), max);
        write(root, &format!("{d}/max_link_width"), max_w);
    };
    // at its maximum: judged, nothing below
    dev(
        "0000:3b:00.0",
        "16.0 GT/s PCIe",
        "16",
        "16.0 GT/s PCIe",
        "16",
    );
    let c = comparison_with_io(&io::probe(&SysRoot::new(root)));
    let cell = machine_cell(&c, "PCIe links below maximum", 0);
    assert_eq!(cell.text, "none of 1 link(s)");
    // a link that trained at 8 GT/s x4 of 16 GT/s x16, and one the kernel calls "Unknown"
    dev("0000:5e:00.0", "8.0 GT/s PCIe", "4", "16.0 GT/s PCIe", "16");
    dev("0000:af:00.0", "Unknown", "0", "8.0 GT/s PCIe", "4");
    let c = comparison_with_io(&io::probe(&SysRoot::new(root)));
    let cell = machine_cell(&c, "PCIe links below maximum", 0);
    assert_eq!(
        cell.text,
        "0000:5e:00.0; 1 of 3 link(s) not judged, unknown (/sys/bus/pci/devices/0000:af:00.0/current_link_speed: expected \"<rate> GT/s\", got \"Unknown\")"
    );
    // only the unknown one: no verdict at all, and why
    std::fs::remove_dir_all(root.join("sys/bus/pci/devices/0000:3b:00.0")).unwrap();
    std::fs::remove_dir_all(root.join("sys/bus/pci/devices/0000:5e:00.0")).unwrap();
    let c = comparison_with_io(&io::probe(&SysRoot::new(root)));
    let cell = machine_cell(&c, "PCIe links below maximum", 0);
    assert_eq!(
        cell.missing.as_deref(),
        Some("no PCIe link judged: speed or width unreadable on all 1 link(s), unknown (/sys/bus/pci/devices/0000:af:00.0/current_link_speed: expected \"<rate> GT/s\", got \"Unknown\")")
    );
}

#[test]
fn absent_numa_hugetlb_and_pci_say_why() {
    // the synthetic files carry the probe document of a root with nothing in it
    let c = comparison_with_io(&io::probe(&SysRoot::new("/nonexistent-synthetic-root")));
    for col in 0..3 {
        let numa = machine_cell(&c, "NUMA nodes (distances)", col);
        assert_eq!(
            numa.missing.as_deref(),
            Some("no NUMA nodes read: unknown (/sys/devices/system/node is missing)")
        );
        let pages = machine_cell(&c, "page sizes (base, huge)", col);
        assert!(!pages.text.contains("none"), "{}", pages.text);
        assert!(
            pages
                .text
                .ends_with("; huge page sizes unknown (/sys/kernel/mm/hugepages is missing)"),
            "{}",
            pages.text
        );
        let pci = machine_cell(&c, "PCIe links below maximum", col);
        assert_eq!(
            pci.missing.as_deref(),
            Some("unknown (/sys/bus/pci/devices is missing)")
        );
    }
}

/// A result measured by an aarch64 binary under qemu-user on an x86_64 kernel says EMULATED in
/// the machine table (its figures measure the emulator); a native one says native.
#[test]
fn emulated_binary_is_named_in_the_machine_table() {
    use hwsurvey_probe::os::{compare_binary, BinaryElf};
    let aarch64 = BinaryElf {
        class_bits: 64,
        e_machine: 183,
        machine_name: "AARCH64".into(),
        endianness: "little".into(),
    };
    let mut files = three();
    for (file, kernel) in files.iter_mut().zip(["aarch64", "x86_64", "aarch64"]) {
        file.machine.os.binary_vs_kernel =
            hwsurvey_model::Probed::Known(compare_binary(kernel, &aarch64));
    }
    let inputs: Vec<Input> = files
        .into_iter()
        .map(|file| Input {
            label: default_label(&file),
            file,
        })
        .collect();
    let c = compare(&inputs, None, false).unwrap();
    assert_eq!(
        machine_cell(&c, "binary on kernel", 0).text,
        "native (aarch64 kernel)"
    );
    let emulated = machine_cell(&c, "binary on kernel", 1).text;
    assert!(
        emulated.starts_with("EMULATED: ") && emulated.contains("x86_64"),
        "{emulated}"
    );
}

/// The platform row: the probe's verdict on the POWER7 capture, an emulated
/// guest (CPUID says TCG), and a file written before the probe read it.
#[test]
fn platform_row_names_partitions_emulation_and_absence() {
    use hwsurvey_probe::virt::{classify, VirtInputs};
    let with = |v: Option<hwsurvey_probe::virt::Virtualization>| {
        let mut files = three();
        match v {
            Some(v) => files[0].machine.os.virtualization = hwsurvey_model::Probed::Known(v),
            None => {
                // the machine document of a file written before the probe read it: without
                // the field (nor a reason for it), read back as a loader reads it
                let mut doc = files[0].machine.document();
                doc["os"].as_object_mut().unwrap().remove("virtualization");
                doc["unknown"]
                    .as_object_mut()
                    .unwrap()
                    .remove("/os/virtualization");
                files[0].machine = hwsurvey_probe::Machine::from_document(doc).unwrap();
            }
        }
        let inputs: Vec<Input> = files
            .into_iter()
            .map(|file| Input {
                label: default_label(&file),
                file,
            })
            .collect();
        machine_cell(&compare(&inputs, None, false).unwrap(), "platform", 0)
    };
    let tcg = classify(&VirtInputs {
        cpuid_signature: Some("TCGTCGTCGTCG".into()),
        cpuinfo_hypervisor_flag: Some(true),
        ..Default::default()
    });
    assert_eq!(
        with(Some(tcg)).text,
        "EMULATED: full-system emulator, figures measure it (QEMU TCG)"
    );
    assert_eq!(
        with(None).missing.as_deref(),
        Some("not in this result file")
    );
    // the x86_64 example of schema 1 was written before the probe read the platform
    let v1 = hwsurvey_result::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports/examples/v1/x86_64-standard.json"),
    )
    .unwrap();
    let c = compare(&inputs_with_default_labels(vec![v1]), None, false).unwrap();
    assert_eq!(
        machine_cell(&c, "platform", 0).missing.as_deref(),
        Some("not in this result file")
    );
    if let Some(shared) = shared() {
        let archive =
            shared.join("fixtures/ppc64-power7-64cpu-memoryless-node/ppc64-POWER7-64cpu.tar.gz");
        let (_dir, root) = hwsurvey_testkit::extract(&archive);
        let v = hwsurvey_probe::virt::probe(&SysRoot::new(&root));
        assert_eq!(with(Some(v)).text, "logical partition (pHyp)");
    }
}

//! Bad input never panics: property tests for the SMBIOS, dmidecode-text, meminfo and sysfs
//! value parsers, and single-file corruption (empty, truncated, garbage, missing) of real
//! captures, which must yield a typed unknown naming the file.

use std::path::Path;

use hwsurvey_model::{Probed, Unknown};
use hwsurvey_probe::memory::{self, dmidecode, meminfo, smbios, SmbiosSource};
use hwsurvey_probe::{io, os, SysRoot};
use hwsurvey_testkit::extract;
use hwsurvey_testkit::shared;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn smbios_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = smbios::parse_structures(&bytes, None, SmbiosSource::DmiTable);
        let _ = smbios::parse_entry_point(&bytes);
        let _ = smbios::check_blob("/x", 17, bytes);
    }

    /// Random bodies behind a plausible Type 17 header, to reach the field decoders.
    #[test]
    fn smbios_type17_random_body(len in 0u8..=255, body in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut bytes = vec![17, len, 0, 0];
        bytes.extend(body);
        if let Some(m) = smbios::parse_structures(&bytes, Some((3, 3)), SmbiosSource::DmiTable) {
            let p = memory::population::derive(&m);
            prop_assert!(p.populated <= p.slots_listed);
        }
    }

    #[test]
    fn dmidecode_random_text(text in "\\PC{0,400}") {
        let _ = dmidecode::parse_dmidecode_text(&text);
    }

    /// Text shaped like dmidecode, with random values.
    #[test]
    fn dmidecode_shaped_text(
        values in proptest::collection::vec("[ -~]{0,20}", 1..20),
        keys in proptest::collection::vec(prop::sample::select(vec![
            "Size", "Speed", "Configured Memory Speed", "Configured Clock Speed", "Rank",
            "Locator", "Bank Locator", "Array Handle", "Number Of Devices", "Maximum Capacity",
            "Total Width", "Type", "Part Number", "Use", "Version", "Manufacturer",
        ]), 1..20),
        dmi_type in prop::sample::select(vec![1u8, 4, 16, 17]),
    ) {
        let mut text = format!("# dmidecode 3.3\nHandle 0x0001, DMI type {dmi_type}, 40 bytes\nMemory Device\n");
        for (k, v) in keys.iter().zip(values.iter()) {
            text.push_str(&format!("\t{k}: {v}\n"));
        }
        if let Ok(m) = dmidecode::parse_dmidecode_text(&text) {
            let p = memory::population::derive(&m);
            let _ = memory::population::summary(&p);
        }
    }

    #[test]
    fn meminfo_random_text(text in "\\PC{0,200}") {
        let _ = meminfo::MemInfo::of(&meminfo::parse_meminfo(&text));
    }

    #[test]
    fn meminfo_shaped(n in any::<u64>(), unit in "(kB|MB|x|)") {
        let _ = meminfo::MemInfo::of(&meminfo::parse_meminfo(&format!("MemTotal: {n} {unit}\n")));
    }

    #[test]
    fn pcie_link_values(text in "\\PC{0,30}") {
        let _ = io::parse_link_speed(&text);
    }

    #[test]
    fn os_release_and_cmdline(text in "\\PC{0,300}") {
        let _ = os::parse_os_release(&text);
        let _ = os::parse_cmdline(&text);
        let _ = os::cgroup::parse_cpu_max("/sys/fs/cgroup/cpu.max", &text);
    }
}

/// Writes each corruption of `file` (relative to `root`), runs `check`, and restores it.
fn corrupt_each(root: &Path, file: &Path, mut check: impl FnMut(&str, &SysRoot)) {
    let original = std::fs::read(file).unwrap();
    let half = original.len() / 2;
    let variants: [(&str, Vec<u8>); 3] = [
        ("empty", Vec::new()),
        ("truncated", original[..half].to_vec()),
        ("garbage", b"\xff\xfe garbage \x00\x01 -1 0x".to_vec()),
    ];
    for (kind, bytes) in variants {
        std::fs::write(file, &bytes).unwrap();
        check(kind, &SysRoot::new(root));
    }
    std::fs::remove_file(file).unwrap();
    check("missing", &SysRoot::new(root));
    std::fs::write(file, original).unwrap();
}

fn kernel_path(root: &Path, file: &Path) -> String {
    format!("/{}", file.strip_prefix(root).unwrap().display())
}

#[test]
fn corrupt_each_type17_entry_of_intel_2s() {
    let Some(shared) = shared() else {
        return;
    };
    let archive = shared.join(
        "fixtures/x86_64-intel-2s-2numa-dmi-type17-raw/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2",
    );
    let (_dir, root) = extract(&archive);
    assert!(root.ends_with("32em64t-2n8c+1mic"));
    let entries = root.join("sys/firmware/dmi/entries");
    for i in [0, 5, 12, 23] {
        let file = entries.join(format!("17-{i}/raw"));
        let path = kernel_path(&root, &file);
        corrupt_each(&root, &file, |kind, sys| {
            let m = memory::probe(sys);
            let s = m.smbios.known().unwrap_or_else(|| panic!("{kind} {path}"));
            // The other 23 slots are still there; the bad one is named.
            assert_eq!(s.devices.len(), 23, "{kind} {path}");
            assert!(
                s.problems.iter().any(|p| p.to_string().contains(&path)),
                "{kind} {path}: {:?}",
                s.problems
            );
            let _ = memory::summary(&m);
        });
    }
}

#[test]
fn corrupt_each_edac_file() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    let mc = dir.path().join("sys/devices/system/edac/mc/mc0");
    std::fs::create_dir_all(mc.join("dimm0")).unwrap();
    std::fs::create_dir_all(mc.join("csrow0")).unwrap();
    let files = [
        ("ce_count", "5"),
        ("ue_count", "0"),
        ("size_mb", "16384"),
        ("mc_name", "ghes_edac"),
        ("dimm0/dimm_label", "N0 DIMM_A0"),
        ("dimm0/dimm_ce_count", "1"),
        ("dimm0/size", "16384"),
        ("csrow0/ch0_ce_count", "1"),
        ("csrow0/size_mb", "16384"),
    ];
    for (f, v) in files {
        std::fs::write(mc.join(f), format!("{v}\n")).unwrap();
    }
    for (f, _) in files {
        let file = mc.join(f);
        let path = kernel_path(dir.path(), &file);
        corrupt_each(dir.path(), &file, |kind, sys| {
            let e = memory::edac::read(sys);
            let e = e.known().expect("controller still listed");
            let json = serde_json::to_string(e).unwrap();
            // Every corruption of a number is an unknown naming the file.
            // (A csrow's channels are found by their files: with its only file gone, ch0 is
            // simply not there.)
            if kind != "truncated" && !(kind == "missing" && f.contains("/ch")) {
                assert!(json.contains(&path), "{kind} {path}: {json}");
            }
        });
    }
}

#[test]
fn corrupt_meminfo() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    let file = dir.path().join("proc/meminfo");
    std::fs::write(
        &file,
        "MemTotal:       16318412 kB\nMemAvailable:   12000000 kB\n",
    )
    .unwrap();
    corrupt_each(dir.path(), &file, |kind, sys| {
        let m = meminfo::read(sys);
        match (&m, kind) {
            (Probed::Known(_), "truncated") => {}
            (Probed::Unknown(u), _) => assert!(u.to_string().contains("/proc/meminfo"), "{u}"),
            (Probed::Known(v), _) => panic!("{kind}: {v:?}"),
        }
    });
}

#[test]
fn corrupt_dmi_table_is_named() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    let t = dir.path().join("sys/firmware/dmi/tables");
    std::fs::create_dir_all(&t).unwrap();
    let mut rec = vec![0u8; 0x22];
    rec[0] = 17;
    rec[1] = 0x22;
    rec[0x0C..0x0E].copy_from_slice(&0x2000u16.to_le_bytes());
    rec.extend_from_slice(b"A1\0\0");
    rec.extend_from_slice(&[127, 4, 0xFF, 0xFE, 0, 0]);
    let file = t.join("DMI");
    std::fs::write(&file, &rec).unwrap();
    corrupt_each(dir.path(), &file, |kind, sys| {
        let m = memory::probe(sys);
        match &m.smbios {
            Probed::Known(s) => {
                // Truncated: the one record survives, the missing End-of-Table is noted.
                assert_eq!(kind, "truncated");
                assert!(s.problems[0]
                    .to_string()
                    .contains("/sys/firmware/dmi/tables/DMI"));
            }
            Probed::Unknown(u) => {
                assert!(u.to_string().contains("/sys/firmware/dmi"), "{kind}: {u}")
            }
        }
    });
    let _ = Unknown::Other {
        detail: String::new(),
    };
}

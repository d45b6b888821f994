//! Memory population on real captures (facts from ../shared/fixtures/README.md).

use std::path::{Path, PathBuf};

use hwsurvey_model::{Probed, Unknown};
use hwsurvey_probe::memory::{
    self, dmidecode::parse_dmidecode_text, population, smbios, ModuleSize, SmbiosMemory,
    SmbiosSource,
};
use hwsurvey_probe::SysRoot;
use hwsurvey_testkit::extract;
use hwsurvey_testkit::shared;

const GIB: u64 = 1 << 30;

fn fixture_text(rel: &str) -> Option<String> {
    let p = shared()?.join("fixtures").join(rel);
    Some(std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

fn locators(m: &SmbiosMemory, populated: bool) -> Vec<String> {
    m.devices
        .iter()
        .filter(|d| d.size.is_populated() == populated)
        .map(|d| d.locator.clone().unwrap_or_default())
        .collect()
}

#[test]
fn dell_r640_dmidecode_3_2() {
    let Some(text) = fixture_text("x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let m = parse_dmidecode_text(&text).unwrap();
    assert_eq!(
        m.source,
        SmbiosSource::DmidecodeText {
            dmidecode_version: Some("3.2".into()),
            file: None,
        }
    );
    assert_eq!(m.smbios_version.as_deref(), Some("3.2"));
    assert_eq!(m.system_vendor.as_deref(), Some("Dell Inc."));
    assert_eq!(m.arrays.len(), 1);
    assert_eq!(m.arrays[0].slots_declared, Some(24));
    assert_eq!(m.arrays[0].max_capacity_bytes, Some(7680 * GIB));
    assert_eq!(
        locators(&m, true),
        ["A1", "A2", "A3", "A4", "A5", "A6", "B1", "B2", "B3", "B4", "B5", "B6"]
    );
    let p = population::derive(&m);
    assert_eq!(p.slots_listed, 24);
    assert_eq!(p.slots_declared, Some(24));
    assert_eq!(p.unlisted_slots_note, None);
    assert_eq!(p.populated, 12);
    assert_eq!(p.empty, 12);
    assert_eq!(p.module_sizes_bytes, vec![8 * GIB]);
    assert_eq!(p.memory_types, vec!["DDR4".to_string()]);
    assert_eq!(p.rated_speeds_mt_per_s, vec![3200]);
    assert_eq!(p.configured_speeds_mt_per_s, vec![2400]);
    assert!(p.configured_below_rated);
    assert_eq!(p.ranks, vec![1]);
    assert!(!p.mixed_sizes && !p.mixed_speeds && !p.mixed_ranks && !p.mixed_part_numbers);
    assert_eq!(p.total_installed_bytes, 96 * GIB);
    // Silver 4210 (Cascade Lake): 6 channels per socket; Dell numbers A1..A6 across them.
    assert_eq!(p.channels_per_socket, Some(6));
    let sockets = p.sockets.known().expect("sockets known");
    assert_eq!(sockets.len(), 2);
    for (s, label) in sockets.iter().zip(["A", "B"]) {
        assert_eq!(s.socket, label);
        assert_eq!(s.slots_listed, 12);
        assert_eq!(s.populated, 6);
        assert_eq!(s.installed_bytes, 48 * GIB);
        let ch = s.channels.known().expect("channels known");
        assert_eq!(ch.len(), 6);
        assert!(ch.iter().all(|c| c.populated == 1 && c.slots_listed == 2));
        assert_eq!(s.empty_channels, Probed::Known(vec![]));
        assert_eq!(s.peak_bandwidth_bytes_per_s, Probed::Known(115_200_000_000));
    }
    let peak = p.peak_bandwidth.known().expect("peak known");
    assert_eq!(peak.populated_channels, 12);
    assert_eq!(peak.speed_mt_per_s, 2400);
    assert_eq!(peak.bandwidth_bytes_per_s, 230_400_000_000);
    assert!(peak
        .derivation
        .contains("12 populated channels x 2400 MT/s"));
}

#[test]
fn oracle_x5_2_dmidecode_2_12() {
    let Some(text) = fixture_text("x86_64-oracle-x5-2-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let m = parse_dmidecode_text(&text).unwrap();
    assert_eq!(
        m.source,
        SmbiosSource::DmidecodeText {
            dmidecode_version: Some("2.12".into()),
            file: None,
        }
    );
    assert_eq!(m.smbios_version.as_deref(), Some("2.8"));
    assert_eq!(m.arrays.len(), 4);
    assert!(m.arrays.iter().all(|a| a.slots_declared == Some(6)));
    let p = population::derive(&m);
    assert_eq!((p.slots_listed, p.populated), (24, 16));
    assert_eq!(p.module_sizes_bytes, vec![32 * GIB]);
    assert_eq!(p.rated_speeds_mt_per_s, vec![2133]);
    assert_eq!(p.configured_speeds_mt_per_s, vec![2133]);
    assert!(!p.configured_below_rated);
    assert_eq!(p.ranks, vec![4]);
    assert_eq!(p.total_installed_bytes, 512 * GIB);
    // Each array holds 4 of 6.
    assert!(p
        .arrays
        .iter()
        .all(|a| a.slots_listed == 6 && a.populated == 4 && a.installed_bytes == 128 * GIB));
    let sockets = p.sockets.known().expect("sockets from /SYS/MB/Pn");
    assert_eq!(
        sockets
            .iter()
            .map(|s| s.socket.as_str())
            .collect::<Vec<_>>(),
        ["P0", "P1"]
    );
    for s in sockets {
        assert_eq!((s.slots_listed, s.populated), (12, 8));
        let Probed::Unknown(Unknown::Other { detail }) = &s.channels else {
            panic!("channels must be unknown: {:?}", s.channels)
        };
        assert!(detail.contains("does not say which channel"), "{detail}");
        assert!(s.empty_channels.known().is_none());
    }
    for socket in ["P0", "P1"] {
        let mut empty: Vec<&str> = p
            .slots
            .iter()
            .filter(|s| s.socket.as_deref() == Some(socket) && !s.populated)
            .filter_map(|s| s.locator.as_deref())
            .collect();
        empty.sort_by_key(|l| l[1..].parse::<u32>().unwrap());
        assert_eq!(empty, ["D2", "D5", "D6", "D9"]);
    }
    assert!(p.peak_bandwidth.known().is_none());
    let text = population::summary(&p);
    assert!(
        text.contains("arrays (populated/slots): 0x0035 4/6, 0x0041 4/6, 0x004D 4/6, 0x0059 4/6"),
        "{text}"
    );
}

#[test]
fn thunderx2_lists_only_populated() {
    let Some(text) = fixture_text("aarch64-cavium-thunderx2-gigabyte-r181-2s/dmidecode-memory.txt")
    else {
        return;
    };
    let m = parse_dmidecode_text(&text).unwrap();
    let p = population::derive(&m);
    assert_eq!(p.slots_listed, 4);
    assert_eq!(p.slots_declared, Some(24));
    assert!(p
        .unlisted_slots_note
        .as_deref()
        .unwrap()
        .contains("other 20 are not described"));
    assert_eq!(p.populated, 4);
    assert_eq!(p.empty, 0);
    assert_eq!(p.module_sizes_bytes, vec![32 * GIB]);
    assert_eq!(p.rated_speeds_mt_per_s, vec![2400]);
    assert_eq!(p.ranks, vec![2]);
    assert_eq!(p.total_installed_bytes, 128 * GIB);
    let sockets = p.sockets.known().unwrap();
    assert_eq!(sockets.len(), 2);
    assert_eq!(sockets[0].socket, "P0");
    let ch0: Vec<&str> = sockets[0]
        .channels
        .known()
        .unwrap()
        .iter()
        .map(|c| c.channel.as_str())
        .collect();
    assert_eq!(ch0, ["A", "B"]);
    // Not invented: whether other channels are empty is unknown.
    assert!(sockets[0].empty_channels.known().is_none());
    let peak = p.peak_bandwidth.known().unwrap();
    assert_eq!(peak.populated_channels, 4);
    assert_eq!(peak.bandwidth_bytes_per_s, 4 * 2400 * 1_000_000 * 8);
}

#[test]
fn ampere_altra_32_slots() {
    let Some(text) = fixture_text("aarch64-ampere-altra-q80-2s/dmidecode-memory.txt") else {
        return;
    };
    let m = parse_dmidecode_text(&text).unwrap();
    let p = population::derive(&m);
    assert_eq!((p.slots_listed, p.populated), (32, 16));
    assert_eq!(p.module_sizes_bytes, vec![8 * GIB]);
    assert_eq!(p.memory_types, vec!["DDR4".to_string()]);
    assert_eq!(p.rated_speeds_mt_per_s, vec![3200]);
    assert_eq!(p.ranks, vec![1]);
    assert_eq!(p.total_installed_bytes, 128 * GIB);
    // "DIMM n" on one array, "Socket 1 DIMM n" on the other: two groups, 8 of 16 each.
    let sockets = p.sockets.known().unwrap();
    assert_eq!(sockets.len(), 2);
    assert!(sockets
        .iter()
        .all(|s| s.slots_listed == 16 && s.populated == 8));
    assert!(sockets.iter().any(|s| s.socket == "SOCKET1"));
    // "DIMM n" / "Bank n" do not name channels.
    assert!(p.peak_bandwidth.known().is_none());
}

fn intel_2s_root() -> Option<(tempfile::TempDir, PathBuf)> {
    let archive = shared()?.join(
        "fixtures/x86_64-intel-2s-2numa-dmi-type17-raw/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2",
    );
    Some(extract(&archive))
}

#[test]
fn intel_2s_type17_raw_entries() {
    let Some((_dir, root)) = intel_2s_root() else {
        return;
    };
    let mem = memory::probe(&SysRoot::new(&root));
    // no entry point in this capture: the version is said to be unknown, not "?"
    assert!(memory::summary(&mem).contains(
        "SMBIOS (version not given: no entry point was read) from DMI entries: 24 slots listed"
    ));
    let m = mem.smbios.known().expect("entries decode");
    assert_eq!(m.source, SmbiosSource::DmiEntries);
    assert_eq!(m.system_vendor.as_deref(), Some("Dell"));
    assert_eq!(m.devices.len(), 24);
    assert_eq!(
        locators(m, true),
        ["DIMM_A1", "DIMM_A2", "DIMM_A3", "DIMM_A4", "DIMM_B1", "DIMM_B2", "DIMM_B3", "DIMM_B4"]
    );
    for d in m.devices.iter().filter(|d| d.size.is_populated()) {
        assert_eq!(
            d.size,
            ModuleSize::Installed {
                size_bytes: 4 * GIB
            }
        );
        assert_eq!(d.memory_type_raw, Some(0x18));
        assert_eq!(d.memory_type.as_deref(), Some("DDR3"));
    }
    assert_eq!(
        m.devices
            .iter()
            .filter(|d| d.size == ModuleSize::Empty)
            .count(),
        16
    );
    let p = mem.population.known().unwrap();
    assert_eq!(p.total_installed_bytes, 32 * GIB);
    let sockets = p.sockets.known().unwrap();
    assert_eq!(
        sockets
            .iter()
            .map(|s| (s.socket.as_str(), s.slots_listed, s.populated))
            .collect::<Vec<_>>(),
        [("A", 12, 4), ("B", 12, 4)]
    );
    // No Type 4 in the capture: the channel count per socket is not known.
    assert!(sockets[0].channels.known().is_none());
    let text = memory::summary(&mem);
    assert!(text.contains("DIMM_A1"), "{text}");
}

/// Builds a sysfs tree from `grep . /sys/...` output lines (`/sys/path:value`).
fn tree_from_grep(dir: &Path, text: &str) {
    for line in text.lines() {
        let line = line.trim();
        if !line.starts_with("/sys/") {
            continue;
        }
        let Some((path, value)) = line.split_once(':') else {
            continue;
        };
        let host = dir.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(host.parent().unwrap()).unwrap();
        std::fs::write(host, format!("{value}\n")).unwrap();
    }
}

#[test]
fn alderlake_edac_all_zero() {
    let Some(text) = fixture_text("x86_64-intel-alderlake-ie31200-edac/edac-and-lscpu-output.txt")
    else {
        return;
    };
    let dir = hwsurvey_testkit::scratch_tempdir();
    tree_from_grep(dir.path(), &text);
    // csrow layout from ras-mc-ctl's labels "mc#0csrow#1channel#0".
    for line in text.lines().filter(|l| l.starts_with("mc#")) {
        let label = line.split_whitespace().next().unwrap();
        let nums: Vec<&str> = label
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .collect();
        let d = dir.path().join(format!(
            "sys/devices/system/edac/mc/mc{}/csrow{}",
            nums[0], nums[1]
        ));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("ch{}_ce_count", nums[2])), "0\n").unwrap();
    }
    let root = SysRoot::new(dir.path());
    let e = memory::edac::read(&root);
    let e = e.known().expect("edac");
    assert_eq!(
        e.controllers
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        ["mc0", "mc1"]
    );
    for c in &e.controllers {
        assert_eq!(c.ce_count, Probed::Known(0));
        assert_eq!(c.ue_count, Probed::Known(0));
        assert_eq!(c.ce_noinfo_count, Probed::Known(0));
        assert_eq!(
            c.csrows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["csrow0", "csrow1"]
        );
        assert!(c.csrows.iter().all(|r| r.channels.len() == 1
            && r.channels[0].channel == 0
            && r.channels[0].ce_count == Probed::Known(0)));
        // Not in the capture: unknown with the path, not 0.
        assert_eq!(
            c.size_bytes,
            Probed::Unknown(Unknown::Missing {
                path: format!("/sys/devices/system/edac/mc/{}/size_mb", c.name)
            })
        );
    }
}

#[test]
fn thunderx2_edac_labels_and_counts() {
    let (Some(labels), Some(counts)) = (
        fixture_text("aarch64-thunderx2-edac-ghes-16dimm/edac-dimm-labels.txt"),
        fixture_text("aarch64-thunderx2-edac-ghes-16dimm/edac-error-counts.txt"),
    ) else {
        return;
    };
    let dir = hwsurvey_testkit::scratch_tempdir();
    tree_from_grep(dir.path(), &labels);
    tree_from_grep(dir.path(), &counts);
    let e = memory::edac::read(&SysRoot::new(dir.path()));
    let e = e.known().expect("edac");
    assert_eq!(e.controllers.len(), 2);
    let mc0 = &e.controllers[0];
    let mc1 = &e.controllers[1];
    let labels0: Vec<&str> = mc0
        .dimms
        .iter()
        .map(|d| d.label.known().unwrap().as_str())
        .collect();
    assert_eq!(
        labels0,
        [
            "N0 DIMM_A0",
            "N0 DIMM_B0",
            "N0 DIMM_C0",
            "N0 DIMM_D0",
            "N0 DIMM_E0",
            "N0 DIMM_F0",
            "N0 DIMM_G0",
            "N0 DIMM_H0"
        ]
    );
    assert_eq!(mc1.dimms[0].label, Probed::Known("N1 DIMM_I0".into()));
    assert_eq!(mc1.dimms[7].label, Probed::Known("N1 DIMM_P0".into()));
    assert_eq!(mc0.ce_count, Probed::Known(5));
    assert_eq!(mc1.ce_count, Probed::Known(4));
    let ce = |c: &memory::edac::EdacController| -> Vec<(String, u64)> {
        c.dimms
            .iter()
            .filter_map(|d| d.ce_count.known().map(|n| (d.name.clone(), *n)))
            .collect()
    };
    let s = |v: &[(&str, u64)]| -> Vec<(String, u64)> {
        v.iter().map(|(a, b)| (a.to_string(), *b)).collect()
    };
    assert_eq!(
        ce(mc0),
        s(&[("dimm0", 1), ("dimm3", 1), ("dimm4", 1), ("dimm6", 2)])
    );
    assert_eq!(ce(mc1), s(&[("dimm0", 1), ("dimm3", 1), ("dimm6", 2)]));
    // The capture dropped zero counts (sed '/:0/d'): those are unknown, not zero.
    assert!(mc0.dimms[1].ce_count.known().is_none());
    let sum: u64 = mc0.dimms.iter().filter_map(|d| d.ce_count.known()).sum();
    assert_eq!(sum, 5);
    let text = memory::edac::summary(e);
    assert!(text.contains("N1 DIMM_P0"), "{text}");
}

#[test]
fn no_dmi_is_unavailable_with_reason() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    let m = memory::probe(&SysRoot::new(dir.path()));
    let Probed::Unknown(Unknown::Other { detail }) = &m.smbios else {
        panic!("{:?}", m.smbios)
    };
    assert!(detail.contains("/sys/firmware/dmi/tables/DMI"), "{detail}");
    assert!(m.population.known().is_none());
    assert_eq!(
        m.edac,
        Probed::Unknown(Unknown::Missing {
            path: "/sys/devices/system/edac/mc".into()
        })
    );
    let text = memory::summary(&m);
    assert!(text.contains("SMBIOS: unavailable"), "{text}");
}

#[test]
fn table_and_entry_point_read_from_sysfs() {
    // A table with one Type 17 (16 GiB DDR4-2933) behind an _SM3_ 3.2 entry point.
    let dir = hwsurvey_testkit::scratch_tempdir();
    let t = dir.path().join("sys/firmware/dmi/tables");
    std::fs::create_dir_all(&t).unwrap();
    let mut ep = b"_SM3_".to_vec();
    ep.extend_from_slice(&[0, 0x18, 3, 2, 0]);
    std::fs::write(t.join("smbios_entry_point"), ep).unwrap();
    let mut rec = vec![0u8; 0x28];
    rec[0] = 17;
    rec[1] = 0x28;
    rec[2] = 0x01;
    rec[0x0C..0x0E].copy_from_slice(&0x4000u16.to_le_bytes());
    rec[0x10] = 1; // locator string 1
    rec[0x12] = 0x1A; // DDR4
    rec[0x15..0x17].copy_from_slice(&2933u16.to_le_bytes());
    rec[0x1B] = 2; // rank 2
    rec[0x20..0x22].copy_from_slice(&2666u16.to_le_bytes());
    rec.extend_from_slice(b"CPU1_DIMM_A1\0\0");
    std::fs::write(t.join("DMI"), &rec).unwrap();
    let m = memory::probe(&SysRoot::new(dir.path()));
    let s = m.smbios.known().unwrap();
    assert_eq!(s.source, SmbiosSource::DmiTable);
    assert_eq!(s.smbios_version.as_deref(), Some("3.2"));
    let d = &s.devices[0];
    assert_eq!(
        d.size,
        ModuleSize::Installed {
            size_bytes: 16 * GIB
        }
    );
    assert_eq!(d.locator.as_deref(), Some("CPU1_DIMM_A1"));
    assert_eq!(d.memory_type.as_deref(), Some("DDR4"));
    assert_eq!(
        (d.speed_mt_per_s, d.configured_speed_mt_per_s),
        (Some(2933), Some(2666))
    );
    assert_eq!(d.rank, Some(2));
    let p = m.population.known().unwrap();
    assert_eq!(p.slots[0].socket.as_deref(), Some("CPU1"));
    assert_eq!(p.slots[0].channel, Probed::Known("A".into()));
    assert_eq!(
        p.peak_bandwidth.known().unwrap().bandwidth_bytes_per_s,
        2666 * 1_000_000 * 8
    );
    // Unreadable table (a directory where the file should be) names the file.
    let bad = hwsurvey_testkit::scratch_tempdir();
    std::fs::create_dir_all(bad.path().join("sys/firmware/dmi/tables/DMI")).unwrap();
    let m = memory::probe(&SysRoot::new(bad.path()));
    let u = m.smbios.why_unknown().unwrap();
    assert!(
        u.to_string().contains("/sys/firmware/dmi/tables/DMI"),
        "{u}"
    );
    let _ = smbios::DMI_TABLE;
}

#[test]
fn dmidecode_option_uses_text() {
    let Some(text) = fixture_text("x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let dir = hwsurvey_testkit::scratch_tempdir();
    let m = memory::probe_with_dmidecode_text(&SysRoot::new(dir.path()), &text);
    assert_eq!(
        m.population.known().unwrap().total_installed_bytes,
        96 * GIB
    );
    let summary = memory::summary(&m);
    assert!(
        summary.contains("theoretical peak: 12 populated channels"),
        "{summary}"
    );
    assert!(summary.contains("configured below rated"), "{summary}");
    let bad = memory::probe_with_dmidecode_text(&SysRoot::new(dir.path()), "not dmidecode");
    assert!(bad
        .smbios
        .why_unknown()
        .unwrap()
        .to_string()
        .contains("not dmidecode"));
}

#[test]
fn e2k_meminfo_full_size() {
    let Some(text) = fixture_text("e2k-elbrus-16c-1s/linux_meminfo.log") else {
        return;
    };
    let m = memory::meminfo::MemInfo::of(&memory::meminfo::parse_meminfo(&text)).unwrap();
    // kB is KiB: 67108864 KiB = 64 GiB installed, of which the kernel manages 65858108 KiB.
    assert_eq!(m.mem_full_size_bytes, Some(64 * GIB));
    assert_eq!(m.mem_total_bytes, 65_858_108 * 1024);
    assert_eq!(m.mem_available_bytes, Some(64_492_240 * 1024));
}

/// The Dell capture edited the way a technician would leave it: A6 pulled (socket A's sixth
/// channel empty) and B1 swapped for a 16 GiB dual-rank module of another part number.
#[test]
fn dell_r640_empty_channel_and_mixed_modules() {
    let Some(text) = fixture_text("x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let mut records: Vec<String> = text.split("\n\n").map(str::to_string).collect();
    for r in records.iter_mut() {
        if r.contains("\tLocator: A6\n") {
            *r = r.replace("Size: 8 GB", "Size: No Module Installed");
        }
        if r.contains("\tLocator: B1\n") {
            *r = r
                .replace("Size: 8 GB", "Size: 16384 MB")
                .replace("Rank: 1", "Rank: 2")
                .replace("9ASF1G72PZ-3G2E2", "18ASF2G72PDZ-3G2E1");
        }
    }
    let m = parse_dmidecode_text(&records.join("\n\n")).unwrap();
    let p = population::derive(&m);
    assert_eq!(p.populated, 11);
    assert_eq!(p.total_installed_bytes, 96 * GIB);
    assert!(p.mixed_sizes && p.mixed_ranks && p.mixed_part_numbers);
    assert!(!p.mixed_speeds);
    assert_eq!(p.module_sizes_bytes, vec![8 * GIB, 16 * GIB]);
    let sockets = p.sockets.known().unwrap();
    assert_eq!(
        sockets[0].empty_channels,
        Probed::Known(vec!["ch5".to_string()])
    );
    assert_eq!(sockets[1].empty_channels, Probed::Known(vec![]));
    assert_eq!(
        sockets[0].peak_bandwidth_bytes_per_s,
        Probed::Known(96_000_000_000)
    );
    assert_eq!(
        p.peak_bandwidth.known().unwrap().bandwidth_bytes_per_s,
        11 * 2400 * 1_000_000 * 8
    );
    let text = population::summary(&p);
    assert!(text.contains("empty channels ch5"), "{text}");
    assert!(text.contains("mixed sizes"), "{text}");
}

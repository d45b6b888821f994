//! SMBIOS Type 19/20 (DSP0134 3.x sections 7.20, 7.21) and the interleave derived from them,
//! on the captures in ../shared/fixtures (facts in its README.md) and on small raw trees
//! written here.

use std::path::Path;

use hwsurvey_model::{Probed, Unknown};
use hwsurvey_probe::memory::{
    self, dmidecode::parse_dmidecode_text, interleave, ArrayMappedAddress, DeviceMappedAddress,
    InterleaveState,
};
use hwsurvey_probe::SysRoot;
use hwsurvey_testkit::{extract, shared};

const GIB: u64 = 1 << 30;

fn fixture_text(rel: &str) -> Option<String> {
    let p = shared()?.join("fixtures").join(rel);
    Some(std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

fn unknown_detail<T: std::fmt::Debug>(p: &Probed<T>) -> String {
    match p {
        Probed::Unknown(Unknown::Other { detail }) => detail.clone(),
        other => panic!("expected unknown with a reason, got {other:?}"),
    }
}

#[test]
fn oracle_x5_2_type19_type20_one_range_per_dimm_not_interleaved() {
    let Some(text) = fixture_text("x86_64-oracle-x5-2-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let m = parse_dmidecode_text(&text).unwrap();
    assert!(m.problems.is_empty(), "{:?}", m.problems);
    // 4 Type 19 ranges of 128 GiB, one per Type 16 array, partition width 4.
    assert_eq!(m.array_mappings.len(), 4);
    assert_eq!(
        m.array_mappings[0],
        ArrayMappedAddress {
            handle: Some(0x0036),
            start_address: 0,
            end_address: 0x01F_FFFF_FFFF,
            array_handle: Some(0x0035),
            partition_width: Some(4),
        }
    );
    assert_eq!(m.array_mappings[3].start_address, 0x060_0000_0000);
    assert_eq!(m.array_mappings[3].end_address, 0x07F_FFFF_FFFF);
    assert!(m
        .array_mappings
        .iter()
        .all(|a| a.size_bytes() == Some(128 * GIB)));
    // 16 Type 20 records, one per populated DIMM, 32 GiB each, laid end to end.
    assert_eq!(m.device_mappings.len(), 16);
    assert_eq!(
        m.device_mappings[0],
        DeviceMappedAddress {
            handle: Some(0x0038),
            start_address: 0,
            end_address: 0x007_FFFF_FFFF,
            device_handle: Some(0x0037),
            array_mapping_handle: Some(0x0036),
            partition_row_position: Some(1),
            // dmidecode printed no "Interleave Position": the byte is 0
            interleave_position: Some(0),
            interleaved_data_depth: Some(0),
        }
    );
    let last = &m.device_mappings[15];
    assert_eq!(
        (last.start_address, last.end_address, last.device_handle),
        (0x078_0000_0000, 0x07F_FFFF_FFFF, Some(0x0062))
    );
    for (i, d) in m.device_mappings.iter().enumerate() {
        assert_eq!(d.size_bytes(), Some(32 * GIB));
        assert_eq!(d.start_address, i as u64 * 32 * GIB);
    }

    let i = interleave::derive(&m);
    let i = i.known().expect("Type 20 present");
    assert_eq!(i.state, InterleaveState::NotInterleaved);
    assert_eq!(i.array_ranges, 4);
    assert_eq!(i.array_mapped_bytes, 512 * GIB);
    assert_eq!(i.partition_widths, [4]);
    assert_eq!(i.devices.len(), 16);
    assert!(i.unmapped_devices.is_empty());
    assert_eq!(i.devices[0].locator, "D11");
    assert_eq!(i.devices[0].bank_locator.as_deref(), Some("/SYS/MB/P0"));
    assert!(i
        .devices
        .iter()
        .all(|d| d.sharing_range == 1 && d.interleaved == Some(false)));
    assert_eq!(
        interleave::device_line(&i.devices[0]),
        "D11 (/SYS/MB/P0): 0x00000000000-0x007FFFFFFFF (32 GiB), Interleave Position 0 (not interleaved)"
    );
    // the probe's memory section says it, once per machine
    let dir = hwsurvey_testkit::scratch_tempdir();
    let mem = memory::probe_with_dmidecode_text(&SysRoot::new(dir.path()), &text);
    let summary = memory::summary(&mem);
    assert!(
        summary.contains(
            "Interleave (SMBIOS Type 19/20): not interleaved (16 populated DIMM(s), each mapped \
             to a range of its own with Interleave Position 0); 4 Type 19 range(s), 512 GiB"
        ),
        "{summary}"
    );
}

#[test]
fn dell_r640_type19_without_type20_is_unknown_with_the_ranges() {
    let Some(text) = fixture_text("x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let m = parse_dmidecode_text(&text).unwrap();
    assert_eq!(
        m.array_mappings
            .iter()
            .map(|a| (
                a.start_address,
                a.end_address,
                a.array_handle,
                a.partition_width
            ))
            .collect::<Vec<_>>(),
        [
            (0, 0x0_7FFF_FFFF, Some(0x1000), Some(2)),
            (0x1_0000_0000, 0x18_7FFF_FFFF, Some(0x1000), Some(2)),
        ]
    );
    assert_eq!(m.array_mappings[0].size_bytes(), Some(2 * GIB));
    assert_eq!(m.array_mappings[1].size_bytes(), Some(94 * GIB));
    assert!(m.device_mappings.is_empty());
    let detail = unknown_detail(&interleave::derive(&m));
    assert_eq!(
        detail,
        "the firmware gives 2 Type 19 range(s) (96 GiB, partition width 2) but no Type 20 \
         Memory Device Mapped Address records: which DIMM answers which addresses, and \
         whether they interleave, is not stated"
    );
}

#[test]
fn captures_without_type19_type20_say_so() {
    // `dmidecode -t memory` captures: Type 16/17, no 19/20.
    for rel in [
        "aarch64-ampere-altra-q80-2s/dmidecode-memory.txt",
        "aarch64-cavium-thunderx2-gigabyte-r181-2s/dmidecode-memory.txt",
    ] {
        let Some(text) = fixture_text(rel) else {
            return;
        };
        let m = parse_dmidecode_text(&text).unwrap();
        assert!(
            m.array_mappings.is_empty() && m.device_mappings.is_empty(),
            "{rel}"
        );
        let detail = unknown_detail(&interleave::derive(&m));
        assert!(
            detail.starts_with(
                "no SMBIOS Type 19/20 (Memory Array / Device Mapped Address) records in the \
                 dmidecode text (`dmidecode -t memory` prints neither"
            ),
            "{rel}: {detail}"
        );
    }
    // Their whole-`dmidecode` captures hold types 0-3 only: no memory records at all, and
    // the interleave is unknown for the same reason as the DIMMs.
    for rel in [
        "aarch64-ampere-altra-q80-2s/dmidecode.txt",
        "aarch64-cavium-thunderx2-gigabyte-r181-2s/dmidecode.txt",
    ] {
        let Some(text) = fixture_text(rel) else {
            return;
        };
        let dir = hwsurvey_testkit::scratch_tempdir();
        let mem = memory::probe_with_dmidecode_text(&SysRoot::new(dir.path()), &text);
        let why = mem.interleave.why_unknown().expect(rel).to_string();
        assert!(
            why.contains("\"Handle 0x..., DMI type 17\" Memory Device records, found none"),
            "{rel}: {why}"
        );
        assert_eq!(Some(why), mem.smbios.why_unknown().map(|u| u.to_string()));
    }
    // The hwloc dump's raw entries hold Type 17 only.
    let Some(shared) = shared() else { return };
    let (_dir, root) = extract(&shared.join(
        "fixtures/x86_64-intel-2s-2numa-dmi-type17-raw/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2",
    ));
    let mem = memory::probe(&SysRoot::new(&root));
    assert_eq!(mem.smbios.known().unwrap().devices.len(), 24);
    assert_eq!(
        unknown_detail(&mem.interleave),
        "no SMBIOS Type 19/20 (Memory Array / Device Mapped Address) records in \
         /sys/firmware/dmi/entries (no 19-*/20-* entries)"
    );
    assert!(memory::summary(&mem).contains("  Interleave: unknown (no SMBIOS Type 19/20"));
}

/// A Type 17 structure: 16 GiB DDR4 (or empty), locator string 1.
fn type17(handle: u16, locator: &str, populated: bool) -> Vec<u8> {
    let mut rec = vec![0u8; 0x28];
    rec[0] = 17;
    rec[1] = 0x28;
    rec[2..4].copy_from_slice(&handle.to_le_bytes());
    rec[4..6].copy_from_slice(&0x1000u16.to_le_bytes());
    let size: u16 = if populated { 0x4000 } else { 0 };
    rec[0x0C..0x0E].copy_from_slice(&size.to_le_bytes());
    rec[0x10] = 1;
    rec[0x12] = 0x1A;
    rec.extend_from_slice(locator.as_bytes());
    rec.extend_from_slice(b"\0\0");
    rec
}

/// A Type 19 structure (length 1Fh) over `[start_kib, end_kib]`, or with FFFFFFFFh and the
/// extended byte addresses when `extended` is given.
fn type19(handle: u16, start_kib: u32, end_kib: u32, extended: Option<(u64, u64)>) -> Vec<u8> {
    let mut rec = vec![0u8; 0x1F];
    rec[0] = 19;
    rec[1] = 0x1F;
    rec[2..4].copy_from_slice(&handle.to_le_bytes());
    let (s, e) = if extended.is_some() {
        (0xFFFF_FFFF, 0xFFFF_FFFF)
    } else {
        (start_kib, end_kib)
    };
    rec[4..8].copy_from_slice(&s.to_le_bytes());
    rec[8..12].copy_from_slice(&e.to_le_bytes());
    rec[0x0C..0x0E].copy_from_slice(&0x1000u16.to_le_bytes());
    rec[0x0E] = 2;
    if let Some((xs, xe)) = extended {
        rec[0x0F..0x17].copy_from_slice(&xs.to_le_bytes());
        rec[0x17..0x1F].copy_from_slice(&xe.to_le_bytes());
    }
    rec.extend_from_slice(b"\0\0");
    rec
}

/// A Type 20 structure (length 23h) for `device` over `[start_kib, end_kib]`.
fn type20(handle: u16, device: u16, start_kib: u32, end_kib: u32, pos: u8, depth: u8) -> Vec<u8> {
    let mut rec = vec![0u8; 0x23];
    rec[0] = 20;
    rec[1] = 0x23;
    rec[2..4].copy_from_slice(&handle.to_le_bytes());
    rec[4..8].copy_from_slice(&start_kib.to_le_bytes());
    rec[8..12].copy_from_slice(&end_kib.to_le_bytes());
    rec[0x0C..0x0E].copy_from_slice(&device.to_le_bytes());
    rec[0x0E..0x10].copy_from_slice(&0x1300u16.to_le_bytes());
    rec[0x10] = 1;
    rec[0x11] = pos;
    rec[0x12] = depth;
    rec.extend_from_slice(b"\0\0");
    rec
}

fn write_entries(root: &Path, entries: &[(&str, Vec<u8>)]) {
    for (name, blob) in entries {
        let d = root.join("sys/firmware/dmi/entries").join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("raw"), blob).unwrap();
    }
}

#[test]
fn raw_entries_two_way_interleave_and_extended_addresses() {
    // Two 16 GiB DIMMs answering one 32 GiB range at positions 1 and 2 (depth 1), a third
    // DIMM on a range of its own (position 0), one slot empty; one Type 19 range in KiB
    // fields and one in the extended (byte) fields.
    let dir = hwsurvey_testkit::scratch_tempdir();
    const KIB_32G: u32 = 32 << 20; // 32 GiB in KiB
    write_entries(
        dir.path(),
        &[
            ("17-0", type17(0x1100, "DIMM_A1", true)),
            ("17-1", type17(0x1101, "DIMM_B1", true)),
            ("17-2", type17(0x1102, "DIMM_C1", true)),
            ("17-3", type17(0x1103, "DIMM_D1", false)),
            ("19-0", type19(0x1300, 0, KIB_32G - 1, None)),
            (
                "19-1",
                type19(0x1301, 0, 0, Some((0x8_0000_0000, 0xB_FFFF_FFFF))),
            ),
            ("20-0", type20(0x1400, 0x1100, 0, KIB_32G - 1, 1, 1)),
            ("20-1", type20(0x1401, 0x1101, 0, KIB_32G - 1, 2, 1)),
            (
                "20-2",
                type20(0x1402, 0x1102, KIB_32G, KIB_32G + (16 << 20) - 1, 0, 0),
            ),
        ],
    );
    let mem = memory::probe(&SysRoot::new(dir.path()));
    let s = mem.smbios.known().unwrap();
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    assert_eq!(
        s.array_mappings
            .iter()
            .map(|a| (a.start_address, a.end_address, a.partition_width))
            .collect::<Vec<_>>(),
        [
            (0, 0x7_FFFF_FFFF, Some(2)),
            (0x8_0000_0000, 0xB_FFFF_FFFF, Some(2))
        ]
    );
    assert_eq!(
        s.device_mappings
            .iter()
            .map(|d| (
                d.device_handle,
                d.interleave_position,
                d.interleaved_data_depth
            ))
            .collect::<Vec<_>>(),
        [
            (Some(0x1100), Some(1), Some(1)),
            (Some(0x1101), Some(2), Some(1)),
            (Some(0x1102), Some(0), Some(0))
        ]
    );
    let i = mem.interleave.known().unwrap();
    assert_eq!(i.state, InterleaveState::Partly { ways: 2 });
    assert_eq!(i.array_mapped_bytes, 48 * GIB);
    assert_eq!(
        i.devices
            .iter()
            .map(|d| (d.locator.as_str(), d.sharing_range, d.interleaved))
            .collect::<Vec<_>>(),
        [
            ("DIMM_A1", 2, Some(true)),
            ("DIMM_B1", 2, Some(true)),
            ("DIMM_C1", 1, Some(false))
        ]
    );
    assert_eq!(
        interleave::state_words(i),
        "partly interleaved (up to 2-way); not interleaved: DIMM_C1"
    );
}

#[test]
fn raw_entries_unknown_positions_and_a_truncated_type20() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    let mut short = type20(0x1401, 0x1101, 0, 0, 0, 0);
    short.truncate(0x0A);
    short[1] = 0x0A;
    short.extend_from_slice(b"\0\0");
    write_entries(
        dir.path(),
        &[
            ("17-0", type17(0x1100, "DIMM_A1", true)),
            ("17-1", type17(0x1101, "DIMM_B1", true)),
            ("20-0", type20(0x1400, 0x1100, 0, 0xFFFF, 0xFF, 0xFF)),
            ("20-1", short),
        ],
    );
    let mem = memory::probe(&SysRoot::new(dir.path()));
    let s = mem.smbios.known().unwrap();
    assert_eq!(s.device_mappings.len(), 1);
    assert_eq!(s.device_mappings[0].interleave_position, None);
    assert_eq!(s.problems.len(), 1);
    let problem = s.problems[0].to_string();
    assert!(
        problem.contains("SMBIOS type 20 structure, handle 0x1401") && problem.contains("10 bytes"),
        "{problem}"
    );
    assert_eq!(
        unknown_detail(&mem.interleave),
        "every Type 20 record of the 1 populated device(s) gives Interleave Position FFh \
         (unknown) on a range of its own"
    );
}

#[test]
fn dmidecode_text_positions_and_a_record_without_addresses() {
    let text = "# dmidecode 3.3\nSMBIOS 3.2.0 present.\n\n\
        Handle 0x1100, DMI type 17, 84 bytes\nMemory Device\n\tArray Handle: 0x1000\n\
        \tSize: 16 GB\n\tLocator: A1\n\n\
        Handle 0x1101, DMI type 17, 84 bytes\nMemory Device\n\tArray Handle: 0x1000\n\
        \tSize: 16 GB\n\tLocator: A2\n\n\
        Handle 0x1400, DMI type 20, 35 bytes\nMemory Device Mapped Address\n\
        \tStarting Address: 0x00000000000\n\tEnding Address: 0x007FFFFFFFF\n\
        \tRange Size: 32 GB\n\tPhysical Device Handle: 0x1100\n\
        \tMemory Array Mapped Address Handle: 0x1300\n\tPartition Row Position: Unknown\n\
        \tInterleave Position: 1\n\tInterleaved Data Depth: 2\n\n\
        Handle 0x1401, DMI type 20, 35 bytes\nMemory Device Mapped Address\n\
        \tStarting Address: 0x00000000000\n\tEnding Address: 0x007FFFFFFFF\n\
        \tRange Size: 32 GB\n\tPhysical Device Handle: 0x1101\n\
        \tMemory Array Mapped Address Handle: 0x1300\n\tPartition Row Position: 1\n\
        \tInterleave Position: 2\n\tInterleaved Data Depth: Unknown\n\n\
        Handle 0x1402, DMI type 19, 31 bytes\nMemory Array Mapped Address\n\
        \tStarting Address: somewhere\n";
    let m = parse_dmidecode_text(text).unwrap();
    assert_eq!(
        m.device_mappings
            .iter()
            .map(|d| (
                d.partition_row_position,
                d.interleave_position,
                d.interleaved_data_depth
            ))
            .collect::<Vec<_>>(),
        [(None, Some(1), Some(2)), (Some(1), Some(2), None)]
    );
    assert_eq!(
        m.problems[0].to_string(),
        "dmidecode text, DMI type 19 record handle 0x1402: expected \"Starting Address: 0x...\" \
         and \"Ending Address: 0x...\", got \"somewhere\" and \"nothing\""
    );
    let i = interleave::derive(&m);
    assert_eq!(
        i.known().unwrap().state,
        InterleaveState::Interleaved { ways: 2 }
    );
}

//! B05 (fastfetch PR #1061): 48 GB DDR5 DIMMs reported as size 0. Size = 0x7FFF means "see
//! Extended Size" (49152 MiB here); 49152 x 2^20 = 12 x 2^32 wraps to 0 in 32-bit arithmetic.
//! The whole kind: every Size/Extended Size encoding, in the binary and the text path.

use hwsurvey_model::Probed;
use hwsurvey_probe::memory::{
    self, dmidecode::parse_dmidecode_text, population, smbios, ModuleSize, SmbiosSource,
};
use hwsurvey_probe::SysRoot;

const GIB: u64 = 1 << 30;
const B05_MODULE_BYTES: u64 = 51_539_607_552;

/// One SMBIOS 3.x Type 17 structure (0x5C bytes) with the given size fields and strings
/// 1 = Locator, 2 = Bank Locator, 3 = Part Number.
fn type17(
    handle: u16,
    size: u16,
    extended_mib: u32,
    locator: &str,
    bank: &str,
    mts: u16,
) -> Vec<u8> {
    let mut r = vec![0u8; 0x5C];
    r[0] = 17;
    r[1] = 0x5C;
    r[2..4].copy_from_slice(&handle.to_le_bytes());
    r[4..6].copy_from_slice(&0x0040u16.to_le_bytes()); // array handle
    r[0x08..0x0A].copy_from_slice(&64u16.to_le_bytes()); // total width
    r[0x0A..0x0C].copy_from_slice(&64u16.to_le_bytes()); // data width
    r[0x0C..0x0E].copy_from_slice(&size.to_le_bytes());
    r[0x0E] = 0x09; // DIMM
    r[0x10] = 1; // locator
    r[0x11] = 2; // bank locator
    r[0x12] = 0x22; // DDR5
    r[0x15..0x17].copy_from_slice(&mts.to_le_bytes());
    r[0x1A] = 3; // part number
    r[0x1B] = 2; // rank 2
    r[0x1C..0x20].copy_from_slice(&extended_mib.to_le_bytes());
    r[0x20..0x22].copy_from_slice(&mts.to_le_bytes());
    for s in [locator, bank, "F5-6800J3446F48G"] {
        r.extend_from_slice(s.as_bytes());
        r.push(0);
    }
    r.push(0);
    r
}

fn b05_table() -> Vec<u8> {
    let mut t = type17(0x0041, 0x7FFF, 0xC000, "Controller0-DIMM1", "BANK 0", 6800);
    t.extend(type17(
        0x0042,
        0x7FFF,
        0xC000,
        "Controller1-DIMM1",
        "BANK 0",
        6800,
    ));
    t.extend_from_slice(&[127, 4, 0xFF, 0xFE, 0, 0]); // end of table
    t
}

#[test]
fn b05_binary_extended_size() {
    let m = smbios::parse_structures(&b05_table(), Some((3, 5)), SmbiosSource::DmiTable).unwrap();
    assert_eq!(m.devices.len(), 2);
    for d in &m.devices {
        assert_eq!(
            d.size,
            ModuleSize::Installed {
                size_bytes: B05_MODULE_BYTES
            }
        );
        assert_eq!(d.memory_type.as_deref(), Some("DDR5"));
        assert_eq!(d.speed_mt_per_s, Some(6800));
    }
    let p = population::derive(&m);
    assert_eq!(p.total_installed_bytes, 96 * GIB);
    assert_eq!(p.module_sizes_bytes, vec![48 * GIB]);
    // Controller0 / Controller1: two channels at 6800 MT/s.
    let peak = p.peak_bandwidth.known().unwrap();
    assert_eq!(peak.populated_channels, 2);
    assert_eq!(peak.bandwidth_bytes_per_s, 2 * 6800 * 1_000_000 * 8);
}

#[test]
fn b05_from_sysfs_table() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    let t = dir.path().join("sys/firmware/dmi/tables");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("DMI"), b05_table()).unwrap();
    std::fs::write(t.join("smbios_entry_point"), b"_SM3_\x00\x18\x03\x05\x00").unwrap();
    let mem = memory::probe(&SysRoot::new(dir.path()));
    let p = mem.population.known().unwrap();
    assert_eq!(p.total_installed_bytes, 96 * GIB);
    assert!(memory::summary(&mem).contains("48 GiB"));
}

#[test]
fn every_size_encoding_in_binary() {
    let cases: [(u16, u32, ModuleSize); 7] = [
        (0, 0, ModuleSize::Empty),
        (0xFFFF, 0, ModuleSize::Unknown),
        (0x7FFF, 0, ModuleSize::Unknown),
        (
            0x2000,
            0,
            ModuleSize::Installed {
                size_bytes: 8 * GIB,
            },
        ),
        (
            0x8000 | 512,
            0,
            ModuleSize::Installed {
                size_bytes: 512 * 1024,
            },
        ),
        (
            0x7FFF,
            0x0002_0000,
            ModuleSize::Installed {
                size_bytes: 128 * GIB,
            },
        ),
        // 0x7FFE MiB: the largest size the plain field holds.
        (
            0x7FFE,
            0,
            ModuleSize::Installed {
                size_bytes: 0x7FFE << 20,
            },
        ),
    ];
    for (size, ext, want) in cases {
        let mut t = type17(1, size, ext, "DIMM_A1", "", 4800);
        t.extend_from_slice(&[127, 4, 0xFF, 0xFE, 0, 0]);
        let m = smbios::parse_structures(&t, None, SmbiosSource::DmiTable).unwrap();
        assert_eq!(m.devices[0].size, want, "size {size:#x} ext {ext:#x}");
    }
    // A 2.x structure too short to hold Extended Size: 0x7FFF is unknown, not 0 and not 32 GiB.
    let mut short = type17(1, 0x7FFF, 0xC000, "A1", "", 2133);
    short[1] = 0x1C;
    let strings: Vec<u8> = short[0x5C..].to_vec();
    short.truncate(0x1C);
    short.extend(strings);
    let m = smbios::parse_structures(&short, None, SmbiosSource::DmiTable).unwrap();
    assert_eq!(m.devices[0].size, ModuleSize::Unknown);
}

#[test]
fn b05_dmidecode_text_gb_and_mb_forms() {
    let Some(shared) = hwsurvey_testkit::shared() else {
        return;
    };
    let text = std::fs::read_to_string(shared.join("bugs/B05/dmidecode-memory.txt")).unwrap();
    let m = parse_dmidecode_text(&text).unwrap();
    assert_eq!(m.devices.len(), 2);
    // The reconstructed text has placeholder handles ("0x<H1>"): unknown, not 0.
    assert!(m.devices.iter().all(|d| d.handle.is_none()));
    for d in &m.devices {
        assert_eq!(d.size.size_bytes(), Some(B05_MODULE_BYTES));
    }
    let pop = population::derive(&m);
    assert_eq!(pop.total_installed_bytes, 96 * GIB);
    // Older dmidecode prints the same module as "49152 MB".
    let old = text.replace("Size: 48 GB", "Size: 49152 MB");
    let m = parse_dmidecode_text(&old).unwrap();
    assert!(m
        .devices
        .iter()
        .all(|d| d.size.size_bytes() == Some(B05_MODULE_BYTES)));
    assert!(matches!(
        population::derive(&m).peak_bandwidth,
        Probed::Known(_)
    ));
}

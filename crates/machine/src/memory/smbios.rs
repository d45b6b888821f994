//! Binary SMBIOS: the whole table (`/sys/firmware/dmi/tables/DMI`) or per-structure blobs
//! (`/sys/firmware/dmi/entries/<type>-<n>/raw`), decoded with the `smbios-lib` crate into
//! [`SmbiosMemory`] ([`parse_structures`]). Field offsets and encodings follow DMTF DSP0134
//! (3.x): Type 16 section 7.17, Type 17 section 7.18, Type 19 section 7.20, Type 20 section
//! 7.21. Strings are kept with [`crate::dmi::clean`], as from dmidecode text. The readers
//! are `hwsurvey_probe::memory::smbios`.
//!
//! Size decoding (7.18.5, and the whole B05 kind): Size 0 = no module; 0xFFFF = unknown;
//! 0x7FFF = the size is in Extended Size (offset 0x1C, bits 30:0, MiB) — modules of
//! 32 GiB - 1 MiB and more; otherwise bit 15 set = KiB granularity, clear = MiB. All sizes are
//! computed in u64 bytes (a 48 GiB module is 12 x 2^32 bytes and wraps to 0 in 32 bits).

use hwsurvey_model::Unknown;
use smbioslib::{
    MemorySize, MemorySizeExtended, MemorySpeed, MemorySpeedExtended, SMBiosData,
    SMBiosMemoryArrayMappedAddress, SMBiosMemoryDevice, SMBiosMemoryDeviceMappedAddress,
    SMBiosPhysicalMemoryArray, SMBiosStruct, SMBiosVersion, UndefinedStruct,
};

use super::{
    ArrayMappedAddress, DeviceMappedAddress, MemoryArray, MemoryDevice, ModuleSize, SmbiosMemory,
    SmbiosSource,
};
use crate::ParseError;

/// A string of the structure, kept as [`crate::dmi::clean`] keeps SMBIOS strings.
fn string_of(s: Option<String>) -> Option<String> {
    crate::dmi::clean(&s?)
}

/// SMBIOS version `(major, minor)` from an entry point structure (`_SM3_`: bytes 7, 8;
/// `_SM_`: bytes 6, 7). `None` when the anchor is neither.
pub fn parse_entry_point(bytes: &[u8]) -> Option<(u8, u8)> {
    if bytes.starts_with(b"_SM3_") {
        Some((*bytes.get(7)?, *bytes.get(8)?))
    } else if bytes.starts_with(b"_SM_") {
        Some((*bytes.get(6)?, *bytes.get(7)?))
    } else {
        None
    }
}

/// Combines Size and Extended Size into a [`ModuleSize`] (see the module docs).
/// `None` fields (structure too short to hold them) mean unknown, or for Extended Size,
/// absent: a 0x7FFF Size without a usable Extended Size is [`ModuleSize::Unknown`].
pub fn module_size(size: Option<MemorySize>, extended: Option<MemorySizeExtended>) -> ModuleSize {
    const MIB: u64 = 1 << 20;
    match size {
        None | Some(MemorySize::Unknown) => ModuleSize::Unknown,
        Some(MemorySize::NotInstalled) => ModuleSize::Empty,
        Some(MemorySize::Kilobytes(k)) => ModuleSize::Installed {
            size_bytes: u64::from(k) * 1024,
        },
        Some(MemorySize::Megabytes(m)) => ModuleSize::Installed {
            size_bytes: u64::from(m) * MIB,
        },
        Some(MemorySize::SeeExtendedSize) => match extended {
            Some(MemorySizeExtended::Megabytes(m)) => ModuleSize::Installed {
                size_bytes: u64::from(m) * MIB,
            },
            _ => ModuleSize::Unknown,
        },
    }
}

fn speed(base: Option<MemorySpeed>, ext: Option<MemorySpeedExtended>) -> Option<u32> {
    match base? {
        MemorySpeed::Unknown => None,
        MemorySpeed::MTs(v) => Some(u32::from(v)),
        MemorySpeed::SeeExtendedSpeed => match ext? {
            MemorySpeedExtended::MTs(v) => Some(v),
            _ => None,
        },
    }
}

/// DSP0134 7.18.2 Memory Type byte as words.
pub fn memory_type_name(raw: u8) -> Option<&'static str> {
    Some(match raw {
        0x01 => "Other",
        0x03 => "DRAM",
        0x04 => "EDRAM",
        0x05 => "VRAM",
        0x06 => "SRAM",
        0x07 => "RAM",
        0x08 => "ROM",
        0x09 => "Flash",
        0x0A => "EEPROM",
        0x0B => "FEPROM",
        0x0C => "EPROM",
        0x0D => "CDRAM",
        0x0E => "3DRAM",
        0x0F => "SDRAM",
        0x10 => "SGRAM",
        0x11 => "RDRAM",
        0x12 => "DDR",
        0x13 => "DDR2",
        0x14 => "DDR2 FB-DIMM",
        0x18 => "DDR3",
        0x19 => "FBD2",
        0x1A => "DDR4",
        0x1B => "LPDDR",
        0x1C => "LPDDR2",
        0x1D => "LPDDR3",
        0x1E => "LPDDR4",
        0x1F => "Logical non-volatile device",
        0x20 => "HBM",
        0x21 => "HBM2",
        0x22 => "DDR5",
        0x23 => "LPDDR5",
        0x24 => "HBM3",
        _ => return None,
    })
}

/// DSP0134 7.18.1 Form Factor byte as words.
pub fn form_factor_name(raw: u8) -> Option<&'static str> {
    Some(match raw {
        0x01 => "Other",
        0x03 => "SIMM",
        0x04 => "SIP",
        0x05 => "Chip",
        0x06 => "DIP",
        0x07 => "ZIP",
        0x08 => "Proprietary Card",
        0x09 => "DIMM",
        0x0A => "TSOP",
        0x0B => "Row of chips",
        0x0C => "RIMM",
        0x0D => "SODIMM",
        0x0E => "SRIMM",
        0x0F => "FB-DIMM",
        0x10 => "Die",
        0x11 => "CAMM",
        _ => return None,
    })
}

fn ecc_name(raw: u8) -> Option<&'static str> {
    Some(match raw {
        0x01 => "Other",
        0x03 => "None",
        0x04 => "Parity",
        0x05 => "Single-bit ECC",
        0x06 => "Multi-bit ECC",
        0x07 => "CRC",
        _ => return None,
    })
}

fn use_name(raw: u8) -> Option<&'static str> {
    Some(match raw {
        0x01 => "Other",
        0x03 => "System Memory",
        0x04 => "Video Memory",
        0x05 => "Flash Memory",
        0x06 => "Non-volatile RAM",
        0x07 => "Cache Memory",
        _ => return None,
    })
}

fn string_at(s: &UndefinedStruct, offset: usize) -> Option<String> {
    string_of(s.get_field_string(offset).to_utf8_lossy())
}

fn device(s: &UndefinedStruct) -> MemoryDevice {
    let d = SMBiosMemoryDevice::new(s);
    let type_raw = s.get_field_byte(0x12);
    let form_raw = s.get_field_byte(0x0E);
    let width = |v: Option<u16>| v.filter(|w| *w != 0 && *w != 0xFFFF);
    MemoryDevice {
        handle: Some(s.header.handle().0),
        array_handle: d.physical_memory_array_handle().map(|h| h.0),
        locator: string_of(d.device_locator().to_utf8_lossy()),
        bank_locator: string_of(d.bank_locator().to_utf8_lossy()),
        size: module_size(d.size(), d.extended_size()),
        memory_type: type_raw.and_then(memory_type_name).map(str::to_string),
        memory_type_raw: type_raw,
        form_factor: form_raw.and_then(form_factor_name).map(str::to_string),
        speed_mt_per_s: speed(d.speed(), d.extended_speed()),
        configured_speed_mt_per_s: speed(
            d.configured_memory_speed(),
            d.extended_configured_memory_speed(),
        ),
        rank: d.attributes().map(|a| a & 0x0F).filter(|r| *r != 0),
        manufacturer: string_of(d.manufacturer().to_utf8_lossy()),
        part_number: string_of(d.part_number().to_utf8_lossy()),
        total_width_bits: width(d.total_width()),
        data_width_bits: width(d.data_width()),
    }
}

fn array(s: &UndefinedStruct) -> MemoryArray {
    let a = SMBiosPhysicalMemoryArray::new(s);
    let max_kib = s.get_field_dword(0x07);
    let max_capacity_bytes = match max_kib {
        Some(0x8000_0000) => a.extended_maximum_capacity(),
        Some(k) => Some(u64::from(k) * 1024),
        None => None,
    };
    MemoryArray {
        handle: Some(s.header.handle().0),
        usage: s
            .get_field_byte(0x05)
            .and_then(use_name)
            .map(str::to_string),
        error_correction: s
            .get_field_byte(0x06)
            .and_then(ecc_name)
            .map(str::to_string),
        max_capacity_bytes,
        slots_declared: a.number_of_memory_devices().map(u32::from),
    }
}

/// A Type 19/20 address range in bytes, inclusive (DSP0134 7.20.1 / 7.21.1): Starting and
/// Ending Address count KiB; Starting Address FFFFFFFFh means the Extended Starting/Ending
/// Address (QWORDs, bytes) hold the range. `None` when a field the encoding needs is absent.
fn mapped_range(
    start_kib: Option<u32>,
    end_kib: Option<u32>,
    extended: impl FnOnce() -> (Option<u64>, Option<u64>),
) -> Option<(u64, u64)> {
    match (start_kib?, end_kib?) {
        (0xFFFF_FFFF, _) => match extended() {
            (Some(s), Some(e)) => Some((s, e)),
            _ => None,
        },
        (s, e) => Some((u64::from(s) * 1024, u64::from(e) * 1024 + 1023)),
    }
}

/// A Type 19 record; `None` when it is too short to hold its range.
fn array_mapping(s: &UndefinedStruct) -> Option<ArrayMappedAddress> {
    let a = SMBiosMemoryArrayMappedAddress::new(s);
    let (start_address, end_address) =
        mapped_range(a.starting_address(), a.ending_address(), || {
            (a.extended_starting_address(), a.extended_ending_address())
        })?;
    Some(ArrayMappedAddress {
        handle: Some(s.header.handle().0),
        start_address,
        end_address,
        array_handle: a.physical_memory_array_handle().map(|h| h.0),
        partition_width: a.partition_width().filter(|w| *w != 0),
    })
}

/// A Type 20 record; `None` when it is too short to hold its range.
fn device_mapping(s: &UndefinedStruct) -> Option<DeviceMappedAddress> {
    let d = SMBiosMemoryDeviceMappedAddress::new(s);
    let (start_address, end_address) =
        mapped_range(d.starting_address(), d.ending_address(), || {
            (d.extended_starting_address(), d.extended_ending_address())
        })?;
    let known = |v: Option<u8>| v.filter(|b| *b != 0xFF);
    Some(DeviceMappedAddress {
        handle: Some(s.header.handle().0),
        start_address,
        end_address,
        device_handle: d.memory_device_handle().map(|h| h.0),
        array_mapping_handle: d.memory_array_mapped_address_handle().map(|h| h.0),
        partition_row_position: known(d.partition_row_position()).filter(|p| *p != 0),
        interleave_position: known(d.interleave_position()),
        interleaved_data_depth: known(d.interleaved_data_depth()),
    })
}

/// A Type 19/20 structure whose formatted area ends before the address fields it needs.
fn too_short(s: &UndefinedStruct) -> Unknown {
    Unknown::Invalid {
        path: format!(
            "SMBIOS type {} structure, handle 0x{:04X}",
            s.header.struct_type(),
            s.header.handle().0
        ),
        detail: format!(
            "expected Starting and Ending Address (offsets 04h-0Bh, and the Extended \
             addresses when Starting Address is FFFFFFFFh) in the formatted area, got {} bytes",
            s.header.length()
        ),
    }
}

/// Decodes the memory records of a table of SMBIOS structures (the DMI table, or per-entry
/// blobs laid end to end). Pure; never panics on any bytes. Returns `None` when the table
/// holds no Type 17 record.
pub fn parse_structures(
    bytes: &[u8],
    version: Option<(u8, u8)>,
    source: SmbiosSource,
) -> Option<SmbiosMemory> {
    let smbios_version = version.map(|(major, minor)| format!("{major}.{minor}"));
    let version = version.map(|(major, minor)| SMBiosVersion::new(major, minor, 0));
    let data = SMBiosData::from_vec_and_version(bytes.to_vec(), version);
    let mut out = SmbiosMemory {
        source,
        smbios_version,
        system_vendor: None,
        processors: Vec::new(),
        arrays: Vec::new(),
        devices: Vec::new(),
        array_mappings: Vec::new(),
        device_mappings: Vec::new(),
        problems: Vec::new(),
    };
    for s in data.iter() {
        match s.header.struct_type() {
            1 => out.system_vendor = out.system_vendor.take().or_else(|| string_at(s, 0x04)),
            4 => {
                // Status (offset 0x18) bit 6: socket populated.
                let populated = s.get_field_byte(0x18).map(|b| b & 0x40 != 0);
                if populated != Some(false) {
                    if let Some(v) = string_at(s, 0x10) {
                        out.processors.push(v);
                    }
                }
            }
            16 => {
                let a = array(s);
                // Only system memory arrays hold DIMMs that count (skip cache/flash arrays).
                if a.usage.as_deref().is_none_or(|u| u == "System Memory") {
                    out.arrays.push(a);
                }
            }
            17 => out.devices.push(device(s)),
            19 => match array_mapping(s) {
                Some(a) => out.array_mappings.push(a),
                None => out.problems.push(too_short(s)),
            },
            20 => match device_mapping(s) {
                Some(d) => out.device_mappings.push(d),
                None => out.problems.push(too_short(s)),
            },
            _ => {}
        }
    }
    if out.devices.is_empty() {
        None
    } else {
        Some(out)
    }
}

/// True when the structures laid end to end reach a Type 127 End-of-Table structure.
pub fn ends_with_end_of_table(bytes: &[u8]) -> bool {
    let mut i = 0usize;
    while let (Some(&t), Some(&len)) = (bytes.get(i), bytes.get(i + 1)) {
        if t == 127 {
            return true;
        }
        if len < 4 {
            return false;
        }
        let strings = i + usize::from(len);
        let Some(rest) = bytes.get(strings..) else {
            return false;
        };
        match rest.windows(2).position(|w| w == [0, 0]) {
            Some(p) => i = strings + p + 2,
            None => return false,
        }
    }
    false
}

/// Checks that a per-entry blob read from `path` is one whole structure of the type its folder names:
/// header type byte, formatted length (>= 4, within the blob), strings ending in a double NUL.
pub fn check_blob(path: &str, dmi_type: u8, blob: Vec<u8>) -> Result<Vec<u8>, ParseError> {
    let expected = format!(
        "one SMBIOS type {dmi_type} structure (header, formatted area, strings, double NUL)"
    );
    let describe = |b: &[u8]| {
        let head: Vec<String> = b.iter().take(16).map(|x| format!("{x:02x}")).collect();
        format!("{} bytes: {}", b.len(), head.join(" "))
    };
    let ok = blob.first() == Some(&dmi_type)
        && blob
            .get(1)
            .is_some_and(|&len| len >= 4 && usize::from(len) + 2 <= blob.len())
        && blob.ends_with(&[0, 0]);
    if ok {
        Ok(blob)
    } else {
        Err(ParseError::new(path, expected, &describe(&blob)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_size_encoding() {
        let ms = |raw: u16, ext: u32| {
            module_size(
                Some(MemorySize::from(raw)),
                Some(MemorySizeExtended::from(ext)),
            )
        };
        assert_eq!(ms(0, 0), ModuleSize::Empty);
        assert_eq!(ms(0xFFFF, 0), ModuleSize::Unknown);
        assert_eq!(
            ms(0x4000, 0),
            ModuleSize::Installed {
                size_bytes: 16 << 30
            }
        );
        // KiB granularity: 0x8100 = 256 KiB.
        assert_eq!(
            ms(0x8100, 0),
            ModuleSize::Installed {
                size_bytes: 256 << 10
            }
        );
        // B05: 0x7FFF + Extended Size 0xC000 MiB = 48 GiB, not 0.
        assert_eq!(
            ms(0x7FFF, 0xC000),
            ModuleSize::Installed {
                size_bytes: 51_539_607_552
            }
        );
        // Bit 31 of Extended Size is reserved.
        assert_eq!(
            ms(0x7FFF, 0x8001_0000),
            ModuleSize::Installed {
                size_bytes: 64 << 30
            }
        );
        assert_eq!(ms(0x7FFF, 0), ModuleSize::Unknown);
        assert_eq!(
            module_size(Some(MemorySize::from(0x7FFF)), None),
            ModuleSize::Unknown
        );
        assert_eq!(module_size(None, None), ModuleSize::Unknown);
    }

    #[test]
    fn entry_point_versions() {
        assert_eq!(
            parse_entry_point(b"_SM3_\x00\x18\x03\x02\x00"),
            Some((3, 2))
        );
        assert_eq!(parse_entry_point(b"_SM_\x00\x1f\x02\x08"), Some((2, 8)));
        assert_eq!(parse_entry_point(b"_SM3_"), None);
        assert_eq!(parse_entry_point(b"junk"), None);
    }

    /// A Type 17 structure (SMBIOS 2.3 layout, 27 bytes) with the strings `locator`, `bank`,
    /// `manufacturer` and `part`, then the end of the table.
    fn one_dimm(manufacturer: &str, part: &str) -> Vec<u8> {
        let mut t = vec![17u8, 0x1B, 0x00, 0x11]; // type, length, handle 0x1100
        t.extend([0xFF, 0xFF, 0xFE, 0xFF, 72, 0, 64, 0]); // array, error info, widths
        t.extend([0x00, 0x20, 0x09, 0x00, 1, 2, 0x1A, 0x80, 0x00]); // 8 GiB, DIMM, strings, DDR4
        t.extend([0x80, 0x0C, 3, 0, 0, 4]); // 3200 MT/s, manufacturer 3, part number 4
        for s in ["DIMM A1", "BANK 0", manufacturer, part] {
            t.extend(s.bytes());
            t.push(0);
        }
        t.push(0);
        t.extend([127, 4, 0xFF, 0xFF, 0, 0]);
        t
    }

    /// "Not Provided" (HPE's placeholder for a DIMM's manufacturer and part number) is none
    /// from the DMI table as from dmidecode text: one list of placeholders (the table's own
    /// list knew only "Not Specified" and "Unknown", and kept it).
    #[test]
    fn the_tables_strings_drop_the_placeholders_dmidecode_text_drops() {
        let m = parse_structures(
            &one_dimm("Not Provided", "NOT PROVIDED"),
            Some((2, 8)),
            SmbiosSource::DmiTable,
        )
        .unwrap();
        let d = &m.devices[0];
        assert_eq!(d.locator.as_deref(), Some("DIMM A1"));
        assert_eq!(
            d.size,
            ModuleSize::Installed {
                size_bytes: 8 << 30
            }
        );
        assert_eq!(
            (d.manufacturer.as_deref(), d.part_number.as_deref()),
            (None, None)
        );
        let m = parse_structures(
            &one_dimm("Samsung", "M393A1K43BB1-CTD"),
            Some((2, 8)),
            SmbiosSource::DmiTable,
        )
        .unwrap();
        assert_eq!(m.devices[0].manufacturer.as_deref(), Some("Samsung"));
        assert_eq!(
            m.devices[0].part_number.as_deref(),
            Some("M393A1K43BB1-CTD")
        );
        let text = "Handle 0x1100, DMI type 17, 27 bytes\nMemory Device\n\tSize: 8 GB\n\
                    \tLocator: DIMM A1\n\tManufacturer: Not Provided\n\tPart Number: NOT PROVIDED\n";
        let t = crate::memory::dmidecode::parse_dmidecode_text(text).unwrap();
        assert_eq!(
            (
                t.devices[0].manufacturer.clone(),
                t.devices[0].part_number.clone()
            ),
            (d.manufacturer.clone(), d.part_number.clone())
        );
    }
}

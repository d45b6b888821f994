//! The memory records of saved `dmidecode` text (split by [`crate::dmidecode`]), versions 2.12
//! through 3.x, parsed into the same [`SmbiosMemory`] as the binary tables
//! ([`parse_dmidecode_text`]).
//!
//! Differences between versions handled here: 2.x prints the rated speed as `2133 MHz` and
//! names the configured speed `Configured Clock Speed`; 3.x prints `MT/s` and `Configured
//! Memory Speed`. dmidecode prints sizes with binary multiples (its `kB`/`MB`/`GB`/`TB` are
//! KiB/MiB/GiB/TiB, `dmi_print_memory_size` steps by 1024); older versions print `16384 MB`,
//! newer `16 GB`: both are accepted ([`parse_dmidecode_size_bytes`]). Empty slots read `No
//! Module Installed`. String fields (locators, manufacturer, part number) are kept with
//! [`crate::dmi::clean`], the placeholders of the DMI table's strings dropped alike; the
//! words dmidecode prints for an enumerated byte (`Type`, `Form Factor`, `Use`, `Error
//! Correction Type`) are kept as the table decoder names them, `Unknown` and `<OUT OF SPEC>`
//! being `None` (so `Error Correction Type: None` is no ECC, as from the table).
//!
//! Type 19 (`Memory Array Mapped Address`) and Type 20 (`Memory Device Mapped Address`)
//! records are read too: `Starting Address` / `Ending Address` are byte addresses in hex
//! (dmidecode has already scaled the KiB fields). dmidecode prints `Interleave Position` and
//! `Interleaved Data Depth` only when the byte is not 0 (every version from 2.x to 3.x:
//! `dmi_mapped_address_interleave_position`), so a Type 20 record without them holds 0
//! (not interleaved, DSP0134 7.21); `Unknown` is FFh.
//!
//! The reader of such a text from a file the user named (`hwsurvey probe --dmidecode FILE`)
//! is `hwsurvey_probe::memory::dmidecode`.

use hwsurvey_model::Unknown;

use super::{
    ArrayMappedAddress, DeviceMappedAddress, MemoryArray, MemoryDevice, ModuleSize, SmbiosMemory,
    SmbiosSource,
};
use crate::dmi::clean;
use crate::dmidecode::{parse_hex_u16, split_records, Record};

/// Why a `dmidecode` text could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DmidecodeError {
    /// Nothing but whitespace.
    #[error(
        "empty: expected `dmidecode` output with \"Handle 0x..., DMI type 17\" Memory Device records"
    )]
    Empty,
    /// No `DMI type 17` (Memory Device) record in the text.
    #[error(
        "expected `dmidecode` output with \"Handle 0x..., DMI type 17\" Memory Device records, \
         found none in {lines} lines ({}; first line: {})",
        types_found(dmi_types),
        hwsurvey_model::text::quote(first_line)
    )]
    NoMemoryDevices {
        /// Lines in the text.
        lines: usize,
        /// The DMI types of the records the text does hold, ascending, each once.
        dmi_types: Vec<u8>,
        /// The first non-empty line, to tell what was given instead.
        first_line: String,
    },
}

/// What a text without Type 17 records holds instead: the DMI types of its records, or none.
fn types_found(types: &[u8]) -> String {
    if types.is_empty() {
        return "no \"Handle 0x..., DMI type N\" record at all".to_string();
    }
    let list: Vec<String> = types.iter().map(u8::to_string).collect();
    format!(
        "records of DMI types {} only: save `dmidecode -t memory` or the whole `dmidecode` output",
        list.join(", ")
    )
}

/// A string field of a record, kept as [`clean`] keeps SMBIOS strings.
fn string(v: Option<&str>) -> Option<String> {
    clean(v?)
}

/// The word dmidecode prints for an enumerated byte (`DDR4`, `DIMM`, `System Memory`,
/// `Single-bit ECC`, `None`), trimmed; `None` for `Unknown`, `<OUT OF SPEC>` and an empty
/// value, which the table decoder has no name for either.
fn word(v: Option<&str>) -> Option<String> {
    let t = v?.trim();
    let unnamed = ["", "Unknown", "<OUT OF SPEC>"];
    (!unnamed.iter().any(|u| t.eq_ignore_ascii_case(u))).then(|| t.to_string())
}

/// A size as dmidecode prints it (`8 GB`, `16384 MB`, `512 kB`, `2 TB`, `1024 bytes`), in
/// bytes. Units are binary multiples (see the module docs). `None` for anything else.
pub fn parse_dmidecode_size_bytes(text: &str) -> Option<u64> {
    let mut words = text.split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    let shift = match words.next()? {
        "bytes" | "B" => 0,
        "kB" | "KB" | "KiB" => 10,
        "MB" | "MiB" => 20,
        "GB" | "GiB" => 30,
        "TB" | "TiB" => 40,
        _ => return None,
    };
    value.checked_mul(1u64 << shift)
}

fn module_size(text: Option<&str>) -> ModuleSize {
    let Some(t) = text.map(str::trim) else {
        return ModuleSize::Unknown;
    };
    if t.eq_ignore_ascii_case("No Module Installed") || t.eq_ignore_ascii_case("Not Installed") {
        return ModuleSize::Empty;
    }
    match parse_dmidecode_size_bytes(t) {
        Some(0) => ModuleSize::Empty,
        Some(size_bytes) => ModuleSize::Installed { size_bytes },
        None => ModuleSize::Unknown,
    }
}

/// `3200 MT/s`, `2133 MHz` (dmidecode 2.x, meaning MT/s), `Unknown` -> MT/s.
fn parse_speed(text: Option<&str>) -> Option<u32> {
    let mut words = text?.split_whitespace();
    let value: u32 = words.next()?.parse().ok()?;
    match words.next()? {
        "MT/s" | "MHz" => (value != 0).then_some(value),
        _ => None,
    }
}

/// `0x0007FFFFFFF` -> the address.
fn parse_hex_u64(text: Option<&str>) -> Option<u64> {
    let t = text?.trim();
    let t = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"))?;
    u64::from_str_radix(t, 16).ok()
}

/// A Type 20 position byte as dmidecode prints it: absent = 0 (dmidecode omits a 0 byte),
/// a number, or `Unknown` (FFh) -> `None`.
fn parse_position(text: Option<&str>) -> Option<u8> {
    match text.map(str::trim) {
        None => Some(0),
        Some(t) => t.parse().ok(),
    }
}

/// A Type 19 record; `None` without a readable Starting and Ending Address.
fn array_mapping(r: &Record<'_>) -> Option<ArrayMappedAddress> {
    Some(ArrayMappedAddress {
        handle: r.handle,
        start_address: parse_hex_u64(r.get("Starting Address"))?,
        end_address: parse_hex_u64(r.get("Ending Address"))?,
        array_handle: r.get("Physical Array Handle").and_then(parse_hex_u16),
        partition_width: r
            .get("Partition Width")
            .and_then(|v| v.trim().parse().ok())
            .filter(|w| *w != 0),
    })
}

/// A Type 20 record; `None` without a readable Starting and Ending Address.
fn device_mapping(r: &Record<'_>) -> Option<DeviceMappedAddress> {
    Some(DeviceMappedAddress {
        handle: r.handle,
        start_address: parse_hex_u64(r.get("Starting Address"))?,
        end_address: parse_hex_u64(r.get("Ending Address"))?,
        device_handle: r.get("Physical Device Handle").and_then(parse_hex_u16),
        array_mapping_handle: r
            .get("Memory Array Mapped Address Handle")
            .and_then(parse_hex_u16),
        partition_row_position: r
            .get("Partition Row Position")
            .and_then(|v| v.trim().parse().ok())
            .filter(|p| *p != 0),
        interleave_position: parse_position(r.get("Interleave Position")),
        interleaved_data_depth: parse_position(r.get("Interleaved Data Depth")),
    })
}

/// `72 bits` -> 72.
fn parse_bits(text: Option<&str>) -> Option<u16> {
    let mut words = text?.split_whitespace();
    let value: u16 = words.next()?.parse().ok()?;
    (words.next() == Some("bits") && value != 0).then_some(value)
}

/// Parses `dmidecode` text (see the module docs). Pure; never panics. Values a record lacks
/// or that read `Unknown` are `None`; a text with no Type 17 record is an error.
pub fn parse_dmidecode_text(text: &str) -> Result<SmbiosMemory, DmidecodeError> {
    if text.trim().is_empty() {
        return Err(DmidecodeError::Empty);
    }
    let crate::dmidecode::DmidecodeRecords {
        records,
        dmidecode_version,
        smbios_version,
    } = split_records(text);
    let mut out = SmbiosMemory {
        source: SmbiosSource::DmidecodeText {
            dmidecode_version,
            file: None,
        },
        smbios_version,
        system_vendor: None,
        processors: Vec::new(),
        arrays: Vec::new(),
        devices: Vec::new(),
        array_mappings: Vec::new(),
        device_mappings: Vec::new(),
        problems: Vec::new(),
    };
    for r in &records {
        match r.dmi_type {
            Some(1) => {
                out.system_vendor = out
                    .system_vendor
                    .take()
                    .or_else(|| string(r.get("Manufacturer")));
            }
            Some(4) => {
                let unpopulated = r
                    .get("Status")
                    .is_some_and(|s| s.eq_ignore_ascii_case("Unpopulated"));
                if !unpopulated {
                    if let Some(v) = string(r.get("Version")) {
                        out.processors.push(v);
                    }
                }
            }
            Some(16) => {
                let usage = word(r.get("Use"));
                if usage.as_deref().is_some_and(|u| u != "System Memory") {
                    continue;
                }
                out.arrays.push(MemoryArray {
                    handle: r.handle,
                    usage,
                    error_correction: word(r.get("Error Correction Type")),
                    max_capacity_bytes: r
                        .get("Maximum Capacity")
                        .and_then(parse_dmidecode_size_bytes),
                    slots_declared: r.get("Number Of Devices").and_then(|v| v.parse().ok()),
                });
            }
            Some(17) => out.devices.push(MemoryDevice {
                handle: r.handle,
                array_handle: r.get("Array Handle").and_then(parse_hex_u16),
                locator: string(r.get("Locator")),
                bank_locator: string(r.get("Bank Locator")),
                size: module_size(r.get("Size")),
                memory_type: word(r.get("Type")),
                memory_type_raw: None,
                form_factor: word(r.get("Form Factor")),
                speed_mt_per_s: parse_speed(r.get("Speed")),
                configured_speed_mt_per_s: parse_speed(
                    r.get("Configured Memory Speed")
                        .or_else(|| r.get("Configured Clock Speed")),
                ),
                rank: r
                    .get("Rank")
                    .and_then(|v| v.parse().ok())
                    .filter(|r| *r != 0),
                manufacturer: string(r.get("Manufacturer")),
                part_number: string(r.get("Part Number")),
                total_width_bits: parse_bits(r.get("Total Width")),
                data_width_bits: parse_bits(r.get("Data Width")),
            }),
            Some(t @ (19 | 20)) => {
                let decoded = if t == 19 {
                    array_mapping(r).map(|a| out.array_mappings.push(a))
                } else {
                    device_mapping(r).map(|d| out.device_mappings.push(d))
                };
                if decoded.is_none() {
                    out.problems.push(Unknown::Invalid {
                        path: format!(
                            "dmidecode text, DMI type {t} record{}",
                            r.handle
                                .map(|h| format!(" handle 0x{h:04X}"))
                                .unwrap_or_default()
                        ),
                        detail: format!(
                            "expected \"Starting Address: 0x...\" and \"Ending Address: 0x...\", \
                             got {:?} and {:?}",
                            r.get("Starting Address").unwrap_or("nothing"),
                            r.get("Ending Address").unwrap_or("nothing")
                        ),
                    });
                }
            }
            _ => {}
        }
    }
    if out.devices.is_empty() {
        let mut dmi_types: Vec<u8> = records.iter().filter_map(|r| r.dmi_type).collect();
        dmi_types.sort_unstable();
        dmi_types.dedup();
        return Err(DmidecodeError::NoMemoryDevices {
            lines: text.lines().count(),
            dmi_types,
            first_line: text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .chars()
                .take(120)
                .collect(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_both_forms() {
        assert_eq!(parse_dmidecode_size_bytes("16384 MB"), Some(16 << 30));
        assert_eq!(parse_dmidecode_size_bytes("16 GB"), Some(16 << 30));
        assert_eq!(parse_dmidecode_size_bytes("48 GB"), Some(51_539_607_552));
        assert_eq!(parse_dmidecode_size_bytes("512 kB"), Some(512 << 10));
        assert_eq!(parse_dmidecode_size_bytes("2 TB"), Some(2 << 40));
        assert_eq!(parse_dmidecode_size_bytes("lots"), None);
        assert_eq!(module_size(Some("No Module Installed")), ModuleSize::Empty);
        assert_eq!(module_size(Some("Unknown")), ModuleSize::Unknown);
    }

    #[test]
    fn speeds_old_and_new() {
        assert_eq!(parse_speed(Some("2133 MHz")), Some(2133));
        assert_eq!(parse_speed(Some("3200 MT/s")), Some(3200));
        assert_eq!(parse_speed(Some("Unknown")), None);
    }

    const TWO_SLOTS: &str = "# dmidecode 3.2\nSMBIOS 3.2 present.\n\n\
        Handle 0x1100, DMI type 17, 84 bytes\nMemory Device\n\tArray Handle: 0x1000\n\
        \tSize: 8 GB\n\tLocator: A1\n\tType: DDR4\n\tSpeed: 3200 MT/s\n\tRank: 1\n\
        \tConfigured Memory Speed: 2400 MT/s\n\n\
        Handle 0x1101, DMI type 17, 84 bytes\nMemory Device\n\tArray Handle: 0x1000\n\
        \tSize: No Module Installed\n\tLocator: A2\n\tType: Unknown\n";

    /// The same text with its tabs turned into spaces (an editor, a web page): the fields are
    /// still fields; before, every slot came out "populated, size unknown".
    #[test]
    fn fields_indented_with_spaces() {
        let tabs = parse_dmidecode_text(TWO_SLOTS).unwrap();
        assert_eq!(
            tabs.devices[0].size,
            ModuleSize::Installed {
                size_bytes: 8 << 30
            }
        );
        assert_eq!(tabs.devices[1].size, ModuleSize::Empty);
        for spaces in ["    ", "        ", " "] {
            let text = TWO_SLOTS.replace('\t', spaces);
            assert_eq!(parse_dmidecode_text(&text).unwrap(), tabs, "{spaces:?}");
        }
        // a list under a field (deeper) is not read as fields
        let listed = TWO_SLOTS.replace("\tRank: 1\n", "\tRank: 1\n\tFeatures:\n\t\tSize: 1 GB\n");
        assert_eq!(parse_dmidecode_text(&listed).unwrap(), tabs);
    }

    #[test]
    fn not_dmidecode_is_an_error() {
        let e = parse_dmidecode_text("hello\nworld\n").unwrap_err();
        assert!(e.to_string().contains("hello"), "{e}");
    }

    /// A DIMM's "Not Provided" (an HPE part number) is a placeholder from dmidecode text as
    /// from the DMI table; `Error Correction Type: None` is no ECC, as the table names it.
    #[test]
    fn placeholders_as_from_the_table() {
        let text = TWO_SLOTS.replace("\tRank: 1\n", "\tRank: 1\n\tPart Number: NOT PROVIDED\n\tManufacturer: Not Provided\n")
            + "\nHandle 0x1000, DMI type 16, 23 bytes\nPhysical Memory Array\n\tUse: System Memory\n\
               \tError Correction Type: None\n\tNumber Of Devices: 2\n";
        let m = parse_dmidecode_text(&text).unwrap();
        assert_eq!(m.devices[0].part_number, None);
        assert_eq!(m.devices[0].manufacturer, None);
        assert_eq!(m.devices[0].memory_type.as_deref(), Some("DDR4"));
        assert_eq!(m.devices[1].memory_type, None);
        assert_eq!(m.arrays[0].error_correction.as_deref(), Some("None"));
    }
}

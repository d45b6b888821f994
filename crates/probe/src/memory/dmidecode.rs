//! Saved `dmidecode` text (`dmidecode`, `dmidecode -t memory`, `-t 16,17`), versions 2.12
//! through 3.x, parsed into the same [`SmbiosMemory`] as the binary tables.
//!
//! Format: records start with `Handle 0xHHHH, DMI type N, L bytes`, then a title line, then
//! `<TAB>Key: Value` lines (deeper-indented lines are lists and are skipped). Differences
//! between versions handled here: 2.x prints the rated speed as `2133 MHz` and names the
//! configured speed `Configured Clock Speed`; 3.x prints `MT/s` and `Configured Memory Speed`.
//! dmidecode prints sizes with binary multiples (its `kB`/`MB`/`GB`/`TB` are KiB/MiB/GiB/TiB,
//! `dmi_print_memory_size` steps by 1024); older versions print `16384 MB`, newer `16 GB`:
//! both are accepted. Empty slots read `No Module Installed`. Indentation is read as
//! written: a record's first indented line sets its field depth (a tab as dmidecode prints it,
//! or spaces where the text went through an editor or a web page), deeper lines are list items.
//!
//! Type 19 (`Memory Array Mapped Address`) and Type 20 (`Memory Device Mapped Address`)
//! records are read too: `Starting Address` / `Ending Address` are byte addresses in hex
//! (dmidecode has already scaled the KiB fields). dmidecode prints `Interleave Position` and
//! `Interleaved Data Depth` only when the byte is not 0 (every version from 2.x to 3.x:
//! `dmi_mapped_address_interleave_position`), so a Type 20 record without them holds 0
//! (not interleaved, DSP0134 7.21); `Unknown` is FFh.
//!
//! [`read_dmidecode_file`] reads such a text from a file the user named
//! (`hwsurvey probe --dmidecode FILE`); [`read_dmidecode_text_file`] also gives what the text
//! says of its machine, which [`fit`] holds against the machine probed.

pub mod fit;

use std::path::{Path, PathBuf};

use hwsurvey_model::files::{read_regular, FileError};
use hwsurvey_model::Unknown;

use super::{
    ArrayMappedAddress, DeviceMappedAddress, MemoryArray, MemoryDevice, ModuleSize, SmbiosMemory,
    SmbiosSource,
};

/// Largest `dmidecode` text read from a file, bytes (16 MiB): a whole `dmidecode` of a large
/// server is a few hundred KiB.
pub const MAX_DMIDECODE_TEXT_BYTES: u64 = 16 << 20;

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

/// Why a `dmidecode` text file named by the user could not be used; one line, starting with
/// the file's path.
#[derive(Debug, thiserror::Error)]
pub enum DmidecodeFileError {
    /// Not readable: missing, a directory or a device, larger than
    /// [`MAX_DMIDECODE_TEXT_BYTES`], an I/O error.
    #[error(transparent)]
    File(#[from] FileError),
    /// Holds a NUL byte: binary data such as a raw DMI table (`dmidecode --dump-bin`,
    /// `/sys/firmware/dmi/tables/DMI`), not text.
    #[error(
        "{}: binary data (a NUL byte at offset {offset}), not the text `dmidecode` prints; \
         save it with `dmidecode -t memory > FILE` (or the whole `dmidecode` output)",
        path.display()
    )]
    Binary {
        /// The file as named.
        path: PathBuf,
        /// Offset of the first NUL byte.
        offset: usize,
    },
    /// Text, but not `dmidecode` output with Memory Device records.
    #[error("{}: {source}", path.display())]
    Text {
        /// The file as named.
        path: PathBuf,
        /// What the parser found.
        source: DmidecodeError,
    },
}

/// Reads and parses the `dmidecode` text saved in `path` (a regular file of at most
/// [`MAX_DMIDECODE_TEXT_BYTES`]). Bytes that are not UTF-8 (dmidecode passes a firmware
/// string's bytes through) become U+FFFD. The records' source names the file
/// ([`SmbiosSource::DmidecodeText::file`], the path as given).
///
/// # Errors
/// [`DmidecodeFileError`], one line naming `path`: unreadable or not a regular file, binary
/// data, empty, or no `DMI type 17` record.
pub fn read_dmidecode_file(path: &Path) -> Result<SmbiosMemory, DmidecodeFileError> {
    read_dmidecode_file_with_firmware(path).map(|(memory, _)| memory)
}

/// [`read_dmidecode_file`], and the BIOS, system and board of the same text
/// ([`crate::firmware::from_dmidecode_text`]; `None` for `dmidecode -t memory` text).
///
/// # Errors
/// As [`read_dmidecode_file`].
pub fn read_dmidecode_file_with_firmware(
    path: &Path,
) -> Result<(SmbiosMemory, Option<crate::firmware::DmiIds>), DmidecodeFileError> {
    read_dmidecode_text_file(path).map(|t| (t.memory, t.firmware))
}

/// A saved `dmidecode` text read from a file ([`read_dmidecode_text_file`]).
#[derive(Debug, Clone)]
pub struct DmidecodeText {
    /// Its SMBIOS memory records (Types 16, 17, 19, 20), their source naming the file.
    pub memory: SmbiosMemory,
    /// Its BIOS, system and board (Types 0, 1, 2); `None` for `dmidecode -t memory` text.
    pub firmware: Option<crate::firmware::DmiIds>,
    /// What it says of the machine it was saved on, for [`fit::fit`].
    pub identity: fit::TextIdentity,
}

/// [`read_dmidecode_file_with_firmware`], and what the text says of its machine
/// ([`fit::TextIdentity::of_text`]).
///
/// # Errors
/// As [`read_dmidecode_file`].
pub fn read_dmidecode_text_file(path: &Path) -> Result<DmidecodeText, DmidecodeFileError> {
    let bytes = read_regular(path, "a dmidecode text", MAX_DMIDECODE_TEXT_BYTES)?;
    if let Some(offset) = bytes.iter().position(|b| *b == 0) {
        return Err(DmidecodeFileError::Binary {
            path: path.to_owned(),
            offset,
        });
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut memory = parse_dmidecode_text(&text).map_err(|source| DmidecodeFileError::Text {
        path: path.to_owned(),
        source,
    })?;
    if let SmbiosSource::DmidecodeText { file, .. } = &mut memory.source {
        *file = Some(path.display().to_string());
    }
    let firmware = crate::firmware::from_dmidecode_text(&text, Some(&path.display().to_string()));
    let identity = fit::TextIdentity::of_text(&text, &memory);
    Ok(DmidecodeText {
        memory,
        firmware,
        identity,
    })
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

struct Record<'a> {
    dmi_type: Option<u8>,
    handle: Option<u16>,
    /// Leading whitespace (bytes) of the record's first indented line: its field depth.
    field_indent: Option<usize>,
    fields: Vec<(&'a str, &'a str)>,
}

impl<'a> Record<'a> {
    fn get(&self, key: &str) -> Option<&'a str> {
        self.fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| *v)
    }
}

fn parse_hex_u16(text: &str) -> Option<u16> {
    let t = text.trim();
    let t = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"))?;
    u16::from_str_radix(t, 16).ok()
}

/// `Handle 0x1100, DMI type 17, 84 bytes` -> (handle, type).
fn parse_header(line: &str) -> (Option<u16>, Option<u8>) {
    let mut handle = None;
    let mut dmi_type = None;
    for part in line.split(',') {
        let part = part.trim();
        if let Some(h) = part.strip_prefix("Handle ") {
            handle = parse_hex_u16(h);
        } else if let Some(t) = part.strip_prefix("DMI type ") {
            dmi_type = t.trim().parse().ok();
        }
    }
    (handle, dmi_type)
}

fn clean(v: Option<&str>) -> Option<String> {
    let t = v?.trim();
    let placeholder = [
        "",
        "Not Specified",
        "Unknown",
        "None",
        "Not Provided",
        "<OUT OF SPEC>",
    ];
    if placeholder.iter().any(|p| t.eq_ignore_ascii_case(p)) {
        None
    } else {
        Some(t.to_string())
    }
}

/// A size as dmidecode prints it (`8 GB`, `16384 MB`, `512 kB`, `2 TB`, `1024 bytes`), in
/// bytes. Units are binary multiples (see the module docs). `None` for anything else.
pub fn parse_size_bytes(text: &str) -> Option<u64> {
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
    match parse_size_bytes(t) {
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

/// The records of `types` in saved `dmidecode` text, in text order: `(DMI type, fields)`
/// with each field's name and value as dmidecode prints them (`("Vendor", "Dell Inc.")`).
/// Pure; never panics.
pub fn records_of_types<'a>(text: &'a str, types: &[u8]) -> Vec<(u8, Vec<(&'a str, &'a str)>)> {
    split_records(text)
        .0
        .into_iter()
        .filter_map(|r| {
            let t = r.dmi_type.filter(|t| types.contains(t))?;
            Some((t, r.fields))
        })
        .collect()
}

fn split_records(text: &str) -> (Vec<Record<'_>>, Option<String>, Option<String>) {
    let mut records = Vec::new();
    let mut current: Option<Record<'_>> = None;
    let mut dmidecode_version = None;
    let mut smbios_version = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(rest) = line.strip_prefix("# dmidecode ") {
            dmidecode_version = rest.split_whitespace().next().map(str::to_string);
            continue;
        }
        if let Some(rest) = line.strip_prefix("SMBIOS ") {
            if rest.trim_end().ends_with("present.") {
                smbios_version = rest.split_whitespace().next().map(str::to_string);
            }
            continue;
        }
        if line.starts_with("Handle ") {
            if let Some(r) = current.take() {
                records.push(r);
            }
            let (handle, dmi_type) = parse_header(line);
            current = Some(Record {
                dmi_type,
                handle,
                field_indent: None,
                fields: Vec::new(),
            });
            continue;
        }
        let Some(r) = current.as_mut() else {
            continue;
        };
        // At the record's field depth (one tab as dmidecode prints it): a field. Deeper: a
        // list item under the previous field. Not indented: the title, or other text.
        let field = line.trim_start_matches([' ', '\t']);
        let indent = line.len() - field.len();
        if indent == 0 || field.is_empty() {
            continue;
        }
        let depth = *r.field_indent.get_or_insert(indent);
        if indent > depth {
            continue;
        }
        if let Some((k, v)) = field.split_once(':') {
            r.fields.push((k.trim(), v.trim()));
        }
    }
    if let Some(r) = current.take() {
        records.push(r);
    }
    (records, dmidecode_version, smbios_version)
}

/// Parses `dmidecode` text (see the module docs). Pure; never panics. Values a record lacks
/// or that read `Unknown` are `None`; a text with no Type 17 record is an error.
pub fn parse_dmidecode_text(text: &str) -> Result<SmbiosMemory, DmidecodeError> {
    if text.trim().is_empty() {
        return Err(DmidecodeError::Empty);
    }
    let (records, dmidecode_version, smbios_version) = split_records(text);
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
                    .or_else(|| clean(r.get("Manufacturer")));
            }
            Some(4) => {
                let unpopulated = r
                    .get("Status")
                    .is_some_and(|s| s.eq_ignore_ascii_case("Unpopulated"));
                if !unpopulated {
                    if let Some(v) = clean(r.get("Version")) {
                        out.processors.push(v);
                    }
                }
            }
            Some(16) => {
                let usage = clean(r.get("Use"));
                if usage.as_deref().is_some_and(|u| u != "System Memory") {
                    continue;
                }
                out.arrays.push(MemoryArray {
                    handle: r.handle,
                    usage,
                    error_correction: clean(r.get("Error Correction Type")),
                    max_capacity_bytes: r.get("Maximum Capacity").and_then(parse_size_bytes),
                    slots_declared: r.get("Number Of Devices").and_then(|v| v.parse().ok()),
                });
            }
            Some(17) => out.devices.push(MemoryDevice {
                handle: r.handle,
                array_handle: r.get("Array Handle").and_then(parse_hex_u16),
                locator: clean(r.get("Locator")),
                bank_locator: clean(r.get("Bank Locator")),
                size: module_size(r.get("Size")),
                memory_type: clean(r.get("Type")),
                memory_type_raw: None,
                form_factor: clean(r.get("Form Factor")),
                speed_mt_per_s: parse_speed(r.get("Speed")),
                configured_speed_mt_per_s: parse_speed(
                    r.get("Configured Memory Speed")
                        .or_else(|| r.get("Configured Clock Speed")),
                ),
                rank: r
                    .get("Rank")
                    .and_then(|v| v.parse().ok())
                    .filter(|r| *r != 0),
                manufacturer: clean(r.get("Manufacturer")),
                part_number: clean(r.get("Part Number")),
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
        assert_eq!(parse_size_bytes("16384 MB"), Some(16 << 30));
        assert_eq!(parse_size_bytes("16 GB"), Some(16 << 30));
        assert_eq!(parse_size_bytes("48 GB"), Some(51_539_607_552));
        assert_eq!(parse_size_bytes("512 kB"), Some(512 << 10));
        assert_eq!(parse_size_bytes("2 TB"), Some(2 << 40));
        assert_eq!(parse_size_bytes("lots"), None);
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
    fn files_name_their_path_and_what_is_wrong() {
        let dir = std::env::temp_dir().join(format!("hwsurvey-dmidecode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.txt");
        std::fs::write(&good, TWO_SLOTS).unwrap();
        let m = read_dmidecode_file(&good).unwrap();
        assert_eq!(
            m.source,
            SmbiosSource::DmidecodeText {
                dmidecode_version: Some("3.2".into()),
                file: Some(good.display().to_string()),
            }
        );
        let cases: [(&str, &[u8], &str); 3] = [
            ("empty.txt", b" \n\n", "empty: expected `dmidecode` output"),
            (
                "dump.bin",
                b"_SM3_\x18\x00\x03",
                "binary data (a NUL byte at offset 6)",
            ),
            (
                "lscpu.txt",
                b"Architecture: x86_64\n",
                "found none in 1 lines (no \"Handle 0x..., DMI type N\" record at all",
            ),
        ];
        for (name, bytes, problem) in cases {
            let p = dir.join(name);
            std::fs::write(&p, bytes).unwrap();
            let e = read_dmidecode_file(&p).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{}: ", p.display())), "{e}");
            assert!(e.contains(problem), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = read_dmidecode_file(&dir).unwrap_err().to_string();
        assert!(e.contains("is a directory, not a regular file"), "{e}");
        let e = read_dmidecode_file(&dir.join("absent"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn not_dmidecode_is_an_error() {
        let e = parse_dmidecode_text("hello\nworld\n").unwrap_err();
        assert!(e.to_string().contains("hello"), "{e}");
    }
}

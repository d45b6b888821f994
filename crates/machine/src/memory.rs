//! Memory population: what DIMMs sit in which slots, and what that allows.
//!
//! Sources, in order of preference:
//! - SMBIOS Type 16 (Physical Memory Array) and Type 17 (Memory Device) from
//!   `/sys/firmware/dmi/tables/DMI` (+ `smbios_entry_point` for the version), root-only on most
//!   distributions; decoded with the `smbios-lib` crate ([`smbios`], read by
//!   `hwsurvey_probe::memory::smbios`);
//! - per-entry blobs `/sys/firmware/dmi/entries/{16,17}-*/raw` (older captures, hwloc dumps);
//! - saved `dmidecode` text, given by the user (`hwsurvey_probe::memory::probe_with_dmidecode_text`,
//!   parsed by [`dmidecode::parse_dmidecode_text`]);
//! - EDAC sysfs `/sys/devices/system/edac/mc/mcN` (labels, sizes, corrected/uncorrected error
//!   counts), independent of SMBIOS ([`edac`]);
//! - `/proc/meminfo` totals ([`meminfo`]).
//!
//! From the SMBIOS view, [`population::derive`] works out slots, populated slots, DIMMs per
//! socket and per channel where the locators allow it, mixed modules, rated vs configured
//! speed, total installed and the theoretical peak bandwidth. Anything that cannot be derived
//! is a [`Probed::Unknown`] with the reason. On sparc64 and e2k machines, in VMs without DMI
//! and without root, SMBIOS is "unavailable" with the reason; that is not an error.

use hwsurvey_model::units::{format_bytes_binary, format_rate_decimal};
use hwsurvey_model::{Probed, Unknown};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
pub mod dmidecode;
pub mod edac;
pub mod interleave;
pub mod meminfo;
pub mod population;
pub mod smbios;

pub use edac::Edac;
pub use interleave::{Interleave, InterleaveState};
pub use meminfo::MemInfo;
pub use population::{Population, SlotPlace};

/// Everything known about the memory of one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// Totals from `/proc/meminfo`.
    pub meminfo: Probed<MemInfo>,
    /// The SMBIOS memory tables (Type 16/17), or why they could not be had.
    pub smbios: Probed<SmbiosMemory>,
    /// What the SMBIOS tables allow to derive (slots, channels, peak bandwidth).
    pub population: Probed<Population>,
    /// Whether the DIMMs interleave, from the SMBIOS Type 19/20 records
    /// ([`interleave::derive`]), or why that is unknown. Documents written before hwsurvey
    /// read Type 19/20 load with the reason "not read".
    #[serde(default = "interleave::not_read")]
    pub interleave: Probed<Interleave>,
    /// EDAC memory controllers, or why there are none.
    pub edac: Probed<Edac>,
}

impl Default for Memory {
    fn default() -> Self {
        let none = || Unknown::Other {
            detail: "not probed".to_string(),
        };
        Memory {
            meminfo: Probed::Unknown(none()),
            smbios: Probed::Unknown(none()),
            population: Probed::Unknown(none()),
            interleave: Probed::Unknown(none()),
            edac: Probed::Unknown(none()),
        }
    }
}

/// Where the SMBIOS memory records came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SmbiosSource {
    /// The whole table, `/sys/firmware/dmi/tables/DMI`.
    DmiTable,
    /// Per-structure blobs, `/sys/firmware/dmi/entries/<type>-<n>/raw`.
    DmiEntries,
    /// Text saved from `dmidecode` (any version from 2.12 to 3.x).
    DmidecodeText {
        /// The `# dmidecode X.Y` header line's version, when present.
        dmidecode_version: Option<String>,
        /// The file the text was read from, as the user named it
        /// (`hwsurvey_probe::memory::dmidecode::read_dmidecode_file`); `None` for text handed over in memory.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
    },
}

/// The SMBIOS memory records of one machine, decoded but not interpreted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmbiosMemory {
    /// Where the records came from.
    pub source: SmbiosSource,
    /// SMBIOS version ("3.2", "2.8"), from the entry point or the `SMBIOS X.Y present` line.
    pub smbios_version: Option<String>,
    /// Type 1 System Information Manufacturer, or `/sys/class/dmi/id/sys_vendor`
    /// (locator conventions are vendor-specific).
    pub system_vendor: Option<String>,
    /// Type 4 Processor Information "Version" strings, one per populated socket.
    pub processors: Vec<String>,
    /// Type 16 Physical Memory Arrays (system memory only; cache and flash arrays omitted).
    pub arrays: Vec<MemoryArray>,
    /// Type 17 Memory Devices: one per slot the firmware lists, populated or not.
    pub devices: Vec<MemoryDevice>,
    /// Type 19 Memory Array Mapped Addresses: the physical address ranges each array answers.
    /// Empty when the firmware (or the saved text) has none; documents written before
    /// hwsurvey read them load as empty.
    #[serde(default)]
    pub array_mappings: Vec<ArrayMappedAddress>,
    /// Type 20 Memory Device Mapped Addresses: which device answers which range, and its
    /// place in an interleave. Empty when the firmware (or the saved text) has none.
    #[serde(default)]
    pub device_mappings: Vec<DeviceMappedAddress>,
    /// Structures that could not be decoded (e.g. a truncated `entries/17-3/raw`), each
    /// naming its file; the records above are what could be read.
    #[serde(default)]
    pub problems: Vec<Unknown>,
}

/// SMBIOS Type 19 Memory Array Mapped Address (DSP0134 3.x section 7.20): one physical
/// address range that a Type 16 array answers.
///
/// Addresses are bytes: Starting/Ending Address (offsets 04h, 08h) count KiB, so the range is
/// `start x 1024 ..= end x 1024 + 1023`; when Starting Address is FFFFFFFFh the Extended
/// Starting/Ending Address (0Fh, 17h, SMBIOS 2.7+) hold byte addresses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayMappedAddress {
    /// Structure handle, if known.
    pub handle: Option<u16>,
    /// First byte address of the range.
    pub start_address: u64,
    /// Last byte address of the range (inclusive).
    pub end_address: u64,
    /// Handle of the Type 16 array (offset 0Ch).
    pub array_handle: Option<u16>,
    /// Partition Width (offset 0Eh): Memory Devices that form one row of this partition;
    /// `None` when 0 (not given).
    pub partition_width: Option<u8>,
}

/// SMBIOS Type 20 Memory Device Mapped Address (DSP0134 3.x section 7.21): the address range
/// one Type 17 device answers, and its place in the partition and the interleave.
///
/// Addresses as in [`ArrayMappedAddress`] (KiB at 04h/08h, bytes at 13h/1Bh).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceMappedAddress {
    /// Structure handle, if known.
    pub handle: Option<u16>,
    /// First byte address of the range.
    pub start_address: u64,
    /// Last byte address of the range (inclusive).
    pub end_address: u64,
    /// Handle of the Type 17 device (offset 0Ch).
    pub device_handle: Option<u16>,
    /// Handle of the Type 19 range this one lies in (offset 0Eh).
    pub array_mapping_handle: Option<u16>,
    /// Partition Row Position (offset 10h): the device's position in a row of the partition,
    /// 1-based; `None` when FFh (unknown) or 0 (reserved).
    pub partition_row_position: Option<u8>,
    /// Interleave Position (offset 11h): 0 = not interleaved, 1 = first position, 2 = second,
    /// ...; `None` when FFh (unknown).
    pub interleave_position: Option<u8>,
    /// Interleaved Data Depth (offset 12h): the most consecutive rows of this device accessed
    /// in one interleaved transfer, 0 when the device is not in an interleave; `None` when
    /// FFh (unknown).
    pub interleaved_data_depth: Option<u8>,
}

impl ArrayMappedAddress {
    /// Bytes in the range, `None` when the end lies before the start.
    pub fn size_bytes(&self) -> Option<u64> {
        range_bytes(self.start_address, self.end_address)
    }
}

impl DeviceMappedAddress {
    /// Bytes in the range, `None` when the end lies before the start.
    pub fn size_bytes(&self) -> Option<u64> {
        range_bytes(self.start_address, self.end_address)
    }
}

fn range_bytes(start: u64, end_inclusive: u64) -> Option<u64> {
    end_inclusive.checked_sub(start)?.checked_add(1)
}

/// SMBIOS Type 16 Physical Memory Array (DSP0134 section 7.17).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryArray {
    /// Structure handle, if known.
    pub handle: Option<u16>,
    /// "Use" (System Memory, Video Memory, ...), as words.
    pub usage: Option<String>,
    /// "Error Correction Type" (None, Single-bit ECC, Multi-bit ECC, ...), as words.
    pub error_correction: Option<String>,
    /// "Maximum Capacity" (or Extended Maximum Capacity), in bytes.
    pub max_capacity_bytes: Option<u64>,
    /// "Number Of Devices": slots the array declares.
    pub slots_declared: Option<u32>,
}

/// The size field of a Type 17 record, decoded (DSP0134 7.18.5: 0 = no module, 0xFFFF =
/// unknown, 0x7FFF = see Extended Size, bit 15 = KiB granularity).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ModuleSize {
    /// No module in the slot.
    Empty,
    /// A module whose size the firmware does not know.
    Unknown,
    /// A module of this many bytes.
    Installed {
        /// Size in bytes.
        size_bytes: u64,
    },
}

impl ModuleSize {
    /// True unless the slot is empty.
    pub fn is_populated(&self) -> bool {
        !matches!(self, ModuleSize::Empty)
    }
    /// Size in bytes, if a module of known size is there.
    pub fn size_bytes(&self) -> Option<u64> {
        match self {
            ModuleSize::Installed { size_bytes } => Some(*size_bytes),
            _ => None,
        }
    }
}

/// SMBIOS Type 17 Memory Device (DSP0134 section 7.18): one slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryDevice {
    /// Structure handle, if known.
    pub handle: Option<u16>,
    /// Handle of the Type 16 array this slot belongs to.
    pub array_handle: Option<u16>,
    /// "Locator" (Device Locator): the slot's silk-screen name, e.g. `A1`, `DIMM_P0_A0`.
    pub locator: Option<String>,
    /// "Bank Locator", e.g. `/SYS/MB/P0`, `N0`, `BANK 0`.
    pub bank_locator: Option<String>,
    /// Decoded size (Size and Extended Size combined).
    pub size: ModuleSize,
    /// Memory Type as words (`DDR4`), when known.
    pub memory_type: Option<String>,
    /// Memory Type byte (DSP0134 7.18.2, e.g. 0x18 DDR3, 0x1A DDR4, 0x22 DDR5), when read from binary.
    pub memory_type_raw: Option<u8>,
    /// Form factor as words (`DIMM`, `SODIMM`).
    pub form_factor: Option<String>,
    /// "Speed": the module's rated maximum, MT/s (dmidecode < 3.0 printed it as "MHz").
    pub speed_mt_per_s: Option<u32>,
    /// "Configured Memory Speed" (was "Configured Clock Speed"): what it runs at, MT/s.
    pub configured_speed_mt_per_s: Option<u32>,
    /// Ranks (Attributes bits 3:0), when known.
    pub rank: Option<u8>,
    /// "Manufacturer".
    pub manufacturer: Option<String>,
    /// "Part Number", trimmed.
    pub part_number: Option<String>,
    /// "Total Width" in bits (72 with ECC).
    pub total_width_bits: Option<u16>,
    /// "Data Width" in bits.
    pub data_width_bits: Option<u16>,
}

impl Memory {
    /// Replaces the SMBIOS records, and the population derived from them, with `smbios`
    /// (e.g. `hwsurvey_probe::memory::dmidecode::read_dmidecode_file` for `hwsurvey probe --dmidecode FILE`);
    /// meminfo and EDAC stay as probed.
    pub fn set_smbios(&mut self, smbios: SmbiosMemory) {
        self.population = Probed::Known(population::derive(&smbios));
        self.interleave = interleave::derive(&smbios);
        self.smbios = Probed::Known(smbios);
    }
}

/// A readable section in the spirit of `dmidecode -t memory` + `edac-util`, concise:
/// one line per slot, then the derived population, then EDAC.
pub fn summary(m: &Memory) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Memory");
    match &m.meminfo {
        Probed::Known(mi) => {
            let _ = write!(
                out,
                "  MemTotal {}",
                format_bytes_binary(mi.mem_total_bytes)
            );
            if let Some(a) = mi.mem_available_bytes {
                let _ = write!(out, ", MemAvailable {}", format_bytes_binary(a));
            }
            if let Some(f) = mi.mem_full_size_bytes {
                let _ = write!(out, ", MemFullSize {}", format_bytes_binary(f));
            }
            let _ = writeln!(out);
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  /proc/meminfo: unknown ({u})");
        }
    }
    match &m.smbios {
        Probed::Known(s) => {
            let src = match &s.source {
                SmbiosSource::DmiTable => "DMI table".to_string(),
                SmbiosSource::DmiEntries => "DMI entries".to_string(),
                SmbiosSource::DmidecodeText {
                    dmidecode_version,
                    file,
                } => format!(
                    "dmidecode {} text{}",
                    dmidecode_version.as_deref().unwrap_or("(version unknown)"),
                    file.as_deref()
                        .map(|f| format!(" in {f}"))
                        .unwrap_or_default()
                ),
            };
            let _ = writeln!(
                out,
                "  SMBIOS {} from {src}: {} listed",
                s.smbios_version
                    .as_deref()
                    .unwrap_or("(version not given: no entry point was read)"),
                hwsurvey_model::units::plural(s.devices.len() as u64, "slot")
            );
            for problem in &s.problems {
                let _ = writeln!(out, "    not decoded: {problem}");
            }
            for d in &s.devices {
                let place = format!(
                    "{}{}",
                    d.locator.as_deref().unwrap_or("?"),
                    d.bank_locator
                        .as_deref()
                        .map(|b| format!(" ({b})"))
                        .unwrap_or_default()
                );
                match d.size {
                    ModuleSize::Empty => {
                        let _ = writeln!(out, "    {place:<28} empty");
                    }
                    size => {
                        let size = size
                            .size_bytes()
                            .map(format_bytes_binary)
                            .unwrap_or_else(|| "size unknown".into());
                        let speed =
                            |v: Option<u32>| v.map(|s| s.to_string()).unwrap_or_else(|| "?".into());
                        let _ = writeln!(
                            out,
                            "    {place:<28} {size} {} {} MT/s rated, {} MT/s configured, rank {}, {}",
                            d.memory_type.as_deref().unwrap_or("?"),
                            speed(d.speed_mt_per_s),
                            speed(d.configured_speed_mt_per_s),
                            d.rank.map(|r| r.to_string()).unwrap_or_else(|| "?".into()),
                            d.part_number.as_deref().unwrap_or("?")
                        );
                    }
                }
            }
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  SMBIOS: unavailable ({u})");
        }
    }
    if let Probed::Known(p) = &m.population {
        out.push_str(&population::summary(p));
    }
    if m.smbios.known().is_some() {
        out.push_str(&interleave::summary(&m.interleave));
    }
    match &m.edac {
        Probed::Known(e) => out.push_str(&edac::summary(e)),
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  EDAC: unavailable ({u})");
        }
    }
    out
}

/// Formats bytes per second for people (decimal GB/s).
pub(crate) fn rate(bytes_per_s: u64) -> String {
    format_rate_decimal(bytes_per_s as f64)
}

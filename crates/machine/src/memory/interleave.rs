//! Whether the DIMMs interleave, from SMBIOS Type 19 (Memory Array Mapped Address, DSP0134
//! 3.x section 7.20) and Type 20 (Memory Device Mapped Address, section 7.21) records.
//!
//! Per populated Type 17 device, its Type 20 records (matched by the Memory Device Handle)
//! say:
//! - *interleaved*: an Interleave Position of 1 or more (7.21: "1 indicates the first
//!   interleave position, 2 the second..."), or an address range shared with another
//!   device's record (the devices of one interleave set answer the same range);
//! - *not interleaved*: Interleave Position 0 ("non-interleaved") on every record, each range
//!   the device's own;
//! - *unknown*: Interleave Position FFh on a range of its own, or no Type 20 record at all.
//!
//! The ways of an interleave are the most devices sharing one range, or the highest
//! Interleave Position, whichever is larger. What the firmware writes here is its own account
//! of the address map: some firmware fills Type 20 with one range per DIMM whatever the
//! memory controller does, so a measured bandwidth across channels is the final word.
//!
//! Without Type 20 records the state is [`Probed::Unknown`], saying what the source holds
//! instead (Type 19 ranges only, or neither; `dmidecode -t memory` prints neither).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hwsurvey_model::units::format_bytes_binary;
use hwsurvey_model::{Probed, Unknown};
use serde::{Deserialize, Serialize};

use super::{DeviceMappedAddress, SmbiosMemory, SmbiosSource};

/// What the Type 20 records say about the populated devices as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum InterleaveState {
    /// Every populated device with a known position is mapped to a range of its own with
    /// Interleave Position 0.
    NotInterleaved,
    /// Every populated device with a known position is in an interleave.
    Interleaved {
        /// Devices per interleave set: the most devices sharing one range, or the highest
        /// Interleave Position, whichever is larger (>= 2 when ranges are shared).
        ways: u32,
    },
    /// Some populated devices interleave and others do not.
    Partly {
        /// Widest interleave among those that do (as in `Interleaved`).
        ways: u32,
    },
}

/// How one populated device is mapped (its Type 20 records combined).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInterleave {
    /// The device's Locator, or its handle (`0x0037`) when it has none.
    pub locator: String,
    /// The device's Bank Locator, when given.
    pub bank_locator: Option<String>,
    /// Its Type 20 ranges, `(first byte, last byte)` inclusive, in table order.
    pub ranges: Vec<(u64, u64)>,
    /// Interleave Position of its first record (0 = not interleaved; `None` = FFh unknown).
    pub interleave_position: Option<u8>,
    /// Interleaved Data Depth of its first record (0 = not in an interleave; `None` = FFh).
    pub interleaved_data_depth: Option<u8>,
    /// Devices (this one included) whose Type 20 records name the same range as this one's
    /// first: 1 = a range of its own.
    pub sharing_range: u32,
    /// The verdict for this device: `Some(true)` interleaved, `Some(false)` not, `None`
    /// unknown (position FFh on a range of its own).
    pub interleaved: Option<bool>,
}

/// The interleave of one machine's memory as its SMBIOS Type 19/20 records state it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interleave {
    /// All populated devices together.
    pub state: InterleaveState,
    /// Type 19 ranges listed.
    pub array_ranges: u32,
    /// Bytes the Type 19 ranges cover, summed.
    pub array_mapped_bytes: u64,
    /// Partition Width of the Type 19 ranges: distinct values, ascending (ranges that give
    /// none are left out).
    pub partition_widths: Vec<u8>,
    /// Per populated device that has a Type 20 record, in Type 17 table order.
    pub devices: Vec<DeviceInterleave>,
    /// Populated devices without any Type 20 record (locators).
    pub unmapped_devices: Vec<String>,
}

/// The value of [`super::Memory::interleave`] in documents written before Type 19/20 were
/// read.
pub fn not_read() -> Probed<Interleave> {
    Probed::Unknown(Unknown::Other {
        detail: "SMBIOS Type 19/20 not read (document written by an older hwsurvey)".into(),
    })
}

fn source_words(source: &SmbiosSource) -> &'static str {
    match source {
        SmbiosSource::DmiTable => "the DMI table",
        SmbiosSource::DmiEntries => "/sys/firmware/dmi/entries (no 19-*/20-* entries)",
        SmbiosSource::DmidecodeText { .. } => {
            "the dmidecode text (`dmidecode -t memory` prints neither; the whole `dmidecode` \
             output or `dmidecode -t 19,20` carries them where the firmware provides them)"
        }
    }
}

fn locator_of(m: &SmbiosMemory, handle: Option<u16>) -> (String, Option<String>) {
    let device = m
        .devices
        .iter()
        .find(|d| d.handle.is_some() && d.handle == handle);
    let name = device
        .and_then(|d| d.locator.clone())
        .unwrap_or_else(|| match handle {
            Some(h) => format!("0x{h:04X}"),
            None => "?".to_string(),
        });
    (name, device.and_then(|d| d.bank_locator.clone()))
}

/// Derives the interleave from the Type 19/20 records of `m` (see the module docs).
/// Unknown, with the reason, when `m` has no Type 20 record for any populated device, or
/// every one reads Interleave Position FFh (unknown) on a range of its own.
pub fn derive(m: &SmbiosMemory) -> Probed<Interleave> {
    let array_mapped_bytes: u64 = m.array_mappings.iter().filter_map(|a| a.size_bytes()).sum();
    let mut partition_widths: Vec<u8> = m
        .array_mappings
        .iter()
        .filter_map(|a| a.partition_width)
        .collect();
    partition_widths.sort_unstable();
    partition_widths.dedup();
    if m.device_mappings.is_empty() {
        let detail = if m.array_mappings.is_empty() {
            format!(
                "no SMBIOS Type 19/20 (Memory Array / Device Mapped Address) records in {}",
                source_words(&m.source)
            )
        } else {
            format!(
                "the firmware gives {} Type 19 range(s) ({}{}) but no Type 20 Memory Device \
                 Mapped Address records: which DIMM answers which addresses, and whether \
                 they interleave, is not stated",
                m.array_mappings.len(),
                format_bytes_binary(array_mapped_bytes),
                if partition_widths.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", partition width {}",
                        partition_widths
                            .iter()
                            .map(u8::to_string)
                            .collect::<Vec<_>>()
                            .join("/")
                    )
                }
            )
        };
        return Probed::Unknown(Unknown::Other { detail });
    }
    let mut sharing: BTreeMap<(u64, u64), u32> = BTreeMap::new();
    for r in &m.device_mappings {
        *sharing.entry((r.start_address, r.end_address)).or_default() += 1;
    }
    let mut devices = Vec::new();
    let mut unmapped_devices = Vec::new();
    for d in m.devices.iter().filter(|d| d.size.is_populated()) {
        let (locator, bank_locator) = locator_of(m, d.handle);
        let mine: Vec<&DeviceMappedAddress> = m
            .device_mappings
            .iter()
            .filter(|r| d.handle.is_some() && r.device_handle == d.handle)
            .collect();
        let Some(first) = mine.first() else {
            unmapped_devices.push(locator);
            continue;
        };
        let shared = |r: &DeviceMappedAddress| {
            sharing
                .get(&(r.start_address, r.end_address))
                .copied()
                .unwrap_or(1)
        };
        let interleaved = if mine
            .iter()
            .any(|r| shared(r) > 1 || r.interleave_position.is_some_and(|p| p >= 1))
        {
            Some(true)
        } else if mine.iter().all(|r| r.interleave_position == Some(0)) {
            Some(false)
        } else {
            None
        };
        devices.push(DeviceInterleave {
            locator,
            bank_locator,
            ranges: mine
                .iter()
                .map(|r| (r.start_address, r.end_address))
                .collect(),
            interleave_position: first.interleave_position,
            interleaved_data_depth: first.interleaved_data_depth,
            sharing_range: shared(first),
            interleaved,
        });
    }
    let known: Vec<&DeviceInterleave> =
        devices.iter().filter(|d| d.interleaved.is_some()).collect();
    if known.is_empty() {
        let detail = if devices.is_empty() {
            format!(
                "{} Type 20 record(s), none for a populated Type 17 device (Memory Device \
                 Handle matches no populated slot)",
                m.device_mappings.len()
            )
        } else {
            format!(
                "every Type 20 record of the {} populated device(s) gives Interleave Position \
                 FFh (unknown) on a range of its own",
                devices.len()
            )
        };
        return Probed::Unknown(Unknown::Other { detail });
    }
    let ways = devices
        .iter()
        .filter(|d| d.interleaved == Some(true))
        .map(|d| {
            d.sharing_range
                .max(u32::from(d.interleave_position.unwrap_or(0)))
        })
        .max()
        .unwrap_or(0);
    let interleaved = known.iter().filter(|d| d.interleaved == Some(true)).count();
    let state = if interleaved == 0 {
        InterleaveState::NotInterleaved
    } else if interleaved == known.len() {
        InterleaveState::Interleaved { ways }
    } else {
        InterleaveState::Partly { ways }
    };
    Probed::Known(Interleave {
        state,
        array_ranges: m.array_mappings.len() as u32,
        array_mapped_bytes,
        partition_widths,
        devices,
        unmapped_devices,
    })
}

/// One device's mapping for people: `D0 (/SYS/MB/P0): 0x00000000000-0x007FFFFFFFF (32 GiB),
/// Interleave Position 0 (not interleaved)`.
pub fn device_line(d: &DeviceInterleave) -> String {
    let ranges: Vec<String> = d
        .ranges
        .iter()
        .map(|(s, e)| {
            format!(
                "0x{s:011X}-0x{e:011X} ({})",
                e.checked_sub(*s)
                    .and_then(|n| n.checked_add(1))
                    .map(format_bytes_binary)
                    .unwrap_or_else(|| "end before start".into())
            )
        })
        .collect();
    let position = match d.interleave_position {
        Some(0) => "Interleave Position 0 (not interleaved)".to_string(),
        Some(p) => format!(
            "Interleave Position {p}, Interleaved Data Depth {}",
            d.interleaved_data_depth
                .map(|v| v.to_string())
                .unwrap_or_else(|| "unknown".into())
        ),
        None => "Interleave Position unknown (FFh)".to_string(),
    };
    let shared = if d.sharing_range > 1 {
        format!(", range shared by {} devices", d.sharing_range)
    } else {
        String::new()
    };
    format!(
        "{}{}: {}, {position}{shared}",
        d.locator,
        d.bank_locator
            .as_deref()
            .map(|b| format!(" ({b})"))
            .unwrap_or_default(),
        ranges.join(", ")
    )
}

/// The state in words: `not interleaved (16 DIMMs, each mapped to a range of its own)`.
pub fn state_words(i: &Interleave) -> String {
    let unknown = i.devices.iter().filter(|d| d.interleaved.is_none()).count();
    let tail = if unknown > 0 {
        format!("; {unknown} with position unknown")
    } else {
        String::new()
    };
    match i.state {
        InterleaveState::NotInterleaved => format!(
            "not interleaved ({} populated DIMM(s), each mapped to a range of its own with \
             Interleave Position 0){tail}",
            i.devices.len() - unknown
        ),
        InterleaveState::Interleaved { ways } => format!(
            "interleaved {ways}-way ({} populated DIMM(s)){tail}",
            i.devices.len() - unknown
        ),
        InterleaveState::Partly { ways } => {
            let not: Vec<&str> = i
                .devices
                .iter()
                .filter(|d| d.interleaved == Some(false))
                .map(|d| d.locator.as_str())
                .collect();
            format!(
                "partly interleaved (up to {ways}-way); not interleaved: {}{tail}",
                not.join(" ")
            )
        }
    }
}

/// The interleave section of [`super::summary`]: the state, then one line per device.
pub fn summary(i: &Probed<Interleave>) -> String {
    let mut out = String::new();
    match i {
        Probed::Known(i) => {
            let _ = writeln!(
                out,
                "  Interleave (SMBIOS Type 19/20): {}; {} Type 19 range(s), {}",
                state_words(i),
                i.array_ranges,
                format_bytes_binary(i.array_mapped_bytes)
            );
            for d in &i.devices {
                let _ = writeln!(out, "    {}", device_line(d));
            }
            if !i.unmapped_devices.is_empty() {
                let _ = writeln!(
                    out,
                    "    no Type 20 record: {}",
                    i.unmapped_devices.join(" ")
                );
            }
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  Interleave: unknown ({u})");
        }
    }
    out
}

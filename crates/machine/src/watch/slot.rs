//! An EDAC DIMM's slot: the SMBIOS Type 17 Memory Device (DSP0134 7.18) its `dimm_label`
//! names, where the two agree.
//!
//! How drivers label their DIMMs (`/sys/devices/system/edac/mc/mcM/dimmN/dimm_label`):
//! - `ghes_edac` (firmware-first platforms: ThunderX2, most arm64 servers, many x86 ones)
//!   writes `"<Bank Locator> <Locator>"` of the Type 17 record the firmware named
//!   (`N0 DIMM_A0`), or `unknown memory (handle: 0x0038)` when either string is empty;
//! - a BIOS or `ras-mc-ctl --register-labels` may write the Locator itself (`A1`);
//! - native drivers (`skx_edac`, `i10nm_edac`, `ie31200_edac`, `sb_edac`) write their own
//!   names (`CPU_SrcID#0_MC#0_Chan#1_DIMM#0`, `mc#0csrow#1channel#0`): no slot.
//!
//! A label maps to a slot only when exactly one populated Type 17 device matches it, and when
//! the EDAC size and the Type 17 size agree where both are known; otherwise the reason is
//! said, and the DIMM is named by its EDAC label and location.

use crate::memory::MemoryDevice;

/// How a label names a slot, for the result file's words.
fn matches(label: &str, d: &MemoryDevice) -> Option<&'static str> {
    let locator = d
        .locator
        .as_deref()
        .map(str::trim)
        .filter(|l| !l.is_empty())?;
    let label = label.trim();
    if let Some(bank) = d.bank_locator.as_deref().map(str::trim) {
        if !bank.is_empty() && label == format!("{bank} {locator}") {
            return Some("the label is the Type 17 Bank Locator and Locator (ghes_edac)");
        }
    }
    if label == locator {
        return Some("the label is the Type 17 Locator");
    }
    if let Some(h) = d.handle {
        if label.eq_ignore_ascii_case(&format!("unknown memory (handle: {h:#06x})")) {
            return Some("the label names the Type 17 handle (ghes_edac)");
        }
    }
    None
}

/// The Type 17 Locator of the slot `label` names among `devices` (all of the machine's SMBIOS
/// memory devices), with how it matched; `Err` with why there is none: no device matches,
/// several do, or the sizes differ (`edac_size_bytes`, from `dimmN/size`, against the Type 17
/// size). Empty slots never match.
pub fn slot_of(
    label: &str,
    edac_size_bytes: Option<u64>,
    devices: &[MemoryDevice],
) -> Result<(String, &'static str), String> {
    let found: Vec<(&MemoryDevice, &'static str)> = devices
        .iter()
        .filter(|d| d.size.is_populated())
        .filter_map(|d| matches(label, d).map(|how| (d, how)))
        .collect();
    match found.as_slice() {
        [] => Err(format!(
            "no populated SMBIOS Type 17 slot is named by the label {:?}",
            label.trim()
        )),
        [(d, how)] => {
            let locator = d.locator.as_deref().unwrap_or_default().trim().to_string();
            match (edac_size_bytes, d.size.size_bytes()) {
                (Some(e), Some(s)) if e != s => Err(format!(
                    "the label names slot {locator}, but EDAC gives {} and SMBIOS {}",
                    hwsurvey_model::units::format_bytes_binary(e),
                    hwsurvey_model::units::format_bytes_binary(s)
                )),
                _ => Ok((locator, how)),
            }
        }
        several => Err(format!(
            "the label {:?} names {} populated slots",
            label.trim(),
            several.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::ModuleSize;

    fn dev(handle: u16, bank: &str, locator: &str, gib: Option<u64>) -> MemoryDevice {
        MemoryDevice {
            handle: Some(handle),
            array_handle: None,
            locator: Some(locator.into()),
            bank_locator: Some(bank.into()),
            size: match gib {
                Some(g) => ModuleSize::Installed {
                    size_bytes: g << 30,
                },
                None => ModuleSize::Empty,
            },
            memory_type: None,
            memory_type_raw: None,
            form_factor: None,
            speed_mt_per_s: None,
            configured_speed_mt_per_s: None,
            rank: None,
            manufacturer: None,
            part_number: None,
            total_width_bits: None,
            data_width_bits: None,
        }
    }

    #[test]
    fn ghes_labels_locators_and_handles_map_native_names_do_not() {
        let devices = [
            dev(0x38, "N0", "DIMM_A0", Some(32)),
            dev(0x39, "N0", "DIMM_B0", Some(32)),
            dev(0x3a, "N1", "DIMM_A0", Some(32)),
            dev(0x3b, "N1", "DIMM_C0", None),
        ];
        assert_eq!(
            slot_of("N0 DIMM_B0", Some(32 << 30), &devices).map(|s| s.0),
            Ok("DIMM_B0".to_string())
        );
        // the locator alone is in two sockets: no one slot
        assert!(slot_of("DIMM_A0", None, &devices)
            .unwrap_err()
            .contains("names 2 populated slots"));
        assert_eq!(
            slot_of("unknown memory (handle: 0x003a)", None, &devices).map(|s| s.0),
            Ok("DIMM_A0".to_string())
        );
        // an empty slot never matches; a native driver's name matches nothing
        assert!(slot_of("N1 DIMM_C0", None, &devices).is_err());
        assert!(slot_of("CPU_SrcID#0_MC#0_Chan#1_DIMM#0", None, &devices)
            .unwrap_err()
            .contains("no populated SMBIOS Type 17 slot"));
        // sizes that disagree: not the slot
        let e = slot_of("N0 DIMM_B0", Some(16 << 30), &devices).unwrap_err();
        assert!(e.contains("EDAC gives 16 GiB and SMBIOS 32 GiB"), "{e}");
    }
}

//! Memory population: what DIMMs sit in which slots, and what that allows.
//!
//! Sources, in order of preference:
//! - SMBIOS Type 16 (Physical Memory Array) and Type 17 (Memory Device) from
//!   `/sys/firmware/dmi/tables/DMI` (+ `smbios_entry_point` for the version), root-only on most
//!   distributions; decoded with the `smbios-lib` crate ([`smbios`]);
//! - per-entry blobs `/sys/firmware/dmi/entries/{16,17}-*/raw` (older captures, hwloc dumps);
//! - saved `dmidecode` text, given by the user ([`probe_with_dmidecode_text`], parsed by
//!   [`dmidecode::parse_dmidecode_text`]);
//! - EDAC sysfs `/sys/devices/system/edac/mc/mcN` (labels, sizes, corrected/uncorrected error
//!   counts), independent of SMBIOS ([`edac`]);
//! - `/proc/meminfo` totals ([`meminfo`]).
//!
//! From the SMBIOS view, [`population::derive`] works out slots, populated slots, DIMMs per
//! socket and per channel where the locators allow it, mixed modules, rated vs configured
//! speed, total installed and the theoretical peak bandwidth. Anything that cannot be derived
//! is a [`Probed::Unknown`] with the reason. On sparc64 and e2k machines, in VMs without DMI
//! and without root, SMBIOS is "unavailable" with the reason; that is not an error.

pub mod dmidecode;
pub mod edac;
pub mod meminfo;
pub mod smbios;

use hwsurvey_model::{Probed, Unknown};

use crate::SysRoot;

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::memory::*;

/// Probes memory under `root`: meminfo, SMBIOS (table, then per-entry blobs), EDAC.
pub fn probe(root: &SysRoot) -> Memory {
    let smbios = smbios::read(root);
    assemble(root, smbios)
}

/// Like [`probe`], but the SMBIOS records come from saved `dmidecode` text (for
/// `hwsurvey probe --dmidecode FILE`); meminfo and EDAC are still read under `root`.
/// A text without any Type 17 record makes SMBIOS unknown, with that reason.
pub fn probe_with_dmidecode_text(root: &SysRoot, text: &str) -> Memory {
    let smbios = match dmidecode::parse_dmidecode_text(text) {
        Ok(m) => Probed::Known(m),
        Err(e) => Probed::Unknown(Unknown::Invalid {
            path: "dmidecode text".to_string(),
            detail: e.to_string(),
        }),
    };
    assemble(root, smbios)
}

fn assemble(root: &SysRoot, smbios: Probed<SmbiosMemory>) -> Memory {
    let population = match &smbios {
        Probed::Known(m) => Probed::Known(population::derive(m)),
        Probed::Unknown(u) => Probed::Unknown(u.clone()),
    };
    let interleave = match &smbios {
        Probed::Known(m) => interleave::derive(m),
        Probed::Unknown(u) => Probed::Unknown(u.clone()),
    };
    Memory {
        meminfo: meminfo::read(root),
        smbios,
        population,
        interleave,
        edac: edac::read(root),
    }
}

//! Firmware and board: what tells two "identical" servers apart when their hardware is the
//! same. BIOS vendor, version and release date (SMBIOS Type 0), system manufacturer, product
//! and version (Type 1), baseboard manufacturer, product and version (Type 2), and the CPU
//! microcode revision.
//!
//! Sources:
//! - `/sys/class/dmi/id/{bios_vendor,bios_version,bios_date,sys_vendor,product_name,
//!   product_version,board_vendor,board_name,board_version}` (drivers/firmware/dmi-id.c:
//!   world-readable copies of the SMBIOS strings, on every kernel with `CONFIG_DMIID`). The
//!   serial numbers and the UUID there are readable by root only and name one box: they are
//!   never kept as read, only hashed in [`crate::os::host_id`];
//! - saved `dmidecode` text (`hwsurvey probe --dmidecode FILE`): its `BIOS Information`,
//!   `System Information` and `Base Board Information` records ([`from_dmidecode_text`]);
//! - `/proc/cpuinfo`'s per-CPU `microcode` line (x86 only: arch/x86/kernel/cpu/proc.c), read
//!   with the rest of cpuinfo into [`crate::cpu::Identity::microcode`] ([`microcode_of`]).
//!
//! Unknown, with the reason, where there is no DMI (sparc64 and e2k machines, VMs and boards
//! without SMBIOS, containers that hide `/sys/class/dmi`) and where the kernel writes no
//! microcode revision (every architecture but x86).

use hwsurvey_model::{Probed, Unknown};

use crate::SysRoot;
use hwsurvey_machine::cpu::Arch;

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::firmware::*;

/// The folder of the kernel's DMI identification files.
pub const DMI_ID: &str = "/sys/class/dmi/id";

/// Why there is no DMI on a machine of `arch` whose `/sys/class/dmi/id` is missing.
fn no_dmi(arch: Arch) -> Unknown {
    match arch {
        Arch::Sparc64 | Arch::E2k => Unknown::NotOnThisPlatform {
            detail: format!(
                "{} machines have no SMBIOS, {DMI_ID} is missing; the OpenBoot PROM or the \
                 vendor's tools name the firmware",
                arch.as_str()
            ),
        },
        _ => Unknown::Other {
            detail: format!(
                "{DMI_ID} is missing: no SMBIOS in a VM, board or container without DMI, or a \
                 kernel without CONFIG_DMIID"
            ),
        },
    }
}

/// Reads [`DmiIds`] from `/sys/class/dmi/id` under `root`; unknown with the reason where the
/// folder is missing or holds none of the files.
pub fn probe(root: &SysRoot, arch: Arch) -> Probed<DmiIds> {
    if !root.exists(DMI_ID) {
        return Probed::Unknown(no_dmi(arch));
    }
    let get = |file: &str| {
        root.read_value(&format!("{DMI_ID}/{file}"))
            .ok()
            .and_then(|v| clean(&v))
    };
    let ids = DmiIds {
        source: DMI_ID.to_string(),
        bios_vendor: get("bios_vendor"),
        bios_version: get("bios_version"),
        bios_date: get("bios_date"),
        system_vendor: get("sys_vendor"),
        system_product: get("product_name"),
        system_version: get("product_version"),
        board_vendor: get("board_vendor"),
        board_name: get("board_name"),
        board_version: get("board_version"),
    };
    if ids.is_empty() {
        return Probed::Unknown(Unknown::Other {
            detail: format!(
                "{DMI_ID} holds no BIOS, system or board string (all missing, unreadable or \
                 placeholders)"
            ),
        });
    }
    Probed::Known(ids)
}

/// [`DmiIds`] from saved `dmidecode` text (`file` names it in [`DmiIds::source`]): the first
/// `BIOS Information` (Type 0), `System Information` (Type 1) and `Base Board Information`
/// (Type 2) records. `None` when the text has none of them (`dmidecode -t memory`). The
/// serial numbers are not read.
pub fn from_dmidecode_text(text: &str, file: Option<&str>) -> Option<DmiIds> {
    let records = crate::memory::dmidecode::records_of_types(text, &[0, 1, 2]);
    let field = |t: u8, key: &str| {
        records
            .iter()
            .find(|(ty, _)| *ty == t)
            .and_then(|(_, fields)| fields.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)))
            .and_then(|(_, v)| clean(v))
    };
    let ids = DmiIds {
        source: match file {
            Some(f) => format!("dmidecode text {f}"),
            None => "dmidecode text".into(),
        },
        bios_vendor: field(0, "Vendor"),
        bios_version: field(0, "Version"),
        bios_date: field(0, "Release Date"),
        system_vendor: field(1, "Manufacturer"),
        system_product: field(1, "Product Name"),
        system_version: field(1, "Version"),
        board_vendor: field(2, "Manufacturer"),
        board_name: field(2, "Product Name"),
        board_version: field(2, "Version"),
    };
    (!ids.is_empty()).then_some(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_padding() {
        assert_eq!(
            clean("Dell                            ").as_deref(),
            Some("Dell")
        );
        assert_eq!(clean("To Be Filled By O.E.M."), None);
        assert_eq!(clean(" \0"), None);
        assert_eq!(clean("A00").as_deref(), Some("A00"));
    }

    #[test]
    fn microcode_per_cpu_grouped_and_unknown_elsewhere() {
        let ci = crate::cpu::cpuinfo::parse_cpuinfo(
            "processor\t: 0\nvendor_id\t: GenuineIntel\nmicrocode\t: 0x4119\n\n\
             processor\t: 1\nvendor_id\t: GenuineIntel\nmicrocode\t: 0x4119\n\n\
             processor\t: 2\nvendor_id\t: GenuineIntel\nmicrocode\t: 0x411c\n",
        );
        let revs = microcode_of(&ci, Arch::X86_64);
        let revs = revs.known().unwrap();
        assert_eq!(
            microcode_words(revs),
            "0x4119 on CPUs 0-1, 0x411c on CPUs 2"
        );
        let none = crate::cpu::cpuinfo::parse_cpuinfo("processor\t: 0\nBogoMIPS\t: 100.00\n");
        assert_eq!(
            microcode_of(&none, Arch::Aarch64).why_unknown().unwrap().to_string(),
            "not on this platform: the aarch64 kernel writes no microcode revision in /proc/cpuinfo"
        );
    }
}

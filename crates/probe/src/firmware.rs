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
//!   `System Information` and `Base Board Information` records (`from_dmidecode_text`, of
//!   `hwsurvey_machine::firmware`, re-exported here);
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
            .and_then(|v| hwsurvey_machine::dmi::clean(&v))
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

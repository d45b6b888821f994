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

use crate::cpu::{Arch, Cpuinfo};
use crate::dmi::clean;
use hwsurvey_model::{CpuSet, Probed, Unknown};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// BIOS, system and board identification (SMBIOS Types 0, 1 and 2). A field is `None` where
/// the firmware leaves it empty or writes a placeholder ([`crate::dmi::PLACEHOLDERS`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DmiIds {
    /// Where they were read: `/sys/class/dmi/id`, or `dmidecode text FILE`.
    pub source: String,
    /// Type 0 Vendor (`bios_vendor`): `Dell Inc.`.
    pub bios_vendor: Option<String>,
    /// Type 0 BIOS Version (`bios_version`): `2.5.91`.
    pub bios_version: Option<String>,
    /// Type 0 BIOS Release Date (`bios_date`), as the firmware writes it: `11/04/2011`
    /// (SMBIOS asks for mm/dd/yyyy).
    pub bios_date: Option<String>,
    /// Type 1 Manufacturer (`sys_vendor`): `Dell`.
    pub system_vendor: Option<String>,
    /// Type 1 Product Name (`product_name`): `PowerEdge C6145`.
    pub system_product: Option<String>,
    /// Type 1 Version (`product_version`).
    pub system_version: Option<String>,
    /// Type 2 Manufacturer (`board_vendor`).
    pub board_vendor: Option<String>,
    /// Type 2 Product (`board_name`): `040N24`.
    pub board_name: Option<String>,
    /// Type 2 Version (`board_version`): `A00`.
    pub board_version: Option<String>,
}

impl DmiIds {
    /// Whether no field is known.
    pub fn is_empty(&self) -> bool {
        [
            &self.bios_vendor,
            &self.bios_version,
            &self.bios_date,
            &self.system_vendor,
            &self.system_product,
            &self.system_version,
            &self.board_vendor,
            &self.board_name,
            &self.board_version,
        ]
        .iter()
        .all(|f| f.is_none())
    }

    /// `Dell Inc. 1.0.30 (08/06/2012)`: the BIOS in one phrase, `None` when neither its
    /// vendor nor its version is known. Fleet's `BIOS` fact.
    pub fn bios(&self) -> Option<String> {
        if self.bios_vendor.is_none() && self.bios_version.is_none() {
            return None;
        }
        let mut s = words(&[&self.bios_vendor, &self.bios_version]);
        if let Some(d) = &self.bios_date {
            let _ = write!(s, " ({d})");
        }
        Some(s)
    }
}

/// The known ones of `parts`, space-separated.
fn words(parts: &[&Option<String>]) -> String {
    parts
        .iter()
        .filter_map(|p| p.as_deref())
        .collect::<Vec<_>>()
        .join(" ")
}

/// [`DmiIds`] from saved `dmidecode` text (`file` names it in [`DmiIds::source`]): the first
/// `BIOS Information` (Type 0), `System Information` (Type 1) and `Base Board Information`
/// (Type 2) records ([`crate::dmidecode::records_of_types`]), their strings kept as
/// [`clean`] keeps SMBIOS strings. `None` when the text has none of them (`dmidecode -t
/// memory`). The serial numbers are not read.
pub fn from_dmidecode_text(text: &str, file: Option<&str>) -> Option<DmiIds> {
    let records = crate::dmidecode::records_of_types(text, &[0, 1, 2]);
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

/// CPUs that report one microcode revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MicrocodeRevision {
    /// The revision as the kernel writes it (`0x8001227`).
    pub revision: String,
    /// The CPUs whose `/proc/cpuinfo` record says it.
    pub cpus: CpuSet,
}

/// The microcode revisions of the CPUs in `ci` (one entry per distinct revision, in the order
/// of its first CPU: one entry when all agree), or why unknown: not on this architecture (only
/// x86 kernels print `microcode`), or no `microcode` line (an old kernel, or a copy of the
/// file without it, as hwloc's gathered ones).
pub fn microcode_of(ci: &Cpuinfo, arch: Arch) -> Probed<Vec<MicrocodeRevision>> {
    let mut out: Vec<MicrocodeRevision> = Vec::new();
    for (i, c) in ci.cpus.iter().enumerate() {
        let Some(rev) = &c.microcode else { continue };
        let cpu = c.processor.unwrap_or(i as u32);
        match out.iter_mut().find(|r| &r.revision == rev) {
            Some(r) => {
                r.cpus.insert(cpu);
            }
            None => out.push(MicrocodeRevision {
                revision: rev.clone(),
                cpus: std::iter::once(cpu).collect(),
            }),
        }
    }
    if !out.is_empty() {
        return Probed::Known(out);
    }
    Probed::Unknown(match arch {
        Arch::X86_64 | Arch::X86 => Unknown::Other {
            detail: "/proc/cpuinfo has no microcode line: an old kernel, or a copy of the \
                     file without it"
                .into(),
        },
        other => Unknown::NotOnThisPlatform {
            detail: format!(
                "the {} kernel writes no microcode revision in /proc/cpuinfo",
                other.as_str()
            ),
        },
    })
}

/// The revision alone when every CPU has it (`0x8001227`: the same on a host with a CPU
/// offline), else each with its CPUs (`0x1 on CPUs 0-47, 0x2 on CPUs 48-95`). Fleet's
/// `microcode` fact.
pub fn microcode_revisions(revs: &[MicrocodeRevision]) -> String {
    match revs {
        [one] => one.revision.clone(),
        _ => microcode_words(revs),
    }
}

/// `0x8001227 on all 96 CPUs`, or `0x1 on CPUs 0-47, 0x2 on CPUs 48-95`.
pub fn microcode_words(revs: &[MicrocodeRevision]) -> String {
    match revs {
        [one] => format!(
            "{} on all {}",
            one.revision,
            hwsurvey_model::units::plural(one.cpus.len() as u64, "CPU")
        ),
        _ => revs
            .iter()
            .map(|r| format!("{} on CPUs {}", r.revision, r.cpus))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The `Firmware` section of the probe's text: BIOS, system (with the serial as
/// [`crate::os::host_id`] keeps it, hashed), board and microcode, each known or unknown with
/// why.
pub fn summary(m: &crate::Machine) -> String {
    let mut out = String::from("Firmware\n");
    match &m.firmware {
        Probed::Known(d) => {
            let _ = writeln!(out, "  from {}", d.source);
            let _ = writeln!(
                out,
                "  BIOS {}",
                d.bios()
                    .unwrap_or_else(|| "vendor and version not given".into())
            );
            let system = words(&[&d.system_vendor, &d.system_product, &d.system_version]);
            let serial = match &m.os.host_id.dmi_serial {
                Some(h) => format!("serial hashed {}", &h[..h.len().min(8)]),
                None if d.source.starts_with("dmidecode") => {
                    "serial not taken from the text".into()
                }
                None => "serial not read (product_serial is root's; kept hashed when read)".into(),
            };
            let _ = writeln!(
                out,
                "  system {}, {serial}",
                if system.is_empty() {
                    "not given"
                } else {
                    &system
                }
            );
            let board = words(&[&d.board_vendor, &d.board_name, &d.board_version]);
            let _ = writeln!(
                out,
                "  board {}",
                if board.is_empty() {
                    "not given"
                } else {
                    &board
                }
            );
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  BIOS, system and board unknown ({u})");
        }
    }
    match &m.cpu.identity.microcode {
        Probed::Known(revs) => {
            let _ = writeln!(out, "  microcode {}", microcode_words(revs));
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  microcode unknown ({u})");
        }
    }
    out
}

/// [`crate::Machine::firmware`] of a document written before hwsurvey probed it.
pub fn not_probed() -> Probed<DmiIds> {
    Probed::Unknown(Unknown::Other {
        detail: "not probed by the hwsurvey that wrote this document".into(),
    })
}

/// [`crate::cpu::Identity::microcode`] of a document written before hwsurvey probed it.
pub fn microcode_not_probed() -> Probed<Vec<MicrocodeRevision>> {
    Probed::Unknown(Unknown::Other {
        detail: "not probed by the hwsurvey that wrote this document".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn bios_system_and_board_of_dmidecode_text() {
        let text = "Handle 0x0000, DMI type 0, 24 bytes\nBIOS Information\n\tVendor: Dell Inc.\n\
                    \tVersion: 2.5.91\n\tRelease Date: 11/04/2011\n\n\
                    Handle 0x0100, DMI type 1, 27 bytes\nSystem Information\n\
                    \tManufacturer: To Be Filled By O.E.M.\n\tProduct Name: PowerEdge C6145\n";
        let ids = from_dmidecode_text(text, Some("d.txt")).unwrap();
        assert_eq!(ids.source, "dmidecode text d.txt");
        assert_eq!(ids.bios().as_deref(), Some("Dell Inc. 2.5.91 (11/04/2011)"));
        assert_eq!(ids.system_vendor, None);
        assert_eq!(ids.system_product.as_deref(), Some("PowerEdge C6145"));
        assert_eq!(
            from_dmidecode_text("Handle 0x1100, DMI type 17\n", None),
            None
        );
    }
}

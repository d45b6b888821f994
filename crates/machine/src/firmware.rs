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
//!   `System Information` and `Base Board Information` records (`hwsurvey_probe::firmware::from_dmidecode_text`);
//! - `/proc/cpuinfo`'s per-CPU `microcode` line (x86 only: arch/x86/kernel/cpu/proc.c), read
//!   with the rest of cpuinfo into [`crate::cpu::Identity::microcode`] ([`microcode_of`]).
//!
//! Unknown, with the reason, where there is no DMI (sparc64 and e2k machines, VMs and boards
//! without SMBIOS, containers that hide `/sys/class/dmi`) and where the kernel writes no
//! microcode revision (every architecture but x86).

use crate::cpu::{Arch, Cpuinfo};
use hwsurvey_model::{CpuSet, Probed, Unknown};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// BIOS, system and board identification (SMBIOS Types 0, 1 and 2). A field is `None` where
/// the firmware leaves it empty or writes a placeholder (`Not Specified`, `To Be Filled By
/// O.E.M.`, `Default string`, ...).
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

/// A DMI string as kept: trimmed (the C6145 pads `sys_vendor` with spaces), `None` for empty
/// and for the placeholders firmware writes where it has nothing to say.
pub fn clean(v: &str) -> Option<String> {
    let t = v.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    let placeholder = [
        "not specified",
        "to be filled by o.e.m.",
        "default string",
        "not applicable",
        "n/a",
        "none",
        "unknown",
        "system product name",
        "system manufacturer",
        "system version",
    ];
    (!t.is_empty() && !placeholder.contains(&t.to_ascii_lowercase().as_str()))
        .then(|| t.to_string())
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

//! Is a saved `dmidecode` text this machine's? `hwsurvey probe --dmidecode FILE` and `qualify
//! --dmidecode FILE` put the text's DIMMs in place of the machine's: a text saved on another
//! machine (a 2-socket Dell's on a 1-socket VM) would mix two machines' facts silently, and
//! the memory rules would pass "12 channels over 2 sockets" on a machine with one.
//!
//! What the text says of its machine ([`TextIdentity`], pure: [`TextIdentity::of_text`]) is
//! held against the probed [`Machine`] ([`fit`]), fact by fact, where both sides know it:
//! - the system: SMBIOS Type 1 Manufacturer and Product Name against
//!   `/sys/class/dmi/id/sys_vendor` and `product_name` (compared without case and outer
//!   spaces);
//! - the DMI product UUID and serial (Type 1 `UUID`, `Serial Number`) against the machine's
//!   hashed `product_uuid` and `product_serial` (`machine.os.host_id`, readable as root only;
//!   the text's are hashed the same way, placeholders such as all zeros never compared);
//! - the sockets: Type 4 Processor Information records of a central processor that are not
//!   `Unpopulated`, against the packages of the online CPUs
//!   (`/sys/devices/system/cpu/cpuN/topology/physical_package_id`);
//! - the memory: the Type 17 modules' sizes added up against `/proc/meminfo` `MemTotal`, which
//!   lies between [`MIN_MEMTOTAL_SHARE`] of the installed size (memory mirroring keeps half) and
//!   all of it (firmware and the kernel reserve some; never more than is installed).
//!
//! A fact one side does not know is not checked, and [`Fit::unchecked`] says which and why.

use hwsurvey_machine::Machine;
use hwsurvey_model::units::format_bytes_binary;

use super::{records_of_types, SmbiosMemory};

/// Smallest `MemTotal` / installed size of a machine whose DIMMs a text lists: with memory
/// mirroring the kernel sees half of them, less its reservations.
pub const MIN_MEMTOTAL_SHARE: f64 = 0.40;

/// What a `dmidecode` text says about the machine it was saved on. Source: its SMBIOS Type 1,
/// 4 and 17 records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextIdentity {
    /// Type 1 Manufacturer (`Dell Inc.`).
    pub system_vendor: Option<String>,
    /// Type 1 Product Name (`PowerEdge R640`).
    pub system_product: Option<String>,
    /// Type 1 UUID, hashed as the probe keeps `product_uuid`
    /// ([`hwsurvey_machine::os::host_id::hashed`], lower case); `None` for a placeholder.
    pub uuid_hashed: Option<String>,
    /// Type 1 Serial Number, hashed as the probe keeps `product_serial`.
    pub serial_hashed: Option<String>,
    /// Type 4 records of a central processor not `Unpopulated`; `None` without Type 4 records
    /// (`dmidecode -t memory` text).
    pub sockets: Option<u32>,
    /// The Type 17 modules' sizes added up, bytes; `None` when no module's size is known.
    pub installed_bytes: Option<u64>,
}

impl TextIdentity {
    /// The identity `text` states; `memory` is the same text parsed
    /// ([`super::parse_dmidecode_text`]). Pure; never panics.
    pub fn of_text(text: &str, memory: &SmbiosMemory) -> TextIdentity {
        let mut id = TextIdentity::default();
        let value = |fields: &[(&str, &str)], key: &str| {
            fields
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .and_then(|(_, v)| hwsurvey_machine::dmi::clean(v))
        };
        let mut sockets = None;
        for (dmi_type, fields) in records_of_types(text, &[1, 4]) {
            match dmi_type {
                1 => {
                    id.system_vendor = id.system_vendor.or_else(|| value(&fields, "Manufacturer"));
                    id.system_product =
                        id.system_product.or_else(|| value(&fields, "Product Name"));
                    id.uuid_hashed = id.uuid_hashed.or_else(|| {
                        value(&fields, "UUID").and_then(|u| {
                            hwsurvey_machine::os::host_id::hashed(
                                "dmi_uuid",
                                &u.to_ascii_lowercase(),
                            )
                        })
                    });
                    id.serial_hashed = id.serial_hashed.or_else(|| {
                        value(&fields, "Serial Number")
                            .and_then(|s| hwsurvey_machine::os::host_id::hashed("dmi_serial", &s))
                    });
                }
                _ => {
                    let count = sockets.get_or_insert(0u32);
                    let kind = value(&fields, "Type");
                    let status = value(&fields, "Status").unwrap_or_default();
                    let central = kind.is_none_or(|k| k.eq_ignore_ascii_case("Central Processor"));
                    if central && !status.to_ascii_lowercase().starts_with("unpopulated") {
                        *count += 1;
                    }
                }
            }
        }
        id.sockets = sockets;
        let sizes: Vec<u64> = memory
            .devices
            .iter()
            .filter_map(|d| d.size.size_bytes())
            .collect();
        id.installed_bytes = (!sizes.is_empty()).then(|| sizes.iter().sum());
        id
    }

    /// `Dell Inc. PowerEdge R640`, or the one of the two the text has.
    pub fn system(&self) -> Option<String> {
        match (&self.system_vendor, &self.system_product) {
            (Some(v), Some(p)) => Some(format!("{v} {p}")),
            (Some(one), None) | (None, Some(one)) => Some(one.clone()),
            (None, None) => None,
        }
    }
}

/// One fact on which the text and the machine disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misfit {
    /// `system`, `DMI product UUID`, `DMI serial`, `sockets`, `memory`.
    pub fact: &'static str,
    /// What the text says, with its record (`2 (DMI type 4 Processor Information)`).
    pub text: String,
    /// What the machine says, with its file (`1 (packages of the online CPUs, ...)`).
    pub machine: String,
}

impl std::fmt::Display for Misfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} in the text, {} here",
            self.fact, self.text, self.machine
        )
    }
}

/// How a text fits a machine ([`fit`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fit {
    /// The facts on which they disagree: any one means the text is another machine's.
    pub misfits: Vec<Misfit>,
    /// The facts that agree (`sockets 2`, `system Dell Inc. PowerEdge R640`).
    pub checked: Vec<String>,
    /// The facts that could not be compared, and why (`system: no DMI strings here`).
    pub unchecked: Vec<String>,
}

impl Fit {
    /// Whether the text describes another machine: a fact disagrees.
    pub fn other_machine(&self) -> bool {
        !self.misfits.is_empty()
    }

    /// The disagreements in one line: `sockets: 2 in the text (...), 1 here (...); memory: ...`.
    pub fn misfit_line(&self) -> String {
        self.misfits
            .iter()
            .map(Misfit::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// `self`, or an [`OtherMachine`] error naming `path` when a fact disagrees.
    ///
    /// # Errors
    /// [`OtherMachine`] when [`Fit::other_machine`].
    pub fn check(self, path: &std::path::Path) -> Result<Fit, OtherMachine> {
        if self.other_machine() {
            Err(OtherMachine {
                path: path.to_owned(),
                fit: self,
            })
        } else {
            Ok(self)
        }
    }
}

/// A `dmidecode` text saved on another machine than the one probed; one line naming the file
/// and each fact that disagrees, with both values and their sources.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "{}: the dmidecode text describes another machine: {}",
    path.display(),
    fit.misfit_line()
)]
pub struct OtherMachine {
    /// The file as named.
    pub path: std::path::PathBuf,
    /// How it fits (its misfits are not empty).
    pub fit: Fit,
}

/// `text` held against `machine` fact by fact (the module documentation lists them and their
/// sources); `machine` as probed, before the text's records were put in its place.
pub fn fit(text: &TextIdentity, machine: &Machine) -> Fit {
    let mut out = Fit::default();
    // the system, by its DMI strings
    let here = machine.firmware.known();
    let same = |a: &Option<String>, b: &Option<String>| match (a, b) {
        (Some(a), Some(b)) => Some(a.trim().eq_ignore_ascii_case(b.trim())),
        _ => None,
    };
    match (text.system(), here) {
        (None, _) => out
            .unchecked
            .push("system: the text has no DMI type 1 System Information".into()),
        (Some(_), None) => out
            .unchecked
            .push("system: this machine's DMI strings are unknown (/sys/class/dmi/id)".into()),
        (Some(words), Some(ids)) => {
            let vendor = same(&text.system_vendor, &ids.system_vendor);
            let product = same(&text.system_product, &ids.system_product);
            let here_words = [&ids.system_vendor, &ids.system_product]
                .iter()
                .filter_map(|s| s.as_deref())
                .collect::<Vec<_>>()
                .join(" ");
            match (vendor, product) {
                (Some(false), _) | (_, Some(false)) => out.misfits.push(Misfit {
                    fact: "system",
                    text: format!("{words} (DMI type 1 System Information)"),
                    machine: format!("{here_words} ({})", ids.source),
                }),
                (None, None) => out.unchecked.push(format!(
                    "system: {} gives no manufacturer or product name",
                    ids.source
                )),
                _ => out.checked.push(format!("system {words}")),
            }
        }
    }
    // the DMI UUID and serial, hashed on both sides
    let host = &machine.os.host_id;
    for (fact, text_hash, here_hash, file) in [
        (
            "DMI product UUID",
            &text.uuid_hashed,
            &host.dmi_uuid,
            "/sys/class/dmi/id/product_uuid",
        ),
        (
            "DMI serial",
            &text.serial_hashed,
            &host.dmi_serial,
            "/sys/class/dmi/id/product_serial",
        ),
    ] {
        match (text_hash, here_hash) {
            (Some(a), Some(b)) if a != b => out.misfits.push(Misfit {
                fact,
                text: "one value (DMI type 1 System Information)".into(),
                machine: format!("another ({file}, compared hashed)"),
            }),
            (Some(_), Some(_)) => out.checked.push(fact.to_string()),
            _ => {}
        }
    }
    // the sockets
    match (text.sockets, machine.cpu.topology.packages.known()) {
        (Some(t), Some(&here)) if t != here => out.misfits.push(Misfit {
            fact: "sockets",
            text: format!("{t} (populated DMI type 4 Processor Information records)"),
            machine: format!(
                "{here} (packages of the online CPUs, \
                 /sys/devices/system/cpu/cpuN/topology/physical_package_id)"
            ),
        }),
        (Some(t), Some(_)) => out.checked.push(format!("sockets {t}")),
        (None, _) => out
            .unchecked
            .push("sockets: the text has no DMI type 4 Processor Information".into()),
        (Some(_), None) => out
            .unchecked
            .push("sockets: this machine's packages are unknown".into()),
    }
    // the memory
    match (
        text.installed_bytes.filter(|b| *b > 0),
        machine.memory.meminfo.known(),
    ) {
        (Some(installed), Some(mi)) => {
            let total = mi.mem_total_bytes;
            let share = total as f64 / installed as f64;
            if (MIN_MEMTOTAL_SHARE..=1.0).contains(&share) {
                out.checked.push(format!(
                    "memory {} installed, MemTotal {}",
                    format_bytes_binary(installed),
                    format_bytes_binary(total)
                ));
            } else {
                out.misfits.push(Misfit {
                    fact: "memory",
                    text: format!(
                        "{} installed (DMI type 17 Memory Devices)",
                        format_bytes_binary(installed)
                    ),
                    machine: format!(
                        "MemTotal {} (/proc/meminfo), {:.0} % of it; a machine's MemTotal is \
                         {:.0} % to 100 % of its installed memory",
                        format_bytes_binary(total),
                        share * 100.0,
                        MIN_MEMTOTAL_SHARE * 100.0
                    ),
                });
            }
        }
        (None, _) => out
            .unchecked
            .push("memory: no module size in the text's DMI type 17 records".into()),
        (Some(_), None) => out
            .unchecked
            .push("memory: this machine's MemTotal is unknown (/proc/meminfo)".into()),
    }
    out
}

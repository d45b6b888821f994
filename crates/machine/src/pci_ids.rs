//! Names of PCI vendors, devices and classes from the PCI ID database (`pci.ids`, the PCI ID
//! Repository's file that `lspci` reads), so that a function reads as lspci shows it:
//! `Ethernet controller: Intel Corporation I350 Gigabit Network Connection [8086:1521]`.
//!
//! Here: the parsed database and the names it gives ([`PciIds`], [`PciNames`], [`parse`]); the
//! reader is `hwsurvey_probe::pci_ids`.
//!
//! Source: the database of the machine that runs hwsurvey, at the first of
//! `hwsurvey_probe::pci_ids::PCI_IDS_PATHS` that exists (Debian's package `pci.ids` installs `/usr/share/misc/pci.ids`; Red Hat and SUSE
//! ship it as `/usr/share/hwdata/pci.ids`). It is read directly, not through a
//! `SysRoot`: a capture probed elsewhere is named with the reading machine's database,
//! as `lspci -F` names a saved dump, and no snapshot carries the 1.3 MB file. Which file and
//! which version named the functions is kept with them ([`PciIdsSource`]), so a result file says
//! what its names came from; without the file the names are unknown with that reason and the
//! functions are shown by class and ids, as before.
//!
//! Format (the file's own header and `lspci`'s `lib/names-parse.c`): `vvvv  vendor name` at
//! column 0, `\tdddd  device name` below it, `\t\tssss ssss  subsystem name` below that; after
//! `C cc  class name`, `\tss  subclass name` and `\t\tpp  programming interface`. `#` starts a
//! comment; the header comments carry `Version:` and `Date:`.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The database that named the PCI functions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PciIdsSource {
    /// The file read (`/usr/share/misc/pci.ids`).
    pub path: String,
    /// The header's `Version:` (`2023.04.10`), if it has one.
    pub version: Option<String>,
    /// The header's `Date:` (`2023-04-10 20:08:02`), if it has one.
    pub date: Option<String>,
}

impl std::fmt::Display for PciIdsSource {
    /// `pci.ids 2023.04.10 (/usr/share/misc/pci.ids)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pci.ids {} ({})",
            self.version.as_deref().unwrap_or("of unknown version"),
            self.path
        )
    }
}

/// One function's names from the database; `None` where the database has no entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PciNames {
    /// The vendor (`Intel Corporation`).
    pub vendor: Option<String>,
    /// The device (`I350 Gigabit Network Connection`).
    pub device: Option<String>,
    /// The class in words as lspci shows it: the subclass's name (`Ethernet controller`,
    /// `Non-Volatile memory controller`), else the base class's.
    pub class: Option<String>,
}

impl PciNames {
    /// Whether the database named nothing.
    pub fn is_empty(&self) -> bool {
        self.vendor.is_none() && self.device.is_none() && self.class.is_none()
    }
}

/// The names the database gives for the ids asked for ([`parse`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PciIds {
    /// The header's `Version:`.
    pub version: Option<String>,
    /// The header's `Date:`.
    pub date: Option<String>,
    vendors: BTreeMap<u16, String>,
    devices: BTreeMap<(u16, u16), String>,
    classes: BTreeMap<u8, String>,
    subclasses: BTreeMap<(u8, u8), String>,
}

impl PciIds {
    /// The names of a function with `vendor`, `device` and 24-bit `class_code`, each where
    /// known and asked for in [`parse`].
    pub fn names(
        &self,
        vendor: Option<u16>,
        device: Option<u16>,
        class_code: Option<u32>,
    ) -> PciNames {
        let base = class_code.map(|c| (c >> 16) as u8);
        let sub = class_code.map(|c| (c >> 8) as u8);
        PciNames {
            vendor: vendor.and_then(|v| self.vendors.get(&v).cloned()),
            device: vendor
                .zip(device)
                .and_then(|k| self.devices.get(&k).cloned()),
            class: base.zip(sub).and_then(|k| {
                self.subclasses
                    .get(&k)
                    .or_else(|| self.classes.get(&k.0))
                    .cloned()
            }),
        }
    }
}

/// What to look up: `(vendor, device)` pairs and `(base class, subclass)` pairs.
#[derive(Debug, Clone, Default)]
pub struct Wanted {
    /// `(vendor, device)` ids.
    pub devices: BTreeSet<(u16, u16)>,
    /// `(base class, subclass)` codes.
    pub classes: BTreeSet<(u8, u8)>,
}

/// `hhhh  name` (or `hh  name`): the id of `digits` hex digits and the name after two spaces.
fn id_and_name(line: &str, digits: usize) -> Option<(u32, &str)> {
    let id = line.get(..digits)?;
    let rest = line.get(digits..)?;
    let name = rest.strip_prefix("  ")?.trim();
    if !id.chars().all(|c| c.is_ascii_hexdigit()) || name.is_empty() {
        return None;
    }
    Some((u32::from_str_radix(id, 16).ok()?, name))
}

/// Reads the names of `wanted` out of a pci.ids text in one pass; only the entries asked for
/// are kept. Pure.
///
/// # Errors
/// The first line that is no comment, no blank and none of the forms of the module's format:
/// `pci.ids line 12: expected "vvvv  vendor name", got "zz  x"` (lspci stops on it too).
pub fn parse(text: &str, wanted: &Wanted) -> Result<PciIds, String> {
    let vendors: BTreeSet<u16> = wanted.devices.iter().map(|(v, _)| *v).collect();
    let bases: BTreeSet<u8> = wanted.classes.iter().map(|(b, _)| *b).collect();
    let mut out = PciIds::default();
    // the vendor or class the indented lines below belong to
    enum Section {
        None,
        Vendor(u16),
        Class(u8),
    }
    let mut section = Section::None;
    let bad = |n: usize, expected: &str, line: &str| {
        format!(
            "pci.ids line {}: expected {expected}, got {}",
            n + 1,
            hwsurvey_model::text::quote(line)
        )
    };
    for (n, line) in text.lines().enumerate() {
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim();
            if let Some(v) = comment.strip_prefix("Version:") {
                out.version.get_or_insert_with(|| v.trim().to_string());
            } else if let Some(d) = comment.strip_prefix("Date:") {
                out.date.get_or_insert_with(|| d.trim().to_string());
            }
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if let Some(sub) = line.strip_prefix("\t\t") {
            // a subsystem or a programming interface: not shown
            if sub.trim().is_empty() {
                return Err(bad(n, "a subsystem or programming interface", line));
            }
            continue;
        }
        if let Some(entry) = line.strip_prefix('\t') {
            match section {
                Section::Vendor(v) => {
                    let (id, name) = id_and_name(entry, 4)
                        .ok_or_else(|| bad(n, "\"\\tdddd  device name\"", line))?;
                    let key = (v, id as u16);
                    if wanted.devices.contains(&key) {
                        out.devices.insert(key, name.to_string());
                    }
                }
                Section::Class(c) => {
                    let (id, name) = id_and_name(entry, 2)
                        .ok_or_else(|| bad(n, "\"\\tss  subclass name\"", line))?;
                    let key = (c, id as u8);
                    if wanted.classes.contains(&key) {
                        out.subclasses.insert(key, name.to_string());
                    }
                }
                Section::None => return Err(bad(n, "a vendor or class line first", line)),
            }
            continue;
        }
        if let Some(class) = line.strip_prefix("C ") {
            let (id, name) =
                id_and_name(class, 2).ok_or_else(|| bad(n, "\"C cc  class name\"", line))?;
            let c = id as u8;
            if bases.contains(&c) {
                out.classes.insert(c, name.to_string());
            }
            section = Section::Class(c);
            continue;
        }
        let (id, name) =
            id_and_name(line, 4).ok_or_else(|| bad(n, "\"vvvv  vendor name\"", line))?;
        let v = id as u16;
        if vendors.contains(&v) {
            out.vendors.insert(v, name.to_string());
        }
        section = Section::Vendor(v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as the 2023.04.10 file has them (vendor 8086, two of its devices with a
    /// subsystem, class 02 with subclass 00 and a programming interface of class 01).
    const SAMPLE: &str = "#\n#\tList of PCI ID's\n#\n#\tVersion: 2023.04.10\n#\tDate:    2023-04-10 20:08:02\n#\n\
8086  Intel Corporation\n\t1521  I350 Gigabit Network Connection\n\t\t1028 0602  Gigabit 4P I350-t rNDC\n\
\t3c00  Xeon E5/Core i7 DMI2\n\
15b3  Mellanox Technologies\n\t1003  MT27500 Family [ConnectX-3]\n\
C 01  Mass storage controller\n\t08  Non-Volatile memory controller\n\t\t02  NVM Express\n\
C 02  Network controller\n\t00  Ethernet controller\n\
C 08  Generic system peripheral\n\t80  System peripheral\n";
    #[test]
    fn names_of_the_ids_asked_for_and_the_version() {
        let wanted = Wanted {
            devices: [(0x8086, 0x1521), (0x8086, 0x3c99), (0x15b3, 0x1003)].into(),
            classes: [(0x02, 0x00), (0x01, 0x08), (0x08, 0x99)].into(),
        };
        let db = parse(SAMPLE, &wanted).unwrap();
        assert_eq!(db.version.as_deref(), Some("2023.04.10"));
        assert_eq!(db.date.as_deref(), Some("2023-04-10 20:08:02"));
        assert_eq!(
            db.names(Some(0x8086), Some(0x1521), Some(0x020000)),
            PciNames {
                vendor: Some("Intel Corporation".into()),
                device: Some("I350 Gigabit Network Connection".into()),
                class: Some("Ethernet controller".into()),
            }
        );
        // a device the file lacks keeps its vendor; a subclass it lacks falls to the class
        let n = db.names(Some(0x8086), Some(0x3c99), Some(0x089900));
        assert_eq!(n.vendor.as_deref(), Some("Intel Corporation"));
        assert_eq!(n.device, None);
        assert_eq!(n.class.as_deref(), Some("Generic system peripheral"));
        // not asked for: not kept
        assert_eq!(db.names(Some(0x8086), Some(0x3c00), None).device, None);
        assert_eq!(
            db.names(Some(0x15b3), Some(0x1003), Some(0x010802)),
            PciNames {
                vendor: Some("Mellanox Technologies".into()),
                device: Some("MT27500 Family [ConnectX-3]".into()),
                class: Some("Non-Volatile memory controller".into()),
            }
        );
    }
    #[test]
    fn a_broken_line_is_named_with_its_number() {
        let text = "8086  Intel Corporation\n\tzz  broken\n";
        let e = parse(text, &Wanted::default()).unwrap_err();
        assert_eq!(
            e,
            "pci.ids line 2: expected \"\\tdddd  device name\", got \"\\tzz  broken\""
        );
    }
}

//! Names of PCI vendors, devices and classes from the PCI ID database (`pci.ids`, the PCI ID
//! Repository's file that `lspci` reads), so that a function reads as lspci shows it:
//! `Ethernet controller: Intel Corporation I350 Gigabit Network Connection [8086:1521]`.
//!
//! Source: the database of the machine that runs hwsurvey, at the first of [`PCI_IDS_PATHS`]
//! that exists (Debian's package `pci.ids` installs `/usr/share/misc/pci.ids`; Red Hat and SUSE
//! ship it as `/usr/share/hwdata/pci.ids`). It is read directly, not through a
//! [`crate::SysRoot`]: a capture probed elsewhere is named with the reading machine's database,
//! as `lspci -F` names a saved dump, and no snapshot carries the 1.3 MB file. Which file and
//! which version named the functions is kept with them ([`PciIdsSource`]), so a result file says
//! what its names came from; without the file the names are unknown with that reason and the
//! functions are shown by class and ids, as before.
//!
//! Format (the file's own header and `lspci`'s `lib/names-parse.c`): `vvvv  vendor name` at
//! column 0, `\tdddd  device name` below it, `\t\tssss ssss  subsystem name` below that; after
//! `C cc  class name`, `\tss  subclass name` and `\t\tpp  programming interface`. `#` starts a
//! comment; the header comments carry `Version:` and `Date:`.

use std::path::Path;

use hwsurvey_model::Unknown;

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::pci_ids::*;

/// Where the database is looked for, in order: Debian (package `pci.ids`), then Red Hat / SUSE
/// (`hwdata`).
pub const PCI_IDS_PATHS: [&str; 2] = ["/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"];

/// The largest database read, bytes (the 2025 file is 1.5 MB): a bound on input.
pub const MAX_PCI_IDS_BYTES: u64 = 16 << 20;

/// Reads the first database of `paths` that exists and looks `wanted` up in it.
///
/// # Errors
/// An [`Unknown`] whose words say why the names are unknown: `names unknown:
/// /usr/share/misc/pci.ids missing (Debian package pci.ids)` when none of `paths` exists (the
/// other paths named too), the file and the error when it cannot be read or is over
/// [`MAX_PCI_IDS_BYTES`], the file and the line of [`parse`]'s error.
pub fn read(paths: &[&Path], wanted: &Wanted) -> Result<(PciIdsSource, PciIds), Unknown> {
    use std::io::Read as _;
    for path in paths {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(Unknown::Other {
                    detail: format!("names unknown: {}: {e}", path.display()),
                })
            }
        };
        let mut text = String::new();
        let read = file.take(MAX_PCI_IDS_BYTES + 1).read_to_string(&mut text);
        if let Err(e) = read {
            return Err(Unknown::Other {
                detail: format!("names unknown: {}: {e}", path.display()),
            });
        }
        if text.len() as u64 > MAX_PCI_IDS_BYTES {
            return Err(Unknown::Other {
                detail: format!(
                    "names unknown: {} is over {} MiB, no PCI ID database",
                    path.display(),
                    MAX_PCI_IDS_BYTES >> 20
                ),
            });
        }
        let ids = parse(&text, wanted).map_err(|e| Unknown::Other {
            detail: format!("names unknown: {}: {e}", path.display()),
        })?;
        let source = PciIdsSource {
            path: path.display().to_string(),
            version: ids.version.clone(),
            date: ids.date.clone(),
        };
        return Ok((source, ids));
    }
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    Err(Unknown::Other {
        detail: format!(
            "names unknown: {} missing (Debian package pci.ids)",
            names.join(", ")
        ),
    })
}

/// [`read`] at [`PCI_IDS_PATHS`].
pub fn read_default(wanted: &Wanted) -> Result<(PciIdsSource, PciIds), Unknown> {
    let paths: Vec<&Path> = PCI_IDS_PATHS.iter().map(Path::new).collect();
    read(&paths, wanted)
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

    #[test]
    fn a_missing_database_says_which_files_and_package() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("misc/pci.ids");
        let b = dir.path().join("hwdata/pci.ids");
        let e = read(&[&a, &b], &Wanted::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "names unknown: {}, {} missing (Debian package pci.ids)",
                a.display(),
                b.display()
            )
        );
        std::fs::create_dir_all(b.parent().unwrap()).unwrap();
        std::fs::write(&b, SAMPLE).unwrap();
        let (source, _) = read(&[&a, &b], &Wanted::default()).unwrap();
        assert_eq!(
            source.to_string(),
            format!("pci.ids 2023.04.10 ({})", b.display())
        );
    }
}

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

    /// The head of the 2023.04.10 file and one vendor.
    const SAMPLE: &str =
        "#\n#\tVersion: 2023.04.10\n#\tDate:    2023-04-10 20:08:02\n#\n8086  Intel Corporation\n";
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

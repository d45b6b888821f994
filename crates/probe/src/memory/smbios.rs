//! The readers of binary SMBIOS under a [`SysRoot`]: the whole table
//! (`/sys/firmware/dmi/tables/DMI`, with `smbios_entry_point` for the version), else the
//! per-structure blobs (`/sys/firmware/dmi/entries/<type>-<n>/raw`) laid end to end
//! ([`read`]). The decoder is `hwsurvey_machine::memory::smbios`, re-exported here.

use hwsurvey_model::{Probed, Unknown};

use super::{SmbiosMemory, SmbiosSource};
use crate::{ProbeError, SysRoot};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::memory::smbios::*;

/// The whole SMBIOS structure table (root-only on most distributions; kernels >= 4.2).
pub const DMI_TABLE: &str = "/sys/firmware/dmi/tables/DMI";
/// The SMBIOS entry point (`_SM_` 2.x or `_SM3_` 3.x anchor), which carries the version.
pub const DMI_ENTRY_POINT: &str = "/sys/firmware/dmi/tables/smbios_entry_point";
/// Per-structure folders (`<type>-<instance>/raw`), kernels >= 4.1 with CONFIG_DMI_SYSFS.
pub const DMI_ENTRIES: &str = "/sys/firmware/dmi/entries";
/// The system vendor, world-readable (used for vendor-specific locator conventions).
pub const SYS_VENDOR: &str = "/sys/class/dmi/id/sys_vendor";

/// Reads SMBIOS memory records under `root`: the whole table first, then per-entry blobs.
/// Unavailable (no `/sys/firmware/dmi`: VMs without DMI, sparc64, e2k, containers; or no
/// root) is an [`Unknown`] with the reason, not an error.
pub fn read(root: &SysRoot) -> Probed<SmbiosMemory> {
    let vendor = root
        .read_value(SYS_VENDOR)
        .ok()
        .and_then(|v| hwsurvey_machine::dmi::clean(&v));
    let with_vendor = |mut m: SmbiosMemory| {
        if m.system_vendor.is_none() {
            m.system_vendor = vendor.clone();
        }
        Probed::Known(m)
    };
    let table_err = match root.read_bytes(DMI_TABLE) {
        Ok(bytes) => {
            let version = root
                .read_bytes(DMI_ENTRY_POINT)
                .ok()
                .and_then(|ep| parse_entry_point(&ep));
            return match parse_structures(&bytes, version, SmbiosSource::DmiTable) {
                Some(mut m) => {
                    if !ends_with_end_of_table(&bytes) {
                        m.problems.push(Unknown::Invalid {
                            path: DMI_TABLE.to_string(),
                            detail: format!(
                                "expected the table to end with a Type 127 End-of-Table \
                                 structure; {} bytes without one (truncated?)",
                                bytes.len()
                            ),
                        });
                    }
                    with_vendor(m)
                }
                None => Probed::Unknown(Unknown::Invalid {
                    path: DMI_TABLE.to_string(),
                    detail: format!(
                        "expected SMBIOS structures with Type 17 Memory Device records, \
                         found none in {} bytes",
                        bytes.len()
                    ),
                }),
            };
        }
        Err(e) => e,
    };
    match read_entries(root) {
        Ok(Some(m)) => with_vendor(m),
        Ok(None) => Probed::Unknown(Unknown::Invalid {
            path: DMI_ENTRIES.to_string(),
            detail: "no readable 17-*/raw Memory Device entries".to_string(),
        }),
        Err(entries_err) if entries_err.is_missing() && table_err.is_missing() => {
            Probed::Unknown(Unknown::Other {
                detail: format!(
                    "{DMI_TABLE} and {DMI_ENTRIES} are missing \
                     (no DMI in this VM or container, or a platform without SMBIOS such as \
                     most sparc64 and e2k machines)"
                ),
            })
        }
        // The table exists but could not be read (e.g. permission denied without root).
        Err(_) if !table_err.is_missing() => Probed::Unknown(Unknown::from(table_err)),
        Err(e) => Probed::Unknown(Unknown::from(e)),
    }
}

/// Reads `entries/{1,4,16,17,19,20}-*/raw` blobs and decodes them as one table.
fn read_entries(root: &SysRoot) -> Result<Option<SmbiosMemory>, ProbeError> {
    let mut names: Vec<(u8, u32, String)> = root
        .list_dir(DMI_ENTRIES)?
        .into_iter()
        .filter_map(|n| {
            let (t, i) = n.split_once('-')?;
            let t: u8 = t.parse().ok()?;
            let i: u32 = i.parse().ok()?;
            matches!(t, 1 | 4 | 16 | 17 | 19 | 20).then_some((t, i, n))
        })
        .collect();
    names.sort();
    let mut table = Vec::new();
    let mut problems = Vec::new();
    for (dmi_type, _, name) in &names {
        let path = format!("{DMI_ENTRIES}/{name}/raw");
        match root
            .read_bytes(&path)
            .and_then(|blob| Ok(check_blob(&path, *dmi_type, blob)?))
        {
            Ok(blob) => table.extend_from_slice(&blob),
            Err(e) => problems.push(Unknown::from(e)),
        }
    }
    match parse_structures(&table, None, SmbiosSource::DmiEntries) {
        Some(mut m) => {
            // the files that could not be read first, then the structures that could not be
            // decoded
            problems.append(&mut m.problems);
            m.problems = problems;
            Ok(Some(m))
        }
        None => match problems.into_iter().next() {
            Some(Unknown::Missing { path }) => Err(ProbeError::Missing { path }),
            Some(Unknown::PermissionDenied { path }) => Err(ProbeError::PermissionDenied { path }),
            Some(u) => Err(ProbeError::invalid(
                DMI_ENTRIES,
                "decodable Type 17 entries",
                &u.to_string(),
            )),
            None => Ok(None),
        },
    }
}

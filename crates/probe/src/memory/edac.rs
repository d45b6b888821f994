//! EDAC memory controllers, `/sys/devices/system/edac/mc/mcN` (Documentation/admin-guide/ras.rst
//! and Documentation/ABI/testing/sysfs-devices-edac):
//! - `mcN/{mc_name,size_mb,ce_count,ue_count,ce_noinfo_count,ue_noinfo_count}`;
//! - `mcN/dimmM/{dimm_label,size,dimm_mem_type,dimm_location,dimm_ce_count,dimm_ue_count}`
//!   (kernels >= 3.3; `size` is in MiB);
//! - `mcN/csrowM/{size_mb,ce_count,ue_count,chK_ce_count,chK_dimm_label}` (the older layout,
//!   still present).
//!
//! Sizes are MiB in the kernel (`size_mb`, and `size` despite its name), converted to bytes here.
//! Every value is [`Probed`]: a missing or corrupt file is unknown with its path, never 0.

use hwsurvey_model::{Probed, Unknown};

use crate::SysRoot;

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::memory::edac::*;

/// Directory of the EDAC memory controllers.
pub const EDAC_MC: &str = "/sys/devices/system/edac/mc";

fn numbered(names: Vec<String>, prefix: &str) -> Vec<(u32, String)> {
    let mut v: Vec<(u32, String)> = names
        .into_iter()
        .filter_map(|n| Some((n.strip_prefix(prefix)?.parse().ok()?, n)))
        .collect();
    v.sort();
    v
}

fn count(root: &SysRoot, path: &str) -> Probed<u64> {
    match root.read_parsed::<u64>(path, "a decimal count") {
        Ok(v) => Probed::Known(v),
        Err(e) => Probed::Unknown(e.into()),
    }
}

fn mib(root: &SysRoot, path: &str) -> Probed<u64> {
    match root.read_parsed::<u64>(path, "a size in MiB") {
        Ok(v) => match v.checked_mul(1 << 20) {
            Some(b) => Probed::Known(b),
            None => Probed::Unknown(Unknown::Invalid {
                path: path.to_string(),
                detail: format!("size {v} MiB overflows"),
            }),
        },
        Err(e) => Probed::Unknown(e.into()),
    }
}

fn text(root: &SysRoot, path: &str) -> Probed<String> {
    match root.read_value(path) {
        Ok(v) if v.is_empty() => Probed::Unknown(Unknown::Invalid {
            path: path.to_string(),
            detail: "expected text, got an empty file".to_string(),
        }),
        Ok(v) => Probed::Known(v),
        Err(e) => Probed::Unknown(e.into()),
    }
}

/// Reads all controllers under `root`. No EDAC driver (the directory is missing or has no
/// `mcN`) is unknown with that reason.
pub fn read(root: &SysRoot) -> Probed<Edac> {
    let names = match root.list_dir(EDAC_MC) {
        Ok(n) => n,
        Err(e) => return Probed::Unknown(e.into()),
    };
    let controllers: Vec<EdacController> = numbered(names, "mc")
        .into_iter()
        .map(|(_, name)| controller(root, &format!("{EDAC_MC}/{name}"), name))
        .collect();
    if controllers.is_empty() {
        return Probed::Unknown(Unknown::Other {
            detail: format!("{EDAC_MC} holds no mcN controller (no EDAC driver bound)"),
        });
    }
    Probed::Known(Edac { controllers })
}

fn controller(root: &SysRoot, dir: &str, name: String) -> EdacController {
    let entries = root.list_dir(dir).unwrap_or_default();
    let dimms = numbered(entries.clone(), "dimm")
        .into_iter()
        .map(|(_, n)| {
            let d = format!("{dir}/{n}");
            EdacDimm {
                label: text(root, &format!("{d}/dimm_label")),
                size_bytes: mib(root, &format!("{d}/size")),
                mem_type: text(root, &format!("{d}/dimm_mem_type")),
                location: text(root, &format!("{d}/dimm_location")),
                ce_count: count(root, &format!("{d}/dimm_ce_count")),
                ue_count: count(root, &format!("{d}/dimm_ue_count")),
                name: n,
            }
        })
        .collect();
    let csrows = numbered(entries, "csrow")
        .into_iter()
        .map(|(_, n)| {
            let d = format!("{dir}/{n}");
            let files = root.list_dir(&d).unwrap_or_default();
            let mut chans: Vec<u32> = files
                .iter()
                .filter_map(|f| {
                    let rest = f.strip_prefix("ch")?;
                    let (k, _) = rest.split_once('_')?;
                    k.parse().ok()
                })
                .collect();
            chans.sort();
            chans.dedup();
            EdacCsrow {
                size_bytes: mib(root, &format!("{d}/size_mb")),
                ce_count: count(root, &format!("{d}/ce_count")),
                ue_count: count(root, &format!("{d}/ue_count")),
                channels: chans
                    .into_iter()
                    .map(|k| EdacCsrowChannel {
                        channel: k,
                        label: text(root, &format!("{d}/ch{k}_dimm_label")),
                        ce_count: count(root, &format!("{d}/ch{k}_ce_count")),
                    })
                    .collect(),
                name: n,
            }
        })
        .collect();
    EdacController {
        mc_name: text(root, &format!("{dir}/mc_name")),
        size_bytes: mib(root, &format!("{dir}/size_mb")),
        ce_count: count(root, &format!("{dir}/ce_count")),
        ue_count: count(root, &format!("{dir}/ue_count")),
        ce_noinfo_count: count(root, &format!("{dir}/ce_noinfo_count")),
        ue_noinfo_count: count(root, &format!("{dir}/ue_noinfo_count")),
        dimms,
        csrows,
        name,
    }
}

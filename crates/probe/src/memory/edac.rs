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

use std::fmt::Write as _;

use hwsurvey_model::units::format_bytes_binary;
use hwsurvey_model::{Probed, Unknown};
use serde::{Deserialize, Serialize};

use crate::SysRoot;

/// Directory of the EDAC memory controllers.
pub const EDAC_MC: &str = "/sys/devices/system/edac/mc";

/// All EDAC memory controllers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edac {
    /// `mc0`, `mc1`, ... in numeric order.
    pub controllers: Vec<EdacController>,
}

/// One memory controller (`mcN`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdacController {
    /// Directory name, `mc0`.
    pub name: String,
    /// `mc_name`: the driver's controller name (`IE31200`, `ghes_edac`).
    pub mc_name: Probed<String>,
    /// `size_mb` in bytes (MiB x 2^20).
    pub size_bytes: Probed<u64>,
    /// `ce_count`: corrected errors since the driver loaded.
    pub ce_count: Probed<u64>,
    /// `ue_count`: uncorrected errors.
    pub ue_count: Probed<u64>,
    /// `ce_noinfo_count`: corrected errors not attributable to a DIMM.
    pub ce_noinfo_count: Probed<u64>,
    /// `ue_noinfo_count`.
    pub ue_noinfo_count: Probed<u64>,
    /// `dimmM` folders in numeric order.
    pub dimms: Vec<EdacDimm>,
    /// `csrowM` folders in numeric order.
    pub csrows: Vec<EdacCsrow>,
}

/// One `dimmM` folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdacDimm {
    /// Directory name, `dimm0`.
    pub name: String,
    /// `dimm_label` (e.g. `N0 DIMM_A0`; often the SMBIOS locator).
    pub label: Probed<String>,
    /// `size` (MiB in the kernel) in bytes.
    pub size_bytes: Probed<u64>,
    /// `dimm_mem_type` (`Registered-DDR4`).
    pub mem_type: Probed<String>,
    /// `dimm_location` (`csrow 0 channel 0`).
    pub location: Probed<String>,
    /// `dimm_ce_count`.
    pub ce_count: Probed<u64>,
    /// `dimm_ue_count`.
    pub ue_count: Probed<u64>,
}

/// One `csrowM` folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdacCsrow {
    /// Directory name, `csrow0`.
    pub name: String,
    /// `size_mb` in bytes.
    pub size_bytes: Probed<u64>,
    /// `ce_count`.
    pub ce_count: Probed<u64>,
    /// `ue_count`.
    pub ue_count: Probed<u64>,
    /// Channels `chK`: (K, `chK_dimm_label`, `chK_ce_count`).
    pub channels: Vec<EdacCsrowChannel>,
}

/// One channel of a csrow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdacCsrowChannel {
    /// K in `chK_*`.
    pub channel: u32,
    /// `chK_dimm_label`.
    pub label: Probed<String>,
    /// `chK_ce_count`.
    pub ce_count: Probed<u64>,
}

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

/// Readable lines for [`super::summary`].
pub fn summary(e: &Edac) -> String {
    let mut out = String::new();
    let show = |p: &Probed<u64>| match p {
        Probed::Known(v) => v.to_string(),
        Probed::Unknown(_) => "?".to_string(),
    };
    for c in &e.controllers {
        let _ = writeln!(
            out,
            "  EDAC {} ({}): {}, CE {}, UE {}, {}, {}",
            c.name,
            c.mc_name.known().map(String::as_str).unwrap_or("?"),
            c.size_bytes
                .known()
                .map(|b| format_bytes_binary(*b))
                .unwrap_or_else(|| "size ?".into()),
            show(&c.ce_count),
            show(&c.ue_count),
            hwsurvey_model::units::plural(c.dimms.len() as u64, "DIMM"),
            hwsurvey_model::units::plural(c.csrows.len() as u64, "csrow")
        );
        for d in &c.dimms {
            let _ = writeln!(
                out,
                "    {} {:<16} CE {} UE {}",
                d.name,
                d.label.known().map(String::as_str).unwrap_or("?"),
                show(&d.ce_count),
                show(&d.ue_count)
            );
        }
    }
    out
}

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

use hwsurvey_model::units::format_bytes_binary;
use hwsurvey_model::Probed;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

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

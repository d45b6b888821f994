//! One PCI function as the probe records it: its identity, NUMA node, PCIe link (speed,
//! width, theoretical bandwidth), its place in the tree and its role. Typed values and the
//! pure link-speed parser only; the readers are in [`crate::io`] (sysfs files) and
//! [`crate::pcie`] (the tree, its roles and paths).
//!
//! Theoretical per-direction link bandwidth (decimal GB/s, as PCI-SIG quotes it):
//! lanes x transfer rate x encoding efficiency / 8 bits. Gen1/Gen2 (2.5, 5 GT/s) use 8b/10b;
//! Gen3-Gen5 (8, 16, 32 GT/s) 128b/130b; Gen6/Gen7 (64, 128 GT/s) PAM4 FLIT mode with no line
//! code (1b/1b; the spec's headline x16 Gen6 = 128 GB/s per direction; FLIT FEC/CRC overhead
//! is not subtracted). E.g. Gen2 x8 = 4.00 GB/s, Gen3 x8 = 7.88 GB/s.

use hwsurvey_model::Probed;
use serde::{Deserialize, Serialize};

/// A PCIe link rate: transfer rate, generation and line encoding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkSpeed {
    /// Per-lane transfer rate, MT/s (2500 = 2.5 GT/s).
    pub transfer_rate_mt_per_s: u32,
    /// PCIe generation (1..=7).
    pub generation: u8,
    /// Line encoding: `8b/10b`, `128b/130b`, or `1b/1b` (PAM4 FLIT, Gen6+).
    pub encoding: String,
}

impl LinkSpeed {
    fn efficiency(&self) -> (u64, u64) {
        match self.generation {
            1 | 2 => (8, 10),
            3..=5 => (128, 130),
            _ => (1, 1),
        }
    }

    /// Theoretical payload bandwidth per direction of `lanes` lanes, bytes/s.
    pub fn bandwidth_bytes_per_s(&self, lanes: u32) -> u64 {
        let (num, den) = self.efficiency();
        u64::from(lanes) * u64::from(self.transfer_rate_mt_per_s) * 1_000_000 * num / (den * 8)
    }
}

/// Parses a sysfs link speed (`8.0 GT/s PCIe`, `2.5 GT/s`, `5 GT/s`, `16.0 GT/s PCIe`).
/// `Unknown`/`Unknown speed` and rates that are no PCIe generation are `Err` with the text.
pub fn parse_link_speed(text: &str) -> Result<LinkSpeed, String> {
    let t = text.trim();
    let q = hwsurvey_model::text::quote(t);
    let number = t
        .split_whitespace()
        .next()
        .filter(|_| t.contains("GT/s"))
        .ok_or_else(|| format!("expected \"<rate> GT/s\", got {q}"))?;
    let (whole, frac) = number.split_once('.').unwrap_or((number, "0"));
    let whole: u32 = whole
        .parse()
        .map_err(|_| format!("expected a rate in GT/s, got {q}"))?;
    let frac_digit: u32 = frac
        .chars()
        .next()
        .and_then(|c| c.to_digit(10))
        .ok_or_else(|| format!("expected a rate in GT/s, got {q}"))?;
    let mt = whole
        .checked_mul(1000)
        .and_then(|w| w.checked_add(frac_digit * 100))
        .ok_or_else(|| format!("rate out of range in {q}"))?;
    let (generation, encoding) = match mt {
        2500 => (1, "8b/10b"),
        5000 => (2, "8b/10b"),
        8000 => (3, "128b/130b"),
        16000 => (4, "128b/130b"),
        32000 => (5, "128b/130b"),
        64000 => (6, "1b/1b"),
        128000 => (7, "1b/1b"),
        _ => return Err(format!("{q} is no PCIe generation's rate")),
    };
    Ok(LinkSpeed {
        transfer_rate_mt_per_s: mt,
        generation,
        encoding: encoding.to_string(),
    })
}

/// A PCIe link: what it runs at and what it could.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcieLink {
    /// `current_link_speed`.
    pub current_speed: Probed<LinkSpeed>,
    /// `current_link_width`, lanes.
    pub current_width_lanes: Probed<u32>,
    /// `max_link_speed`.
    pub max_speed: Probed<LinkSpeed>,
    /// `max_link_width`, lanes.
    pub max_width_lanes: Probed<u32>,
    /// Per-direction bandwidth at the current speed and width, bytes/s.
    pub current_bandwidth_bytes_per_s: Probed<u64>,
    /// Per-direction bandwidth at the maximum speed and width, bytes/s.
    pub max_bandwidth_bytes_per_s: Probed<u64>,
    /// Runs below its maximum speed (None when either is unknown).
    pub below_max_speed: Option<bool>,
    /// Runs on fewer lanes than its maximum (None when either is unknown).
    pub below_max_width: Option<bool>,
}

/// One PCI function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PciDevice {
    /// `domain:bus:device.function`, e.g. `0000:3b:00.0`.
    pub address: String,
    /// `class`: 24-bit class code (base class, subclass, programming interface).
    pub class_code: Probed<u32>,
    /// The class in words, from the base class and subclass (PCI Code and ID Assignment).
    pub class_name: Option<String>,
    /// `vendor` id.
    pub vendor_id: Probed<u16>,
    /// `device` id.
    pub device_id: Probed<u16>,
    /// `numa_node`: `None` when the kernel writes -1 (no node affinity).
    pub numa_node: Probed<Option<u32>>,
    /// The PCIe link, when the function has link files (`None`: conventional PCI or an
    /// older kernel).
    pub link: Option<PcieLink>,
    /// The upstream bridge's address, from the device tree (`None`: on a root bus).
    #[serde(default)]
    pub parent: Option<String>,
    /// The root complex (`pci0000:00`) the function sits below, from the device tree.
    #[serde(default)]
    pub root_complex: Option<String>,
    /// Its place in the PCIe hierarchy ([`crate::pcie::roles`]); `None` in result files
    /// written before it existed.
    #[serde(default)]
    pub role: Option<PcieRole>,
    /// Vendor, device and class in words from the PCI ID database ([`crate::pci_ids`]; which
    /// one is [`crate::io::Io::pci_ids`]); empty without the database, for ids it lacks, and
    /// in result files written before hwsurvey read it.
    #[serde(default, skip_serializing_if = "crate::pci_ids::PciNames::is_empty")]
    pub names: crate::pci_ids::PciNames,
}

/// A PCI function's place in the PCIe hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PcieRole {
    /// A root port (a bridge on a root complex's bus).
    RootPort,
    /// A switch's upstream port.
    SwitchUpstream,
    /// A switch's downstream port.
    SwitchDownstream,
    /// Another bridge below a port (PCIe-to-PCI, PCI-to-PCIe).
    Bridge,
    /// A function that is not a PCI-to-PCI bridge (devices, host bridges, root complex
    /// integrated endpoints).
    Endpoint,
}

impl PcieRole {
    /// In words: `root port`, `switch upstream port`, ...
    pub fn words(self) -> &'static str {
        match self {
            PcieRole::RootPort => "root port",
            PcieRole::SwitchUpstream => "switch upstream port",
            PcieRole::SwitchDownstream => "switch downstream port",
            PcieRole::Bridge => "bridge",
            PcieRole::Endpoint => "endpoint",
        }
    }
}

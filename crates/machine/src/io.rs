//! I/O: PCI(e) devices and block devices.
//!
//! - PCI: `/sys/bus/pci/devices/<domain:bus:dev.fn>/{class,vendor,device,numa_node,
//!   current_link_speed,current_link_width,max_link_speed,max_link_width}`
//!   (Documentation/ABI/testing/sysfs-bus-pci). Link files exist only for PCIe functions
//!   (kernels >= 4.13); `Unknown` speeds and width 0 are unknown, never zero.
//! - Block: `/sys/block/<name>` (a link into `/sys/devices`), with `size` (512-byte sectors,
//!   whatever the logical block size), `queue/rotational`, `queue/nr_requests`,
//!   `device/model`, and the NUMA node of the nearest ancestor device that has a `numa_node`.
//!
//! Theoretical per-direction link bandwidth: [`crate::pci::LinkSpeed`].

pub use crate::pci::{parse_link_speed, LinkSpeed, PciDevice, PcieLink};
use hwsurvey_model::units::format_bytes_binary;
use hwsurvey_model::{Probed, Unknown};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// PCI(e) and block devices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Io {
    /// PCI functions in address order, or why none could be listed.
    pub pci: Probed<Vec<PciDevice>>,
    /// Block devices in name order, or why none could be listed.
    pub block: Probed<Vec<BlockDevice>>,
    /// The path of every endpoint below a root port: the links on it, the narrowest, the
    /// endpoints sharing it and its oversubscription ([`crate::pcie::paths`]). Empty when no
    /// function sits below a root port (or in result files written before it existed).
    #[serde(default)]
    pub pcie_paths: Vec<crate::pcie::PciePath>,
    /// Lanes in use per root complex ([`crate::pcie::paths`]).
    #[serde(default)]
    pub root_complexes: Vec<crate::pcie::RootComplexLanes>,
    /// The PCI ID database that named the functions ([`crate::pci_ids`]), or why they have
    /// no names (`names unknown: /usr/share/misc/pci.ids missing (Debian package pci.ids)`);
    /// `None` when there was nothing to name (no PCI function) and in result files written
    /// before hwsurvey read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_ids: Option<Probed<crate::pci_ids::PciIdsSource>>,
}

impl Default for Io {
    fn default() -> Self {
        let none = || Unknown::Other {
            detail: "not probed".into(),
        };
        Io {
            pci: Probed::Unknown(none()),
            block: Probed::Unknown(none()),
            pcie_paths: Vec::new(),
            root_complexes: Vec::new(),
            pci_ids: None,
        }
    }
}

/// Class code -> words, for the classes a survey cares about.
pub fn class_name(code: u32) -> Option<&'static str> {
    let base = (code >> 16) & 0xFF;
    let sub = (code >> 8) & 0xFF;
    Some(match (base, sub) {
        (0x01, 0x00) => "SCSI storage controller",
        (0x01, 0x01) => "IDE controller",
        (0x01, 0x04) => "RAID controller",
        (0x01, 0x06) => "SATA controller",
        (0x01, 0x07) => "SAS controller",
        (0x01, 0x08) => "NVMe controller",
        (0x01, _) => "Mass storage controller",
        (0x02, 0x00) => "Ethernet controller",
        (0x02, 0x07) => "InfiniBand controller",
        (0x02, _) => "Network controller",
        (0x03, _) => "Display controller",
        (0x04, _) => "Multimedia controller",
        (0x05, _) => "Memory controller",
        (0x06, 0x00) => "Host bridge",
        (0x06, 0x04) => "PCI bridge",
        (0x06, _) => "Bridge",
        (0x07, _) => "Communication controller",
        (0x08, _) => "System peripheral",
        (0x0B, _) => "Processor",
        (0x0C, 0x03) => "USB controller",
        (0x0C, _) => "Serial bus controller",
        (0x0D, _) => "Wireless controller",
        (0x10, _) => "Encryption controller",
        (0x11, _) => "Signal processing controller",
        (0x12, _) => "Processing accelerator",
        _ => return None,
    })
}

/// What kind of block device, from its place in the device tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// NVMe namespace (`nvme*n*`).
    Nvme,
    /// SCSI disk (`sd*`: SATA, SAS, USB mass storage).
    Scsi,
    /// virtio-blk (`vd*`).
    Virtio,
    /// MMC/SD card (`mmcblk*`).
    Mmc,
    /// Kernel-made device under `/sys/devices/virtual` (loop, ram, zram, dm, md).
    Virtual,
    /// Anything else.
    Other,
}

/// Whether a block device is no storage hardware of its own: a loop device (a file seen as
/// a disk), a RAM disk (`ram*`, brd) or a compressed RAM disk (`zram*`), all kernel-made under
/// `/sys/devices/virtual/block`. What could not be read of these is not a fact of the machine
/// (a capture tool saves their folders half, a container hides their queues), so the
/// "could not be read" list leaves them out (`hwsurvey_probe::probe_text::unknowns`).
pub fn is_pseudo_disk(dev: &BlockDevice) -> bool {
    dev.kind == BlockKind::Virtual
        && ["loop", "ram", "zram"].iter().any(|p| {
            dev.name
                .strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// One block device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockDevice {
    /// Name in `/sys/block` (`nvme0n1`, `sda`).
    pub name: String,
    /// Kind, from the device link and name.
    pub kind: BlockKind,
    /// `size` x 512 bytes (the kernel counts 512-byte sectors regardless of block size).
    pub size_bytes: Probed<u64>,
    /// `queue/rotational`: true for spinning disks.
    pub rotational: Probed<bool>,
    /// `queue/nr_requests`: the block layer's queue depth.
    pub nr_requests: Probed<u32>,
    /// `device/model`, trimmed (SCSI, NVMe; absent for virtio and virtual devices).
    pub model: Option<String>,
    /// NUMA node of the nearest ancestor device with `numa_node`; `None` inside when -1.
    pub numa_node: Probed<Option<u32>>,
}

/// Parses a sysfs block device's `dev` file, `MAJ:MIN`: `"8:17\n"` -> `(8, 17)`. `None` when
/// it is not two decimal numbers around a colon.
pub fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Whether `s` is a PCI address `dddd:bb:dd.f` (hex digits; the domain may be longer).
pub fn is_pci_address(s: &str) -> bool {
    let hex = |t: &str, n: usize| t.len() == n && t.chars().all(|c| c.is_ascii_hexdigit());
    let parts: Vec<&str> = s.split(':').collect();
    match parts.as_slice() {
        [domain, bus, devfn] => {
            domain.len() >= 4
                && domain.chars().all(|c| c.is_ascii_hexdigit())
                && hex(bus, 2)
                && devfn
                    .split_once('.')
                    .is_some_and(|(dev, func)| hex(dev, 2) && hex(func, 1))
        }
        _ => false,
    }
}

/// A readable section in the spirit of `lspci` (links) + `lsblk`, concise: PCIe functions
/// with a link and endpoints of interest, then physical block devices.
pub fn summary(io: &Io) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "I/O");
    crate::pci_text::pci_section(
        &io.pci,
        io.pci_ids.as_ref(),
        &io.root_complexes,
        &io.pcie_paths,
        &mut out,
    );
    match &io.block {
        Probed::Known(devs) => {
            for d in devs.iter().filter(|d| d.kind != BlockKind::Virtual) {
                let _ = writeln!(
                    out,
                    "  block {} {:?}{}: {}, {}, queue {}, {}",
                    d.name,
                    d.kind,
                    d.model
                        .as_deref()
                        .map(|m| format!(" {m}"))
                        .unwrap_or_default(),
                    d.size_bytes
                        .known()
                        .map(|b| format_bytes_binary(*b))
                        .unwrap_or("size ?".into()),
                    match d.rotational.known() {
                        Some(true) => "rotational",
                        Some(false) => "non-rotational",
                        None => "rotational ?",
                    },
                    d.nr_requests
                        .known()
                        .map(|n| n.to_string())
                        .unwrap_or("?".into()),
                    match &d.numa_node {
                        Probed::Known(Some(n)) => format!("node {n}"),
                        Probed::Known(None) => "no node".into(),
                        Probed::Unknown(_) => "node ?".into(),
                    }
                );
            }
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  block: unknown ({u})");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsurvey_model::units::format_rate_decimal;

    #[test]
    fn dev_file() {
        assert_eq!(parse_dev("8:17\n"), Some((8, 17)));
        assert_eq!(parse_dev("259:65539"), Some((259, 65539)));
        assert_eq!(parse_dev("8-17"), None);
        assert_eq!(parse_dev("a:1"), None);
    }

    #[test]
    fn link_rates_and_bandwidth() {
        let g2 = parse_link_speed("5.0 GT/s PCIe").unwrap();
        assert_eq!((g2.generation, g2.encoding.as_str()), (2, "8b/10b"));
        assert_eq!(g2.bandwidth_bytes_per_s(8), 4_000_000_000);
        let g3 = parse_link_speed("8.0 GT/s PCIe\n").unwrap();
        assert_eq!(g3.bandwidth_bytes_per_s(8), 7_876_923_076);
        assert_eq!(
            format_rate_decimal(g3.bandwidth_bytes_per_s(8) as f64),
            "7.88 GB/s"
        );
        assert_eq!(
            parse_link_speed("2.5 GT/s")
                .unwrap()
                .bandwidth_bytes_per_s(1),
            250_000_000
        );
        assert_eq!(parse_link_speed("5 GT/s").unwrap().generation, 2);
        assert_eq!(
            parse_link_speed("16.0 GT/s PCIe")
                .unwrap()
                .bandwidth_bytes_per_s(16),
            31_507_692_307
        );
        let g6 = parse_link_speed("64.0 GT/s PCIe").unwrap();
        assert_eq!(g6.bandwidth_bytes_per_s(16), 128_000_000_000);
        assert!(parse_link_speed("Unknown").is_err());
        assert!(parse_link_speed("Unknown speed").is_err());
        assert!(parse_link_speed("3.0 GT/s").is_err());
    }
    #[test]
    fn classes() {
        assert_eq!(class_name(0x010802), Some("NVMe controller"));
        assert_eq!(class_name(0x020000), Some("Ethernet controller"));
        assert_eq!(class_name(0xffff00), None);
    }
}

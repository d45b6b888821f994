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

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use hwsurvey_model::units::{format_bytes_binary, format_rate_decimal, plural};
use hwsurvey_model::{Probed, Unknown};
use serde::{Deserialize, Serialize};

pub use crate::pci::{parse_link_speed, LinkSpeed, PciDevice, PcieLink};
use crate::{ProbeError, SysRoot};

/// PCI devices directory.
pub const PCI_DEVICES: &str = "/sys/bus/pci/devices";
/// Block devices directory.
pub const BLOCK: &str = "/sys/block";

/// PCI(e) and block devices.
#[derive(Debug, Clone, Serialize, Deserialize)]
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

fn hex_value(root: &SysRoot, path: &str, expected: &str) -> Result<u64, ProbeError> {
    let v = root.read_value(path)?;
    let digits = v.strip_prefix("0x").unwrap_or(&v);
    u64::from_str_radix(digits, 16).map_err(|_| ProbeError::invalid(path, expected, &v))
}

fn probed<T>(r: Result<T, ProbeError>) -> Probed<T> {
    match r {
        Ok(v) => Probed::Known(v),
        Err(e) => Probed::Unknown(e.into()),
    }
}

/// `numa_node`: `-1` -> no node.
fn numa_node(root: &SysRoot, path: &str) -> Probed<Option<u32>> {
    probed(
        root.read_parsed::<i64>(path, "a node number or -1")
            .and_then(|n| match n {
                -1 => Ok(None),
                n if (0..=i64::from(hwsurvey_model::cpulist::MAX_ID)).contains(&n) => {
                    Ok(Some(n as u32))
                }
                n => Err(ProbeError::invalid(
                    path,
                    "a node number or -1",
                    &n.to_string(),
                )),
            }),
    )
}

fn link_speed(root: &SysRoot, path: &str) -> Probed<LinkSpeed> {
    match root.read_value(path) {
        Ok(t) => match parse_link_speed(&t) {
            Ok(s) => Probed::Known(s),
            Err(detail) => Probed::Unknown(Unknown::Invalid {
                path: path.to_string(),
                detail,
            }),
        },
        Err(e) => Probed::Unknown(e.into()),
    }
}

fn link_width(root: &SysRoot, path: &str) -> Probed<u32> {
    match root.read_parsed::<u32>(path, "a lane count") {
        Ok(0) => Probed::Unknown(Unknown::Invalid {
            path: path.to_string(),
            detail: "width 0 (link down or not trained)".into(),
        }),
        Ok(w) if w > 64 => Probed::Unknown(Unknown::Invalid {
            path: path.to_string(),
            detail: format!("expected at most 32 lanes, got {w}"),
        }),
        Ok(w) => Probed::Known(w),
        Err(e) => Probed::Unknown(e.into()),
    }
}

fn bandwidth(speed: &Probed<LinkSpeed>, width: &Probed<u32>) -> Probed<u64> {
    match (speed, width) {
        (Probed::Known(s), Probed::Known(w)) => Probed::Known(s.bandwidth_bytes_per_s(*w)),
        (Probed::Unknown(u), _) | (_, Probed::Unknown(u)) => Probed::Unknown(u.clone()),
    }
}

fn pci_device(root: &SysRoot, address: &str) -> PciDevice {
    let dir = format!("{PCI_DEVICES}/{address}");
    let class_code = probed(
        hex_value(root, &format!("{dir}/class"), "a hex class code").and_then(|v| {
            u32::try_from(v)
                .ok()
                .filter(|c| *c <= 0xFF_FFFF)
                .ok_or_else(|| {
                    ProbeError::invalid(
                        format!("{dir}/class"),
                        "a 24-bit class code",
                        &format!("{v:#x}"),
                    )
                })
        }),
    );
    let id = |name: &str| {
        let path = format!("{dir}/{name}");
        probed(hex_value(root, &path, "a hex id").and_then(|v| {
            u16::try_from(v)
                .map_err(|_| ProbeError::invalid(&path, "a 16-bit id", &format!("{v:#x}")))
        }))
    };
    let has_link = root.exists(&format!("{dir}/max_link_speed"))
        || root.exists(&format!("{dir}/current_link_speed"));
    let link = has_link.then(|| {
        let current_speed = link_speed(root, &format!("{dir}/current_link_speed"));
        let current_width_lanes = link_width(root, &format!("{dir}/current_link_width"));
        let max_speed = link_speed(root, &format!("{dir}/max_link_speed"));
        let max_width_lanes = link_width(root, &format!("{dir}/max_link_width"));
        let below_max_speed = match (&current_speed, &max_speed) {
            (Probed::Known(c), Probed::Known(m)) => {
                Some(c.transfer_rate_mt_per_s < m.transfer_rate_mt_per_s)
            }
            _ => None,
        };
        let below_max_width = match (&current_width_lanes, &max_width_lanes) {
            (Probed::Known(c), Probed::Known(m)) => Some(c < m),
            _ => None,
        };
        PcieLink {
            current_bandwidth_bytes_per_s: bandwidth(&current_speed, &current_width_lanes),
            max_bandwidth_bytes_per_s: bandwidth(&max_speed, &max_width_lanes),
            current_speed,
            current_width_lanes,
            max_speed,
            max_width_lanes,
            below_max_speed,
            below_max_width,
        }
    });
    // The device tree: /sys/bus/pci/devices/<addr> -> /sys/devices/pci0000:00/<port>/<addr>.
    let (parent, root_complex) = match resolve_link(root, &dir) {
        Some(t) => {
            let parts: Vec<&str> = t.split('/').collect();
            let me = parts.iter().rposition(|p| *p == address);
            let parent = me
                .and_then(|k| k.checked_sub(1))
                .map(|k| parts[k])
                .filter(|p| is_pci_address(p))
                .map(str::to_string);
            let rc = parts
                .iter()
                .find(|p| p.starts_with("pci") && p.contains(':'))
                .map(|p| p.to_string());
            (parent, rc)
        }
        None => (None, None),
    };
    PciDevice {
        address: address.to_string(),
        parent,
        root_complex,
        role: None,
        class_name: class_code
            .known()
            .and_then(|c| class_name(*c))
            .map(str::to_string),
        class_code,
        vendor_id: id("vendor"),
        device_id: id("device"),
        numa_node: numa_node(root, &format!("{dir}/numa_node")),
        link,
        names: Default::default(),
    }
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
/// "could not be read" list leaves them out ([`crate::summary::unknowns`]).
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

/// One line for an endpoint's PCIe path: the bridges up to the root port, the narrowest link
/// and the most oversubscribed shared link: `path 0000:03:00.0 > 0000:02:00.0 > 0000:01:00.0 >
/// 0000:00:01.0: ceiling 3.94 GB/s/dir (Gen3 x4 its own link); 0000:01:00.0 Gen3 x8
/// 7.88 GB/s/dir shared by 4 endpoints, 2.00:1 oversubscribed`.
pub fn path_line(p: &crate::pcie::PciePath) -> String {
    let mut line = format!("path {} > {}: ", p.endpoint, p.via.join(" > "));
    match &p.narrowest {
        None => line += "ceiling unknown (no link speed and width on the path)",
        Some(n) => {
            let whose = if n.device == p.endpoint {
                "its own link".to_string()
            } else {
                format!("at {}", n.device)
            };
            line += &format!(
                "ceiling {}/dir (Gen{} x{} {whose}{})",
                format_rate_decimal(n.bandwidth_bytes_per_s as f64),
                n.generation,
                n.width_lanes,
                if n.below_max { ", below its max" } else { "" }
            );
        }
    }
    if let Some(sh) = &p.shared {
        line += &format!(
            "; {} Gen{} x{} {}/dir shared by {}",
            sh.link.device,
            sh.link.generation,
            sh.link.width_lanes,
            format_rate_decimal(sh.link.bandwidth_bytes_per_s as f64),
            plural(sh.endpoints.len() as u64, "endpoint")
        );
        match sh.oversubscription {
            Some(o) if o > 1.0 => line += &format!(", {o:.2}:1 oversubscribed"),
            Some(o) => line += &format!(", their maxima {o:.2}:1 of it"),
            None => {}
        }
    }
    if !p.unknown_links.is_empty() {
        line += &format!("; link unknown at {}", p.unknown_links.join(", "));
    }
    line
}

/// Kernel path of a `/sys/block/<name>` link's target, resolved lexically (`..` removed).
fn resolve_link(root: &SysRoot, path: &str) -> Option<String> {
    let target = root.read_link(path).ok()?;
    let base = Path::new(path).parent()?;
    let mut out = PathBuf::from("/");
    for c in base.join(target).components() {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    Some(out.display().to_string())
}

fn block_device(root: &SysRoot, name: &str) -> BlockDevice {
    let dir = format!("{BLOCK}/{name}");
    let target = resolve_link(root, &dir);
    let t = target.as_deref().unwrap_or("");
    let kind = if t.contains("/virtual/") {
        BlockKind::Virtual
    } else if name.starts_with("nvme") || t.contains("/nvme/") {
        BlockKind::Nvme
    } else if t.contains("/virtio") || name.starts_with("vd") {
        BlockKind::Virtio
    } else if name.starts_with("sd") || t.contains("/target") {
        BlockKind::Scsi
    } else if name.starts_with("mmcblk") {
        BlockKind::Mmc
    } else if ["loop", "ram", "zram", "dm-", "md"]
        .iter()
        .any(|p| name.starts_with(p))
    {
        BlockKind::Virtual
    } else {
        BlockKind::Other
    };
    let size_bytes = probed(
        root.read_parsed::<u64>(&format!("{dir}/size"), "a count of 512-byte sectors")
            .and_then(|s| {
                s.checked_mul(512).ok_or_else(|| {
                    ProbeError::invalid(format!("{dir}/size"), "a sector count", &s.to_string())
                })
            }),
    );
    let rotational = probed(
        root.read_value(&format!("{dir}/queue/rotational"))
            .and_then(|v| match v.as_str() {
                "0" => Ok(false),
                "1" => Ok(true),
                _ => Err(ProbeError::invalid(
                    format!("{dir}/queue/rotational"),
                    "0 or 1",
                    &v,
                )),
            }),
    );
    let nr_requests =
        probed(root.read_parsed::<u32>(&format!("{dir}/queue/nr_requests"), "a count"));
    let model = root
        .read_value(&format!("{dir}/device/model"))
        .ok()
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty());
    // Walk up from the device's real directory to the first ancestor with numa_node.
    let numa = match &target {
        None => Probed::Unknown(Unknown::Other {
            detail: format!("{dir} is not a link into /sys/devices"),
        }),
        Some(t) => {
            let mut p = PathBuf::from(t);
            let mut found = None;
            while p.pop() && p.starts_with("/sys/devices") {
                let candidate = format!("{}/numa_node", p.display());
                if root.exists(&candidate) {
                    found = Some(numa_node(root, &candidate));
                    break;
                }
            }
            found.unwrap_or_else(|| {
                if t.contains("/virtual/") {
                    Probed::Known(None)
                } else {
                    Probed::Unknown(Unknown::Other {
                        detail: format!("no ancestor of {t} has a numa_node file"),
                    })
                }
            })
        }
    };
    BlockDevice {
        name: name.to_string(),
        kind,
        size_bytes,
        rotational,
        nr_requests,
        model,
        numa_node: numa,
    }
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

/// Probes PCI and block devices under `root`, and the PCIe tree of the PCI functions
/// ([`crate::pcie`]): the role of each bridge from its `config` capability where readable
/// (root), else from the tree; the functions are named from the PCI ID database at
/// [`crate::pci_ids::PCI_IDS_PATHS`] ([`probe_with_pci_ids`]).
pub fn probe(root: &SysRoot) -> Io {
    let paths: Vec<&Path> = crate::pci_ids::PCI_IDS_PATHS
        .iter()
        .map(Path::new)
        .collect();
    probe_with_pci_ids(root, &paths)
}

/// Names the functions of `devs` from the first PCI ID database of `paths`
/// ([`crate::pci_ids::read`]); `None` when there is no function to name.
fn name_functions(
    devs: &mut [PciDevice],
    paths: &[&Path],
) -> Option<Probed<crate::pci_ids::PciIdsSource>> {
    if devs.is_empty() {
        return None;
    }
    let mut wanted = crate::pci_ids::Wanted::default();
    for d in devs.iter() {
        if let (Some(v), Some(dv)) = (d.vendor_id.known(), d.device_id.known()) {
            wanted.devices.insert((*v, *dv));
        }
        if let Some(c) = d.class_code.known() {
            wanted.classes.insert(((c >> 16) as u8, (c >> 8) as u8));
        }
    }
    Some(match crate::pci_ids::read(paths, &wanted) {
        Ok((source, db)) => {
            for d in devs.iter_mut() {
                d.names = db.names(
                    d.vendor_id.known().copied(),
                    d.device_id.known().copied(),
                    d.class_code.known().copied(),
                );
            }
            Probed::Known(source)
        }
        Err(why) => Probed::Unknown(why),
    })
}

/// [`probe`] with the PCI ID database looked for at `paths` (the first that exists).
pub fn probe_with_pci_ids(root: &SysRoot, pci_ids_paths: &[&Path]) -> Io {
    let pci = match root.list_dir(PCI_DEVICES) {
        Ok(names) => Probed::Known(
            names
                .iter()
                .map(|a| pci_device(root, a))
                .collect::<Vec<_>>(),
        ),
        Err(e) => Probed::Unknown(e.into()),
    };
    let (pci, pcie_paths, root_complexes, pci_ids) = match pci {
        Probed::Known(mut devs) => {
            let config: Vec<Option<crate::pcie::PcieRole>> = devs
                .iter()
                .map(|d| {
                    crate::pcie::is_pci_bridge(d.class_code.known().copied())
                        .then(|| {
                            root.read_bytes(&format!("{PCI_DEVICES}/{}/config", d.address))
                                .ok()
                                .and_then(|b| crate::pcie::port_type_from_config(&b))
                        })
                        .flatten()
                })
                .collect();
            let roles = crate::pcie::roles(&devs, &config);
            for (d, r) in devs.iter_mut().zip(&roles) {
                d.role = Some(*r);
            }
            let (paths, rcs) = crate::pcie::paths(&devs, &roles);
            let pci_ids = name_functions(&mut devs, pci_ids_paths);
            (Probed::Known(devs), paths, rcs, pci_ids)
        }
        unknown => (unknown, Vec::new(), Vec::new(), None),
    };
    let block = match root.list_dir(BLOCK) {
        Ok(names) => Probed::Known(names.iter().map(|n| block_device(root, n)).collect()),
        Err(e) => Probed::Unknown(e.into()),
    };
    Io {
        pci,
        block,
        pcie_paths,
        root_complexes,
        pci_ids,
    }
}

/// A readable section in the spirit of `lspci` (links) + `lsblk`, concise: PCIe functions
/// with a link and endpoints of interest, then physical block devices.
pub fn summary(io: &Io) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "I/O");
    crate::pci_text::pci_section(io, &mut out);
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

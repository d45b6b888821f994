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

use std::path::{Component, Path, PathBuf};

use hwsurvey_model::{Probed, Unknown};

pub use crate::pci::{parse_link_speed, LinkSpeed, PciDevice, PcieLink};
use crate::{ProbeError, SysRoot};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::io::*;

/// PCI devices directory.
pub const PCI_DEVICES: &str = "/sys/bus/pci/devices";
/// Block devices directory.
pub const BLOCK: &str = "/sys/block";

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

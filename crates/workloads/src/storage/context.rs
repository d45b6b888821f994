//! Per-device context of a storage target: the block device under a directory or device node,
//! its model, NUMA node, and the PCIe link it sits on with that link's theoretical ceiling.
//!
//! Sources: stat(2) of the path (`st_dev`, or `st_rdev` for a device node) ->
//! /sys/dev/block/MAJ:MIN (a partition's parent is its disk) -> /sys/block/NAME/device/model,
//! the nearest `numa_node` up the device path, and the last PCI function on that path
//! (`/sys/bus/pci/devices/ADDR/{current,max}_link_{speed,width}`), parsed by
//! [`hwsurvey_probe::io::parse_link_speed`]; ceiling = lanes x rate x encoding efficiency / 8.

use std::path::Path;

use hwsurvey_probe::{block, SysRoot};

use serde::{Deserialize, Serialize};

/// What is known about the device under a target. Absent facts are `None` with the reason in
/// `unknown`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceContext {
    /// Block device name (`nvme0n1`, `vda`); for a partition, its disk.
    pub block_device: Option<String>,
    /// `device/model`, trimmed.
    pub model: Option<String>,
    /// NUMA node of the nearest ancestor with `numa_node` >= 0.
    pub numa_node: Option<u32>,
    /// PCI address of the function the device hangs off (`0000:3d:00.0`).
    pub pci_address: Option<String>,
    /// Current link: "16.0 GT/s x4" style, as read.
    pub pcie_link_current: Option<String>,
    /// Maximum link.
    pub pcie_link_max: Option<String>,
    /// Theoretical payload ceiling of the current link, one direction, bytes/s.
    pub pcie_current_ceiling_bytes_per_s: Option<u64>,
    /// Theoretical payload ceiling of the maximum link, bytes/s.
    pub pcie_max_ceiling_bytes_per_s: Option<u64>,
    /// Why facts are missing (virtio or no PCIe link, unreadable sysfs).
    pub unknown: Vec<String>,
}

pub use hwsurvey_probe::io::is_pci_address;

/// The last PCI function address among the components of a sysfs device path.
pub fn last_pci_address(sys_path: &str) -> Option<String> {
    sys_path
        .split('/')
        .rev()
        .find(|c| is_pci_address(c))
        .map(str::to_string)
}

fn link(root: &SysRoot, addr: &str, which: &str) -> (Option<String>, Option<u64>) {
    let (speed, width) = block::pci_link(root, addr, which);
    let ceiling = match (&speed, width) {
        (Some(s), Some(w)) => hwsurvey_probe::io::parse_link_speed(s)
            .ok()
            .map(|l| l.bandwidth_bytes_per_s(w)),
        _ => None,
    };
    let text = match (speed, width) {
        (Some(s), Some(w)) => Some(format!("{s} x{w}")),
        _ => None,
    };
    (text, ceiling)
}

/// The context of the device under `path`, read from the live system (sysfs through the
/// probe's [`hwsurvey_probe::block`] readers).
pub fn for_path(path: &Path) -> DeviceContext {
    for_path_under(path, &SysRoot::live())
}

/// [`for_path`] with sysfs read under `root`.
pub fn for_path_under(path: &Path, root: &SysRoot) -> DeviceContext {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let mut c = DeviceContext::default();
    let md = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => {
            c.unknown.push(format!("{}: {e}", path.display()));
            return c;
        }
    };
    let dev = if md.file_type().is_block_device() {
        md.rdev()
    } else {
        md.dev()
    };
    let (ma, mi) = super::device::decode_dev(dev);
    let Some(mut real) = block::device_dir(root, ma, mi) else {
        c.unknown.push(format!(
            "/sys/dev/block/{ma}:{mi}: no block device (a virtual or network filesystem?)"
        ));
        return c;
    };
    if block::is_partition(root, &real) {
        if let Some((parent, _)) = real.rsplit_once('/') {
            real = parent.to_string();
        }
    }
    let name = real.rsplit('/').next().map(str::to_string);
    if let Some(n) = &name {
        c.model = block::model(root, n);
        if c.model.is_none() {
            c.unknown.push(format!(
                "/sys/block/{n}/device/model: absent (virtio and virtual devices have none)"
            ));
        }
    }
    c.block_device = name;
    c.numa_node = block::numa_node_up(root, &real);
    c.pci_address = last_pci_address(&real);
    match &c.pci_address {
        Some(addr) => {
            (c.pcie_link_current, c.pcie_current_ceiling_bytes_per_s) = link(root, addr, "current");
            (c.pcie_link_max, c.pcie_max_ceiling_bytes_per_s) = link(root, addr, "max");
            if c.pcie_link_current.is_none() {
                c.unknown.push(format!(
                    "{addr}: no PCIe link attributes (conventional PCI or emulated device)"
                ));
            }
        }
        None => c.unknown.push(format!("{real}: not on a PCI device")),
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_address_on_device_path() {
        let p = "/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1";
        assert_eq!(last_pci_address(p).as_deref(), Some("0000:3d:00.0"));
        assert_eq!(last_pci_address("/sys/devices/virtual/block/loop0"), None);
        assert!(!is_pci_address("pci0000:00"));
    }
}

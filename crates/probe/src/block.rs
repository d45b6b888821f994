//! Block devices in sysfs at run time, by device number: the directory of `MAJ:MIN`
//! (`/sys/dev/block/MAJ:MIN`, a link into `/sys/devices`), its attributes, holders and
//! partitions, the NUMA node and PCIe link of the device it hangs off. Readers under a
//! [`SysRoot`] with one pure parser ([`parse_dev`]); the storage family asks these about its
//! targets (a directory's filesystem device, a raw `--storage-device`) instead of opening /sys.
//! The machine document's view of all block devices is [`crate::io`].
//!
//! Sources: Documentation/ABI/stable/sysfs-block (`size` in 512-byte sectors, `dev`,
//! `holders/`, `partition`, `device/model`), sysfs-bus-pci (`{current,max}_link_{speed,width}`).

use crate::SysRoot;

/// Parses a sysfs `dev` file, `MAJ:MIN`: `"8:17\n"` -> `(8, 17)`. `None` when it is not two
/// decimal numbers around a colon.
pub fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (a, b) = text.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The sysfs directory of block device (`major`, `minor`), `/sys/dev/block/MAJ:MIN` resolved
/// (`/sys/devices/pci0000:00/.../block/nvme0n1/nvme0n1p1` for a partition); `None` when there
/// is no such block device (a filesystem without one: tmpfs, NFS, overlay).
pub fn device_dir(root: &SysRoot, major: u32, minor: u32) -> Option<String> {
    let link = format!("/sys/dev/block/{major}:{minor}");
    let dir = root.resolve(&link, true).ok()?;
    root.exists(&dir).then_some(dir)
}

/// Whether the block device directory `dir` is a partition (it has a `partition` file).
pub fn is_partition(root: &SysRoot, dir: &str) -> bool {
    root.exists(&format!("{dir}/partition"))
}

/// A sysfs attribute `path`, trimmed; `None` when it cannot be read or is empty.
pub fn attribute(root: &SysRoot, path: &str) -> Option<String> {
    root.read_value(path).ok().filter(|s| !s.is_empty())
}

/// The model of disk `name` (`/sys/block/NAME/device/model`, trimmed); `None` when absent
/// (virtio and virtual devices have none) or empty.
pub fn model(root: &SysRoot, name: &str) -> Option<String> {
    attribute(root, &format!("/sys/block/{name}/device/model"))
}

/// Names of the devices holding block device directory `dir` (`holders/`: LVM, MD,
/// dm-crypt), sorted; empty when none or unreadable.
pub fn holders(root: &SysRoot, dir: &str) -> Vec<String> {
    let mut names = root.list_dir(&format!("{dir}/holders")).unwrap_or_default();
    names.sort();
    names
}

/// The partitions of disk directory `dir`: each subdirectory with a `partition` file, by name
/// with its device number (its `dev` file), sorted.
pub fn partitions(root: &SysRoot, dir: &str) -> Vec<(String, (u32, u32))> {
    let mut out: Vec<(String, (u32, u32))> = root
        .list_dir(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|name| is_partition(root, &format!("{dir}/{name}")))
        .filter_map(|name| {
            let dev = root
                .read(&format!("{dir}/{name}/dev"))
                .ok()
                .and_then(|t| parse_dev(&t))?;
            Some((name, dev))
        })
        .collect();
    out.sort();
    out
}

/// The NUMA node from the nearest `numa_node` file in `dir` or a directory above it, up to
/// `/sys/devices`; `None` when that file says `-1` (no node) or no directory has one.
pub fn numa_node_up(root: &SysRoot, dir: &str) -> Option<u32> {
    let mut d = Some(dir);
    while let Some(cur) = d {
        if let Some(v) =
            attribute(root, &format!("{cur}/numa_node")).and_then(|v| v.parse::<i64>().ok())
        {
            return u32::try_from(v).ok();
        }
        d = cur
            .rsplit_once('/')
            .map(|(parent, _)| parent)
            .filter(|p| p.starts_with("/sys/devices"));
    }
    None
}

/// The PCIe link of PCI function `addr` (`0000:3d:00.0`): `which` is `current` or `max`;
/// the speed as the kernel writes it (`16.0 GT/s PCIe`) and the width in lanes, each `None`
/// when absent (conventional PCI, emulated devices).
pub fn pci_link(root: &SysRoot, addr: &str, which: &str) -> (Option<String>, Option<u32>) {
    let dir = format!("/sys/bus/pci/devices/{addr}");
    let speed = attribute(root, &format!("{dir}/{which}_link_speed"));
    let width = attribute(root, &format!("{dir}/{which}_link_width")).and_then(|w| w.parse().ok());
    (speed, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_file() {
        assert_eq!(parse_dev("8:17\n"), Some((8, 17)));
        assert_eq!(parse_dev("259:65539"), Some((259, 65539)));
        assert_eq!(parse_dev("8-17"), None);
        assert_eq!(parse_dev("a:1"), None);
    }

    #[test]
    fn a_disk_with_a_partition_under_a_root() {
        let dir = tempfile::tempdir().unwrap();
        let disk = dir
            .path()
            .join("sys/devices/pci0000:00/0000:00:04.0/block/vdb");
        std::fs::create_dir_all(disk.join("vdb1")).unwrap();
        std::fs::create_dir_all(disk.join("holders/dm-0")).unwrap();
        std::fs::write(disk.join("vdb1/partition"), "1\n").unwrap();
        std::fs::write(disk.join("vdb1/dev"), "252:17\n").unwrap();
        std::fs::write(disk.join("size"), "2048\n").unwrap();
        std::fs::write(
            dir.path()
                .join("sys/devices/pci0000:00/0000:00:04.0/numa_node"),
            "1\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("sys/dev/block")).unwrap();
        std::os::unix::fs::symlink(
            "../../devices/pci0000:00/0000:00:04.0/block/vdb",
            dir.path().join("sys/dev/block/252:16"),
        )
        .unwrap();
        let root = SysRoot::new(dir.path());
        let d = device_dir(&root, 252, 16).unwrap();
        assert_eq!(d, "/sys/devices/pci0000:00/0000:00:04.0/block/vdb");
        assert!(!is_partition(&root, &d));
        assert!(is_partition(&root, &format!("{d}/vdb1")));
        assert_eq!(partitions(&root, &d), [("vdb1".to_string(), (252, 17))]);
        assert_eq!(holders(&root, &d), ["dm-0"]);
        assert_eq!(model(&root, "vdb"), None);
        assert_eq!(
            attribute(&root, &format!("{d}/size")).as_deref(),
            Some("2048")
        );
        assert_eq!(numa_node_up(&root, &d), Some(1));
        assert_eq!(device_dir(&root, 252, 99), None);
        assert_eq!(pci_link(&root, "0000:00:04.0", "current"), (None, None));
    }
}

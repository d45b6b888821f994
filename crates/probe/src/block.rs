//! Block devices in sysfs at run time, by device number: the directory of `MAJ:MIN`
//! (`/sys/dev/block/MAJ:MIN`, a link into `/sys/devices`), its attributes, holders and
//! partitions, the NUMA node and PCIe link of the device it hangs off. Readers under a
//! [`SysRoot`] over one pure parser (`hwsurvey_machine::io::parse_dev`, re-exported here as
//! [`parse_dev`]); the storage family asks these about its
//! targets (a directory's filesystem device, a raw `--storage-device`) instead of opening /sys.
//! The machine document's view of all block devices is [`crate::io`].
//!
//! Sources: Documentation/ABI/stable/sysfs-block (`size` in 512-byte sectors, `dev`,
//! `holders/`, `partition`, `device/model`), sysfs-bus-pci (`{current,max}_link_{speed,width}`).
//!
//! [`block_stack`] reads how the block devices sit on one another (partitions, `holders/` and
//! `slaves/`, what each loop device is over as the kernel says it (`LOOP_GET_STATUS64`, through
//! the [`BackingSource`] seam), zram backing devices, bcache, members of mounted btrfs file
//! systems) for the storage family's refusal of a device something else is built on; what
//! cannot be asked is named in [`BlockStack::undecided`], never dropped.

use serde::{Deserialize, Serialize};

use crate::SysRoot;

pub use hwsurvey_machine::io::parse_dev;

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

/// How block device `upper` sits on block device `lower` ([`StackEdge`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "link", rename_all = "snake_case")]
pub enum StackLink {
    /// `upper` is a partition of disk `lower` (the partition's directory sits in the disk's).
    Partition,
    /// `upper` is in `lower`'s `holders/` (or `lower` in `upper`'s `slaves/`): device mapper
    /// (LVM, dm-crypt, dm-linear), MD RAID.
    Holder,
    /// `upper` is a loop device over the block device `lower`, or over the regular file
    /// `lower` (`file PATH`, a node of no block device: loops over one file share it), as
    /// `LOOP_GET_STATUS64` says (`lo_rdevice`, or `lo_device` and `lo_inode`), from byte
    /// `offset_bytes` (`lo_offset`) for `size_limit_bytes` bytes (`lo_sizelimit`; 0: to the
    /// end). A loop device is no holder:
    /// `lower`'s `holders/` stays empty and an exclusive open of `lower` still succeeds.
    Loop {
        /// `loop/offset`, bytes.
        offset_bytes: u64,
        /// `loop/sizelimit`, bytes; 0 when unlimited.
        size_limit_bytes: u64,
    },
    /// `upper` is a zram device that writes idle pages back to `lower`
    /// (`/sys/block/zramN/backing_dev`, CONFIG_ZRAM_WRITEBACK).
    ZramBacking,
    /// `lower` is a bcache backing or cache device (it has a `bcache/` directory); `upper` is
    /// the bcache device (`bcache/dev`) or `bcache cache set UUID` (`bcache/set`).
    Bcache,
    /// `lower` is a member of the mounted btrfs `upper` (`btrfs FSID`):
    /// `/sys/fs/btrfs/FSID/devices/NAME`, present only while it is mounted.
    BtrfsMember {
        /// The file system's label (`/sys/fs/btrfs/FSID/label`), when it has one.
        label: Option<String>,
    },
}

/// One "sits on" relation between two block devices, by kernel name (`loop1` on `loop0`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct StackEdge {
    /// The device (or btrfs, `btrfs FSID`) built on `lower`.
    pub upper: String,
    /// The device underneath; `MAJ:MIN` when its number has no sysfs entry; `file PATH` for
    /// a loop's regular backing file.
    pub lower: String,
    /// How.
    pub link: StackLink,
}

/// A block device in [`BlockStack`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackNode {
    /// Kernel name (`sdb`, `sdb1`, `dm-0`, `loop3`).
    pub name: String,
    /// (major, minor), from its `dev` file.
    pub dev: (u32, u32),
    /// The device-mapper name (`dm/name`: `vg0-data`), for dm devices.
    pub dm_name: Option<String>,
}

/// What a loop device's backing file (or a zram's backing device) is: a block device by its
/// number, any other file by its file system's device and its inode. For a loop device this is
/// what the kernel holds open (`LOOP_GET_STATUS64`), never a look-up of the path sysfs prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// A block device node: its (major, minor), `st_rdev`.
    Block((u32, u32)),
    /// Any other file: the file system's device and the inode (`st_dev`, `st_ino`), the same
    /// for every path (hard link, bind mount) of the file, and after it is deleted.
    File {
        /// `st_dev`.
        dev: u64,
        /// `st_ino`.
        ino: u64,
    },
}

/// A bound loop device as the kernel describes it (`LOOP_GET_STATUS64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopBacking {
    /// What it is over: from `lo_rdevice` (a block device) or `lo_device`/`lo_inode` (a file).
    pub backing: Backing,
    /// `lo_offset`, bytes.
    pub offset_bytes: u64,
    /// `lo_sizelimit`, bytes; 0: to the end.
    pub size_limit_bytes: u64,
}

impl LoopBacking {
    /// The backing of a parsed `struct loop_info64`: a block device when `lo_rdevice` is set
    /// (a loop can only be over a regular file or a block device), else the file's
    /// `lo_device` and `lo_inode`.
    pub fn of_info(info: &crate::block_use::LoopInfo64) -> LoopBacking {
        let backing = if info.rdevice != 0 {
            Backing::Block(decode_dev(info.rdevice))
        } else {
            Backing::File {
                dev: info.device,
                ino: info.inode,
            }
        };
        LoopBacking {
            backing,
            offset_bytes: info.offset_bytes,
            size_limit_bytes: info.size_limit_bytes,
        }
    }
}

/// (major, minor) of a Linux `dev_t` as glibc encodes it (sys/sysmacros.h `gnu_dev_major`),
/// which is also the kernel's `huge_encode_dev` of `struct loop_info64`.
pub fn decode_dev(dev: u64) -> (u32, u32) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major as u32, minor as u32)
}

/// The block major number of loop devices (include/uapi/linux/major.h `LOOP_MAJOR`); their
/// partitions have numbers of the extended major (259).
pub const LOOP_MAJOR: u32 = 7;

/// The seam between [`block_stack`] and the live kernel: what a loop device is bound to, and
/// what a path outside /sys is. [`LiveBacking`] asks the running kernel; tests answer from a
/// table.
pub trait BackingSource {
    /// What loop device `name` (block device `dev`) is over, as the kernel holds it;
    /// `Ok(None)` when no file is bound.
    ///
    /// Errors: why it cannot be asked (no `/dev/NAME` node of that number, permission denied),
    /// as a sentence naming the path.
    fn loop_device(&self, name: &str, dev: (u32, u32)) -> Result<Option<LoopBacking>, String>;

    /// What the file at `path` is (`stat(2)`, following links): a zram device's
    /// `backing_dev`.
    ///
    /// Errors: the stat's error, naming the path.
    fn path(&self, path: &str) -> Result<Backing, String>;
}

/// [`BackingSource`] of the running kernel: `ioctl(LOOP_GET_STATUS64)` on `/dev/NAME` (opened
/// read-only, non-blocking; the node must be the block device of that number) and `stat(2)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveBacking;

impl BackingSource for LiveBacking {
    fn loop_device(&self, name: &str, dev: (u32, u32)) -> Result<Option<LoopBacking>, String> {
        loop_status(name, dev).map(|i| i.as_ref().map(LoopBacking::of_info))
    }

    fn path(&self, path: &str) -> Result<Backing, String> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let md = std::fs::metadata(path).map_err(|e| format!("{path}: {e}"))?;
        Ok(if md.file_type().is_block_device() {
            Backing::Block(decode_dev(md.rdev()))
        } else {
            Backing::File {
                dev: md.dev(),
                ino: md.ino(),
            }
        })
    }
}

/// `ioctl(LOOP_GET_STATUS64)` on `/dev/NAME`, checked to be block device `dev` (the node is
/// opened read-only and non-blocking, then `fstat`-ed); `Ok(None)` when the loop device has no
/// file bound (ENXIO).
///
/// Errors: the node is missing or another device, the open or the ioctl failed; each a
/// sentence naming `/dev/NAME`. Builds without the `sys` feature cannot ask.
#[cfg(feature = "sys")]
pub fn loop_status(
    name: &str,
    dev: (u32, u32),
) -> Result<Option<crate::block_use::LoopInfo64>, String> {
    use crate::block_use::{parse_loop_info64, LOOP_GET_STATUS64, LOOP_INFO64_BYTES};
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
    let path = format!("/dev/{name}");
    let open = || {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC)
            .open(&path)
    };
    // a loop device made a moment ago (losetup -f) is in sysfs a moment before devtmpfs has
    // its node: a missing node is looked for again for up to 0.5 s
    let mut tries = 0;
    let f = loop {
        match open() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => break other.map_err(|e| format!("{path}: {e}"))?,
        }
    };
    let md = f.metadata().map_err(|e| format!("{path}: {e}"))?;
    let is = decode_dev(md.rdev());
    if !md.file_type().is_block_device() || is != dev {
        return Err(format!(
            "{path} is not block device {}:{} (it is {})",
            dev.0,
            dev.1,
            if md.file_type().is_block_device() {
                format!("{}:{}", is.0, is.1)
            } else {
                "no block device".to_string()
            }
        ));
    }
    let mut buf = [0u8; LOOP_INFO64_BYTES];
    // SAFETY: LOOP_GET_STATUS64 writes one struct loop_info64 (LOOP_INFO64_BYTES bytes) into
    // the buffer, which is that large and lives across the call.
    let rc = unsafe { nix::libc::ioctl(f.as_raw_fd(), LOOP_GET_STATUS64 as _, buf.as_mut_ptr()) };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(nix::libc::ENXIO) {
            return Ok(None);
        }
        return Err(format!("LOOP_GET_STATUS64 on {path}: {e}"));
    }
    parse_loop_info64(&buf)
        .map(Some)
        .ok_or_else(|| format!("LOOP_GET_STATUS64 on {path}: short answer"))
}

/// Without the `sys` feature the kernel cannot be asked: every loop device is undecided.
#[cfg(not(feature = "sys"))]
pub fn loop_status(
    name: &str,
    _dev: (u32, u32),
) -> Result<Option<crate::block_use::LoopInfo64>, String> {
    Err(format!(
        "/dev/{name}: LOOP_GET_STATUS64 cannot be asked by a build without the `sys` feature"
    ))
}

/// Every block device of the machine and how they sit on one another.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockStack {
    /// The block devices, partitions included, sorted by name.
    pub nodes: Vec<StackNode>,
    /// The relations, sorted, without duplicates.
    pub edges: Vec<StackEdge>,
    /// What could not be decided, each a sentence: `what loop3 is over: /dev/loop3:
    /// Permission denied (os error 13)`. A device may sit on any device through one of them,
    /// so a raw device is not proven free while this is not empty.
    #[serde(default)]
    pub undecided: Vec<String>,
}

impl BlockStack {
    /// The kernel name of block device `dev`.
    pub fn name_of(&self, dev: (u32, u32)) -> Option<&str> {
        self.nodes
            .iter()
            .find(|n| n.dev == dev)
            .map(|n| n.name.as_str())
    }

    /// The node called `name`.
    pub fn node(&self, name: &str) -> Option<&StackNode> {
        self.nodes.iter().find(|n| n.name == name)
    }
}

/// Reads [`BlockStack`] under `root`: every entry of `/sys/class/block` (disks and
/// partitions) with its `dev`, `dm/name`, `partition`, `holders/`, `slaves/`, `backing_dev`
/// (zram) and `bcache/{dev,set}`, and the members in `/sys/fs/btrfs/FSID/devices/`. Every
/// whole disk of [`LOOP_MAJOR`] is asked what it is over ([`BackingSource::loop_device`],
/// `LOOP_GET_STATUS64` on the live system): the kernel's device and inode numbers match the
/// loop to what it is over, whatever its path has become (deleted, a `mknod` node since
/// removed, a name with trailing blanks that sysfs text cannot carry); the path of
/// `loop/backing_file` (the text before the kernel's one newline) only names it. Loop devices
/// over one regular file all sit on one lower node, `file PATH` (the path of the first of them
/// by name): writing one writes what the others hold. A zram's `backing_dev` is a path looked
/// at with [`BackingSource::path`]. What cannot be asked goes to [`BlockStack::undecided`];
/// other unreadable entries are left out.
pub fn block_stack(root: &SysRoot, source: &dyn BackingSource) -> BlockStack {
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    let mut undecided = Vec::new();
    // (upper, device number of lower, link): mapped to names once every node is known
    let mut by_dev: Vec<(String, (u32, u32), StackLink)> = Vec::new();
    // a regular backing file by (st_dev, st_ino): the lower node's name, `file PATH`
    let mut files: Vec<((u64, u64), String)> = Vec::new();
    let mut names = root.list_dir("/sys/class/block").unwrap_or_default();
    names.sort();
    for name in names {
        let Ok(dir) = root.resolve(&format!("/sys/class/block/{name}"), true) else {
            continue;
        };
        let Some(dev) = root
            .read(&format!("{dir}/dev"))
            .ok()
            .and_then(|t| parse_dev(&t))
        else {
            continue;
        };
        let dm_name = attribute(root, &format!("{dir}/dm/name"));
        nodes.push(StackNode {
            name: name.clone(),
            dev,
            dm_name,
        });
        let partition = is_partition(root, &dir);
        if partition {
            if let Some(disk) = dir.rsplit('/').nth(1) {
                edges.push(edge(&name, disk, StackLink::Partition));
            }
        }
        for h in holders(root, &dir) {
            edges.push(edge(&h, &name, StackLink::Holder));
        }
        for s in root.list_dir(&format!("{dir}/slaves")).unwrap_or_default() {
            edges.push(edge(&name, &s, StackLink::Holder));
        }
        if dev.0 == LOOP_MAJOR && !partition {
            match source.loop_device(&name, dev) {
                Ok(Some(lb)) => {
                    let link = StackLink::Loop {
                        offset_bytes: lb.offset_bytes,
                        size_limit_bytes: lb.size_limit_bytes,
                    };
                    match lb.backing {
                        Backing::Block(lower) => by_dev.push((name.clone(), lower, link)),
                        Backing::File { dev, ino } => {
                            let lower = match files.iter().find(|f| f.0 == (dev, ino)) {
                                Some(f) => f.1.clone(),
                                None => {
                                    let shown = match root
                                        .read(&format!("{dir}/loop/backing_file"))
                                        .ok()
                                        .map(|t| t.strip_suffix('\n').unwrap_or(&t).to_string())
                                    {
                                        Some(path) => format!("file {path}"),
                                        None => format!("file {ino} on device {dev}"),
                                    };
                                    files.push(((dev, ino), shown.clone()));
                                    shown
                                }
                            };
                            edges.push(edge(&name, &lower, link));
                        }
                    }
                }
                Ok(None) => {}
                Err(e) => undecided.push(format!("what {name} is over: {e}")),
            }
        }
        if let Some(file) = attribute(root, &format!("{dir}/backing_dev")).filter(|f| f != "none") {
            match source.path(&file) {
                Ok(Backing::Block(lower)) => {
                    by_dev.push((name.clone(), lower, StackLink::ZramBacking))
                }
                Ok(Backing::File { .. }) => undecided.push(format!(
                    "what {name} writes back to: {file} is no block device"
                )),
                Err(e) => undecided.push(format!("what {name} writes back to: {e}")),
            }
        }
        if root.exists(&format!("{dir}/bcache")) && !name.starts_with("bcache") {
            let last = |p: &str| {
                root.read_link(p)
                    .ok()
                    .and_then(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()))
            };
            let upper = last(&format!("{dir}/bcache/dev"))
                .or_else(|| {
                    last(&format!("{dir}/bcache/set")).map(|u| format!("bcache cache set {u}"))
                })
                .unwrap_or_else(|| "bcache".to_string());
            edges.push(edge(&upper, &name, StackLink::Bcache));
        }
    }
    for fsid in root.list_dir("/sys/fs/btrfs").unwrap_or_default() {
        let base = format!("/sys/fs/btrfs/{fsid}");
        let Ok(members) = root.list_dir(&format!("{base}/devices")) else {
            continue;
        };
        let label = attribute(root, &format!("{base}/label"));
        for m in members {
            let link = StackLink::BtrfsMember {
                label: label.clone(),
            };
            edges.push(edge(&format!("btrfs {fsid}"), &m, link));
        }
    }
    let mut stack = BlockStack {
        nodes,
        edges: Vec::new(),
        undecided,
    };
    for (upper, lower, link) in by_dev {
        let lower_name = stack
            .name_of(lower)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{}:{}", lower.0, lower.1));
        edges.push(edge(&upper, &lower_name, link));
    }
    edges.sort();
    edges.dedup();
    stack.nodes.sort_by(|a, b| a.name.cmp(&b.name));
    stack.edges = edges;
    stack
}

fn edge(upper: &str, lower: &str, link: StackLink) -> StackEdge {
    StackEdge {
        upper: upper.to_string(),
        lower: lower.to_string(),
        link,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

//! Synthetic `/sys` block-device trees under a root, laid out as the kernel lays them out
//! (Documentation/ABI/stable/sysfs-block): `/sys/devices/virtual/block/NAME` with `dev` and
//! `size`, partitions as subdirectories with a `partition` file, `/sys/class/block/NAME` and
//! `/sys/dev/block/MAJ:MIN` links, `holders/` and `slaves/` links, a loop device's `loop/`
//! files, a zram device's `backing_dev`, a bcache member's `bcache/` directory and a mounted
//! btrfs's `/sys/fs/btrfs/FSID/devices/`. For tests of the readers of stacked devices.

use std::path::{Path, PathBuf};

use crate::write;

/// A `/sys` tree of block devices being built under a root.
pub struct SysBlock {
    root: PathBuf,
}

fn link(target: &str, at: &Path) {
    if let Some(parent) = at.parent() {
        std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{}: {e}", parent.display()));
    }
    std::os::unix::fs::symlink(target, at).unwrap_or_else(|e| panic!("{}: {e}", at.display()));
}

impl SysBlock {
    /// A tree under `root` (a temporary directory of the test).
    pub fn new(root: &Path) -> SysBlock {
        SysBlock {
            root: root.to_path_buf(),
        }
    }

    /// The kernel path of device `name`'s directory (a disk, or `disk/part` for a partition).
    fn dir(&self, name: &str) -> String {
        let class = self.root.join(format!("sys/class/block/{name}"));
        let target = std::fs::read_link(&class)
            .unwrap_or_else(|e| panic!("{}: {e} (add the device first)", class.display()));
        let rel = target
            .to_string_lossy()
            .trim_start_matches("../../")
            .to_string();
        format!("/sys/{rel}")
    }

    fn register(&self, name: &str, rel: &str, dev: (u32, u32)) {
        link(
            &format!("../../{rel}"),
            &self.root.join(format!("sys/class/block/{name}")),
        );
        link(
            &format!("../../{rel}"),
            &self.root.join(format!("sys/dev/block/{}:{}", dev.0, dev.1)),
        );
    }

    /// A whole disk `name` with device number `dev` and `size_bytes` (its `size` file, in
    /// 512-byte sectors).
    pub fn disk(&self, name: &str, dev: (u32, u32), size_bytes: u64) -> &Self {
        let rel = format!("devices/virtual/block/{name}");
        write(
            &self.root,
            &format!("/sys/{rel}/dev"),
            &format!("{}:{}", dev.0, dev.1),
        );
        write(
            &self.root,
            &format!("/sys/{rel}/size"),
            &(size_bytes / 512).to_string(),
        );
        std::fs::create_dir_all(self.root.join(format!("sys/{rel}/holders"))).unwrap();
        std::fs::create_dir_all(self.root.join(format!("sys/{rel}/slaves"))).unwrap();
        self.register(name, &rel, dev);
        self
    }

    /// Partition `name` (number `number`) of disk `disk`.
    pub fn partition(&self, disk: &str, name: &str, number: u32, dev: (u32, u32)) -> &Self {
        let rel = format!("{}/{name}", self.dir(disk).trim_start_matches("/sys/"));
        write(
            &self.root,
            &format!("/sys/{rel}/dev"),
            &format!("{}:{}", dev.0, dev.1),
        );
        write(
            &self.root,
            &format!("/sys/{rel}/partition"),
            &number.to_string(),
        );
        std::fs::create_dir_all(self.root.join(format!("sys/{rel}/holders"))).unwrap();
        self.register(name, &rel, dev);
        self
    }

    /// `upper` holds `lower` (device mapper, MD): `lower/holders/upper` and
    /// `upper/slaves/lower`, links as the kernel makes them.
    pub fn holder(&self, upper: &str, lower: &str) -> &Self {
        let (u, l) = (self.dir(upper), self.dir(lower));
        link(
            &format!("../../{upper}"),
            &self
                .root
                .join(format!("{}/holders/{upper}", l.trim_start_matches('/'))),
        );
        link(
            &format!("../../{lower}"),
            &self
                .root
                .join(format!("{}/slaves/{lower}", u.trim_start_matches('/'))),
        );
        self
    }

    /// Device-mapper device `name` is called `dm_name` (`dm/name`).
    pub fn dm_name(&self, name: &str, dm_name: &str) -> &Self {
        write(&self.root, &format!("{}/dm/name", self.dir(name)), dm_name);
        self
    }

    /// Loop device `name` is bound to `backing_file` from byte `offset_bytes`.
    pub fn loop_backing(&self, name: &str, backing_file: &str, offset_bytes: u64) -> &Self {
        let d = self.dir(name);
        write(&self.root, &format!("{d}/loop/backing_file"), backing_file);
        write(
            &self.root,
            &format!("{d}/loop/offset"),
            &offset_bytes.to_string(),
        );
        write(&self.root, &format!("{d}/loop/sizelimit"), "0");
        self
    }

    /// zram device `name` writes back to `backing_dev` (a path, or `none`).
    pub fn zram_backing(&self, name: &str, backing_dev: &str) -> &Self {
        write(
            &self.root,
            &format!("{}/backing_dev", self.dir(name)),
            backing_dev,
        );
        self
    }

    /// `lower` is the backing device of bcache device `bcache` (`lower/bcache/dev` links to it).
    pub fn bcache_backing(&self, lower: &str, bcache: &str) -> &Self {
        let l = self.dir(lower);
        write(&self.root, &format!("{l}/bcache/state"), "clean");
        link(
            &format!("../../../{bcache}"),
            &self
                .root
                .join(format!("{}/bcache/dev", l.trim_start_matches('/'))),
        );
        self
    }

    /// A mounted btrfs `fsid` (label `label`, empty: none) with member devices `members`.
    pub fn btrfs(&self, fsid: &str, label: &str, members: &[&str]) -> &Self {
        let base = format!("/sys/fs/btrfs/{fsid}");
        write(&self.root, &format!("{base}/label"), label);
        for m in members {
            let d = self.dir(m);
            link(
                &format!("../../../..{d}"),
                &self.root.join(format!("sys/fs/btrfs/{fsid}/devices/{m}")),
            );
        }
        write(&self.root, "/sys/fs/btrfs/features/raid1c34", "0");
        self
    }
}

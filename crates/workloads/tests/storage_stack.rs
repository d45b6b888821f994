//! A raw device something else is built on is refused, naming what: synthetic /sys trees laid
//! out as the kernel lays them out (testkit's `SysBlock`) for every kind of stacking (loop
//! with and without offset, device mapper, MD, bcache, zram writeback, a mounted multi-device
//! btrfs, a partition of a stacked device, and the downward walk), read by the probe's
//! `block_stack` and decided by `refusals`. The live loop-device reproductions of issue 32 are
//! in crates/cli/tests/storage_devices.rs.

use hwsurvey_probe::block::{self, block_stack};
use hwsurvey_probe::SysRoot;
use hwsurvey_testkit::sysblock::SysBlock;
use hwsurvey_workloads::storage::device::{parse_mountinfo, refusals, DeviceFacts, Refusal};

/// Devices of the synthetic trees: name, (major, minor).
const DEVS: &[(&str, (u32, u32))] = &[
    ("loop0", (7, 0)),
    ("loop1", (7, 1)),
    ("loop2", (7, 2)),
    ("loop3", (7, 3)),
    ("loop4", (7, 4)),
    ("loop5", (7, 5)),
    ("loop5p1", (259, 0)),
    ("sdb", (8, 16)),
    ("sdb1", (8, 17)),
    ("sdc", (8, 32)),
    ("sdd", (8, 48)),
    ("sde", (8, 64)),
    ("vdb", (252, 16)),
    ("vdb1", (252, 17)),
    ("vdb2", (252, 18)),
    ("vdc", (252, 32)),
    ("dm-0", (254, 0)),
    ("md127", (9, 127)),
    ("bcache0", (251, 0)),
    ("zram0", (250, 0)),
];

fn dev(name: &str) -> (u32, u32) {
    DEVS.iter().find(|d| d.0 == name).unwrap().1
}

/// stat's answer for a backing path in the synthetic machine: `/dev/NAME` of a listed device,
/// or a regular file under `/var/tmp/` (inode: the name's length; a name ending in
/// `(deleted)` is a file deleted after another was made under its name: another inode).
fn backing_of(path: &str) -> Option<block::Backing> {
    if let Some(file) = path.strip_prefix("/var/tmp/") {
        let ino = file.len() as u64 + if file.ends_with("(deleted)") { 1000 } else { 0 };
        return Some(block::Backing::File { dev: 2049, ino });
    }
    let name = path.strip_prefix("/dev/")?;
    DEVS.iter()
        .find(|d| d.0 == name)
        .map(|d| block::Backing::Block(d.1))
}

/// The kernel of the synthetic machine: a loop device is over what its `loop/backing_file`
/// names ([`backing_of`], from its `loop/offset`), unless `answers` says otherwise (a path
/// that is gone, a node removed: the kernel still knows the numbers), or unbound (no
/// `loop/backing_file`); a zram's backing device by [`backing_of`].
struct Kernel<'a> {
    root: &'a std::path::Path,
    answers: Vec<(&'static str, Result<Option<block::LoopBacking>, String>)>,
}

impl block::BackingSource for Kernel<'_> {
    fn loop_device(
        &self,
        name: &str,
        _dev: (u32, u32),
    ) -> Result<Option<block::LoopBacking>, String> {
        if let Some((_, a)) = self.answers.iter().find(|(n, _)| *n == name) {
            return a.clone();
        }
        let dir = self.root.join(format!("sys/class/block/{name}/loop"));
        let Ok(file) = std::fs::read_to_string(dir.join("backing_file")) else {
            return Ok(None);
        };
        let file = file.strip_suffix('\n').unwrap_or(&file);
        let offset = std::fs::read_to_string(dir.join("offset")).unwrap();
        Ok(Some(block::LoopBacking {
            backing: backing_of(file).ok_or(format!("{file}: no such file"))?,
            offset_bytes: offset.trim().parse().unwrap(),
            size_limit_bytes: 0,
        }))
    }

    fn path(&self, path: &str) -> Result<block::Backing, String> {
        backing_of(path).ok_or(format!("{path}: No such file or directory (os error 2)"))
    }
}

/// The refusals of `target` on the tree under `root`, with `mountinfo` and `swaps`.
fn decide(root: &std::path::Path, target: &str, mountinfo: &str, swaps: &[&str]) -> Vec<Refusal> {
    let kernel = Kernel {
        root,
        answers: vec![],
    };
    decide_with(&kernel, target, mountinfo, swaps)
}

/// [`decide`] with the kernel's answers of `kernel`.
fn decide_with(kernel: &Kernel<'_>, target: &str, mountinfo: &str, swaps: &[&str]) -> Vec<Refusal> {
    let sys = SysRoot::new(kernel.root);
    let stack = block_stack(&sys, kernel);
    let (ma, mi) = dev(target);
    let dir = block::device_dir(&sys, ma, mi).unwrap();
    let facts = DeviceFacts {
        partitions: block::partitions(&sys, &dir),
        holders: block::holders(&sys, &dir),
        path: format!("/dev/{target}"),
        is_block_device: true,
        dev: Some(dev(target)),
        size_bytes: Some(64 << 20),
        kernel_name: stack.name_of(dev(target)).map(str::to_string),
        stack,
        ..Default::default()
    };
    let mounts = parse_mountinfo(mountinfo).unwrap();
    let swaps: Vec<String> = swaps.iter().map(|s| s.to_string()).collect();
    refusals(&facts, true, &mounts, &swaps)
}

fn lines(r: &[Refusal]) -> Vec<String> {
    r.iter().map(|x| x.to_string()).collect()
}

/// The reproduction of issue 32 in sysfs: loop1 over /dev/loop0 from byte 1 MiB carries a
/// mounted ext4; loop0 has no holder and no signature at its start. And the same without an
/// offset, and a loop over the loop without a mount.
#[test]
fn a_loop_over_the_device_is_named_with_and_without_offset() {
    for offset in [1_048_576u64, 0] {
        let dir = tempfile::tempdir().unwrap();
        let t = SysBlock::new(dir.path());
        t.disk("loop0", dev("loop0"), 64 << 20)
            .disk("loop1", dev("loop1"), 63 << 20)
            .loop_backing("loop0", "/var/tmp/b.img", 0)
            .loop_backing("loop1", "/dev/loop0", offset);
        let mounted = "30 1 7:1 / /mnt rw - ext4 /dev/loop1 rw\n";
        let r = decide(dir.path(), "loop0", mounted, &[]);
        assert_eq!(
            lines(&r),
            [format!(
                "another block device sits on it: loop1 (loop device over loop0 from byte \
                 {offset}, mounted at /mnt)"
            )],
            "offset {offset}"
        );
        // not mounted: still refused, it is in use by the loop
        let r = decide(dir.path(), "loop0", "", &[]);
        assert_eq!(
            lines(&r),
            [format!(
                "another block device sits on it: loop1 (loop device over loop0 from byte {offset})"
            )]
        );
        // loop1 itself may be written when nothing else uses loop0 (the stack downwards)
        assert_eq!(decide(dir.path(), "loop1", "", &[]), vec![]);
        // and not while loop0 is mounted itself
        let r = decide(
            dir.path(),
            "loop1",
            "30 1 7:0 / /srv rw - ext4 /dev/loop0 rw\n",
            &[],
        );
        assert_eq!(
            lines(&r),
            [format!(
                "it is a loop device over loop0 from byte {offset}, and loop0 is also mounted at /srv"
            )]
        );
    }
}

/// Device mapper, MD, bcache, zram writeback and a mounted btrfs, each named; a holder of a
/// partition is named through the partition.
#[test]
fn every_kind_of_stacking_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let t = SysBlock::new(dir.path());
    t.disk("sdb", dev("sdb"), 1 << 30)
        .partition("sdb", "sdb1", 1, dev("sdb1"))
        .disk("sdc", dev("sdc"), 1 << 30)
        .disk("sdd", dev("sdd"), 1 << 30)
        .disk("sde", dev("sde"), 1 << 30)
        .disk("dm-0", dev("dm-0"), 1 << 29)
        .dm_name("dm-0", "vg0-data")
        .holder("dm-0", "sdb1")
        .disk("md127", dev("md127"), 1 << 30)
        .holder("md127", "sdc")
        .disk("bcache0", dev("bcache0"), 1 << 30)
        .bcache_backing("sdd", "bcache0")
        .disk("zram0", dev("zram0"), 1 << 28)
        .zram_backing("zram0", "/dev/sde")
        .disk("loop2", dev("loop2"), 1 << 28)
        .disk("loop3", dev("loop3"), 1 << 28)
        .btrfs(
            "0c1f6c2e-5b0e-4a43-9d2a-3f0a4e3c1b77",
            "pool",
            &["loop2", "loop3"],
        );
    let mountinfo = "\
30 1 254:0 / /data rw - xfs /dev/mapper/vg0-data rw
31 1 0:45 / /pool rw - btrfs /dev/loop2 rw,space_cache=v2
";
    let want: [(&str, &[&str]); 5] = [
        (
            "sdb",
            &[
                "has partitions: sdb1",
                "another block device sits on it: dm-0 (device mapper vg0-data over sdb1, \
                 mounted at /data)",
            ],
        ),
        (
            "sdc",
            &["another block device sits on it: md127 (MD RAID over sdc)"],
        ),
        (
            "sdd",
            &["another block device sits on it: bcache0 (bcache over sdd)"],
        ),
        (
            "sde",
            &["another block device sits on it: zram0 (zram device writing back to sde)"],
        ),
        (
            "loop3",
            &[
                "another block device sits on it: btrfs 0c1f6c2e-5b0e-4a43-9d2a-3f0a4e3c1b77 \
               (btrfs \"pool\" with member loop3, mounted at /pool)",
            ],
        ),
    ];
    for (target, expected) in want {
        assert_eq!(
            lines(&decide(dir.path(), target, mountinfo, &[])),
            expected,
            "{target}"
        );
    }
    // the btrfs's other member, by which it is mounted
    assert!(lines(&decide(dir.path(), "loop2", mountinfo, &[]))
        .iter()
        .any(|l| l.contains("btrfs \"pool\" with member loop2, mounted at /pool")),);
    // the dm device itself: nothing sits on it, but the partition under it is its own only
    // user: it may be written (as far as stacking goes; it is mounted, which refuses it)
    let r = decide(dir.path(), "dm-0", mountinfo, &[]);
    assert_eq!(lines(&r), ["mounted at /data"]);
}

/// The same device reached through a partition of a stacked device: loop5 over loop4 (no
/// offset) has a partition loop5p1, mounted; and swap on a device over it.
#[test]
fn a_partition_of_a_device_over_it_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let t = SysBlock::new(dir.path());
    t.disk("loop4", dev("loop4"), 64 << 20)
        .disk("loop5", dev("loop5"), 64 << 20)
        .loop_backing("loop5", "/dev/loop4", 0)
        .partition("loop5", "loop5p1", 1, dev("loop5p1"));
    let r = decide(
        dir.path(),
        "loop4",
        "30 1 259:0 / /mnt/p1 rw - ext4 /dev/loop5p1 rw\n",
        &[],
    );
    assert_eq!(
        lines(&r),
        [
            "other block devices sit on it: loop5 (loop device over loop4 from byte 0) and \
          loop5p1 (partition of loop5, mounted at /mnt/p1)"
        ]
    );
    let r = decide(dir.path(), "loop4", "", &["/dev/loop5p1"]);
    assert!(
        lines(&r)[0].contains("loop5p1 (partition of loop5, in use as swap)"),
        "{r:?}"
    );
}

/// Downwards: a loop over a partition that another loop also uses is refused; a partition
/// beside a mounted one is not (partitions do not overlap); a loop over a mounted disk is.
#[test]
fn what_the_device_sits_on_must_have_no_other_user() {
    let dir = tempfile::tempdir().unwrap();
    let t = SysBlock::new(dir.path());
    t.disk("vdb", dev("vdb"), 1 << 30)
        .partition("vdb", "vdb1", 1, dev("vdb1"))
        .partition("vdb", "vdb2", 2, dev("vdb2"))
        .disk("vdc", dev("vdc"), 1 << 30)
        .disk("loop0", dev("loop0"), 1 << 29)
        .disk("loop1", dev("loop1"), 1 << 29)
        .disk("loop2", dev("loop2"), 1 << 30)
        .loop_backing("loop0", "/dev/vdb1", 0)
        .loop_backing("loop1", "/dev/vdb1", 4096)
        .loop_backing("loop2", "/dev/vdc", 0);
    let r = decide(dir.path(), "loop0", "", &[]);
    assert_eq!(
        lines(&r),
        [
            "it is a loop device over vdb1 from byte 0, and vdb1 is also used by loop1 (loop \
          device over vdb1 from byte 4096)"
        ]
    );
    let mounted = "\
30 1 252:17 / /a rw - ext4 /dev/vdb1 rw
31 1 252:32 / /srv rw - ext4 /dev/vdc rw
";
    assert_eq!(decide(dir.path(), "vdb2", mounted, &[]), vec![]);
    let r = decide(dir.path(), "loop2", mounted, &[]);
    assert_eq!(
        lines(&r),
        ["it is a loop device over vdc from byte 0, and vdc is also mounted at /srv"]
    );
    // vdb1: both loops sit on it, and it is mounted
    let r = decide(dir.path(), "vdb1", mounted, &[]);
    assert_eq!(
        lines(&r),
        [
            "mounted at /a",
            "other block devices sit on it: loop0 (loop device over vdb1 from byte 0) and \
             loop1 (loop device over vdb1 from byte 4096)"
        ]
    );
}

/// Two loop devices over one regular file (issue 32, found again on the release build: loop1
/// over the file from byte 1 MiB carried a mounted ext4, loop0 over the same file from byte 0
/// was refused only for the data it held, and `--confirm-device SIZE`, as the refusal
/// suggested, destroyed the file system). Each names the other; a loop over another file, and
/// one over a file deleted after another was made under its name (another inode), are not
/// linked.
#[test]
fn loops_over_one_file_are_each_others_users() {
    let dir = tempfile::tempdir().unwrap();
    let t = SysBlock::new(dir.path());
    t.disk("loop0", dev("loop0"), 64 << 20)
        .disk("loop1", dev("loop1"), 63 << 20)
        .disk("loop2", dev("loop2"), 64 << 20)
        .disk("loop3", dev("loop3"), 64 << 20)
        .loop_backing("loop0", "/var/tmp/b.img", 0)
        .loop_backing("loop1", "/var/tmp/b.img", 1 << 20)
        .loop_backing("loop2", "/var/tmp/other.img", 0)
        .loop_backing("loop3", "/var/tmp/b.img (deleted)", 0);
    let mounted = "30 1 7:1 / /mnt rw - ext4 /dev/loop1 rw\n";
    assert_eq!(
        lines(&decide(dir.path(), "loop0", mounted, &[])),
        [
            "it is a loop device over file /var/tmp/b.img from byte 0, and file /var/tmp/b.img \
             is also used by loop1 (loop device over file /var/tmp/b.img from byte 1048576, \
             mounted at /mnt)"
        ]
    );
    assert_eq!(
        lines(&decide(dir.path(), "loop1", "", &[])),
        [
            "it is a loop device over file /var/tmp/b.img from byte 1048576, and file \
             /var/tmp/b.img is also used by loop0 (loop device over file /var/tmp/b.img from \
             byte 0)"
        ]
    );
    assert_eq!(decide(dir.path(), "loop2", mounted, &[]), vec![]);
    assert_eq!(decide(dir.path(), "loop3", mounted, &[]), vec![]);
}

/// Issue 46: loop devices whose paths no longer lead to what they are over are matched by
/// what the kernel says (`LOOP_GET_STATUS64`): loop1 and loop2 over one deleted file (the
/// same inode, both `(deleted)`), loop3 over loop0 through a `mknod` node since removed, loop4
/// and loop5 over a file whose name ends in a space. Before, each of them was dropped from the
/// walk without a word (`backing_of` found no such path) and loop0, loop1, loop4 passed.
#[test]
fn loops_whose_paths_are_gone_are_matched_by_the_kernels_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let t = SysBlock::new(dir.path());
    let file = |ino| block::Backing::File { dev: 2049, ino };
    let over = |backing, offset_bytes| {
        Ok(Some(block::LoopBacking {
            backing,
            offset_bytes,
            size_limit_bytes: 0,
        }))
    };
    t.disk("loop0", dev("loop0"), 64 << 20)
        .disk("loop1", dev("loop1"), 64 << 20)
        .disk("loop2", dev("loop2"), 63 << 20)
        .disk("loop3", dev("loop3"), 63 << 20)
        .disk("loop4", dev("loop4"), 64 << 20)
        .disk("loop5", dev("loop5"), 63 << 20)
        .loop_backing("loop0", "/var/tmp/a.img", 0)
        .loop_backing("loop1", "/srv/t2.img (deleted)", 0)
        .loop_backing("loop2", "/srv/t2.img (deleted)", 1 << 20)
        .loop_backing("loop3", "/srv/node (deleted)", 1 << 20)
        .loop_backing("loop4", "/srv/b.img ", 0)
        .loop_backing("loop5", "/srv/b.img ", 1 << 20);
    let kernel = Kernel {
        root: dir.path(),
        answers: vec![
            ("loop1", over(file(77), 0)),
            ("loop2", over(file(77), 1 << 20)),
            ("loop3", over(block::Backing::Block(dev("loop0")), 1 << 20)),
            ("loop4", over(file(99), 0)),
            ("loop5", over(file(99), 1 << 20)),
        ],
    };
    let mounted = "30 1 7:2 / /mnt rw - ext4 /dev/loop2 rw\n";
    assert_eq!(
        lines(&decide_with(&kernel, "loop1", mounted, &[])),
        [
            "it is a loop device over file /srv/t2.img (deleted) from byte 0, and file \
             /srv/t2.img (deleted) is also used by loop2 (loop device over file /srv/t2.img \
             (deleted) from byte 1048576, mounted at /mnt)"
        ]
    );
    assert_eq!(
        lines(&decide_with(&kernel, "loop0", "", &[])),
        ["another block device sits on it: loop3 (loop device over loop0 from byte 1048576)"]
    );
    // the name as the kernel wrote it, its trailing space kept
    assert_eq!(
        lines(&decide_with(&kernel, "loop4", "", &[])),
        [
            "it is a loop device over file /srv/b.img  from byte 0, and file /srv/b.img  is \
             also used by loop5 (loop device over file /srv/b.img  from byte 1048576)"
        ]
    );
}

/// A loop device the kernel cannot be asked about (its /dev node missing, permission denied)
/// could be over any device: every device is refused, saying what could not be read and how
/// to proceed; an unbound loop device (ENXIO) is nothing.
#[test]
fn a_loop_device_that_cannot_be_asked_refuses_with_the_way_to_proceed() {
    let dir = tempfile::tempdir().unwrap();
    let t = SysBlock::new(dir.path());
    t.disk("loop0", dev("loop0"), 64 << 20)
        .disk("loop1", dev("loop1"), 64 << 20)
        .disk("loop2", dev("loop2"), 64 << 20)
        .loop_backing("loop0", "/var/tmp/a.img", 0)
        .loop_backing("loop2", "/srv/x.img", 0);
    let unbound = Kernel {
        root: dir.path(),
        answers: vec![("loop2", Ok(None))],
    };
    assert_eq!(decide_with(&unbound, "loop0", "", &[]), vec![]);
    let denied = Kernel {
        root: dir.path(),
        answers: vec![(
            "loop2",
            Err("/dev/loop2: Permission denied (os error 13)".into()),
        )],
    };
    let r = decide_with(&denied, "loop0", "", &[]);
    assert_eq!(
        lines(&r),
        [
            "cannot tell whether anything sits on it: what loop2 is over: /dev/loop2: \
             Permission denied (os error 13); to proceed, run hwsurvey as root on the host, \
             where every loop device's /dev node can be opened, or detach a loop device that \
             is not needed (losetup -d /dev/loopN), or, knowing that nothing uses it, add \
             --confirm-device 67108864 (its size in bytes)"
        ]
    );
    assert!(matches!(r[0], Refusal::Undecided { .. }));
}

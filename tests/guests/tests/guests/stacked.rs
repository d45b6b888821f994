//! A raw device something else is built on, with the guest kernel's own drivers (this build
//! VM's kernel has no device mapper, no MD and no zram writeback): two device-mapper linear
//! targets over one loop device, an MD RAID1 array over two, a zram device writing back to
//! one. A storage run naming a lower device, or a dm target whose lower device the other
//! target shares, must be refused before anything runs (exit 2, one line naming what sits
//! there) and leave the device byte for byte as it was.
//!
//! The stacks are built as an operator builds them: `dmsetup` and `mdadm` from Debian's
//! packages, unpacked into the initramfs with their libraries and glibc (the definition's
//! `packages`), the loop devices and zram through busybox and sysfs. Debian builds both tools
//! dynamically only, and its own binaries with their libraries are the least fragile way (the
//! serving guests carry dropbear and Python so): a DM ioctl helper of ours would be a second,
//! untested client of the kernel's interface needing a static build per guest architecture,
//! and an array made through md's sysfs files without mdadm has no superblock, unlike a member
//! in use. `DM_DISABLE_UDEV=1`: no udev runs in the guest, so libdevmapper makes the
//! `/dev/mapper` nodes itself. The array has a v1.2 superblock and `--assume-clean`, so no
//! resync writes a member during the test.

use super::*;

/// One refusal the guest must print: the device named, the `-o` file that must not appear,
/// and what the line must say.
struct Case {
    device: &'static str,
    output: &'static str,
    says: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        device: "/dev/loop0",
        output: "dm-lower.json",
        says: &[
            "dm-0 (device mapper hws-a over loop0)",
            "dm-1 (device mapper hws-b over loop0)",
        ],
    },
    // the other direction: the target's lower device is used by the other target too
    Case {
        device: "/dev/mapper/hws-a",
        output: "dm-upper.json",
        says: &[
            "it is a device mapper hws-a over loop0, and loop0 is also used by \
             dm-1 (device mapper hws-b over loop0)",
        ],
    },
    Case {
        device: "/dev/loop1",
        output: "md.json",
        says: &["md0 (MD RAID over loop1)"],
    },
    Case {
        device: "/dev/loop3",
        output: "zram.json",
        says: &["zram0 (zram device writing back to loop3)"],
    },
];

/// The lower devices whose bytes must not change.
const CHECKSUMMED: &str = "/dev/loop0 /dev/loop1 /dev/loop3";

/// Their checksums, read past the page cache: a write through a device above one (dm-0 over
/// loop0) goes to the loop device's queue, not through its page cache, so a cached read of
/// loop0 still gave the bytes of before (seen with the dm refusal disabled: hws-a written, the
/// checksum unchanged).
const CHECKSUMS: &str =
    "sync; echo 3 > /proc/sys/vm/drop_caches; md5sum /dev/loop0 /dev/loop1 /dev/loop3";

/// The commands: build the stacks and print the checksums, one refused run per [`CASES`],
/// the checksums again.
pub(super) fn stacked_commands() -> Vec<String> {
    let mut cmds = vec![format!(
        "sh -c set -e; export DM_DISABLE_UDEV=1; mkdir -p /run; \
         for i in 0 1 2 3; do dd if=/dev/zero of=/tmp/s$i.img bs=1M count=8 2>/dev/null; \
         losetup /dev/loop$i /tmp/s$i.img; done; \
         /sbin/dmsetup create hws-a --table '0 4096 linear /dev/loop0 2048'; \
         /sbin/dmsetup create hws-b --table '0 4096 linear /dev/loop0 8192'; \
         /sbin/mdadm --create /dev/md0 --run --level=1 --raid-devices=2 --metadata=1.2 \
         --assume-clean /dev/loop1 /dev/loop2 < /dev/null; \
         echo /dev/loop3 > /sys/block/zram0/backing_dev; \
         echo 16M > /sys/block/zram0/disksize; \
         sleep 1; {CHECKSUMS}"
    )];
    for c in CASES {
        cmds.push(format!(
            "hwsurvey run --profile quick --only storage.iops --storage-device {} \
             --destructive -o {}",
            c.device, c.output
        ));
    }
    cmds.push(format!("sh -c {CHECKSUMS}"));
    cmds
}

/// Checks the outputs of [`stacked_commands`], which start at `at`.
pub(super) fn check_stacked(r: &GuestRun, at: usize) -> Vec<String> {
    let setup = &r.outputs[at];
    if setup.status != 0 {
        return vec![format!("stacked devices' set-up {}", exited(setup))];
    }
    let mut failures = Vec::new();
    for (i, c) in CASES.iter().enumerate() {
        let out = &r.outputs[at + 1 + i];
        let err = out.stderr.trim_end();
        let head = format!("hwsurvey: error: storage device {}: refused: ", c.device);
        let missing: Vec<&&str> = c.says.iter().filter(|s| !err.contains(**s)).collect();
        if out.status != 2 || err.lines().count() != 1 || !err.starts_with(&head) {
            failures.push(format!(
                "{}: expected exit 2 and one line {head:?}..., got {}",
                c.device,
                exited(out)
            ));
        } else if !missing.is_empty() {
            failures.push(format!(
                "{}: the refusal does not say {missing:?}: {err}",
                c.device
            ));
        }
        if r.files_dir.join(c.output).exists() {
            failures.push(format!(
                "{}: a result file {} was written",
                c.device, c.output
            ));
        }
    }
    let after = &r.outputs[at + 1 + CASES.len()];
    let sums = |s: &str| s.lines().map(str::to_owned).collect::<Vec<_>>();
    let (before, now) = (sums(&setup.stdout), sums(&after.stdout));
    if after.status != 0 || before.len() != 3 || before != now {
        failures.push(format!(
            "stacked devices changed (md5sum {CHECKSUMMED}):\nbefore: {before:?}\nafter: {now:?} \
             ({})",
            exited(after)
        ));
    }
    failures
}

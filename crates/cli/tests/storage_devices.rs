//! Raw devices and storage directories the user names, through the `hwsurvey` binary: a device
//! holding any file system or volume signature is refused before anything runs (exit 2, one
//! line) and left byte for byte unchanged; a blank device is warned about and measured; the
//! exit status says when nothing was measured; leftovers of a killed run are named.
//!
//! Loop devices need root and /dev/loop-control (skipped otherwise, and under qemu-user). The
//! file systems are made by Debian's own tools (scripts/lib.sh lists their packages).

use std::path::{Path, PathBuf};
use std::process::Output;

use hwsurvey_testkit::blockdev::{
    blank_image, blkid_probe_type, checksum, find_tool, loop_unavailable, make, Kind, LoopDevice,
    Mounted,
};
use hwsurvey_testkit::hwsurvey;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `run --profile quick --only storage --storage-device DEV --destructive [extra]`.
fn run_on_device(dev: &Path, extra: &[&str], out: &Path) -> Output {
    hwsurvey()
        .args([
            "run",
            "--profile",
            "quick",
            "--only",
            "storage",
            "--storage-device",
        ])
        .arg(dev)
        .arg("--destructive")
        .args(extra)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

/// The mounted root file system's device, when / comes from a /dev node here.
fn root_device() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let line = text
        .lines()
        .rev()
        .find(|l| l.split(' ').nth(4) == Some("/"))?;
    let fields: Vec<&str> = line.split(' ').collect();
    let sep = fields.iter().position(|f| *f == "-")?;
    let src = PathBuf::from(fields.get(sep + 2)?);
    (src.starts_with("/dev/") && src.exists()).then_some(src)
}

#[test]
fn plan_only_on_the_mounted_root_device_says_it_is_refused() {
    let Some(root) = root_device() else {
        println!("SKIPPED: / is not mounted from an existing /dev node here");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never.json");
    // --plan-only only: a run without it on the root disk is never tried, even to see it refused.
    let o = run_on_device(&root, &["--plan-only"], &out);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.starts_with(&format!(
            "hwsurvey: error: storage device {}: refused: ",
            root.display()
        )),
        "{err}"
    );
    assert!(err.contains("mounted at /"), "{err}");
    // nothing ran: no plan printed, no result file
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    assert!(!out.exists());
}

#[test]
fn a_device_without_destructive_is_an_error_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("blank.img");
    std::fs::write(&img, vec![0u8; 1 << 20]).unwrap();
    let o = hwsurvey()
        .args([
            "run",
            "--plan-only",
            "--profile",
            "quick",
            "--only",
            "storage",
            "--storage-device",
        ])
        .arg(&img)
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err,
        format!(
            "hwsurvey: error: storage device {}: refused: writing a raw device needs --destructive; not a block device\n",
            img.display()
        )
    );
}

/// Each file system and volume signature Debian can make here, on a loop device: refused by
/// `run` and by `run --plan-only` with one line naming libblkid's type, the device unchanged
/// (same checksum of every byte); then the same loop device wiped blank is accepted, warned
/// about (path, size, serial, backing file) and measured. `blkid -p` must report each kind's
/// TYPE on the loop device first. The MD member is made by mdadm where the kernel has the md
/// driver and by writing its v1.2 superblock by hand otherwise, so it is never skipped.
#[test]
fn every_signature_on_a_loop_device_is_refused_and_a_blank_one_is_measured() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = dir.path().join("r.json");
    let mut covered = Vec::new();
    for kind in Kind::ALL {
        if let Some(why) = kind.unavailable() {
            println!("SKIPPED: {why}");
            continue;
        }
        let img = dir.path().join(format!("{}.img", kind.name()));
        blank_image(&img).unwrap();
        if !kind.needs_block_device() {
            make(kind, &img, dir.path()).unwrap();
        }
        let lo = LoopDevice::attach(&img).unwrap();
        if kind.needs_block_device() {
            make(kind, &lo.path, dir.path()).unwrap();
        }
        if kind == Kind::MdMember {
            match Kind::md_by_mdadm() {
                Ok(()) => println!("md-member: made by mdadm --create"),
                Err(why) => println!("md-member: {why}: v1.2 superblock written by hand"),
            }
        }
        // libblkid's own low-level probe sees the signature on the loop device
        if hwsurvey_testkit::tool("blkid") {
            assert_eq!(
                blkid_probe_type(&lo.path).unwrap().as_deref(),
                Some(kind.blkid_type()),
                "{}: blkid -p {}",
                kind.name(),
                lo.path.display()
            );
        }
        let before = checksum(&lo.path).unwrap();
        for extra in [&["--plan-only"][..], &[][..]] {
            let o = run_on_device(&lo.path, extra, &out);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{} {extra:?}: {err}", kind.name());
            assert_eq!(err.lines().count(), 1, "{}: one line: {err}", kind.name());
            assert!(
                err.starts_with(&format!(
                    "hwsurvey: error: storage device {}: refused: ",
                    lo.path.display()
                )) && err.contains(&format!("holds a signature: {}", kind.blkid_type())),
                "{}: {err}",
                kind.name()
            );
            assert!(!out.exists(), "{}: a result file was written", kind.name());
        }
        assert_eq!(
            checksum(&lo.path).unwrap(),
            before,
            "{}: the refused device changed",
            kind.name()
        );
        covered.push(kind.name());
    }
    println!("refused on loop devices: {}", covered.join(", "));
    // an MD member is always made (by mdadm, or by hand without the md driver): never skipped
    assert!(covered.contains(&"md-member"), "{covered:?}");

    // A blank device: accepted, named in a warning, measured.
    let img = dir.path().join("blank.img");
    blank_image(&img).unwrap();
    let lo = LoopDevice::attach(&img).unwrap();
    let o = run_on_device(&lo.path, &[], &out);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}\n{}", text(&o.stdout));
    let warning = err
        .lines()
        .find(|l| l.starts_with("hwsurvey: warning: --storage-device "))
        .unwrap_or_else(|| panic!("no warning: {err}"));
    assert!(
        warning.contains(&format!("{} (loop", lo.path.display()))
            && warning.contains("335544320 bytes = 320 MiB")
            && warning.contains(&format!("loop over {}", img.display()))
            && warning.contains("will be overwritten"),
        "{warning}"
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let measured = file["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["point"]["family"] == "storage.iops" && t["outcome"] == "measured")
        .count();
    assert!(measured > 0, "{}", file["tests"]);
}

#[test]
fn nothing_measured_exits_3_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let o = hwsurvey()
        .args(["run", "--profile", "quick", "--only", "storage", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.starts_with(
            "hwsurvey: nothing was measured: 1 point skipped (storage.iops: no --storage-dir given"
        ),
        "{last}"
    );
    // the result file is written and says the same
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("no --storage-dir given"));
}

#[test]
fn help_documents_the_exit_status() {
    let o = hwsurvey().args(["run", "--help"]).output().unwrap();
    let help = text(&o.stdout);
    for code in [
        "Exit status:",
        "  0      at least one test was measured",
        "  1      a test failed",
        "  2      the run did not start",
        "  3      nothing was measured",
        "  128+N  stopped by signal N",
    ] {
        assert!(help.contains(code), "{code:?} not in {help}");
    }
}

/// A test file of a killed run (pid above the kernel's limit: its process cannot exist) is
/// listed by --plan-only and removed, by name, by the next run.
#[test]
fn leftover_of_a_killed_run_is_named_when_removed() {
    let Ok(storage) = tempfile::Builder::new()
        .prefix("hwsurvey-leftover-")
        .tempdir_in("/var/tmp")
    else {
        println!("SKIPPED: /var/tmp not available for a disk-backed storage dir");
        return;
    };
    let left = storage.path().join(".hwsurvey-storage-4194305-0.tmp");
    std::fs::write(&left, b"left by SIGKILL").unwrap();
    let plan = hwsurvey()
        .args([
            "run",
            "--plan-only",
            "--profile",
            "quick",
            "--only",
            "storage",
            "--storage-dir",
        ])
        .arg(storage.path())
        .output()
        .unwrap();
    let err = text(&plan.stderr);
    if err.contains("no direct I/O") {
        println!("SKIPPED: /var/tmp has no O_DIRECT here: {err}");
        return;
    }
    assert!(plan.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "hwsurvey: note: {} was left by a killed hwsurvey run (pid 4194305); `run` removes it",
            left.display()
        )),
        "{err}"
    );
    assert!(left.exists(), "--plan-only removed a file");
    let dir = tempfile::tempdir().unwrap();
    let o = hwsurvey()
        .args([
            "run",
            "--profile",
            "quick",
            "--only",
            "storage",
            "--storage-dir",
        ])
        .arg(storage.path())
        .arg("-o")
        .arg(dir.path().join("r.json"))
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "hwsurvey: removed {}: a test file left by a killed hwsurvey run (pid 4194305)",
            left.display()
        )),
        "{err}"
    );
    assert!(!left.exists());
}

/// Four blank loop devices, `--destructive`: storage.iops measures each alone and the
/// device-count ladder (the first 2, then all 4 at once), and `compare` of the result shows
/// IOPS and CPU time per I/O against the number of devices, with the efficiency against
/// N x one device, the knee and the limit in the IOPS table's notes. The four loops share one
/// disk (/var/tmp), so they need not scale; the test holds the ladder's shape and arithmetic.
#[test]
fn four_loop_devices_give_an_iops_ladder_that_compare_shows() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = dir.path().join("ladder.json");
    let loops: Vec<LoopDevice> = (0..4)
        .map(|k| {
            let img = dir.path().join(format!("d{k}.img"));
            blank_image(&img).unwrap();
            LoopDevice::attach(&img).unwrap()
        })
        .collect();
    let mut cmd = hwsurvey();
    cmd.args([
        "run",
        "--profile",
        "quick",
        "--only",
        "storage",
        "--destructive",
    ]);
    for lo in &loops {
        cmd.arg("--storage-device").arg(&lo.path);
    }
    let o = cmd.arg("-o").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let tests = file["tests"].as_array().unwrap();
    let ladder: Vec<(String, usize)> = tests
        .iter()
        .filter(|t| {
            t["point"]["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("randread_4k/") && id.ends_with("/qd=4"))
        })
        .map(|t| {
            (
                t["point"]["id"]
                    .as_str()
                    .unwrap()
                    .split('/')
                    .nth(1)
                    .unwrap()
                    .to_string(),
                t["point"]["params"]["targets"].as_array().unwrap().len(),
            )
        })
        .collect();
    let want: Vec<(String, usize)> = [
        ("target=dev0", 1),
        ("target=dev1", 1),
        ("target=dev2", 1),
        ("target=dev3", 1),
        ("target=first2", 2),
        ("target=all", 4),
    ]
    .iter()
    .map(|(k, n)| (k.to_string(), *n))
    .collect();
    assert_eq!(ladder, want);
    let iops = |id: &str| -> f64 {
        let t = tests.iter().find(|t| t["point"]["id"] == id).unwrap();
        assert_eq!(t["outcome"], "measured", "{t}");
        t["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "iops")
            .unwrap()["summary"]["median"]
            .as_f64()
            .unwrap()
    };
    let one = iops("randread_4k/target=dev0/threads=1/qd=4");
    let all = iops("randread_4k/target=all/threads=1/qd=4");
    let shown = hwsurvey().arg("compare").arg(&out).output().unwrap();
    let table = text(&shown.stdout);
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown.stderr));
    let head = "storage.iops IOPS vs devices (randread_4k, threads=1, qd=4)";
    let at = table
        .find(head)
        .unwrap_or_else(|| panic!("no {head:?} in:\n{table}"));
    let section = &table[at..];
    let section = &section[..section.find("\n\n").unwrap_or(section.len())];
    for row in ["1 device", "2 devices", "4 devices"] {
        assert!(section.contains(row), "{row} missing:\n{section}");
    }
    let efficiency = (100.0 * all / (4.0 * one)).round();
    assert!(
        table.contains(&format!("= {efficiency:.0} % of 4 x 1 device")),
        "no efficiency {efficiency} % (4 devices {all}, 1 device {one}):\n{table}"
    );
    assert!(table.contains("; knee at "), "{table}");
    assert!(table.contains("; limit: the "), "{table}");
    assert!(
        table.contains("storage.iops CPU time per I/O vs devices (randread_4k, threads=1, qd=4)"),
        "{table}"
    );
}

/// `e2fsck -fn DEV`: Ok when the file system is clean, else its output.
fn e2fsck(dev: &Path) -> Result<(), String> {
    let o = std::process::Command::new(find_tool("e2fsck").unwrap())
        .arg("-fn")
        .arg(dev)
        .output()
        .unwrap();
    if o.status.success() {
        Ok(())
    } else {
        Err(format!("{}{}", text(&o.stdout), text(&o.stderr)))
    }
}

/// One MBR partition entry (type 0x83) from sector 2048 to the end of a `bytes`-byte device:
/// the table `losetup --partscan` reads.
fn write_mbr_one_partition(dev: &Path, bytes: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let mut mbr = [0u8; 512];
    let e = &mut mbr[446..462];
    e[4] = 0x83;
    e[8..12].copy_from_slice(&2048u32.to_le_bytes());
    e[12..16].copy_from_slice(&((bytes / 512 - 2048) as u32).to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    let mut f = std::fs::OpenOptions::new().write(true).open(dev).unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    f.write_all(&mbr).unwrap();
    f.sync_all().unwrap();
}

fn kernel_name(dev: &Path) -> String {
    dev.file_name().unwrap().to_string_lossy().into_owned()
}

/// Issue 32's reproduction, with and without the loop's offset: loop U over loop A from byte
/// 1 MiB (then 0) carries a mounted ext4 with data; `run` and `--plan-only` on A are refused in
/// one line naming U, its offset and its mount point, and the file system is intact after
/// (e2fsck -fn, the data file read back). Then, with A wiped blank, a loop U over it (nothing
/// on either, nothing mounted) still refuses A. On the code before the fix A passed every
/// check there (nothing at its start, empty holders/, O_EXCL granted) and the run overwrote
/// it; with offset 0 and the ext4 only its signature was seen, not the loop.
#[test]
fn a_device_under_a_loop_device_is_refused_naming_the_loop() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    if !hwsurvey_testkit::tool("mkfs.ext4") || !hwsurvey_testkit::tool("e2fsck") {
        return;
    }
    for offset in [1u64 << 20, 0] {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let out = dir.path().join("o.json");
        let img = dir.path().join("b.img");
        let f = std::fs::File::create(&img).unwrap();
        f.set_len(64 << 20).unwrap();
        let a = LoopDevice::attach(&img).unwrap();
        let u = LoopDevice::attach_at(&a.path, offset, false).unwrap();
        make(Kind::Ext4, &u.path, dir.path()).unwrap();
        let mnt = dir.path().join("mnt");
        let mounted = Mounted::mount(&u.path, &mnt).unwrap();
        let data: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
        std::fs::write(mnt.join("data.txt"), &data).unwrap();
        nix_sync();
        for extra in [&["--plan-only"][..], &[][..]] {
            let o = run_on_device(&a.path, extra, &out);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "offset {offset} {extra:?}: {err}");
            assert_eq!(err.lines().count(), 1, "one line: {err}");
            let stacked = format!(
                "another block device sits on it: {} (loop device over {} from byte {offset}, \
                 mounted at {})",
                kernel_name(&u.path),
                kernel_name(&a.path),
                mnt.display()
            );
            let refused = format!(
                "hwsurvey: error: storage device {}: refused: ",
                a.path.display()
            );
            if offset > 0 {
                // nothing at A's start: the loop first, then the ext4's blocks sampled as data
                assert!(
                    err.starts_with(&format!(
                        "{refused}{stacked}; no signature, but it holds data"
                    )),
                    "{extra:?}: {err}"
                );
            } else {
                // the ext4 is at A's start too: its signature, and the loop
                assert_eq!(
                    err,
                    format!(
                        "{refused}holds a signature: ext4 (filesystem) at byte 1080 (found by \
                         {}); {stacked}\n",
                        checker_of(&err)
                    ),
                    "{extra:?}"
                );
            }
            assert!(!out.exists());
        }
        assert_eq!(std::fs::read_to_string(mnt.join("data.txt")).unwrap(), data);
        mounted.unmount().unwrap();
        e2fsck(&u.path).unwrap_or_else(|e| panic!("offset {offset}: {e}"));
        // not mounted, the loop over it still refuses it; and a blank loop over A from byte 0
        // (nothing on either, nothing mounted) too
        drop(u);
        let wiped = std::fs::File::create(&img).unwrap();
        wiped.set_len(64 << 20).unwrap();
        let u = LoopDevice::attach_at(&a.path, offset, false).unwrap();
        let o = run_on_device(&a.path, &["--plan-only"], &out);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!(
                "another block device sits on it: {} (loop device over {} from byte {offset})\n",
                kernel_name(&u.path),
                kernel_name(&a.path)
            )),
            "{err}"
        );
    }
}

/// The checker named in a refusal line: `libblkid 2.38.1` from `(found by libblkid 2.38.1)`.
fn checker_of(line: &str) -> String {
    line.split("(found by ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or("")
        .to_string()
}

/// sync(2): every dirty page to the devices before they are looked at.
fn nix_sync() {
    nix::unistd::sync();
}

/// The same device reached through a partition of a device stacked on it: loop U (with
/// partscan) over loop A from byte 1 MiB holds an MBR partition table, its partition Up1 an
/// ext4 that is mounted. A is refused naming U and Up1 with its mount point.
#[test]
fn a_partition_of_a_loop_over_the_device_is_named() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    if !hwsurvey_testkit::tool("mkfs.ext4") || !hwsurvey_testkit::tool("partx") {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = dir.path().join("o.json");
    let img = dir.path().join("b.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let a = LoopDevice::attach(&img).unwrap();
    // the table, then its partition added with BLKPG (partx -a: the kernel's own scan at
    // attach time did not find it here)
    let u = LoopDevice::attach_at(&a.path, 1 << 20, true).unwrap();
    write_mbr_one_partition(&u.path, 63 << 20);
    let part = PathBuf::from(format!("{}p1", u.path.display()));
    if !part.exists() {
        let o = std::process::Command::new(find_tool("partx").unwrap())
            .arg("-a")
            .arg(&u.path)
            .output()
            .unwrap();
        assert!(o.status.success(), "partx -a: {}", text(&o.stderr));
    }
    for _ in 0..50 {
        if part.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(part.exists(), "{} did not appear", part.display());
    make(Kind::Ext4, &part, dir.path()).unwrap();
    let mnt = dir.path().join("mnt");
    let mounted = Mounted::mount(&part, &mnt).unwrap();
    // a file to read back, and e2fsck after: the device's raw checksum is no measure while its
    // ext4 is mounted (the kernel's ext4lazyinit writes its inode tables after the mount)
    let data: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    std::fs::write(mnt.join("data.txt"), &data).unwrap();
    nix_sync();
    let o = run_on_device(&a.path, &[], &out);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let (un, an) = (kernel_name(&u.path), kernel_name(&a.path));
    let want = format!(
        "hwsurvey: error: storage device {}: refused: other block devices sit on it: {un} \
         (loop device over {an} from byte 1048576) and {un}p1 (partition of {un}, mounted at \
         {}); no signature, but it holds data",
        a.path.display(),
        mnt.display()
    );
    assert!(err.starts_with(&want) && err.lines().count() == 1, "{err}");
    assert!(!out.exists());
    assert_eq!(std::fs::read_to_string(mnt.join("data.txt")).unwrap(), data);
    mounted.unmount().unwrap();
    if hwsurvey_testkit::tool("e2fsck") {
        e2fsck(&part).unwrap_or_else(|e| panic!("{}: {e}", part.display()));
    }
}

/// A member of a mounted two-device btrfs (RAID-1 over two loop devices, mounted by the
/// first): the second is refused naming the btrfs, its member and mount point (before the fix
/// only the kernel's EBUSY said "in use").
#[test]
fn a_member_of_a_mounted_multi_device_btrfs_is_named() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    if !hwsurvey_testkit::tool("mkfs.btrfs") {
        return;
    }
    let filesystems = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !filesystems.contains("btrfs") {
        println!("SKIPPED: this kernel has no btrfs");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = dir.path().join("o.json");
    let loops: Vec<LoopDevice> = (0..2)
        .map(|k| {
            let img = dir.path().join(format!("m{k}.img"));
            blank_image(&img).unwrap();
            LoopDevice::attach(&img).unwrap()
        })
        .collect();
    let o = std::process::Command::new(find_tool("mkfs.btrfs").unwrap())
        .args(["-q", "-f", "-L", "pool", "-d", "raid1", "-m", "raid1"])
        .arg(&loops[0].path)
        .arg(&loops[1].path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mnt = dir.path().join("mnt");
    let _mounted = Mounted::mount(&loops[0].path, &mnt).unwrap();
    let o = run_on_device(&loops[1].path, &["--plan-only"], &out);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "(btrfs \"pool\" with member {}, mounted at {})",
            kernel_name(&loops[1].path),
            mnt.display()
        )),
        "{err}"
    );
}

/// Two loop devices over one file: loop U over the file from byte 1 MiB carries a mounted
/// ext4 with data, loop A over the same file from byte 0 is named with `--confirm-device` (as
/// a refusal for data without a signature says to). Refused in one line naming U, its offset
/// and mount point (the file's name, holding a newline, escaped); the file system intact. On
/// the code before, A was refused only for its data, and confirmed, the run destroyed the
/// ext4 (e2fsck: "Corrupt group descriptor").
#[test]
fn a_loop_over_the_same_file_is_named_and_confirming_does_not_pass_it() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    if !hwsurvey_testkit::tool("mkfs.ext4") || !hwsurvey_testkit::tool("e2fsck") {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = dir.path().join("o.json");
    let img = dir.path().join("b\nimg");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let a = LoopDevice::attach(&img).unwrap();
    let u = LoopDevice::attach_at(&img, 1 << 20, false).unwrap();
    make(Kind::Ext4, &u.path, dir.path()).unwrap();
    let mnt = dir.path().join("mnt");
    let mounted = Mounted::mount(&u.path, &mnt).unwrap();
    let data: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    std::fs::write(mnt.join("data.txt"), &data).unwrap();
    nix_sync();
    let size = (64u64 << 20).to_string();
    let o = run_on_device(&a.path, &["--confirm-device", &size], &out);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let file = format!("file {}/b\\nimg", dir.path().display());
    let want = format!(
        "hwsurvey: error: storage device {}: refused: it is a loop device over {file} from \
         byte 0, and {file} is also used by {} (loop device over {file} from byte 1048576, \
         mounted at {})",
        a.path.display(),
        kernel_name(&u.path),
        mnt.display()
    );
    assert!(err.starts_with(&want), "{err}\nwant: {want}");
    assert!(!out.exists());
    assert_eq!(std::fs::read_to_string(mnt.join("data.txt")).unwrap(), data);
    mounted.unmount().unwrap();
    e2fsck(&u.path).unwrap();
}

/// Issue 46: a 2 GiB loop device, no signature, data only at 2-7 MiB (the old check sampled the
/// first and last MiB and every 8 MiB): `run --plan-only` of the quick profile (it writes 8 MiB)
/// refuses it in one line naming the data, every byte of the span read. Before, it passed.
#[test]
fn data_between_the_old_sample_points_is_refused_before_anything_runs() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let img = dir.path().join("big.img");
    let f = std::fs::File::create(&img).unwrap();
    f.set_len(2 << 30).unwrap();
    // no 4 KiB block of it is blank
    let data: Vec<u8> = (0u32..5 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::os::unix::fs::FileExt::write_all_at(&f, &data, 2 << 20).unwrap();
    let a = LoopDevice::attach(&img).unwrap();
    let o = run_on_device(&a.path, &["--plan-only"], &dir.path().join("o.json"));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.starts_with(&format!(
            "hwsurvey: error: storage device {}: refused: no signature, but it holds data (1280 \
             of the 2048 4096-byte blocks of the 8388608 bytes a run writes (from byte 0) are \
             neither blank nor hwsurvey's, the first at byte 2097152 (every byte read in ",
            a.path.display()
        )) && err.ends_with(
            "to overwrite it anyway, add --confirm-device 2147483648 (its size in bytes)\n"
        ),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
}

/// A blank device a run wrote carries hwsurvey's marker in every block it wrote (precondition,
/// random and sequential writes), and the next run accepts it unconfirmed (before: refused).
#[test]
fn a_device_hwsurvey_wrote_is_accepted_by_the_next_run() {
    use hwsurvey_workloads::storage::sample;
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let img = dir.path().join("blank.img");
    blank_image(&img).unwrap();
    let a = LoopDevice::attach(&img).unwrap();
    let o = run_on_device(&a.path, &[], &dir.path().join("o.json"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let c = sample::check_data(&a.path, 320 << 20, 8 << 20).unwrap();
    let counts = (c.span.count.blocks, c.span.count.ours, c.span.count.data);
    assert_eq!(
        (counts, c.beyond.data),
        ((2048, 2048, 0), 0),
        "all 8 MiB carry the marker"
    );
    let again = run_on_device(&a.path, &["--plan-only"], &dir.path().join("p.json"));
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
}

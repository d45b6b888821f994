//! Issue 46, item 1: a device still in use must be refused, on live loop devices (root and
//! /dev/loop-control; skipped otherwise). Each case was written over by the run before:
//!
//! - loops whose backing path no longer leads to what they are over: a deleted backing file, a
//!   `mknod` node since removed, a file name with a trailing space (sysfs text trimmed before
//!   the look-up); matched now by what `LOOP_GET_STATUS64` says;
//! - a file system mounted only in another mount namespace (`unshare -m`), on the device a loop
//!   at an offset is over; every namespace's table is read now;
//! - data without a signature between the blocks the old check sampled (2 GiB, data at 2-7 MiB,
//!   samples 8 MiB apart); every byte of the span a run writes is read now.
//!
//! Nothing here writes a device the check is asked about: only the decision is held (the
//! command-line runs over such devices are in crates/cli/tests/storage_devices.rs). Every
//! case confirms the device by its size where the old check refused it only for its data, so
//! that the refusal held is the one that matters.

use std::io::BufRead;
use std::path::Path;

use hwsurvey_testkit::blockdev::{find_tool, loop_unavailable, make, Kind, LoopDevice, Mounted};
use hwsurvey_workloads::storage::device::{check_device_with, Refusal, WriteOptions};
use hwsurvey_workloads::storage::sample;

fn name(dev: &Path) -> String {
    dev.file_name().unwrap().to_string_lossy().into_owned()
}

/// `--destructive`, the span of the quick profile (8 MiB), `--confirm-device` with `confirm`.
fn options(confirm: &[u64]) -> WriteOptions {
    WriteOptions {
        destructive: true,
        confirm: confirm.iter().map(|c| c.to_string()).collect(),
        span_bytes: 8 << 20,
    }
}

fn lines(r: &[Refusal]) -> Vec<String> {
    r.iter().map(|x| x.to_string()).collect()
}

/// A sparse file of `bytes` at `path`.
fn image(path: &Path, bytes: u64) {
    std::fs::File::create(path).unwrap().set_len(bytes).unwrap();
}

/// Loop A over t2.img from byte 0 and loop U over it from byte 1 MiB, an ext4 on U mounted
/// with data, then t2.img deleted (the reproduction): A is refused naming U, its
/// offset and mount point, by the file's inode that both loops still hold.
#[test]
fn a_loop_over_a_deleted_file_is_matched_by_its_inode() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    if !hwsurvey_testkit::tool("mkfs.ext4") {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let img = dir.path().join("t2.img");
    image(&img, 64 << 20);
    let a = LoopDevice::attach(&img).unwrap();
    let u = LoopDevice::attach_at(&img, 1 << 20, false).unwrap();
    make(Kind::Ext4, &u.path, dir.path()).unwrap();
    let mnt = dir.path().join("mnt");
    let mounted = Mounted::mount(&u.path, &mnt).unwrap();
    let data: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    std::fs::write(mnt.join("x"), &data).unwrap();
    nix::unistd::sync();
    std::fs::remove_file(&img).unwrap();
    let file = format!("file {} (deleted)", img.display());
    assert_eq!(
        lines(&check_device_with(&a.path, &options(&[64 << 20]))),
        [format!(
            "it is a loop device over {file} from byte 0, and {file} is also used by {} (loop \
             device over {file} from byte 1048576, mounted at {})",
            name(&u.path),
            mnt.display()
        )]
    );
    assert_eq!(std::fs::read_to_string(mnt.join("x")).unwrap(), data);
    mounted.unmount().unwrap();
}

/// Loop U over loop A from byte 1 MiB, set up through a `mknod` node of A that is removed
/// after: A is refused naming U, by the block device number the kernel holds.
#[cfg(feature = "sys")]
#[test]
fn a_loop_over_a_removed_mknod_node_is_matched_by_its_device_number() {
    use std::os::unix::fs::MetadataExt;
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let img = dir.path().join("b.img");
    image(&img, 64 << 20);
    let a = LoopDevice::attach(&img).unwrap();
    let node = dir.path().join("node");
    let rdev = std::fs::metadata(&a.path).unwrap().rdev();
    nix::sys::stat::mknod(
        &node,
        nix::sys::stat::SFlag::S_IFBLK,
        nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
        rdev as _,
    )
    .unwrap();
    let u = LoopDevice::attach_at(&node, 1 << 20, false).unwrap();
    std::fs::remove_file(&node).unwrap();
    let shown =
        std::fs::read_to_string(format!("/sys/block/{}/loop/backing_file", name(&u.path))).unwrap();
    assert!(shown.ends_with("node (deleted)\n"), "{shown:?}");
    assert_eq!(
        lines(&check_device_with(&a.path, &options(&[64 << 20]))),
        [format!(
            "another block device sits on it: {} (loop device over {} from byte 1048576)",
            name(&u.path),
            name(&a.path)
        )]
    );
}

/// Loops A and U over `b.img ` (a name ending in a space, which sysfs prints and the old
/// reader trimmed), and X over another file, `b.img`: A is refused naming U, not X.
#[test]
fn a_loop_over_a_name_with_a_trailing_space_is_matched_by_its_inode() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let img = dir.path().join("b.img ");
    let other = dir.path().join("b.img");
    image(&img, 64 << 20);
    image(&other, 64 << 20);
    let a = LoopDevice::attach(&img).unwrap();
    let u = LoopDevice::attach_at(&img, 1 << 20, false).unwrap();
    let _x = LoopDevice::attach(&other).unwrap();
    let file = format!("file {}", img.display());
    assert!(file.ends_with("b.img "));
    assert_eq!(
        lines(&check_device_with(&a.path, &options(&[64 << 20]))),
        [format!(
            "it is a loop device over {file} from byte 0, and {file} is also used by {} (loop \
             device over {file} from byte 1048576)",
            name(&u.path)
        )]
    );
}

/// Kills (SIGKILL) and reaps the process this test started, when dropped.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An ext4 on loop D is mounted only in a mount namespace of its own (`unshare -m`, private
/// propagation, held by a `sleep`); loop T is over D from byte 1 MiB. T is refused naming D's
/// mount in that namespace (the old check read this process's table only, found nothing on D,
/// and passed T); D itself is refused as mounted there.
#[test]
fn a_file_system_mounted_in_another_mount_namespace_is_named() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    if !hwsurvey_testkit::tool("mkfs.ext4") || !hwsurvey_testkit::tool("unshare") {
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let img = dir.path().join("d.img");
    image(&img, 64 << 20);
    let d = LoopDevice::attach(&img).unwrap();
    make(Kind::Ext4, &d.path, dir.path()).unwrap();
    let t = LoopDevice::attach_at(&d.path, 1 << 20, false).unwrap();
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mut child = Child(
        std::process::Command::new(find_tool("unshare").unwrap())
            .args(["-m", "--propagation", "private", "--", "sh", "-c"])
            .arg("mount \"$1\" \"$2\" && echo ready && exec sleep 600")
            .arg("sh")
            .arg(&d.path)
            .arg(&mnt)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut ready = String::new();
    std::io::BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready, "ready\n", "the mount in the new namespace failed");
    let pid = child.0.id();
    // `sh` has become `sleep` (exec) before its name is looked for
    for _ in 0..100 {
        if std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default() == "sleep\n" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let ns = std::fs::read_link(format!("/proc/{pid}/ns/mnt")).unwrap();
    let own = std::fs::read_link("/proc/self/ns/mnt").unwrap();
    assert_ne!(ns, own);
    // not in this namespace's table
    let here = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!here.contains(&format!(" {} ", mnt.display())), "{here}");
    let mounted = format!(
        "mounted at {} (in mount namespace {} of pid {pid} (sleep))",
        mnt.display(),
        ns.display()
    );
    assert_eq!(
        lines(&check_device_with(&t.path, &options(&[63 << 20]))),
        [format!(
            "it is a loop device over {} from byte 1048576, and {} is also {mounted}",
            name(&d.path),
            name(&d.path)
        )]
    );
    let r = lines(&check_device_with(&d.path, &options(&[])));
    assert!(r.contains(&mounted), "{r:?}");
    drop(child);
}

/// Writes `bytes` of pseudo-random data at byte `at` of `path`.
fn write_data(path: &Path, at: u64, bytes: usize) {
    use std::os::unix::fs::FileExt;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let data: Vec<u8> = (0..bytes)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(&data, at).unwrap();
    f.sync_all().unwrap();
}

/// A 2 GiB device without a signature whose only data is at 2-7 MiB, between the blocks the
/// old check sampled (the first and last MiB, then every 8 MiB): every byte of the 8 MiB span
/// is read, so it is refused naming the first data block and the 1280 blocks of data, and what
/// the read cost. Confirmed by size, it passes; data beyond the span and the samples is not
/// written and not a reason; the same blocks stamped with hwsurvey's marker (as a run leaves
/// them) are hwsurvey's own.
#[test]
fn data_between_the_old_sample_points_is_found_by_reading_the_whole_span() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let img = dir.path().join("big.img");
    let size: u64 = 2 << 30;
    image(&img, size);
    write_data(&img, 2 << 20, 5 << 20);
    // what the old check read: none of its blocks is in 2-7 MiB
    let old = sample::sample_offsets(size);
    assert!(old.iter().all(|o| !(2 << 20..7 << 20).contains(o)));
    let a = LoopDevice::attach(&img).unwrap();
    let r = check_device_with(&a.path, &options(&[]));
    let [Refusal::HoldsData { check, how }] = &r[..] else {
        panic!("{r:?}");
    };
    assert_eq!(check.span.span_bytes, 8 << 20);
    assert_eq!(
        (
            check.span.count.blocks,
            check.span.count.data,
            check.span.count.ours
        ),
        (2048, 1280, 0)
    );
    assert_eq!(check.span.count.first_data_at, Some(2 << 20));
    assert_eq!(check.beyond.data, 0);
    assert!(check.span.direct, "read past the page cache with O_DIRECT");
    assert_eq!(
        how,
        "to overwrite it anyway, add --confirm-device 2147483648 (its size in bytes)"
    );
    let line = r[0].to_string();
    assert!(
        line.starts_with(
            "no signature, but it holds data (1280 of the 2048 4096-byte blocks of the 8388608 \
             bytes a run writes (from byte 0) are neither blank nor hwsurvey's, the first at \
             byte 2097152 (every byte read in "
        ),
        "{line}"
    );
    println!(
        "8 MiB span read in {:.3} s",
        check.span.elapsed_ns as f64 / 1e9
    );
    assert_eq!(check_device_with(&a.path, &options(&[size])), vec![]);
    // a span that ends before the data: nothing of it is written
    let short = WriteOptions {
        span_bytes: 2 << 20,
        ..options(&[])
    };
    assert_eq!(check_device_with(&a.path, &short), vec![]);
    // hwsurvey's own blocks, as a run leaves them
    let mut ours = vec![0x6bu8; 5 << 20];
    sample::stamp(&mut ours);
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(&img).unwrap();
        f.write_all_at(&ours, 2 << 20).unwrap();
        f.sync_all().unwrap();
    }
    assert_eq!(check_device_with(&a.path, &options(&[])), vec![]);
    // and data far beyond the span, where a sampled block is: refused for the sample
    write_data(&img, 1 << 30, 4096);
    let r = lines(&check_device_with(&a.path, &options(&[])));
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(
        r[0].contains(
            "1 of 511 blocks sampled beyond them hold data, the first at byte 1073741824"
        ),
        "{}",
        r[0]
    );
}

//! The device resolved before the run is the one written, or nothing is: `difference` of two
//! identities, and on loop devices a link swapped between the check and the open.

use std::sync::atomic::AtomicBool;

use hwsurvey_workloads::storage::identity::{self, difference, DeviceIdentity};
use hwsurvey_workloads::storage::StorageError;

fn id(dev: (u32, u32), name: &str, seq: u64) -> DeviceIdentity {
    DeviceIdentity {
        dev,
        kernel_name: Some(name.into()),
        size_bytes: Some(64 << 20),
        serial: None,
        diskseq: Some(seq),
    }
}

#[test]
fn identities_differ_by_number_size_serial_or_diskseq() {
    let a = id((7, 2), "loop2", 11);
    assert_eq!(difference(&a, &a.clone()), None);
    assert_eq!(
        difference(&a, &id((7, 3), "loop3", 12)).unwrap(),
        "it is now 7:3 (loop3), was 7:2 (loop2)"
    );
    // the same loop device bound to another file: a new diskseq
    assert_eq!(
        difference(&a, &id((7, 2), "loop2", 14)).unwrap(),
        "7:2 (loop2) its diskseq is now 14, was 11 (a loop device bound again, or a new medium)"
    );
    let mut b = a.clone();
    b.size_bytes = Some(1 << 30);
    b.serial = Some("S1".into());
    assert_eq!(
        difference(&a, &b).unwrap(),
        "7:2 (loop2) its size is now 1073741824 bytes, was 67108864, its serial is now S1, was none"
    );
    // unknown facts are not compared
    let mut c = a.clone();
    c.diskseq = None;
    c.size_bytes = None;
    assert_eq!(difference(&a, &c), None);
}

/// Kept before the run through a link, the link then pointed at another blank loop device:
/// the open is refused naming both, and so is every later open in the process, and the other
/// device is unchanged.
#[cfg(feature = "sys")]
#[test]
fn a_link_swapped_between_check_and_open_is_refused() {
    use hwsurvey_testkit::blockdev::{blank_image, checksum, loop_unavailable, LoopDevice};
    use hwsurvey_workloads::storage::device::WriteOptions;
    use hwsurvey_workloads::storage::run_devices::check_storage_devices;
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let loops: Vec<LoopDevice> = (0..2)
        .map(|k| {
            let img = dir.path().join(format!("d{k}.img"));
            blank_image(&img).unwrap();
            LoopDevice::attach(&img).unwrap()
        })
        .collect();
    let link = dir.path().join("L");
    std::os::unix::fs::symlink(&loops[0].path, &link).unwrap();
    let options = WriteOptions {
        destructive: true,
        confirm: vec![],
        span_bytes: 1 << 20,
    };
    check_storage_devices(std::slice::from_ref(&link), &options).unwrap();
    let kept = identity::kept(&link).unwrap();
    assert_eq!(
        Some(kept.clone()),
        DeviceIdentity::of_path(&loops[0].path).ok()
    );
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&loops[1].path, &link).unwrap();
    let before = checksum(&loops[1].path).unwrap();
    let stop = AtomicBool::new(false);
    let e = identity::open_for_writing(&link, 1 << 20, &options, &stop).unwrap_err();
    let StorageError::DeviceChanged { detail, .. } = &e else {
        panic!("{e:?}");
    };
    let name = |l: &LoopDevice| l.path.file_name().unwrap().to_string_lossy().into_owned();
    let now = DeviceIdentity::of_path(&loops[1].path).unwrap();
    assert_eq!(
        detail,
        &format!(
            "it is now 7:{} ({}), was 7:{} ({})",
            now.dev.1,
            name(&loops[1]),
            kept.dev.1,
            name(&loops[0])
        )
    );
    assert!(
        e.to_string()
            .ends_with("; refused: no raw device is written after that"),
        "{e}"
    );
    // the link put back: still refused, the run no longer writes raw devices
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&loops[0].path, &link).unwrap();
    let again = identity::open_for_writing(&link, 1 << 20, &options, &stop).unwrap_err();
    assert!(
        again
            .to_string()
            .contains("an earlier device changed during this run"),
        "{again}"
    );
    assert!(identity::changed().is_some());
    assert_eq!(checksum(&loops[1].path).unwrap(), before);
}

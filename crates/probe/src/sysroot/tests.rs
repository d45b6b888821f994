use super::*;

#[test]
fn fifo_and_device_in_a_root_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let proc_dir = dir.path().join("proc");
    std::fs::create_dir_all(&proc_dir).unwrap();
    let fifo = proc_dir.join("cpuinfo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let root = SysRoot::new(dir.path());
    if made {
        let e = root.read("/proc/cpuinfo").unwrap_err().to_string();
        assert!(e.contains("/proc/cpuinfo") && e.contains("FIFO"), "{e}");
    } else {
        println!("SKIPPED: mkfifo not available");
    }
    std::os::unix::fs::symlink("/dev/zero", proc_dir.join("meminfo")).unwrap_or(());
    // a link out of the root is resolved inside it (no /dev/zero there): missing, not read
    assert!(root.read("/proc/meminfo").is_err());
}

/// Reads across more directories than [`DIR_HANDLES`] (and back to the first) read every
/// file's own text through relative opens, and the handles kept stay bounded.
#[cfg(feature = "sys")]
#[test]
fn directory_handles_read_the_right_files_and_stay_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let dirs = 3 * DIR_HANDLES;
    for i in 0..dirs {
        let d = dir
            .path()
            .join(format!("sys/devices/system/cpu/cpu{i}/topology"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("core_id"), format!("{}\n", 100 + i)).unwrap();
        std::fs::write(d.join("physical_package_id"), format!("{}\n", i % 2)).unwrap();
    }
    let root = SysRoot::new(dir.path());
    for pass in 0..2 {
        for i in 0..dirs {
            let base = format!("/sys/devices/system/cpu/cpu{i}/topology");
            assert_eq!(
                root.read_value(&format!("{base}/core_id")).unwrap(),
                (100 + i).to_string(),
                "pass {pass}, cpu{i}"
            );
            assert_eq!(
                root.read_value(&format!("{base}/physical_package_id"))
                    .unwrap(),
                (i % 2).to_string()
            );
            assert!(root
                .read(&format!("{base}/missing"))
                .unwrap_err()
                .is_missing());
        }
    }
    assert_eq!(root.dir_fds.lock().unwrap().len(), DIR_HANDLES);
}

#[test]
fn reads_under_root_and_records() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("sys/devices/system/cpu")).unwrap();
    std::fs::write(dir.path().join("sys/devices/system/cpu/online"), "0-3\n").unwrap();
    let root = SysRoot::new(dir.path());
    assert_eq!(
        root.read_value("/sys/devices/system/cpu/online").unwrap(),
        "0-3"
    );
    assert_eq!(
        root.read_parsed::<u32>("/sys/devices/system/cpu/online", "a number"),
        Err(ProbeError::invalid(
            "/sys/devices/system/cpu/online",
            "a number",
            "0-3"
        ))
    );
    assert!(root.read("/proc/cpuinfo").unwrap_err().is_missing());
    assert_eq!(root.read_optional("/proc/cpuinfo").unwrap(), None);
    assert_eq!(root.accessed(), vec!["/sys/devices/system/cpu/online"]);
}

#[cfg(unix)]
#[test]
fn symlinks_stay_inside_the_root() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    std::fs::create_dir_all(r.join("proc")).unwrap();
    std::fs::create_dir_all(r.join("usr/lib")).unwrap();
    std::fs::create_dir_all(r.join("etc")).unwrap();
    std::fs::write(r.join("usr/lib/os-release"), "ID=captured\n").unwrap();
    // Absolute targets are re-rooted: these must never read the host's files.
    symlink("/usr/lib/os-release", r.join("etc/os-release")).unwrap();
    symlink("/proc/version_captured", r.join("proc/cpuinfo")).unwrap();
    // `..` never climbs above the root: /../../usr/lib is /usr/lib.
    symlink("../../../../../../usr/lib", r.join("etc/lib")).unwrap();
    // A loop.
    symlink("/etc/b", r.join("etc/a")).unwrap();
    symlink("a", r.join("etc/b")).unwrap();
    let root = SysRoot::new(r);

    assert_eq!(root.read("/etc/os-release").unwrap(), "ID=captured\n");
    assert_eq!(
        root.resolve("/etc/os-release", true).unwrap(),
        "/usr/lib/os-release"
    );
    // The host's /proc/cpuinfo exists on Linux; under the root the target is missing.
    assert!(root.read("/proc/cpuinfo").unwrap_err().is_missing());
    assert!(!root.exists("/proc/cpuinfo"));
    assert_eq!(root.read("/etc/lib/os-release").unwrap(), "ID=captured\n");
    assert_eq!(
        root.resolve("/etc/lib/os-release", true).unwrap(),
        "/usr/lib/os-release"
    );
    assert_eq!(
        root.resolve("/../../etc/./os-release", false).unwrap(),
        "/etc/os-release"
    );
    match root.read("/etc/a") {
        Err(ProbeError::Io { path, message }) => {
            assert_eq!(path, "/etc/a");
            assert!(message.contains("too many levels"), "{message}");
        }
        other => panic!("expected a loop error, got {other:?}"),
    }
    assert!(!root.exists("/etc/a"));
    assert!(root.list_dir("/etc/a").is_err());
    // read_link does not follow the last link, but does resolve its parents.
    assert_eq!(
        root.read_link("/etc/lib/../os-release").ok(),
        None,
        "/etc/lib/.. is /usr, which has no os-release link"
    );
    assert_eq!(
        root.read_link("/etc/os-release").unwrap(),
        PathBuf::from("/usr/lib/os-release")
    );
    // Both the link and its target are recorded, so a snapshot archives the target.
    let acc = root.accessed();
    assert!(acc.contains(&"/etc/os-release".to_string()), "{acc:?}");
    assert!(acc.contains(&"/usr/lib/os-release".to_string()), "{acc:?}");
}

/// The directory cache gives the same answers as a fresh walk, keeps links inside the root
/// and still counts the links of a remembered directory against the limit.
#[cfg(unix)]
#[test]
fn remembered_directories_resolve_as_a_fresh_walk() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    std::fs::create_dir_all(r.join("sys/devices/system/cpu/cpu0/topology")).unwrap();
    std::fs::create_dir_all(r.join("sys/bus/cpu/devices")).unwrap();
    std::fs::write(
        r.join("sys/devices/system/cpu/cpu0/topology/core_id"),
        "7\n",
    )
    .unwrap();
    // A relative link climbing out of the root, and an absolute one: both stay inside.
    symlink(
        "../../../../../../../sys/devices/system/cpu/cpu0",
        r.join("sys/bus/cpu/devices/cpu0"),
    )
    .unwrap();
    symlink("/sys/devices/system/cpu", r.join("sys/cpus")).unwrap();
    // A chain of 39 directory links: a file below it needs 39 hops, a link below it one more.
    std::fs::create_dir_all(r.join("chain")).unwrap();
    symlink("/sys/devices/system/cpu/cpu0/topology", r.join("chain/l0")).unwrap();
    for i in 1..39 {
        symlink(format!("l{}", i - 1), r.join(format!("chain/l{i}"))).unwrap();
    }
    symlink("core_id", r.join("sys/devices/system/cpu/cpu0/topology/id")).unwrap();
    symlink("id", r.join("sys/devices/system/cpu/cpu0/topology/id2")).unwrap();
    let root = SysRoot::new(r);
    let core_id = "/sys/devices/system/cpu/cpu0/topology/core_id";
    for _ in 0..2 {
        // twice: the second answers come from the remembered directories
        assert_eq!(
            root.resolve("/sys/bus/cpu/devices/cpu0/topology/core_id", true)
                .unwrap(),
            core_id
        );
        assert_eq!(
            root.read_value("/sys/cpus/cpu0/topology/core_id").unwrap(),
            "7"
        );
        // empty and `.` components, a trailing `/`: walked whole, the same answer
        assert_eq!(
            root.resolve("/sys//cpus/cpu0/./topology/core_id/", true)
                .unwrap(),
            core_id
        );
        assert_eq!(
            root.resolve("/sys/bus/cpu/devices/cpu0/../cpu1/online", true)
                .unwrap(),
            "/sys/devices/system/cpu/cpu1/online"
        );
        assert_eq!(
            root.resolve("/sys/bus/cpu/devices/cpu0", false).unwrap(),
            "/sys/bus/cpu/devices/cpu0"
        );
        // A missing directory: the rest is appended as given, and reads are "missing".
        assert_eq!(
            root.resolve("/sys/cpus/cpu9/cache/index0/size", true)
                .unwrap(),
            "/sys/devices/system/cpu/cpu9/cache/index0/size"
        );
        assert!(root
            .read("/sys/cpus/cpu9/cache/index0/size")
            .unwrap_err()
            .is_missing());
        // 39 + 1 links: fine; 39 + 2: more than 40, a loop, although the chain's directory
        // was resolved (and remembered) before.
        assert_eq!(root.read_value("/chain/l38/id").unwrap(), "7");
        match root.read("/chain/l38/id2") {
            Err(ProbeError::Io { path, message }) => {
                assert_eq!(path, "/chain/l38/id2");
                assert!(message.contains("too many levels"), "{message}");
            }
            other => panic!("expected a loop error, got {other:?}"),
        }
    }
}

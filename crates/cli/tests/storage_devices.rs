//! Raw devices and storage directories the user names, through the `hwsurvey` binary: a device
//! holding any file system or volume signature is refused before anything runs (exit 2, one
//! line) and left byte for byte unchanged; a blank device is warned about and measured; the
//! exit status says when nothing was measured; leftovers of a killed run are named.
//!
//! Loop devices need root and /dev/loop-control (skipped otherwise, and under qemu-user). The
//! file systems are made by Debian's own tools (scripts/lib.sh lists their packages).

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use hwsurvey_testkit::blockdev::{
    blank_image, blkid_probe_type, checksum, loop_unavailable, make, Kind, LoopDevice,
};

fn hwsurvey() -> Command {
    Command::cargo_bin("hwsurvey").unwrap()
}

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

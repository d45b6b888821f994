//! A raw device is the device checked before the run, or it is not written (issue 32 item 2:
//! a symlink swapped mid-run made later tests write another device); a device with no
//! signature but data in it is refused unless confirmed by name (item 8); a path with a
//! newline prints on one line (item 8). Through the `hwsurvey` binary on loop devices (root and
//! /dev/loop-control; skipped otherwise).

use std::path::{Path, PathBuf};
use std::process::Output;

use hwsurvey_testkit::blockdev::{
    blank_image, checksum, loop_unavailable, LoopDevice, IMAGE_BYTES,
};
use hwsurvey_testkit::hwsurvey;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run_on(dev: &Path, extra: &[&str], out: &Path) -> Output {
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

/// An image of [`IMAGE_BYTES`] full of pseudo-random bytes (what a dm-crypt volume looks
/// like): no signature anywhere, every block data.
fn random_image(path: &Path) {
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut chunk = vec![0u8; 1 << 20];
    let mut f = std::fs::File::create(path).unwrap();
    for _ in 0..(IMAGE_BYTES >> 20) {
        for w in chunk.chunks_mut(8) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            w.copy_from_slice(&s.to_le_bytes());
        }
        std::io::Write::write_all(&mut f, &chunk).unwrap();
    }
}

/// A loop device over an image of random data: refused in one line that says how to confirm
/// it (its size in bytes: a loop device has no serial), unchanged; `--confirm-device` with a
/// value that names it lets `--plan-only` through with the warning; one that names nothing is
/// an error. Before the fix the device was accepted with a one-line warning.
#[test]
fn data_without_signature_is_refused_unless_confirmed_by_name() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = dir.path().join("o.json");
    let img = dir.path().join("crypt.img");
    random_image(&img);
    let lo = LoopDevice::attach(&img).unwrap();
    let before = checksum(&lo.path).unwrap();
    for extra in [&["--plan-only"][..], &[][..]] {
        let o = run_on(&lo.path, extra, &out);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!(
                "hwsurvey: error: storage device {}: refused: no signature, but it holds data (",
                lo.path.display()
            )),
            "{err}"
        );
        assert!(
            err.contains("an encrypted volume (plain dm-crypt, LUKS with a detached header)")
                && err.ends_with(&format!(
                    "to overwrite it anyway, add --confirm-device {IMAGE_BYTES} (its size in bytes)\n"
                )),
            "{err}"
        );
        assert!(!out.exists());
    }
    assert_eq!(
        checksum(&lo.path).unwrap(),
        before,
        "the refused device changed"
    );
    // a confirmation naming something else: an error, nothing run
    let o = run_on(&lo.path, &["--plan-only", "--confirm-device", "1234"], &out);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--confirm-device 1234: refused: names none of the --storage-device devices"),
        "{err}"
    );
    // confirmed by its size: planned, with the warning
    let size = IMAGE_BYTES.to_string();
    let o = run_on(&lo.path, &["--plan-only", "--confirm-device", &size], &out);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("would be overwritten"), "{err}");
    assert_eq!(checksum(&lo.path).unwrap(), before);
}

/// A device reached through a name with a newline and an ESC in it: the warning stays one
/// line, the characters escaped (before: a raw newline split it, the second line free text).
#[test]
fn a_path_with_control_characters_is_warned_about_on_one_line() {
    if let Some(why) = loop_unavailable() {
        println!("SKIPPED: loop devices: {why}");
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let img = dir.path().join("blank.img");
    blank_image(&img).unwrap();
    let lo = LoopDevice::attach(&img).unwrap();
    let name = dir.path().join("dev\nhwsurvey: note: all fine\u{1b}[2J");
    std::os::unix::fs::symlink(&lo.path, &name).unwrap();
    let o = run_on(&name, &["--plan-only"], &dir.path().join("o.json"));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let warning: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("would be overwritten") || l.contains("all fine"))
        .collect();
    assert_eq!(warning.len(), 1, "{err}");
    assert!(
        warning[0].starts_with(&format!(
            "hwsurvey: warning: --storage-device {}/dev\\nhwsurvey: note: all fine\\u{{1b}}[2J (loop",
            dir.path().display()
        )),
        "{}",
        warning[0]
    );
    assert!(!err.contains('\u{1b}'), "{err:?}");
}

/// A profile with storage.iops only, long enough (8 points of 0.3 s windows) that a link can
/// be swapped between its tests.
fn slow_storage_profile(dir: &Path) -> PathBuf {
    let quick = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles/quick.toml"),
    )
    .unwrap();
    let text = quick.replace(
        "queue_depths = [1, 4]\nfile_size_bytes = 8388608\nwindow_s = 0.02",
        "queue_depths = [1, 2, 4, 8]\nfile_size_bytes = 8388608\nwindow_s = 0.3",
    );
    assert_ne!(
        text, quick,
        "profiles/quick.toml's storage.iops params moved"
    );
    let p = dir.join("slow-storage.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// `--storage-device L` with `L -> loopX` (blank), `L` replaced by `L -> loopY` (blank) after
/// the run's first test: every later test is refused as a failure naming both devices, the
/// run exits 1, and loopY is unchanged. Before the fix the later tests wrote loopY.
#[test]
fn a_link_swapped_mid_run_is_refused_and_the_other_device_untouched() {
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
    let other_before = checksum(&loops[1].path).unwrap();
    let out = dir.path().join("o.json");
    let profile = slow_storage_profile(dir.path());
    let bin = assert_cmd::cargo::cargo_bin("hwsurvey");
    let child = std::process::Command::new(bin)
        .args(["run", "--profile"])
        .arg(&profile)
        .args(["--only", "storage", "--destructive", "--storage-device"])
        .arg(&link)
        .arg("-o")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // the result file (written whole after every test) holds a measured test
    let measured = || {
        std::fs::read_to_string(&out)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|f| {
                f["tests"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t["outcome"] == "measured"))
            })
    };
    let start = std::time::Instant::now();
    while !measured() && start.elapsed().as_secs() < 120 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(measured(), "no test measured in 120 s");
    let swapped = dir.path().join("L.new");
    std::os::unix::fs::symlink(&loops[1].path, &swapped).unwrap();
    std::fs::rename(&swapped, &link).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(
        checksum(&loops[1].path).unwrap(),
        other_before,
        "the device swapped in was written"
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let tests = file["tests"].as_array().unwrap();
    let failed: Vec<&serde_json::Value> =
        tests.iter().filter(|t| t["outcome"] == "failed").collect();
    assert!(!failed.is_empty(), "{}", file["tests"]);
    let name = |l: &LoopDevice| l.path.file_name().unwrap().to_string_lossy().into_owned();
    let first = failed[0]["reason"].as_str().unwrap_or_default().to_string();
    assert!(
        first.contains(&format!(
            "storage device {}: changed during the run: it is now",
            link.display()
        )) && first.contains(&format!("({})", name(&loops[1])))
            && first.contains("was 7:")
            && first.contains(&format!("({})", name(&loops[0]))),
        "{first}"
    );
    // measured before the swap, nothing measured after it: everything from the first
    // failure on failed too
    let at = tests.iter().position(|t| t["outcome"] == "failed").unwrap();
    assert!(
        at > 0 && tests[0]["outcome"] == "measured",
        "{}",
        file["tests"]
    );
    assert!(
        tests[at..].iter().all(|t| t["outcome"] == "failed"),
        "{}",
        file["tests"]
    );
}

//! A full file system (a 200 KiB tmpfs: the example without its tests fits, with them it does not): the write that does not fit fails with
//! ENOSPC, the last complete file stays as it was, and no temporary file is left beside it.
//! Needs root to mount a tmpfs; skipped with a message otherwise.

use std::path::Path;
use std::process::Command;

#[test]
fn enospc_keeps_the_last_complete_file_and_leaves_no_debris() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/examples/v1/aarch64-qemu-quick.json");
    let full = hwsurvey_result::load(&example).unwrap();
    let mut small = full.clone();
    small.tests.clear();
    let dir = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=200k", "tmpfs"])
        .arg(dir.path())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        println!("SKIPPED: cannot mount a 200 KiB tmpfs (needs root and the mount command)");
        return;
    }
    let out = dir.path().join("r.json");
    let result = (|| {
        small.write_atomic(&out).map_err(|e| e.to_string())?;
        let kept = std::fs::read(&out).unwrap();
        let e = full.write_atomic(&out).unwrap_err().to_string();
        Ok::<_, String>((kept, e))
    })();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let now = std::fs::read(&out).ok();
    let _ = Command::new("umount").arg(dir.path()).status();
    let (kept, e) = result.expect("the small file fits in 200 KiB");
    assert!(e.contains("No space left on device"), "{e}");
    assert_eq!(names, vec!["r.json".to_string()], "debris: {names:?}");
    assert_eq!(now.as_deref(), Some(kept.as_slice()));
}

//! Every file the user names is read only when it is a regular file (after following
//! symlinks), and only up to a cap: `hwsurvey elf FILE`, `qualify --rules FILE`,
//! `qualify --binary FILE`, `run --profile FILE --plan-only`. A FIFO used to block forever and
//! `/dev/zero` to be read without limit (tester defect); now each is a one-line error naming
//! the path and what it is. Each command runs under a timeout, so a regression fails instead
//! of hanging.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hwsurvey_testkit::hwsurvey;
use predicates::prelude::*;

/// [`hwsurvey`], killed (and so failing its exit-code check) after 30 s: a FIFO read without
/// a writer would hang it.
fn bounded() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::from_std(hwsurvey());
    c.timeout(Duration::from_secs(30));
    c
}

/// The inputs that are not regular files, with what the error must call them: a FIFO, a
/// symlink to a FIFO, `/dev/zero`, `/dev/null`, a directory.
fn not_regular(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let mut out = vec![(dir.to_owned(), "a directory")];
    if cfg!(target_os = "linux") {
        out.push(("/dev/zero".into(), "a character device"));
        out.push(("/dev/null".into(), "a character device"));
    }
    let fifo = dir.join("ff");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        out.push((fifo.clone(), "a FIFO (named pipe)"));
        #[cfg(unix)]
        {
            let link = dir.join("link-to-ff");
            std::os::unix::fs::symlink(&fifo, &link).unwrap();
            out.push((link, "a FIFO (named pipe)"));
        }
    } else {
        println!("SKIPPED (the FIFO cases): no mkfifo command");
    }
    out
}

/// Runs `args` with `path` appended and checks the exit code and the one-line error.
fn refused(args: &[&str], path: &Path, code: i32, message: &str) {
    let out = bounded().args(args).arg(path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?} {}: {stderr}",
        path.display()
    );
    assert!(out.stdout.is_empty(), "{args:?} {}", path.display());
    let line = format!("hwsurvey: error: {}: {message}\n", path.display());
    assert!(stderr.ends_with(&line), "expected {line:?}, got {stderr:?}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn elf_input_must_be_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    for (path, kind) in not_regular(dir.path()) {
        refused(
            &["elf"],
            &path,
            2,
            &format!("is {kind}, not a regular file; an ELF file must be a regular file"),
        );
    }
}

#[test]
fn elf_target_descriptor_must_be_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let exe = assert_cmd::cargo::cargo_bin("hwsurvey");
    for (path, kind) in not_regular(dir.path()) {
        let out = bounded()
            .arg("elf")
            .arg(&exe)
            .arg("--target")
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "hwsurvey: error: {}: is {kind}, not a regular file; a target descriptor must be a regular file\n",
                path.display()
            )
        );
    }
}

#[test]
fn qualify_rules_must_be_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let root = root.path().display().to_string();
    for (path, kind) in not_regular(dir.path()) {
        refused(
            &["qualify", "--root", &root, "--rules"],
            &path,
            3,
            &format!("is {kind}, not a regular file; a rules file must be a regular file"),
        );
    }
}

#[test]
fn qualify_binary_must_be_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    // a (poor) root: --root refuses a folder without /proc/cpuinfo or /sys/devices/system/cpu
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("proc")).unwrap();
    std::fs::write(root.path().join("proc/cpuinfo"), "processor\t: 0\n").unwrap();
    let root = root.path().display().to_string();
    for (path, kind) in not_regular(dir.path()) {
        refused(
            &["qualify", "--root", &root, "--binary"],
            &path,
            3,
            &format!("is {kind}, not a regular file; an ELF file must be a regular file"),
        );
    }
}

#[test]
fn run_profile_must_be_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    for (path, kind) in not_regular(dir.path()) {
        let out = bounded()
            .args(["run", "--plan-only", "--profile"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let line = format!(
            "hwsurvey: error: {}: is {kind}, not a regular file; a profile must be a regular file\n",
            path.display()
        );
        assert!(stderr.ends_with(&line), "expected {line:?}, got {stderr:?}");
    }
}

#[test]
fn a_missing_profile_still_names_the_built_in_ones() {
    let dir = tempfile::tempdir().unwrap();
    bounded()
        .args(["run", "--plan-only", "--profile"])
        .arg(dir.path().join("nope.toml"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "nope.toml: cannot read: No such file or directory",
        ))
        .stderr(predicate::str::contains(
            "(built-in profiles are \"standard\" and \"quick\")",
        ));
}

//! The one list of external commands in `scripts/lib.sh` and its checks, which `./scripts/test`
//! runs before any stage: a missing command is named with its Debian package, and a command the
//! sources call that the list lacks (a line removed) is named with the file calling it.

use hwsurvey_testkit::{package_of, tool_rows};
use std::path::Path;
use std::process::{Command, Output};

/// Runs `source scripts/lib.sh; <script>` in bash from the workspace root, with `path` as PATH
/// when given.
fn lib_sh(script: &str, path: Option<&Path>) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // bash from the caller's PATH, found before PATH is replaced
    let bash = Command::new("bash")
        .args(["-c", "command -v bash"])
        .output()
        .expect("run bash");
    let bash = String::from_utf8(bash.stdout).unwrap();
    let mut cmd = Command::new(bash.trim());
    cmd.current_dir(&root)
        .args(["-c", &format!("source scripts/lib.sh; {script}")]);
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    cmd.output().expect("run bash")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn the_list_names_each_command_with_its_package() {
    let rows = tool_rows();
    assert_eq!(
        package_of("convert-im6.q16").as_deref(),
        Some("imagemagick")
    );
    assert_eq!(package_of("qemu-sparc64").as_deref(), Some("qemu-user"));
    assert_eq!(package_of("likwid-bench").as_deref(), Some("likwid"));
    assert_eq!(package_of("/usr/bin/rustc").as_deref(), Some("rustc-web"));
    assert_eq!(package_of("no-such-tool-hwsurvey"), None);
    let mut seen = std::collections::BTreeSet::new();
    for (cmd, pkg) in &rows {
        assert!(seen.insert(cmd), "{cmd} listed twice");
        // A multiarch package carries its architecture after a colon (libblkid-dev:arm64).
        let (pkg, arch) = pkg.split_once(':').unwrap_or((pkg, "amd64"));
        assert!(
            arch.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                && !arch.is_empty(),
            "{cmd}: `{arch}` is not a Debian architecture"
        );
        assert!(
            pkg.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c)),
            "{cmd}: `{pkg}` is not a Debian package name"
        );
    }
    // bash reads the same rows as this crate
    let out = lib_sh("tool_rows", None);
    let from_bash: Vec<(String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (c, p) = l.split_once(' ').unwrap();
            (c.to_owned(), p.to_owned())
        })
        .collect();
    assert_eq!(from_bash, rows);
}

#[test]
fn a_missing_command_is_named_with_its_package() {
    // PATH holds only `sh`: every other command listed by name is missing
    let dir = tempfile::tempdir().unwrap();
    let sh = String::from_utf8(lib_sh("command -v sh", None).stdout).unwrap();
    std::os::unix::fs::symlink(sh.trim(), dir.path().join("sh")).unwrap();
    let out = lib_sh("check_tools", Some(dir.path()));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("missing command: convert-im6.q16 (Debian package imagemagick"),
        "{err}"
    );
    assert!(
        err.contains("missing command: qemu-aarch64 (Debian package qemu-user"),
        "{err}"
    );
    assert!(!err.contains("missing command: sh "), "{err}");
    let named = err
        .lines()
        .filter(|l| l.starts_with("missing command: "))
        .count();
    let by_name = tool_rows()
        .iter()
        .filter(|(c, _)| !c.starts_with('/') && c != "sh")
        .count();
    assert!(named >= by_name, "{named} of {by_name} named: {err}");
}

#[test]
fn a_command_removed_from_the_list_is_named_with_its_caller() {
    // the committed tree: every command called is listed
    let out = lib_sh("check_tool_list", None);
    assert!(out.status.success(), "{}", stderr(&out));
    // ImageMagick's line removed: scripts/html-to-pdf-png still calls it
    let out = lib_sh(
        "HWSURVEY_TOOLS=$(grep -v '^convert-im6.q16 ' <<<\"$HWSURVEY_TOOLS\"); check_tool_list",
        None,
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("unlisted command: convert-im6.q16 (called in scripts/html-to-pdf-png"),
        "{err}"
    );
    // fio's line removed: the storage peer benchmark calls it
    let out = lib_sh(
        "HWSURVEY_TOOLS=$(grep -v '^fio ' <<<\"$HWSURVEY_TOOLS\"); check_tool_list",
        None,
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("unlisted command: fio (called in crates/workloads/benches/storage_peers.rs"),
        "{err}"
    );
}

#[test]
fn require_tools_stops_naming_the_package() {
    let dir = tempfile::tempdir().unwrap();
    let out = lib_sh("require_tools fio", Some(dir.path()));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("missing command: fio (Debian package fio"),
        "{}",
        stderr(&out)
    );
}

/// scripts/test runs the checks under `set -euo pipefail`: a blank line at the end of the list
/// once made the list's reader return 1, so scripts/test stopped silently before any stage.
#[test]
fn the_checks_pass_under_set_e_with_blank_lines_in_the_list() {
    let out = lib_sh(
        "set -euo pipefail; HWSURVEY_TOOLS+=$'\\n   \\n\\n'; tool_rows >/dev/null; check_tool_list; echo reached",
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "reached");
}

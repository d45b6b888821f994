//! `hwsurvey compare` end to end: formats, labels, and one-line errors for bad files.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn write_three(dir: &Path) -> Vec<PathBuf> {
    hwsurvey_report::sample::three()
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            let p = dir.join(format!("r{i}.json"));
            f.write_atomic(&p).unwrap();
            p
        })
        .collect()
}

fn hwsurvey() -> Command {
    Command::cargo_bin("hwsurvey").unwrap()
}

#[test]
fn terminal_table_with_labels() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_three(dir.path());
    hwsurvey()
        .arg("compare")
        .args(&files)
        .args([
            "--label",
            "A",
            "--label",
            "B",
            "--label",
            "C",
            "--baseline",
            "B",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("A vs B"))
        .stdout(predicate::str::contains("stream.triad/threads=4"));
}

#[test]
fn html_to_file_and_plots_dir() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_three(dir.path());
    let out = dir.path().join("report.html");
    let plots = dir.path().join("plots");
    hwsurvey()
        .arg("compare")
        .args(&files)
        .args(["--format", "html", "-o"])
        .arg(&out)
        .arg("--plots")
        .arg(&plots)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<svg"));
    assert!(html.contains("@page{size:A4"));
    let svg = std::fs::read_to_string(plots.join("plot-00.svg")).unwrap();
    assert!(svg.contains("threads"));
    assert!(svg.contains("GB/s"));
}

fn one_line_error(path: &Path, expect: &str) {
    let dir = tempfile::tempdir().unwrap();
    let files = write_three(dir.path());
    let out = hwsurvey()
        .arg("compare")
        .arg(&files[0])
        .arg(path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(expect), "{err}");
}

#[test]
fn bad_files_get_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_three(dir.path()).remove(0);
    let text = std::fs::read_to_string(&good).unwrap();
    let truncated = dir.path().join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    one_line_error(&truncated, "truncated.json: truncated JSON at line");
    let not_json = dir.path().join("notes.txt");
    std::fs::write(&not_json, "hello").unwrap();
    one_line_error(&not_json, "notes.txt: not JSON");
    let wrong = dir.path().join("wrong.json");
    std::fs::write(&wrong, "{\"schema\": \"something-else\"}").unwrap();
    one_line_error(&wrong, "wrong.json: not a hwsurvey result file");
    // 1 GiB, sparse: refused by size before anything is read
    let huge = dir.path().join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    one_line_error(&huge, "huge.json: 1073741824 bytes, larger than the");
}

#[test]
fn different_profile_versions_need_force() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_three(dir.path());
    let mut f = hwsurvey_bench::result::load(&files[2]).unwrap();
    f.profile.version = 2;
    f.write_atomic(&files[2]).unwrap();
    hwsurvey()
        .arg("compare")
        .args(&files)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("different profile versions"));
    hwsurvey()
        .arg("compare")
        .args(&files)
        .args(["--force", "--format", "markdown"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "DIFFERENT PROFILE VERSIONS (--force)",
        ));
}

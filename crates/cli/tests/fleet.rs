//! `hwsurvey fleet` on fleets built in a temporary folder from reports/examples/: the
//! defective host named with its cause (exit 1), a corrupt file listed as failed (exit 2), a
//! missing input (exit 3), the rule's parameters printed, the JSON and Markdown forms.

use std::path::Path;

use hwsurvey_fleet::sample::{example, scale, set_thp, with_host};

fn fleet_dir(dir: &Path) {
    let base = example("x86_64-standard.json");
    for (i, f) in [1.0, 1.01, 0.99, 0.7, 1.02].iter().enumerate() {
        let host = format!("node{}", i + 1);
        let mut file = with_host(base.clone(), &host);
        file = if *f == 0.7 {
            set_thp(scale(file, Some("mem.bandwidth"), 0.7), "never")
        } else {
            scale(file, None, *f)
        };
        file.write_atomic(&dir.join(&host).join("result.json"))
            .unwrap();
    }
}

/// The binary (through qemu-user for a cross target, as the other CLI tests run it).
fn hwsurvey() -> std::process::Command {
    hwsurvey_testkit::target_command(&assert_cmd::cargo::cargo_bin("hwsurvey"))
}

#[test]
fn the_defective_host_is_named_with_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir(dir.path());
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir.path())
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("5 hosts from 5 result files in 1 group: 1 stood out or drifted, 0 failed"),
        "{text}"
    );
    assert!(
        text.contains("(k = 3) and more than 5 % from the median"),
        "{text}"
    );
    assert!(
        text.contains("node4:\n  outlier: STREAM Triad, all threads -30.0 %"),
        "{text}"
    );
    assert!(
        text.contains("  cause: THP is never (the group's majority: madvise)"),
        "{text}"
    );
    // no other host has a detail block of outliers
    assert_eq!(text.matches("  outlier: ").count(), 1, "{text}");
    // the options are stated as given
    let out = hwsurvey()
        .args(["fleet", "--k", "4", "--min-diff-pct", "35"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(k = 4) and more than 35 %"), "{text}");
    assert!(!text.contains("  outlier: "), "{text}");
    // pages.hugetlb is a precondition of the profile: no host warns, nothing stands out
    assert_eq!(out.status.code(), Some(0), "{text}");
}

#[test]
fn json_and_markdown_hold_the_same_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir(dir.path());
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir.path())
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["options"]["k"], 3.0);
    assert_eq!(v["options"]["min_diff_pct"], 5.0);
    let hosts = v["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 5);
    let node4 = hosts.iter().find(|h| h["name"] == "node4").unwrap();
    assert_eq!(node4["outliers"][0]["figure"], "stream.triad.all");
    assert_eq!(node4["causes"][0]["fact"], "THP");
    let md = dir.path().join("fleet.md");
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir.path())
        .args(["--format", "markdown", "-o"])
        .arg(&md)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.starts_with("# hwsurvey fleet\n"), "{text}");
    assert!(text.contains("| node4 | G1 | pass |"), "{text}");
}

#[test]
fn a_corrupt_file_fails_its_host_only_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir(dir.path());
    let cut = dir.path().join("node2/result.json");
    let text = std::fs::read_to_string(&cut).unwrap();
    std::fs::write(&cut, &text.as_bytes()[..text.len() / 3]).unwrap();
    let out = hwsurvey().arg("fleet").arg(dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "node2:\n  failed: {}: truncated JSON at line",
            cut.display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 stood out or drifted, 1 failed"),
        "{stdout}"
    );
}

#[test]
fn input_errors_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir.path().join("missing"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("missing: No such file or directory"), "{err}");
    let out = hwsurvey().arg("fleet").output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let out = hwsurvey()
        .args(["fleet", "--k", "-1"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn the_terminal_table_fits_a_narrow_terminal() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir(dir.path());
    let text = hwsurvey_fleet::render::terminal(
        &hwsurvey_fleet::analyse(
            hwsurvey_fleet::load_all(hwsurvey_fleet::collect(&[dir.path().to_path_buf()]).unwrap()),
            &hwsurvey_fleet::Options::default(),
        ),
        Some(80),
    );
    for l in text.lines().filter(|l| l.starts_with(['┌', '│', '├', '└'])) {
        assert!(console::measure_text_width(l) <= 80, "{l}");
    }
}

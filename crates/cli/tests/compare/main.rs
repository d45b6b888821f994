//! `hwsurvey compare` end to end: formats, labels, and one-line errors for bad files.

use std::path::{Path, PathBuf};

use assert_cmd::prelude::*;
use hwsurvey_testkit::hwsurvey;
use hwsurvey_testkit::tool;
use predicates::prelude::*;

fn write_three(dir: &Path) -> Vec<PathBuf> {
    hwsurvey_testkit::report_sample::three()
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            let p = dir.join(format!("r{i}.json"));
            f.write_atomic(&p).unwrap();
            p
        })
        .collect()
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
    let svg =
        std::fs::read_to_string(plots.join("mem.bandwidth-stream.triad-vs-threads.svg")).unwrap();
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

/// An edited copy of a profile keeps its id and version, but not the settings that define
/// its points: compare refuses to line it up with the original without --mixed-profiles, and
/// says which part differs (breaker finding: an edited standard.toml compared as "standard v2"
/// with the real one). Sample counts and lengths are no such part: a copy
/// that only samples differently compares; a file written before the parts were fingerprinted,
/// whose whole-text fingerprint differs, compares with a note that what differs cannot be
/// told.
#[test]
fn an_edited_copy_of_a_profile_needs_force() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_three(dir.path());
    let parts = |bandwidth: &str| hwsurvey_result::PointSettings {
        run: "00000000000000aa".into(),
        families: [
            ("cpu.scaling".to_string(), "0000000000000011".to_string()),
            ("mem.bandwidth".to_string(), bandwidth.to_string()),
        ]
        .into_iter()
        .collect(),
    };
    let set = |k: usize, whole: Option<&str>, p: Option<hwsurvey_result::PointSettings>| {
        let mut f = hwsurvey_result::load(&files[k]).unwrap();
        f.profile.fingerprint = whole.map(str::to_string);
        f.profile.point_settings = p;
        f.write_atomic(&files[k]).unwrap();
    };
    set(0, Some("00000000000000aa"), Some(parts("0000000000000022")));
    set(1, Some("00000000000000aa"), Some(parts("0000000000000022")));
    set(2, Some("00000000000000bb"), Some(parts("0000000000000033")));
    hwsurvey()
        .arg("compare")
        .args(&files)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "differ in [families.\"mem.bandwidth\"]",
        ))
        .stderr(predicate::str::contains(
            "one id and version with other such settings is an edited copy of a profile",
        ));
    hwsurvey()
        .arg("compare")
        .args(&files)
        .args(["--mixed-profiles", "--format", "markdown"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "DIFFERENT PROFILE SETTINGS (--mixed-profiles)",
        ));
    // other sample counts and lengths only: the whole text differs, the points' settings not
    set(2, Some("00000000000000bb"), Some(parts("0000000000000022")));
    let out = hwsurvey().arg("compare").args(&files).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("settings texts that differ"), "{text}");
    // a file written before the parts were fingerprinted: compared, and said
    set(2, Some("00000000000000bb"), None);
    hwsurvey()
        .arg("compare")
        .args(&files)
        .args(["--format", "markdown"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "cannot be told: compared point by point",
        ));
    // files written before fingerprints were kept are taken at their word
    set(2, None, None);
    let out = hwsurvey().arg("compare").args(&files).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("cannot be told"));
}

#[test]
fn different_profile_versions_need_force() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_three(dir.path());
    let mut f = hwsurvey_result::load(&files[2]).unwrap();
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
        .args(["--mixed-profiles", "--format", "markdown"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "DIFFERENT PROFILE VERSIONS (--mixed-profiles)",
        ));
    // --force means only "replace the -o file", as in run and snapshot
    hwsurvey()
        .arg("compare")
        .args(&files)
        .arg("--force")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "compare them anyway with --mixed-profiles",
        ));
}

/// Writes the first synthetic result with `edit` applied to its JSON, as `name`.
/// The first sample as a result file on disk (schema version 2: plain values), edited.
fn edited(dir: &Path, name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let p = dir.join(name);
    hwsurvey_testkit::report_sample::three()[0]
        .write_atomic(&p)
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    p
}

#[test]
fn implausible_values_get_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let metric = "/tests/0/metrics/0";
    let negative = edited(dir.path(), "negative.json", |v| {
        *v.pointer_mut(&format!("{metric}/samples/2")).unwrap() = serde_json::json!(-3.5);
    });
    one_line_error(
        &negative,
        "negative.json: at tests[0].metrics[0].samples[2] (test \"mem.bandwidth\" \"stream.triad/threads=1\"): -3.5 is negative, a bandwidth_bytes_per_s is never negative",
    );
    let absurd = edited(dir.path(), "absurd.json", |v| {
        for k in ["median", "max"] {
            *v.pointer_mut(&format!("{metric}/summary/{k}")).unwrap() = serde_json::json!(1e300);
        }
    });
    one_line_error(
        &absurd,
        "absurd.json: at tests[0].metrics[0].summary.median (test \"mem.bandwidth\" \"stream.triad/threads=1\"): 1e300 is not plausible (above 1e15 bytes/s (1 PB/s))",
    );
    let outside = edited(dir.path(), "outside.json", |v| {
        let max = v
            .pointer(&format!("{metric}/summary/max"))
            .and_then(serde_json::Value::as_f64)
            .unwrap();
        *v.pointer_mut(&format!("{metric}/summary/median")).unwrap() = serde_json::json!(max * 2.0);
    });
    one_line_error(
        &outside,
        "outside.json: at tests[0].metrics[0].summary.median (test \"mem.bandwidth\" \"stream.triad/threads=1\"): ",
    );
    one_line_error(&outside, "is outside [min ");
    let twice = edited(dir.path(), "twice.json", |v| {
        let first = v.pointer("/tests/0").cloned().unwrap();
        v.pointer_mut("/tests")
            .and_then(serde_json::Value::as_array_mut)
            .unwrap()
            .push(first);
    });
    one_line_error(
        &twice,
        "twice.json: at tests[8] (test \"mem.bandwidth\" \"stream.triad/threads=1\"): recorded twice, expected each test once",
    );
    // no table is printed for any of them
    let out = hwsurvey().arg("compare").arg(&twice).output().unwrap();
    assert!(out.stdout.is_empty());
}

/// The tester's reproductions of values no run measures, each an edit of a result file that loads:
/// `compare` refuses the file with one line naming the file, the field and the value, exit 2,
/// and prints no table (a CV of 1.18e21 used to print `CV 118059162071741130342400.0%` and
/// make a -95% change "within noise"; a working set of 1.18e21 bytes printed `16777216 TiB`; a
/// huge page size of 2^64-1 printed as a page size).
#[test]
fn inconsistent_statistics_sizes_and_strings_are_refused_by_compare() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Box<Edit>, String)> = vec![
        (
            "cv.json",
            Box::new(|v| {
                *v.pointer_mut("/tests/0/metrics/0/summary/cv").unwrap() =
                    serde_json::json!(1.18e21);
            }),
            "cv.json: at tests[0].metrics[0].summary.cv (test \"mem.bandwidth\" \"stream.triad/threads=1\"): 1.18e21 is not the CV of the 5 samples (0.0".to_string(),
        ),
        (
            "ws.json",
            Box::new(|v| {
                let i = latency_test(v);
                *v.pointer_mut(&format!("/tests/{i}/point/params/working_set_bytes"))
                    .unwrap() = serde_json::json!(1.18e21);
            }),
            "ws.json: at tests[3].point.params.working_set_bytes (test \"mem.latency\" \"chase.random/ws=1MiB/pages=base\"): 1.18e21 bytes is not plausible (above 2^50 bytes, 1 PiB)".to_string(),
        ),
        (
            "huge.json",
            Box::new(|v| {
                v.pointer_mut("/environment/huge_pools")
                    .and_then(serde_json::Value::as_array_mut)
                    .unwrap()
                    .push(serde_json::json!({
                        "page_size_bytes": u64::MAX, "total_pages": 0, "free_pages": 0
                    }));
            }),
            "huge.json: at environment.huge_pools[0].page_size_bytes: 18446744073709551615 bytes is not plausible (above 2^50 bytes, 1 PiB)".to_string(),
        ),
        (
            "page.json",
            Box::new(|v| {
                v.pointer_mut("/environment/huge_pools")
                    .and_then(serde_json::Value::as_array_mut)
                    .unwrap()
                    .push(serde_json::json!({
                        "page_size_bytes": 3u64 << 20, "total_pages": 0, "free_pages": 0
                    }));
            }),
            "page.json: at environment.huge_pools[0].page_size_bytes: 3145728 is not a huge page size of the recorded architecture (x86_64: 2MiB, 1GiB".to_string(),
        ),
        (
            "host.json",
            Box::new(|v| {
                *v.pointer_mut("/environment/hostname").unwrap() =
                    serde_json::json!("h\u{1b}[2J".repeat(1 << 18));
            }),
            "host.json: at environment.hostname: \"h\\u{1b}[2Jh\\u{1b}[2Jh…".to_string(),
        ),
    ];
    for (name, edit, expect) in cases {
        let path = edited(dir.path(), name, edit);
        one_line_error(&path, &expect);
        let out = hwsurvey().arg("compare").arg(&path).output().unwrap();
        assert!(out.stdout.is_empty(), "{name}: a table was printed");
        // bounded: the 1.25 MiB hostname is quoted in a few dozen characters
        assert!(out.stderr.len() < 400, "{name}: {} bytes", out.stderr.len());
    }
    // the hostname's line says what the limit is
    let host = dir.path().join("host.json");
    one_line_error(
        &host,
        "(1310720 bytes) is longer than the 64 bytes of a hostname",
    );
}

/// An edit of a result file's JSON.
type Edit = dyn FnOnce(&mut serde_json::Value);

/// Index of the first mem.latency test of the sample file.
fn latency_test(v: &serde_json::Value) -> usize {
    v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .position(|t| t["point"]["family"] == "mem.latency")
        .unwrap()
}

/// A working set far beyond the recorded machine's memory (a real run's file, 24 GiB of
/// MemTotal) is refused; one just below the margin loads.
#[test]
fn sizes_beyond_the_recorded_machines_memory_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/examples/v1/x86_64-standard.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&example).unwrap()).unwrap();
    let total = v
        .pointer("/machine/memory/meminfo/known/mem_total_bytes")
        .and_then(serde_json::Value::as_u64)
        .unwrap();
    let i = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .position(|t| t["point"]["params"]["working_set_bytes"].is_u64())
        .unwrap();
    let with_ws = |name: &str, ws: u64| {
        let mut v = v.clone();
        *v.pointer_mut(&format!("/tests/{i}/point/params/working_set_bytes"))
            .unwrap() = serde_json::json!(ws);
        let p = dir.path().join(name);
        std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
        p
    };
    let big = with_ws("big.json", total * 9);
    let out = hwsurvey().arg("compare").arg(&big).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "big.json: at tests[{i}].point.params.working_set_bytes (test "
        )) && err.contains(&format!(
            "): {} bytes is not plausible on the recorded machine: more than 8 x its MemTotal ({total} bytes",
            total * 9
        )),
        "{err}"
    );
    let fine = with_ws("fine.json", total * 8);
    hwsurvey().arg("compare").arg(&fine).assert().success();
}

#[test]
fn same_host_files_get_distinct_labels_unless_labelled() {
    let dir = tempfile::tempdir().unwrap();
    let f = hwsurvey_testkit::report_sample::three().remove(0);
    let a = dir.path().join("before.json");
    let b = dir.path().join("after.json");
    f.write_atomic(&a).unwrap();
    f.write_atomic(&b).unwrap();
    let out = hwsurvey()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.contains("| property | xeon x86_64 6.1.0-18-amd64 (before) | xeon x86_64 6.1.0-18-amd64 (after) |"),
        "{md}"
    );
    assert!(md.contains("told apart by file name; name them with --label"));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("note: columns \"xeon x86_64 6.1.0-18-amd64 (before)\""),
        "{err}"
    );
    // --label still names them, without a note
    hwsurvey()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args([
            "--label", "old BIOS", "--label", "new BIOS", "--format", "markdown",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "| property | old BIOS | new BIOS |",
        ))
        .stdout(predicate::str::contains("told apart").not())
        .stderr(predicate::str::is_empty());
}

/// The README's `compare a.json b.json c.json --baseline a`: the default labels are long
/// (hostname, arch, kernel), so `--baseline` also takes a file as given or its name stem.
#[test]
fn baseline_by_file_name_stem_or_path_as_the_readme_shows() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_three(dir.path());
    let stems: Vec<PathBuf> = ["a", "b", "c"]
        .iter()
        .zip(&files)
        .map(|(stem, f)| {
            let p = dir.path().join(format!("{stem}.json"));
            std::fs::rename(f, &p).unwrap();
            p
        })
        .collect();
    let baseline_of = |arg: &str| -> String {
        let out = hwsurvey()
            .current_dir(dir.path())
            .args(["compare", "a.json", "b.json", "c.json", "--format", "json"])
            .args(["--baseline", arg])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "--baseline {arg}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["baseline"].as_str().unwrap().to_string()
    };
    let default_labels: Vec<String> = {
        let out = hwsurvey()
            .current_dir(dir.path())
            .args(["compare", "a.json", "b.json", "c.json", "--format", "json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["platforms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(default_labels.len(), 3);
    assert_eq!(baseline_of("b"), default_labels[1]);
    assert_eq!(baseline_of("c.json"), default_labels[2]);
    assert_eq!(baseline_of(&default_labels[0]), default_labels[0]);
    assert!(stems[0].exists());
    // neither a label nor a file: the error lists the labels
    hwsurvey()
        .current_dir(dir.path())
        .args(["compare", "a.json", "b.json", "--baseline", "zz"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--baseline \"zz\" is not one of the column labels",
        ));
}

/// One spelling for JSON on every command: `--json` (as `probe --json`) is
/// `--format json` on compare and qualify, and the two together are a usage error.
#[test]
fn json_flag_is_format_json_on_compare_and_qualify() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_three(dir.path());
    // the output without the time it was written at (two runs a second apart differ there)
    let run = |args: &[&str]| {
        let out = hwsurvey().args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("\"written_at\""))
            .collect();
        (out.status.code(), kept.join("\n"))
    };
    let f: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let (code, json) = run(&["compare", f[0], f[1], "--json"]);
    assert_eq!(code, Some(0));
    assert!(json.trim_start().starts_with('{'), "{json:.200}");
    assert_eq!(
        run(&["compare", f[0], f[1], "--format", "json"]),
        (Some(0), json)
    );
    assert_eq!(
        run(&["compare", f[0], f[1], "--json", "--format", "csv"]).0,
        Some(2)
    );
    let (code, json) = run(&["qualify", f[0], "--json"]);
    assert!(json.contains("\"findings\""), "{json:.300}");
    assert_eq!(run(&["qualify", f[0], "--format", "json"]), (code, json));
    // qualify's usage errors exit 3 (2 is "a rule failed")
    assert_eq!(
        run(&["qualify", f[0], "--json", "--format", "markdown"]).0,
        Some(3)
    );
}

/// `compare reports/examples/*.json` once failed on compare.json beside the
/// results. hwsurvey's own reports (a comparison, a qualification, a machine document) are
/// skipped with a one-line note, recognised by their content whatever their name; any other
/// file that is not a result is still an error naming it.
#[test]
fn hwsurvey_reports_beside_the_results_are_skipped_with_a_note() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/examples");
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<PathBuf> = [
        "vm-x86_64-standard.json",
        "guest-x86-2s4n-smt-standard.json",
    ]
    .iter()
    .map(|f| examples.join(f))
    .collect();
    // a comparison of them, a qualification and a machine document, under neutral names
    let reports = [
        ("a-report.json", vec!["compare", "--format", "json"]),
        ("b-findings.json", vec!["qualify", "--json"]),
        ("c-machine.json", vec!["probe", "--json"]),
    ];
    for (name, args) in &reports {
        let mut cmd = hwsurvey();
        cmd.args(args);
        if args[0] == "compare" {
            cmd.args(&files);
        }
        let out = cmd.output().unwrap();
        std::fs::write(dir.path().join(name), &out.stdout).unwrap();
    }
    files.extend(reports.iter().map(|(name, _)| dir.path().join(name)));
    let out = hwsurvey().arg("compare").args(&files).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for (name, _) in &reports {
        let lines: Vec<&str> = err.lines().filter(|l| l.contains(name)).collect();
        assert_eq!(lines.len(), 1, "{name}: {err}");
        assert!(lines[0].contains("skipped: hwsurvey's own"), "{err}");
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("│ B "), "{text}");
    assert!(
        !text.contains("│ C "),
        "a skipped report got a column:\n{text}"
    );
    // the shipped examples folder as the shell's glob gives it: the three result files alone
    // (what scripts/examples renders from them is in rendered/), nothing skipped
    let mut all: Vec<PathBuf> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    all.sort();
    assert_eq!(all.len(), 3, "reports/examples/*.json: {all:?}");
    let out = hwsurvey()
        .arg("compare")
        .args(&all)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("skipped"), "{err}");
    let csv = String::from_utf8_lossy(&out.stdout);
    for name in [
        "guest-arm64-2n-clusters-standard.json",
        "guest-x86-2s4n-smt-standard.json",
        "vm-x86_64-standard.json",
    ] {
        assert!(
            all.iter().any(|p| p.ends_with(name)),
            "{name} not among {all:?}"
        );
    }
    // one machine row per result file
    let machines = csv
        .lines()
        .filter(|l| l.starts_with("glance,") && !l.starts_with("glance,note,"))
        .count();
    assert_eq!(machines, 3, "{csv:.600}");
    // another JSON is still an error naming the file
    let other = dir.path().join("other.json");
    std::fs::write(&other, "{\"a\": 1}").unwrap();
    let out = hwsurvey()
        .arg("compare")
        .arg(&files[0])
        .arg(&other)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("other.json"));
}

mod printed_reports;

/// `compare -o x.json` kept raw bidi characters of a CPU model and a hostname
/// (U+202E, U+2066), while the terminal showed them escaped. Every format written with `-o`
/// (JSON, Markdown, CSV, HTML, terminal) follows its escaping rule, as on a terminal; the
/// JSON still reads back the CPU model as it was.
#[test]
fn every_format_written_to_a_file_escapes_control_and_bidi_characters() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = hwsurvey_testkit::report_sample::three();
    let model = "EPYC\u{1b}]0;t\u{7}\r\u{202e}exe.txt\u{2066}x\u{2069}";
    files[0].environment.hostname = hwsurvey_model::Probed::Known("web\u{202e}\u{1b}[31m".into());
    files[1].machine.cpu.identity.model_name = Some(model.into());
    let paths: Vec<PathBuf> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let p = dir.path().join(format!("r{i}.json"));
            f.write_atomic(&p).unwrap();
            p
        })
        .collect();
    // the result files themselves carry no raw bidi character either, and load back the same
    let written = std::fs::read_to_string(&paths[1]).unwrap();
    assert!(!written.contains('\u{202e}') && written.contains("\\u202e"));
    let back = hwsurvey_result::load(&paths[1]).unwrap();
    assert_eq!(back.machine.cpu.identity.model_name.as_deref(), Some(model));
    for (name, format) in [
        ("x.json", "json"),
        ("x.md", "markdown"),
        ("x.csv", "csv"),
        ("x.html", "html"),
        ("x.txt", "terminal"),
    ] {
        let out = dir.path().join(name);
        hwsurvey()
            .arg("compare")
            .args(&paths)
            .args(["--format", format, "-o"])
            .arg(&out)
            .assert()
            .success();
        let text = std::fs::read_to_string(&out).unwrap();
        let keep = if format == "terminal" || format == "html" {
            "\n\t"
        } else {
            "\n"
        };
        let raw: Vec<char> = text
            .chars()
            .filter(|c| hwsurvey_model::text::is_unsafe(*c) && !keep.contains(*c))
            .collect();
        assert!(raw.is_empty(), "{name}: raw {raw:?}");
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert!(v.to_string().contains("exe.txt"), "{name}");
            assert!(
                text.contains("\\u202e"),
                "{name}: the bidi character escaped"
            );
        }
    }
}

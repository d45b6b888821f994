//! `hwsurvey run --plan-only --root DIR|SNAPSHOT` on real captures (`../shared/fixtures`):
//! the archive is read as it is (.tar.gz and .tar.bz2), the plan names the captured machine's
//! CPUs and landmarks, skips no point for time or memory, and prints the time estimate;
//! `--root` without `--plan-only` is a usage error. `--max-time` shortens the plan to fit and
//! marks the result file.
//!
//! Under qemu-user (cross test suites) the binary runs through the
//! `CARGO_TARGET_<TRIPLE>_RUNNER` that scripts/cross-test exports.

use hwsurvey_testkit::hwsurvey;

/// `total: N points, estimated 9 min 21 s (allowance ...)` -> seconds.
fn estimate_s(text: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with("total: "))
        .unwrap_or_else(|| panic!("no total line in:\n{text}"));
    let est = line
        .split("estimated ")
        .nth(1)
        .and_then(|r| r.split(" (").next())
        .unwrap();
    let mut s = 0.0;
    let words: Vec<&str> = est.split_whitespace().collect();
    for pair in words.chunks(2) {
        let v: f64 = pair[0].parse().unwrap();
        s += v * match pair[1] {
            "h" => 3600.0,
            "min" => 60.0,
            _ => 1.0,
        };
    }
    s
}

#[test]
fn plan_only_root_plans_each_capture_and_prints_the_estimate() {
    let Some(fixtures) = hwsurvey_testkit::fixtures() else {
        return;
    };
    // (archive, usable CPUs line, landmarks line, estimate bound s)
    let cases = [
        (
            "x86_64-amd-epyc7451-2s-8numa/x86_64-epyc_7451.tar.gz",
            "usable CPUs 96,",
            "landmarks: smt_core 2, llc_group 6, numa_node 12, package 48, cores 48, all 96",
        ),
        (
            "x86_64-intel-xeon-x7550-4s-numa-holes/x86_64-64cpu.tar.gz",
            "usable CPUs 64,",
            "landmarks: smt_core 2, llc_group 16, numa_node 32, package 16, cores 32, all 64",
        ),
        (
            "sparc64-ultrasparc-t1-offline/sparc64-UltraSparc-T1.tar.gz",
            "usable CPUs 24,",
            "landmarks: smt_core 4, llc_group 24, numa_node 24, package 24, cores 6, all 24",
        ),
        (
            "aarch64-hisilicon-kunpeng920-2s-4numa-clusters/128arm-2pa2n8cluster4co.tar.bz2",
            "usable CPUs 128,",
            "landmarks: cluster 4, llc_group 32, numa_node 32, package 64, cores 128, all 128",
        ),
    ];
    for (archive, cpus, marks) in cases {
        let out = hwsurvey()
            .args(["run", "--plan-only", "--root"])
            .arg(fixtures.join(archive))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{archive}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(cpus), "{archive}:\n{text}");
        assert!(text.contains(&format!("{marks}\n")), "{archive}:\n{text}");
        assert!(
            !text.contains("time budget") && !text.contains("memory cap of"),
            "{archive}:\n{text}"
        );
        let est = estimate_s(&text);
        println!("{archive}: estimated {est} s");
        assert!(est > 60.0 && est <= 15.0 * 60.0, "{archive}: {est} s");
    }
}

#[test]
fn root_needs_plan_only_and_a_capture() {
    let out = hwsurvey().args(["run", "--root", "/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--plan-only"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join("x.zip");
    std::fs::write(&bogus, "no archive").unwrap();
    let out = hwsurvey()
        .args(["run", "--plan-only", "--root"])
        .arg(&bogus)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("x.zip: is a file, not a folder or a .tar.gz, .tgz, .tar.bz2 or .tar archive"),
        "{err}"
    );
}

#[test]
fn max_time_shortens_then_drops_and_marks_the_result_file() {
    // the plan: shortened to fit, with the warning and the estimate within the limit
    let out = hwsurvey()
        .args(["run", "--plan-only", "--max-time", "1m"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(
            "warning: time-limited run (fewer, shorter samples: wider noise; compare names any \
             point dropped): --max-time 60 s"
        ),
        "{err}"
    );
    assert!(estimate_s(&text) <= 60.0, "{text}");
    // a run: the file says what was changed, and names each dropped point
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    let out = hwsurvey()
        .args([
            "run",
            "--profile",
            "quick",
            "--only",
            "cpu.scaling",
            "--max-time",
            "0.3",
            "-o",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = hwsurvey_result::load(&file).unwrap();
    let limit = r.time_limit.expect("time_limit recorded");
    assert_eq!(limit.max_time_s, 0.3);
    assert!(limit.estimated_full_s > 0.3, "{limit:?}");
    assert!(!limit.shortened.is_empty(), "{limit:?}");
    let dropped = r
        .skipped
        .iter()
        .filter(|s| s.reason.starts_with("dropped by --max-time 0.3 s"))
        .count();
    assert_eq!(dropped, limit.dropped_points, "{:?}", r.skipped);
    assert!(!r.tests.is_empty());
    assert!(
        r.tests.iter().all(|t| t.point.family == "cpu.scaling"),
        "only cpu.scaling"
    );
}

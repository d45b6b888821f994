//! End-to-end tests of `hwsurvey run`: the quick profile writes a valid result file; a run
//! stopped by SIGINT or killed by SIGKILL after its first test leaves a valid file with the
//! finished tests; SIGTERM and SIGHUP (once or twice) during storage.iops leave no test file; profile errors name the file, the line and the key.
//!
//! Under qemu-user (cross test suites) the binary runs through the
//! `CARGO_TARGET_<TRIPLE>_RUNNER` that scripts/cross-test exports.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hwsurvey_qualify::stored::{BuiltinRules, RulesRef, StoredFindings};
use hwsurvey_result::{load, ResultFile, RunStatus};
use hwsurvey_testkit::hwsurvey;

fn assert_valid(file: &ResultFile) {
    assert_eq!(file.schema, "hwsurvey-result");
    assert_eq!(file.schema_version, hwsurvey_result::RESULT_SCHEMA_VERSION);
    assert_eq!(file.profile.id, "quick");
    assert_eq!(
        file.machine.schema_version,
        hwsurvey_probe::MACHINE_SCHEMA_VERSION,
        "probe document embedded"
    );
    for t in &file.tests {
        if t.outcome == hwsurvey_result::Outcome::Measured {
            assert!(!t.metrics.is_empty(), "{}: no metrics", t.point.id);
            for m in &t.metrics {
                match &m.summary {
                    Some(s) => {
                        assert!(s.min <= s.median && s.median <= s.max);
                        assert_eq!(s.n, m.samples.len());
                    }
                    // fewer than two samples: no statistics, and the file says why
                    None => assert!(
                        m.samples.len() < 2 && m.summary_error.is_some(),
                        "{} {}: no summary for {} samples",
                        t.point.id,
                        m.name,
                        m.samples.len()
                    ),
                }
            }
        } else {
            assert!(
                t.reason.is_some(),
                "{}: {} without a reason",
                t.point.id,
                t.outcome
            );
        }
    }
    for s in &file.skipped {
        assert!(!s.reason.is_empty(), "{} skipped without a reason", s.id);
    }
}

#[test]
fn quick_profile_writes_a_valid_result_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("quick.json");
    let started = Instant::now();
    let output = hwsurvey()
        .args(["run", "--profile", "quick", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    println!("quick profile: {:.1} s", took.as_secs_f64());
    // the plan, one line per family, and the closing headline (at most 40 lines after the
    // progress) are printed; the point-by-point plan and the full table are asked for by flags
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("mem.bandwidth: ") && l.contains(" points, estimated ")),
        "{stdout}"
    );
    assert!(!stdout.contains("stream.triad/threads=1"), "{stdout}");
    assert!(stdout.contains("STREAM Triad peak @N"), "{stdout}");
    assert!(!stdout.contains("bandwidth_bytes_per_s"), "{stdout}");
    let closing = stdout
        .split("\nmachine: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no closing headline:\n{stdout}"));
    assert!(closing.lines().count() <= 41, "{closing}");
    let file = load(&out).unwrap();
    assert_valid(&file);
    assert_eq!(file.status, RunStatus::Complete);
    // stderr is a pipe, not a terminal: one plain progress line per finished test
    let stderr = String::from_utf8_lossy(&output.stderr);
    let total = file.plan.point_count();
    let progress: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with('[') && l.contains(&format!("/{total}] ")))
        .collect();
    assert_eq!(progress.len(), file.tests.len(), "{stderr}");
    assert!(
        progress.iter().any(|l| l.starts_with(&format!(
            "[1/{total}] {} {}: ",
            file.tests[0].point.family, file.tests[0].point.id
        ))),
        "{stderr}"
    );
    // under qemu-user (the aarch64 and sparc64 suites) the run warns that it measures the
    // emulator; natively it does not
    let emulated = file
        .machine
        .os
        .binary_vs_kernel
        .known()
        .is_some_and(|b| !b.native);
    assert_eq!(
        stderr.contains("measure the emulator, not the hardware"),
        emulated,
        "{stderr}"
    );
    // no statistics error in the summary table for metrics with fewer than 2 samples
    assert!(!stdout.contains("a sample needs at least"), "{stdout}");
    assert!(file.finished_at.is_some() && file.load_after.is_some());
    // every family of the profile ran or says why not
    for family in &file.plan.families {
        let ran = file.tests.iter().any(|t| t.point.family == family.family);
        let skipped = file.skipped.iter().any(|s| s.family == family.family);
        assert!(
            ran || skipped,
            "{} neither ran nor was skipped",
            family.family
        );
    }
    // STREAM Triad is credited 24 bytes per element and reports a peak (best of N)
    let triad = file
        .tests
        .iter()
        .find(|t| t.point.id == "stream.triad/threads=1")
        .expect("triad point");
    assert_eq!(
        triad.details.get("credited_bytes_per_element"),
        Some(&serde_json::json!(24))
    );
    let m = &triad.metrics[0];
    assert_eq!(m.name, "bandwidth_bytes_per_s");
    let max = m.samples.iter().copied().fold(f64::MIN, f64::max);
    assert_eq!(m.peak, Some(max));
}

/// The findings stored in a result file by the run: the default rules (named, hashed) over
/// this machine and the result, every enabled rule present, evaluated at the last write.
fn stored_findings(file: &ResultFile) -> StoredFindings {
    let s: StoredFindings = file
        .qualification
        .clone()
        .expect("the run stores qualification findings");
    assert_eq!(s.rules, RulesRef::builtin());
    for def in hwsurvey_qualify::RULES {
        assert!(
            s.findings.iter().any(|f| f.rule == def.id),
            "no finding of {}",
            def.id
        );
    }
    for f in &s.findings {
        assert!(!f.summary.is_empty(), "{}", f.rule);
    }
    assert!(s.evaluated_at >= file.started_at, "{}", s.evaluated_at);
    s
}

#[test]
fn quick_run_stores_findings_and_qualify_shows_them_as_stored() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("q.json");
    let output = hwsurvey()
        .args(["run", "--profile", "quick", "--only", "mem.bandwidth", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let file = load(&out).unwrap();
    let s = stored_findings(&file);
    // evaluated with the result: Triad ran, so memory.triad_share is not waiting for a
    // result file (it may still lack the theoretical peak, e.g. no DMI in a VM)
    let triad = s
        .findings
        .iter()
        .find(|f| f.rule == "memory.triad_share")
        .unwrap();
    assert!(
        !triad.summary.contains("result file not given"),
        "{triad:?}"
    );
    // the kernel minimum of the running binary's own target descriptor
    let k = s
        .findings
        .iter()
        .find(|f| f.rule == "os.kernel_min")
        .unwrap();
    if k.verdict != hwsurvey_qualify::Verdict::NotEvaluated {
        assert!(
            k.evidence[1].source.starts_with(&format!(
                "min_kernel of targets/{}.toml (built in)",
                std::env::consts::ARCH
            )),
            "{k:?}"
        );
    }
    // the file was finished after the last write of the findings
    assert!(Some(&s.evaluated_at) <= file.finished_at.as_ref());
    let shown = hwsurvey()
        .args(["qualify", "--format", "json"])
        .arg(&out)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(v["findings"], serde_json::to_value(&s.findings).unwrap());
    assert!(
        v["origin"]
            .as_str()
            .unwrap()
            .starts_with("findings stored at run time ("),
        "{v}"
    );
}

fn profile_error(body: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, body).unwrap();
    let output = hwsurvey()
        .args(["run", "--plan-only", "--profile"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let name = path.display().to_string();
    assert!(stderr.contains(&name), "names the file: {stderr}");
    stderr.replace(&name, "FILE")
}

/// The built-in quick profile with one line replaced.
fn quick_with(from: &str, to: &str) -> String {
    let text = hwsurvey_engine::profile::QUICK_TOML;
    assert!(text.contains(from), "quick.toml has {from:?}");
    text.replacen(from, to, 1)
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn profile_errors_name_file_line_and_key() {
    // unknown key
    let text = quick_with("warmup_s = 0.0", "warmup_s = 0.0\nwarmpu_s = 1.0");
    let e = profile_error(&text);
    let line = line_of(&text, "warmpu_s");
    assert!(
        e.contains(&format!(
            "FILE:{line}: key `run.warmpu_s`: unknown field `warmpu_s`"
        )),
        "{e}"
    );
    // bad value
    let text = quick_with("sample_min_s = 0.01", "sample_min_s = -1.0");
    let e = profile_error(&text);
    let line = line_of(&text, "sample_min_s = -1.0");
    assert!(
        e.contains(&format!(
            "FILE:{line}: key `run.sample_min_s`: expected a number in (0, 60] (seconds), got -1"
        )),
        "{e}"
    );
    // wrong format version
    let text = quick_with("format_version = 1", "format_version = 7");
    let e = profile_error(&text);
    let line = line_of(&text, "format_version");
    assert!(
        e.contains(&format!(
            "FILE:{line}: key `format_version`: unsupported profile format version 7"
        )),
        "{e}"
    );
    // a family's own params are checked with the same precision
    let text = quick_with(
        "block_ops = [\"read\", \"write\"]",
        "block_ops = [\"read\", \"scribble\"]",
    );
    let e = profile_error(&text);
    let line = line_of(&text, "scribble");
    assert!(
        e.contains(&format!(
            "FILE:{line}: key `families.\"mem.bandwidth\".params.block_ops`"
        )),
        "{e}"
    );
    assert!(e.contains("scribble"), "{e}");
}

/// `run --profile quick --only storage --plan-only` with these `--storage-dir`s.
fn storage_plan_only(dirs: &[&Path]) -> std::process::Output {
    let mut c = hwsurvey();
    c.args([
        "run",
        "--profile",
        "quick",
        "--only",
        "storage",
        "--plan-only",
    ]);
    for d in dirs {
        c.arg("--storage-dir").arg(d);
    }
    c.output().unwrap()
}

/// `--storage-dir` names one directory per device: the same directory twice (also through a
/// symlink) and two directories on one filesystem are refused before anything runs, with a
/// one-line error naming both.
#[test]
fn storage_dirs_named_twice_or_on_one_device_are_refused() {
    let Some(base) = storage_dir_on_disk() else {
        println!("SKIPPED: /var/tmp not available for a disk-backed storage dir");
        return;
    };
    let a = base.path().join("a");
    let b = base.path().join("b");
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let link = base.path().join("link-to-a");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let refused = |x: &Path, y: &Path| {
        let out = storage_plan_only(&[x, y]);
        assert!(!out.status.success());
        String::from_utf8(out.stderr).unwrap()
    };
    let same = refused(&a, &link);
    assert!(
        same.contains("the same directory as --storage-dir"),
        "{same}"
    );
    assert!(same.contains(&link.display().to_string()), "{same}");
    assert_eq!(same.trim().lines().count(), 1, "{same}");
    let one_device = refused(&a, &b);
    assert!(one_device.contains("on the same device"), "{one_device}");
    assert!(
        one_device.contains("one directory per device"),
        "{one_device}"
    );
    // A directory no file can be created in (immutable: even root cannot, as on a read-only
    // mount) is refused before the run, not point by point during it.
    let locked = base.path().join("immutable");
    std::fs::create_dir(&locked).unwrap();
    let chattr = |flag: &str| {
        Command::new("chattr")
            .arg(flag)
            .arg(&locked)
            .status()
            .is_ok_and(|s| s.success())
    };
    if chattr("+i") {
        let out = storage_plan_only(&[&locked]);
        chattr("-i");
        assert!(!out.status.success());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&locked.display().to_string())
                && err.contains("cannot create a test file"),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(&locked).unwrap().count(), 0);
    } else {
        println!("SKIPPED: chattr +i not possible here (not root, or not ext2/3/4)");
    }
    // A missing directory is an error before the run too, naming it.
    let missing = base.path().join("no-such-dir");
    let out = storage_plan_only(&[&missing]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&missing.display().to_string()) && err.contains("does not exist"),
        "{err}"
    );
}

/// `-o FILE` never overwrites an existing file unless `--force`: one line naming the file,
/// before any test runs, and the file is left as it was.
#[test]
fn existing_output_is_refused_unless_force() {
    use assert_cmd::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("taken.json");
    std::fs::write(&out, "keep me\n").unwrap();
    let assert = hwsurvey()
        .args(["run", "--profile", "quick", "--only", "mem.bandwidth", "-o"])
        .arg(&out)
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert_eq!(
        stderr,
        format!(
            "hwsurvey: error: {}: exists; refusing to overwrite it (pass --force to replace it)\n",
            out.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me\n");
    hwsurvey()
        .args([
            "run",
            "--profile",
            "quick",
            "--only",
            "mem.bandwidth",
            "--force",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    assert_valid(&load(&out).unwrap());
    // --force never replaces what is not a result file: a FIFO, a directory (the result is
    // renamed over the path, which would replace /dev/null itself for everyone)
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    for (path, kind) in [(&fifo, "a FIFO (named pipe)"), (&sub, "a directory")] {
        let assert = hwsurvey()
            .args([
                "run",
                "--profile",
                "quick",
                "--only",
                "mem.bandwidth",
                "--force",
                "-o",
            ])
            .arg(path)
            .assert()
            .failure();
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        assert_eq!(
            stderr,
            format!(
                "hwsurvey: error: {}: is {kind}, not a regular file; --force replaces only regular files\n",
                path.display()
            )
        );
    }
    let ft = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(
        std::os::unix::fs::FileTypeExt::is_fifo(&ft),
        "the FIFO is still a FIFO"
    );
}

/// Two runs started together in one directory without `-o` get two files
/// (`reports/<host>-<arch>-<date>-<HHMMSS>.json`, then `-2`), each a complete result.
#[test]
fn concurrent_runs_get_distinct_default_files() {
    let dir = tempfile::tempdir().unwrap();
    let spawn = |extra: &[&str]| {
        hwsurvey()
            .current_dir(dir.path())
            .args(["run", "--profile", "quick", "--only", "mem.bandwidth"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    // the second also asks for the plan point by point and the full table at the end
    let (a, b) = (spawn(&[]), spawn(&["--plan-points", "--full-summary"]));
    let written: Vec<String> = [a, b]
        .into_iter()
        .enumerate()
        .map(|(k, c)| {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success());
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let full = stdout.contains("stream.triad/threads=1")
                && stdout.contains("bandwidth_bytes_per_s");
            assert_eq!(full, k == 1, "{stdout}");
            stdout
                .lines()
                .find_map(|l| l.strip_prefix("result file: "))
                .unwrap_or_else(|| panic!("{stdout}"))
                .to_string()
        })
        .collect();
    assert_ne!(written[0], written[1]);
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    for (name, shown) in names.iter().zip({
        let mut w = written.clone();
        w.sort();
        w
    }) {
        assert_eq!(shown, format!("reports/{name}"));
        let file = load(&dir.path().join("reports").join(name)).unwrap();
        assert_valid(&file);
        assert_eq!(file.status, RunStatus::Complete);
        // <host>-<arch>-<YYYY-MM-DD>-<HHMMSS>[-N].json: the date and time (UTC) the name was
        // taken, just before the run's start
        let date = &file.started_at[..10];
        assert!(
            name.contains(&format!("-{}-{date}-", std::env::consts::ARCH)),
            "{name}"
        );
        let tail = name.split(&format!("{date}-")).nth(1).unwrap();
        let (hhmmss, rest) = tail.split_at(6);
        assert!(rest == ".json" || rest == "-2.json", "{name}");
        let secs = |t: &str| -> u32 {
            let d: Vec<u32> = t.chars().map(|c| c.to_digit(10).unwrap()).collect();
            (d[0] * 10 + d[1]) * 3600 + (d[2] * 10 + d[3]) * 60 + d[4] * 10 + d[5]
        };
        let named = secs(hhmmss);
        let started = secs(&file.started_at[11..19].replace(':', ""));
        assert!(
            named <= started && started <= named + 5,
            "{name} {}",
            file.started_at
        );
    }
}

/// A reader that goes away (`hwsurvey ... | head`) ends the process quietly with 141 (128 +
/// SIGPIPE), never a panic, and `run` never leaves an empty result file behind. The pipe's
/// reading end is closed before the child starts: dropped after the spawn, a child on a
/// loaded host wrote all of `probe`'s output into the pipe's buffer first and exited 0
/// (CI-like run, 2026-12-04).
#[test]
fn closed_stdout_is_a_quiet_exit_141() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("piped.json");
    for args in [
        vec!["probe".to_string()],
        vec!["probe".into(), "--json".into()],
        vec!["run".into(), "--plan-only".into()],
        vec![
            "run".into(),
            "--profile".into(),
            "quick".into(),
            "--only".into(),
            "mem.bandwidth".into(),
            "-o".into(),
            out.display().to_string(),
        ],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader); // the reader is gone before the first line
        let child = hwsurvey()
            .args(&args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(output.status.code(), Some(141), "{args:?}: {stderr}");
    }
    // the plan is printed before the file is claimed: no file, or a complete one
    if let Ok(text) = std::fs::read_to_string(&out) {
        assert!(!text.is_empty(), "an empty result file was left behind");
    }
}

/// A storage directory on a real disk (tmpfs is refused by storage.iops by design): under
/// /var/tmp, or None when /var/tmp is missing.
fn storage_dir_on_disk() -> Option<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("hwsurvey-sigtest-")
        .tempdir_in("/var/tmp")
        .ok()
}

mod signals;
mod watch;

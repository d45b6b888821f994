//! `hwsurvey run` stopped by a signal: SIGINT or SIGKILL after the first test leaves a valid
//! file with the finished tests; SIGTERM and SIGHUP (once or twice) during storage.iops leave no
//! test file.

use super::*;

/// Spawns a run of mem.bandwidth in the quick profile and waits until the file holds
/// `tests` finished tests.
fn spawn_and_wait_for_tests(out: &Path, tests: usize) -> Child {
    let mut child = hwsurvey()
        .args(["run", "--profile", "quick", "--only", "mem.bandwidth", "-o"])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(f) = load(out) {
            if f.tests.len() >= tests {
                return child;
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("run ended ({status}) before {tests} tests were written");
        }
        assert!(Instant::now() < deadline, "no test written within 120 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn sigint_keeps_finished_tests_and_marks_the_run_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("int.json");
    let mut child = spawn_and_wait_for_tests(&out, 1);
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    let file = load(&out).unwrap();
    assert_valid(&file);
    if file.status == RunStatus::Complete {
        // the signal came after the last test: nothing to check beyond validity
        return;
    }
    assert_eq!(status.code(), Some(130), "exit status after Ctrl-C");
    assert_eq!(file.status, RunStatus::Interrupted);
    assert!(!file.tests.is_empty());
    assert!(file.finished_at.is_some());
    let planned = file.plan.point_count();
    assert!(file.tests.len() < planned);
    assert!(
        file.skipped
            .iter()
            .any(|s| s.reason.contains("interrupted")),
        "points not run are listed as interrupted"
    );
    // no temporary file left beside it
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn sigkill_leaves_a_valid_file_with_the_finished_tests() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kill.json");
    let mut child = spawn_and_wait_for_tests(&out, 2);
    child.kill().unwrap();
    child.wait().unwrap();
    let file = load(&out).unwrap();
    assert_valid(&file);
    if file.status == RunStatus::Complete {
        return;
    }
    assert_eq!(
        file.status,
        RunStatus::Running,
        "a killed run stays 'running'"
    );
    assert!(file.tests.len() >= 2);
    assert!(file.finished_at.is_none());
    // the findings written with the last finished test survive the kill
    stored_findings(&file);
}

fn storage_test_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".hwsurvey-storage-"))
        .collect()
}

/// Runs storage.iops on a disk directory, sends `signals` (e.g. ["TERM"]) once a test file
/// exists, and checks that no test file is left and the result file is valid and
/// "interrupted" (one signal). Returns the exit code and the result file.
fn storage_run_stopped_by(signals: &[&str]) -> Option<(i32, ResultFile)> {
    let Some(storage) = storage_dir_on_disk() else {
        println!("SKIPPED: /var/tmp not available for a disk-backed storage dir");
        return None;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("storage.json");
    let mut child = hwsurvey()
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
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    // A storage test file of a point, with the result file already written once: the check
    // of the directory before the run also creates (and removes) an empty test file.
    let started = || std::fs::metadata(&out).is_ok_and(|m| m.len() > 0);
    while storage_test_files(storage.path()).is_empty() || !started() {
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            panic!("run ended ({status}) before a storage test file appeared: {err}");
        }
        assert!(
            Instant::now() < deadline,
            "no storage test file within 120 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    // All signals from one shell (`kill` is a builtin there): microseconds apart, so a second
    // signal arrives while the first is still being handled.
    let script: Vec<String> = signals
        .iter()
        .map(|sig| format!("kill -{sig} \"$1\""))
        .collect();
    let killed = Command::new("sh")
        .args(["-c", &script.join(" && "), "sh", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(
        storage_test_files(storage.path()),
        Vec::<String>::new(),
        "storage test files left after SIG{signals:?}"
    );
    let file = load(&out).unwrap();
    if signals.len() == 1 {
        assert_eq!(
            file.status,
            RunStatus::Interrupted,
            "status after SIG{signals:?}"
        );
        assert!(file.finished_at.is_some());
        assert!(
            file.skipped
                .iter()
                .any(|s| s.reason.contains("interrupted")),
            "points not run are listed as interrupted"
        );
        // Every reason names the signal that stopped the run, never Ctrl-C for SIGTERM.
        let name = match signals[0] {
            "INT" => "Ctrl-C (SIGINT)",
            other => &format!("SIG{other}"),
        };
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains(name), "{name} not named in {text}");
        if signals[0] != "INT" {
            assert!(
                !text.contains("Ctrl-C"),
                "Ctrl-C named after SIG{signals:?}"
            );
        }
    }
    Some((status.code().unwrap_or(-1), file))
}

#[test]
fn sigterm_removes_storage_test_files_and_marks_the_run_interrupted() {
    if let Some((code, _)) = storage_run_stopped_by(&["TERM"]) {
        assert_eq!(code, 128 + 15, "exit status after SIGTERM");
    }
}

#[test]
fn sighup_removes_storage_test_files_and_marks_the_run_interrupted() {
    if let Some((code, _)) = storage_run_stopped_by(&["HUP"]) {
        assert_eq!(code, 128 + 1, "exit status after SIGHUP");
    }
}

#[test]
fn second_signal_exits_at_once_and_still_removes_storage_test_files() {
    // Two different signals so they cannot merge into one pending signal (the kernel may hand
    // either over first, so the status is 128 + 1 or 128 + 15).
    if let Some((code, file)) = storage_run_stopped_by(&["TERM", "HUP"]) {
        assert!(
            code == 128 + 1 || code == 128 + 15,
            "exit status {code} after two signals"
        );
        // Exited at once on the second signal, before the orderly end could write the file,
        // and the live test files were still removed (checked in storage_run_stopped_by).
        assert_eq!(
            file.status,
            RunStatus::Running,
            "exited without the orderly end"
        );
    }
}

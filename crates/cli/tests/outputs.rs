//! One rule for every output file (`run -o`, `compare -o`, `compare --plots`, `snapshot -o`):
//! an existing file is never replaced without `--force`, and an input never, even with
//! `--force` (by path, through a symlink, or through a hard link). Errors are one line on
//! standard error and the file is left as it was.

use std::path::{Path, PathBuf};

use assert_cmd::prelude::*;
use hwsurvey_testkit::hwsurvey;

fn write_two(dir: &Path) -> Vec<PathBuf> {
    hwsurvey_testkit::report_sample::three()
        .into_iter()
        .take(2)
        .enumerate()
        .map(|(i, f)| {
            let p = dir.join(format!("{}.json", ["a", "b"][i]));
            f.write_atomic(&p).unwrap();
            p
        })
        .collect()
}

fn stderr_of(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    String::from_utf8(out.stderr).unwrap()
}

/// The reproduction: `compare a.json b.json -o a.json` overwrote its own input.
#[test]
fn compare_never_writes_over_an_input_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_two(dir.path());
    let (a, b) = (&files[0], &files[1]);
    let before = std::fs::read(a).unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(a, &link).unwrap();
    let hard = dir.path().join("hard.json");
    std::fs::hard_link(b, &hard).unwrap();
    for force in [false, true] {
        for (target, input, how) in [
            (a, a, "the same path as"),
            (&link, a, "the same path as"),
            (&hard, b, "the same file (a link) as"),
        ] {
            let mut cmd = hwsurvey();
            cmd.arg("compare").args(&files).arg("-o").arg(target);
            if force {
                cmd.arg("--force");
            }
            assert_eq!(
                stderr_of(&mut cmd),
                format!(
                    "hwsurvey: error: {}: is {how} the input {}; refusing to write over an input, even with --force\n",
                    target.display(),
                    input.display()
                )
            );
        }
    }
    assert_eq!(std::fs::read(a).unwrap(), before);
    assert_eq!(std::fs::read(b).unwrap(), std::fs::read(&hard).unwrap());
    hwsurvey_result::load(a).unwrap();
}

#[test]
fn compare_replaces_an_existing_report_only_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_two(dir.path());
    let report = dir.path().join("report.md");
    std::fs::write(&report, "keep me\n").unwrap();
    let mut cmd = hwsurvey();
    cmd.arg("compare").args(&files).arg("-o").arg(&report);
    assert_eq!(
        stderr_of(&mut cmd),
        format!(
            "hwsurvey: error: {}: exists; refusing to overwrite it (pass --force to replace it)\n",
            report.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&report).unwrap(), "keep me\n");
    hwsurvey()
        .arg("compare")
        .args(&files)
        .arg("-o")
        .arg(&report)
        .arg("--force")
        .assert()
        .success();
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.starts_with("# hwsurvey comparison"), "{text}");
    // no temporary file left beside it
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn compare_plots_are_not_replaced_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_two(dir.path());
    let plots = dir.path().join("plots");
    hwsurvey()
        .arg("compare")
        .args(&files)
        .arg("--plots")
        .arg(&plots)
        .assert()
        .success();
    let first = std::fs::read_dir(&plots)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(&first, "hand-edited\n").unwrap();
    let mut cmd = hwsurvey();
    cmd.arg("compare").args(&files).arg("--plots").arg(&plots);
    let err = stderr_of(&mut cmd);
    assert!(
        err.ends_with("exists; refusing to overwrite it (pass --force to replace it)\n"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&first).unwrap(), "hand-edited\n");
}

#[test]
fn snapshot_refuses_an_existing_archive_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("snap.tar.gz");
    std::fs::write(&out, "keep me\n").unwrap();
    let mut cmd = hwsurvey();
    cmd.args(["snapshot", "-o"]).arg(&out);
    assert_eq!(
        stderr_of(&mut cmd),
        format!(
            "hwsurvey: error: {}: exists; refusing to overwrite it (pass --force to replace it)\n",
            out.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me\n");
}

/// `run --profile FILE -o FILE --force` would have replaced the profile it reads.
#[test]
fn run_never_writes_over_its_profile() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("mine.toml");
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::copy(repo.join("profiles/quick.toml"), &profile).unwrap();
    let before = std::fs::read(&profile).unwrap();
    let mut cmd = hwsurvey();
    cmd.arg("run")
        .arg("--profile")
        .arg(&profile)
        .arg("--force")
        .arg("-o")
        .arg(&profile);
    // the plan is printed first; the refusal comes before any test
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.ends_with(&format!(
            "{}: is the same path as the input {}; refusing to write over an input, even with --force\n",
            profile.display(),
            profile.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read(&profile).unwrap(), before);
}

fn quick_run(out: &Path) -> std::process::Command {
    profile_run(out, "quick".as_ref())
}

/// `run --profile PROFILE --only mem.bandwidth --force -o OUT`, output to a pipe.
fn profile_run(out: &Path, profile: &std::ffi::OsStr) -> std::process::Command {
    // through the target's runner: under qemu-user a bare foreign binary is not run at all
    let mut cmd = hwsurvey_testkit::target_command(&assert_cmd::cargo::cargo_bin("hwsurvey"));
    cmd.current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .args(["run", "--profile"])
        .arg(profile)
        .args(["--only", "mem.bandwidth", "--force", "-o"])
        .arg(out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    cmd
}

/// The reproduction: two `run --force -o same.json` at once both reported success.
/// The second is refused at once, naming the lock, while the first finishes. The first runs
/// the quick profile with 0.4 s samples (about 15 s): with the quick profile's 0.01 s samples
/// it finished, on a loaded CI host (2026-12-04), before the second had started up, and the
/// second then rightly wrote the file.
#[test]
fn a_second_concurrent_run_on_one_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("same.json");
    let lock = dir.path().join(".same.json.lock");
    let quick = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../profiles/quick.toml"),
    )
    .unwrap();
    assert!(quick.contains("\nsample_min_s = 0.01\n"));
    // 0.1 s samples: the first run lasts several seconds (its lock is held long after the
    // second one starts, which takes well under a second) and not the 20 s of 0.4 s samples
    let slow = dir.path().join("slow.toml");
    std::fs::write(
        &slow,
        quick.replace("\nsample_min_s = 0.01\n", "\nsample_min_s = 0.1\n"),
    )
    .unwrap();
    let mut first = profile_run(&out, slow.as_os_str()).spawn().unwrap();
    let start = std::time::Instant::now();
    while !lock.exists() && start.elapsed() < std::time::Duration::from_secs(300) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(lock.exists(), "the first run took no lock");
    let second = quick_run(&out).output().unwrap();
    assert_eq!(second.status.code(), Some(2), "{second:?}");
    let err = String::from_utf8(second.stderr).unwrap();
    assert!(
        err.ends_with(&format!(
            "{}: another hwsurvey process is writing it (lock {} held); wait for it to finish or choose another output\n",
            out.display(),
            lock.display()
        )),
        "{err}"
    );
    assert!(first.wait().unwrap().success());
    hwsurvey_result::load(&out).unwrap();
    assert!(!lock.exists(), "the lock file is removed at the end");
}

/// The reproduction: SIGKILL 12-18 ms into a run left a 0-byte result file. Killed
/// at 20 moments in the first 60 ms, a run leaves no file or a complete, loadable one.
#[test]
fn sigkill_early_never_leaves_an_empty_or_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    for k in 0..20u64 {
        let out = dir.path().join(format!("k{k}.json"));
        let mut child = quick_run(&out).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(k * 3));
        let _ = child.kill();
        let _ = child.wait();
        if out.exists() {
            if let Err(e) = hwsurvey_result::load(&out) {
                panic!("killed after {} ms: {e}", k * 3);
            }
        }
    }
}

/// The reproduction: a SIGKILLed run leaves its lock file `.<name>.lock` (its `Drop`
/// never runs). The rerun with the same -o is not blocked: it takes the lock over, names the
/// leftover with the killed run's process id, finishes, and leaves no lock file; an empty
/// leftover (killed before it wrote its id) is named as empty.
#[test]
fn a_sigkilled_runs_lock_file_is_taken_over_and_named_by_the_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let lock = dir.path().join(".r.json.lock");
    let mut first = quick_run(&out).spawn().unwrap();
    let start = std::time::Instant::now();
    // the lock holds the run's process id once it is taken
    let holder = format!("{}\n", first.id());
    while std::fs::read_to_string(&lock).ok().as_deref() != Some(holder.as_str())
        && start.elapsed() < std::time::Duration::from_secs(300)
    {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    // under a qemu-user runner the child is the emulator, whose pid the guest keeps
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), holder);
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(lock.exists(), "SIGKILL leaves the lock file");
    let rerun = quick_run(&out).output().unwrap();
    let err = String::from_utf8(rerun.stderr).unwrap();
    assert_eq!(rerun.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!(
            "hwsurvey: took over the lock file {}, left by process {}, which was killed (no process held the lock); it is removed when this run ends",
            lock.display(),
            first.id()
        )),
        "{err}"
    );
    hwsurvey_result::load(&out).unwrap();
    assert!(!lock.exists(), "the rerun removed the lock file");
    // an empty leftover, as the tester found it
    std::fs::write(&lock, "").unwrap();
    let rerun = quick_run(&out).output().unwrap();
    let err = String::from_utf8(rerun.stderr).unwrap();
    assert_eq!(rerun.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!(
            "hwsurvey: took over the lock file {}, empty, left by a run that was killed",
            lock.display()
        )),
        "{err}"
    );
    assert!(!lock.exists());
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["r.json".to_string()]);
}

/// The reproduction: after a full disk, `run --force` said the file it could not
/// replace "keeps the last complete write (4 finished tests)", describing another run's file
/// as its own. A 1 MiB tmpfs holds another run's result file and is then filled, but for a
/// few KiB (the lock file's): the run's first write fails, and the error says the file is
/// still the previous one, of an earlier run, with that run's start. Needs root to mount a
/// tmpfs; skipped with a message otherwise.
#[test]
fn a_full_disk_under_force_names_the_file_left_as_the_previous_one() {
    use std::io::Write;
    use std::process::Command as Std;
    let dir = tempfile::tempdir().unwrap();
    let mounted = Std::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(dir.path())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        println!("SKIPPED: cannot mount a 1 MiB tmpfs (needs root and the mount command)");
        return;
    }
    let out = dir.path().join("r.json");
    let earlier = hwsurvey_testkit::report_sample::three().remove(0);
    let (started, tests) = (earlier.started_at.clone(), earlier.tests.len());
    let result = (|| {
        earlier.write_atomic(&out).map_err(|e| e.to_string())?;
        // fill the rest, then give back 16 KiB (room for the lock file, not for a result)
        let mut filler = std::fs::File::create(dir.path().join("filler")).unwrap();
        let chunk = vec![1u8; 4096];
        while filler.write_all(&chunk).is_ok() {}
        drop(filler);
        let len = std::fs::metadata(dir.path().join("filler")).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("filler"))
            .unwrap()
            .set_len(len.saturating_sub(16 << 10))
            .unwrap();
        let run = quick_run(&out).output().unwrap();
        Ok::<_, String>(run)
    })();
    let _ = Std::new("umount").arg(dir.path()).status();
    let run = result.expect("the earlier file fits in 1 MiB");
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(
        err.contains(&format!(
            "{} is still the previous file, of an earlier run started {started} ({tests} finished test",
            out.display()
        )),
        "{err}"
    );
    assert!(
        !err.contains("keeps this run's last complete write"),
        "{err}"
    );
}

/// `compare -o r.pdf` wrote terminal text into r.pdf, and `-o -` made a file
/// named "-". The format comes from --format or the extension, or the output is refused: a
/// PDF with the two commands that print the HTML report to one, each whole on its own line
/// (as scripts/html-to-pdf-png does); `-o -` is standard output.
#[test]
fn compare_output_format_from_the_extension_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_two(dir.path());
    let pdf = dir.path().join("r.pdf");
    for extra in [&[][..], &["--format", "html"][..]] {
        let out = hwsurvey()
            .arg("compare")
            .args(&files)
            .arg("-o")
            .arg(&pdf)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().collect();
        assert!(
            lines
                .iter()
                .any(|l| l.trim() == "hwsurvey compare FILE... -o report.html"),
            "{err}"
        );
        assert!(
            lines.iter().any(|l| l.trim()
                == format!(
                    "chromium --headless --no-pdf-header-footer --print-to-pdf={} report.html",
                    pdf.display()
                )),
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "hwsurvey: error: -o {}: hwsurvey writes no PDF",
                pdf.display()
            )),
            "{err}"
        );
        assert!(!pdf.exists());
    }
    // an extension no format has, or none: refused, naming the ones there are
    for name in ["r.docx", "report"] {
        let out = hwsurvey()
            .arg("compare")
            .args(&files)
            .arg("-o")
            .arg(dir.path().join(name))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("name the file .md, .csv, .json, .html or .txt"),
            "{err}"
        );
        assert!(!dir.path().join(name).exists());
    }
    // --format decides for any other name; .txt is the terminal's text
    let txt = dir.path().join("r.txt");
    hwsurvey()
        .arg("compare")
        .args(&files)
        .arg("-o")
        .arg(&txt)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&txt)
        .unwrap()
        .starts_with("Machines at a glance"));
    let named = dir.path().join("report");
    hwsurvey()
        .arg("compare")
        .args(&files)
        .args(["--format", "markdown", "-o"])
        .arg(&named)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&named)
        .unwrap()
        .starts_with("# hwsurvey comparison"));
    // `-o -`: standard output, in the format asked; no file named "-"
    let out = hwsurvey()
        .current_dir(dir.path())
        .arg("compare")
        .args(&files)
        .args(["-o", "-", "--format", "markdown"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("# hwsurvey comparison"));
    assert!(!dir.path().join("-").exists());
}

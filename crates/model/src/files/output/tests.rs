use super::*;

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "hwsurvey-output-{tag}-{}-{}",
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn an_input_is_never_an_output_even_with_force() {
    let d = temp_dir("input");
    let a = d.join("a.json");
    let b = d.join("b.json");
    std::fs::write(&a, "a").unwrap();
    std::fs::write(&b, "b").unwrap();
    for force in [false, true] {
        let e = check_output(&a, &[&a, &b], force).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: is the same path as the input {}; refusing to write over an input, even with --force",
                a.display(),
                a.display()
            )
        );
        // through a relative spelling
        let odd = d.join(".").join("a.json");
        assert!(matches!(
            check_output(&odd, &[&a], force),
            Err(OutputError::IsInput { .. })
        ));
    }
    #[cfg(unix)]
    {
        let link = d.join("link.json");
        std::os::unix::fs::symlink(&b, &link).unwrap();
        let hard = d.join("hard.json");
        std::fs::hard_link(&b, &hard).unwrap();
        let e = check_output(&link, &[&a, &b], true).unwrap_err();
        assert!(
            e.to_string().contains("is the same path as the input"),
            "{e}"
        );
        let e = check_output(&hard, &[&a, &b], true).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: is the same file (a link) as the input {}; refusing to write over an input, even with --force",
                hard.display(),
                b.display()
            )
        );
    }
    // an existing non-input: refused without force, allowed with it
    let c = d.join("c.json");
    std::fs::write(&c, "c").unwrap();
    assert!(matches!(
        check_output(&c, &[&a], false),
        Err(OutputError::Exists { .. })
    ));
    check_output(&c, &[&a], true).unwrap();
    check_output(&d.join("new.json"), &[&a], false).unwrap();
    let e = check_output(&d, &[], true).unwrap_err();
    assert!(
        e.to_string().contains("is a directory, not a regular file"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn files_appear_complete_and_errors_leave_no_debris() {
    let d = temp_dir("atomic");
    let p = d.join("r.json");
    write_atomic(&p, b"one", false).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"one");
    let e = write_atomic(&p, b"two", false).unwrap_err();
    assert!(matches!(e, OutputError::Exists { .. }), "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), b"one");
    write_atomic(&p, b"three", true).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"three");
    // dropped uncommitted: the temporary file goes, the old file stays
    {
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"partial").unwrap();
        assert!(f.temp_path().exists());
    }
    assert_eq!(names(&d), vec!["r.json"]);
    assert_eq!(std::fs::read(&p).unwrap(), b"three");
    // a missing directory: one line naming the temporary file, nothing created
    let e = write_atomic(&d.join("no/such/r.json"), b"x", true).unwrap_err();
    assert!(
        e.to_string().contains("cannot create a temporary file"),
        "{e}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[cfg(all(unix, feature = "sys"))]
#[test]
fn a_second_writer_is_refused_while_the_first_holds_the_lock() {
    let d = temp_dir("lock");
    let p = d.join("same.json");
    let first = OutputLock::acquire(&p).unwrap();
    let e = OutputLock::acquire(&p).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: another hwsurvey process is writing it (lock {} held); wait for it to finish or choose another output",
            p.display(),
            d.join(".same.json.lock").display()
        )
    );
    drop(first);
    // a dead writer's temporary file is removed, and named, by the next lock holder
    std::fs::write(d.join(".same.json.tmp-999999-0"), "partial").unwrap();
    let next = OutputLock::acquire(&p).unwrap();
    assert_eq!(
        next.removed_leftovers(),
        &[d.join(".same.json.tmp-999999-0")]
    );
    drop(next);
    // released and removed: the next one gets it, and leaves nothing behind
    drop(OutputLock::acquire(&p).unwrap());
    assert!(names(&d).is_empty(), "{:?}", names(&d));
    std::fs::remove_dir_all(&d).unwrap();
}

/// Writers starting at the same moment on a fresh output: exactly one gets the lock, and
/// none of them takes the winner's brand-new lock file for a killed run's leftover.
#[cfg(all(unix, feature = "sys"))]
#[test]
fn simultaneous_writers_one_wins_and_none_sees_a_stale_lock() {
    let d = temp_dir("race");
    let p = d.join("r.json");
    for round in 0..300 {
        let barrier = std::sync::Barrier::new(8);
        let results: Vec<Result<OutputLock, OutputError>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        OutputLock::acquire(&p)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let won: Vec<&OutputLock> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(won.len(), 1, "round {round}: {} holders", won.len());
        assert_eq!(won[0].stale_lock(), None, "round {round}");
        for r in &results {
            if let Err(e) = r {
                assert!(
                    matches!(e, OutputError::Locked { .. }),
                    "round {round}: {e}"
                );
            }
        }
        drop(results);
        assert!(names(&d).is_empty(), "round {round}: {:?}", names(&d));
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// A lock file left by a killed run (SIGKILL: `Drop` never ran) is held by nobody: the
/// next writer takes it over at once, names it (with the killed run's process id, or as
/// empty), and removes it when done. A symlink in its place is refused, never followed.
#[cfg(all(unix, feature = "sys"))]
#[test]
fn a_killed_runs_lock_file_never_blocks_and_is_named() {
    let d = temp_dir("stale");
    let p = d.join("r.json");
    let lock_path = d.join(".r.json.lock");
    // a live holder writes its process id into the lock file
    let live = OutputLock::acquire(&p).unwrap();
    assert_eq!(live.stale_lock(), None);
    assert_eq!(
        std::fs::read_to_string(&lock_path).unwrap(),
        format!("{}\n", std::process::id())
    );
    drop(live);
    for (left, pid) in [("4194303\n", Some(4_194_303)), ("", None), ("junk", None)] {
        std::fs::write(&lock_path, left).unwrap();
        let next = OutputLock::acquire(&p).unwrap();
        let stale = next.stale_lock().cloned().unwrap();
        assert_eq!(
            stale,
            StaleLock {
                path: lock_path.clone(),
                pid
            }
        );
        // now it names the new holder
        assert_eq!(
            std::fs::read_to_string(&lock_path).unwrap(),
            format!("{}\n", std::process::id())
        );
        drop(next);
        assert!(names(&d).is_empty(), "{:?}", names(&d));
    }
    std::fs::write(&lock_path, "").unwrap();
    assert_eq!(
        OutputLock::acquire(&p)
            .unwrap()
            .stale_lock()
            .unwrap()
            .to_string(),
        format!(
            "{}, empty, left by a run that was killed (no process held the lock)",
            lock_path.display()
        )
    );
    std::fs::write(&lock_path, "77\n").unwrap();
    assert_eq!(
        OutputLock::acquire(&p)
            .unwrap()
            .stale_lock()
            .unwrap()
            .to_string(),
        format!(
            "{}, left by process 77, which was killed (no process held the lock)",
            lock_path.display()
        )
    );
    // a new lock file of a writer killed before it linked it is a leftover, removed and
    // named; one another writer holds (about to link it) is left alone
    let dead = d.join(".r.json.tmp-4194303-0.lock");
    std::fs::write(&dead, "4194303\n").unwrap();
    let alive = d.join(".r.json.tmp-4194302-0.lock");
    std::fs::write(&alive, "4194302\n").unwrap();
    let held = nix::fcntl::Flock::lock(
        std::fs::File::open(&alive).unwrap(),
        nix::fcntl::FlockArg::LockExclusiveNonblock,
    )
    .unwrap();
    let next = OutputLock::acquire(&p).unwrap();
    assert_eq!(next.removed_leftovers(), std::slice::from_ref(&dead));
    assert!(alive.exists() && !dead.exists());
    drop((next, held));
    std::fs::remove_file(&alive).unwrap();
    // a symlink where the lock file goes is not followed: the target stays untouched
    let target = d.join("elsewhere");
    std::os::unix::fs::symlink(&target, &lock_path).unwrap();
    let e = OutputLock::acquire(&p).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "{}: cannot open the lock file",
            lock_path.display()
        )),
        "{e}"
    );
    assert!(!target.exists());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_output_under_a_name_a_scanned_folder_reads_is_refused_even_with_force() {
    let d = temp_dir("scanned");
    std::fs::create_dir_all(d.join("web")).unwrap();
    std::fs::write(d.join("web/a.json"), "{}").unwrap();
    let reads: fn(&Path) -> bool = |p| p.extension().is_some_and(|e| e == "json");
    let folders = [ScannedFolder {
        dir: &d,
        reads,
        what: "a result file",
    }];
    for force in [false, true] {
        // an existing result, a new one, one in a folder not made yet, and one through `..`
        for out in [
            d.join("web/a.json"),
            d.join("web/b.json"),
            d.join("db/new/c.json"),
            d.join("web/../x.json"),
        ] {
            let e = check_output_reading(&out, &[], &folders, force).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "{}: is inside {}, which this command reads, under a name it reads as a result file; refusing to write there, even with --force (write it outside {} or under another name)",
                    out.display(),
                    d.display(),
                    d.display()
                )
            );
        }
        // another name inside, and a result's name outside the folder: the usual rule
        check_output_reading(&d.join("fleet.md"), &[], &folders, force).unwrap();
        let outside = temp_dir("scanned-outside");
        check_output_reading(&outside.join("fleet.json"), &[], &folders, force).unwrap();
    }
    // through a symlink to the folder
    #[cfg(unix)]
    {
        let outside = temp_dir("scanned-link");
        let link = outside.join("via");
        std::os::unix::fs::symlink(&d, &link).unwrap();
        assert!(matches!(
            check_output_reading(&link.join("web/a.json"), &[], &folders, true),
            Err(OutputError::InScannedFolder { .. })
        ));
    }
}

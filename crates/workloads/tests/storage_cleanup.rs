//! A real (small, short) storage run in a temporary directory: sane figures, and no test file
//! left behind after a normal end, an interruption (the engine's stop flag, as on Ctrl-C), a
//! stop during preconditioning, or a panic.
#![cfg(feature = "sys")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hwsurvey_workloads::storage::engine::{run_point, EngineChoice, IoSpec, IoTarget};
use hwsurvey_workloads::storage::target::{create_test_file, live_test_files};
use hwsurvey_workloads::storage::{Pattern, StorageError};

fn entries(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

fn tempdir_on_disk() -> Option<tempfile::TempDir> {
    // tempfile's default is $TMPDIR or /tmp; a tmpfs /tmp cannot do O_DIRECT on a device.
    let d = tempfile::tempdir().ok()?;
    match hwsurvey_workloads::storage::target::check_dir(d.path()) {
        Ok(_) => Some(d),
        Err(e) => {
            println!("SKIPPED: temporary directory unusable for O_DIRECT: {e}");
            None
        }
    }
}

#[test]
fn every_pattern_and_engine_measures_and_cleans_up() {
    let Some(dir) = tempdir_on_disk() else { return };
    let stop = AtomicBool::new(false);
    {
        let tf = create_test_file(dir.path(), 8 << 20, &stop).unwrap();
        assert_eq!(tf.size_bytes, 8 << 20);
        assert_eq!(std::fs::metadata(tf.path()).unwrap().len(), 8 << 20);
        assert!(live_test_files().contains(&tf.path().to_path_buf()));
        let path = tf.path().display().to_string();
        let t = IoTarget {
            path: &path,
            file: &tf.file,
            size_bytes: tf.size_bytes,
        };
        for engine in [EngineChoice::Auto, EngineChoice::PreadPwrite] {
            for pattern in Pattern::ALL {
                let spec = IoSpec {
                    pattern,
                    threads_per_target: 1,
                    queue_depth: 2,
                    duration: Duration::from_millis(100),
                    engine,
                };
                let r = run_point(&[t], &spec, &stop).unwrap();
                assert!(r.ios > 0, "{pattern:?}");
                assert_eq!(r.bytes, r.ios * pattern.block_bytes() as u64);
                assert!(r.latency_p50_ns > 0);
                assert!(
                    r.latency_p50_ns <= r.latency_p99_ns && r.latency_p99_ns <= r.latency_p999_ns
                );
                assert!(r.latency_p999_ns <= r.latency_max_ns);
                let rel = (r.iops * r.elapsed_ns as f64 / 1e9 - r.ios as f64).abs() / r.ios as f64;
                assert!(rel < 1e-6);
                if engine == EngineChoice::PreadPwrite {
                    assert_eq!(r.engine.name(), "pread_pwrite");
                }
                if let Some(c) = r.cpu_ns_per_io {
                    assert!(c > 0.0);
                }
            }
        }
        assert_eq!(entries(dir.path()), 1);
    }
    assert_eq!(entries(dir.path()), 0, "test file left behind");
}

#[test]
fn interrupted_run_leaves_nothing() {
    let Some(dir) = tempdir_on_disk() else { return };
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let result = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(150));
            stop.store(true, Ordering::Relaxed);
        });
        let tf = create_test_file(dir.path(), 4 << 20, &stop)?;
        let path = tf.path().display().to_string();
        let t = IoTarget {
            path: &path,
            file: &tf.file,
            size_bytes: tf.size_bytes,
        };
        let spec = IoSpec {
            pattern: Pattern::RandRead4k,
            threads_per_target: 2,
            queue_depth: 4,
            duration: Duration::from_secs(30),
            engine: EngineChoice::Auto,
        };
        run_point(&[t], &spec, &stop)
    });
    assert_eq!(result.unwrap_err(), StorageError::Interrupted);
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "stop flag not honoured"
    );
    assert_eq!(
        entries(dir.path()),
        0,
        "test file left behind after interruption"
    );
}

#[test]
fn stop_during_precondition_and_panic_leave_nothing() {
    let Some(dir) = tempdir_on_disk() else { return };
    let stopped = AtomicBool::new(true);
    assert_eq!(
        create_test_file(dir.path(), 4 << 20, &stopped).unwrap_err(),
        StorageError::Interrupted
    );
    assert_eq!(entries(dir.path()), 0);
    let go = AtomicBool::new(false);
    let p = dir.path().to_path_buf();
    let r = std::panic::catch_unwind(|| {
        let _tf = create_test_file(&p, 1 << 20, &go).unwrap();
        panic!("simulated failure while measuring");
    });
    assert!(r.is_err());
    assert_eq!(
        entries(dir.path()),
        0,
        "test file left behind after a panic"
    );
}

#[test]
fn files_of_killed_runs_are_swept_and_nothing_else() {
    use hwsurvey_workloads::storage::target::{sweep_stale, test_file_pid, FILE_PREFIX};
    let dir = tempfile::tempdir().unwrap();
    // pid 2^22 + 1 is above the kernel's PID_MAX_LIMIT (2^22): no such process can exist.
    let dead = dir.path().join(format!("{FILE_PREFIX}4194305-0.tmp"));
    let mine = dir
        .path()
        .join(format!("{FILE_PREFIX}{}-99.tmp", std::process::id()));
    let other = dir.path().join("user-data.tmp");
    let lookalike = dir.path().join(format!("{FILE_PREFIX}4194305-x.tmp"));
    for p in [&dead, &mine, &other, &lookalike] {
        std::fs::write(p, b"x").unwrap();
    }
    assert_eq!(test_file_pid(&format!("{FILE_PREFIX}123-4.tmp")), Some(123));
    assert_eq!(test_file_pid("user-data.tmp"), None);
    assert_eq!(sweep_stale(dir.path()), vec![dead.clone()]);
    assert!(!dead.exists());
    assert!(mine.exists() && other.exists() && lookalike.exists());
}

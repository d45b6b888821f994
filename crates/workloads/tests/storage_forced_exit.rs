//! A forced exit (a second stop signal) removes the storage test files still open: the storage
//! family registers its cleanup with the engine, which names no family. Its own test binary,
//! since the cleanup removes every live test file of the process.

use hwsurvey_workloads::storage::target::{live_test_files, CreatedFile};

#[test]
fn the_engines_forced_exit_cleanups_remove_the_live_test_files() {
    let dir = tempfile::tempdir().unwrap();
    let (created, file) = CreatedFile::create_in(dir.path(), 4096).unwrap();
    drop(file);
    let path = created.path().to_path_buf();
    assert!(path.is_file());
    assert_eq!(live_test_files(), std::slice::from_ref(&path));
    hwsurvey_engine::signals::run_forced_exit_cleanups();
    assert!(!path.exists(), "{} left behind", path.display());
    assert!(live_test_files().is_empty());
    drop(created);
}

//! Processes by pid: `/proc/<pid>` (proc(5)), under a [`SysRoot`]. The storage family asks it
//! whether the process that left a test file behind still runs before it removes the file.

use crate::SysRoot;

/// Whether process `pid` exists (its `/proc/<pid>` directory does) under `root`.
pub fn exists(root: &SysRoot, pid: u32) -> bool {
    root.exists(&format!("/proc/{pid}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_exists_and_a_capture_has_only_its_own() {
        assert!(exists(&SysRoot::live(), std::process::id()));
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc/42")).unwrap();
        let root = SysRoot::new(dir.path());
        assert!(exists(&root, 42));
        assert!(!exists(&root, 43));
    }
}

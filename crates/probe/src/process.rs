//! Processes by pid: `/proc/<pid>` (proc(5)), under a [`SysRoot`]: whether one exists (the
//! storage family asks before it removes a test file another run left behind), and the one
//! reader of this process's `status` ([`read_status`]) and `limits` ([`read_limits`]). The
//! parsers are `hwsurvey_machine::process`, re-exported here.

use crate::{ProbeError, SysRoot};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::process::*;

/// Whether process `pid` exists (its `/proc/<pid>` directory does) under `root`.
pub fn exists(root: &SysRoot, pid: u32) -> bool {
    root.exists(&format!("/proc/{pid}"))
}

/// [`STATUS`] under `root`, parsed.
///
/// # Errors
/// The file cannot be read.
pub fn read_status(root: &SysRoot) -> Result<ProcStatus, ProbeError> {
    root.read(STATUS).map(|t| parse_status(&t))
}

/// [`LIMITS`] under `root`, parsed.
///
/// # Errors
/// The file cannot be read.
pub fn read_limits(root: &SysRoot) -> Result<ProcLimits, ProbeError> {
    root.read(LIMITS).map(|t| parse_limits(&t))
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

//! The one reader of `/proc/meminfo` ([`MEMINFO`]) under a [`SysRoot`], and the facts every
//! caller takes from it: the totals ([`read`]), `MemAvailable` ([`mem_available`]). The parser
//! and the types are `hwsurvey_machine::memory::meminfo`, re-exported here.

use hwsurvey_model::Probed;

use crate::{ProbeError, SysRoot};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::memory::meminfo::*;

/// Reads [`MEMINFO`] under `root` into its lines ([`parse_meminfo`]).
///
/// # Errors
/// The file cannot be read ([`ProbeError`] naming it).
pub fn read_fields(root: &SysRoot) -> Result<MeminfoFields, ProbeError> {
    root.read(MEMINFO).map(|t| parse_meminfo(&t))
}

/// The totals of [`MEMINFO`] under `root`, or why unknown (unreadable, no `MemTotal`, a bad
/// value: the file and the line named).
pub fn read(root: &SysRoot) -> Probed<MemInfo> {
    match read_fields(root) {
        Ok(f) => match MemInfo::of(&f) {
            Ok(m) => Probed::Known(m),
            Err(e) => Probed::Unknown(e.into()),
        },
        Err(e) => Probed::Unknown(e.into()),
    }
}

/// `MemAvailable` of [`MEMINFO`] under `root`, bytes (kB = KiB): the memory free for a run,
/// read when asked (it moves while the machine runs); unknown with the reason.
pub fn mem_available(root: &SysRoot) -> Probed<u64> {
    match read_fields(root).map_err(hwsurvey_model::Unknown::from) {
        Ok(f) => match f.mem_available_bytes() {
            Ok(b) => Probed::Known(b),
            Err(e) => Probed::Unknown(e.into()),
        },
        Err(u) => Probed::Unknown(u),
    }
}

/// `MemTotal` of [`MEMINFO`] under `root`, bytes, if it can be read.
pub fn mem_total_bytes(root: &SysRoot) -> Option<u64> {
    read(root).known().map(|m| m.mem_total_bytes)
}

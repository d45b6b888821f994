//! The one reader of `/proc/<pid>/smaps` under a [`SysRoot`]: [`read_smaps`] (the engine's
//! check of the backing a buffer obtained) and [`read_first_kernel_page_size`] (the base page
//! size of a capture). The parser and the types are `hwsurvey_machine::smaps`, re-exported
//! here.

use crate::SysRoot;

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::smaps::*;

/// Reads and parses the smaps file at `path` (a kernel path such as [`SELF_SMAPS_PATH`])
/// under `root`.
///
/// Errors: the file cannot be read (`"/proc/self/smaps: permission denied"`, the path first)
/// or does not parse ([`SmapsError`]'s text: the path, the line and what was expected), as a
/// sentence for a skip or verification reason.
pub fn read_smaps(root: &SysRoot, path: &str) -> Result<Vec<SmapsMapping>, String> {
    let text = root.read(path).map_err(|e| e.to_string())?;
    parse_smaps(&text, path).map_err(|e| e.to_string())
}

/// The page size the kernel backs the first mapping of the smaps file at `path` with
/// ([`first_kernel_page_size`], which reads the intact part of a damaged text); `None` when it
/// cannot be read or states none.
pub fn read_first_kernel_page_size(root: &SysRoot, path: &str) -> Option<u64> {
    root.read(path)
        .ok()
        .and_then(|t| first_kernel_page_size(&t))
}

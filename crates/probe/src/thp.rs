//! Transparent huge pages at run time: the two files a workload consults before it asks for THP
//! (`madvise(MADV_HUGEPAGE)`), read under a [`SysRoot`]. The whole THP state for the machine
//! document is [`crate::pages`]; these readers serve the engine's page allocation, which must
//! not open /sys itself.
//!
//! Sources: `/sys/kernel/mm/transparent_hugepage/enabled` (Linux >= 2.6.38; absent on kernels
//! built without THP) and `.../hpage_pmd_size` (Linux >= 4.14).

use crate::pages::{parse_choice, Choice};
use crate::{ProbeError, SysRoot};

/// The THP policy file: `always [madvise] never`.
pub const ENABLED_PATH: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// The PMD size, the size of one transparent huge page, in bytes.
pub const PMD_SIZE_PATH: &str = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size";

/// The THP policy (`always`, `madvise` or `never` selected) from [`ENABLED_PATH`].
///
/// Errors: the file cannot be read (missing: a kernel without THP), or it holds no single
/// bracketed choice ([`ProbeError::Invalid`] with the text).
pub fn read_enabled(root: &SysRoot) -> Result<Choice, ProbeError> {
    let text = root.read(ENABLED_PATH)?;
    parse_choice(&text).ok_or_else(|| {
        ProbeError::invalid(
            ENABLED_PATH,
            "choices with one in brackets, like \"always [madvise] never\"",
            &text,
        )
    })
}

/// The size of one transparent huge page in bytes, from [`PMD_SIZE_PATH`] (2 MiB on x86_64
/// and 4 KiB-page aarch64, 512 MiB on 64 KiB-page aarch64).
///
/// Errors: the file cannot be read, or it does not hold a power of two.
pub fn read_pmd_size_bytes(root: &SysRoot) -> Result<u64, ProbeError> {
    let text = root.read_value(PMD_SIZE_PATH)?;
    text.parse::<u64>()
        .ok()
        .filter(|v| v.is_power_of_two())
        .ok_or_else(|| ProbeError::invalid(PMD_SIZE_PATH, "a power of two (bytes)", &text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_with(files: &[(&str, &str)]) -> (tempfile::TempDir, SysRoot) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let host = dir.path().join(path.trim_start_matches('/'));
            std::fs::create_dir_all(host.parent().unwrap()).unwrap();
            std::fs::write(host, text).unwrap();
        }
        let root = SysRoot::new(dir.path());
        (dir, root)
    }

    #[test]
    fn policy_and_pmd_size() {
        let (_dir, root) = root_with(&[
            (ENABLED_PATH, "always [madvise] never\n"),
            (PMD_SIZE_PATH, "2097152\n"),
        ]);
        assert_eq!(read_enabled(&root).unwrap().selected, "madvise");
        assert_eq!(read_pmd_size_bytes(&root).unwrap(), 2 << 20);
    }

    #[test]
    fn bad_text_names_the_file_and_the_text() {
        let (_dir, root) = root_with(&[
            (ENABLED_PATH, "always madvise never\n"),
            (PMD_SIZE_PATH, "3000000\n"),
        ]);
        let e = read_enabled(&root).unwrap_err().to_string();
        assert!(
            e.starts_with(ENABLED_PATH) && e.contains("always madvise never"),
            "{e}"
        );
        let e = read_pmd_size_bytes(&root).unwrap_err().to_string();
        assert!(e.contains("hpage_pmd_size") && e.contains("3000000"), "{e}");
        let (_dir, empty) = root_with(&[]);
        assert!(read_enabled(&empty).unwrap_err().is_missing());
    }
}

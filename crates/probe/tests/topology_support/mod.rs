//! Shared helpers of the topology fixture tests: find ../shared, extract a capture archive into
//! a temporary folder, build small trees from facts.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use hwsurvey_probe::{probe_machine, Machine, SysRoot};

pub use hwsurvey_testkit::shared;

/// An extracted capture: keep `_dir` alive while probing `root`.
pub struct Capture {
    pub _dir: tempfile::TempDir,
    pub root: PathBuf,
}

/// Extracts the single archive of `fixtures/<folder>` (tar.gz or tar.bz2) into a temporary
/// folder and returns its single top-level folder. `None` (with SKIPPED printed) when
/// ../shared is absent.
pub fn extract(folder: &str) -> Option<Capture> {
    let dir = shared()?.join("fixtures").join(folder);
    let archive = std::fs::read_dir(&dir)
        .expect("fixture folder")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".tar.gz") || n.ends_with(".tar.bz2")
        })
        .expect("an archive in the fixture folder");
    let tmp = hwsurvey_testkit::scratch_tempdir();
    // Dangling symlinks and odd entries are kept as the capture has them; failures to create
    // one entry (e.g. a symlink pointing outside) are not the probe's business.
    hwsurvey_testkit::unpack(&archive, tmp.path());
    let tops: Vec<PathBuf> = std::fs::read_dir(tmp.path())
        .expect("read tmp")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        tops.len(),
        1,
        "one top-level folder in {}",
        archive.display()
    );
    let root = tops.into_iter().next().expect("top folder");
    Some(Capture { _dir: tmp, root })
}

/// Probes a root.
pub fn probe(root: &Path) -> Machine {
    probe_machine(&SysRoot::new(root))
}

/// Reads a text fixture file.
pub fn fixture_text(folder: &str, file: &str) -> Option<String> {
    let p = shared()?.join("fixtures").join(folder).join(file);
    Some(std::fs::read_to_string(p).expect("fixture text"))
}

/// Reads a bug input file.
pub fn bug_text(bug: &str, file: &str) -> Option<String> {
    let p = shared()?.join("bugs").join(bug).join(file);
    Some(std::fs::read_to_string(p).expect("bug text"))
}

/// A tree written from facts: `files` are (kernel path, contents).
pub fn tree(files: &[(String, String)]) -> tempfile::TempDir {
    let tmp = hwsurvey_testkit::scratch_tempdir();
    for (path, text) in files {
        let host = tmp.path().join(path.trim_start_matches('/'));
        std::fs::create_dir_all(host.parent().expect("parent")).expect("mkdir");
        std::fs::write(host, text).expect("write");
    }
    tmp
}

/// `(kernel path, contents)` helper.
pub fn f(path: impl Into<String>, text: impl Into<String>) -> (String, String) {
    (path.into(), text.into())
}

/// Looks up the cache entries of one level/type.
pub fn caches(
    m: &Machine,
    level: u8,
    ty: hwsurvey_probe::cpu::CacheType,
) -> Vec<&hwsurvey_probe::cpu::Cache> {
    m.cpu
        .caches
        .iter()
        .filter(|c| c.level == level && c.cache_type == ty)
        .collect()
}

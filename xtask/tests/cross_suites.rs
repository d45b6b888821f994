//! The rule of what runs under qemu-user (`scripts/cross-suites`, read by `scripts/cross-test`;
//! docs/testing.md): a workspace package whose sources hold target-dependent code runs whole
//! for aarch64 and sparc64; a test file holding such code elsewhere is named; the CLI's
//! end-to-end `run` suite is named. This test fails when a package or a test file with such
//! code is left out, and when the file names a package or a suite that does not exist.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;

/// Packages that never run under qemu-user: the host's build tasks and the guest harness
/// (it boots qemu-system on the host).
const HOST_ONLY: &[&str] = &["xtask", "hwsurvey-guests"];

/// What makes code depend on the target it runs on. Explicit `from_le_bytes`/`to_be_bytes`
/// do not: they give the same value on every host.
const MARKERS: &[&str] = &[
    "target_arch",
    "target_endian",
    "target_pointer_width",
    "from_ne_bytes",
    "to_ne_bytes",
    "asm!",
    "std::arch",
    "core::arch",
    "read_unaligned",
    "transmute",
    "repr(C)",
];

/// Crate paths whose calls depend on the target (syscall numbers, ioctl encodings, struct
/// layouts): a marker when not part of a longer name (`std::os::unix::fs` is not `nix::`).
const FFI: &[&str] = &["libc::", "nix::"];

/// The first marker `text` holds, if any.
fn marker(text: &str) -> Option<&'static str> {
    if let Some(m) = MARKERS.iter().find(|m| text.contains(*m)) {
        return Some(m);
    }
    FFI.iter().copied().find(|m| {
        text.match_indices(m).any(|(i, _)| {
            i == 0 || {
                let b = text.as_bytes()[i - 1];
                !(b.is_ascii_alphanumeric() || b == b'_')
            }
        })
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The first file under `paths` holding a marker, with the marker.
fn first_marked(paths: &[PathBuf]) -> Option<(PathBuf, &'static str)> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            rust_files(p, &mut files);
        } else if p.is_file() {
            files.push(p.clone());
        }
    }
    files.sort();
    files.into_iter().find_map(|f| {
        let text = std::fs::read_to_string(&f).ok()?;
        marker(&text).map(|m| (f, m))
    })
}

/// Workspace packages: name -> folder.
fn packages() -> BTreeMap<String, PathBuf> {
    let meta = common::workspace_metadata();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap());
            (
                p["name"].as_str().unwrap().to_owned(),
                manifest.parent().unwrap().to_path_buf(),
            )
        })
        .collect()
}

/// The integration test targets of a package's `tests/` folder, as Cargo finds them, by name,
/// sorted: each `tests/<name>.rs`, and each `tests/<name>/main.rs` with every Rust file of its
/// folder (the modules of a test split by what it holds).
fn test_targets(tests: &Path) -> Vec<(String, Vec<PathBuf>)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(tests) else {
        return out;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if path.is_dir() && path.join("main.rs").is_file() {
            let mut files = Vec::new();
            rust_files(&path, &mut files);
            files.sort();
            out.push((name, files));
        } else if let Some(stem) = name.strip_suffix(".rs").filter(|_| path.is_file()) {
            out.push((stem.to_string(), vec![path]));
        }
    }
    out.sort();
    out
}

#[test]
fn every_target_dependent_package_and_test_file_runs_under_qemu() {
    let packages = packages();
    let listed = common::cross_suites();
    let mut missing = Vec::new();
    for (name, dir) in &packages {
        if HOST_ONLY.contains(&name.as_str()) {
            assert!(!listed.contains_key(name), "{name} runs on the host only");
            continue;
        }
        let entry = listed.get(name);
        if let Some((file, m)) = first_marked(&[dir.join("src"), dir.join("build.rs")]) {
            if !matches!(entry, Some(None)) {
                missing.push(format!("{name} (all): {} holds `{m}`", file.display()));
            }
        }
        for (stem, files) in test_targets(&dir.join("tests")) {
            let covered = match entry {
                Some(None) => true,
                Some(Some(suites)) => suites.contains(&stem),
                None => false,
            };
            if covered {
                continue;
            }
            for t in files {
                let text = std::fs::read_to_string(&t).unwrap();
                if let Some(m) = marker(&text) {
                    missing.push(format!("{name} {stem}: {} holds `{m}`", t.display()));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "scripts/cross-suites leaves out target-dependent code:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_named_package_and_suite_exists_and_the_cli_runs_end_to_end() {
    let packages = packages();
    for (name, suites) in common::cross_suites() {
        let dir = packages
            .get(&name)
            .unwrap_or_else(|| panic!("scripts/cross-suites: no package {name}"));
        for s in suites.iter().flatten() {
            if s == "lib" || s == "bins" {
                continue;
            }
            assert!(
                test_targets(&dir.join("tests")).iter().any(|(t, _)| t == s),
                "scripts/cross-suites: {name} has no tests/{s}.rs or tests/{s}/main.rs"
            );
        }
        if name == "hwsurvey" {
            let suites = suites.expect("the CLI runs in part");
            assert!(suites.contains("run"), "the CLI's end-to-end run suite");
        }
    }
}

#[test]
fn the_markers_tell_target_dependent_code_from_explicit_byte_order() {
    assert_eq!(marker("u32::from_le_bytes(b)"), None);
    assert_eq!(marker("std::os::unix::fs::symlink(a, b)"), None);
    assert_eq!(
        marker("#[cfg(target_arch = \"aarch64\")]"),
        Some("target_arch")
    );
    assert_eq!(
        marker("let x = u64::from_ne_bytes(b);"),
        Some("from_ne_bytes")
    );
    assert_eq!(
        marker("unsafe { libc::sched_setaffinity(0, n, &s) }"),
        Some("libc::")
    );
    assert_eq!(marker("use nix::sys::mman;"), Some("nix::"));
}

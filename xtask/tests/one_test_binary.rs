//! Every integration test file runs. Packages that build their integration tests as one binary
//! (`autotests = false` and `tests/it.rs` holding each file as a module: one compile and one
//! link instead of one per file, which is most of what the cross stages cost; docs/testing.md)
//! no longer run a `tests/*.rs` file by its mere presence. This test fails naming each
//! `tests/<name>.rs` or `tests/<name>/main.rs` of a workspace package that is neither a test
//! target of its own (Cargo's, by `cargo metadata`) nor a module of one.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

mod common;

/// Each workspace package's folder with the source files of its `test` targets.
fn packages() -> Vec<(String, PathBuf, Vec<PathBuf>)> {
    let meta = common::workspace_metadata();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap());
            let roots = p["targets"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "test"))
                .map(|t| PathBuf::from(t["src_path"].as_str().unwrap()))
                .collect();
            (
                p["name"].as_str().unwrap().to_owned(),
                manifest.parent().unwrap().to_path_buf(),
                roots,
            )
        })
        .collect()
}

/// The files a test target's root file declares as modules: `mod name;` (`name.rs` or
/// `name/mod.rs` beside the root) or `#[path = "p"]` before it (`p`, relative to the root's folder).
fn modules_of(root: &Path) -> BTreeSet<PathBuf> {
    let dir = root.parent().unwrap();
    let text = std::fs::read_to_string(root).unwrap_or_default();
    let mut out = BTreeSet::new();
    let mut path_attr: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            path_attr = rest.strip_suffix("\"]").map(str::to_owned);
            continue;
        }
        let name = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
            .and_then(|r| r.strip_suffix(';'));
        match (name, path_attr.take()) {
            (Some(_), Some(p)) => {
                out.insert(dir.join(p));
            }
            (Some(n), None) => {
                out.insert(dir.join(format!("{n}.rs")));
                out.insert(dir.join(n).join("mod.rs"));
            }
            _ => {}
        }
    }
    out
}

/// The files Cargo would make a test target of by themselves: `tests/*.rs` and
/// `tests/*/main.rs`.
fn test_files(tests: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(tests) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && p.join("main.rs").is_file() {
            out.push(p.join("main.rs"));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn every_integration_test_file_is_a_test_target_or_a_module_of_one() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for (name, dir, roots) in packages() {
        let roots: BTreeSet<PathBuf> = roots
            .iter()
            .map(|r| r.canonicalize().unwrap_or_else(|_| r.clone()))
            .collect();
        let wired: BTreeSet<PathBuf> = roots
            .iter()
            .flat_map(|r| modules_of(r))
            .map(|p| p.canonicalize().unwrap_or(p))
            .collect();
        for f in test_files(&dir.join("tests")) {
            checked += 1;
            let f = f.canonicalize().unwrap();
            if !roots.contains(&f) && !wired.contains(&f) {
                missing.push(format!(
                    "{name}: {} is neither a test target nor a module of one: add `mod {};` to the package's tests/it.rs",
                    f.display(),
                    f.file_stem().unwrap().to_string_lossy()
                ));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} test files found: the walk is broken"
    );
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The checker itself: a file left out of a package's `tests/it.rs` is found.
#[test]
fn a_file_left_out_of_it_rs_is_found() {
    let dir = std::env::temp_dir().join(format!("one_test_binary-{}", std::process::id()));
    let tests = dir.join("tests");
    std::fs::create_dir_all(tests.join("shared")).unwrap();
    std::fs::write(
        tests.join("it.rs"),
        "#[path = \"shared/mod.rs\"]\nmod shared;\nmod a;\n",
    )
    .unwrap();
    for f in ["a.rs", "b.rs", "shared/mod.rs"] {
        std::fs::write(tests.join(f), "").unwrap();
    }
    let wired = modules_of(&tests.join("it.rs"));
    let left: Vec<_> = test_files(&tests)
        .into_iter()
        .filter(|f| f != &tests.join("it.rs") && !wired.contains(f))
        .collect();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(left, vec![tests.join("b.rs")]);
}

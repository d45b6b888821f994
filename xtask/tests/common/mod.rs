//! What the xtask tests share: the workspace as `cargo metadata` describes it, and
//! scripts/cross-suites as scripts/cross-test reads it. Each test uses some of it.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// `cargo metadata --format-version 1 --no-deps --offline` of the workspace, as JSON. Panics
/// with cargo's stderr when it fails (a test of the workspace's layout cannot go on without it).
pub fn workspace_metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// `scripts/cross-suites`: package -> None for `all`, or the named suites.
pub fn cross_suites() -> BTreeMap<String, Option<BTreeSet<String>>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/cross-suites");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let pkg = words.next().unwrap().to_owned();
        let suites: BTreeSet<String> = words.map(str::to_owned).collect();
        assert!(
            !suites.is_empty(),
            "{}: {pkg} names no suite",
            path.display()
        );
        let value = if suites.contains("all") {
            assert_eq!(
                suites.len(),
                1,
                "{}: {pkg}: `all` stands alone",
                path.display()
            );
            None
        } else {
            Some(suites)
        };
        assert!(
            out.insert(pkg.clone(), value).is_none(),
            "{}: {pkg} twice",
            path.display()
        );
    }
    out
}

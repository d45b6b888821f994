//! A cross dist build (`cargo xtask dist aarch64 sparc64`) compiles nothing that
//! scripts/cross-test's suites have not compiled already: every unit of its `--unit-graph`
//! (package, target, mode, platform) is in the suites' graphs with the same features and profile.
//! A unit whose features differ hashes differently, and everything above it compiles a second
//! time (nix `term` from a dev-dependency made that 92 crates and 287 s for aarch64 before
//! xtask's cross_args named the `run` suite, 2026-12-06). Needs Debian's cargo-web and
//! rust-web-src, which ./scripts/test's set-up installs; reads scripts/cross-suites as
//! scripts/cross-test does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
#[path = "../src/cross_args.rs"]
mod cross_args;

const DEBIAN_CARGO: &str = "/usr/bin/cargo";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// (package, target name, target kinds, mode, platform) -> (features, profile), of every unit
/// `/usr/bin/cargo <args> --unit-graph` would build for `triple`.
type Units = BTreeMap<String, (Vec<String>, String)>;

fn unit_graph(triple: &str, args: &[String], target_dir: &Path) -> Units {
    let key = triple.to_uppercase().replace('-', "_");
    let out = Command::new(DEBIAN_CARGO)
        .args(args)
        .args(["--target", triple, "--unit-graph", "-Zunstable-options"])
        .current_dir(root())
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("CARGO")
        .env(
            "PATH",
            format!("/usr/bin:{}", std::env::var("PATH").unwrap_or_default()),
        )
        .env("RUSTC", "/usr/bin/rustc")
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_DIR", target_dir)
        .env(
            format!("CARGO_TARGET_{key}_RUSTFLAGS"),
            "-C target-feature=+crt-static",
        )
        .output()
        .expect("/usr/bin/cargo runs");
    assert!(
        out.status.success(),
        "{DEBIAN_CARGO} {args:?} --unit-graph: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let graph: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("--unit-graph prints JSON");
    let mut units = Units::new();
    for u in graph["units"].as_array().expect("units") {
        let key = format!(
            "{} {} {} {} {}",
            u["pkg_id"], u["target"]["name"], u["target"]["kind"], u["mode"], u["platform"]
        );
        let features = u["features"]
            .as_array()
            .expect("features")
            .iter()
            .map(|f| f.as_str().unwrap_or_default().to_owned())
            .collect();
        units.insert(key, (features, u["profile"].to_string()));
    }
    units
}

/// The cargo arguments of scripts/cross-test's test builds, from scripts/cross-suites
/// ([`common::cross_suites`]): one call for the packages run whole, one a package run in part.
fn suite_calls() -> Vec<Vec<String>> {
    let base: Vec<String> = ["test", "-Zbuild-std"]
        .into_iter()
        .chain(cross_args::UNIFY)
        .chain(["--locked", "--release"])
        .map(str::to_owned)
        .collect();
    let mut whole = base.clone();
    let mut calls = Vec::new();
    for (pkg, suites) in common::cross_suites() {
        let Some(suites) = suites else {
            whole.extend(["-p".to_owned(), pkg]);
            continue;
        };
        let mut call = base.clone();
        call.extend(["-p".to_owned(), pkg]);
        for s in suites {
            match s.as_str() {
                "lib" => call.push("--lib".into()),
                "bins" => call.push("--bins".into()),
                _ => call.extend(["--test".to_owned(), s]),
            }
        }
        calls.push(call);
    }
    assert!(
        whole.len() > base.len(),
        "scripts/cross-suites names no package to run whole"
    );
    calls.insert(0, whole);
    calls
}

#[test]
fn cross_dist_builds_only_what_the_suites_built() {
    assert!(
        Path::new(DEBIAN_CARGO).exists(),
        "{DEBIAN_CARGO} is missing: install Debian's cargo-web, rustc-web and rust-web-src \
         (./scripts/test's set-up does)"
    );
    let target_dir = std::env::temp_dir().join(format!("xtask-unit-graph-{}", std::process::id()));
    let dist: Vec<String> = ["build", "-Zbuild-std", "--release", "--locked"]
        .into_iter()
        .chain(cross_args::UNIFY)
        .chain(cross_args::DIST_TARGETS)
        .chain(["--package", "hwsurvey"])
        .map(str::to_owned)
        .collect();
    for triple in ["aarch64-unknown-linux-gnu", "sparc64-unknown-linux-gnu"] {
        let mut suites = Units::new();
        for call in suite_calls() {
            suites.extend(unit_graph(triple, &call, &target_dir));
        }
        let dist_units = unit_graph(triple, &dist, &target_dir);
        assert!(
            dist_units
                .keys()
                .any(|k| k.contains("hwsurvey") && k.contains("\"bin\"")),
            "{triple}: the dist graph holds no hwsurvey binary: {:?}",
            dist_units.keys().collect::<Vec<_>>()
        );
        let again: Vec<String> = dist_units
            .iter()
            .filter(|(k, v)| suites.get(*k) != Some(v))
            .map(|(k, (features, profile))| match suites.get(k) {
                None => format!("{k}: not built by the suites"),
                Some((f, p)) => format!(
                    "{k}: features {features:?} (suites {f:?}), profile {profile} (suites {p})"
                ),
            })
            .collect();
        assert!(
            again.is_empty(),
            "{triple}: the dist build would compile {} units again:\n{}",
            again.len(),
            again.join("\n")
        );
    }
    let _ = std::fs::remove_dir_all(&target_dir);
}

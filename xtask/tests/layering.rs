//! The crate layering of the workspace, read from `cargo metadata`: model -> machine (the
//! machine document, no I/O) -> result -> engine -> workloads, probe (the readers of /proc and
//! /sys) on machine and under the engine, the readers of result files (report, qualify, fleet)
//! on result and machine, and the binary on top. The readers and the result crate never depend, directly or through
//! another crate, on the crates that run workloads, and the engine never on the workloads (it
//! runs families only through its `Family` trait). Dev-dependencies do not count (a test may
//! run a workload); normal and build dependencies do.

use std::collections::{BTreeMap, BTreeSet};

mod common;

/// Workspace crates that measure: the engine and the workloads.
const RUN_SIDE: &[&str] = &["hwsurvey-engine", "hwsurvey-workloads"];

/// Normal and build dependencies of each workspace package, by package name.
fn workspace_deps() -> BTreeMap<String, BTreeSet<String>> {
    let meta = common::workspace_metadata();
    let mut deps = BTreeMap::new();
    for p in meta["packages"].as_array().expect("packages") {
        let name = p["name"].as_str().expect("name").to_string();
        let normal = p["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].as_str() != Some("dev"))
            .filter_map(|d| d["name"].as_str().map(str::to_string))
            .collect();
        deps.insert(name, normal);
    }
    deps
}

/// Every workspace crate `name` depends on, directly or through others.
fn closure(deps: &BTreeMap<String, BTreeSet<String>>, name: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![name.to_string()];
    while let Some(n) = todo.pop() {
        for d in deps.get(&n).into_iter().flatten() {
            if deps.contains_key(d) && seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

#[test]
fn readers_do_not_depend_on_the_run_side() {
    let deps = workspace_deps();
    for reader in [
        "hwsurvey-report",
        "hwsurvey-qualify",
        "hwsurvey-fleet",
        "hwsurvey-result",
    ] {
        assert!(deps.contains_key(reader), "{reader} is a workspace crate");
        let all = closure(&deps, reader);
        let bad: Vec<_> = RUN_SIDE.iter().filter(|c| all.contains(**c)).collect();
        assert!(
            bad.is_empty(),
            "{reader} depends on {bad:?} (all its workspace dependencies: {all:?})"
        );
        assert!(
            all.contains("hwsurvey-result") || reader == "hwsurvey-result",
            "{reader} reads result files through hwsurvey-result: {all:?}"
        );
    }
    // and the check sees a real dependency: the binary does run workloads
    let binary = closure(&deps, "hwsurvey");
    assert!(RUN_SIDE.iter().all(|c| binary.contains(*c)), "{binary:?}");
}

/// The crate that reads /proc and /sys.
const PROBE: &str = "hwsurvey-probe";

#[test]
fn documents_are_read_without_the_crate_that_reads_the_machine() {
    let deps = workspace_deps();
    for reader in [
        "hwsurvey-result",
        "hwsurvey-report",
        "hwsurvey-qualify",
        "hwsurvey-fleet",
    ] {
        let all = closure(&deps, reader);
        assert!(
            !all.contains(PROBE),
            "{reader} depends on {PROBE} (all its workspace dependencies: {all:?})"
        );
        assert!(
            all.contains("hwsurvey-machine"),
            "{reader} reads the machine document through hwsurvey-machine: {all:?}"
        );
    }
    // the machine document's crate does no I/O of the machine: no probe, no libc-level crates
    let machine = &deps["hwsurvey-machine"];
    for io in [PROBE, "nix", "procfs", "procfs-core", "raw-cpuid"] {
        assert!(
            !machine.contains(io),
            "hwsurvey-machine depends on {io}: {machine:?}"
        );
    }
    // and the check sees a real dependency: the probe is built on the machine document
    assert!(closure(&deps, PROBE).contains("hwsurvey-machine"));
    assert!(closure(&deps, "hwsurvey").contains(PROBE));
}

#[test]
fn the_engine_does_not_depend_on_the_workloads() {
    let deps = workspace_deps();
    let engine = closure(&deps, "hwsurvey-engine");
    assert!(
        !engine.contains("hwsurvey-workloads"),
        "hwsurvey-engine depends on hwsurvey-workloads: {engine:?}"
    );
    // the order below the engine: result, probe, model; and the workloads sit on the engine
    for below in ["hwsurvey-result", "hwsurvey-probe", "hwsurvey-model"] {
        assert!(engine.contains(below), "engine without {below}: {engine:?}");
    }
    assert!(closure(&deps, "hwsurvey-workloads").contains("hwsurvey-engine"));
    for lower in ["hwsurvey-result", "hwsurvey-probe", "hwsurvey-model"] {
        let all = closure(&deps, lower);
        let bad: Vec<_> = RUN_SIDE.iter().filter(|c| all.contains(**c)).collect();
        assert!(bad.is_empty(), "{lower} depends on {bad:?}");
    }
}

#[test]
fn no_dependency_cycles_between_workspace_crates() {
    let deps = workspace_deps();
    for name in deps.keys() {
        assert!(
            !closure(&deps, name).contains(name),
            "{name} depends on itself through {:?}",
            closure(&deps, name)
        );
    }
}

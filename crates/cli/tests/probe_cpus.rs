//! `hwsurvey probe --cpus` against `lscpu -e --sysroot` (util-linux) on the real captures in
//! `../shared/fixtures` and on this machine: the same CPU, NODE, SOCKET, CORE, L1d:L1i:L2:L3
//! instance ids, ONLINE, MAXMHZ and MINMHZ on every line (issue 35).
//!
//! Where they do not agree, by design (the fixtures' README): the Opteron 6276 (the probe
//! counts each core of a compute unit, as hwloc: 64 cores; lscpu pairs them as 32 cores of 2
//! threads), the UltraSPARC T1 (lscpu numbers an L1 per thread; the four threads of a core
//! share it), POWER7 (no `physical_package_id`: the probe leaves SOCKET unknown, lscpu numbers
//! the core_siblings sets), the big.LITTLE phone (lscpu numbers sockets and cores per core
//! type) and the s390 LPAR (lscpu reads books and drawers, and the CPU addresses, that the
//! probe does not number). Those are left out here.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use hwsurvey_testkit::peers::run;
use hwsurvey_testkit::{extract, fixtures, tool};

/// Columns compared: what both print with the same meaning.
const COLUMNS: &[&str] = &[
    "CPU", "NODE", "SOCKET", "CORE", "CACHE", "ONLINE", "MAXMHZ", "MINMHZ",
];

/// A table's rows as column name -> value (the cache column, named `L1d:L1i:...`, as `CACHE`).
fn rows(table: &str) -> Vec<BTreeMap<String, String>> {
    let mut lines = table.lines();
    let header: Vec<String> = lines
        .next()
        .expect("a header line")
        .split_whitespace()
        .map(|h| {
            if h.starts_with("L1") || h.starts_with("L2") {
                "CACHE".to_string()
            } else {
                h.to_string()
            }
        })
        .collect();
    lines
        .map(|l| {
            let values: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(values.len(), header.len(), "{l:?} under {header:?}");
            header
                .iter()
                .cloned()
                .zip(values.iter().map(|v| v.to_string()))
                .filter(|(h, _)| COLUMNS.contains(&h.as_str()))
                .collect()
        })
        .collect()
}

/// Compares `hwsurvey probe --cpus --root ROOT` with `lscpu -e --all --sysroot ROOT`.
fn same_as_lscpu(root: &Path, what: &str) {
    let ours = run(Command::new(env!("CARGO_BIN_EXE_hwsurvey")).args([
        "probe",
        "--cpus",
        "--root",
        &root.display().to_string(),
    ]));
    let mut lscpu = Command::new("lscpu");
    if root != Path::new("/") {
        lscpu.arg("--sysroot").arg(root);
    }
    let theirs = run(lscpu
        .args([
            "-e=CPU,NODE,SOCKET,CORE,CACHE,ONLINE,MAXMHZ,MINMHZ",
            "--all",
        ])
        .env("LC_ALL", "C"));
    let (a, b) = (rows(&ours), rows(&theirs));
    assert_eq!(a.len(), b.len(), "{what}: CPU lines\n{ours}\n{theirs}");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "{what}: probe --cpus against lscpu -e");
    }
}

#[test]
fn probe_cpus_matches_lscpu_e_on_the_captures() {
    let Some(fixtures) = fixtures() else { return };
    if !tool("lscpu") {
        return;
    }
    for (folder, archive) in [
        (
            "x86_64-firecracker-guest-epyc-2vcpu-thp-mthp",
            "firecracker-guest-capture.tar.gz",
        ),
        ("x86_64-amd-epyc7451-2s-8numa", "x86_64-epyc_7451.tar.gz"),
        (
            "x86_64-intel-2s-2numa-dmi-type17-raw",
            "32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2",
        ),
        (
            "x86_64-intel-xeon-x7550-4s-numa-holes",
            "x86_64-64cpu.tar.gz",
        ),
        (
            "x86_64-intel-raptorlake-hybrid-pe-cores",
            "20em64t-hybrid-1p6c2t+2ca4co1t.tar.bz2",
        ),
        (
            "aarch64-hisilicon-kunpeng920-2s-4numa-clusters",
            "128arm-2pa2n8cluster4co.tar.bz2",
        ),
    ] {
        let (_tmp, root) = extract(&fixtures.join(folder).join(archive));
        same_as_lscpu(&root, folder);
    }
}

#[test]
fn probe_cpus_matches_lscpu_e_on_this_machine() {
    if !tool("lscpu") || hwsurvey_testkit::under_qemu_user() {
        return;
    }
    same_as_lscpu(Path::new("/"), "this machine");
}

/// The columns of the table are the ones lscpu -e names, plus DIE and CLUSTER, and every
/// line has a value (or `-`) in each.
#[test]
fn probe_cpus_prints_every_column_on_every_line() {
    let Some(fixtures) = fixtures() else { return };
    let (_tmp, root) =
        extract(&fixtures.join("x86_64-amd-epyc7451-2s-8numa/x86_64-epyc_7451.tar.gz"));
    let out = run(Command::new(env!("CARGO_BIN_EXE_hwsurvey")).args([
        "probe",
        "--cpus",
        "--root",
        &root.display().to_string(),
    ]));
    let mut lines = out.lines();
    assert_eq!(
        lines.next().unwrap().split_whitespace().collect::<Vec<_>>(),
        [
            "CPU",
            "NODE",
            "SOCKET",
            "DIE",
            "CLUSTER",
            "CORE",
            "L1d:L1i:L2:L3",
            "ONLINE",
            "MAXMHZ",
            "MINMHZ"
        ]
    );
    // CPU 48 is the second thread of core 0 (package 0, node 0), L3 id 0, 2300/1200 MHz
    let cpu48 = lines
        .find(|l| l.trim_start().starts_with("48 "))
        .expect("CPU 48");
    assert_eq!(
        cpu48.split_whitespace().collect::<Vec<_>>(),
        [
            "48",
            "0",
            "0",
            "-",
            "-",
            "0",
            "0:0:0:0",
            "yes",
            "2300.0000",
            "1200.0000"
        ]
    );
    assert_eq!(out.lines().count(), 97);
}

//! Corrupting any single file of a real capture (emptied, truncated, garbage, removed) never
//! makes probing panic, and the output names the file in an unknown or a problem.
//!
//! Captures: the firecracker guest (THP, mTHP, hugetlb, NUMA, caches, cluster level) and the
//! UltraSPARC T1 (offline CPUs without topology, sparc64 per-CPU cache files, node cpumap).

use crate::topology_support;

use std::path::Path;

use hwsurvey_probe::{probe_machine, SysRoot};
use topology_support::*;

#[derive(Debug, Clone, Copy)]
enum Damage {
    Empty,
    Truncated,
    Garbage,
    Removed,
}

fn damage(host: &Path, original: &[u8], how: Damage) {
    match how {
        Damage::Empty => std::fs::write(host, b"").unwrap(),
        Damage::Truncated => std::fs::write(host, &original[..original.len() / 2]).unwrap(),
        Damage::Garbage => std::fs::write(host, b"\xff\xfegarbage -- 12x ]]\n").unwrap(),
        Damage::Removed => std::fs::remove_file(host).unwrap(),
    }
}

/// Files the CPU/NUMA/pages probes read (the memory/io/os modules have their own tests).
fn ours(path: &str) -> bool {
    let cpu_file = path
        .strip_prefix("/sys/devices/system/cpu/")
        .is_some_and(|rest| {
            ["possible", "present", "online", "offline"].contains(&rest)
                || (rest.starts_with("cpu")
                    && [
                        "/topology/",
                        "/cache/",
                        "/cpu_capacity",
                        "/regs/",
                        "/l1_",
                        "/l2_",
                        "/l3_",
                        "/acpi_cppc/",
                    ]
                    .iter()
                    .any(|k| rest.contains(k)))
        });
    cpu_file
        || path.starts_with("/sys/devices/system/node/")
        || path.starts_with("/sys/kernel/mm/")
        || path == "/proc/cpuinfo"
        || path == "/proc/self/status"
}

fn run(folder: &str) {
    let Some(c) = extract(folder) else { return };
    let root = SysRoot::new(&c.root);
    let _ = probe_machine(&root);
    let files: Vec<String> = root
        .accessed()
        .into_iter()
        .filter(|p| ours(p) && root.host_path(p).is_file())
        .collect();
    assert!(
        files.len() > 20,
        "{folder}: only {} files read",
        files.len()
    );
    // Every file natively; every 4th under qemu-user (scripts/cross-test sets
    // HWSURVEY_CORRUPT_STRIDE=4): the emulated suites are there for byte order and page size,
    // and the exhaustive pass is the native one.
    let stride: usize = std::env::var("HWSURVEY_CORRUPT_STRIDE")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|s| *s >= 1)
        .unwrap_or(1);
    if stride > 1 {
        println!(
            "{folder}: every {stride}th of {} files (HWSURVEY_CORRUPT_STRIDE)",
            files.len()
        );
    }
    let mut silent = Vec::new();
    for path in files.iter().step_by(stride) {
        let host = root.host_path(path);
        let original = std::fs::read(&host).unwrap();
        for how in [
            Damage::Empty,
            Damage::Truncated,
            Damage::Garbage,
            Damage::Removed,
        ] {
            // Emptying an empty file (e.g. `offline` with no offline CPUs) changes nothing.
            if !matches!(how, Damage::Removed)
                && String::from_utf8_lossy(&original).trim().is_empty()
            {
                continue;
            }
            // A truncated file that still reads as a value of its grammar ("64" -> "6",
            // "0-3" -> "0", "32K" -> "3") is a different but valid value: nothing can tell.
            if matches!(how, Damage::Truncated) && still_valid(&original[..original.len() / 2]) {
                continue;
            }
            damage(&host, &original, how);
            let m = std::panic::catch_unwind(|| probe_machine(&SysRoot::new(&c.root)))
                .unwrap_or_else(|_| panic!("{folder}: probe panicked with {path} {how:?}"));
            let json = serde_json::to_string(&m).unwrap();
            std::fs::write(&host, &original).unwrap();
            if !json.contains(path.as_str()) {
                silent.push(format!("{path} {how:?}"));
            }
        }
    }
    // Removing a file the kernel may legitimately lack (cpuN/online of the boot CPU,
    // an optional per-CPU attribute, khugepaged tunables) may go unmentioned; nothing else.
    let unexplained: Vec<&String> = silent
        .iter()
        .filter(|s| !(s.ends_with("Removed") && optional_when_absent(s)))
        .collect();
    assert!(
        unexplained.is_empty(),
        "{folder}: damage not named in the output: {unexplained:#?}"
    );
}

fn still_valid(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let t = text.trim();
    !t.is_empty()
        && (t.bytes().all(|b| b.is_ascii_digit())
            || (hwsurvey_model::CpuSet::parse_list(t).is_ok()
                && !t.ends_with('-')
                && !t.ends_with(','))
            || t.strip_suffix('K')
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            || hwsurvey_model::CpuSet::parse_mask(t).is_ok()
            || hwsurvey_probe::pages::parse_choice(t).is_some())
}

/// Files whose absence is normal on some kernels, so a missing one is no problem to report.
fn optional_when_absent(s: &str) -> bool {
    [
        "/cpu_capacity",
        "/cpufreq/",
        "/acpi_cppc/",
        "/regs/identification/",
        "/die_id",
        "/cluster_id",
        "/cluster_cpus_list",
        "/die_cpus_list",
        "/core_cpus_list",
        "/package_cpus_list",
        "/core_siblings_list",
        "/book_id",
        "/cache/index",
        "/khugepaged/",
        "/nr_overcommit_hugepages",
        "/proc/self/status",
        "/node/has_",
        "/node/online",
        "/node/possible",
        "/sys/devices/system/cpu/offline",
        "_line_size",
        // Lists with a mask twin: the probe falls back to the mask, the value is unchanged.
        "/thread_siblings_list",
        "/shared_cpu_list",
        "/cpulist",
    ]
    .iter()
    .any(|k| s.contains(k))
}

#[test]
fn corrupt_each_file_firecracker() {
    run("x86_64-firecracker-guest-epyc-2vcpu-thp-mthp");
}

#[test]
fn corrupt_each_file_ultrasparc_t1() {
    run("sparc64-ultrasparc-t1-offline");
}

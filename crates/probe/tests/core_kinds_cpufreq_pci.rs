//! Defects found by the probe tester (cpufreq lists, invented core kinds, missing topology,
//! empty roots, symlinks escaping the root, snapshot round trip, summary wording).

use crate::topology_support;

use hwsurvey_model::CpuSet;
use hwsurvey_probe::os::parse_cpufreq_cpus;
use topology_support::*;

fn set(s: &str) -> CpuSet {
    CpuSet::parse_list(s).expect("test list")
}

#[test]
fn cpufreq_cpus_are_space_separated() {
    assert_eq!(parse_cpufreq_cpus("0 1 2 \n"), Some(set("0-2")));
    assert_eq!(parse_cpufreq_cpus("7\n"), Some(set("7")));
    assert_eq!(parse_cpufreq_cpus("4 5 6 7"), Some(set("4-7")));
    // cpufreq never writes ranges, commas, signs or nothing.
    assert_eq!(parse_cpufreq_cpus("0-2"), None);
    assert_eq!(parse_cpufreq_cpus("0,1"), None);
    assert_eq!(parse_cpufreq_cpus("-1"), None);
    assert_eq!(parse_cpufreq_cpus(" \n"), None);
    // The kernel cpulist grammar of the other files stays strict.
    assert!(CpuSet::parse_list("0 1 2").is_err());
}

#[test]
fn biglittle_cpufreq_policies_cover_all_cpus() {
    let Some(cap) = extract("aarch64-biglittle-a510-a710-a715-x3") else {
        return;
    };
    let m = probe(&cap.root);
    let policies = m.os.cpufreq.known().cloned().expect("cpufreq known");
    let names: Vec<&str> = policies.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["policy0", "policy3", "policy7"]);
    let cpus: Vec<CpuSet> = policies
        .iter()
        .map(|p| p.cpus.known().cloned().expect("related_cpus known"))
        .collect();
    assert_eq!(cpus, [set("0-2"), set("3-6"), set("7")]);
    let all = cpus.iter().fold(CpuSet::new(), |a, s| a.union(s));
    assert_eq!(all, set("0-7"));
    for p in &policies {
        assert_eq!(p.governor.known().map(String::as_str), Some("walt"));
    }
}

#[test]
fn online_cpu_without_topology_is_listed_and_counts_say_incomplete() {
    let Some(cap) = extract("x86_64-firecracker-guest-epyc-2vcpu-thp-mthp") else {
        return;
    };
    let cpu1 = cap.root.join("sys/devices/system/cpu/cpu1/topology");
    std::fs::remove_dir_all(&cpu1).expect("remove cpu1/topology");
    let m = probe(&cap.root);
    assert_eq!(m.cpu.online.known(), Some(&set("0-1")));
    assert_eq!(m.cpu.topology.threads.known(), Some(&2));
    assert_eq!(m.cpu.topology.threads_with_topology, Some(1));
    assert!(
        m.cpu.problems.iter().any(|u| matches!(u,
            hwsurvey_model::Unknown::Missing { path } if path == "/sys/devices/system/cpu/cpu1/topology")),
        "{:?}",
        m.cpu.problems
    );
    let text = hwsurvey_probe::probe_text::topology_summary(&m);
    assert!(
        text.contains("Threads (online):    2, topology known for 1"),
        "{text}"
    );
    let unknowns = hwsurvey_probe::probe_text::unknowns_summary(&m);
    assert!(
        unknowns.contains("/sys/devices/system/cpu/cpu1/topology"),
        "{unknowns}"
    );
}

#[test]
fn summary_says_unknown_cache_sizes_once_and_counts_in_singular() {
    let Some(cap) = extract("x86_64-firecracker-guest-epyc-2vcpu-thp-mthp") else {
        return;
    };
    let mut m = probe(&cap.root);
    let cache = m.cpu.caches.first_mut().expect("a cache");
    let unknown = hwsurvey_model::Probed::Unknown(hwsurvey_model::Unknown::Missing {
        path: "/sys/devices/system/cpu/cpu1/cache".into(),
    });
    cache.size_bytes = unknown.clone();
    cache.total_bytes = unknown;
    cache.instances = 8;
    let pkg = m.cpu.topology.per_package.first_mut().expect("a package");
    pkg.cores = 1;
    pkg.threads = 1;
    let text = hwsurvey_probe::probe_text::topology_summary(&m);
    assert!(!text.contains("x 8 = unknown"), "{text}");
    assert!(
        text.contains("8 instances, size unknown (/sys/devices/system/cpu/cpu1/cache is missing)"),
        "{text}"
    );
    assert!(text.contains(": 1 core, 1 thread\n"), "{text}");
    assert!(
        !text.contains("1 threads") && !text.contains("1 cores"),
        "{text}"
    );
}

/// The kinds of the firecracker guest (2 vCPUs, equal) after `damage` to cpu1.
fn firecracker_kinds_after(damage: impl Fn(&std::path::Path)) -> Option<(String, usize)> {
    let cap = extract("x86_64-firecracker-guest-epyc-2vcpu-thp-mthp")?;
    damage(&cap.root.join("sys/devices/system/cpu/cpu1"));
    let m = probe(&cap.root);
    for k in &m.cpu.kinds {
        assert!(k.cores > 0, "a kind with 0 cores: {k:?}");
    }
    Some((
        hwsurvey_probe::probe_text::topology_summary(&m)
            + &hwsurvey_probe::probe_text::unknowns_summary(&m),
        m.cpu.kinds.len(),
    ))
}

#[test]
fn missing_cache_folder_never_invents_a_core_kind() {
    let Some((text, kinds)) = firecracker_kinds_after(|cpu1| {
        std::fs::remove_dir_all(cpu1.join("cache")).expect("remove cpu1/cache");
    }) else {
        return;
    };
    assert!(kinds <= 1, "{text}");
    assert!(
        !text.contains("P-core") && !text.contains("E-core"),
        "{text}"
    );
    assert!(!text.contains("0 cores"), "{text}");
    // The caches of that CPU are said to be unknown.
    assert!(
        text.contains("/sys/devices/system/cpu/cpu1/cache is missing"),
        "{text}"
    );
}

#[cfg(unix)]
#[test]
fn symlink_loop_at_a_cpu_never_prints_a_kind_with_0_cores() {
    let Some((text, kinds)) = firecracker_kinds_after(|cpu1| {
        std::fs::remove_dir_all(cpu1).expect("remove cpu1");
        std::os::unix::fs::symlink("cpu1", cpu1).expect("loop");
    }) else {
        return;
    };
    assert!(kinds <= 1, "{text}");
    assert!(
        !text.contains("E-core") && !text.contains("0 cores"),
        "{text}"
    );
    assert!(text.contains("topology known for 1"), "{text}");
}

/// Every function is listed, bridges by their role (they were counted apart as "not
/// listed"), or counted in the one line of the Intel uncore functions, and the two add up to
/// the count (with or without the PCI ID database on this machine).
#[test]
fn pci_lists_every_function_bridges_by_their_role() {
    let Some(cap) = extract("x86_64-intel-2s-2numa-dmi-type17-raw") else {
        return;
    };
    let m = probe(&cap.root);
    let text = hwsurvey_probe::io::summary(&m.io);
    assert!(text.contains("  PCI: 137 functions"), "{text}");
    let listed: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("    0000:"))
        .collect();
    assert_eq!(listed.len(), 137 - 114, "{text}");
    assert!(text.contains("\n    114 Intel uncore functions "), "{text}");
    // 8 root ports and the PCIe-to-PCI bridge by role; host bridges and the rest by class
    let role = |words: &str| listed.iter().filter(|l| l[16..].starts_with(words)).count();
    assert_eq!(role(" root port"), 8, "{text}");
    assert_eq!(role(" bridge"), 1, "{text}");
    assert!(text.contains("    0000:04:00.0 bridge"), "{text}");
}

/// Under qemu-user the kernel says x86_64 (/proc/sys/kernel/arch) while uname says aarch64; a
/// snapshot kept the former as its "uname machine", so its probe said x86_64 where the live
/// probe had said aarch64. The kept value is the one the architecture was read from.
#[test]
fn snapshot_keeps_the_uname_machine_not_the_kernel_arch_file() {
    use hwsurvey_probe::live::{LiveFacts, LIVE_FACTS_PATH};
    use hwsurvey_probe::{probe_machine, SysRoot};
    let dir = hwsurvey_testkit::scratch_tempdir();
    let root = dir.path();
    hwsurvey_testkit::write(root, "/proc/sys/kernel/arch", "x86_64\n");
    hwsurvey_testkit::write(root, "/sys/devices/system/cpu/online", "0\n");
    // the facts a snapshot taken under qemu-aarch64 keeps: uname said aarch64
    let mut facts =
        LiveFacts::from_machine(&probe_machine(&SysRoot::new(root)), &SysRoot::new(root));
    facts.kernel_machine = Some(hwsurvey_model::Probed::Known("aarch64".to_string()));
    hwsurvey_testkit::write(
        root,
        LIVE_FACTS_PATH,
        &serde_json::to_string(&facts).unwrap(),
    );
    let source = SysRoot::new(root);
    let m = probe_machine(&source);
    assert_eq!(
        m.cpu.arch,
        hwsurvey_probe::cpu::Arch::Aarch64,
        "{}",
        m.cpu.arch_source
    );
    assert_eq!(
        m.os.kernel.machine.known().map(String::as_str),
        Some("x86_64")
    );
    let kept = LiveFacts::from_machine(&m, &source).kernel_machine.unwrap();
    assert_eq!(kept.known().map(String::as_str), Some("aarch64"));
}

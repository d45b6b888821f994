//! Known faults of other probes (../shared/bugs), CPU/NUMA/pages side: B02 B03 B06 B07 B08 B10.
//! The sysfs listings there are summaries, so each test builds its tree from the facts and
//! asserts the value a correct probe gives; a second case per bug covers the rest of the kind.

use crate::topology_support;

use hwsurvey_model::units::{GIB, MIB};
use hwsurvey_model::{CpuSet, Probed};
use hwsurvey_probe::cpu::CacheType;
use hwsurvey_probe::process::parse_status;
use topology_support::*;

fn set(s: &str) -> CpuSet {
    CpuSet::parse_list(s).expect("test list")
}

fn known<T: Clone + std::fmt::Debug>(p: &Probed<T>) -> T {
    p.known()
        .cloned()
        .unwrap_or_else(|| panic!("expected a known value, got {p:?}"))
}

const CPU: &str = "/sys/devices/system/cpu";

/// Topology files of one CPU.
fn topo(
    cpu: u32,
    package: i64,
    core: i64,
    siblings: &str,
    extra: &[(&str, String)],
) -> Vec<(String, String)> {
    let mut v = vec![
        f(
            format!("{CPU}/cpu{cpu}/topology/physical_package_id"),
            format!("{package}\n"),
        ),
        f(
            format!("{CPU}/cpu{cpu}/topology/core_id"),
            format!("{core}\n"),
        ),
        f(
            format!("{CPU}/cpu{cpu}/topology/thread_siblings_list"),
            format!("{siblings}\n"),
        ),
    ];
    for (name, text) in extra {
        v.push(f(format!("{CPU}/cpu{cpu}/topology/{name}"), text.clone()));
    }
    v
}

/// B02: an S922X (2x Cortex-A53 + 4x Cortex-A73) is not "2 sockets x 3 cores" of A53.
#[test]
fn b02_big_little_reported_per_kind() {
    let Some(cpuinfo) = bug_text("B02", "cpuinfo.txt") else {
        return;
    };
    let listing = bug_text("B02", "sysfs-listing.txt").unwrap();
    assert!(listing.contains("cpu2/topology/core_siblings_list: 2-5"));
    // The old kernel's two core_siblings groups (0-1, 2-5) came with two package ids (lscpu
    // printed 2 sockets): the DT cpu-map clusters.
    let mut files = vec![
        f("/proc/cpuinfo", cpuinfo.clone()),
        f(format!("{CPU}/online"), "0-5\n"),
        f(format!("{CPU}/possible"), "0-5\n"),
    ];
    for cpu in 0..6u32 {
        let (pkg, group) = if cpu < 2 { (0, "0-1") } else { (1, "2-5") };
        files.extend(topo(
            cpu,
            pkg,
            cpu as i64,
            &cpu.to_string(),
            &[("core_siblings_list", format!("{group}\n"))],
        ));
    }
    let dir = tree(&files);
    let m = probe(dir.path());
    let t = &m.cpu.topology;
    assert_eq!(known(&m.cpu.online).len(), 6);
    assert_eq!(known(&t.packages), 1, "one SoC");
    assert_eq!(known(&t.clusters), 2);
    assert_eq!(t.cores_by_threads.get(&1), Some(&6));
    let kinds: Vec<(String, CpuSet, u32, String)> = m
        .cpu
        .kinds
        .iter()
        .map(|k| {
            (
                k.name.clone(),
                k.cpus.clone(),
                k.cores,
                k.midr.map(|m| m.revision_string()).unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            (
                "ARM Cortex-A53".to_string(),
                set("0-1"),
                2,
                "r0p4".to_string()
            ),
            (
                "ARM Cortex-A73".to_string(),
                set("2-5"),
                4,
                "r0p2".to_string()
            ),
        ]
    );
    assert!(m
        .cpu
        .identity
        .model_name
        .as_deref()
        .unwrap_or("")
        .contains("A53 + ARM Cortex-A73"));

    // The same SoC on a kernel with a cluster level (package 0 everywhere, cluster_cpus_list).
    let mut files = vec![
        f("/proc/cpuinfo", cpuinfo),
        f(format!("{CPU}/online"), "0-5\n"),
    ];
    for cpu in 0..6u32 {
        let group = if cpu < 2 { "0-1" } else { "2-5" };
        files.extend(topo(
            cpu,
            0,
            cpu as i64,
            &cpu.to_string(),
            &[("cluster_cpus_list", format!("{group}\n"))],
        ));
    }
    let dir = tree(&files);
    let m = probe(dir.path());
    assert_eq!(known(&m.cpu.topology.packages), 1);
    assert_eq!(known(&m.cpu.topology.clusters), 2);
    assert_eq!(m.cpu.kinds.len(), 2);
    assert_eq!(m.cpu.kinds[1].cores, 4);
}

fn cache_files(
    cpu: u32,
    index: u32,
    level: u8,
    ty: &str,
    size: &str,
    id: Option<u32>,
    shared: &str,
) -> Vec<(String, String)> {
    let d = format!("{CPU}/cpu{cpu}/cache/index{index}");
    let mut v = vec![
        f(format!("{d}/level"), format!("{level}\n")),
        f(format!("{d}/type"), format!("{ty}\n")),
        f(format!("{d}/size"), format!("{size}\n")),
        f(format!("{d}/shared_cpu_list"), format!("{shared}\n")),
        f(format!("{d}/coherency_line_size"), "64\n".to_string()),
    ];
    if let Some(id) = id {
        v.push(f(format!("{d}/id"), format!("{id}\n")));
    }
    v
}

/// B03: a Ryzen 5 1600 has 2 L3 (ids 0 and 1), not 3 (pre-4.14 shared_cpu_list 0-5, 6-9, 10-11).
#[test]
fn b03_l3_grouped_by_cache_id() {
    let Some(listing) = bug_text("B03", "sysfs-listing.txt") else {
        return;
    };
    let mut files = vec![f(format!("{CPU}/online"), "0-11\n")];
    let mut rows = 0;
    for line in listing.lines().filter(|l| l.starts_with("cpu")) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let cpu: u32 = cols[0].trim_start_matches("cpu").parse().unwrap();
        let id: u32 = cols[1].parse().unwrap();
        files.extend(cache_files(
            cpu,
            3,
            3,
            "Unified",
            "8192K",
            Some(id),
            cols[2],
        ));
        // L2 per core (2 threads), also with ids: the whole kind is grouping by id at every level.
        files.extend(cache_files(
            cpu,
            2,
            2,
            "Unified",
            "512K",
            Some(cpu / 2),
            &format!("{}-{}", cpu / 2 * 2, cpu / 2 * 2 + 1),
        ));
        rows += 1;
    }
    assert_eq!(rows, 12);
    let dir = tree(&files);
    let m = probe(dir.path());
    let l3 = caches(&m, 3, CacheType::Unified);
    assert_eq!(l3.len(), 1);
    assert_eq!(l3[0].instances, 2);
    assert_eq!(known(&l3[0].total_bytes), 16 * MIB);
    assert_eq!(l3[0].instance_cpus, vec![set("0-5"), set("6-11")]);
    assert_eq!(l3[0].grouped_by, "cache id");
    let l2 = caches(&m, 2, CacheType::Unified);
    assert_eq!((l2[0].instances, known(&l2[0].total_bytes)), (6, 3 * MIB));
}

/// B06: 2 sockets x 2 cores with core_id 0,1,0,1 are 4 physical cores, not 2.
#[test]
fn b06_cores_counted_per_package() {
    let Some(listing) = bug_text("B06", "sysfs-listing.txt") else {
        return;
    };
    let mut facts: Vec<(u32, i64, i64)> = Vec::new();
    for cpu in 0..4u32 {
        let find = |key: &str| -> i64 {
            let prefix = format!("cpu{cpu}/topology/{key}:");
            listing
                .lines()
                .find_map(|l| l.strip_prefix(&prefix))
                .and_then(|v| v.trim().parse().ok())
                .expect("listed")
        };
        facts.push((cpu, find("physical_package_id"), find("core_id")));
    }
    assert_eq!(facts, vec![(0, 0, 0), (1, 0, 1), (2, 1, 0), (3, 1, 1)]);
    // With thread_siblings_list.
    let mut files = vec![f(format!("{CPU}/online"), "0-3\n")];
    for (cpu, pkg, core) in &facts {
        files.extend(topo(*cpu, *pkg, *core, &cpu.to_string(), &[]));
    }
    let dir = tree(&files);
    let m = probe(dir.path());
    let t = &m.cpu.topology;
    assert_eq!((known(&t.cores), known(&t.packages)), (4, 2));
    assert_eq!(t.cores_by_threads.get(&1), Some(&4));
    assert!(t.per_package.iter().all(|p| p.cores == 2));
    // The rest of the kind: without sibling lists, (package, core_id) pairs still give 4.
    let mut files = vec![f(format!("{CPU}/online"), "0-3\n")];
    for (cpu, pkg, core) in &facts {
        files.push(f(
            format!("{CPU}/cpu{cpu}/topology/physical_package_id"),
            format!("{pkg}\n"),
        ));
        files.push(f(
            format!("{CPU}/cpu{cpu}/topology/core_id"),
            format!("{core}\n"),
        ));
    }
    let dir = tree(&files);
    let m = probe(dir.path());
    assert_eq!(known(&m.cpu.topology.cores), 4);
}

/// B07: `Cpus_allowed_list: 0-3,8` is CPUs 0, 1, 2, 3 and 8; the whole cpulist grammar.
#[test]
fn b07_allowed_list_full_grammar() {
    let Some(status) = bug_text("B07", "proc-status.txt") else {
        return;
    };
    let allowed = parse_status(&status)
        .cpus_allowed
        .expect("line")
        .expect("parses");
    assert_eq!(allowed.iter().collect::<Vec<_>>(), vec![0, 1, 2, 3, 8]);
    // Through the probe: the process's allowed set, never the host's full set.
    let dir = tree(&[
        f("/proc/self/status", status),
        f(format!("{CPU}/online"), "0-15\n"),
    ]);
    let m = probe(dir.path());
    assert_eq!(known(&m.cpu.allowed.status_cpus), set("0-3,8"));
    // Every case of cpulist-cases.txt.
    let cases = bug_text("B07", "cpulist-cases.txt").unwrap();
    let mut checked = 0;
    for line in cases
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains("->"))
    {
        let (input, expected) = line.split_once("->").unwrap();
        let input = input.trim_end();
        let input = if input.trim() == "(empty)" { "" } else { input };
        let expected = expected.trim();
        if let Some(list) = expected.strip_prefix('[') {
            let list = list.split(']').next().unwrap();
            let want: Vec<u32> = list
                .split(',')
                .filter(|s| !s.trim().is_empty())
                .map(|s| s.trim().parse().unwrap())
                .collect();
            let got = CpuSet::parse_list(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(got.iter().collect::<Vec<_>>(), want, "{input:?}");
        } else {
            for bad in input.split('|') {
                assert!(
                    CpuSet::parse_list(bad.trim()).is_err(),
                    "{bad:?} must be rejected"
                );
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 8);
    // A bad list in the status file is an unknown naming the file, not "all CPUs".
    let dir = tree(&[f("/proc/self/status", "Cpus_allowed_list:\t3-1\n")]);
    let m = probe(dir.path());
    let why = m
        .cpu
        .allowed
        .status_cpus
        .why_unknown()
        .expect("unknown")
        .to_string();
    assert!(
        why.contains("/proc/self/status") && why.contains("3-1"),
        "{why}"
    );
}

/// B08: A64FX FX1000 with offline CPUs 2-11, assistant cores 0-1 outside the job cpuset, and
/// memory-only nodes 2 and 3.
#[test]
fn b08_offline_cpus_and_memory_only_nodes() {
    let Some(numactl) = bug_text("B08", "numactl-hardware.txt") else {
        return;
    };
    let listing = bug_text("B08", "sysfs-listing.txt").unwrap();
    let value = |key: &str| -> String {
        listing
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(|v| v.trim().to_string())
            .expect("listed")
    };
    let mut files = vec![
        f(
            format!("{CPU}/present"),
            value("/sys/devices/system/cpu/present:"),
        ),
        f(
            format!("{CPU}/possible"),
            value("/sys/devices/system/cpu/present:"),
        ),
        f(
            format!("{CPU}/online"),
            value("/sys/devices/system/cpu/online:"),
        ),
        f(
            format!("{CPU}/offline"),
            value("/sys/devices/system/cpu/offline:"),
        ),
        f(
            "/proc/self/status",
            format!(
                "Cpus_allowed_list:\t{}\n",
                value("/proc/self/status Cpus_allowed_list:")
            ),
        ),
        f(
            "/sys/devices/system/node/has_cpu",
            value("/sys/devices/system/node/has_cpu:"),
        ),
        f(
            "/sys/devices/system/node/has_memory",
            value("/sys/devices/system/node/has_memory:"),
        ),
    ];
    let online = set(&value("/sys/devices/system/cpu/online:"));
    for cpu in 0..60u32 {
        // Offline CPUs have a cpuN folder but no topology folder.
        files.push(f(
            format!("{CPU}/cpu{cpu}/online"),
            format!("{}\n", u8::from(online.contains(cpu))),
        ));
        if online.contains(cpu) {
            files.extend(topo(cpu, 0, cpu as i64, &cpu.to_string(), &[]));
        }
    }
    // Nodes from numactl -H (its MB are MiB: size = MemTotal kB / 1024).
    let mut distance_rows: Vec<String> = Vec::new();
    let mut in_matrix = false;
    for line in numactl.lines() {
        if line.starts_with("node distances") {
            in_matrix = true;
            continue;
        }
        if in_matrix {
            if let Some((_, row)) = line.split_once(':') {
                distance_rows.push(row.split_whitespace().collect::<Vec<_>>().join(" "));
            }
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() >= 3 && words[0] == "node" {
            let n = words[1];
            let d = format!("/sys/devices/system/node/node{n}");
            match words[2] {
                "cpus:" => files.push(f(
                    format!("{d}/cpulist"),
                    format!(
                        "{}\n",
                        CpuSet::from_iter(words[3..].iter().map(|w| w.parse::<u32>().unwrap()))
                            .to_list_string()
                    ),
                )),
                "size:" => {
                    let mib: u64 = words[3].parse().unwrap();
                    files.push(f(
                        format!("{d}/meminfo"),
                        format!(
                            "Node {n} MemTotal: {} kB\nNode {n} MemFree: 0 kB\n",
                            mib * 1024
                        ),
                    ));
                }
                _ => {}
            }
        }
    }
    assert_eq!(distance_rows.len(), 8);
    for (i, row) in distance_rows.iter().enumerate() {
        files.push(f(
            format!("/sys/devices/system/node/node{i}/distance"),
            format!("{row}\n"),
        ));
    }
    let dir = tree(&files);
    let m = probe(dir.path());
    assert_eq!(known(&m.cpu.present).len(), 60);
    assert_eq!(known(&m.cpu.online).len(), 50);
    assert_eq!(known(&m.cpu.offline), set("2-11"));
    assert_eq!(known(&m.cpu.present_offline).len(), 10);
    assert_eq!(known(&m.cpu.allowed.status_cpus).len(), 48);
    assert_eq!(m.cpu.topology.threads.known(), Some(&50));
    assert_eq!(m.cpu.cpus.len(), 60, "every CPU folder, by OS number");
    assert_eq!(m.numa.nodes.len(), 8);
    let memory_only: Vec<u32> = m
        .numa
        .nodes
        .iter()
        .filter(|n| n.memory_only)
        .map(|n| n.node)
        .collect();
    assert_eq!(memory_only, vec![2, 3]);
    assert_eq!(known(&m.numa.nodes[2].memory_total_bytes), 765 * MIB);
    assert_eq!(known(&m.numa.nodes[3].memory_total_bytes), 759 * MIB);
    let per_node: Vec<usize> = m.numa.nodes.iter().map(|n| known(&n.cpus).len()).collect();
    assert_eq!(per_node, vec![1, 1, 0, 0, 12, 12, 12, 12], "not uniform");
    let d = known(&m.numa.distances);
    assert_eq!(d.matrix[2], vec![30, 30, 10, 20, 60, 60, 40, 50]);
    assert_eq!(d.nodes, (0..8).collect::<Vec<u32>>());
}

fn pool(dir: &str, total: u64, free: u64, system: bool) -> Vec<(String, String)> {
    let mut v = vec![
        f(format!("{dir}/nr_hugepages"), format!("{total}\n")),
        f(format!("{dir}/free_hugepages"), format!("{free}\n")),
        f(format!("{dir}/surplus_hugepages"), "0\n".to_string()),
    ];
    if system {
        v.push(f(format!("{dir}/resv_hugepages"), "0\n".to_string()));
        v.push(f(
            format!("{dir}/nr_overcommit_hugepages"),
            "0\n".to_string(),
        ));
    }
    v
}

/// B10: 2 x 1 GiB + 1024 x 2 MiB is 4096 MiB of huge pages (2048 MiB per node), not 2048.
#[test]
fn b10_hugepages_all_sizes_summed() {
    let Some(meminfo) = bug_text("B10", "meminfo.txt") else {
        return;
    };
    let listing = bug_text("B10", "sysfs-listing.txt").unwrap();
    let mut files = vec![f("/proc/meminfo", meminfo)];
    files.extend(pool(
        "/sys/kernel/mm/hugepages/hugepages-1048576kB",
        2,
        2,
        true,
    ));
    files.extend(pool(
        "/sys/kernel/mm/hugepages/hugepages-2048kB",
        1024,
        1024,
        true,
    ));
    for line in listing.lines().filter(|l| l.starts_with("/sys/")) {
        let (path, n) = line.split_once(": ").unwrap();
        let n: u64 = n.trim().parse().unwrap();
        let dir = path.trim_end_matches("/nr_hugepages");
        files.extend(pool(dir, n, n, false));
    }
    let dir = tree(&files);
    let m = probe(dir.path());
    let p = &m.pages;
    assert_eq!(
        known(&p.default_hugepage_size_bytes),
        GIB,
        "Hugepagesize shows only the default"
    );
    assert_eq!(known(&p.hugetlb_total_bytes), 4096 * MIB);
    assert_eq!(
        known(&p.hugetlb_total_bytes),
        4_194_304 * 1024,
        "= Hugetlb: 4194304 kB"
    );
    let per_node: Vec<(u32, u64)> = p
        .hugetlb_per_node
        .iter()
        .map(|n| (n.node, known(&n.total_bytes)))
        .collect();
    assert_eq!(per_node, vec![(0, 2048 * MIB), (1, 2048 * MIB)]);
    let sizes: Vec<(u64, u64)> = p
        .hugetlb
        .iter()
        .map(|h| (h.system.page_size_bytes, known(&h.system.total_pages)))
        .collect();
    assert_eq!(sizes, vec![(2 * MIB, 1024), (GIB, 2)]);
    assert_eq!(p.hugetlb[1].per_node.len(), 2);

    // The rest of the kind: three sizes at once (aarch64 4 KiB-page sizes), including 64 KiB.
    let mut files = Vec::new();
    files.extend(pool("/sys/kernel/mm/hugepages/hugepages-64kB", 16, 0, true));
    files.extend(pool(
        "/sys/kernel/mm/hugepages/hugepages-2048kB",
        3,
        1,
        true,
    ));
    files.extend(pool(
        "/sys/kernel/mm/hugepages/hugepages-32768kB",
        1,
        1,
        true,
    ));
    let dir = tree(&files);
    let m = probe(dir.path());
    assert_eq!(
        known(&m.pages.hugetlb_total_bytes),
        16 * 64 * 1024 + 3 * 2 * MIB + 32 * MIB
    );
    assert_eq!(known(&m.pages.hugetlb_free_bytes), 2 * MIB + 32 * MIB);
}

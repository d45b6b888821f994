//! One test per real capture in ../shared/fixtures (CPU, NUMA and pages side), asserting the
//! facts of fixtures/README.md and, where the peer tool's output (expected-lscpu,
//! expected-lstopo) says more, that too. Deliberate differences are explained in comments.

use crate::topology_support;

use hwsurvey_model::units::{GIB, KIB, MIB};
use hwsurvey_model::{CpuSet, NodeSet, Probed};
use hwsurvey_probe::cpu::{cpuinfo, Arch, CacheType};
use topology_support::*;

fn set(s: &str) -> CpuSet {
    CpuSet::parse_list(s).expect("test list")
}

fn known<T: Clone + std::fmt::Debug>(p: &Probed<T>) -> T {
    p.known()
        .cloned()
        .unwrap_or_else(|| panic!("expected a known value, got {p:?}"))
}

/// Counts lines of a peer lstopo output that contain all the given words.
fn lstopo_count(text: &str, words: &[&str]) -> usize {
    text.lines()
        .filter(|l| words.iter().all(|w| l.contains(w)))
        .count()
}

fn one_cache(m: &hwsurvey_probe::Machine, level: u8, ty: CacheType) -> hwsurvey_probe::cpu::Cache {
    let v = caches(m, level, ty);
    assert_eq!(v.len(), 1, "one L{level} {ty:?} entry: {v:?}");
    v[0].clone()
}

#[test]
fn epyc7451_2s_8numa() {
    let Some(c) = extract("x86_64-amd-epyc7451-2s-8numa") else {
        return;
    };
    let m = probe(&c.root);
    assert_eq!(m.cpu.arch, Arch::X86_64);
    assert_eq!(known(&m.cpu.online), set("0-95"));
    let t = &m.cpu.topology;
    assert_eq!(known(&t.packages), 2);
    assert_eq!(known(&t.cores), 48);
    assert_eq!(
        t.cores_by_threads.get(&2),
        Some(&48),
        "48 cores x 2 threads"
    );
    assert!(t
        .per_package
        .iter()
        .all(|p| p.cores == 24 && p.threads == 48));
    assert_eq!(m.numa.nodes.len(), 8);
    assert_eq!(known(&m.numa.nodes[0].cpus), set("0-5,48-53"));
    assert_eq!(known(&m.numa.nodes[7].cpus), set("42-47,90-95"));
    // L3 8 MiB per 3-core CCX, 16 instances, 128 MiB; L2 512 KiB per core (lscpu: 24 MiB, 48).
    let l3 = one_cache(&m, 3, CacheType::Unified);
    assert_eq!(
        (known(&l3.size_bytes), l3.instances, known(&l3.total_bytes)),
        (8 * MIB, 16, 128 * MIB)
    );
    assert_eq!(l3.grouped_by, "cache id");
    let l2 = one_cache(&m, 2, CacheType::Unified);
    assert_eq!((known(&l2.size_bytes), l2.instances), (512 * KIB, 48));
    // expected-lscpu: "L1d cache: 1.5 MiB (48 instances)", "L1i cache: 3 MiB (48 instances)".
    let l1d = one_cache(&m, 1, CacheType::Data);
    assert_eq!((known(&l1d.total_bytes), l1d.instances), (1536 * KIB, 48));
    let l1i = one_cache(&m, 1, CacheType::Instruction);
    assert_eq!((known(&l1i.total_bytes), l1i.instances), (3 * MIB, 48));
    // No node distance or hugepage files in the dump: unknown, not zero.
    assert!(m.numa.distances.known().is_none());
    assert!(m.pages.hugetlb_total_bytes.known().is_none());
    assert_eq!(
        m.cpu.identity.model_name.as_deref(),
        Some("AMD EPYC 7451 24-Core Processor")
    );
    assert_eq!(
        (m.cpu.identity.family, m.cpu.identity.model),
        (Some(23), Some(1))
    );
}

#[test]
fn xeon_x7550_4s_numa_holes() {
    let Some(c) = extract("x86_64-intel-xeon-x7550-4s-numa-holes") else {
        return;
    };
    let m = probe(&c.root);
    assert_eq!(known(&m.cpu.possible), set("0-79"));
    assert_eq!(known(&m.cpu.present), set("0-63"));
    assert_eq!(
        known(&m.cpu.offline),
        set("64-79"),
        "16 possible but not present"
    );
    assert_eq!(known(&m.cpu.present_offline), CpuSet::new());
    let t = &m.cpu.topology;
    assert_eq!(known(&t.packages), 4);
    assert_eq!(known(&t.cores), 32);
    assert_eq!(t.cores_by_threads.get(&2), Some(&32));
    let ids: Vec<u32> = m.numa.nodes.iter().map(|n| n.node).collect();
    assert_eq!(ids, vec![0, 2, 3]);
    assert_eq!(m.numa.id_holes, NodeSet::parse_list("1").unwrap());
    // expected-lscpu: node0 0-62:2, node2 1-61:4, node3 3-63:4.
    assert_eq!(
        known(&m.numa.nodes[0].cpus),
        CpuSet::parse_list("0-62:1/2").unwrap()
    );
    assert_eq!(
        known(&m.numa.nodes[1].cpus),
        CpuSet::parse_list("1-61:1/4").unwrap()
    );
    assert_eq!(
        known(&m.numa.nodes[2].cpus),
        CpuSet::parse_list("3-63:1/4").unwrap()
    );
    // node0 holds CPUs of two packages.
    let node0 = known(&m.numa.nodes[0].cpus);
    let pkgs: std::collections::BTreeSet<i64> = m
        .cpu
        .cpus
        .iter()
        .filter(|c| node0.contains(c.cpu))
        .filter_map(|c| c.package_id)
        .collect();
    assert_eq!(pkgs.len(), 2, "node0 spans two packages: {pkgs:?}");
    let l3 = one_cache(&m, 3, CacheType::Unified);
    assert_eq!(
        (known(&l3.size_bytes), l3.instances, known(&l3.total_bytes)),
        (18 * MIB, 4, 72 * MIB)
    );
    // expected-lscpu: L1d 1 MiB (32 instances), L2 8 MiB (32 instances).
    let l2 = one_cache(&m, 2, CacheType::Unified);
    assert_eq!((known(&l2.total_bytes), l2.instances), (8 * MIB, 32));
}

#[test]
fn opteron_bulldozer_4s_8numa() {
    let Some(c) = extract("x86_64-amd-opteron-bulldozer-4s-8numa") else {
        return;
    };
    let m = probe(&c.root);
    let t = &m.cpu.topology;
    assert_eq!(known(&t.packages), 4);
    assert_eq!(m.numa.nodes.len(), 8);
    // Decision (cpu.rs module docs): like hwloc, 64 cores of 1 thread; the kernel's
    // thread_siblings pairs are compute units, named in a note. A naive probe says 32 x 2.
    assert_eq!(known(&t.cores), 64);
    assert_eq!(t.cores_by_threads.get(&1), Some(&64));
    assert!(
        t.notes.iter().any(|n| n.contains("compute units")),
        "{:?}",
        t.notes
    );
    let peer = fixture_text(
        "x86_64-amd-opteron-bulldozer-4s-8numa",
        "expected-lstopo-v.txt",
    )
    .unwrap();
    assert_eq!(lstopo_count(&peer, &["Core L#"]), 64);
    assert_eq!(lstopo_count(&peer, &["Package L#"]), 4);
    // L2 2 MiB and L1i 64 KiB per compute unit (32), L1d 16 KiB per core (64), L3 6 MiB per 8 cores.
    let l2 = one_cache(&m, 2, CacheType::Unified);
    assert_eq!((known(&l2.size_bytes), l2.instances), (2 * MIB, 32));
    assert_eq!(
        l2.instances as usize,
        lstopo_count(&peer, &["L2Cache L#", "size=2048KiB"])
    );
    let l1i = one_cache(&m, 1, CacheType::Instruction);
    assert_eq!((known(&l1i.size_bytes), l1i.instances), (64 * KIB, 32));
    let l1d = one_cache(&m, 1, CacheType::Data);
    assert_eq!((known(&l1d.size_bytes), l1d.instances), (16 * KIB, 64));
    let l3 = one_cache(&m, 3, CacheType::Unified);
    assert_eq!((known(&l3.size_bytes), l3.instances), (6 * MIB, 8));
    assert!(l3.instance_cpus.iter().all(|s| s.len() == 8));
    // Node5 has 8 GiB, the others 16 GiB (MemTotal, KiB x 1024; lstopo rounds the same way).
    for n in &m.numa.nodes {
        let mem = known(&n.memory_total_bytes);
        if n.node == 5 {
            assert_eq!(mem, 8 * GIB);
        } else {
            assert!(mem > 15 * GIB && mem <= 16 * GIB, "node{} {mem}", n.node);
        }
    }
    let d = known(&m.numa.distances);
    assert_eq!(d.matrix[0], vec![10, 16, 16, 22, 16, 22, 16, 22]);
    assert_eq!(d.matrix.len(), 8);
    for i in 0..8 {
        for j in 0..8 {
            assert_eq!(d.matrix[i][j], d.matrix[j][i], "symmetric");
        }
    }
}

#[test]
fn intel_2s_2numa_dmi_cpu_numa_side() {
    let Some(c) = extract("x86_64-intel-2s-2numa-dmi-type17-raw") else {
        return;
    };
    let m = probe(&c.root);
    assert_eq!(known(&m.cpu.possible), set("0-127"));
    assert_eq!(known(&m.cpu.present), set("0-15"));
    assert_eq!(known(&m.cpu.online), set("0-15"));
    let t = &m.cpu.topology;
    assert_eq!(known(&t.packages), 2);
    assert_eq!(known(&t.cores), 16, "HT off: 16 cores of 1 thread");
    assert_eq!(t.cores_by_threads.get(&1), Some(&16));
    assert_eq!(m.numa.nodes.len(), 2);
    let d = known(&m.numa.distances);
    assert_eq!(d.matrix, vec![vec![10, 21], vec![21, 10]]);
    assert!(m
        .cpu
        .identity
        .model_name
        .as_deref()
        .unwrap_or("")
        .contains("E5-2680"));
}

#[test]
fn raptorlake_hybrid_two_kinds() {
    let folder = "x86_64-intel-raptorlake-hybrid-pe-cores";
    let Some(c) = extract(folder) else { return };
    let m = probe(&c.root);
    let t = &m.cpu.topology;
    assert_eq!(known(&t.packages), 1);
    assert_eq!(known(&m.cpu.online).len(), 20);
    assert_eq!(known(&t.cores), 14);
    // Never an average: 6 cores x 2 threads and 8 cores x 1 thread.
    assert_eq!(t.cores_by_threads.get(&2), Some(&6));
    assert_eq!(t.cores_by_threads.get(&1), Some(&8));
    assert_eq!(m.cpu.kinds.len(), 2, "{:#?}", m.cpu.kinds);
    let p = &m.cpu.kinds[0];
    let e = &m.cpu.kinds[1];
    assert_eq!(
        (p.cpus.clone(), p.cores, p.threads_per_core),
        (set("0-11"), 6, 2)
    );
    assert_eq!(
        (e.cpus.clone(), e.cores, e.threads_per_core),
        (set("12-19"), 8, 1)
    );
    assert!(p.name.contains("P-core") && e.name.contains("E-core"));
    // expected-lstopo: "CPU kind #0 efficiency 0 cpuset 0x000ff000", "#1 efficiency 1 0x00000fff".
    assert_eq!((e.performance_rank, p.performance_rank), (0, 1));
    // E-cores sit in 2 clusters of 4.
    let e_clusters: std::collections::BTreeSet<i64> = m
        .cpu
        .cpus
        .iter()
        .filter(|c| e.cpus.contains(c.cpu))
        .filter_map(|c| c.cluster_id)
        .collect();
    assert_eq!(e_clusters.len(), 2);
    // L3 24 MiB shared; L2 1280 KiB per P-core and 2 MiB per E-core cluster.
    let l3 = one_cache(&m, 3, CacheType::Unified);
    assert_eq!((known(&l3.size_bytes), l3.instances), (24 * MIB, 1));
    let l2 = caches(&m, 2, CacheType::Unified);
    let l2: Vec<(u64, u32)> = l2
        .iter()
        .map(|c| (known(&c.size_bytes), c.instances))
        .collect();
    assert!(
        l2.contains(&(1280 * KIB, 6)) && l2.contains(&(2 * MIB, 2)),
        "{l2:?}"
    );
    let peer = fixture_text(folder, "expected-lstopo-v.txt").unwrap();
    assert_eq!(lstopo_count(&peer, &["L2Cache L#", "size=1280KiB"]), 6);
    assert_eq!(lstopo_count(&peer, &["L2Cache L#", "size=2048KiB"]), 2);
    let l1d: Vec<(u64, u32)> = caches(&m, 1, CacheType::Data)
        .iter()
        .map(|c| (known(&c.size_bytes), c.instances))
        .collect();
    assert!(
        l1d.contains(&(48 * KIB, 6)) && l1d.contains(&(32 * KIB, 8)),
        "{l1d:?}"
    );
    assert_eq!(lstopo_count(&peer, &["L1dCache L#", "size=48KiB"]), 6);
}

#[test]
fn firecracker_pages_and_thp() {
    let Some(c) = extract("x86_64-firecracker-guest-epyc-2vcpu-thp-mthp") else {
        return;
    };
    let m = probe(&c.root);
    let thp = &m.pages.thp;
    assert_eq!(known(&thp.enabled).selected, "madvise");
    assert_eq!(known(&thp.defrag).selected, "madvise");
    assert_eq!(known(&thp.pmd_size_bytes), 2_097_152);
    let size = |kib: u64| {
        thp.sizes
            .iter()
            .find(|s| s.size_bytes == kib * KIB)
            .cloned()
    };
    assert_eq!(
        known(&size(2048).expect("2048kB").enabled).selected,
        "inherit"
    );
    assert_eq!(known(&size(64).expect("64kB").enabled).selected, "never");
    assert_eq!(
        thp.sizes.first().map(|s| s.size_bytes),
        Some(8 * KIB),
        "hugepages-8kB ..."
    );
    assert_eq!(
        thp.sizes.last().map(|s| s.size_bytes),
        Some(2 * MIB),
        "... hugepages-2048kB"
    );
    let sizes: Vec<u64> = m
        .pages
        .hugetlb
        .iter()
        .map(|p| p.system.page_size_bytes)
        .collect();
    assert_eq!(sizes, vec![2 * MIB, GIB]);
    for p in &m.pages.hugetlb {
        assert_eq!(known(&p.system.total_pages), 0);
        assert_eq!(known(&p.system.total_bytes), 0);
    }
    assert_eq!(known(&m.pages.hugetlb_total_bytes), 0);
    assert_eq!(known(&m.pages.base_page_size_bytes), 4096);
    assert_eq!(m.numa.nodes.len(), 1);
    assert_eq!(known(&m.numa.distances).matrix, vec![vec![10]]);
}

#[test]
fn kunpeng920_2s_4numa_clusters() {
    let folder = "aarch64-hisilicon-kunpeng920-2s-4numa-clusters";
    let Some(c) = extract(folder) else { return };
    let m = probe(&c.root);
    assert_eq!(m.cpu.arch, Arch::Aarch64);
    assert_eq!(known(&m.cpu.online).len(), 128);
    let t = &m.cpu.topology;
    // Package ids are ACPI table offsets: ids, not counts.
    assert_eq!(t.package_ids, vec![36, 8442]);
    assert_eq!(known(&t.packages), 2);
    assert_eq!(known(&t.clusters), 32);
    assert_eq!(known(&t.cores), 128);
    assert_eq!(m.cpu.kinds.len(), 1);
    let k = &m.cpu.kinds[0];
    assert!(k.name.contains("Kunpeng 920"), "{}", k.name);
    let midr = k.midr.expect("MIDR");
    assert_eq!((midr.implementer, midr.part), (0x48, 0xd01));
    let peer = fixture_text(folder, "expected-lstopo-v.txt").unwrap();
    assert_eq!(lstopo_count(&peer, &["Package L#"]), 2);
    assert_eq!(lstopo_count(&peer, &["Group(Cluster) L#"]), 32);
    assert_eq!(lstopo_count(&peer, &["Core L#"]), 128);
    assert_eq!(m.numa.nodes.len(), 4);
    for (i, n) in m.numa.nodes.iter().enumerate() {
        let lo = i as u32 * 32;
        assert_eq!(known(&n.cpus), set(&format!("{}-{}", lo, lo + 31)));
    }
    assert_eq!(
        known(&m.numa.distances).matrix,
        vec![
            vec![10, 16, 32, 33],
            vec![16, 10, 25, 32],
            vec![32, 25, 10, 16],
            vec![33, 32, 16, 10]
        ]
    );
    // L3 32 MiB per node. Deliberate difference: lstopo prints ways=128, derived as
    // size / (sets x line); we report the kernel's ways_of_associativity (15) as written.
    let l3 = one_cache(&m, 3, CacheType::Unified);
    assert_eq!((known(&l3.size_bytes), l3.instances), (32 * MIB, 4));
    assert_eq!(l3.ways, Some(15));
    assert_eq!(lstopo_count(&peer, &["L3Cache L#", "size=32MiB"]), 4);
    let l2 = one_cache(&m, 2, CacheType::Unified);
    assert_eq!((known(&l2.size_bytes), l2.instances), (512 * KIB, 128));
    assert_eq!(lstopo_count(&peer, &["L2Cache L#", "size=512KiB"]), 128);
    let sizes: Vec<u64> = m
        .pages
        .hugetlb
        .iter()
        .map(|p| p.system.page_size_bytes)
        .collect();
    assert_eq!(sizes, vec![64 * KIB, 2 * MIB, 32 * MIB, GIB]);
    assert!(m
        .pages
        .hugetlb
        .iter()
        .all(|p| known(&p.system.total_pages) == 0));
    assert_eq!(m.pages.hugetlb[0].per_node.len(), 4);
    // 4 KiB base pages: only they have a 64 KiB (contiguous-PTE) hugetlb size.
    assert_eq!(known(&m.pages.base_page_size_bytes), 4096);
}

#[test]
fn biglittle_four_kinds_caches_unknown() {
    let Some(c) = extract("aarch64-biglittle-a510-a710-a715-x3") else {
        return;
    };
    let m = probe(&c.root);
    assert_eq!(known(&m.cpu.online).len(), 8);
    let kinds: Vec<(String, CpuSet)> = m
        .cpu
        .kinds
        .iter()
        .map(|k| (k.name.clone(), k.cpus.clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("ARM Cortex-A510".to_string(), set("0-2")),
            ("ARM Cortex-A715".to_string(), set("3-4")),
            ("ARM Cortex-A710".to_string(), set("5-6")),
            ("ARM Cortex-X3".to_string(), set("7")),
        ]
    );
    let parts: Vec<u32> = m
        .cpu
        .kinds
        .iter()
        .filter_map(|k| k.midr.map(|m| m.part))
        .collect();
    assert_eq!(parts, vec![0xd46, 0xd4d, 0xd47, 0xd4e]);
    // A715 and A710 share cpu_capacity 855; the MIDR keeps them apart (never averaged).
    assert_eq!(m.cpu.kinds[1].capacity, m.cpu.kinds[2].capacity);
    // expected-lscpu prints one section per model with "Socket(s): 1": one SoC.
    assert_eq!(known(&m.cpu.topology.packages), 1);
    // Cache folders without size files: unknown, not zero.
    assert!(!m.cpu.caches.is_empty());
    for cache in &m.cpu.caches {
        assert!(cache.size_bytes.known().is_none(), "{cache:?}");
        assert!(cache.total_bytes.known().is_none());
    }
}

#[test]
fn ultrasparc_t1_offline() {
    let Some(c) = extract("sparc64-ultrasparc-t1-offline") else {
        return;
    };
    let m = probe(&c.root);
    assert_eq!(m.cpu.arch, Arch::Sparc64);
    assert_eq!(known(&m.cpu.possible), set("0-31"));
    assert_eq!(known(&m.cpu.present), set("0-23"));
    assert_eq!(known(&m.cpu.online), set("0-23"));
    assert_eq!(known(&m.cpu.offline), set("24-31"));
    let t = &m.cpu.topology;
    assert_eq!(known(&t.cores), 6);
    assert_eq!(t.cores_by_threads.get(&4), Some(&6));
    // Deliberate difference: the 2011 lscpu says 6 sockets (one per core); one chip.
    assert_eq!(known(&t.packages), 1);
    assert_eq!(m.cpu.identity.ncpus_probed, Some(24));
    assert_eq!(m.cpu.identity.ncpus_active, Some(24));
    let l1d = one_cache(&m, 1, CacheType::Data);
    assert_eq!((known(&l1d.size_bytes), l1d.instances), (8192, 6));
    let l1i = one_cache(&m, 1, CacheType::Instruction);
    assert_eq!(known(&l1i.size_bytes), 16384);
    let l2 = one_cache(&m, 2, CacheType::Unified);
    assert_eq!((known(&l2.size_bytes), l2.instances), (3 * MIB, 1));
    // node0's cpumap is 36 bits wide; only CPUs the kernel can have (possible) are kept.
    assert_eq!(known(&m.numa.nodes[0].cpus), set("0-31"));
    assert_eq!(known(&m.pages.base_page_size_bytes), 8192);
}

#[test]
fn power7_memoryless_node() {
    let Some(c) = extract("ppc64-power7-64cpu-memoryless-node") else {
        return;
    };
    let m = probe(&c.root);
    assert_eq!(m.cpu.arch, Arch::Ppc64);
    assert_eq!(known(&m.cpu.online).len(), 64);
    assert_eq!(known(&m.cpu.topology.cores), 16);
    assert_eq!(m.cpu.topology.cores_by_threads.get(&4), Some(&16), "SMT4");
    assert_eq!(known(&m.numa.nodes[0].cpus), set("0-63"));
    assert!(m.numa.nodes[1].cpu_less, "node1 has no CPUs");
    assert!(known(&m.numa.nodes[1].cpus).is_empty());
    // expected-lscpu: L1d 512 KiB (16 instances), L1i 512 KiB (16 instances).
    let l1d = one_cache(&m, 1, CacheType::Data);
    assert_eq!((known(&l1d.total_bytes), l1d.instances), (512 * KIB, 16));
    // expected-lscpu: Socket(s) 16, from core_siblings (physical_package_id is -1).
    assert_eq!(known(&m.cpu.topology.packages), 16);
}

#[test]
fn s390x_offline_books() {
    let Some(c) = extract("s390x-z196-lpar-offline-books") else {
        return;
    };
    let m = probe(&c.root);
    assert_eq!(m.cpu.arch, Arch::S390x);
    assert_eq!(known(&m.cpu.possible), set("0-63"));
    assert_eq!(known(&m.cpu.present), set("0-19"));
    assert_eq!(known(&m.cpu.online), set("1-5,8-19"));
    assert_eq!(known(&m.cpu.present_offline), set("0,6-7"));
    assert_eq!(known(&m.cpu.topology.cores), 17);
    assert_eq!(m.cpu.identity.machine_model.as_deref(), Some("2817"));
    // No NUMA, no caches: unknown with the reason, not zero.
    assert!(m.numa.source.known().is_none());
    assert!(m.cpu.caches.is_empty());
    assert!(m.cpu.caches_source.known().is_none());
}

#[test]
fn e2k_cpuinfo_16c_and_2c3() {
    let Some(text) = fixture_text("e2k-elbrus-16c-1s", "linux_cpuinfo.log") else {
        return;
    };
    let ci = cpuinfo::parse_cpuinfo(&text);
    assert_eq!(ci.arch.as_ref().map(|a| a.0), Some(Arch::E2k));
    assert_eq!(ci.vendor.as_deref(), Some("Elbrus-MCST"));
    assert_eq!(ci.model_name.as_deref(), Some("E16C"));
    assert_eq!(ci.cpus.len(), 16);
    assert!(ci
        .cpus
        .iter()
        .all(|c| c.mhz == Some(2000.0) && c.physical_id.is_none() && c.core_id.is_none()));
    let summary: Vec<(u8, &str, Option<u64>, Option<&str>)> = ci
        .e2k_caches
        .iter()
        .map(|c| {
            (
                c.level,
                c.cache_type.as_str(),
                c.size_bytes,
                c.scope.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, "Instruction", Some(128 * KIB), Some("Private")),
            (1, "Data", Some(64 * KIB), Some("Private")),
            (2, "Unified", Some(1024 * KIB), Some("Private")),
            (3, "Unified", Some(32 * MIB), Some("Shared")),
        ]
    );
    assert_eq!(ci.e2k_caches[0].line_size_bytes, Some(256));
    // Through the probe, with the kernel's online list: L2 private per core, L3 one per chip.
    let dir = tree(&[
        f("/proc/cpuinfo", text.clone()),
        f("/sys/devices/system/cpu/online", "0-15\n"),
    ]);
    let m = probe(dir.path());
    assert_eq!(m.cpu.arch, Arch::E2k);
    let l3 = one_cache(&m, 3, CacheType::Unified);
    assert_eq!((known(&l3.size_bytes), l3.instances), (32 * MIB, 1));
    let l2 = one_cache(&m, 2, CacheType::Unified);
    assert_eq!((known(&l2.size_bytes), l2.instances), (MIB, 16));
    // Huge pages from /proc/meminfo when the capture has no /sys/kernel/mm/hugepages:
    // HugePages_Total 256 of 2048 kB; Hugetlb: 524288 kB.
    let meminfo = fixture_text("e2k-elbrus-16c-1s", "linux_meminfo.log").unwrap();
    let dir = tree(&[
        f("/proc/cpuinfo", text.clone()),
        f("/proc/meminfo", meminfo),
    ]);
    let m = probe(dir.path());
    assert_eq!(m.pages.hugetlb.len(), 1);
    assert_eq!(m.pages.hugetlb[0].system.page_size_bytes, 2 * MIB);
    assert_eq!(known(&m.pages.hugetlb[0].system.total_pages), 256);
    assert_eq!(known(&m.pages.hugetlb_total_bytes), 512 * MIB);
    assert_eq!(known(&m.pages.hugetlb_free_bytes), 512 * MIB);
    assert!(m.pages.hugetlb_source.contains("/proc/meminfo"));

    let text = fixture_text("e2k-elbrus-2c3-1s", "cpuinfo.txt").unwrap();
    let ci = cpuinfo::parse_cpuinfo(&text);
    assert_eq!(ci.model_name.as_deref(), Some("E2C3"));
    let mhz: Vec<Option<f64>> = ci.cpus.iter().map(|c| c.mhz).collect();
    assert_eq!(mhz, vec![Some(1599.998), Some(1882.957)]);
    assert_eq!(ci.e2k_caches.len(), 3, "no L3");
    assert_eq!(ci.e2k_caches[2].size_bytes, Some(2048 * KIB));
}

#[test]
fn sparc64_r2000_cpuinfo_is_not_a_cpu_count() {
    let Some(text) = fixture_text("sparc64-mcst-elbrus-r2000-8core", "proc-cpuinfo.txt") else {
        return;
    };
    let ci = cpuinfo::parse_cpuinfo(&text);
    assert_eq!(ci.arch.as_ref().map(|a| a.0), Some(Arch::Sparc64));
    assert_eq!(ci.sparc_type.as_deref(), Some("e90s"));
    assert_eq!(ci.model_name.as_deref(), Some("R2000"));
    assert_eq!((ci.ncpus_probed, ci.ncpus_active), (Some(8), Some(8)));
    assert_eq!(ci.cpus.len(), 8, "per-CPU MHz lines");
    // Probe with only the cpuinfo: CPUs are never counted from it on sparc64.
    let dir = tree(&[f("/proc/cpuinfo", text)]);
    let m = probe(dir.path());
    assert_eq!(m.cpu.arch, Arch::Sparc64);
    assert!(m.cpu.online.known().is_none());
    assert!(m.cpu.topology.threads.known().is_none());
    assert_eq!(m.cpu.topology.threads_with_topology, Some(0));
    assert!(m.cpu.topology.cores.known().is_none());
    assert_eq!(m.cpu.identity.mhz_values.len(), 8);
    assert_eq!(known(&m.pages.base_page_size_bytes), 8192);
}

/// Intel hybrid kinds from the kernel's PMU folders (`/sys/devices/cpu_core/cpus`,
/// `/sys/devices/cpu_atom/cpus`, Linux >= 5.13), as on a live Alder/Raptor Lake; the tree is
/// the raptorlake capture's first P-core (2 threads) and two E-cores, written from its facts.
#[test]
fn intel_hybrid_pmu_folders() {
    let cpu = "/sys/devices/system/cpu";
    let mut files = vec![
        f("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 186\nmodel name\t: 13th Gen Intel(R) Core(TM) i7-1370P\nflags\t\t: fpu lm\n\n"),
        f(format!("{cpu}/online"), "0-3\n"),
        f("/sys/devices/cpu_core/cpus", "0-1\n"),
        f("/sys/devices/cpu_atom/cpus", "2-3\n"),
    ];
    for (n, siblings) in [(0, "0-1"), (1, "0-1"), (2, "2"), (3, "3")] {
        files.push(f(
            format!("{cpu}/cpu{n}/topology/physical_package_id"),
            "0\n",
        ));
        files.push(f(
            format!("{cpu}/cpu{n}/topology/core_id"),
            format!("{}\n", if n < 2 { 0 } else { 22 + n }),
        ));
        files.push(f(
            format!("{cpu}/cpu{n}/topology/thread_siblings_list"),
            format!("{siblings}\n"),
        ));
    }
    let dir = tree(&files);
    let m = probe(dir.path());
    let kinds: Vec<(String, CpuSet, u32, u32)> = m
        .cpu
        .kinds
        .iter()
        .map(|k| (k.name.clone(), k.cpus.clone(), k.cores, k.threads_per_core))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("Intel P-core (performance)".to_string(), set("0-1"), 1, 2),
            ("Intel E-core (efficiency)".to_string(), set("2-3"), 2, 1),
        ]
    );
    assert!(m.cpu.kinds[0].source.contains("/sys/devices/cpu_core/cpus"));
}

//! One reader of the machine: the run environment's machine facts are the probe's `Machine`
//! facts, held on every real capture of ../shared/fixtures. Before 2026-12-05 `RunEnv` read
//! topology, caches, THP, SMT, the governor and the hugetlb pools again with readers of its
//! own, which disagreed with the probe (no last-level cache on sparc64, whose caches are
//! `l1_dcache_size` files; an SMT control the probe refuses taken raw; an unreadable hugetlb
//! count read as 0 pages).

use crate::topology_support;

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::collections::BTreeMap;

use hwsurvey_model::{CpuId, Probed, Unknown};
use hwsurvey_probe::cpu::CacheType;
use hwsurvey_probe::run_env::RunEnv;
use hwsurvey_probe::{probe_machine, Machine, SysRoot};
use topology_support::*;

/// Every fixture folder that holds a capture archive; empty only where `../shared` is
/// missing and switched off (`hwsurvey_testkit::shared`). Panics naming the folder when it
/// holds none.
fn capture_folders() -> Vec<String> {
    let Some(dir) = hwsurvey_testkit::fixtures() else {
        return vec![];
    };
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures folder")
        .filter_map(|e| e.ok())
        .filter(|e| {
            std::fs::read_dir(e.path()).is_ok_and(|mut files| {
                files.any(|f| {
                    f.is_ok_and(|f| {
                        let n = f.file_name().to_string_lossy().to_string();
                        n.ends_with(".tar.gz") || n.ends_with(".tar.bz2")
                    })
                })
            })
        })
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert!(!out.is_empty(), "{}: no capture archive", dir.display());
    out.sort();
    out
}

/// Asserts that each machine fact of `env` is the one `m` holds, computed here from `m`'s own
/// fields (not through the functions `RunEnv` uses).
fn assert_env_is_machine(folder: &str, m: &Machine, env: &RunEnv) {
    // topology: package, core and node of each usable CPU
    let logical: BTreeMap<CpuId, _> = m.cpu.cpus.iter().map(|c| (c.cpu, c)).collect();
    for place in &env.cpus {
        let l = logical.get(&place.cpu);
        let nodes: Vec<u32> = m
            .numa
            .nodes
            .iter()
            .filter(|n| n.cpus.known().is_some_and(|s| s.contains(place.cpu)))
            .map(|n| n.node)
            .collect();
        assert_eq!(
            place.node,
            nodes.first().copied(),
            "{folder}: node of {place:?}"
        );
        assert_eq!(
            place.core,
            l.and_then(|l| l.core_index.map(i64::from).or(l.core_id)),
            "{folder}: core of {place:?}"
        );
        if let Some(p) = place.package {
            assert!(
                m.cpu.topology.per_package.is_empty()
                    || m.cpu.topology.per_package.iter().any(|q| q.package_id == p),
                "{folder}: package {p} of CPU {} is one of the probe's packages {:?}",
                place.cpu,
                m.cpu.topology.per_package
            );
        }
    }
    // last-level cache: the highest data or unified level of the probe's caches
    let sized: Vec<_> = m
        .cpu
        .caches
        .iter()
        .filter(|c| c.cache_type != CacheType::Instruction && c.total_bytes.known().is_some())
        .collect();
    match sized.iter().map(|c| c.level).max() {
        Some(level) => {
            let llc = env
                .llc
                .known()
                .unwrap_or_else(|| panic!("{folder}: LLC unknown: {:?}", env.llc));
            assert_eq!(llc.level, u32::from(level), "{folder}");
            let at = sized.iter().filter(|c| c.level == level);
            assert_eq!(
                llc.total_size_bytes,
                at.clone()
                    .map(|c| *c.total_bytes.known().unwrap())
                    .sum::<u64>(),
                "{folder}"
            );
            assert_eq!(
                llc.instances,
                at.map(|c| c.instances).sum::<u32>(),
                "{folder}"
            );
        }
        None => assert!(env.llc.known().is_none(), "{folder}: {:?}", env.llc),
    }
    // pages
    assert_eq!(
        env.base_page_size_bytes, m.pages.base_page_size_bytes,
        "{folder}"
    );
    assert_eq!(
        env.thp_enabled,
        m.pages.thp.enabled.clone().map(|c| c.selected),
        "{folder}"
    );
    let pools: Vec<_> = m
        .pages
        .hugetlb
        .iter()
        .map(|p| {
            (
                p.system.page_size_bytes,
                p.system.total_pages.clone(),
                p.system.free_pages.clone(),
            )
        })
        .collect();
    let env_pools: Vec<_> = env
        .huge_pools
        .iter()
        .map(|p| {
            (
                p.page_size_bytes,
                p.total_pages.clone(),
                p.free_pages.clone(),
            )
        })
        .collect();
    assert_eq!(env_pools, pools, "{folder}: hugetlb pools");
    // settings
    assert_eq!(
        env.smt_control,
        m.os.smt.clone().map(|s| s.control),
        "{folder}"
    );
    assert_eq!(
        env.numa_balancing,
        m.os.numa_balancing.clone().map(|v| v.to_string()),
        "{folder}"
    );
    assert_eq!(env.kernel_release, m.os.kernel.release, "{folder}");
    if let (Some(first), Probed::Known(policies)) = (env.usable_cpus.first(), &m.os.cpufreq) {
        if let Some(p) = policies
            .iter()
            .find(|p| p.cpus.known().is_some_and(|s| s.contains(first)))
        {
            assert_eq!(env.governor, p.governor, "{folder}");
        }
    }
}

#[test]
fn run_env_machine_facts_are_the_machine_s_on_every_capture() {
    let folders = capture_folders();
    if folders.is_empty() {
        return;
    }
    for folder in &folders {
        let c = extract(folder).expect("capture");
        let root = SysRoot::new(&c.root);
        let m = probe_machine(&root);
        assert_env_is_machine(folder, &m, &RunEnv::from_machine(&m, &root));
        // and the convenience reader is the same derivation
        assert_env_is_machine(folder, &m, &RunEnv::read(&root));
    }
}

/// sparc64 lists its caches as `l1_dcache_size`, `l2_cache_size` files, not `cache/index*`:
/// the run environment's own reader found no last-level cache there while the probe knew it.
#[test]
fn sparc64_last_level_cache_is_the_probe_s() {
    let Some(c) = extract("sparc64-ultrasparc-t1-offline") else {
        return;
    };
    let root = SysRoot::new(&c.root);
    let m = probe_machine(&root);
    let env = RunEnv::from_machine(&m, &root);
    let llc = env.llc.known().expect("the probe knows the L2 of the T1");
    assert_eq!(llc.level, 2);
    assert_eq!(llc.total_size_bytes, 3 << 20);
}

/// A hugetlb count the probe cannot read is unknown in the run environment, naming the file
/// (was: 0 pages, a pool that looked empty).
#[test]
fn unreadable_hugetlb_count_is_unknown_not_zero() {
    let Some(c) = extract("x86_64-firecracker-guest-epyc-2vcpu-thp-mthp") else {
        return;
    };
    let dir = "/sys/kernel/mm/hugepages/hugepages-2048kB";
    hwsurvey_testkit::write(&c.root, &format!("{dir}/nr_hugepages"), "many\n");
    hwsurvey_testkit::write(&c.root, &format!("{dir}/free_hugepages"), "\n");
    let root = SysRoot::new(&c.root);
    let m = probe_machine(&root);
    let env = RunEnv::from_machine(&m, &root);
    let pool = env
        .huge_pools
        .iter()
        .find(|p| p.page_size_bytes == 2 << 20)
        .expect("the 2 MiB pool");
    for (what, count) in [
        ("nr_hugepages", &pool.total_pages),
        ("free_hugepages", &pool.free_pages),
    ] {
        match count {
            Probed::Unknown(Unknown::Invalid { path, .. }) => {
                assert_eq!(path, &format!("{dir}/{what}"))
            }
            other => panic!("{what}: expected unknown naming the file, got {other:?}"),
        }
    }
    // the other pool is read as it is
    let gib = env
        .huge_pools
        .iter()
        .find(|p| p.page_size_bytes == 1 << 30)
        .expect("the 1 GiB pool");
    assert_eq!(gib.total_pages, Probed::Known(0));
    assert_env_is_machine("firecracker, 2 MiB pool damaged", &m, &env);
}

/// An SMT control the probe refuses (a character the kernel never writes) is unknown in the
/// run environment too: fleet and qualify read one fact.
#[test]
fn smt_control_the_probe_refuses_is_unknown_in_the_environment() {
    let Some(c) = extract("x86_64-firecracker-guest-epyc-2vcpu-thp-mthp") else {
        return;
    };
    hwsurvey_testkit::write(
        &c.root,
        "/sys/devices/system/cpu/smt/control",
        "on\u{FFFE}\n",
    );
    let root = SysRoot::new(&c.root);
    let m = probe_machine(&root);
    assert!(m.os.smt.known().is_none(), "{:?}", m.os.smt);
    let env = RunEnv::from_machine(&m, &root);
    assert!(env.smt_control.known().is_none(), "{:?}", env.smt_control);
}

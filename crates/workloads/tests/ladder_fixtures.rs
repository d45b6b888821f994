//! The standard profile planned for real captured machines (`../shared/fixtures`): no point
//! is dropped for time or memory, the estimate stays bounded, and the thread ladder's topology
//! landmarks have the thread counts the fixtures' facts give (fixtures/README.md) and pin as
//! their names say, checked against the probe's own `Machine`.

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::collections::{BTreeMap, BTreeSet};

use hwsurvey_engine::ladder::captured_env;
use hwsurvey_engine::plan::{build_plan, Plan, RunOptions};
use hwsurvey_model::CpuId;
use hwsurvey_probe::run_env::{CpuPlace, RunEnv};
use hwsurvey_probe::{probe_machine, Machine, SysRoot};
use hwsurvey_workloads::families::{load_profile, registry};

/// Landmark names and thread counts, in the plan's order.
type Landmarks = &'static [(&'static str, usize)];

/// (fixture archive under fixtures/, expected landmarks from its facts, estimate bound s).
const CAPTURES: &[(&str, Landmarks, f64)] = &[
    // 2x EPYC 7451: 2 packages x 24 cores x 2 threads; L3 per 3-core CCX; node0 = 0-5,48-53
    (
        "x86_64-amd-epyc7451-2s-8numa/x86_64-epyc_7451.tar.gz",
        &[
            ("smt_core", 2),
            ("llc_group", 6),
            ("numa_node", 12),
            ("package", 48),
            ("cores", 48),
            ("all", 96),
        ],
        15.0 * 60.0,
    ),
    // 4x Xeon X7550: 4 packages x 8 cores x 2 threads; L3 per package; node0 holds two
    // packages' CPUs
    (
        "x86_64-intel-xeon-x7550-4s-numa-holes/x86_64-64cpu.tar.gz",
        &[
            ("smt_core", 2),
            ("llc_group", 16),
            ("numa_node", 32),
            ("package", 16),
            ("cores", 32),
            ("all", 64),
        ],
        15.0 * 60.0,
    ),
    // UltraSPARC T1: 24 of 32 threads online, 6 cores x 4 threads, one chip, L2 per chip
    (
        "sparc64-ultrasparc-t1-offline/sparc64-UltraSparc-T1.tar.gz",
        &[
            ("smt_core", 4),
            ("llc_group", 24),
            ("numa_node", 24),
            ("package", 24),
            ("cores", 6),
            ("all", 24),
        ],
        15.0 * 60.0,
    ),
    // 2x Kunpeng 920: 128 cores, no SMT, clusters of 4 cores, 4 nodes of 32 CPUs, L3 per node
    (
        "aarch64-hisilicon-kunpeng920-2s-4numa-clusters/128arm-2pa2n8cluster4co.tar.bz2",
        &[
            ("cluster", 4),
            ("llc_group", 32),
            ("numa_node", 32),
            ("package", 64),
            ("cores", 128),
            ("all", 128),
        ],
        15.0 * 60.0,
    ),
];

fn plan_for(machine: &Machine, env: &RunEnv) -> Plan {
    let profile = load_profile("standard").unwrap();
    let options = RunOptions {
        capture: true,
        ..Default::default()
    };
    build_plan(&profile, &registry(), machine, env, &options, &[]).unwrap()
}

/// Skip reasons that are facts of the machine (or of what the capture holds), never time or
/// memory: no storage directory given, no hugetlb page sizes, empty hugetlb pools.
fn is_machine_fact(reason: &str) -> bool {
    reason.starts_with("no --storage-dir given")
        || reason.starts_with("no hugetlb page sizes")
        || (reason.starts_with("hugetlb pool ") && reason.contains(" free pages of "))
}

#[test]
fn standard_plan_of_each_capture_keeps_every_point_and_its_landmarks() {
    let Some(fixtures) = hwsurvey_testkit::fixtures() else {
        return;
    };
    for (archive, expected, bound_s) in CAPTURES {
        let (_tmp, root) = hwsurvey_testkit::extract(&fixtures.join(archive));
        let sys = SysRoot::new(&root);
        let machine = probe_machine(&sys);
        let env = captured_env(&machine, RunEnv::read(&sys)).unwrap();
        let plan = plan_for(&machine, &env);
        println!(
            "{archive}: {} CPUs, {} points, estimated {:.0} s, thread counts {:?}",
            plan.usable_cpus,
            plan.point_count(),
            plan.estimated_s(),
            plan.thread_counts
        );
        // the profile defines the points: nothing dropped for time or memory
        for f in &plan.families {
            for s in &f.skipped {
                assert!(
                    is_machine_fact(&s.reason),
                    "{archive}: {} {} skipped: {}",
                    s.family,
                    s.id,
                    s.reason
                );
            }
        }
        assert!(
            plan.estimated_s() <= *bound_s,
            "{archive}: estimated {:.0} s > {bound_s} s",
            plan.estimated_s()
        );
        // landmark thread counts from the facts
        let got: Vec<(&str, usize)> = plan
            .landmarks
            .iter()
            .map(|m| (m.name.as_str(), m.threads))
            .collect();
        assert_eq!(got, *expected, "{archive}");
        check_landmarks_pin_as_named(archive, &machine, &env, &plan);
    }
}

/// Every landmark's CPUs are what its name says, by the probe's facts, and every point that
/// names a landmark runs on exactly its CPUs.
fn check_landmarks_pin_as_named(archive: &str, machine: &Machine, env: &RunEnv, plan: &Plan) {
    let place: BTreeMap<CpuId, &CpuPlace> = env.cpus.iter().map(|p| (p.cpu, p)).collect();
    let core_index: BTreeMap<CpuId, u32> = machine
        .cpu
        .cpus
        .iter()
        .filter_map(|c| Some((c.cpu, c.core_index?)))
        .collect();
    let cores_total = *machine.cpu.topology.cores.known().unwrap() as usize;
    for m in &plan.landmarks {
        let set: BTreeSet<CpuId> = m.cpus.iter().copied().collect();
        assert_eq!(
            set.len(),
            m.cpus.len(),
            "{archive} {}: repeated CPU",
            m.name
        );
        let cores: BTreeSet<u32> = m.cpus.iter().map(|c| core_index[c]).collect();
        match m.name.as_str() {
            "smt_core" => assert_eq!(cores.len(), 1, "{archive}: {m:?}"),
            "cores" => {
                assert_eq!(cores.len(), m.cpus.len(), "{archive}: one thread per core");
                assert_eq!(cores.len(), cores_total, "{archive}: every core");
            }
            "package" => {
                let pk: BTreeSet<Option<i64>> = m.cpus.iter().map(|c| place[c].package).collect();
                assert_eq!(pk.len(), 1, "{archive}: {m:?}");
                let per = &machine.cpu.topology.per_package;
                let threads = per
                    .iter()
                    .find(|p| Some(p.package_id) == *pk.iter().next().unwrap())
                    .map(|p| p.threads as usize);
                assert_eq!(threads, Some(m.threads), "{archive}: {per:?}");
            }
            "numa_node" => {
                let node = machine
                    .numa
                    .nodes
                    .iter()
                    .find(|n| n.cpus.known().is_some_and(|s| s.contains(m.cpus[0])))
                    .unwrap();
                // the node's CPUs that are usable (the T1's node0 also lists its offline CPUs)
                let want: BTreeSet<CpuId> = node
                    .cpus
                    .known()
                    .unwrap()
                    .iter()
                    .filter(|&c| env.usable_cpus.contains(c))
                    .collect();
                assert_eq!(set, want, "{archive}: node {}", node.node);
            }
            "llc_group" => {
                let llc = machine
                    .cpu
                    .caches
                    .iter()
                    .filter(|c| c.cache_type != hwsurvey_probe::cpu::CacheType::Instruction)
                    .max_by_key(|c| c.level)
                    .unwrap();
                assert!(
                    llc.instance_cpus.iter().any(|i| i
                        .iter()
                        .filter(|&c| env.usable_cpus.contains(c))
                        .collect::<BTreeSet<_>>()
                        == set),
                    "{archive}: {m:?} is no L{} instance",
                    llc.level
                );
            }
            "all" => assert_eq!(m.threads, env.cpu_count()),
            _ => {}
        }
    }
    for f in &plan.families {
        for p in &f.points {
            for name in &p.landmarks {
                if name == "oversubscribed" {
                    continue;
                }
                let m = plan.landmarks.iter().find(|m| &m.name == name).unwrap();
                let a: BTreeSet<CpuId> = p.cpus.iter().copied().collect();
                let b: BTreeSet<CpuId> = m.cpus.iter().copied().collect();
                assert_eq!(a, b, "{archive}: {} {} named {name}", p.family, p.id);
                assert_eq!(p.cpus.len(), p.threads);
            }
        }
        // the "one package" point of mem.bandwidth exists and is named so compare can find it
        if f.family == "mem.bandwidth" {
            assert!(
                f.points.iter().any(|p| p.id.starts_with("stream.triad/")
                    && p.landmarks.iter().any(|l| l == "package")),
                "{archive}"
            );
        }
    }
}

/// A 256-CPU machine (2 packages x 64 cores x 2 threads, 4 nodes, 256 MiB LLC): the standard
/// profile's estimate stays at or under 25 minutes, and grows with the thread ladder only.
#[test]
fn standard_plan_of_256_cpus_is_estimated_at_most_25_minutes() {
    let sys = SysRoot::new("/nonexistent-root");
    let machine = probe_machine(&sys);
    let mut env = RunEnv::read(&sys);
    env.usable_cpus = (0..256).collect();
    env.cpus = (0..256u32)
        .map(|cpu| CpuPlace {
            cpu,
            package: Some(i64::from(cpu % 128 / 64)),
            core: Some(i64::from(cpu % 128)),
            node: Some(cpu % 128 / 32),
        })
        .collect();
    env.llc = hwsurvey_model::Probed::Known(hwsurvey_probe::run_env::LastLevelCache {
        level: 3,
        instance_size_bytes: 32 << 20,
        instances: 8,
        total_size_bytes: 256 << 20,
    });
    env.mem_available_bytes = hwsurvey_model::Probed::Known(512 << 30);
    env.cgroup_memory_limit_bytes = hwsurvey_model::Probed::Known(None);
    env.memory_limit = None;
    let plan = plan_for(&machine, &env);
    println!(
        "256 CPUs: {} points, estimated {:.0} s, thread counts {:?}",
        plan.point_count(),
        plan.estimated_s(),
        plan.thread_counts
    );
    assert!(
        plan.estimated_s() <= 25.0 * 60.0,
        "estimated {:.0} s",
        plan.estimated_s()
    );
    assert_eq!(
        plan.thread_counts,
        [1, 2, 4, 8, 16, 32, 64, 128, 256],
        "landmarks (2, 64, 128) fall on powers of two here"
    );
    let names: Vec<(&str, usize)> = plan
        .landmarks
        .iter()
        .map(|m| (m.name.as_str(), m.threads))
        .collect();
    assert_eq!(
        names,
        [
            ("smt_core", 2),
            ("numa_node", 64),
            ("package", 128),
            ("cores", 128),
            ("all", 256)
        ]
    );
    for f in &plan.families {
        assert!(
            f.skipped
                .iter()
                .all(|s| is_machine_fact(&s.reason) || s.reason.starts_with("THP state unknown")),
            "{}: {:?}",
            f.family,
            f.skipped
        );
    }
}

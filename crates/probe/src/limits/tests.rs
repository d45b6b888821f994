//! Unit tests of the limits (`super`); the parsers they read through are tested in
//! `hwsurvey_machine` (`os::cgroup`, `process`, `memory::meminfo`), the cgroup walk in
//! `tests/limits_trees.rs`.
use super::*;
use hwsurvey_model::CpuSet;

#[test]
fn usable_cpus_intersect_and_name_their_sources() {
    let set = |s: &str| CpuSet::parse_list(s).unwrap();
    let l = Limits {
        mem_available_bytes: Probed::Known(8 << 30),
        memory_limits: vec![
            MemoryLimit {
                bytes: 1 << 30,
                source: "cgroup v2 memory.high (x)".into(),
                in_use_bytes: None,
            },
            MemoryLimit {
                bytes: 200 << 20,
                source: "cgroup v1 memory.limit_in_bytes (y)".into(),
                in_use_bytes: None,
            },
        ],
        cpu_quotas: vec![],
        cpu_limits: vec![
            CpuLimit {
                cpus: set("0-7"),
                source: "sched_getaffinity".into(),
            },
            CpuLimit {
                cpus: set("2-9"),
                source: "/dev/cpuset/a/cpus".into(),
            },
        ],
        problems: vec![],
    };
    let cap = l.memory_cap().unwrap();
    assert_eq!(cap.bytes, 200 << 20);
    assert!(cap.source.starts_with("cgroup v1 memory.limit_in_bytes"));
    assert_eq!(l.cgroup_limit_bytes(), Some(200 << 20));
    let u = l.usable_cpus().unwrap();
    assert_eq!(u.cpus, set("2-7"));
    assert_eq!(u.source, "sched_getaffinity ∩ /dev/cpuset/a/cpus");
}

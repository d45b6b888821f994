//! Small plans for unit tests of what reads a plan (the ETA, the progress line, the closing
//! summary): a point of one family, and a quick-profile plan of given families on one CPU.

use hwsurvey_result::plan::{FamilyPlan, Plan, Point};

/// A point of `family` named `id` with `threads` threads on CPU 0: no parameters, no memory,
/// estimated at 1 s.
pub fn point(family: &str, id: &str, threads: usize) -> Point {
    serde_json::from_value(serde_json::json!({
        "family": family, "id": id, "threads": threads, "placement": "compact",
        "cpus": [0], "params": {}, "memory_bytes": 0, "estimated_s": 1.0
    }))
    .expect("a point of the result schema")
}

/// A plan of the quick profile (version 1) on one usable CPU with a 1 MiB working set,
/// holding `families`.
pub fn plan(families: Vec<FamilyPlan>) -> Plan {
    Plan {
        profile_id: "quick".into(),
        profile_version: 1,
        usable_cpus: 1,
        thread_counts: vec![1],
        landmarks: vec![],
        llc_total_bytes: None,
        memory_working_set_bytes: 1 << 20,
        memory_cap_bytes: None,
        memory_cap_source: None,
        cpu_quota: None,
        fixed_work: None,
        families,
    }
}

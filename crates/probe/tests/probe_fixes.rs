//! Defects found by the probe tester (cpufreq lists, invented core kinds, missing topology,
//! empty roots, symlinks escaping the root, snapshot round trip, summary wording).

mod topology_support;

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

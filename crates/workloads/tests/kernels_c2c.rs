//! c2c.latency pair selection on real topologies (fixture archives from ../shared/fixtures,
//! facts in its README.md), and the ping-pong kernel's checked counter.

use std::collections::BTreeMap;
use std::io::Read;

use hwsurvey_model::CpuSet;
use hwsurvey_testkit::fixtures;
use hwsurvey_workloads::families::c2c_latency::{
    ping_pong, representative_pairs, PairCpu, SharedLevel,
};

/// Reads the topology and node files of the fixture archive of `machine` into memory
/// (path inside the archive, without its top folder -> text without surrounding whitespace and
/// the trailing NUL some captured files carry).
fn topology_files(machine: &str) -> BTreeMap<String, String> {
    let dir = fixtures().expect("checked by caller").join(machine);
    let archive = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(".tar."))
        .expect("an archive in the fixture folder");
    let file = std::fs::File::open(&archive).unwrap();
    let reader: Box<dyn Read> = if archive.to_string_lossy().ends_with(".bz2") {
        Box::new(bzip2::read::BzDecoder::new(file))
    } else {
        Box::new(flate2::read::GzDecoder::new(file))
    };
    let mut out = BTreeMap::new();
    for entry in tar::Archive::new(reader).entries().unwrap() {
        let mut entry = entry.unwrap();
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().unwrap().to_string_lossy().to_string();
        let Some((_, inner)) = path.split_once('/') else {
            continue;
        };
        let wanted = (inner.starts_with("sys/devices/system/cpu/cpu")
            && inner.contains("/topology/"))
            || (inner.starts_with("sys/devices/system/node/node")
                && (inner.ends_with("/cpulist") || inner.ends_with("/cpumap")));
        if wanted {
            let mut text = String::new();
            entry.read_to_string(&mut text).unwrap();
            out.insert(
                inner.to_string(),
                text.trim_matches(|c: char| c.is_whitespace() || c == '\0')
                    .to_string(),
            );
        }
    }
    out
}

/// Builds the pair inputs from the topology files (test-side reader; the family reads the
/// same files through the probe).
fn pair_cpus(files: &BTreeMap<String, String>) -> Vec<PairCpu> {
    let mut nodes: Vec<(u32, CpuSet)> = Vec::new();
    for (path, text) in files {
        let Some(rest) = path.strip_prefix("sys/devices/system/node/node") else {
            continue;
        };
        let Some((n, file)) = rest.split_once('/') else {
            continue;
        };
        let Ok(n) = n.parse::<u32>() else { continue };
        let set = match file {
            "cpulist" => CpuSet::parse_list(text).ok(),
            "cpumap"
                if !files.contains_key(&format!("sys/devices/system/node/node{n}/cpulist")) =>
            {
                CpuSet::parse_mask(text).ok()
            }
            _ => None,
        };
        if let Some(set) = set {
            nodes.push((n, set));
        }
    }
    let mut cpus: BTreeMap<u32, PairCpu> = BTreeMap::new();
    for (path, text) in files {
        let Some(rest) = path.strip_prefix("sys/devices/system/cpu/cpu") else {
            continue;
        };
        let Some((n, file)) = rest.split_once("/topology/") else {
            continue;
        };
        let Ok(cpu) = n.parse::<u32>() else { continue };
        let e = cpus.entry(cpu).or_insert_with(|| PairCpu {
            cpu,
            package: None,
            die: None,
            cluster: None,
            core: None,
            node: nodes.iter().find(|(_, s)| s.contains(cpu)).map(|(n, _)| *n),
        });
        let v = text.parse::<i64>().ok();
        match file {
            "physical_package_id" => e.package = v,
            "die_id" => e.die = v,
            "cluster_id" => e.cluster = v,
            "core_id" => e.core = v,
            _ => {}
        }
    }
    cpus.into_values().collect()
}

fn labels(pairs: &[hwsurvey_workloads::families::c2c_latency::Pair]) -> Vec<(String, u32, u32)> {
    pairs
        .iter()
        .map(|p| (p.label.clone(), p.cpu_a, p.cpu_b))
        .collect()
}

#[test]
fn kunpeng920_clusters_nodes_packages() {
    if fixtures().is_none() {
        return;
    }
    let cpus = pair_cpus(&topology_files(
        "aarch64-hisilicon-kunpeng920-2s-4numa-clusters",
    ));
    assert_eq!(cpus.len(), 128);
    let pairs = representative_pairs(&cpus);
    // README: 2 packages (ids 36, 8442), 32 clusters of 4 cores, 4 nodes of 32 CPUs, no SMT;
    // die_id is -1 (unknown), so "die" does not appear.
    assert_eq!(
        labels(&pairs),
        vec![
            ("cluster".to_string(), 0, 1),
            ("package".to_string(), 0, 4),
            ("package/other_node".to_string(), 0, 32),
            ("cross_package".to_string(), 0, 64),
        ]
    );
    assert!(pairs.iter().all(|p| p.class.shared != SharedLevel::Core));
}

#[test]
fn epyc7451_two_sockets_smt_ccx_nodes() {
    if fixtures().is_none() {
        return;
    }
    let cpus = pair_cpus(&topology_files("x86_64-amd-epyc7451-2s-8numa"));
    assert_eq!(cpus.len(), 96);
    let pairs = representative_pairs(&cpus);
    // README: 2 packages x 24 cores x 2 threads; node0 = 0-5,48-53; node1 = 6-11,54-59; package 1
    // starts at CPU 24 (nodes 4-7).
    assert_eq!(
        labels(&pairs),
        vec![
            ("smt".to_string(), 0, 48),
            ("package".to_string(), 0, 1),
            ("package/other_node".to_string(), 0, 6),
            ("cross_package".to_string(), 0, 24),
        ]
    );
}

#[test]
fn xeon_x7550_node_spanning_two_packages() {
    if fixtures().is_none() {
        return;
    }
    let cpus = pair_cpus(&topology_files("x86_64-intel-xeon-x7550-4s-numa-holes"));
    // README: present and online 0-63 (possible 0-79); 4 packages x 8 cores x 2 threads; nodes
    // 0, 2, 3 only, node0 holding CPUs of two packages.
    assert_eq!(cpus.len(), 64);
    let pairs = representative_pairs(&cpus);
    let l: Vec<String> = pairs.iter().map(|p| p.label.clone()).collect();
    assert!(l.contains(&"smt".to_string()), "{l:?}");
    assert!(l.contains(&"package".to_string()), "{l:?}");
    assert!(l.contains(&"cross_package/same_node".to_string()), "{l:?}");
    assert!(l.contains(&"cross_package".to_string()), "{l:?}");
    for p in &pairs {
        let a = cpus.iter().find(|c| c.cpu == p.cpu_a).unwrap();
        let b = cpus.iter().find(|c| c.cpu == p.cpu_b).unwrap();
        match p.label.as_str() {
            "smt" => assert_eq!((a.package, a.core), (b.package, b.core)),
            "cross_package/same_node" => assert!(a.package != b.package && a.node == b.node),
            "cross_package" => assert!(a.package != b.package && a.node != b.node),
            "package" => assert!(a.package == b.package && a.core != b.core),
            other => panic!("unexpected class {other}"),
        }
    }
}

#[test]
fn x86_cluster_65535_is_not_a_level() {
    // x86 kernels print cluster_id 65535 on every CPU: two cores of one package are "package".
    let cpu = |cpu, core| PairCpu {
        cpu,
        package: Some(0),
        die: Some(0),
        cluster: Some(65535),
        core: Some(core),
        node: Some(0),
    };
    let pairs = representative_pairs(&[cpu(0, 0), cpu(1, 1), cpu(2, 0)]);
    let l: Vec<String> = pairs.iter().map(|p| p.label.clone()).collect();
    assert_eq!(l, vec!["smt", "package"]);
    assert_eq!((pairs[0].cpu_a, pairs[0].cpu_b), (0, 2));
}

#[test]
fn ping_pong_counts_every_round_trip() {
    let r = ping_pong(100, None, &|_| {}).unwrap();
    assert_eq!(r.round_trips, 100);
    assert!(r.round_trip_ns > 0.0);
    assert!(ping_pong(0, None, &|_| {}).is_err());
}

/// A sample far longer than its time cap (a billion round trips take minutes) ends at the cap,
/// at a multiple of 1024 round trips, and both threads agree on the count (a c2c
/// sample calibrated for 0.3 s ran 2.6 s on a descheduled VM).
#[test]
fn ping_pong_stops_at_its_time_cap() {
    let cap = std::time::Duration::from_millis(50);
    let t = std::time::Instant::now();
    let r = ping_pong(1_000_000_000, Some(cap), &|_| {}).unwrap();
    let wall = t.elapsed();
    assert!(r.round_trips < 1_000_000_000);
    assert_eq!(r.round_trips % 1024, 0, "{}", r.round_trips);
    assert!(r.elapsed_ns >= 50_000_000, "{} ns", r.elapsed_ns);
    assert!(wall < std::time::Duration::from_secs(5), "{wall:?}");
    // a cap that is never reached changes nothing
    let r = ping_pong(2000, Some(std::time::Duration::from_secs(60)), &|_| {}).unwrap();
    assert_eq!(r.round_trips, 2000);
}

//! What the peers' own tools say of a machine's CPU side, to hold against the probe's
//! document: `lscpu --sysroot DIR` (util-linux) and `lstopo-no-graphics --input DIR` (hwloc)
//! read a root (a snapshot of hwsurvey, a capture, `/`), and [`PeerFacts`] counts online CPUs,
//! sockets, cores, threads, NUMA nodes with CPUs and each cache's size and instances from
//! their output and from a Machine document. Used by the CLI's `snapshot_peers` test (this
//! machine and the captures) and the guests' test (a snapshot taken inside every guest).
//! Callers check first that both tools are there ([`crate::tool`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// What a tool (or the probe) says of the CPU side of a machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerFacts {
    /// Online CPUs.
    pub cpus: usize,
    /// Packages.
    pub sockets: usize,
    /// Cores.
    pub cores: usize,
    /// Hardware threads (online CPUs with a topology).
    pub threads: usize,
    /// NUMA nodes holding CPUs.
    pub nodes: usize,
    /// Per cache name (`L1d`, `L1i`, `L2`, `L3`): size of one instance in bytes, instances.
    pub caches: BTreeMap<String, (u64, usize)>,
}

/// The standard output of `cmd` as UTF-8; panics, with its stderr, when it cannot start or
/// exits non-zero.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `lscpu` on `root` (`--sysroot` unless `/`) with `args`.
pub fn lscpu(root: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("lscpu");
    if root != Path::new("/") {
        cmd.arg("--sysroot").arg(root);
    }
    run(cmd.args(args).env("LC_ALL", "C"))
}

/// lscpu's facts: `-p=CPU,CORE,SOCKET,NODE` (online CPUs) and `-C --bytes` (caches).
pub fn lscpu_facts(root: &Path) -> PeerFacts {
    let table = lscpu(root, &["-p=CPU,CORE,SOCKET,NODE"]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(',').collect())
        .collect();
    let distinct = |i: usize| {
        rows.iter()
            .filter_map(|r| r.get(i).filter(|v| !v.is_empty()))
            .collect::<BTreeSet<_>>()
            .len()
    };
    let mut caches = BTreeMap::new();
    for line in lscpu(root, &["-C", "--bytes"]).lines().skip(1) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let (Some(one), Some(all)) = (
            w.get(1).and_then(|v| v.parse::<u64>().ok()),
            w.get(2).and_then(|v| v.parse::<u64>().ok()),
        ) else {
            continue;
        };
        if one > 0 {
            caches.insert(w[0].to_string(), (one, (all / one) as usize));
        }
    }
    PeerFacts {
        cpus: rows.len(),
        sockets: distinct(2),
        cores: distinct(1),
        threads: rows.len(),
        nodes: distinct(3),
        caches,
    }
}

/// `lstopo-no-graphics` on `root` (`--input` unless `/`): the XML of the whole system (CPUs
/// outside this process's cgroup too), without I/O.
///
/// On a root other than `/`, hwloc's `x86` component is left out as well as `pci`: hwloc 2.9
/// runs it beside `--input` and it adds the caches that CPUID of the machine running lstopo
/// describes (an arm64 guest's snapshot, whose sysfs gives L1 only, read on this x86 host came
/// out with the host's 2 x 512 KiB L2 and 16 MiB L3 on its CPUs 0-1).
pub fn lstopo_xml(root: &Path) -> String {
    let mut cmd = Command::new("lstopo-no-graphics");
    let components = if root != Path::new("/") {
        cmd.arg("--input").arg(root);
        "-pci,-x86"
    } else {
        "-pci"
    };
    run(cmd
        .args(["--no-io", "--disallowed", "--of", "xml", "-"])
        .env("HWLOC_COMPONENTS", components))
}

/// hwloc's facts from its XML: objects counted by type; caches by level and type.
pub fn lstopo_facts(root: &Path) -> PeerFacts {
    let xml = lstopo_xml(root);
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&xml, options).expect("lstopo XML");
    let objects: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("object"))
        .collect();
    let count = |t: &str| {
        objects
            .iter()
            .filter(|n| n.attribute("type") == Some(t))
            .count()
    };
    let nodes_with_cpus = objects
        .iter()
        .filter(|n| n.attribute("type") == Some("NUMANode"))
        .filter(|n| {
            // hwloc's bitmask: 32-bit words `0x...` joined by `,` (an empty word is 0)
            n.attribute("cpuset").is_some_and(|c| {
                c.split(',').any(|w| {
                    u64::from_str_radix(w.trim_start_matches("0x"), 16).is_ok_and(|v| v != 0)
                })
            })
        })
        .count();
    let mut caches: BTreeMap<String, (u64, usize)> = BTreeMap::new();
    for n in &objects {
        let Some(t) = n.attribute("type") else {
            continue;
        };
        let Some(level) = t.strip_prefix('L').and_then(|r| r.strip_suffix("Cache")) else {
            continue;
        };
        let name = match (level, n.attribute("cache_type")) {
            ("1", Some("1")) => "L1d".to_string(),
            ("1i", _) => "L1i".to_string(),
            (l, _) => format!("L{l}"),
        };
        let size: u64 = n
            .attribute("cache_size")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let e = caches.entry(name).or_insert((size, 0));
        e.1 += 1;
    }
    caches.retain(|_, (size, _)| *size > 0);
    PeerFacts {
        cpus: count("PU"),
        sockets: count("Package"),
        cores: count("Core"),
        threads: count("PU"),
        nodes: nodes_with_cpus,
        caches,
    }
}

/// The probe's facts from its Machine document (plain, schema 2: `hwsurvey probe --json`, a
/// snapshot's `hwsurvey/machine.json`). Panics on a document without the CPU counts.
pub fn probe_facts(doc: &serde_json::Value) -> PeerFacts {
    let cpu = &doc["cpu"];
    let topo = &cpu["topology"];
    let n =
        |v: &serde_json::Value| v.as_u64().unwrap_or_else(|| panic!("not a count: {v}")) as usize;
    let online = cpu["cpus"]
        .as_array()
        .expect("cpu.cpus")
        .iter()
        .filter(|c| c["online"] == true)
        .count();
    let nodes = doc["numa"]["nodes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|n| n["cpus"].as_str().is_some_and(|c| !c.is_empty()))
                .count()
        })
        .unwrap_or(0);
    let mut caches = BTreeMap::new();
    for c in cpu["caches"].as_array().expect("cpu.caches") {
        let level = c["level"].as_u64().expect("level");
        let name = match (level, c["cache_type"].as_str()) {
            (1, Some("data")) => "L1d".to_string(),
            (1, Some("instruction")) => "L1i".to_string(),
            (l, _) => format!("L{l}"),
        };
        if let (Some(size), Some(instances)) = (c["size_bytes"].as_u64(), c["instances"].as_u64()) {
            caches.insert(name, (size, instances as usize));
        }
    }
    PeerFacts {
        cpus: online,
        sockets: n(&topo["packages"]),
        cores: n(&topo["cores"]),
        threads: n(&topo["threads"]),
        nodes,
        caches,
    }
}

/// The caches (`L1d`, `L1i`, `L2`, `L3`) of the root whose kernel ids contradict their sharing
/// lists: a CPU's `cache/indexN/id` differs from that of a CPU its `shared_cpu_list` names (the
/// QEMU `EPYC` model's guest: L3 ids 0 and 1, both lists `0-1`). lscpu counts such a cache's
/// instances by id, hwloc and the probe by the lists: there the two tools disagree, and lscpu's
/// count of it is not held against the probe.
pub fn contradictory_cache_ids(root: &Path) -> BTreeSet<String> {
    let cpu_dir = root.join("sys/devices/system/cpu");
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    // (name, cpu) -> (id, shared list)
    let mut leaves: BTreeMap<(String, u32), (String, Vec<u32>)> = BTreeMap::new();
    let Ok(cpus) = std::fs::read_dir(&cpu_dir) else {
        return BTreeSet::new();
    };
    for cpu in cpus.flatten() {
        let Some(n) = cpu
            .file_name()
            .to_str()
            .and_then(|f| f.strip_prefix("cpu"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(indexes) = std::fs::read_dir(cpu.path().join("cache")) else {
            continue;
        };
        for index in indexes.flatten() {
            let p = index.path();
            let (Some(level), Some(kind), Some(id), Some(list)) = (
                read(&p.join("level")),
                read(&p.join("type")),
                read(&p.join("id")),
                read(&p.join("shared_cpu_list")),
            ) else {
                continue;
            };
            let name = match (level.as_str(), kind.as_str()) {
                ("1", "Data") => "L1d".to_string(),
                ("1", "Instruction") => "L1i".to_string(),
                (l, _) => format!("L{l}"),
            };
            let shared = hwsurvey_model::CpuSet::parse_list(&list)
                .map(|s| s.iter().collect())
                .unwrap_or_default();
            leaves.insert((name, n), (id, shared));
        }
    }
    leaves
        .iter()
        .filter(|((name, _), (id, shared))| {
            shared.iter().any(|other| {
                leaves
                    .get(&(name.clone(), *other))
                    .is_some_and(|(o, _)| o != id)
            })
        })
        .map(|((name, _), _)| name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The x86-epyc-1s guest's snapshot: L1d per CPU (ids 0, 1, lists `0` and `1`), one L3
    /// whose ids are 0 and 1 while both lists say `0-1`.
    #[test]
    fn cache_ids_that_contradict_their_lists_are_named() {
        let dir = tempfile::tempdir().unwrap();
        for cpu in 0..2u32 {
            for (index, level, kind, id, list) in [
                (0, "1", "Data", cpu, cpu.to_string()),
                (3, "3", "Unified", cpu, "0-1".to_string()),
            ] {
                let p = format!("/sys/devices/system/cpu/cpu{cpu}/cache/index{index}");
                crate::write(dir.path(), &format!("{p}/level"), level);
                crate::write(dir.path(), &format!("{p}/type"), kind);
                crate::write(dir.path(), &format!("{p}/id"), &id.to_string());
                crate::write(dir.path(), &format!("{p}/shared_cpu_list"), &list);
            }
        }
        assert_eq!(
            contradictory_cache_ids(dir.path()),
            BTreeSet::from(["L3".to_string()])
        );
    }
}

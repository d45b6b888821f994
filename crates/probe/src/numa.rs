//! NUMA nodes: their CPUs and memory, CPU-less and memory-only nodes, holes in node ids,
//! the distance matrix, and per-node huge page pools.
//!
//! Sources: `/sys/devices/system/node/{possible,online,has_cpu,has_memory}` (node lists),
//! `/sys/devices/system/node/nodeN/{cpulist,cpumap,meminfo,distance}` and
//! `/sys/devices/system/node/nodeN/hugepages/hugepages-<size>kB/{nr,free,surplus}_hugepages`.
//! A machine or capture without `/sys/devices/system/node` (kernel without CONFIG_NUMA,
//! s390x, many phones) has no NUMA description: [`Numa::source`] says so.

use std::collections::{BTreeMap, BTreeSet};

use hwsurvey_model::{CpuSet, NodeId, NodeSet, Probed, Unknown};

use crate::cpu::read_cpuset;
use crate::pages::read_node_pools;
use crate::{ProbeError, SysRoot};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::numa::*;

const NODE_DIR: &str = "/sys/devices/system/node";

/// Reads a node list that is never empty on a running kernel (possible, online, has_cpu,
/// has_memory: some node holds the running CPU and the kernel's memory).
fn read_nodeset(root: &SysRoot, path: &str) -> Probed<NodeSet> {
    match root.read_value(path) {
        Ok(t) => match NodeSet::parse_list(&t) {
            Ok(s) if s.is_empty() => {
                Probed::Unknown(ProbeError::invalid(path, "a non-empty node list", &t).into())
            }
            Ok(s) => Probed::Known(s),
            Err(_) => {
                Probed::Unknown(ProbeError::invalid(path, "a node list like \"0-3\"", &t).into())
            }
        },
        Err(e) => Probed::Unknown(e.into()),
    }
}

fn note<T>(problems: &mut Vec<Unknown>, p: &Probed<T>) {
    if let Probed::Unknown(u) = p {
        if !matches!(u, Unknown::Missing { .. }) {
            problems.push(u.clone());
        }
    }
}

/// Probes NUMA under `root`. Never fails.
pub fn probe(root: &SysRoot) -> Numa {
    let mut problems = Vec::new();
    let names = match root.list_dir(NODE_DIR) {
        Ok(n) => n,
        Err(e) => {
            let u: Unknown = e.into();
            return Numa {
                source: Probed::Unknown(u.clone()),
                nodes: Vec::new(),
                id_holes: NodeSet::new(),
                possible: Probed::Unknown(u.clone()),
                online: Probed::Unknown(u.clone()),
                has_cpu: Probed::Unknown(u.clone()),
                has_memory: Probed::Unknown(u.clone()),
                distances: Probed::Unknown(u),
                problems,
                notes: Vec::new(),
            };
        }
    };
    let mut ids: Vec<NodeId> = names
        .iter()
        .filter_map(|n| n.strip_prefix("node"))
        .filter_map(|n| n.parse().ok())
        .collect();
    ids.sort_unstable();
    let possible_cpus = read_cpuset(root, "/sys/devices/system/cpu/possible", None).ok();
    let mut notes = Vec::new();
    let mut nodes = Vec::new();
    for &id in &ids {
        let d = format!("{NODE_DIR}/node{id}");
        let cpus = match read_cpuset(root, &format!("{d}/cpulist"), Some(&format!("{d}/cpumap"))) {
            Ok(s) => Probed::Known(s),
            Err(e) => Probed::Unknown(e.into()),
        };
        note(&mut problems, &cpus);
        let cpus = match (cpus, &possible_cpus) {
            (Probed::Known(c), Some(p)) if !c.is_subset(p) => {
                notes.push(format!(
                    "node{id}: the kernel's mask names CPUs {} beyond the possible CPUs {}; kept only possible ones",
                    c.difference(p).to_list_string(),
                    p.to_list_string()
                ));
                Probed::Known(c.intersection(p))
            }
            (c, _) => c,
        };
        let meminfo_path = format!("{d}/meminfo");
        let meminfo: Result<BTreeMap<String, u64>, Unknown> = match root.read(&meminfo_path) {
            Ok(t) => parse_node_meminfo(&t).map_err(|bad| {
                ProbeError::invalid(
                    &meminfo_path,
                    "lines like \"Node 0 MemTotal: 123 kB\"",
                    &bad,
                )
                .into()
            }),
            Err(e) => Err(e.into()),
        };
        let field = |key: &str| -> Probed<u64> {
            match &meminfo {
                Ok(m) => match m.get(key) {
                    Some(v) => Probed::Known(*v),
                    None => Probed::Unknown(Unknown::Invalid {
                        path: meminfo_path.clone(),
                        detail: format!("no {key} line"),
                    }),
                },
                Err(u) => Probed::Unknown(u.clone()),
            }
        };
        let memory_total_bytes = field("MemTotal");
        let memory_free_bytes = field("MemFree");
        note(&mut problems, &memory_total_bytes);
        let dist_path = format!("{d}/distance");
        let distances = match root.read_value(&dist_path) {
            Ok(t) => match parse_distance_row(&t) {
                Some(v) => Probed::Known(v),
                None => Probed::Unknown(
                    ProbeError::invalid(&dist_path, "integers like \"10 21\"", &t).into(),
                ),
            },
            Err(e) => Probed::Unknown(e.into()),
        };
        note(&mut problems, &distances);
        let cpu_less = cpus.known().is_some_and(|c| c.is_empty());
        let memory_only = cpu_less && memory_total_bytes.known().is_some_and(|m| *m > 0);
        nodes.push(Node {
            node: id,
            cpus,
            memory_total_bytes,
            memory_free_bytes,
            cpu_less,
            memory_only,
            distances,
            hugepages: read_node_pools(root, id, &mut problems),
        });
    }
    let id_holes: NodeSet = match ids.last() {
        Some(&max) => (0..max).filter(|i| !ids.contains(i)).collect(),
        None => NodeSet::new(),
    };
    let distances = build_matrix(&nodes);
    let possible = read_nodeset(root, &format!("{NODE_DIR}/possible"));
    let online = read_nodeset(root, &format!("{NODE_DIR}/online"));
    let has_cpu = read_nodeset(root, &format!("{NODE_DIR}/has_cpu"));
    let has_memory = read_nodeset(root, &format!("{NODE_DIR}/has_memory"));
    for p in [&possible, &online, &has_cpu, &has_memory] {
        note(&mut problems, p);
    }
    if let Probed::Known(with_cpus) = &has_cpu {
        for n in nodes.iter_mut() {
            if with_cpus.contains(n.node) && n.cpus.known().is_some_and(|c| c.is_empty()) {
                let u: Unknown = ProbeError::invalid(
                    format!("{NODE_DIR}/node{}/cpulist", n.node),
                    format!("CPUs (node/has_cpu lists node{})", n.node),
                    "",
                )
                .into();
                problems.push(u.clone());
                n.cpus = Probed::Unknown(u);
                n.cpu_less = false;
                n.memory_only = false;
            }
        }
    }
    impossible_layouts(root, &nodes, &mut problems);
    Numa {
        source: Probed::Known(NODE_DIR.to_string()),
        nodes,
        id_holes,
        possible,
        online,
        has_cpu,
        has_memory,
        distances,
        problems,
        notes,
    }
}

/// Layouts no kernel writes become problems rather than tables shown as true: a CPU in
/// more than one node (nodes all listing the same CPUs), and per-node MemTotal adding up to
/// far less (below [`NODE_MEMORY_MIN_SHARE`]) or more than `/proc/meminfo` MemTotal.
fn impossible_layouts(root: &SysRoot, nodes: &[Node], problems: &mut Vec<Unknown>) {
    let mut seen: BTreeMap<u32, NodeId> = BTreeMap::new();
    let mut shared: BTreeMap<(NodeId, NodeId), CpuSet> = BTreeMap::new();
    for n in nodes {
        if let Probed::Known(cpus) = &n.cpus {
            for c in cpus.iter() {
                if let Some(first) = seen.insert(c, n.node) {
                    shared.entry((first, n.node)).or_default().insert(c);
                    seen.insert(c, first);
                }
            }
        }
    }
    let with_cpus = nodes
        .iter()
        .filter(|n| n.cpus.known().is_some_and(|c| !c.is_empty()))
        .count();
    let all_same = with_cpus > 1 && {
        let sets: BTreeSet<&CpuSet> = nodes.iter().filter_map(|n| n.cpus.known()).collect();
        sets.len() == 1
    };
    if all_same {
        problems.push(Unknown::Other {
            detail: format!(
                "every NUMA node ({}) lists the same CPUs: not a layout a kernel makes; the per-node CPU lists are wrong",
                nodes.len()
            ),
        });
    } else {
        for ((a, b), cpus) in &shared {
            problems.push(Unknown::Other {
                detail: format!(
                    "NUMA nodes {a} and {b} both list CPUs {}: a CPU belongs to one node",
                    crate::cpu::shorten(&cpus.to_list_string())
                ),
            });
        }
    }
    let totals: Option<Vec<u64>> = nodes
        .iter()
        .map(|n| n.memory_total_bytes.known().copied())
        .collect();
    let Some(totals) = totals.filter(|t| !t.is_empty()) else {
        return;
    };
    let sum: u64 = totals.iter().sum();
    let Some(total) = crate::memory::meminfo::mem_total_bytes(root) else {
        return;
    };
    if total > 0
        && ((sum as f64) < NODE_MEMORY_MIN_SHARE * total as f64 || sum > total + total / 50)
    {
        problems.push(Unknown::Other {
            detail: format!(
                "the nodes' MemTotal add up to {:.1} GiB but /proc/meminfo MemTotal is {:.1} GiB: the per-node memory is wrong or incomplete",
                sum as f64 / (1u64 << 30) as f64,
                total as f64 / (1u64 << 30) as f64
            ),
        });
    }
}

fn build_matrix(nodes: &[Node]) -> Probed<Distances> {
    let ids: Vec<NodeId> = nodes.iter().map(|n| n.node).collect();
    let mut matrix = Vec::new();
    for n in nodes {
        match &n.distances {
            Probed::Known(row) if row.len() == ids.len() => matrix.push(row.clone()),
            Probed::Known(row) => {
                return Probed::Unknown(Unknown::Invalid {
                    path: format!("{NODE_DIR}/node{}/distance", n.node),
                    detail: format!("{} distances for {} nodes", row.len(), ids.len()),
                })
            }
            Probed::Unknown(u) => return Probed::Unknown(u.clone()),
        }
    }
    if ids.is_empty() {
        return Probed::Unknown(Unknown::Missing {
            path: format!("{NODE_DIR}/nodeN/distance"),
        });
    }
    Probed::Known(Distances { nodes: ids, matrix })
}

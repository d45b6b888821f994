//! NUMA nodes: their CPUs and memory, CPU-less and memory-only nodes, holes in node ids,
//! the distance matrix, and per-node huge page pools.
//!
//! Sources: `/sys/devices/system/node/{possible,online,has_cpu,has_memory}` (node lists),
//! `/sys/devices/system/node/nodeN/{cpulist,cpumap,meminfo,distance}` and
//! `/sys/devices/system/node/nodeN/hugepages/hugepages-<size>kB/{nr,free,surplus}_hugepages`.
//! A machine or capture without `/sys/devices/system/node` (kernel without CONFIG_NUMA,
//! s390x, many phones) has no NUMA description: [`Numa::source`] says so.

use crate::pages::PoolCounts;
use hwsurvey_model::{CpuSet, NodeId, NodeSet, Probed, Unknown};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// All NUMA nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Numa {
    /// Where the description came from, or why there is none.
    pub source: Probed<String>,
    /// Node folders found, ascending (ids may have holes: 0, 2, 3).
    pub nodes: Vec<Node>,
    /// Ids missing between 0 and the largest node id (e.g. node1 on the Xeon X7550 capture).
    pub id_holes: NodeSet,
    /// `node/possible`.
    pub possible: Probed<NodeSet>,
    /// `node/online`.
    pub online: Probed<NodeSet>,
    /// `node/has_cpu`.
    pub has_cpu: Probed<NodeSet>,
    /// `node/has_memory`.
    pub has_memory: Probed<NodeSet>,
    /// Distance matrix, rows and columns in the order of [`Distances::nodes`].
    pub distances: Probed<Distances>,
    /// Files that were there but could not be read or parsed.
    pub problems: Vec<Unknown>,
    /// Corrections made, in words (e.g. a node mask wider than the possible CPUs).
    pub notes: Vec<String>,
}

/// The SLIT distance matrix (10 = local).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Distances {
    /// Node ids of the rows and columns.
    pub nodes: Vec<NodeId>,
    /// `matrix[i][j]`: distance from `nodes[i]` to `nodes[j]`.
    pub matrix: Vec<Vec<u32>>,
}

/// One NUMA node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Node id.
    pub node: NodeId,
    /// `nodeN/cpulist` (or `cpumap`); empty for a CPU-less node.
    pub cpus: Probed<CpuSet>,
    /// `MemTotal` of `nodeN/meminfo`, bytes (the kernel's "kB" is KiB: x 1024).
    pub memory_total_bytes: Probed<u64>,
    /// `MemFree` of `nodeN/meminfo`, bytes (x 1024).
    pub memory_free_bytes: Probed<u64>,
    /// Has no CPUs (known CPU list, empty).
    pub cpu_less: bool,
    /// Has memory but no CPUs (A64FX HBM nodes, POWER memory-only nodes, CXL).
    pub memory_only: bool,
    /// This node's row of the distance matrix, as the kernel prints it.
    pub distances: Probed<Vec<u32>>,
    /// Huge page pools on this node, by page size.
    pub hugepages: Vec<PoolCounts>,
}

/// Parses a `nodeN/meminfo` text ("Node 0 MemTotal:  16777216 kB") into bytes per key.
/// Values with a "kB" unit are KiB and are multiplied by 1024; values without a unit
/// (`HugePages_Total`) are counts and are returned as they are.
pub fn parse_node_meminfo(text: &str) -> Result<BTreeMap<String, u64>, String> {
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| {
        !l.trim_matches(|c: char| c == '\0' || c.is_whitespace())
            .is_empty()
    }) {
        let (key, value) = line.split_once(':').ok_or_else(|| line.to_string())?;
        let key = key
            .split_whitespace()
            .last()
            .ok_or_else(|| line.to_string())?;
        let mut parts = value.split_whitespace();
        let n: u64 = parts
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| line.to_string())?;
        let v = match parts.next() {
            Some("kB") => n.checked_mul(1024).ok_or_else(|| line.to_string())?,
            None => n,
            Some(_) => return Err(line.to_string()),
        };
        out.insert(key.to_string(), v);
    }
    Ok(out)
}

/// Parses a `nodeN/distance` line ("10 16 32 33").
pub fn parse_distance_row(text: &str) -> Option<Vec<u32>> {
    let v: Option<Vec<u32>> = text.split_whitespace().map(|t| t.parse().ok()).collect();
    v.filter(|v| !v.is_empty())
}

/// Per-node memory adding up to less than this share of `/proc/meminfo` MemTotal is not a
/// layout the kernel makes (node meminfo counts every page the node manages).
pub const NODE_MEMORY_MIN_SHARE: f64 = 0.9;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_meminfo_kib() {
        let m = parse_node_meminfo(
            "Node 5 MemTotal:        8388608 kB\nNode 5 HugePages_Total:     0\n",
        )
        .unwrap();
        assert_eq!(m.get("MemTotal"), Some(&(8u64 << 30)));
        assert_eq!(m.get("HugePages_Total"), Some(&0));
        assert!(parse_node_meminfo("Node 0 MemTotal: x kB").is_err());
    }
    #[test]
    fn distance_rows() {
        assert_eq!(
            parse_distance_row("10 16 32 33\n"),
            Some(vec![10, 16, 32, 33])
        );
        assert_eq!(parse_distance_row("10 2x"), None);
        assert_eq!(parse_distance_row(""), None);
    }
}

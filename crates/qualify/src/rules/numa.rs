//! NUMA rules: `numa.nodes`.

use hwsurvey_model::Probed;

use crate::facts::Facts;
use crate::{Finding, Params, RuleFinding, Verdict};

/// `numa.nodes`: holes in node numbering (a node missing), nodes without CPUs or memory.
pub fn numa_nodes(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "numa.nodes";
    let nodes = need!(f.numa.nodes, ID);
    if nodes.is_empty() {
        return vec![Finding::not_evaluated(
            ID,
            "no /sys/devices/system/node/node* folders (kernel without NUMA)",
        )];
    }
    if nodes
        .iter()
        .all(|n| n.cpus.known().is_none() && n.mem_total_bytes.known().is_none())
    {
        // node folders without cpulist or meminfo: nothing but the numbering to judge
        return vec![Finding::not_evaluated(
            ID,
            format!(
                "none of {} NUMA nodes has a readable cpulist or meminfo",
                nodes.len()
            ),
        )];
    }
    let mut out = Vec::new();
    let ids: Vec<u32> = nodes.iter().map(|n| n.id).collect();
    let names = missing_node_names(&ids);
    if !names.is_empty() {
        out.push(
            Finding::new(
                ID,
                Verdict::Warn,
                format!(
                    "NUMA {} missing (nodes present: {})",
                    names.join(", "),
                    ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
                ),
            )
            .with("/sys/devices/system/node", ids.iter().map(|i| format!("node{i}")).collect::<Vec<_>>().join(" "))
            .fix("a socket's memory is not seen as its own node: check the DIMMs of that socket and the firmware's NUMA/SRAT setting (node interleaving off)"),
        );
    }
    for n in nodes {
        if let Probed::Known(cpus) = &n.cpus {
            if cpus.is_empty() {
                out.push(
                    Finding::new(
                        ID,
                        Verdict::Warn,
                        format!("node{} has no CPUs: its memory is remote to every CPU", n.id),
                    )
                    .with(format!("/sys/devices/system/node/node{}/cpulist", n.id), "(empty)")
                    .fix("expected for CXL or HBM expanders; otherwise the partition (LPAR/VM) was given memory without the CPUs beside it"),
                );
            }
        }
        if let Probed::Known(0) = n.mem_total_bytes {
            out.push(
                Finding::new(
                    ID,
                    Verdict::Warn,
                    format!(
                        "node{} has no memory: its CPUs reach all memory remotely",
                        n.id
                    ),
                )
                .with(
                    format!("/sys/devices/system/node/node{}/meminfo", n.id),
                    "MemTotal: 0 kB",
                )
                .fix("populate DIMMs on that socket"),
            );
        }
    }
    out
}

/// Most ranges of missing node numbers a finding names; the rest are counted.
const MISSING_RANGES_SHOWN: usize = 8;

/// The node numbers below the highest of `ids` that are not among them, as ranges
/// (`node1`, `node3-5`), at most [`MISSING_RANGES_SHOWN`] and then how many more: in time
/// and memory of the ids alone, whatever their values (a crafted document's node 4294967295
/// once made this list every number below it, 100 GB).
fn missing_node_names(ids: &[u32]) -> Vec<String> {
    let mut sorted: Vec<u64> = ids.iter().map(|&i| u64::from(i)).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut ranges = Vec::new();
    let mut next = 0u64;
    for &id in &sorted {
        if id > next {
            ranges.push((next, id - 1));
        }
        next = id + 1;
    }
    let mut names: Vec<String> = ranges
        .iter()
        .take(MISSING_RANGES_SHOWN)
        .map(|&(a, b)| {
            if a == b {
                format!("node{a}")
            } else {
                format!("node{a}-{b}")
            }
        })
        .collect();
    if ranges.len() > MISSING_RANGES_SHOWN {
        names.push(format!(
            "{} more ranges",
            ranges.len() - MISSING_RANGES_SHOWN
        ));
    }
    names
}

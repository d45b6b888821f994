//! `hwsurvey probe --cpus`: one line per CPU, as `lscpu -e` (util-linux) prints it, from the
//! [`Machine`] document.
//!
//! Columns: `CPU NODE SOCKET DIE CLUSTER CORE L1d:L1i:L2:L3 ONLINE MAXMHZ MINMHZ`. As lscpu,
//! SOCKET, DIE, CLUSTER and CORE are logical numbers (0, 1, ... in the order of the CPUs, not
//! the kernel's `physical_package_id`, which is an ACPI offset on some machines); a cache
//! column is the sysfs `cache/indexM/id` of the CPU's instance where the kernel writes one,
//! else the instance's logical number; MAXMHZ and MINMHZ are `cpufreq/cpuinfo_{max,min}_freq`
//! in MHz. `-` where the value is unknown (an offline CPU without topology, no cpufreq).

use std::collections::BTreeMap;

use crate::cpu::CacheType;
use crate::Machine;

/// Logical numbers of the values in `keys` in order of first appearance.
fn logical<K: Ord + Clone>(keys: impl Iterator<Item = Option<K>>) -> BTreeMap<K, usize> {
    let mut out = BTreeMap::new();
    for k in keys.flatten() {
        let n = out.len();
        out.entry(k).or_insert(n);
    }
    out
}

/// The cache columns' names and, per column, the value for each CPU number.
fn cache_columns(machine: &Machine) -> Vec<(String, BTreeMap<u32, String>)> {
    let mut caches: Vec<&crate::cpu::Cache> = machine
        .cpu
        .caches
        .iter()
        .filter(|c| !c.instance_cpus.is_empty())
        .collect();
    let rank = |t: CacheType| match t {
        CacheType::Data => 0,
        CacheType::Instruction => 1,
        _ => 2,
    };
    caches.sort_by_key(|c| (c.level, rank(c.cache_type)));
    let mut columns: Vec<(String, BTreeMap<u32, String>)> = Vec::new();
    for c in caches {
        let name = format!("L{}{}", c.level, c.cache_type.suffix());
        // instances without a kernel id: numbered by their first CPU
        let mut unnamed: Vec<(u32, usize)> = c
            .instance_cpus
            .iter()
            .enumerate()
            .filter(|(i, _)| c.instance_ids.get(*i).copied().flatten().is_none())
            .filter_map(|(i, set)| set.iter().next().map(|first| (first, i)))
            .collect();
        unnamed.sort();
        let number: BTreeMap<usize, usize> = unnamed
            .iter()
            .enumerate()
            .map(|(n, (_, i))| (*i, n))
            .collect();
        // one column per name: a second cache of the same name (two sizes) adds its CPUs
        let at = match columns.iter().position(|(n, _)| *n == name) {
            Some(at) => at,
            None => {
                columns.push((name, BTreeMap::new()));
                columns.len() - 1
            }
        };
        for (i, set) in c.instance_cpus.iter().enumerate() {
            let value = match c.instance_ids.get(i).copied().flatten() {
                Some(id) => id.to_string(),
                None => number.get(&i).map(|n| n.to_string()).unwrap_or_default(),
            };
            for cpu in set.iter() {
                columns[at].1.insert(cpu, value.clone());
            }
        }
    }
    columns
}

/// Index of the cache column (`L1d:L1i:L2:L3`) in a row.
const CACHE_COLUMN: usize = 6;

/// MHz with lscpu's four decimals.
fn mhz(khz: Option<u64>) -> String {
    khz.map(|k| format!("{:.4}", k as f64 / 1000.0))
        .unwrap_or_else(|| "-".into())
}

/// The table of `hwsurvey probe --cpus` (see the module text): a header line, then one line
/// per CPU the kernel lists (offline ones included), columns right-aligned.
pub fn cpu_table(machine: &Machine) -> String {
    let cpus = &machine.cpu.cpus;
    let sockets = logical(cpus.iter().map(|c| c.package_id));
    let dies = logical(cpus.iter().map(|c| c.package_id.zip(c.die_id)));
    let mut node_of: BTreeMap<u32, u32> = BTreeMap::new();
    for n in &machine.numa.nodes {
        for cpu in n.cpus.known().into_iter().flat_map(|s| s.iter()) {
            node_of.insert(cpu, n.node);
        }
    }
    let caches = cache_columns(machine);
    let cache_header = caches
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(":");
    let dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let mut rows: Vec<Vec<String>> = vec![[
        "CPU",
        "NODE",
        "SOCKET",
        "DIE",
        "CLUSTER",
        "CORE",
        cache_header.as_str(),
        "ONLINE",
        "MAXMHZ",
        "MINMHZ",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()];
    for c in cpus {
        let cache = if caches.is_empty() {
            "-".to_string()
        } else {
            caches
                .iter()
                .map(|(_, m)| m.get(&c.cpu).cloned().unwrap_or_default())
                .collect::<Vec<_>>()
                .join(":")
        };
        rows.push(vec![
            c.cpu.to_string(),
            dash(node_of.get(&c.cpu).map(|n| n.to_string())),
            dash(
                c.package_id
                    .and_then(|p| sockets.get(&p))
                    .map(|n| n.to_string()),
            ),
            dash(
                c.package_id
                    .zip(c.die_id)
                    .and_then(|k| dies.get(&k))
                    .map(|n| n.to_string()),
            ),
            // the probe's one answer: an index where the machine has a cluster level
            dash(c.cluster_index.map(|n| n.to_string())),
            dash(c.core_index.map(|n| n.to_string())),
            cache,
            if c.online { "yes" } else { "no" }.to_string(),
            mhz(c.max_freq_khz),
            mhz(c.min_freq_khz),
        ]);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        // numbers right-aligned, the cache ids left-aligned (as lscpu)
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (v, w))| {
                if i == CACHE_COLUMN {
                    format!("{v:<w$}")
                } else {
                    format!("{v:>w$}")
                }
            })
            .collect();
        out.push_str(line.join(" ").trim_end());
        out.push('\n');
    }
    out
}

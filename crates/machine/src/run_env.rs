//! [`RunEnv`]: the facts of the live system that the plan and the runner need (CPUs the
//! process may use and their topology, last-level cache, memory limits, page sizes) and the
//! settings that affect numbers (governor, THP, SMT, numa_balancing, load average).
//!
//! One reader of the machine: every machine fact of a [`RunEnv`] (topology, NUMA nodes,
//! last-level cache, page sizes and hugetlb pools, THP, SMT, governor, numa_balancing, kernel
//! release) is taken from the probe's [`Machine`] (`hwsurvey_probe::run_env::ReadRunEnv`); only
//! what belongs to this process or moves while it runs is read live there: the CPUs it may use
//! and its memory and CPU limits ([`crate::limits`]), MemAvailable, the host name, and the
//! [`LoadSnapshot`] (load average, MemAvailable, clocksource). The result file records them
//! as `environment`, `load_before` and `load_after`.

use crate::cpu::{Cache, CacheType, LogicalCpu};
use crate::pages::PoolTotals;
use crate::Machine;
use hwsurvey_model::{CpuId, CpuSet, Probed, Unknown};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where one CPU sits. Ids are the kernel's (`topology/physical_package_id`, `core_id`),
/// which are not dense (Kunpeng 920 reports package ids 36 and 8442).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuPlace {
    /// OS CPU number.
    pub cpu: u32,
    /// `/sys/devices/system/cpu/cpuN/topology/physical_package_id`, if readable.
    pub package: Option<i64>,
    /// `/sys/devices/system/cpu/cpuN/topology/core_id`, if readable.
    pub core: Option<i64>,
    /// NUMA node whose `cpulist` holds this CPU, if any.
    pub node: Option<u32>,
}

/// The last-level cache, from `/sys/devices/system/cpu/cpu*/cache/index*/{level,type,size,
/// shared_cpu_list}` (the kernel's "K" suffix is KiB).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastLevelCache {
    /// Cache level (3 on most servers, 2 where no L3 is exposed).
    pub level: u32,
    /// Size of one instance, bytes.
    pub instance_size_bytes: u64,
    /// Distinct instances (distinct `shared_cpu_list`).
    pub instances: u32,
    /// Sum over instances, bytes.
    pub total_size_bytes: u64,
}

/// Live facts for planning and running, and the environment recorded in the result file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEnv {
    /// `std::env::consts::ARCH` of this binary.
    pub arch: String,
    /// `/proc/sys/kernel/hostname`.
    pub hostname: Probed<String>,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel_release: Probed<String>,
    /// CPUs this process may run on: the intersection of `sched_getaffinity` (sys feature;
    /// `Cpus_allowed_list` in a capture) and the cgroup v1, v2 and legacy cpusets (see
    /// [`crate::limits`]), else `/sys/devices/system/cpu/online`, else
    /// `0..available_parallelism`.
    pub usable_cpus: CpuSet,
    /// Where the usable CPUs came from.
    pub usable_cpus_source: String,
    /// Topology of each usable CPU, in CPU order.
    pub cpus: Vec<CpuPlace>,
    /// Last-level cache.
    pub llc: Probed<LastLevelCache>,
    /// `/proc/meminfo` MemAvailable, bytes (kernel kB = KiB).
    pub mem_available_bytes: Probed<u64>,
    /// The lowest cgroup memory limit of this process, bytes: cgroup v1
    /// `memory.limit_in_bytes` / `memory.memsw.limit_in_bytes` and v2 `memory.max` /
    /// `memory.high`, up the hierarchy; `Known(None)` = no limit.
    pub cgroup_memory_limit_bytes: Probed<Option<u64>>,
    /// The lowest limit other than MemAvailable (cgroups v1/v2, `RLIMIT_AS`, `RLIMIT_DATA`)
    /// and what set it (see [`crate::limits`]); `None` when there is none, or in result files
    /// written before it was kept.
    #[serde(default)]
    pub memory_limit: Option<crate::limits::MemoryLimit>,
    /// The cgroup CPU quota that allows the least run time (v2 `cpu.max`, v1
    /// `cpu.cfs_quota_us`, up the hierarchy; see [`crate::limits::CpuQuota`]); `None` when
    /// there is none, or in result files written before 2026-12-04. Threads past its CPUs'
    /// worth are throttled, whatever [`RunEnv::usable_cpus`] holds.
    #[serde(default)]
    pub cpu_quota: Option<crate::limits::CpuQuota>,
    /// Base page size, bytes (`KernelPageSize` of the first mapping in `/proc/self/smaps`).
    pub base_page_size_bytes: Probed<u64>,
    /// hugetlb pools, system-wide, ascending by page size ([`crate::pages::HugePool::totals`]
    /// of `machine.pages.hugetlb`); a count the probe could not read or refused is unknown.
    pub huge_pools: Vec<PoolTotals>,
    /// THP mode, the bracketed word of `/sys/kernel/mm/transparent_hugepage/enabled`.
    pub thp_enabled: Probed<String>,
    /// The governor of the cpufreq policy of the first usable CPU
    /// (`/sys/devices/system/cpu/cpufreq/policyN/scaling_governor`, `machine.os.cpufreq`).
    pub governor: Probed<String>,
    /// `/sys/devices/system/cpu/smt/control` (on, off, forceoff, notsupported, notimplemented).
    pub smt_control: Probed<String>,
    /// `/proc/sys/kernel/numa_balancing` (0 off, 1 on, 2 memory tiering).
    pub numa_balancing: Probed<String>,
}

/// Settings that may change during a run; read before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadSnapshot {
    /// `/proc/loadavg`: 1, 5 and 15 minute load averages.
    pub load_average: Probed<[f64; 3]>,
    /// `/proc/meminfo` MemAvailable, bytes.
    pub mem_available_bytes: Probed<u64>,
    /// The kernel's clocksource (`hwsurvey_probe::clocksource::current`); the kernel may change it
    /// during a run. Files written before it was recorded read as unknown.
    #[serde(default = "clocksource_not_recorded")]
    pub clocksource: Probed<String>,
}

/// [`LoadSnapshot::clocksource`] of a file written before hwsurvey recorded it.
fn clocksource_not_recorded() -> Probed<String> {
    Probed::Unknown(Unknown::Other {
        detail: "not recorded by the hwsurvey that wrote this file".into(),
    })
}

/// Parses the bracketed selection of a sysfs mode file: `always [madvise] never` -> `madvise`.
pub fn parse_bracketed(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

/// Parses `/proc/loadavg` (`0.52 0.58 0.59 1/123 4567`).
pub fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text.split_whitespace().map(|w| w.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// Where each CPU of `usable` sits, from the probe's `Machine`: package from
/// `machine.cpu.cpus` (sysfs `topology/physical_package_id`) as the probe counts packages
/// (`topology.per_package`), core = the machine-wide core number (`core_index`), node from
/// `machine.numa.nodes`. A CPU the machine does not list gets no package, core or node.
pub fn places_from_machine(machine: &Machine, usable: &CpuSet) -> Vec<CpuPlace> {
    let logical: BTreeMap<CpuId, &LogicalCpu> =
        machine.cpu.cpus.iter().map(|c| (c.cpu, c)).collect();
    let mut node_of = BTreeMap::new();
    for n in &machine.numa.nodes {
        if let Some(set) = n.cpus.known() {
            for c in set.iter() {
                node_of.insert(c, n.node);
            }
        }
    }
    // The probe's packages: where it merged the kernel's ids (sparc64 gives each core of a
    // single-chip part its own physical_package_id), its one package, not the kernel's ids.
    let packages: Vec<i64> = machine
        .cpu
        .topology
        .per_package
        .iter()
        .map(|p| p.package_id)
        .collect();
    let package_of = |raw: Option<i64>| -> Option<i64> {
        let raw = raw?;
        if packages.is_empty() || packages.contains(&raw) {
            Some(raw)
        } else if let [one] = packages.as_slice() {
            Some(*one)
        } else {
            Some(raw)
        }
    };
    usable
        .iter()
        .map(|cpu| {
            let l = logical.get(&cpu);
            CpuPlace {
                cpu,
                package: package_of(l.and_then(|l| l.package_id)),
                // the machine-wide core number; the kernel's core_id is unique only per package
                core: l.and_then(|l| l.core_index.map(i64::from).or(l.core_id)),
                node: node_of.get(&cpu).copied(),
            }
        })
        .collect()
}

/// The last-level cache from the probe's `Machine` (`machine.cpu.caches`): the highest level
/// of a data or unified cache whose size is known; instances and total summed over every
/// entry of that level (hybrid machines list one entry per core kind). Unknown, with the
/// reason, when the probe found no such cache.
pub fn llc_from_machine(machine: &Machine) -> Probed<LastLevelCache> {
    let known =
        |c: &&Cache| c.cache_type != CacheType::Instruction && c.total_bytes.known().is_some();
    let Some(level) = machine
        .cpu
        .caches
        .iter()
        .filter(known)
        .map(|c| c.level)
        .max()
    else {
        return Probed::Unknown(Unknown::Other {
            detail: format!(
                "the probe found no data or unified cache with a known size ({})",
                machine.cpu.caches_source.display()
            ),
        });
    };
    let at: Vec<&Cache> = machine
        .cpu
        .caches
        .iter()
        .filter(known)
        .filter(|c| c.level == level)
        .collect();
    Probed::Known(LastLevelCache {
        level: u32::from(level),
        instance_size_bytes: at
            .iter()
            .filter_map(|c| c.size_bytes.known().copied())
            .max()
            .unwrap_or(0),
        instances: at.iter().map(|c| c.instances).sum(),
        total_size_bytes: at.iter().filter_map(|c| c.total_bytes.known()).sum(),
    })
}

/// The governor of the cpufreq policy that holds `cpu` (`machine.os.cpufreq`): unknown with
/// the probe's reason when it read no policies, or naming the CPU when no policy lists it.
pub fn governor_of(machine: &Machine, cpu: CpuId) -> Probed<String> {
    let policies = match &machine.os.cpufreq {
        Probed::Known(p) => p,
        Probed::Unknown(u) => return Probed::Unknown(u.clone()),
    };
    match policies
        .iter()
        .find(|p| p.cpus.known().is_some_and(|s| s.contains(cpu)))
    {
        Some(p) => p.governor.clone(),
        None => Probed::Unknown(Unknown::Other {
            detail: format!(
                "no cpufreq policy lists CPU {cpu} (/sys/devices/system/cpu/cpufreq/policy*/related_cpus)"
            ),
        }),
    }
}

impl RunEnv {
    /// Number of usable CPUs (>= 1).
    pub fn cpu_count(&self) -> usize {
        self.usable_cpus.len().max(1)
    }

    /// The CPU quota when it allows less run time than the usable CPUs can take (quota / period
    /// below their number): threads past it are throttled. `None` otherwise.
    pub fn binding_cpu_quota(&self) -> Option<&crate::limits::CpuQuota> {
        self.cpu_quota
            .as_ref()
            .filter(|q| q.cpus() < self.cpu_count() as f64)
    }

    /// Memory the whole run may use: `fraction` x the lowest of MemAvailable, the cgroup
    /// limit and the headroom under [`RunEnv::memory_limit`] (its limit less what already
    /// counts against it: the cgroup's other processes and this one, or this process's address
    /// space), bytes. `None` when none is known.
    pub fn memory_cap_bytes(&self, fraction: f64) -> Option<u64> {
        self.memory_cap(fraction).map(|(b, _)| b)
    }

    /// [`RunEnv::memory_cap_bytes`] with what set it (`MemAvailable (/proc/meminfo)`,
    /// `cgroup v1 memory.limit_in_bytes (<file>)`, `RLIMIT_AS (/proc/self/limits)`, ...).
    pub fn memory_cap(&self, fraction: f64) -> Option<(u64, String)> {
        let mut candidates: Vec<(u64, String)> = Vec::new();
        if let Some(a) = self.mem_available_bytes.known() {
            candidates.push((*a, "MemAvailable (/proc/meminfo)".into()));
        }
        if let Some(Some(c)) = self.cgroup_memory_limit_bytes.known() {
            candidates.push((*c, "cgroup limit".into()));
        }
        if let Some(l) = &self.memory_limit {
            let source = match l.in_use_bytes {
                Some(used) => format!(
                    "{}: limit {}, {} in use",
                    l.source,
                    hwsurvey_model::units::format_bytes_binary(l.bytes),
                    hwsurvey_model::units::format_bytes_binary(used)
                ),
                None => l.source.clone(),
            };
            candidates.push((l.headroom_bytes(), source));
        }
        // The named limit wins a tie with the bare cgroup number (same value, better source).
        let (base, source) = candidates.into_iter().rev().min_by_key(|(b, _)| *b)?;
        Some(((base as f64 * fraction.clamp(0.0, 1.0)) as u64, source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers() {
        assert_eq!(
            parse_bracketed("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            parse_loadavg("0.52 0.58 0.59 1/123 4567"),
            Some([0.52, 0.58, 0.59])
        );
        assert_eq!(parse_loadavg("0.52 x"), None);
    }
}

//! [`RunEnv`]: the facts of the live system that the plan and the runner need (CPUs the
//! process may use and their topology, last-level cache, memory limits, page sizes) and the
//! settings that affect numbers (governor, THP, SMT, numa_balancing, load average).
//!
//! One reader of the machine: every machine fact of a [`RunEnv`] (topology, NUMA nodes,
//! last-level cache, page sizes and hugetlb pools, THP, SMT, governor, numa_balancing, kernel
//! release) is taken from the probe's [`Machine`] ([`RunEnv::from_machine`]); only what
//! belongs to this process or moves while it runs is read here: the CPUs it may use and its
//! memory and CPU limits ([`crate::limits`]), MemAvailable, the host name, and the
//! [`LoadSnapshot`] (load average, MemAvailable, clocksource). The result file records them
//! as `environment`, `load_before` and `load_after`.

use std::collections::BTreeMap;

use hwsurvey_model::{CpuId, CpuSet, Probed, Unknown};
use serde::{Deserialize, Serialize};

use crate::cpu::{Cache, CacheType, LogicalCpu};
use crate::limits::Limits;
use crate::pages::PoolTotals;
use crate::{Machine, ProbeError, SysRoot};

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
    /// The kernel's clocksource ([`crate::clocksource::current`]); the kernel may change it
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

fn unknown_from(e: ProbeError) -> Unknown {
    let path = e.path().to_string();
    if e.is_missing() {
        Unknown::Missing { path }
    } else {
        Unknown::Other {
            detail: e.to_string(),
        }
    }
}

fn read_word(root: &SysRoot, path: &str) -> Probed<String> {
    match root.read(path) {
        Ok(t) => Probed::Known(t.trim().to_string()),
        Err(e) => Probed::Unknown(unknown_from(e)),
    }
}

pub use crate::memory::meminfo::parse_meminfo_bytes;

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

/// The 1, 5 and 15 minute load averages of `/proc/loadavg` under `root` as one line for a
/// benchmark's log (`0.52 0.58 0.59`), or why there are none (`unreadable: /proc/loadavg: ...`,
/// `unparsable: /proc/loadavg holds "..."`).
pub fn load_average_line(root: &SysRoot) -> String {
    match root.read("/proc/loadavg") {
        Ok(t) => match parse_loadavg(&t) {
            Some([a, b, c]) => format!("{a:.2} {b:.2} {c:.2}"),
            None => format!("unparsable: /proc/loadavg holds {:?}", t.trim()),
        },
        Err(e) => format!("unreadable: {e}"),
    }
}

/// The CPUs this process may use: the limits' (affinity and cpusets, see [`crate::limits`]),
/// else the machine's online CPUs, else `0..available_parallelism`; and where they came from.
fn usable_cpus(machine: &Machine, limits: &Limits) -> (CpuSet, String) {
    if let Some(l) = limits.usable_cpus() {
        return (l.cpus, l.source);
    }
    if let Some(set) = machine.cpu.online.known().filter(|s| !s.is_empty()) {
        return (set.clone(), "/sys/devices/system/cpu/online".into());
    }
    let n = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    (
        (0..n as u32).collect(),
        "std::thread::available_parallelism".into(),
    )
}

/// The CPUs the calling thread may run on (`sched_getaffinity`); `None` if the call fails.
#[cfg(feature = "sys")]
pub fn current_affinity() -> Option<CpuSet> {
    use nix::sched::{sched_getaffinity, CpuSet as NixSet};
    use nix::unistd::Pid;
    let set = sched_getaffinity(Pid::from_raw(0)).ok()?;
    let ids: CpuSet = (0..NixSet::count())
        .filter(|&i| set.is_set(i).unwrap_or(false))
        .map(|i| i as hwsurvey_model::CpuId)
        .collect();
    if ids.is_empty() {
        None
    } else {
        Some(ids)
    }
}

/// `/proc/meminfo` MemAvailable under `root`, bytes (kB = KiB): free memory, read when asked.
fn mem_available(root: &SysRoot) -> Probed<u64> {
    match root.read("/proc/meminfo") {
        Ok(t) => match parse_meminfo_bytes(&t, "MemAvailable") {
            Some(v) => Probed::Known(v),
            None => Probed::Unknown(Unknown::Invalid {
                path: "/proc/meminfo".into(),
                detail: "no MemAvailable line".into(),
            }),
        },
        Err(e) => Probed::Unknown(unknown_from(e)),
    }
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
fn governor_of(machine: &Machine, cpu: CpuId) -> Probed<String> {
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
    /// The run environment of `machine` (the probe of `root`) for this process: the machine
    /// facts are the machine's (each usable CPU's place, the last-level cache, base page size,
    /// hugetlb pools, THP mode, governor of the first usable CPU, SMT control, numa_balancing,
    /// kernel release); read live under `root` are only the CPUs and limits of this process
    /// ([`crate::limits::probe`]; else the machine's online CPUs), MemAvailable and the host
    /// name. Never fails: unknowns carry their reasons.
    pub fn from_machine(machine: &Machine, root: &SysRoot) -> RunEnv {
        let limits = crate::limits::probe(root);
        let (usable_cpus, usable_cpus_source) = usable_cpus(machine, &limits);
        let first = usable_cpus.first().unwrap_or(0);
        RunEnv {
            arch: std::env::consts::ARCH.to_string(),
            hostname: read_word(root, "/proc/sys/kernel/hostname"),
            kernel_release: machine.os.kernel.release.clone(),
            cpus: places_from_machine(machine, &usable_cpus),
            llc: llc_from_machine(machine),
            governor: governor_of(machine, first),
            usable_cpus,
            usable_cpus_source,
            mem_available_bytes: mem_available(root),
            cgroup_memory_limit_bytes: Probed::Known(limits.cgroup_limit_bytes()),
            memory_limit: limits.lowest_limit().cloned(),
            cpu_quota: limits.cpu_quota().cloned(),
            base_page_size_bytes: machine.pages.base_page_size_bytes.clone(),
            huge_pools: machine.pages.hugetlb.iter().map(|p| p.totals()).collect(),
            thp_enabled: machine.pages.thp.enabled.clone().map(|c| c.selected),
            smt_control: machine.os.smt.clone().map(|s| s.control),
            numa_balancing: machine.os.numa_balancing.clone().map(|v| v.to_string()),
        }
    }

    /// [`RunEnv::from_machine`] of a fresh probe of `root` ([`crate::probe_machine`]): for
    /// callers that have no `Machine` at hand (tests, benchmarks). Never fails.
    pub fn read(root: &SysRoot) -> RunEnv {
        RunEnv::from_machine(&crate::probe_machine(root), root)
    }

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

impl LoadSnapshot {
    /// Reads `/proc/loadavg`, MemAvailable and the clocksource under `root`.
    pub fn read(root: &SysRoot) -> LoadSnapshot {
        let load_average = match root.read("/proc/loadavg") {
            Ok(t) => match parse_loadavg(&t) {
                Some(v) => Probed::Known(v),
                None => Probed::Unknown(Unknown::Invalid {
                    path: "/proc/loadavg".into(),
                    detail: format!(
                        "expected three numbers, got {}",
                        hwsurvey_model::text::quote(t.trim())
                    ),
                }),
            },
            Err(e) => Probed::Unknown(unknown_from(e)),
        };
        LoadSnapshot {
            load_average,
            mem_available_bytes: mem_available(root),
            clocksource: crate::clocksource::current(root),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers() {
        let mi = "MemTotal:       16314444 kB\nMemAvailable:    8000000 kB\n";
        assert_eq!(parse_meminfo_bytes(mi, "MemAvailable"), Some(8_192_000_000));
        assert_eq!(parse_meminfo_bytes(mi, "SwapTotal"), None);
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

    #[test]
    fn memory_cap_takes_the_lower() {
        let mut env = RunEnv::read(&SysRoot::new("/nonexistent-root"));
        env.mem_available_bytes = Probed::Known(1000);
        env.cgroup_memory_limit_bytes = Probed::Known(Some(400));
        assert_eq!(env.memory_cap_bytes(0.5), Some(200));
        env.cgroup_memory_limit_bytes = Probed::Known(None);
        assert_eq!(env.memory_cap_bytes(0.5), Some(500));
    }

    /// The breaker's case (2026-12-03): a 32 MiB cgroup v1 limit planned an 8 MiB working set
    /// (0.25 x the limit) while hwsurvey itself held about 37 MB, and the run was OOM-killed.
    /// The cap is now a fraction of what is left under the limit.
    #[test]
    fn memory_cap_leaves_out_what_already_counts_against_the_limit() {
        let mut env = RunEnv::read(&SysRoot::new("/nonexistent-root"));
        env.mem_available_bytes = Probed::Known(20 << 30);
        env.cgroup_memory_limit_bytes = Probed::Known(Some(2 << 30));
        env.memory_limit = Some(crate::limits::MemoryLimit {
            bytes: 2 << 30,
            source: "cgroup v2 memory.max (/sys/fs/cgroup/a/memory.max)".into(),
            in_use_bytes: Some(1536 << 20),
        });
        let (cap, source) = env.memory_cap(0.5).unwrap();
        assert_eq!(cap, 256 << 20);
        assert_eq!(
            source,
            "cgroup v2 memory.max (/sys/fs/cgroup/a/memory.max): limit 2 GiB, 1.50 GiB in use"
        );
        // Filled past the limit (memory.high lets it): nothing left, a cap of 0.
        env.memory_limit.as_mut().unwrap().in_use_bytes = Some(3 << 30);
        assert_eq!(env.memory_cap_bytes(0.5), Some(0));
        // Use unknown: the whole limit, as before.
        env.memory_limit.as_mut().unwrap().in_use_bytes = None;
        assert_eq!(env.memory_cap_bytes(0.5), Some(1 << 30));
    }
}

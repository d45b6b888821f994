//! [`RunEnv`]: the facts of the live system that the plan and the runner need (CPUs the
//! process may use and their topology, last-level cache, memory limits, page sizes) and the
//! settings that affect numbers (governor, THP, SMT, numa_balancing, load average).
//!
//! Read through a [`SysRoot`] with pure parsers, so a captured snapshot gives the same answer.
//! The plan takes it beside the probe's `Machine`; the result file records it as
//! `environment`, `load_before` and `load_after`.

use hwsurvey_model::{CpuSet, Probed, Unknown};
use serde::{Deserialize, Serialize};

use crate::limits::Limits;
use crate::{ProbeError, SysRoot};

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

/// One hugetlb pool: `/sys/kernel/mm/hugepages/hugepages-<N>kB/{nr,free}_hugepages`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HugePool {
    /// Page size, bytes (from the folder name, kB = KiB).
    pub page_size_bytes: u64,
    /// `nr_hugepages`.
    pub total_pages: u64,
    /// `free_hugepages`.
    pub free_pages: u64,
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
    /// hugetlb pools.
    pub huge_pools: Vec<HugePool>,
    /// THP mode, the bracketed word of `/sys/kernel/mm/transparent_hugepage/enabled`.
    pub thp_enabled: Probed<String>,
    /// `/sys/devices/system/cpu/cpu<first usable>/cpufreq/scaling_governor`.
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

/// Parses a cache `size` file: `32K`, `8192K`, `2M` (K = KiB, M = MiB), or plain bytes.
pub fn parse_cache_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.chars().last()? {
        'K' => (&t[..t.len() - 1], 1024),
        'M' => (&t[..t.len() - 1], 1024 * 1024),
        'G' => (&t[..t.len() - 1], 1024 * 1024 * 1024),
        _ => (t, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// The last-level cache among `(level, type, size_bytes, shared_cpu_list)` entries: highest
/// level of a Data or Unified cache, instances counted by distinct `shared_cpu_list`.
pub fn last_level_cache(entries: &[(u32, String, u64, String)]) -> Option<LastLevelCache> {
    let level = entries
        .iter()
        .filter(|e| e.1 != "Instruction")
        .map(|e| e.0)
        .max()?;
    let mut seen = std::collections::BTreeMap::new();
    for (l, ty, size, shared) in entries {
        if *l == level && ty != "Instruction" {
            seen.insert(shared.trim().to_string(), *size);
        }
    }
    let instance = seen.values().copied().max()?;
    Some(LastLevelCache {
        level,
        instance_size_bytes: instance,
        instances: seen.len() as u32,
        total_size_bytes: seen.values().sum(),
    })
}

fn read_llc(root: &SysRoot, cpus: &CpuSet) -> Probed<LastLevelCache> {
    let mut entries = Vec::new();
    for cpu in cpus.iter() {
        let base = format!("/sys/devices/system/cpu/cpu{}/cache", cpu);
        let Ok(dirs) = root.list_dir(&base) else {
            continue;
        };
        for d in dirs.iter().filter(|d| d.starts_with("index")) {
            let p = |f: &str| root.read(&format!("{base}/{d}/{f}")).ok();
            let (Some(level), Some(ty), Some(size), Some(shared)) =
                (p("level"), p("type"), p("size"), p("shared_cpu_list"))
            else {
                continue;
            };
            let (Ok(level), Some(size)) = (level.trim().parse::<u32>(), parse_cache_size(&size))
            else {
                continue;
            };
            entries.push((level, ty.trim().to_string(), size, shared));
        }
    }
    match last_level_cache(&entries) {
        Some(llc) => Probed::Known(llc),
        None => Probed::Unknown(Unknown::Missing {
            path: "/sys/devices/system/cpu/cpu*/cache/index*".into(),
        }),
    }
}

fn usable_cpus(root: &SysRoot, limits: &Limits) -> (CpuSet, String) {
    if let Some(l) = limits.usable_cpus() {
        return (l.cpus, l.source);
    }
    if let Ok(text) = root.read("/sys/devices/system/cpu/online") {
        if let Ok(set) = CpuSet::parse_list(text.trim()) {
            if !set.is_empty() {
                return (set, "/sys/devices/system/cpu/online".into());
            }
        }
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

fn cgroup_limit(limits: &Limits) -> Probed<Option<u64>> {
    Probed::Known(limits.cgroup_limit_bytes())
}

impl RunEnv {
    /// Reads everything under `root`. Never fails: unknowns carry their reasons.
    pub fn read(root: &SysRoot) -> RunEnv {
        let limits = crate::limits::probe(root);
        let (usable_cpus, usable_cpus_source) = usable_cpus(root, &limits);
        let mut node_of = std::collections::BTreeMap::new();
        if let Ok(nodes) = root.list_dir("/sys/devices/system/node") {
            for n in nodes {
                let Some(id) = n.strip_prefix("node").and_then(|i| i.parse::<u32>().ok()) else {
                    continue;
                };
                if let Ok(list) = root.read(&format!("/sys/devices/system/node/{n}/cpulist")) {
                    if let Ok(set) = CpuSet::parse_list(list.trim()) {
                        for c in set.iter() {
                            node_of.insert(c, id);
                        }
                    }
                }
            }
        }
        let cpus = usable_cpus
            .iter()
            .map(|c| {
                let topo = |f: &str| {
                    root.read(&format!("/sys/devices/system/cpu/cpu{}/topology/{f}", c))
                        .ok()
                        .and_then(|t| t.trim().parse::<i64>().ok())
                };
                CpuPlace {
                    cpu: c,
                    package: topo("physical_package_id"),
                    core: topo("core_id"),
                    node: node_of.get(&c).copied(),
                }
            })
            .collect();
        let mem_available_bytes = match root.read("/proc/meminfo") {
            Ok(t) => match parse_meminfo_bytes(&t, "MemAvailable") {
                Some(v) => Probed::Known(v),
                None => Probed::Unknown(Unknown::Invalid {
                    path: "/proc/meminfo".into(),
                    detail: "no MemAvailable line".into(),
                }),
            },
            Err(e) => Probed::Unknown(unknown_from(e)),
        };
        let base_page_size_bytes = match root.read("/proc/self/smaps") {
            Ok(t) => match t
                .lines()
                .find_map(|l| l.strip_prefix("KernelPageSize:"))
                .and_then(|v| parse_meminfo_bytes(&format!("x:{v}"), "x"))
            {
                Some(v) => Probed::Known(v),
                None => Probed::Unknown(Unknown::Invalid {
                    path: "/proc/self/smaps".into(),
                    detail: "no KernelPageSize line".into(),
                }),
            },
            Err(e) => Probed::Unknown(unknown_from(e)),
        };
        let mut huge_pools = Vec::new();
        if let Ok(dirs) = root.list_dir("/sys/kernel/mm/hugepages") {
            for d in dirs {
                let Some(kib) = d
                    .strip_prefix("hugepages-")
                    .and_then(|s| s.strip_suffix("kB"))
                    .and_then(|s| s.parse::<u64>().ok())
                else {
                    continue;
                };
                let num = |f: &str| {
                    root.read(&format!("/sys/kernel/mm/hugepages/{d}/{f}"))
                        .ok()
                        .and_then(|t| t.trim().parse::<u64>().ok())
                        .unwrap_or(0)
                };
                huge_pools.push(HugePool {
                    page_size_bytes: kib * 1024,
                    total_pages: num("nr_hugepages"),
                    free_pages: num("free_hugepages"),
                });
            }
        }
        huge_pools.sort_by_key(|p| p.page_size_bytes);
        let first = usable_cpus.first().unwrap_or(0);
        let thp_path = "/sys/kernel/mm/transparent_hugepage/enabled";
        let thp_enabled = match read_word(root, thp_path) {
            Probed::Known(t) => match parse_bracketed(&t) {
                Some(w) => Probed::Known(w),
                None => Probed::Unknown(Unknown::Invalid {
                    path: thp_path.into(),
                    detail: format!(
                        "expected a [bracketed] mode, got {}",
                        hwsurvey_model::text::quote(&t)
                    ),
                }),
            },
            Probed::Unknown(u) => Probed::Unknown(u),
        };
        RunEnv {
            arch: std::env::consts::ARCH.to_string(),
            hostname: read_word(root, "/proc/sys/kernel/hostname"),
            kernel_release: read_word(root, "/proc/sys/kernel/osrelease"),
            llc: read_llc(root, &usable_cpus),
            usable_cpus,
            usable_cpus_source,
            cpus,
            mem_available_bytes,
            cgroup_memory_limit_bytes: cgroup_limit(&limits),
            memory_limit: limits.lowest_limit().cloned(),
            cpu_quota: limits.cpu_quota().cloned(),
            base_page_size_bytes,
            huge_pools,
            thp_enabled,
            governor: read_word(
                root,
                &format!("/sys/devices/system/cpu/cpu{first}/cpufreq/scaling_governor"),
            ),
            smt_control: read_word(root, "/sys/devices/system/cpu/smt/control"),
            numa_balancing: read_word(root, "/proc/sys/kernel/numa_balancing"),
        }
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
        let mem_available_bytes = match root.read("/proc/meminfo") {
            Ok(t) => parse_meminfo_bytes(&t, "MemAvailable")
                .map(Probed::Known)
                .unwrap_or(Probed::Unknown(Unknown::Invalid {
                    path: "/proc/meminfo".into(),
                    detail: "no MemAvailable line".into(),
                })),
            Err(e) => Probed::Unknown(unknown_from(e)),
        };
        LoadSnapshot {
            load_average,
            mem_available_bytes,
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
        assert_eq!(parse_cache_size("8192K"), Some(8 << 20));
        assert_eq!(parse_cache_size("32M"), Some(32 << 20));
        assert_eq!(parse_cache_size("K"), None);
    }

    #[test]
    fn llc_instances() {
        // Two 8 MiB L3 instances (two CCX), L2 per core, L1i ignored.
        let e = |l: u32, t: &str, s: u64, sh: &str| (l, t.to_string(), s, sh.to_string());
        let entries = vec![
            e(1, "Instruction", 64 << 10, "0"),
            e(2, "Unified", 512 << 10, "0"),
            e(3, "Unified", 8 << 20, "0-2"),
            e(3, "Unified", 8 << 20, "0-2"),
            e(3, "Unified", 8 << 20, "3-5"),
        ];
        let llc = last_level_cache(&entries).unwrap();
        assert_eq!(llc.level, 3);
        assert_eq!(llc.instances, 2);
        assert_eq!(llc.total_size_bytes, 16 << 20);
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

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

use hwsurvey_model::{CpuSet, Probed, Unknown};

use crate::limits::Limits;
use crate::{Machine, ProbeError, SysRoot};

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

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::run_env::*;

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

/// The reader of a [`RunEnv`] (as procfs's `Current` reads a procfs-core type): the run
/// environment of a probed [`Machine`] for this process, with the few facts that belong to the
/// process read live under a root. Bring it into scope to call `RunEnv::from_machine` and
/// `RunEnv::read`.
pub trait ReadRunEnv {
    /// The run environment of `machine` (the probe of `root`) for this process.
    fn from_machine(machine: &Machine, root: &SysRoot) -> RunEnv;
    /// [`ReadRunEnv::from_machine`] of a fresh probe of `root`.
    fn read(root: &SysRoot) -> RunEnv;
}

impl ReadRunEnv for RunEnv {
    /// The run environment of `machine` (the probe of `root`) for this process: the machine
    /// facts are the machine's (each usable CPU's place, the last-level cache, base page size,
    /// hugetlb pools, THP mode, governor of the first usable CPU, SMT control, numa_balancing,
    /// kernel release); read live under `root` are only the CPUs and limits of this process
    /// ([`crate::limits::probe`]; else the machine's online CPUs), MemAvailable and the host
    /// name. Never fails: unknowns carry their reasons.
    fn from_machine(machine: &Machine, root: &SysRoot) -> RunEnv {
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
            mem_available_bytes: crate::memory::meminfo::mem_available(root),
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
    fn read(root: &SysRoot) -> RunEnv {
        RunEnv::from_machine(&crate::probe_machine(root), root)
    }
}

/// The reader of a [`LoadSnapshot`]: the settings that may change during a run, read under a
/// root before and after it. Bring it into scope to call `LoadSnapshot::read`.
pub trait ReadLoad {
    /// Reads `/proc/loadavg`, MemAvailable and the clocksource under `root`.
    fn read(root: &SysRoot) -> LoadSnapshot;
}

impl ReadLoad for LoadSnapshot {
    fn read(root: &SysRoot) -> LoadSnapshot {
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
            mem_available_bytes: crate::memory::meminfo::mem_available(root),
            clocksource: crate::clocksource::current(root),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

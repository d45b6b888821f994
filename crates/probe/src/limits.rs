//! Limits a run must honour: the memory the process may use and the CPUs it may run on.
//!
//! Memory: the lowest of
//! - `/proc/meminfo` `MemAvailable`;
//! - cgroup v1 `memory.limit_in_bytes` and `memory.memsw.limit_in_bytes`, in the process's
//!   memory cgroup and every ancestor up to the hierarchy's root;
//! - cgroup v2 `memory.max` and `memory.high`, likewise up the hierarchy;
//! - `RLIMIT_AS` and `RLIMIT_DATA` (`/proc/self/limits`, "Max address space" and
//!   "Max data size", soft limit).
//!
//! Each limit keeps what already counts against it ([`MemoryLimit::in_use_bytes`]): the
//! cgroup's `memory.current` (v2) or `memory.usage_in_bytes` / `memory.memsw.usage_in_bytes`
//! (v1), beside the limit file; the process's `VmSize` / `VmData` (`/proc/self/status`) for
//! `RLIMIT_AS` / `RLIMIT_DATA`. A run may use only the rest ([`MemoryLimit::headroom_bytes`]):
//! a 2 GiB cgroup that other processes already fill to 1.5 GiB leaves 0.5 GiB, and the tool's
//! own footprint counts too.
//!
//! CPUs: the intersection of the affinity mask (`sched_getaffinity` on the live machine,
//! `Cpus_allowed_list` of `/proc/self/status` in a capture), the cgroup v2
//! `cpuset.cpus.effective`, the cgroup v1 `cpuset.effective_cpus` / `cpuset.cpus`, and the
//! legacy cpuset file system (`/proc/self/cpuset` names the cpuset; its mount holds
//! `effective_cpus` / `cpus`).
//!
//! CPU time: the lowest CFS bandwidth limit ([`CpuQuota`]) of the cgroup v2 `cpu.max` and the
//! cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`, in the process's cgroup and every
//! ancestor: a quota of 1.5 CPUs lets the process's threads run 150 ms of every 100 ms period
//! together, however many CPUs they may run on, and throttles them for the rest.
//!
//! Mount points come from `/proc/self/mountinfo` (cgroup v2 may sit at `/sys/fs/cgroup` or
//! `/sys/fs/cgroup/unified`); without it the usual places under `/sys/fs/cgroup` are tried.
//! Pure parsers (text in, value out) sit beside thin readers over a [`SysRoot`], so a capture
//! gives the same answer as the live machine.

use hwsurvey_model::{CpuSet, Probed, Unknown};
use serde::{Deserialize, Serialize};

use crate::{ProbeError, SysRoot};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::limits::*;

/// A cgroup v1 limit at or above this many bytes means "no limit" (the kernel writes
/// `PAGE_COUNTER_MAX` x page size, 9223372036854771712 with 4 KiB pages).
pub const V1_UNLIMITED_BYTES: u64 = 1 << 62;

/// One set of CPUs the process is confined to, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuLimit {
    /// The CPUs.
    pub cpus: CpuSet,
    /// What gave it: `sched_getaffinity`, a `Cpus_allowed_list` or a cpuset file path.
    pub source: String,
}

/// Every limit found for the probing process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// `/proc/meminfo` `MemAvailable`, bytes (kernel kB = KiB).
    pub mem_available_bytes: Probed<u64>,
    /// Finite memory limits (cgroup v1, v2, rlimits), in the order found.
    pub memory_limits: Vec<MemoryLimit>,
    /// CPU sets the process is confined to (affinity, cpusets).
    pub cpu_limits: Vec<CpuLimit>,
    /// CFS bandwidth limits of its cgroups, innermost first (empty in values written before
    /// 2026-12-04).
    #[serde(default)]
    pub cpu_quotas: Vec<CpuQuota>,
    /// Files that were there but could not be read or parsed.
    pub problems: Vec<Unknown>,
}

impl Limits {
    /// The one of MemAvailable and every finite limit that leaves the least headroom
    /// ([`MemoryLimit::headroom_bytes`]), with its source; `None` when none is known.
    pub fn memory_cap(&self) -> Option<MemoryLimit> {
        let avail = self.mem_available_bytes.known().map(|b| MemoryLimit {
            bytes: *b,
            source: "MemAvailable (/proc/meminfo)".into(),
            in_use_bytes: None,
        });
        avail
            .into_iter()
            .chain(self.memory_limits.iter().cloned())
            .min_by_key(MemoryLimit::headroom_bytes)
    }

    /// The finite limit other than MemAvailable (cgroups, rlimits) that leaves the least
    /// headroom, if any.
    pub fn lowest_limit(&self) -> Option<&MemoryLimit> {
        self.memory_limits.iter().min_by_key(|l| l.headroom_bytes())
    }

    /// The lowest finite cgroup limit (v1 or v2), bytes, if any.
    pub fn cgroup_limit_bytes(&self) -> Option<u64> {
        self.memory_limits
            .iter()
            .filter(|l| l.source.starts_with("cgroup"))
            .map(|l| l.bytes)
            .min()
    }

    /// The CPU quota that allows the least run time ([`lowest_cpu_quota`]), if any.
    pub fn cpu_quota(&self) -> Option<&CpuQuota> {
        lowest_cpu_quota(&self.cpu_quotas)
    }

    /// The CPUs usable by the process: the intersection of every CPU limit, with the sources
    /// joined by " ∩ "; `None` when there is none or the intersection is empty (a damaged
    /// capture: the kernel never runs a process on no CPU).
    pub fn usable_cpus(&self) -> Option<CpuLimit> {
        let mut it = self.cpu_limits.iter();
        let first = it.next()?.clone();
        let out = it.fold(first, |acc, l| {
            let cpus = acc.cpus.intersection(&l.cpus);
            if cpus == acc.cpus {
                acc
            } else if cpus == l.cpus {
                l.clone()
            } else {
                CpuLimit {
                    cpus,
                    source: format!("{} ∩ {}", acc.source, l.source),
                }
            }
        });
        (!out.cpus.is_empty()).then_some(out)
    }
}

/// Which kind of cgroup file system a mount is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CgroupFs {
    /// cgroup v1 with these controllers (and `name=` options).
    V1(Vec<String>),
    /// The unified hierarchy.
    V2,
    /// The legacy `cpuset` file system (files without the `cpuset.` prefix).
    LegacyCpuset,
}

/// One cgroup mount of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupMount {
    /// Kind and controllers.
    pub fs: CgroupFs,
    /// The path inside the hierarchy that is mounted (`/` normally; a container's own cgroup).
    pub root: String,
    /// Where it is mounted.
    pub mount_point: String,
}

/// Parses `/proc/self/mountinfo` and returns its cgroup mounts (v1, v2, legacy cpuset), in
/// file order. Lines that are not cgroup mounts, or are malformed, are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<CgroupMount> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split_whitespace().collect();
        let r: Vec<&str> = right.split_whitespace().collect();
        let (Some(root), Some(mp), Some(fstype)) = (l.get(3), l.get(4), r.first()) else {
            continue;
        };
        let fs = match *fstype {
            "cgroup2" => CgroupFs::V2,
            "cpuset" => CgroupFs::LegacyCpuset,
            "cgroup" => CgroupFs::V1(
                r.get(2)
                    .map(|o| {
                        o.split(',')
                            .filter(|w| !matches!(*w, "rw" | "ro") && !w.contains('='))
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => continue,
        };
        out.push(CgroupMount {
            fs,
            root: crate::mounts::unescape(root),
            mount_point: crate::mounts::unescape(mp),
        });
    }
    out
}

/// One line of `/proc/self/cgroup`: hierarchy id, controllers (empty for v2), path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupMembership {
    /// Hierarchy id (0 for v2).
    pub hierarchy: u32,
    /// Controllers of a v1 hierarchy (`name=systemd` kept as is); empty for v2.
    pub controllers: Vec<String>,
    /// The cgroup's path inside the hierarchy.
    pub path: String,
}

/// Parses `/proc/self/cgroup` (`ID:controllers:path` lines); malformed lines are skipped.
pub fn parse_proc_cgroup(text: &str) -> Vec<CgroupMembership> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let id = parts.next()?.trim().parse().ok()?;
            let controllers = parts.next()?;
            let path = parts.next()?.trim().to_string();
            Some(CgroupMembership {
                hierarchy: id,
                controllers: controllers
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect(),
                path,
            })
        })
        .collect()
}

/// Parses a cgroup memory limit file: bytes, or `max` (v2) / a value at or above
/// [`V1_UNLIMITED_BYTES`] (v1) for no limit (`Ok(None)`). `Err` holds the text.
pub fn parse_limit_bytes(text: &str) -> Result<Option<u64>, String> {
    let t = text.trim();
    if t == "max" {
        return Ok(None);
    }
    match t.parse::<u64>() {
        Ok(v) if v >= V1_UNLIMITED_BYTES => Ok(None),
        Ok(v) => Ok(Some(v)),
        // v1 writes -1 into the file to remove a limit; some old kernels echo it back.
        Err(_) if t == "-1" => Ok(None),
        Err(_) => Err(t.to_string()),
    }
}

/// Parses the soft limit of one row of `/proc/PID/limits` (`Max address space`,
/// `Max data size`): `Some(Some(bytes))`, `Some(None)` for unlimited, `None` when the row is
/// absent or unreadable.
pub fn parse_proc_limits(text: &str, row: &str) -> Option<Option<u64>> {
    let line = text.lines().find(|l| l.starts_with(row))?;
    let soft = line[row.len()..].split_whitespace().next()?;
    if soft == "unlimited" {
        Some(None)
    } else {
        soft.parse().ok().map(Some)
    }
}

/// The host directory (kernel path) of cgroup `path` in a hierarchy mounted as `m`: the mount
/// point plus `path` made relative to the mount's root. A path outside the mounted root (a
/// container seeing its parent's path) maps to the mount point itself.
fn cgroup_dir(m: &CgroupMount, path: &str) -> String {
    let root = m.root.trim_end_matches('/');
    let rel = path.strip_prefix(root).unwrap_or("");
    let rel = if rel.is_empty() || rel.starts_with('/') {
        rel
    } else {
        ""
    };
    format!(
        "{}{}",
        m.mount_point.trim_end_matches('/'),
        rel.trim_end_matches('/')
    )
}

/// The folders from `dir` up to `top` (both included), innermost first.
fn up_to(dir: &str, top: &str) -> Vec<String> {
    let mut out = vec![dir.to_string()];
    let mut d = dir.to_string();
    while d.len() > top.len() {
        match d.rfind('/') {
            Some(i) if i >= top.len() => {
                d.truncate(i);
                out.push(d.clone());
            }
            _ => break,
        }
    }
    out
}

/// Cgroup mounts from `/proc/self/mountinfo`, or the usual places under `/sys/fs/cgroup`
/// when the file is absent (older captures).
fn cgroup_mounts(root: &SysRoot, memberships: &[CgroupMembership]) -> Vec<CgroupMount> {
    if let Ok(text) = root.read("/proc/self/mountinfo") {
        let m = parse_mountinfo(&text);
        if !m.is_empty() {
            return m;
        }
    }
    let mut out = Vec::new();
    for mb in memberships {
        if mb.controllers.is_empty() {
            for mp in ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"] {
                if root.exists(&format!("{mp}/cgroup.controllers")) {
                    out.push(CgroupMount {
                        fs: CgroupFs::V2,
                        root: "/".into(),
                        mount_point: mp.into(),
                    });
                    break;
                }
            }
        } else {
            let name = mb.controllers.join(",");
            let mp = format!("/sys/fs/cgroup/{name}");
            let mp = if root.exists(&mp) {
                mp
            } else {
                format!(
                    "/sys/fs/cgroup/{}",
                    mb.controllers.first().cloned().unwrap_or_default()
                )
            };
            out.push(CgroupMount {
                fs: CgroupFs::V1(mb.controllers.clone()),
                root: "/".into(),
                mount_point: mp,
            });
        }
    }
    out
}

fn has_controller(m: &CgroupMount, c: &str) -> bool {
    matches!(&m.fs, CgroupFs::V1(cs) if cs.iter().any(|x| x == c))
}

/// Reads every finite cgroup memory limit on the way up from the process's cgroups.
fn cgroup_memory_limits(
    root: &SysRoot,
    memberships: &[CgroupMembership],
    mounts: &[CgroupMount],
    out: &mut Vec<MemoryLimit>,
    problems: &mut Vec<Unknown>,
) {
    // The usage file beside a limit: unknown when missing (the limit stands); one that is there
    // but unreadable or not a byte count is named in the problems, never taken as 0.
    let in_use = |path: &str, problems: &mut Vec<Unknown>| match root.read(path) {
        Ok(t) => match t.trim().parse::<u64>() {
            Ok(b) => Some(b),
            Err(_) => {
                problems.push(ProbeError::invalid(path, "bytes", t.trim()).into());
                None
            }
        },
        Err(e) if e.is_missing() => None,
        Err(e) => {
            problems.push(e.into());
            None
        }
    };
    let mut read_limit = |path: &str, what: &str, usage: &str| match root.read(path) {
        Ok(t) => match parse_limit_bytes(&t) {
            Ok(Some(b)) => out.push(MemoryLimit {
                bytes: b,
                source: format!("{what} ({path})"),
                in_use_bytes: in_use(usage, problems),
            }),
            Ok(None) => {}
            Err(bad) => {
                problems.push(ProbeError::invalid(path, "bytes, \"max\" or -1", &bad).into())
            }
        },
        Err(e) if e.is_missing() => {}
        Err(e) => problems.push(e.into()),
    };
    for (v2, d) in cgroup_dirs_up(memberships, mounts, "memory") {
        if v2 {
            let current = format!("{d}/memory.current");
            read_limit(&format!("{d}/memory.max"), "cgroup v2 memory.max", &current);
            read_limit(
                &format!("{d}/memory.high"),
                "cgroup v2 memory.high",
                &current,
            );
        } else {
            read_limit(
                &format!("{d}/memory.limit_in_bytes"),
                "cgroup v1 memory.limit_in_bytes",
                &format!("{d}/memory.usage_in_bytes"),
            );
            read_limit(
                &format!("{d}/memory.memsw.limit_in_bytes"),
                "cgroup v1 memory.memsw.limit_in_bytes",
                &format!("{d}/memory.memsw.usage_in_bytes"),
            );
        }
    }
}

/// The folders of the process's cgroups that can hold a limit of `controller`, each with
/// whether it is in the unified (v2) hierarchy: for each line of `/proc/self/cgroup`, its
/// folder in every mount of that hierarchy (v2, or a v1 mount with `controller`) and every
/// ancestor up to the mount point, innermost first.
fn cgroup_dirs_up(
    memberships: &[CgroupMembership],
    mounts: &[CgroupMount],
    controller: &str,
) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    for mb in memberships {
        let v2 = mb.controllers.is_empty();
        if !v2 && !mb.controllers.iter().any(|c| c == controller) {
            continue;
        }
        let of_hierarchy = |m: &&CgroupMount| {
            if v2 {
                m.fs == CgroupFs::V2
            } else {
                has_controller(m, controller)
            }
        };
        for m in mounts.iter().filter(of_hierarchy) {
            let dir = cgroup_dir(m, &mb.path);
            for d in up_to(&dir, m.mount_point.trim_end_matches('/')) {
                out.push((v2, d));
            }
        }
    }
    out
}

/// Reads every CFS bandwidth limit on the way up from the process's cgroups: v2 `cpu.max`
/// (`max PERIOD` = none), v1 `cpu.cfs_quota_us` (-1 = none) with `cpu.cfs_period_us`. A file
/// that is there but unreadable or malformed is named in `problems`, never taken as no limit.
fn cgroup_cpu_quotas(
    root: &SysRoot,
    memberships: &[CgroupMembership],
    mounts: &[CgroupMount],
    out: &mut Vec<CpuQuota>,
    problems: &mut Vec<Unknown>,
) {
    let read = |path: &str, problems: &mut Vec<Unknown>| match root.read(path) {
        Ok(t) => Some(t.trim().to_string()),
        Err(e) if e.is_missing() => None,
        Err(e) => {
            problems.push(e.into());
            None
        }
    };
    for (v2, d) in cgroup_dirs_up(memberships, mounts, "cpu") {
        if v2 {
            let path = format!("{d}/cpu.max");
            let Some(t) = read(&path, problems) else {
                continue;
            };
            match parse_cpu_max_fields(&t) {
                Some((quota, period_us)) if period_us > 0 => {
                    if let Some(quota_us) = quota {
                        out.push(CpuQuota {
                            quota_us,
                            period_us,
                            source: format!("cgroup v2 cpu.max ({path})"),
                        });
                    }
                }
                _ => problems.push(
                    ProbeError::invalid(&path, "\"max PERIOD\" or \"QUOTA PERIOD\"", &t).into(),
                ),
            }
            continue;
        }
        let qpath = format!("{d}/cpu.cfs_quota_us");
        let Some(q) = read(&qpath, problems) else {
            continue;
        };
        let ppath = format!("{d}/cpu.cfs_period_us");
        let Some(p) = read(&ppath, problems) else {
            continue;
        };
        let period_us = match p.parse::<u64>() {
            Ok(v) if v > 0 => v,
            _ => {
                problems.push(ProbeError::invalid(&ppath, "microseconds > 0", &p).into());
                continue;
            }
        };
        match q.parse::<i64>() {
            Ok(-1) => {}
            Ok(v) if v > 0 => out.push(CpuQuota {
                quota_us: v as u64,
                period_us,
                source: format!("cgroup v1 cpu.cfs_quota_us ({qpath})"),
            }),
            _ => problems.push(ProbeError::invalid(&qpath, "microseconds > 0 or -1", &q).into()),
        }
    }
}

/// The one of `quotas` that allows the least run time ([`CpuQuota::cpus`]): the one that binds.
pub fn lowest_cpu_quota(quotas: &[CpuQuota]) -> Option<&CpuQuota> {
    quotas.iter().min_by(|a, b| a.cpus().total_cmp(&b.cpus()))
}

/// Every CFS bandwidth limit of the process's cgroups and their ancestors (see
/// [`CpuQuota`]), innermost first, and the files that could not be read or parsed.
pub fn cpu_quotas(root: &SysRoot) -> (Vec<CpuQuota>, Vec<Unknown>) {
    let memberships = root
        .read("/proc/self/cgroup")
        .map(|t| parse_proc_cgroup(&t))
        .unwrap_or_default();
    let mounts = cgroup_mounts(root, &memberships);
    let (mut found, mut problems) = (Vec::new(), Vec::new());
    cgroup_cpu_quotas(root, &memberships, &mounts, &mut found, &mut problems);
    (found, problems)
}

/// The first of `candidates` that exists, read as a CPU list; `Ok(None)` when none exists.
/// An empty `cpuset.cpus` of a v1 child that never set it, or of a v2 group without the
/// controller, is skipped as absent.
fn first_cpus(root: &SysRoot, candidates: &[String]) -> Result<Option<CpuLimit>, ProbeError> {
    for c in candidates {
        match crate::cpu::read_cpuset(root, c, None) {
            Ok(s) if s.is_empty() => continue,
            Ok(s) => {
                return Ok(Some(CpuLimit {
                    cpus: s,
                    source: c.clone(),
                }))
            }
            Err(e) if e.is_missing() => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// The cgroup cpusets of the process: v2 `cpuset.cpus.effective` (nearest on the way up),
/// v1 `cpuset.effective_cpus` or `cpuset.cpus`, and the legacy cpuset file system's
/// `effective_cpus` or `cpus` at the path of `/proc/self/cpuset`. Each is one entry.
pub fn cgroup_cpusets(root: &SysRoot) -> (Vec<CpuLimit>, Vec<Unknown>) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let memberships = root
        .read("/proc/self/cgroup")
        .map(|t| parse_proc_cgroup(&t))
        .unwrap_or_default();
    let mounts = cgroup_mounts(root, &memberships);
    let mut push = |r: Result<Option<CpuLimit>, ProbeError>| match r {
        Ok(Some(l)) => {
            if !found.iter().any(|f: &CpuLimit| f.source == l.source) {
                found.push(l)
            }
        }
        Ok(None) => {}
        Err(e) => problems.push(e.into()),
    };
    for mb in &memberships {
        if mb.controllers.is_empty() {
            for m in mounts.iter().filter(|m| m.fs == CgroupFs::V2) {
                let dir = cgroup_dir(m, &mb.path);
                let c: Vec<String> = up_to(&dir, m.mount_point.trim_end_matches('/'))
                    .into_iter()
                    .map(|d| format!("{d}/cpuset.cpus.effective"))
                    .collect();
                push(first_cpus(root, &c));
            }
        } else if mb.controllers.iter().any(|c| c == "cpuset") {
            for m in mounts.iter().filter(|m| has_controller(m, "cpuset")) {
                let d = cgroup_dir(m, &mb.path);
                push(first_cpus(
                    root,
                    &[
                        format!("{d}/cpuset.effective_cpus"),
                        format!("{d}/cpuset.cpus"),
                    ],
                ));
            }
        }
    }
    // The legacy interface: /proc/self/cpuset names the cpuset; a `cpuset` file system mount
    // (e.g. /dev/cpuset) holds its files without the `cpuset.` prefix.
    if let Ok(text) = root.read("/proc/self/cpuset") {
        let path = text.trim();
        for m in mounts.iter().filter(|m| m.fs == CgroupFs::LegacyCpuset) {
            let d = cgroup_dir(m, path);
            push(first_cpus(
                root,
                &[format!("{d}/effective_cpus"), format!("{d}/cpus")],
            ));
        }
    }
    (found, problems)
}

/// The process's affinity: `sched_getaffinity` on the live machine (with the `sys` feature),
/// else `Cpus_allowed_list` of `/proc/self/status`.
fn affinity(root: &SysRoot, problems: &mut Vec<Unknown>) -> Option<CpuLimit> {
    #[cfg(feature = "sys")]
    if root.is_live() {
        if let Ok(set) = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)) {
            let cpus: CpuSet = (0..nix::sched::CpuSet::count() as u32)
                .filter(|&c| set.is_set(c as usize).unwrap_or(false))
                .collect();
            if !cpus.is_empty() {
                return Some(CpuLimit {
                    cpus,
                    source: "sched_getaffinity".into(),
                });
            }
        }
    }
    match root.read("/proc/self/status") {
        Ok(text) => match crate::cpu::parse_status_allowed(&text) {
            Some(Ok(cpus)) if !cpus.is_empty() => Some(CpuLimit {
                cpus,
                source: "Cpus_allowed_list (/proc/self/status)".into(),
            }),
            Some(Ok(_)) | Some(Err(_)) => {
                problems.push(Unknown::Invalid {
                    path: "/proc/self/status".into(),
                    detail: "Cpus_allowed_list is not a non-empty CPU list".into(),
                });
                None
            }
            None => None,
        },
        Err(e) => {
            if !e.is_missing() {
                problems.push(e.into());
            }
            None
        }
    }
}

/// Reads every limit of the probing process under `root`. Never fails: unreadable files
/// are listed in [`Limits::problems`].
pub fn probe(root: &SysRoot) -> Limits {
    let mut problems = Vec::new();
    let mem_available_bytes = match root.read("/proc/meminfo") {
        Ok(t) => match crate::memory::meminfo::parse_meminfo(&t) {
            Ok(mi) => match mi.mem_available_bytes {
                Some(b) => Probed::Known(b),
                None => Probed::Unknown(Unknown::Invalid {
                    path: "/proc/meminfo".into(),
                    detail: "no MemAvailable line".into(),
                }),
            },
            Err(e) => Probed::Unknown(e.into()),
        },
        Err(e) => Probed::Unknown(e.into()),
    };
    let mut memory_limits = Vec::new();
    let memberships = match root.read("/proc/self/cgroup") {
        Ok(t) => parse_proc_cgroup(&t),
        Err(e) => {
            if !e.is_missing() {
                problems.push(e.into());
            }
            Vec::new()
        }
    };
    let mounts = cgroup_mounts(root, &memberships);
    cgroup_memory_limits(
        root,
        &memberships,
        &mounts,
        &mut memory_limits,
        &mut problems,
    );
    if let Ok(text) = root.read("/proc/self/limits") {
        let status = root.read("/proc/self/status").ok();
        for (row, name, used) in [
            ("Max address space", "RLIMIT_AS", "VmSize"),
            ("Max data size", "RLIMIT_DATA", "VmData"),
        ] {
            if let Some(Some(b)) = parse_proc_limits(&text, row) {
                memory_limits.push(MemoryLimit {
                    bytes: b,
                    source: format!("{name} (/proc/self/limits)"),
                    in_use_bytes: status
                        .as_deref()
                        .and_then(|t| crate::memory::meminfo::parse_meminfo_bytes(t, used)),
                });
            }
        }
    }
    let mut cpu_quotas = Vec::new();
    cgroup_cpu_quotas(root, &memberships, &mounts, &mut cpu_quotas, &mut problems);
    let mut cpu_limits: Vec<CpuLimit> = affinity(root, &mut problems).into_iter().collect();
    let (sets, p) = cgroup_cpusets(root);
    cpu_limits.extend(sets);
    problems.extend(p);
    Limits {
        mem_available_bytes,
        memory_limits,
        cpu_limits,
        cpu_quotas,
        problems,
    }
}

#[cfg(test)]
mod tests;

//! The probing process's cgroups, read once ([`read`]: `/proc/self/cgroup` and the cgroup
//! mounts of `/proc/self/mountinfo`) and walked up each hierarchy by one set of functions,
//! through which every cgroup fact is read: the CPU bandwidth limits ([`Cgroups::cpu_files`]),
//! the cpusets ([`Cgroups::cpusets`]) and the memory limits ([`Cgroups::memory_files`]). The
//! machine document's [`Cgroup`] ([`crate::os`]), the allowed CPUs ([`crate::cpu`]), the run's
//! limits ([`crate::limits`]) and the snapshot's peer files ([`crate::peer_files`]) all take
//! them from here ([`probe`] assembles the document's). The parsers are
//! `hwsurvey_machine::os::cgroup`, re-exported here.
//!
//! Mount points come from `/proc/self/mountinfo` (cgroup v2 may sit at `/sys/fs/cgroup` or
//! `/sys/fs/cgroup/unified`); where it is missing (older captures) the usual places under
//! [`CGROUP_ROOT`] stand in: v2 at the first of `/sys/fs/cgroup/unified` and `/sys/fs/cgroup`
//! that holds `cgroup.controllers` (else `/sys/fs/cgroup`), each v1 hierarchy at
//! `/sys/fs/cgroup/<controllers>` (else `/sys/fs/cgroup/<first controller>`).

use hwsurvey_model::{Probed, Unknown};

use crate::{ProbeError, SysRoot};
use hwsurvey_machine::limits::{intersect, lowest_cpu_quota, CpuLimit, CpuQuota, MemoryLimit};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::os::cgroup::*;

/// The process's cgroup memberships and where their hierarchies are mounted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroups {
    /// The lines of `/proc/self/cgroup`.
    pub memberships: Vec<CgroupMembership>,
    /// The cgroup mounts (of mountinfo, or the usual places: see the module docs).
    pub mounts: Vec<CgroupMount>,
    /// A mountinfo that is there but could not be read or parsed (the usual places were used).
    pub problems: Vec<Unknown>,
}

/// Reads [`PROC_SELF_CGROUP`] and the cgroup mounts under `root`.
///
/// # Errors
/// [`PROC_SELF_CGROUP`] cannot be read, or is not `ID:controllers:path` lines.
pub fn read(root: &SysRoot) -> Result<Cgroups, ProbeError> {
    let memberships = parse_proc_cgroup(&root.read(PROC_SELF_CGROUP)?)?;
    let mut problems = Vec::new();
    let mounts = match crate::mounts::read_mount_entries(root) {
        Ok(entries) => CgroupMount::of_mounts(&entries),
        Err(e) => {
            if !e.is_missing() {
                problems.push(e.into());
            }
            Vec::new()
        }
    };
    let mounts = if mounts.is_empty() {
        usual_mounts(root, &memberships)
    } else {
        mounts
    };
    Ok(Cgroups {
        memberships,
        mounts,
        problems,
    })
}

/// The usual mount points of `memberships`' hierarchies (see the module docs).
fn usual_mounts(root: &SysRoot, memberships: &[CgroupMembership]) -> Vec<CgroupMount> {
    let mut out = Vec::new();
    for mb in memberships {
        if mb.is_v2() {
            let unified = format!("{CGROUP_ROOT}/unified");
            let mount_point = [unified.as_str(), CGROUP_ROOT]
                .into_iter()
                .find(|mp| root.exists(&format!("{mp}/cgroup.controllers")))
                .unwrap_or(CGROUP_ROOT);
            out.push(CgroupMount {
                fs: CgroupFs::V2,
                root: "/".into(),
                mount_point: mount_point.into(),
            });
        } else {
            let joined = format!("{CGROUP_ROOT}/{}", mb.controllers.join(","));
            let mount_point = if root.exists(&joined) {
                joined
            } else {
                format!(
                    "{CGROUP_ROOT}/{}",
                    mb.controllers.first().cloned().unwrap_or_default()
                )
            };
            out.push(CgroupMount {
                fs: CgroupFs::V1(mb.controllers.clone()),
                root: "/".into(),
                mount_point,
            });
        }
    }
    out
}

/// One CPU bandwidth file read on the walk: v2 `cpu.max`, or v1 `cpu.cfs_quota_us` with its
/// `cpu.cfs_period_us`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuFile {
    /// The quota file's kernel path.
    pub path: String,
    /// Its limit; [`CpuMax::source`] names the file when there is a quota.
    pub max: CpuMax,
}

impl CpuFile {
    /// The quota as a [`CpuQuota`], when the file sets one.
    pub fn quota(&self) -> Option<CpuQuota> {
        Some(CpuQuota {
            quota_us: self.max.quota_us?,
            period_us: self.max.period_us,
            source: self.max.source.clone()?,
        })
    }
}

/// One memory limit file read on the walk, with what already counts against it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    /// `cgroup v2 memory.max`, `cgroup v2 memory.high`, `cgroup v1 memory.limit_in_bytes` or
    /// `cgroup v1 memory.memsw.limit_in_bytes`.
    pub what: &'static str,
    /// The file's kernel path.
    pub path: String,
    /// The limit, bytes; `None` = no limit.
    pub limit_bytes: Option<u64>,
    /// The usage file beside it (`memory.current`, `memory.usage_in_bytes`,
    /// `memory.memsw.usage_in_bytes`), bytes, read for a finite limit; `None` when missing.
    pub in_use_bytes: Option<u64>,
}

impl MemoryFile {
    /// Whether this is the hard limit of its version (`memory.max`, `memory.limit_in_bytes`):
    /// what the document's [`Cgroup::memory_max_bytes`] holds.
    pub fn is_hard_limit(&self) -> bool {
        matches!(
            self.what,
            "cgroup v2 memory.max" | "cgroup v1 memory.limit_in_bytes"
        )
    }

    /// The finite limit as a [`MemoryLimit`] (`source` = what and the path).
    pub fn limit(&self) -> Option<MemoryLimit> {
        Some(MemoryLimit {
            bytes: self.limit_bytes?,
            source: format!("{} ({})", self.what, self.path),
            in_use_bytes: self.in_use_bytes,
        })
    }
}

/// What a walk found: the files read, innermost first, and those that were there but could
/// not be read or parsed (never taken as "no limit").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walk<T> {
    /// The files read.
    pub found: Vec<T>,
    /// The files that could not be read or parsed.
    pub problems: Vec<Unknown>,
}

impl<T> Default for Walk<T> {
    fn default() -> Self {
        Walk {
            found: Vec::new(),
            problems: Vec::new(),
        }
    }
}

/// A file that may be absent: its text, `None` when missing, a problem when unreadable.
fn read_if_there(root: &SysRoot, path: &str, problems: &mut Vec<Unknown>) -> Option<String> {
    match root.read(path) {
        Ok(t) => Some(t.trim().to_string()),
        Err(e) if e.is_missing() => None,
        Err(e) => {
            problems.push(e.into());
            None
        }
    }
}

impl Cgroups {
    /// Whether the process is in a v1 hierarchy holding `controller`.
    pub fn v1_has(&self, controller: &str) -> bool {
        self.memberships.iter().any(|m| m.has(controller))
    }

    /// Whether the process is in the unified (v2) hierarchy.
    pub fn has_v2(&self) -> bool {
        self.memberships.iter().any(CgroupMembership::is_v2)
    }

    /// The folders of the process's cgroups that can hold a limit of `controller`, each with
    /// whether it is in the unified (v2) hierarchy: for each line of `/proc/self/cgroup`, its
    /// folder in every mount of that hierarchy (v2, or a v1 mount with `controller`) and every
    /// ancestor up to the mount point, innermost first.
    pub fn dirs_up(&self, controller: &str) -> Vec<(bool, String)> {
        let mut out = Vec::new();
        for mb in &self.memberships {
            let v2 = mb.is_v2();
            if !v2 && !mb.has(controller) {
                continue;
            }
            let of_hierarchy = |m: &&CgroupMount| {
                if v2 {
                    m.fs == CgroupFs::V2
                } else {
                    m.has(controller)
                }
            };
            for m in self.mounts.iter().filter(of_hierarchy) {
                out.extend(m.dirs_up(&mb.path).into_iter().map(|d| (v2, d)));
            }
        }
        out
    }

    /// Every CFS bandwidth file on the way up from the process's cgroups: v2 `cpu.max`
    /// (`max PERIOD` = none), v1 `cpu.cfs_quota_us` (-1 = none) with `cpu.cfs_period_us`.
    pub fn cpu_files(&self, root: &SysRoot) -> Walk<CpuFile> {
        let mut w = Walk::default();
        for (v2, d) in self.dirs_up("cpu") {
            if v2 {
                let path = format!("{d}/cpu.max");
                let Some(t) = read_if_there(root, &path, &mut w.problems) else {
                    continue;
                };
                match parse_cpu_max(&path, &t) {
                    Ok(mut max) => {
                        if max.quota_us.is_some() {
                            max.source = Some(format!("cgroup v2 cpu.max ({path})"));
                        }
                        w.found.push(CpuFile { path, max });
                    }
                    Err(e) => w.problems.push(e.into()),
                }
                continue;
            }
            let qpath = format!("{d}/cpu.cfs_quota_us");
            let Some(q) = read_if_there(root, &qpath, &mut w.problems) else {
                continue;
            };
            let ppath = format!("{d}/cpu.cfs_period_us");
            let period_us = match root.read_parsed::<u64>(&ppath, "microseconds > 0") {
                Ok(p) if p > 0 => p,
                Ok(_) => {
                    w.problems
                        .push(ProbeError::invalid(&ppath, "microseconds > 0", "0").into());
                    continue;
                }
                Err(e) => {
                    w.problems.push(e.into());
                    continue;
                }
            };
            match parse_cfs_quota_us(&qpath, &q) {
                Ok(quota_us) => w.found.push(CpuFile {
                    max: CpuMax {
                        quota_us,
                        period_us,
                        source: quota_us.map(|_| format!("cgroup v1 cpu.cfs_quota_us ({qpath})")),
                    },
                    path: qpath,
                }),
                Err(e) => w.problems.push(e.into()),
            }
        }
        w
    }

    /// Every cgroup memory limit file on the way up from the process's cgroups: v2
    /// `memory.max` and `memory.high` (usage `memory.current`), v1 `memory.limit_in_bytes`
    /// and `memory.memsw.limit_in_bytes` (usage `memory.usage_in_bytes`,
    /// `memory.memsw.usage_in_bytes`).
    pub fn memory_files(&self, root: &SysRoot) -> Walk<MemoryFile> {
        let mut w = Walk::default();
        for (v2, d) in self.dirs_up("memory") {
            let files: [(&'static str, String, String); 2] = if v2 {
                [
                    (
                        "cgroup v2 memory.max",
                        format!("{d}/memory.max"),
                        format!("{d}/memory.current"),
                    ),
                    (
                        "cgroup v2 memory.high",
                        format!("{d}/memory.high"),
                        format!("{d}/memory.current"),
                    ),
                ]
            } else {
                [
                    (
                        "cgroup v1 memory.limit_in_bytes",
                        format!("{d}/memory.limit_in_bytes"),
                        format!("{d}/memory.usage_in_bytes"),
                    ),
                    (
                        "cgroup v1 memory.memsw.limit_in_bytes",
                        format!("{d}/memory.memsw.limit_in_bytes"),
                        format!("{d}/memory.memsw.usage_in_bytes"),
                    ),
                ]
            };
            for (what, path, usage) in files {
                let Some(t) = read_if_there(root, &path, &mut w.problems) else {
                    continue;
                };
                let limit_bytes = match parse_limit_bytes(&path, &t) {
                    Ok(l) => l,
                    Err(e) => {
                        w.problems.push(e.into());
                        continue;
                    }
                };
                // The usage beside a finite limit: unknown when missing (the limit stands);
                // one that is there but unreadable or not a byte count is a problem, never 0.
                let in_use_bytes = match limit_bytes {
                    Some(_) => match root.read_parsed::<u64>(&usage, "bytes") {
                        Ok(b) => Some(b),
                        Err(e) if e.is_missing() => None,
                        Err(e) => {
                            w.problems.push(e.into());
                            None
                        }
                    },
                    None => None,
                };
                w.found.push(MemoryFile {
                    what,
                    path,
                    limit_bytes,
                    in_use_bytes,
                });
            }
        }
        w
    }

    /// The cgroup cpusets of the process, each hierarchy's nearest: v2
    /// `cpuset.cpus.effective` on the way up, v1 `cpuset.effective_cpus` or `cpuset.cpus`,
    /// and the legacy cpuset file system's `effective_cpus` or `cpus` at the path of
    /// `/proc/self/cpuset`. An empty list (a v1 child that never set it, a v2 group without
    /// the controller) is skipped as absent.
    pub fn cpusets(&self, root: &SysRoot) -> Walk<CpuLimit> {
        let mut w: Walk<CpuLimit> = Walk::default();
        let push =
            |w: &mut Walk<CpuLimit>, candidates: Vec<String>| match first_cpus(root, &candidates) {
                Ok(Some(l)) => {
                    if !w.found.iter().any(|f| f.source == l.source) {
                        w.found.push(l)
                    }
                }
                Ok(None) => {}
                Err(e) => w.problems.push(e.into()),
            };
        for mb in &self.memberships {
            if mb.is_v2() {
                for m in self.mounts.iter().filter(|m| m.fs == CgroupFs::V2) {
                    let c = m
                        .dirs_up(&mb.path)
                        .into_iter()
                        .map(|d| format!("{d}/cpuset.cpus.effective"))
                        .collect();
                    push(&mut w, c);
                }
            } else if mb.has("cpuset") {
                for m in self.mounts.iter().filter(|m| m.has("cpuset")) {
                    let d = m.dir_of(&mb.path);
                    push(
                        &mut w,
                        vec![
                            format!("{d}/cpuset.effective_cpus"),
                            format!("{d}/cpuset.cpus"),
                        ],
                    );
                }
            }
        }
        // The legacy interface: /proc/self/cpuset names the cpuset; a `cpuset` file system
        // mount (e.g. /dev/cpuset) holds its files without the `cpuset.` prefix.
        let legacy: Vec<&CgroupMount> = self
            .mounts
            .iter()
            .filter(|m| m.fs == CgroupFs::LegacyCpuset)
            .collect();
        if !legacy.is_empty() {
            if let Some(path) = read_if_there(root, "/proc/self/cpuset", &mut w.problems) {
                for m in legacy {
                    let d = m.dir_of(&path);
                    push(
                        &mut w,
                        vec![format!("{d}/effective_cpus"), format!("{d}/cpus")],
                    );
                }
            }
        }
        w
    }
}

/// Why a process has no cgroup cpuset (none of the files of [`Cgroups::cpusets`] is there).
pub fn no_cpuset() -> Unknown {
    Unknown::Other {
        detail: "no cgroup cpuset file for this process (cpuset controller not enabled or not \
                 mounted)"
            .into(),
    }
}

/// The first of `candidates` that exists and is not empty, read as a CPU list; `Ok(None)` when
/// none does.
fn first_cpus(root: &SysRoot, candidates: &[String]) -> Result<Option<CpuLimit>, ProbeError> {
    for c in candidates {
        match crate::cpu::sets::read_cpuset(root, c, None) {
            Ok(s) if s.is_empty() => continue,
            Ok(cpus) => {
                return Ok(Some(CpuLimit {
                    cpus,
                    source: c.clone(),
                }))
            }
            Err(e) if e.is_missing() => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// This process's cgroup limits under `root`, or why unknown (`/proc/self/cgroup` missing,
/// unreadable or damaged).
pub fn probe(root: &SysRoot) -> Probed<Cgroup> {
    let cgroups = match read(root) {
        Ok(c) => c,
        Err(e) => return Probed::Unknown(e.into()),
    };
    let version = |controller: &str| {
        if cgroups.v1_has(controller) {
            Some(CgroupVersion::V1)
        } else if cgroups.has_v2() {
            Some(CgroupVersion::V2)
        } else {
            None
        }
    };
    let cpu_version = version("cpu");
    let cpu_max = match cpu_version {
        Some(_) => cpu_max(&cgroups.cpu_files(root)),
        None => Probed::Unknown(Unknown::Other {
            detail: format!("{PROC_SELF_CGROUP} names neither a cpu nor the unified hierarchy"),
        }),
    };
    let sets = cgroups.cpusets(root);
    let cpuset_cpus = match (intersect(&sets.found), sets.problems.first()) {
        (Some(l), _) => Probed::Known(l.cpus),
        (None, Some(bad)) => Probed::Unknown(bad.clone()),
        (None, None) => Probed::Unknown(no_cpuset()),
    };
    Probed::Known(Cgroup {
        cpu_version,
        memory_version: version("memory"),
        cpu_max,
        cpuset_cpus,
        memory_max_bytes: memory_max(&cgroups.memory_files(root)),
    })
}

/// The CPU limit that binds: the lowest quota on the way up, with its file; without one, a
/// file on the way that could not be read or parsed makes it unknown, naming it, rather than
/// "unlimited"; else the innermost file's period without a quota.
fn cpu_max(walk: &Walk<CpuFile>) -> Probed<CpuMax> {
    let quotas: Vec<_> = walk.found.iter().filter_map(CpuFile::quota).collect();
    match (
        lowest_cpu_quota(&quotas),
        walk.problems.first(),
        walk.found.first(),
    ) {
        (Some(q), _, _) => Probed::Known(CpuMax {
            quota_us: Some(q.quota_us),
            period_us: q.period_us,
            source: Some(q.source.clone()),
        }),
        (None, Some(bad), _) => Probed::Unknown(bad.clone()),
        (None, None, Some(own)) => Probed::Known(own.max.clone()),
        (None, None, None) => Probed::Unknown(Unknown::Other {
            detail: "no cpu.max or cpu.cfs_quota_us on the way up from this process's cgroup \
                     (the cpu controller is not enabled for it)"
                .into(),
        }),
    }
}

/// The lowest hard memory limit on the way up (`memory.max`, `memory.limit_in_bytes`), as
/// [`cpu_max`] decides: `Some(bytes)`, `None` when every such file says unlimited.
fn memory_max(walk: &Walk<MemoryFile>) -> Probed<Option<u64>> {
    let hard: Vec<&MemoryFile> = walk.found.iter().filter(|f| f.is_hard_limit()).collect();
    match (
        hard.iter().filter_map(|f| f.limit_bytes).min(),
        walk.problems.first(),
    ) {
        (Some(b), _) => Probed::Known(Some(b)),
        (None, Some(bad)) => Probed::Unknown(bad.clone()),
        (None, None) if !hard.is_empty() => Probed::Known(None),
        (None, None) => Probed::Unknown(Unknown::Other {
            detail: "no memory controller file for this cgroup (the root cgroup has no \
                     memory.max)"
                .into(),
        }),
    }
}

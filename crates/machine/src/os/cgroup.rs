//! This process's cgroups (v1 and v2): the document's [`Cgroup`] (the controllers' versions,
//! the CPU bandwidth limit, the cpuset and the memory limit), and the one parser of each
//! cgroup file hwsurvey reads: `/proc/self/cgroup` ([`parse_proc_cgroup`]), the cgroup mounts
//! of `/proc/self/mountinfo` ([`CgroupMount::of_mounts`], over
//! [`crate::mounts::parse_mountinfo`]), `cpu.max` ([`parse_cpu_max`]),
//! `cpu.cfs_quota_us` ([`parse_cfs_quota_us`]) and the memory limit files
//! ([`parse_limit_bytes`]). The one reader, and the walk up each hierarchy that every cgroup
//! fact goes through, is `hwsurvey_probe::cgroup`.

use hwsurvey_model::{CpuSet, Probed};
use serde::{Deserialize, Serialize};

use crate::mounts::MountEntry;
use crate::ParseError;

/// The process's cgroup memberships.
pub const PROC_SELF_CGROUP: &str = "/proc/self/cgroup";

/// Where the cgroup hierarchies are mounted when `/proc/self/mountinfo` does not say (older
/// captures): `/sys/fs/cgroup` holds v2, or one folder per v1 hierarchy.
pub const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// A cgroup v1 limit at or above this many bytes means "no limit" (the kernel writes
/// `PAGE_COUNTER_MAX` x page size, 9223372036854771712 with 4 KiB pages).
pub const V1_UNLIMITED_BYTES: u64 = 1 << 62;

/// cgroup version in force for a controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CgroupVersion {
    /// cgroup v1 (per-controller hierarchies).
    V1,
    /// cgroup v2 (unified).
    V2,
}

/// A CPU bandwidth limit (`cpu.max` or `cpu.cfs_quota_us`/`cpu.cfs_period_us`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuMax {
    /// Quota per period, microseconds; `None` = no limit (`max` or -1).
    pub quota_us: Option<u64>,
    /// Period, microseconds.
    pub period_us: u64,
    /// The file of the quota (`cgroup v2 cpu.max (/sys/fs/cgroup/job/cpu.max)`), found on the
    /// walk up the hierarchy (`hwsurvey_probe::cgroup`); `None` for a limit without a quota,
    /// and in values written before 2026-12-04.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// This process's cgroup limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cgroup {
    /// Version governing the cpu controller.
    pub cpu_version: Option<CgroupVersion>,
    /// Version governing the memory controller.
    pub memory_version: Option<CgroupVersion>,
    /// CPU bandwidth limit: the lowest quota on the way up the hierarchy.
    pub cpu_max: Probed<CpuMax>,
    /// The nearest `cpuset.cpus.effective` (v2) or `cpuset.effective_cpus` / `cpuset.cpus`
    /// (v1) on the way up.
    pub cpuset_cpus: Probed<CpuSet>,
    /// The lowest `memory.max` (v2) or `memory.limit_in_bytes` (v1) on the way up, bytes;
    /// `None` = unlimited (`max`, or v1's page-rounded i64::MAX).
    pub memory_max_bytes: Probed<Option<u64>>,
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

impl CgroupMembership {
    /// Whether this is the unified (v2) hierarchy.
    pub fn is_v2(&self) -> bool {
        self.controllers.is_empty()
    }

    /// Whether this v1 hierarchy holds `controller`.
    pub fn has(&self, controller: &str) -> bool {
        self.controllers.iter().any(|c| c == controller)
    }
}

/// Parses [`PROC_SELF_CGROUP`]: `ID:controllers:path` lines (cgroups(7)), blank lines skipped;
/// an empty file (a kernel with no cgroup hierarchy, only the legacy cpuset file system) is
/// no membership.
///
/// # Errors
/// [`ParseError`] naming the file and the first line that is not `ID:controllers:path` with a
/// numeric ID: the kernel writes one line per hierarchy, so a damaged line could be the one
/// that holds a limit.
pub fn parse_proc_cgroup(text: &str) -> Result<Vec<CgroupMembership>, ParseError> {
    const EXPECTED: &str = "\"id:controllers:path\" lines";
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(ParseError::new(PROC_SELF_CGROUP, EXPECTED, line));
        };
        let hierarchy = id
            .trim()
            .parse()
            .map_err(|_| ParseError::new(PROC_SELF_CGROUP, EXPECTED, line))?;
        out.push(CgroupMembership {
            hierarchy,
            controllers: controllers
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect(),
            path: path.trim().to_string(),
        });
    }
    Ok(out)
}

/// Which kind of cgroup file system a mount is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CgroupFs {
    /// cgroup v1 with these controllers (`name=` options left out).
    V1(Vec<String>),
    /// The unified hierarchy.
    V2,
    /// The legacy `cpuset` file system (files without the `cpuset.` prefix).
    LegacyCpuset,
}

/// One cgroup mount: which hierarchy, which of its folders, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupMount {
    /// Kind and controllers.
    pub fs: CgroupFs,
    /// The path inside the hierarchy that is mounted (`/` normally; a container's own cgroup).
    pub root: String,
    /// Where it is mounted.
    pub mount_point: String,
}

impl CgroupMount {
    /// The cgroup mounts (v1, v2, legacy cpuset) of a mount table, in its order.
    pub fn of_mounts(mounts: &[MountEntry]) -> Vec<CgroupMount> {
        mounts
            .iter()
            .filter_map(|m| {
                let fs = match m.fs_type.as_str() {
                    "cgroup2" => CgroupFs::V2,
                    "cpuset" => CgroupFs::LegacyCpuset,
                    "cgroup" => CgroupFs::V1(
                        m.super_options
                            .split(',')
                            .filter(|w| !w.is_empty() && !matches!(*w, "rw" | "ro"))
                            .filter(|w| !w.contains('='))
                            .map(str::to_string)
                            .collect(),
                    ),
                    _ => return None,
                };
                Some(CgroupMount {
                    fs,
                    root: m.root.clone(),
                    mount_point: m.mount_point.clone(),
                })
            })
            .collect()
    }

    /// Whether this is a v1 mount holding `controller`.
    pub fn has(&self, controller: &str) -> bool {
        matches!(&self.fs, CgroupFs::V1(cs) if cs.iter().any(|x| x == controller))
    }

    /// The folder (kernel path) of cgroup `path` in this mount: the mount point plus `path`
    /// made relative to the mount's root. A path outside the mounted root (a container seeing
    /// its parent's path) maps to the mount point itself.
    pub fn dir_of(&self, path: &str) -> String {
        let root = self.root.trim_end_matches('/');
        let rel = path.strip_prefix(root).unwrap_or("");
        let rel = if rel.is_empty() || rel.starts_with('/') {
            rel
        } else {
            ""
        };
        format!(
            "{}{}",
            self.mount_point.trim_end_matches('/'),
            rel.trim_end_matches('/')
        )
    }

    /// The folders of cgroup `path` and its ancestors in this mount, innermost first, up to the
    /// mount point (included).
    pub fn dirs_up(&self, path: &str) -> Vec<String> {
        let top = self.mount_point.trim_end_matches('/');
        let mut d = self.dir_of(path);
        let mut out = vec![d.clone()];
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
}

/// Parses cgroup v2 `cpu.max` read from `path` (`max 100000`, `50000 100000`): the quota
/// (`None` for `max`) and the period, microseconds. [`CpuMax::source`] is left `None`.
///
/// # Errors
/// [`ParseError`] naming `path` when it is neither form or the period is 0.
pub fn parse_cpu_max(path: &str, text: &str) -> Result<CpuMax, ParseError> {
    let bad = || ParseError::new(path, "\"max PERIOD\" or \"QUOTA PERIOD\"", text);
    let mut w = text.split_whitespace();
    let quota = w.next().ok_or_else(bad)?;
    let period_us: u64 = w.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
    if period_us == 0 || w.next().is_some() {
        return Err(bad());
    }
    let quota_us = if quota == "max" {
        None
    } else {
        Some(quota.parse().map_err(|_| bad())?)
    };
    Ok(CpuMax {
        quota_us,
        period_us,
        source: None,
    })
}

/// Parses cgroup v1 `cpu.cfs_quota_us` read from `path`: microseconds per period, `None` for
/// -1 (no limit).
///
/// # Errors
/// [`ParseError`] naming `path` when it is neither a number above 0 nor -1.
pub fn parse_cfs_quota_us(path: &str, text: &str) -> Result<Option<u64>, ParseError> {
    match text.trim().parse::<i64>() {
        Ok(-1) => Ok(None),
        Ok(v) if v > 0 => Ok(Some(v as u64)),
        _ => Err(ParseError::new(path, "microseconds > 0 or -1", text)),
    }
}

/// Parses a cgroup memory limit file read from `path` (v2 `memory.max`, `memory.high`; v1
/// `memory.limit_in_bytes`, `memory.memsw.limit_in_bytes`): bytes, or `None` for no limit
/// (`max`; a value at or above [`V1_UNLIMITED_BYTES`]; -1, which old v1 kernels echo back).
///
/// # Errors
/// [`ParseError`] naming `path` for anything else.
pub fn parse_limit_bytes(path: &str, text: &str) -> Result<Option<u64>, ParseError> {
    let t = text.trim();
    if t == "max" || t == "-1" {
        return Ok(None);
    }
    match t.parse::<u64>() {
        Ok(v) if v >= V1_UNLIMITED_BYTES => Ok(None),
        Ok(v) => Ok(Some(v)),
        Err(_) => Err(ParseError::new(path, "bytes, \"max\" or -1", t)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mounts::parse_mountinfo;

    #[test]
    fn memberships_of_v1_and_v2_and_a_damaged_line() {
        let m = parse_proc_cgroup("4:memory:/a\n3:cpuset:/b/c\n2:cpu,cpuacct:/\n0::/d\n").unwrap();
        assert_eq!(m.len(), 4);
        assert!(m[1].has("cpuset") && !m[1].is_v2());
        assert_eq!(m[2].controllers, ["cpu", "cpuacct"]);
        assert!(m[3].is_v2());
        assert_eq!((m[3].hierarchy, m[3].path.as_str()), (0, "/d"));
        let e = parse_proc_cgroup("0::/\ngarbage\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/proc/self/cgroup: expected \"id:controllers:path\" lines, got \"garbage\""
        );
        assert!(parse_proc_cgroup("x:cpu:/\n").is_err());
        assert_eq!(parse_proc_cgroup("\n"), Ok(vec![]));
    }

    #[test]
    fn mountinfo_finds_v1_v2_and_legacy_cpuset() {
        let text = "\
30 23 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
35 30 0:31 / /sys/fs/cgroup/memory rw,relatime shared:14 - cgroup cgroup rw,memory
36 30 0:32 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
37 30 0:33 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate
38 23 0:34 /docker/ab /dev/my\\040cpuset rw - cpuset cpuset rw
39 30 0:35 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd
";
        let m = CgroupMount::of_mounts(&parse_mountinfo(text).unwrap());
        assert_eq!(m.len(), 5);
        assert_eq!(m[0].fs, CgroupFs::V1(vec!["memory".into()]));
        assert_eq!(m[0].mount_point, "/sys/fs/cgroup/memory");
        assert_eq!(m[1].fs, CgroupFs::V1(vec!["cpu".into(), "cpuacct".into()]));
        assert!(m[1].has("cpu") && !m[2].has("cpu"));
        assert_eq!(m[2].fs, CgroupFs::V2);
        assert_eq!(m[3].fs, CgroupFs::LegacyCpuset);
        assert_eq!(m[3].mount_point, "/dev/my cpuset");
        assert_eq!(m[3].root, "/docker/ab");
        assert_eq!(m[4].fs, CgroupFs::V1(vec!["xattr".into()]));
    }

    #[test]
    fn cgroup_dir_is_relative_to_the_mounted_root() {
        let m = CgroupMount {
            fs: CgroupFs::V2,
            root: "/".into(),
            mount_point: "/sys/fs/cgroup/unified".into(),
        };
        assert_eq!(m.dir_of("/a/b"), "/sys/fs/cgroup/unified/a/b");
        assert_eq!(m.dir_of("/"), "/sys/fs/cgroup/unified");
        let c = CgroupMount {
            root: "/docker/ab".into(),
            mount_point: "/sys/fs/cgroup".into(),
            ..m
        };
        assert_eq!(c.dir_of("/docker/ab"), "/sys/fs/cgroup");
        assert_eq!(c.dir_of("/docker/ab/x"), "/sys/fs/cgroup/x");
        assert_eq!(c.dir_of("/other"), "/sys/fs/cgroup");
        assert_eq!(
            c.dirs_up("/docker/ab/a/b"),
            ["/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a", "/sys/fs/cgroup"]
        );
    }

    #[test]
    fn cpu_max_forms() {
        let p = "/sys/fs/cgroup/cpu.max";
        assert_eq!(
            parse_cpu_max(p, "max 100000\n"),
            Ok(CpuMax {
                quota_us: None,
                period_us: 100_000,
                source: None
            })
        );
        assert_eq!(
            parse_cpu_max(p, "50000 100000").unwrap().quota_us,
            Some(50_000)
        );
        let e = parse_cpu_max(p, "lots 100000").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/sys/fs/cgroup/cpu.max: expected \"max PERIOD\" or \"QUOTA PERIOD\", got \"lots 100000\""
        );
        assert!(parse_cpu_max(p, "x").is_err());
        assert!(parse_cpu_max(p, "max 0").is_err());
        assert_eq!(parse_cfs_quota_us("/q", "-1\n"), Ok(None));
        assert_eq!(parse_cfs_quota_us("/q", "150000"), Ok(Some(150_000)));
        assert!(parse_cfs_quota_us("/q", "0").is_err());
    }

    #[test]
    fn limit_files() {
        let p = "/sys/fs/cgroup/memory.max";
        assert_eq!(parse_limit_bytes(p, "max\n"), Ok(None));
        assert_eq!(parse_limit_bytes(p, "9223372036854771712\n"), Ok(None));
        assert_eq!(parse_limit_bytes(p, "209715200\n"), Ok(Some(200 << 20)));
        assert_eq!(parse_limit_bytes(p, "-1"), Ok(None));
        assert_eq!(parse_limit_bytes(p, "lots").unwrap_err().text, "lots");
    }
}

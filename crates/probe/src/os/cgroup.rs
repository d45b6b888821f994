//! This process's cgroup limits (v1 and v2): the controllers' versions, the CPU bandwidth
//! limit, the cpuset and the memory limit, read from `/proc/self/cgroup` and `/sys/fs/cgroup`.

use hwsurvey_model::{CpuSet, Probed, Unknown};

use super::probed;
use crate::{ProbeError, SysRoot};

use hwsurvey_machine::os::{parse_cpu_max, Cgroup, CgroupVersion, CpuMax};

/// `/proc/self/cgroup` lines: (hierarchy id, controllers, path).
fn cgroup_lines(text: &str) -> Vec<(String, Vec<String>, String)> {
    text.lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let id = parts.next()?.to_string();
            let ctrls = parts.next()?;
            let path = parts.next()?.to_string();
            let ctrls = ctrls
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect();
            Some((id, ctrls, path))
        })
        .collect()
}

/// The first of `candidates` that exists, read.
fn first_existing(root: &SysRoot, candidates: &[String]) -> Result<(String, String), ProbeError> {
    let mut first_err = None;
    for c in candidates {
        match root.read_value(c) {
            Ok(v) => return Ok((c.clone(), v)),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or(ProbeError::Missing {
        path: "/sys/fs/cgroup".into(),
    }))
}

/// This process's cgroup limits: `/proc/self/cgroup`, then each controller's files under
/// `/sys/fs/cgroup` (v2 `cpu.max`, `cpuset.cpus.effective`, `memory.max`; v1
/// `cpu.cfs_quota_us`/`cpu.cfs_period_us`, `cpuset.cpus`, `memory.limit_in_bytes`).
pub(super) fn probe(root: &SysRoot) -> Probed<Cgroup> {
    const SELF: &str = "/proc/self/cgroup";
    let text = match root.read(SELF) {
        Ok(t) => t,
        Err(e) => return Probed::Unknown(e.into()),
    };
    let lines = cgroup_lines(&text);
    if lines.is_empty() {
        return Probed::Unknown(
            ProbeError::invalid(SELF, "\"id:controllers:path\" lines", &text).into(),
        );
    }
    let v1 = |ctrl: &str| {
        lines
            .iter()
            .find(|(_, c, _)| c.iter().any(|x| x == ctrl))
            .map(|(_, c, p)| (c.join(","), p.clone()))
    };
    let v2_path = lines
        .iter()
        .find(|(id, c, _)| id == "0" && c.is_empty())
        .map(|(_, _, p)| p.clone());
    let under = |mount: &str, path: &str, file: &str| -> Vec<String> {
        let mount = mount.trim_end_matches('/');
        let path = path.trim_end_matches('/');
        let mut v = vec![format!("{mount}{path}/{file}")];
        if !path.is_empty() {
            v.push(format!("{mount}/{file}"));
        }
        v
    };
    let v2_has = |file: &str| -> bool {
        v2_path.as_deref().is_some_and(|p| {
            under("/sys/fs/cgroup", p, file)
                .iter()
                .any(|c| root.exists(c))
        })
    };

    // CPU bandwidth.
    let (cpu_version, cpu_max) = if let Some((mount, path)) = v1("cpu") {
        let base = format!("/sys/fs/cgroup/{mount}");
        let q = first_existing(root, &under(&base, &path, "cpu.cfs_quota_us"));
        let p = first_existing(root, &under(&base, &path, "cpu.cfs_period_us"));
        let r = match (q, p) {
            (Ok((qp, q)), Ok((pp, p))) => {
                let quota: Result<i64, _> = q.parse();
                let period: Result<u64, _> = p.parse();
                match (quota, period) {
                    (Ok(q), Ok(period_us)) => Ok(CpuMax {
                        quota_us: u64::try_from(q).ok(),
                        period_us,
                        source: None,
                    }),
                    (Err(_), _) => Err(ProbeError::invalid(qp, "microseconds or -1", &q)),
                    (_, Err(_)) => Err(ProbeError::invalid(pp, "microseconds", &p)),
                }
            }
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        (Some(CgroupVersion::V1), probed(r))
    } else if let Some(path) = v2_path.as_deref() {
        let r =
            first_existing(root, &under("/sys/fs/cgroup", path, "cpu.max")).and_then(|(p, t)| {
                parse_cpu_max(&t).ok_or_else(|| ProbeError::invalid(p, "\"max|QUOTA PERIOD\"", &t))
            });
        (Some(CgroupVersion::V2), probed(r))
    } else {
        (
            None,
            Probed::Unknown(ProbeError::invalid(SELF, "a cpu or unified hierarchy", &text).into()),
        )
    };

    // A quota on an ancestor binds the process too: the lowest on the way up, with its file.
    // Without one, a quota file on the way up that could not be read or parsed makes the
    // limit unknown, naming it, rather than "unlimited".
    let (quotas, problems) = crate::limits::cpu_quotas(root);
    let cpu_max = match (crate::limits::lowest_cpu_quota(&quotas), problems.first()) {
        (Some(q), _) => Probed::Known(CpuMax {
            quota_us: Some(q.quota_us),
            period_us: q.period_us,
            source: Some(q.source.clone()),
        }),
        (None, Some(bad)) => Probed::Unknown(bad.clone()),
        (None, None) => cpu_max,
    };

    // cpuset.
    let cpuset_files = if let Some((mount, path)) = v1("cpuset") {
        under(&format!("/sys/fs/cgroup/{mount}"), &path, "cpuset.cpus")
    } else if let Some(path) = v2_path.as_deref() {
        under("/sys/fs/cgroup", path, "cpuset.cpus.effective")
    } else {
        Vec::new()
    };
    let cpuset_cpus = probed(first_existing(root, &cpuset_files).and_then(|(p, t)| {
        CpuSet::parse_list(&t).map_err(|e| ProbeError::invalid(p, "a CPU list", &e.input))
    }));

    // Memory.
    let (memory_version, memory_max_bytes) = if let Some((mount, path)) = v1("memory") {
        let r = first_existing(
            root,
            &under(
                &format!("/sys/fs/cgroup/{mount}"),
                &path,
                "memory.limit_in_bytes",
            ),
        )
        .and_then(|(p, t)| {
            // v1 writes PAGE_COUNTER_MAX * page size (i64::MAX rounded down to a page) for none.
            t.parse::<u64>()
                .map(|v| (v < (1u64 << 62)).then_some(v))
                .map_err(|_| ProbeError::invalid(p, "bytes", &t))
        });
        (Some(CgroupVersion::V1), probed(r))
    } else if v2_has("memory.max") {
        let path = v2_path.as_deref().unwrap_or("/");
        let r = first_existing(root, &under("/sys/fs/cgroup", path, "memory.max")).and_then(
            |(p, t)| {
                if t == "max" {
                    Ok(None)
                } else {
                    t.parse::<u64>()
                        .map(Some)
                        .map_err(|_| ProbeError::invalid(p, "bytes or max", &t))
                }
            },
        );
        (Some(CgroupVersion::V2), probed(r))
    } else {
        (
            v2_path.as_ref().map(|_| CgroupVersion::V2),
            Probed::Unknown(Unknown::Other {
                detail: "no memory controller file for this cgroup (the root cgroup has no \
                         memory.max)"
                    .into(),
            }),
        )
    };

    Probed::Known(Cgroup {
        cpu_version,
        memory_version,
        cpu_max,
        cpuset_cpus,
        memory_max_bytes,
    })
}

//! The CPUs this process may run on: `/proc/self/status` `Cpus_allowed_list`, and the cgroup
//! cpuset of `/proc/self/cgroup` (`cpuset.cpus.effective` on v2, `cpuset.effective_cpus` /
//! `cpuset.cpus` on v1).

use hwsurvey_model::{CpuSet, Probed, Unknown};

use super::sets::read_cpuset;
use crate::{ProbeError, SysRoot};
use hwsurvey_machine::cpu::Allowed;

/// Parses `Cpus_allowed_list` out of a `/proc/PID/status` text.
pub fn parse_status_allowed(text: &str) -> Option<Result<CpuSet, String>> {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    Some(CpuSet::parse_list(line).map_err(|_| line.trim().to_string()))
}

pub(crate) fn probe_allowed(root: &SysRoot) -> Allowed {
    let status_cpus = match root.read("/proc/self/status") {
        Ok(text) => match parse_status_allowed(&text) {
            Some(Ok(set)) => Probed::Known(set),
            Some(Err(bad)) => Probed::Unknown(
                ProbeError::invalid("/proc/self/status", "Cpus_allowed_list: a CPU list", &bad)
                    .into(),
            ),
            None => Probed::Unknown(Unknown::Invalid {
                path: "/proc/self/status".into(),
                detail: "no Cpus_allowed_list line".into(),
            }),
        },
        Err(e) => Probed::Unknown(e.into()),
    };
    let (cgroup_cpus, cgroup_file) = probe_cgroup_cpuset(root);
    Allowed {
        status_cpus,
        cgroup_cpus,
        cgroup_file,
    }
}

/// The cgroup cpuset: v2 `<mount>/<path>/cpuset.cpus.effective` (walking up to the root while
/// the controller file is absent), v1 `/sys/fs/cgroup/cpuset/<path>/cpuset.effective_cpus`
/// or `cpuset.cpus`. The cgroup path comes from `/proc/self/cgroup`.
pub(crate) fn probe_cgroup_cpuset(root: &SysRoot) -> (Probed<CpuSet>, Option<String>) {
    let text = match root.read("/proc/self/cgroup") {
        Ok(t) => t,
        Err(e) => return (Probed::Unknown(e.into()), None),
    };
    let mut candidates: Vec<String> = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), Some(c)) => (a, b, c),
            _ => continue,
        };
        let path = path.trim().trim_end_matches('/');
        if controllers.is_empty() {
            // v2: walk up from our cgroup.
            let mut p = path.to_string();
            loop {
                candidates.push(format!("/sys/fs/cgroup{p}/cpuset.cpus.effective"));
                match p.rfind('/') {
                    Some(i) => p.truncate(i),
                    None => break,
                }
                if p.is_empty() {
                    candidates.push("/sys/fs/cgroup/cpuset.cpus.effective".to_string());
                    break;
                }
            }
        } else if controllers.split(',').any(|c| c == "cpuset") {
            candidates.push(format!("/sys/fs/cgroup/cpuset{path}/cpuset.effective_cpus"));
            candidates.push(format!("/sys/fs/cgroup/cpuset{path}/cpuset.cpus"));
        }
    }
    for c in &candidates {
        match read_cpuset(root, c, None) {
            Ok(set) => return (Probed::Known(set), Some(c.clone())),
            Err(e) if e.is_missing() => continue,
            Err(e) => return (Probed::Unknown(e.into()), Some(c.clone())),
        }
    }
    (
        Probed::Unknown(Unknown::Other {
            detail: "no cgroup cpuset file for this process (cpuset controller not enabled or not mounted)".into(),
        }),
        None,
    )
}

//! The CPUs this process may run on ([`Allowed`]): `Cpus_allowed_list` of `/proc/self/status`
//! ([`crate::process::read_status`]) and the cgroup cpusets of the one walk of
//! [`crate::cgroup`] (`cpuset.cpus.effective` on v2, `cpuset.effective_cpus` / `cpuset.cpus`
//! on v1, the legacy cpuset file system).

use hwsurvey_model::{Probed, Unknown};

use crate::process::STATUS;
use crate::SysRoot;
use hwsurvey_machine::cpu::Allowed;

pub(crate) fn probe_allowed(root: &SysRoot) -> Allowed {
    let status_cpus = match crate::process::read_status(root) {
        Ok(s) => match s.cpus_allowed {
            Some(Ok(set)) => Probed::Known(set),
            Some(Err(e)) => Probed::Unknown(e.into()),
            None => Probed::Unknown(Unknown::Invalid {
                path: STATUS.into(),
                detail: "no Cpus_allowed_list line".into(),
            }),
        },
        Err(e) => Probed::Unknown(e.into()),
    };
    let (cgroup_cpus, cgroup_file) = match crate::cgroup::read(root) {
        Ok(c) => {
            let sets = c.cpusets(root);
            match (
                hwsurvey_machine::limits::intersect(&sets.found),
                sets.problems.first(),
            ) {
                (Some(l), _) => (Probed::Known(l.cpus), Some(l.source)),
                (None, Some(bad)) => (Probed::Unknown(bad.clone()), None),
                (None, None) => (Probed::Unknown(crate::cgroup::no_cpuset()), None),
            }
        }
        Err(e) => (Probed::Unknown(e.into()), None),
    };
    Allowed {
        status_cpus,
        cgroup_cpus,
        cgroup_file,
    }
}

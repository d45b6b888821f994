//! Thread placement: which CPU each worker gets (policy, a pure function of the topology),
//! and pinning the calling thread to it (`sched_setaffinity`, behind the `sys` feature; the
//! std-only fallback leaves threads unpinned and says so).

use hwsurvey_model::CpuId;

use hwsurvey_probe::run_env::CpuPlace;

pub use hwsurvey_result::placement::{PinStatus, Placement};

/// The CPU order a policy fills, over the usable CPUs. Worker `i` of `n` gets
/// `order[i % order.len()]` (so oversubscription wraps around).
///
/// Compact sorts by (node, package, core, cpu): SMT siblings of a core are adjacent.
/// Spread takes, round-robin over (node, package) groups, first the first thread of each core,
/// then the SMT siblings.
pub fn cpu_order(cpus: &[CpuPlace], placement: Placement) -> Vec<CpuId> {
    let key = |p: &CpuPlace| {
        (
            p.node.map(i64::from).unwrap_or(-1),
            p.package.unwrap_or(-1),
            p.core.unwrap_or(p.cpu as i64),
            p.cpu,
        )
    };
    let mut sorted: Vec<&CpuPlace> = cpus.iter().collect();
    sorted.sort_by_key(|p| key(p));
    match placement {
        Placement::Compact => sorted.iter().map(|p| p.cpu).collect(),
        Placement::Spread => {
            // rank of each CPU among the threads of its core: 0 for the first thread.
            let mut groups: std::collections::BTreeMap<(i64, i64), Vec<(usize, CpuId)>> =
                Default::default();
            let mut seen_core: std::collections::BTreeMap<(i64, i64, i64), usize> =
                Default::default();
            for p in &sorted {
                let (n, pk, core, _) = key(p);
                let rank = seen_core.entry((n, pk, core)).or_insert(0);
                groups.entry((n, pk)).or_default().push((*rank, p.cpu));
                *rank += 1;
            }
            for g in groups.values_mut() {
                g.sort_by_key(|&(rank, cpu)| (rank, cpu));
            }
            let lists: Vec<Vec<CpuId>> = groups
                .into_values()
                .map(|g| g.into_iter().map(|(_, c)| c).collect())
                .collect();
            let mut out = Vec::with_capacity(cpus.len());
            let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
            for i in 0..longest {
                for l in &lists {
                    if let Some(c) = l.get(i) {
                        out.push(*c);
                    }
                }
            }
            out
        }
    }
}

/// Pins the calling thread to `cpu`.
#[cfg(feature = "sys")]
pub fn pin_current_thread(cpu: CpuId) -> PinStatus {
    use nix::sched::{sched_setaffinity, CpuSet as NixSet};
    use nix::unistd::Pid;
    let mut set = NixSet::new();
    if let Err(e) = set.set(cpu as usize) {
        return PinStatus::Unpinned {
            intended_cpu: cpu,
            reason: format!("CPU {cpu} beyond the cpu_set_t size: {e}"),
        };
    }
    match sched_setaffinity(Pid::from_raw(0), &set) {
        Ok(()) => PinStatus::Pinned { cpu },
        Err(e) => PinStatus::Unpinned {
            intended_cpu: cpu,
            reason: format!("sched_setaffinity: {e}"),
        },
    }
}

/// Std-only fallback: no pinning on this build.
#[cfg(not(feature = "sys"))]
pub fn pin_current_thread(cpu: CpuId) -> PinStatus {
    PinStatus::Unpinned {
        intended_cpu: cpu,
        reason: "built without the `sys` feature: no sched_setaffinity".into(),
    }
}

#[cfg(feature = "sys")]
pub use hwsurvey_probe::run_env::current_affinity;

/// Restores the calling thread's affinity to `set` (after a pinned run in the main thread).
#[cfg(feature = "sys")]
pub fn set_affinity(set: &hwsurvey_model::CpuSet) -> bool {
    use nix::sched::{sched_setaffinity, CpuSet as NixSet};
    use nix::unistd::Pid;
    let mut ns = NixSet::new();
    for c in set.iter() {
        if ns.set(c as usize).is_err() {
            return false;
        }
    }
    sched_setaffinity(Pid::from_raw(0), &ns).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(cpu: u32, package: i64, core: i64) -> CpuPlace {
        CpuPlace {
            cpu,
            package: Some(package),
            core: Some(core),
            node: Some(package as u32),
        }
    }

    #[test]
    fn compact_and_spread() {
        // 2 packages x 2 cores x 2 threads, Linux numbering: siblings are cpu and cpu+4.
        let cpus = vec![
            place(0, 0, 0),
            place(1, 0, 1),
            place(2, 1, 0),
            place(3, 1, 1),
            place(4, 0, 0),
            place(5, 0, 1),
            place(6, 1, 0),
            place(7, 1, 1),
        ];
        assert_eq!(
            cpu_order(&cpus, Placement::Compact),
            vec![0, 4, 1, 5, 2, 6, 3, 7]
        );
        assert_eq!(
            cpu_order(&cpus, Placement::Spread),
            vec![0, 2, 1, 3, 4, 6, 5, 7]
        );
    }

    #[cfg(feature = "sys")]
    #[test]
    fn pin_to_an_allowed_cpu() {
        let set = current_affinity().expect("sched_getaffinity works on Linux");
        let first = set.first().unwrap();
        let got = std::thread::spawn(move || pin_current_thread(first))
            .join()
            .unwrap();
        assert_eq!(got, PinStatus::Pinned { cpu: first });
    }
}

//! The thread ladder and the machine facts the plan takes from the probe's [`Machine`] (one
//! source of machine facts): where each usable CPU sits, the last-level cache (the total over
//! its instances), the topology landmarks, and for a captured machine (`run --plan-only
//! --root`) its online CPUs and memory.
//!
//! The ladder is 1, 2, 4, ... below the usable CPUs, the usable CPUs, plus the thread counts of
//! the landmarks ([`hwsurvey_result::Landmark`]): the SMT threads of one core, one cluster,
//! one last-level-cache group, one NUMA node, one package, every physical core with one thread,
//! every usable CPU, and oversubscription where a family asks. A rung of `n` threads normally
//! takes the first `n` CPUs of the placement order; a landmark whose CPUs differ from those
//! (every core with one thread, say) is a rung of its own whose point ids end in
//! `/<landmark>` (`stream.triad/threads=48/cores`).

use std::collections::{BTreeMap, BTreeSet};

use hwsurvey_model::{CpuId, Probed, Unknown};
use hwsurvey_probe::cpu::CacheType;
use hwsurvey_probe::run_env::{CpuPlace, RunEnv};
use hwsurvey_probe::Machine;

use crate::affinity::{cpu_order, Placement};

pub use hwsurvey_result::plan::Landmark;

/// One rung of the thread ladder.
#[derive(Debug, Clone, PartialEq)]
pub struct Rung {
    /// Worker threads.
    pub threads: usize,
    /// The CPU of each worker (wrapping around the usable CPUs when oversubscribed).
    pub cpus: Vec<CpuId>,
    /// Landmarks whose CPUs the workers occupy exactly.
    pub landmarks: Vec<String>,
    /// `Some(name)` for a landmark rung whose CPUs differ from the first `threads` CPUs of the
    /// placement order: its point ids end in `/<name>`.
    pub own: Option<String>,
}

impl Rung {
    /// The thread part of a point id: `threads=48`, or `threads=48/cores` for a rung of its
    /// own.
    pub fn id_part(&self) -> String {
        hwsurvey_result::plan::rung_id_part(self.threads, self.own.as_deref())
    }
}

pub use hwsurvey_probe::run_env::{llc_from_machine, places_from_machine};

/// `env` with the machine facts replaced by the probe's: each usable CPU's place and the
/// last-level cache, where the `Machine` knows them (a machine probed from an empty root keeps
/// `env`'s). The usable CPUs, memory limits and page pools stay `env`'s (what this process may
/// use).
pub fn with_machine_facts(machine: &Machine, mut env: RunEnv) -> RunEnv {
    if !machine.cpu.cpus.is_empty() {
        env.cpus = places_from_machine(machine, &env.usable_cpus);
    }
    if let llc @ Probed::Known(_) = llc_from_machine(machine) {
        env.llc = llc;
    }
    env
}

/// The run environment of a captured machine (`run --plan-only --root`): its online CPUs are
/// the usable CPUs, its `/proc/meminfo` MemTotal (else the NUMA nodes' MemTotal added up) is
/// the memory, unknown when the capture holds neither (no cgroup or rlimit of this process
/// applies), and everything else as read under the capture's root (`env`, from
/// `RunEnv::read` on it, `hwsurvey_probe::run_env::ReadRunEnv`), with the machine facts of [`with_machine_facts`].
///
/// Errors: the capture has no online CPU list (one line naming the root and why).
pub fn captured_env(machine: &Machine, mut env: RunEnv) -> Result<RunEnv, String> {
    let online = match machine.cpu.online.known() {
        Some(set) if !set.is_empty() => set.clone(),
        _ => {
            return Err(format!(
                "{}: no online CPU list (/sys/devices/system/cpu/online): {}",
                machine.root,
                machine.cpu.online.display()
            ))
        }
    };
    // MemTotal, else the nodes' MemTotal added up; else unknown (the caller decides)
    let nodes: Vec<u64> = machine
        .numa
        .nodes
        .iter()
        .filter_map(|n| n.memory_total_bytes.known().copied())
        .collect();
    env.mem_available_bytes = match &machine.memory.meminfo {
        Probed::Known(m) if m.mem_total_bytes > 0 => Probed::Known(m.mem_total_bytes),
        _ if !nodes.is_empty() && nodes.len() == machine.numa.nodes.len() => {
            Probed::Known(nodes.iter().sum())
        }
        Probed::Known(_) => Probed::Unknown(Unknown::Invalid {
            path: "/proc/meminfo".into(),
            detail: "MemTotal is 0".into(),
        }),
        Probed::Unknown(u) => Probed::Unknown(u.clone()),
    };
    env.usable_cpus = online;
    env.usable_cpus_source = "the capture's online CPUs (/sys/devices/system/cpu/online)".into();
    env.cgroup_memory_limit_bytes = Probed::Known(None);
    env.memory_limit = None;
    Ok(with_machine_facts(machine, env))
}

/// The topology landmarks of the usable CPUs of `env` (places as [`with_machine_facts`]
/// gives them), each the group of the first usable CPU in compact order; `machine` gives the
/// clusters and the LLC groups. A landmark whose facts are unknown is left out; `cluster` and
/// `llc_group` only where they are more than one core. `oversubscribed` is not among them
/// (see [`ladder`]).
pub fn landmarks(machine: &Machine, env: &RunEnv) -> Vec<Landmark> {
    let order = compact_order(env);
    let Some(&first) = order.first() else {
        return vec![];
    };
    let place: BTreeMap<CpuId, &CpuPlace> = env.cpus.iter().map(|p| (p.cpu, p)).collect();
    let group = |same: &dyn Fn(CpuId) -> bool| -> Vec<CpuId> {
        order.iter().copied().filter(|&c| same(c)).collect()
    };
    let mut out = Vec::new();
    let mut push = |name: &str, cpus: Vec<CpuId>| {
        if !cpus.is_empty() {
            out.push(Landmark {
                name: name.into(),
                threads: cpus.len(),
                cpus,
            });
        }
    };
    let fp = place.get(&first).copied();
    let core_key = |c: CpuId| place.get(&c).and_then(|p| Some((p.package?, p.core?)));
    let core = match core_key(first) {
        Some(k) => group(&|c| core_key(c) == Some(k)),
        None => vec![],
    };
    if core.len() > 1 {
        push("smt_core", core.clone());
    }
    // the probe's one cluster answer: an index where the machine has a cluster level
    let cluster_of: BTreeMap<CpuId, u32> = machine
        .cpu
        .cpus
        .iter()
        .filter_map(|l| Some((l.cpu, l.cluster_index?)))
        .collect();
    if let Some(k) = cluster_of.get(&first) {
        let cluster = group(&|c| cluster_of.get(&c) == Some(k));
        if cluster.len() > core.len().max(1) {
            push("cluster", cluster);
        }
    }
    let llc_level = llc_from_machine(machine).known().map(|l| l.level);
    if let Some(inst) = machine
        .cpu
        .caches
        .iter()
        .filter(|c| c.cache_type != CacheType::Instruction)
        .filter(|c| Some(u32::from(c.level)) == llc_level)
        .flat_map(|c| c.instance_cpus.iter())
        .find(|set| set.contains(first))
    {
        let llc = group(&|c| inst.contains(c));
        if llc.len() > core.len().max(1) {
            push("llc_group", llc);
        }
    }
    if let Some(node) = fp.and_then(|p| p.node) {
        push(
            "numa_node",
            group(&|c| place.get(&c).and_then(|p| p.node) == Some(node)),
        );
    }
    if let Some(pkg) = fp.and_then(|p| p.package) {
        push(
            "package",
            group(&|c| place.get(&c).and_then(|p| p.package) == Some(pkg)),
        );
    }
    if order.iter().all(|&c| core_key(c).is_some()) {
        let mut seen = BTreeSet::new();
        let cores: Vec<CpuId> = order
            .iter()
            .copied()
            .filter(|&c| core_key(c).is_some_and(|k| seen.insert(k)))
            .collect();
        push("cores", cores);
    }
    push("all", order.clone());
    out
}

fn compact_order(env: &RunEnv) -> Vec<CpuId> {
    let order = cpu_order(&env.cpus, Placement::Compact);
    if order.is_empty() {
        env.usable_cpus.iter().collect()
    } else {
        order
    }
}

/// The thread ladder: rungs of 1, 2, 4, ... below the usable CPUs, the usable CPUs, and each
/// landmark's count, ascending; a rung takes the first `threads` CPUs of `placement`'s order,
/// and names the landmarks whose CPUs it occupies exactly. A landmark whose CPUs differ is a
/// rung of its own ([`Rung::own`]) beside it. With `oversubscription`, a last rung of
/// `factor` x the usable CPUs (wrapping around them), named `oversubscribed`. Every count is at
/// most `max_threads` (a larger one is cut to it).
pub fn ladder(
    env: &RunEnv,
    marks: &[Landmark],
    placement: Placement,
    oversubscription: Option<usize>,
    max_threads: usize,
) -> Vec<Rung> {
    let order = {
        let o = cpu_order(&env.cpus, placement);
        if o.is_empty() {
            env.usable_cpus.iter().collect::<Vec<_>>()
        } else {
            o
        }
    };
    let n = order.len().max(1);
    let take = |t: usize| -> Vec<CpuId> {
        (0..t)
            .map(|i| order.get(i % order.len().max(1)).copied().unwrap_or(0))
            .collect()
    };
    let mut counts: BTreeSet<usize> = thread_counts(n).into_iter().collect();
    let mut own: Vec<Rung> = Vec::new();
    for m in marks {
        let prefix: BTreeSet<CpuId> = take(m.threads).into_iter().collect();
        let set: BTreeSet<CpuId> = m.cpus.iter().copied().collect();
        if set == prefix {
            counts.insert(m.threads);
        } else if let Some(r) = own
            .iter_mut()
            .find(|r| r.cpus.iter().copied().collect::<BTreeSet<_>>() == set)
        {
            r.landmarks.push(m.name.clone());
        } else {
            own.push(Rung {
                threads: m.threads,
                cpus: m.cpus.clone(),
                landmarks: vec![m.name.clone()],
                own: Some(m.name.clone()),
            });
        }
    }
    let mut rungs: Vec<Rung> = counts
        .into_iter()
        .map(|t| {
            let cpus = take(t);
            let set: BTreeSet<CpuId> = cpus.iter().copied().collect();
            let landmarks = marks
                .iter()
                .filter(|m| m.cpus.iter().copied().collect::<BTreeSet<_>>() == set)
                .map(|m| m.name.clone())
                .collect();
            Rung {
                threads: t,
                cpus,
                landmarks,
                own: None,
            }
        })
        .collect();
    rungs.extend(own);
    rungs.sort_by_key(|r| (r.threads, r.own.is_some()));
    if let Some(factor) = oversubscription {
        let t = n.saturating_mul(factor.max(1));
        if t > n {
            rungs.push(Rung {
                threads: t,
                cpus: take(t),
                landmarks: vec!["oversubscribed".into()],
                own: None,
            });
        }
    }
    for r in &mut rungs {
        if r.threads > max_threads {
            r.threads = max_threads;
            r.cpus.truncate(max_threads);
        }
    }
    rungs.dedup_by(|b, a| a.threads == b.threads && a.own == b.own);
    rungs
}

/// 1, 2, 4, ... below `n`, then `n` (n >= 1).
pub fn thread_counts(n: usize) -> Vec<usize> {
    let n = n.max(1);
    let mut v = Vec::new();
    let mut t = 1;
    while t < n {
        v.push(t);
        t *= 2;
    }
    v.push(n);
    v
}

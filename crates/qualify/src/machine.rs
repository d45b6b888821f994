//! Fills [`Facts`] from the probe's [`Machine`] document: the one place that knows the probe's
//! field names. Fields the probe does not provide stay unknown with the reason.

use hwsurvey_model::{CpuSet, Probed, Unknown};
use hwsurvey_probe::memory::Memory;
use hwsurvey_probe::Machine;

use crate::facts::{not_given, DimmFacts, EdacDimmFacts, Facts, HugePool, NodeFacts};

/// The facts the rules need, read from a probed machine.
pub fn from_machine(m: &Machine) -> Facts {
    let mut f = Facts::default();
    f.cpu.possible = m.cpu.possible.clone();
    f.cpu.present = m.cpu.present.clone();
    f.cpu.online = m.cpu.online.clone();
    f.cpu.registered = if m.cpu.cpus.is_empty() {
        Probed::Unknown(Unknown::Other {
            detail: "no /sys/devices/system/cpu/cpuN folders listed".into(),
        })
    } else {
        Probed::Known(m.cpu.cpus.iter().map(|c| c.cpu).collect::<CpuSet>())
    };
    f.cpu.allowed = m.cpu.allowed.status_cpus.clone();
    let by_threads = &m.cpu.topology.cores_by_threads;
    f.cpu.threads_per_core = match by_threads.keys().collect::<Vec<_>>().as_slice() {
        [one] => Probed::Known(**one),
        [] => not_given("threads per core (no topology folders)"),
        _ => Probed::Unknown(Unknown::Other {
            detail: format!("threads per core differ between cores ({by_threads:?})"),
        }),
    };
    f.numa.possible = m.numa.possible.clone();
    f.numa.nodes = match (&m.numa.source, m.numa.nodes.is_empty()) {
        (Probed::Unknown(why), true) => Probed::Unknown(why.clone()),
        _ => Probed::Known(
            m.numa
                .nodes
                .iter()
                .map(|n| NodeFacts {
                    id: n.node,
                    cpus: n.cpus.clone(),
                    mem_total_bytes: n.memory_total_bytes.clone(),
                })
                .collect(),
        ),
    };
    f.pages.thp_enabled = m.pages.thp.enabled.clone().map(|c| c.selected);
    f.pages.hugetlb = if m.pages.hugetlb.is_empty() {
        match &m.pages.hugetlb_total_bytes {
            Probed::Unknown(why) => Probed::Unknown(why.clone()),
            Probed::Known(_) => Probed::Known(vec![]),
        }
    } else {
        let pools: Option<Vec<HugePool>> = m
            .pages
            .hugetlb
            .iter()
            .map(|p| {
                Some(HugePool {
                    page_size_bytes: p.system.page_size_bytes,
                    pages: *p.system.total_pages.known()?,
                })
            })
            .collect();
        match pools {
            Some(p) => Probed::Known(p),
            None => Probed::Unknown(Unknown::Other {
                detail: "a hugetlb pool's nr_hugepages is unreadable".into(),
            }),
        }
    };
    fill_memory(&mut f, &m.memory);
    f
}

/// Fills the memory facts (DIMMs, EDAC, theoretical peak) from the probe's memory document;
/// also used on its own for captured `dmidecode` text
/// (`hwsurvey_probe::memory::probe_with_dmidecode_text`).
pub fn fill_memory(f: &mut Facts, memory: &Memory) {
    f.memory.dimms = memory.smbios.clone().map(|s| {
        s.devices
            .iter()
            .map(|d| DimmFacts {
                locator: d.locator.clone().unwrap_or_else(|| "?".into()),
                bank_locator: d.bank_locator.clone(),
                array_handle: d.array_handle.map(|h| format!("{h:#06x}")),
                size_bytes: if d.size.is_populated() {
                    // a module of unknown size still occupies the slot
                    Some(d.size.size_bytes().unwrap_or(0))
                } else {
                    None
                },
                memory_type: d.memory_type.clone(),
                speed_mt_per_s: d.speed_mt_per_s,
                configured_speed_mt_per_s: d.configured_speed_mt_per_s,
                rank: d.rank.map(u32::from),
                part_number: d.part_number.clone(),
            })
            .collect()
    });
    f.memory.edac = memory.edac.clone().map(|e| {
        let mut out = Vec::new();
        for (mc_index, c) in e.controllers.iter().enumerate() {
            let mc = number(&c.name, "mc").unwrap_or(mc_index as u32);
            for (i, d) in c.dimms.iter().enumerate() {
                out.push(EdacDimmFacts {
                    mc,
                    dimm: number(&d.name, "dimm").unwrap_or(i as u32),
                    label: d.label.known().cloned(),
                    ce_count: d.ce_count.known().copied(),
                    ue_count: d.ue_count.known().copied(),
                });
            }
        }
        out
    });
    f.memory.theoretical_peak_bytes_per_s = memory
        .population
        .clone()
        .and_then(|p| p.peak_bandwidth.map(|b| b.bandwidth_bytes_per_s as f64));
}

fn number(name: &str, prefix: &str) -> Option<u32> {
    name.strip_prefix(prefix)?.parse().ok()
}

/// `Probed::and_then` for the nested probes above.
trait AndThen<T> {
    fn and_then<U>(self, f: impl FnOnce(T) -> Probed<U>) -> Probed<U>;
}

impl<T> AndThen<T> for Probed<T> {
    fn and_then<U>(self, f: impl FnOnce(T) -> Probed<U>) -> Probed<U> {
        match self {
            Probed::Known(v) => f(v),
            Probed::Unknown(u) => Probed::Unknown(u),
        }
    }
}

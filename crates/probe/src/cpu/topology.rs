//! Topology from the raw per-CPU facts: packages, dies, clusters, cores (groups of hardware
//! threads, split where siblings do not share an L1 data cache: AMD family 15h), threads, the
//! sun4v one-chip rule, and core kinds on hybrid parts (see the decisions in [`super`]).

use std::collections::{BTreeMap, BTreeSet};

use hwsurvey_model::{CpuId, CpuSet, Probed, Unknown};

use super::cpuinfo::{Arch, Cpuinfo};
use super::midr::Midr;
use super::raw::{RawCpu, Sharing, CPU_DIR};
use super::sets::read_cpuset;
use crate::SysRoot;
use hwsurvey_machine::cpu::{CacheType, CoreKind, Identity, PackageCounts, Topology};

pub(crate) fn is_amd_family_15h(identity: &Identity) -> bool {
    identity.vendor.as_deref() == Some("AuthenticAMD") && identity.family == Some(0x15)
}

/// The L1d sharing set of a CPU, if known.
pub(crate) fn l1d_shared(r: &RawCpu) -> Option<&CpuSet> {
    r.caches
        .iter()
        .find(|c| c.level == 1 && c.cache_type == CacheType::Data)
        .and_then(|c| match &c.shared {
            Sharing::Known(s) => Some(s),
            Sharing::Unknown => None,
        })
}

/// Returns the topology, the core index and the cluster index of each CPU (the latter empty
/// where there is no cluster level, see [`clusters`]): the named steps below, in order
/// (cores, packages, the sparc64 one-chip rule, dies, clusters, the arm big.LITTLE rule).
pub(crate) fn build_topology(
    arch: Arch,
    raws: &[RawCpu],
    identity: &Identity,
    heterogeneous: bool,
    notes: &mut Vec<String>,
    problems: &mut Vec<Unknown>,
) -> (Topology, BTreeMap<CpuId, u32>, BTreeMap<CpuId, u32>) {
    let with_topo: Vec<&RawCpu> = raws.iter().filter(|r| r.online && r.has_topology).collect();
    let threads = with_topo.len() as u32;
    note_offline_without_topology(raws, notes);
    let cores = group_cores(raws, &with_topo, identity, notes);
    let package_ids: Vec<i64> = with_topo
        .iter()
        .filter_map(|r| r.package_id)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut packages = Packages {
        count: count_packages(&with_topo, &package_ids, notes, problems),
        per_package: per_package_counts(&with_topo, &package_ids, &cores.core_of),
    };
    if arch == Arch::Sparc64 && package_ids.len() > 1 {
        sparc64_one_chip(
            &with_topo,
            &package_ids,
            identity,
            &cores,
            &mut packages,
            notes,
        );
    }
    let dies = count_dies(&with_topo);
    let (mut clusters, mut cluster_of) = clusters(&with_topo, &cores.core_of);
    // arm64 device-tree kernels before the cluster level (5.16) put the cpu-map cluster in
    // physical_package_id; a big.LITTLE SoC is one package whose "packages" are its clusters.
    if matches!(arch, Arch::Aarch64 | Arch::Arm)
        && heterogeneous
        && clusters.known().is_none()
        && package_ids.len() > 1
    {
        notes.push(format!(
            "arm big.LITTLE without a cluster level: the kernel's {} package ids are cpu-map clusters of one SoC",
            package_ids.len()
        ));
        clusters = Probed::Known(package_ids.len() as u32);
        cluster_of = with_topo
            .iter()
            .filter_map(|r| {
                let id = r.package_id?;
                Some((r.cpu, package_ids.iter().position(|p| *p == id)? as u32))
            })
            .collect();
        packages = one_package(&package_ids, &cores, threads);
    }
    let books: BTreeSet<i64> = with_topo.iter().filter_map(|r| r.book_id).collect();
    if !books.is_empty() {
        notes.push(format!("s390 books: {}", books.len()));
    }
    (
        Topology {
            packages: packages.count,
            package_ids,
            dies,
            clusters,
            cores: cores.count,
            threads: if threads > 0 {
                Probed::Known(threads)
            } else {
                Probed::Unknown(Unknown::Other {
                    detail: "no online CPU with a topology folder".into(),
                })
            },
            threads_with_topology: Some(threads),
            cores_by_threads: cores.by_threads,
            per_package: packages.per_package,
            notes: Vec::new(),
        },
        cores.core_of,
        cluster_of,
    )
}

/// Notes offline CPU folders without a `topology` folder (counted in the CPU sets only).
fn note_offline_without_topology(raws: &[RawCpu], notes: &mut Vec<String>) {
    let offline_without = raws.iter().filter(|r| !r.online && !r.has_topology).count();
    if offline_without > 0 {
        notes.push(format!(
            "{} no topology folder; {} counted in the CPU sets only",
            if offline_without == 1 {
                "1 offline CPU folder has".to_string()
            } else {
                format!("{offline_without} offline CPU folders have")
            },
            if offline_without == 1 {
                "it is"
            } else {
                "they are"
            }
        ));
    }
}

/// The physical cores: groups of hardware threads, with each CPU's core index.
struct Cores {
    /// The key of each core (its thread siblings, or package, core and die id) and its CPUs.
    keys: BTreeMap<(Option<i64>, Vec<CpuId>), Vec<CpuId>>,
    /// The core index of each CPU (position of its core in `keys`).
    core_of: BTreeMap<CpuId, u32>,
    /// Cores by their number of threads.
    by_threads: BTreeMap<u32, u32>,
    /// The number of cores, unknown without a topology folder.
    count: Probed<u32>,
}

/// The key that groups CPU `r` with the other threads of its core, and whether it split a
/// compute unit (thread siblings that do not share an L1 data cache, where the kernel's core
/// ids differ too: AMD family 15h).
fn core_key(
    r: &RawCpu,
    core_id_of: &BTreeMap<CpuId, Option<i64>>,
) -> ((Option<i64>, Vec<CpuId>), bool) {
    let Some(sib) = &r.siblings else {
        return match r.core_id {
            // Unique within (package, die): keep them apart by using a pseudo-list.
            Some(core) => (
                (
                    r.package_id,
                    vec![u32::MAX, core as u32, r.die_id.unwrap_or(0) as u32],
                ),
                false,
            ),
            None => ((None, vec![r.cpu]), false),
        };
    };
    let mut group = sib.clone();
    let mut split = false;
    // Siblings that do not share an L1d are separate cores only where the kernel's core ids
    // say so too (differ, or -1: AMD compute units); Intel SMT threads share a core id
    // whatever a guest's cache files say.
    let ids_differ = r.core_id_raw == Some(-1)
        || sib
            .iter()
            .any(|c| core_id_of.get(&c).is_some_and(|id| *id != r.core_id_raw));
    if let Some(l1d) = l1d_shared(r).filter(|_| ids_differ) {
        if sib.len() > 1 && !sib.is_subset(l1d) {
            group = sib.intersection(l1d);
            if !group.contains(r.cpu) {
                group = sib.clone();
            } else {
                split = true;
            }
        }
    }
    ((None, group.iter().collect()), split)
}

/// Groups the CPUs with a topology folder into cores ([`core_key`]), noting split compute
/// units.
fn group_cores(
    raws: &[RawCpu],
    with_topo: &[&RawCpu],
    identity: &Identity,
    notes: &mut Vec<String>,
) -> Cores {
    let mut split_compute_units = 0u32;
    let core_id_of: BTreeMap<CpuId, Option<i64>> =
        raws.iter().map(|r| (r.cpu, r.core_id_raw)).collect();
    let mut keys: BTreeMap<(Option<i64>, Vec<CpuId>), Vec<CpuId>> = BTreeMap::new();
    for r in with_topo {
        let (key, split) = core_key(r, &core_id_of);
        split_compute_units += u32::from(split);
        keys.entry(key).or_default().push(r.cpu);
    }
    let mut core_of = BTreeMap::new();
    let mut by_threads: BTreeMap<u32, u32> = BTreeMap::new();
    for (i, members) in keys.values().enumerate() {
        for cpu in members {
            core_of.insert(*cpu, i as u32);
        }
        *by_threads.entry(members.len() as u32).or_default() += 1;
    }
    if split_compute_units > 0 {
        let family = if is_amd_family_15h(identity) {
            " (AMD family 15h compute units)"
        } else {
            ""
        };
        notes.push(format!(
            "thread siblings that do not share an L1 data cache are counted as separate cores{family}: {} cores of 1 thread, {} compute units; a naive count says {} cores x 2 threads",
            keys.len(),
            keys.len() / 2,
            keys.len() / 2
        ));
    }
    let count = if with_topo.is_empty() {
        Probed::Unknown(Unknown::Missing {
            path: format!("{CPU_DIR}/cpuN/topology"),
        })
    } else {
        Probed::Known(keys.len() as u32)
    };
    Cores {
        keys,
        core_of,
        by_threads,
        count,
    }
}

/// The package count and the cores and threads of each package.
struct Packages {
    count: Probed<u32>,
    per_package: Vec<PackageCounts>,
}

/// One package holding every core and thread (the first kernel package id names it).
fn one_package(package_ids: &[i64], cores: &Cores, threads: u32) -> Packages {
    Packages {
        count: Probed::Known(1),
        per_package: vec![PackageCounts {
            package_id: package_ids.first().copied().unwrap_or(0),
            cores: cores.keys.len() as u32,
            threads,
        }],
    }
}

/// Cores and threads of each kernel package id.
fn per_package_counts(
    with_topo: &[&RawCpu],
    package_ids: &[i64],
    core_of: &BTreeMap<CpuId, u32>,
) -> Vec<PackageCounts> {
    package_ids
        .iter()
        .map(|pid| {
            let of_package = || with_topo.iter().filter(|r| r.package_id == Some(*pid));
            PackageCounts {
                package_id: *pid,
                cores: of_package()
                    .filter_map(|r| core_of.get(&r.cpu))
                    .collect::<BTreeSet<_>>()
                    .len() as u32,
                threads: of_package().count() as u32,
            }
        })
        .collect()
}

/// Whether the package ids and the package sibling masks group the CPUs differently (both
/// given for every CPU): one file is damaged.
fn package_masks_disagree(with_topo: &[&RawCpu], package_ids: &[i64]) -> bool {
    if package_ids.is_empty() || !with_topo.iter().all(|r| r.package_cpus.is_some()) {
        return false;
    }
    let online: CpuSet = with_topo.iter().map(|r| r.cpu).collect();
    let by_mask: BTreeSet<CpuSet> = with_topo
        .iter()
        .filter_map(|r| r.package_cpus.as_ref())
        .map(|s| s.intersection(&online))
        .collect();
    let mut by_id: BTreeMap<Option<i64>, CpuSet> = BTreeMap::new();
    for r in with_topo {
        by_id.entry(r.package_id).or_default().insert(r.cpu);
    }
    let by_id: BTreeSet<CpuSet> = by_id.into_values().collect();
    by_mask != by_id
}

/// The package count: distinct package ids; the sibling masks where the ids are -1 (s390x
/// and POWER LPARs: the kernel's core_siblings groups are the sockets lscpu reports) or
/// disagree with the masks (which the scheduler uses).
fn count_packages(
    with_topo: &[&RawCpu],
    package_ids: &[i64],
    notes: &mut Vec<String>,
    problems: &mut Vec<Unknown>,
) -> Probed<u32> {
    let sibling_packages: BTreeSet<&CpuSet> = with_topo
        .iter()
        .filter_map(|r| r.package_cpus.as_ref())
        .collect();
    if package_masks_disagree(with_topo, package_ids) {
        problems.push(Unknown::Other {
            detail: format!(
                "physical_package_id and core_siblings/package_cpus disagree: the ids give {} packages, the sibling masks {}; counted from the masks",
                package_ids.len() + usize::from(with_topo.iter().any(|r| r.package_id.is_none())),
                sibling_packages.len()
            ),
        });
        Probed::Known(sibling_packages.len() as u32)
    } else if package_ids.is_empty() && !sibling_packages.is_empty() {
        notes.push(format!(
            "physical_package_id is -1: {} packages counted as distinct core_siblings_list groups",
            sibling_packages.len()
        ));
        Probed::Known(sibling_packages.len() as u32)
    } else if package_ids.is_empty() {
        Probed::Unknown(if with_topo.is_empty() {
            Unknown::Missing {
                path: format!("{CPU_DIR}/cpuN/topology/physical_package_id"),
            }
        } else {
            Unknown::Other {
                detail:
                    "physical_package_id is -1 on every CPU: the kernel does not know the packages"
                        .into(),
            }
        })
    } else {
        Probed::Known(package_ids.len() as u32)
    }
}

/// sparc64 gives each core its own physical_package_id: a single-chip part (UltraSparc T1,
/// T2) is one package; another's chip count is unknown.
fn sparc64_one_chip(
    with_topo: &[&RawCpu],
    package_ids: &[i64],
    identity: &Identity,
    cores: &Cores,
    packages: &mut Packages,
    notes: &mut Vec<String>,
) {
    let package_is_core = with_topo
        .iter()
        .all(|r| match (&r.package_cpus, &r.siblings) {
            (Some(p), Some(s)) => p == s,
            _ => false,
        });
    if !package_is_core {
        return;
    }
    let model = identity.model_name.clone().unwrap_or_default();
    let single_chip = [
        "UltraSparc T1",
        "UltraSparc T2 ",
        "UltraSparc T2 (Niagara2)",
    ]
    .iter()
    .any(|m| model.starts_with(m.trim_end()) && !model.contains("T2+"));
    if single_chip {
        notes.push(format!(
            "sparc64: the kernel gives each core its own physical_package_id ({} ids); {model} is a single-chip part: 1 chip",
            package_ids.len()
        ));
        *packages = one_package(package_ids, cores, with_topo.len() as u32);
    } else {
        packages.count = Probed::Unknown(Unknown::Other {
            detail: format!(
                "sparc64: the kernel gives each core its own physical_package_id; the chip count of {model:?} is not known"
            ),
        });
    }
}

/// Dies: distinct (package, die_id), else distinct die sibling masks.
fn count_dies(with_topo: &[&RawCpu]) -> Probed<u32> {
    if with_topo.iter().any(|r| r.die_id.is_some()) {
        Probed::Known(
            with_topo
                .iter()
                .filter_map(|r| r.die_id.map(|d| (r.package_id, d)))
                .collect::<BTreeSet<_>>()
                .len() as u32,
        )
    } else if with_topo.iter().any(|r| r.die_cpus.is_some()) {
        Probed::Known(
            with_topo
                .iter()
                .filter_map(|r| r.die_cpus.as_ref())
                .collect::<BTreeSet<_>>()
                .len() as u32,
        )
    } else {
        Probed::Unknown(Unknown::Other {
            detail: "no die_id (kernel < 5.2), or -1 (the firmware does not describe dies)".into(),
        })
    }
}

/// The `cluster_id` values kernels write for "no cluster": -1 as a u16 (65535, x86 before
/// the L2 cluster of Linux 6.2 and every CPU of a firmware without one) or as a u32; -1 itself
/// is read as absent.
pub(crate) fn no_cluster_id(id: i64) -> bool {
    id == 0xFFFF || id == 0xFFFF_FFFF
}

/// The cluster level, one answer for the summary's count, `probe --cpus`'s CLUSTER column and
/// the JSON's per-CPU `cluster_id` (they said 2, 0 and 65535 of one machine).
///
/// Clusters are the groups of `topology/cluster_cpus_list` (kernel >= 5.16; else the hex mask
/// `cluster_cpus`): the firmware's cluster on arm64 (ACPI PPTT, the device tree's cpu-map), the
/// CPUs sharing an L2 on x86 (Linux 6.2 and later). The level exists, as lscpu and lstopo show
/// it, only where it lies between a core and a package: some cluster holds more than one core
/// and some package (die) more than one cluster. It does not where every CPU's `cluster_id` is
/// the kernel's "no cluster" ([`no_cluster_id`]: 65535 on a 2-vCPU Firecracker guest whose
/// `cluster_cpus_list` is each CPU alone), where every cluster is one core (x86 with an L2 per
/// core: this build VM), or where every cluster is its whole package; that answer is unknown,
/// with that reason, never a count of cores.
///
/// Returns the count (or why there is none) and each CPU's index in a machine-wide numbering
/// of the clusters (empty without a level).
fn clusters(
    with_topo: &[&RawCpu],
    core_of: &BTreeMap<CpuId, u32>,
) -> (Probed<u32>, BTreeMap<CpuId, u32>) {
    // "no cluster level: ..." (hwsurvey_machine::cpu::NO_CLUSTER_LEVEL), which the summary
    // prints as "none (...)"
    let none = |detail: &str| {
        (
            Probed::Unknown(Unknown::Other {
                detail: detail.into(),
            }),
            BTreeMap::new(),
        )
    };
    if !with_topo.iter().any(|r| r.cluster_cpus.is_some()) {
        return none("no cluster_cpus_list (kernel < 5.16 or no cluster level)");
    }
    if with_topo
        .iter()
        .all(|r| r.cluster_id.is_some_and(no_cluster_id))
    {
        return none(
            "no cluster level: cluster_id is 65535 (none) on every CPU; lscpu and lstopo show \
             no cluster",
        );
    }
    let groups: BTreeSet<&CpuSet> = with_topo
        .iter()
        .filter_map(|r| r.cluster_cpus.as_ref())
        .collect();
    let cores_in = |set: &CpuSet| {
        set.iter()
            .filter_map(|c| core_of.get(&c))
            .collect::<BTreeSet<_>>()
            .len()
    };
    if groups.iter().all(|g| cores_in(g) <= 1) {
        return none(
            "no cluster level: each cluster_cpus_list is one core; lscpu and lstopo show no \
             cluster",
        );
    }
    // CPUs of each package (and die), among those with a topology
    let mut package_cpus: BTreeMap<(Option<i64>, Option<i64>), CpuSet> = BTreeMap::new();
    for r in with_topo {
        package_cpus
            .entry((r.package_id, r.die_id))
            .or_default()
            .insert(r.cpu);
    }
    let whole_package = |g: &CpuSet| {
        package_cpus
            .values()
            .any(|p| g.iter().all(|c| p.contains(c)) && p.iter().all(|c| g.contains(c)))
    };
    if groups.iter().all(|g| whole_package(g)) {
        return none(
            "no cluster level: each cluster_cpus_list is its whole package; lscpu and lstopo \
             show no cluster",
        );
    }
    // numbered in order of first appearance by CPU number, as lscpu -e numbers them
    let mut by_cpu: Vec<&&RawCpu> = with_topo.iter().collect();
    by_cpu.sort_by_key(|r| r.cpu);
    let mut index: BTreeMap<&CpuSet, u32> = BTreeMap::new();
    let mut cluster_of = BTreeMap::new();
    for r in by_cpu {
        if let Some(g) = r.cluster_cpus.as_ref() {
            let next = index.len() as u32;
            cluster_of.insert(r.cpu, *index.entry(g).or_insert(next));
        }
    }
    (Probed::Known(groups.len() as u32), cluster_of)
}

/// Per-CPU cache geometry of levels 1-2 (size and type), used to tell x86 hybrid core kinds
/// apart in captures that lack the Intel hybrid PMU folders.
pub(crate) fn cache_signature(r: &RawCpu) -> Vec<(u8, CacheType, Option<u64>)> {
    let mut v: Vec<_> = r
        .caches
        .iter()
        .filter(|c| c.level <= 2)
        .map(|c| (c.level, c.cache_type, c.size.as_ref().ok().copied()))
        .collect();
    v.sort();
    v
}

pub(crate) fn build_kinds(
    arch: Arch,
    raws: &[RawCpu],
    ci: &Option<Cpuinfo>,
    core_of: &BTreeMap<CpuId, u32>,
    root: &SysRoot,
    live_types: &BTreeMap<CpuId, String>,
) -> (Vec<CoreKind>, BTreeMap<CpuId, u32>) {
    let midr_by_cpu: BTreeMap<CpuId, Midr> = ci
        .as_ref()
        .map(|ci| {
            ci.cpus
                .iter()
                .filter_map(|c| Some((c.processor?, c.midr?)))
                .collect()
        })
        .unwrap_or_default();
    // Intel hybrid PMU folders (kernel >= 5.13): /sys/devices/cpu_core/cpus, cpu_atom/cpus.
    let p_cores = read_cpuset(root, "/sys/devices/cpu_core/cpus", None).ok();
    let e_cores = read_cpuset(root, "/sys/devices/cpu_atom/cpus", None).ok();
    let is_x86 = matches!(arch, Arch::X86_64 | Arch::X86);

    #[derive(PartialEq, Eq, PartialOrd, Ord, Clone)]
    struct Key {
        hybrid: Option<&'static str>,
        midr: Option<(u32, u32)>,
        capacity: Option<u32>,
        caches: Vec<(u8, CacheType, Option<u64>)>,
    }
    let mut groups: BTreeMap<Key, Vec<&RawCpu>> = BTreeMap::new();
    let mut source: BTreeSet<&'static str> = BTreeSet::new();
    // Missing data never makes a kind: a CPU whose topology could not be read is not grouped
    // (it is listed as unreadable), and a property (MIDR, capacity, L1/L2 geometry) splits
    // kinds only when it is known for every grouped CPU.
    let grouped: Vec<&RawCpu> = raws
        .iter()
        .filter(|r| r.online && core_of.contains_key(&r.cpu))
        .collect();
    let midr_of = |r: &RawCpu| r.midr.or_else(|| midr_by_cpu.get(&r.cpu).copied());
    let all_midr = grouped.iter().all(|r| midr_of(r).is_some());
    let all_capacity = grouped.iter().all(|r| r.capacity.is_some());
    let all_caches = grouped.iter().all(|r| {
        let sig = cache_signature(r);
        !sig.is_empty() && sig.iter().all(|(_, _, size)| size.is_some())
    });
    for r in grouped.iter().copied() {
        let hybrid = if let Some(t) = live_types.get(&r.cpu) {
            source.insert("cpuid leaf 0x1A core type");
            Some(if t.starts_with("P-core") {
                "P-core (performance)"
            } else {
                "E-core (efficiency)"
            })
        } else if p_cores.as_ref().is_some_and(|s| s.contains(r.cpu)) {
            source.insert("/sys/devices/cpu_core/cpus");
            Some("P-core (performance)")
        } else if e_cores.as_ref().is_some_and(|s| s.contains(r.cpu)) {
            source.insert("/sys/devices/cpu_atom/cpus");
            Some("E-core (efficiency)")
        } else {
            None
        };
        let midr = midr_of(r).filter(|_| all_midr);
        if midr.is_some() {
            source.insert("MIDR implementer/part");
        }
        let capacity = r.capacity.filter(|_| all_capacity);
        if capacity.is_some() {
            source.insert("cpu_capacity");
        }
        let caches = if is_x86 && hybrid.is_none() && all_caches {
            cache_signature(r)
        } else {
            Vec::new()
        };
        groups
            .entry(Key {
                hybrid,
                midr: midr.map(|m| (m.implementer, m.part)),
                capacity,
                caches,
            })
            .or_default()
            .push(r);
    }
    if groups.len() > 1
        && groups.keys().any(|k| !k.caches.is_empty())
        && !groups.keys().any(|k| k.hybrid.is_some())
    {
        source.insert("L1/L2 cache geometry");
    }
    let mut kinds: Vec<CoreKind> = Vec::new();
    let mut kind_of = BTreeMap::new();
    let n_groups = groups.len();
    for (key, members) in &groups {
        let cpus: CpuSet = members.iter().map(|r| r.cpu).collect();
        let mut cores: BTreeMap<u32, u32> = BTreeMap::new();
        for r in members {
            if let Some(c) = core_of.get(&r.cpu) {
                *cores.entry(*c).or_default() += 1;
            }
        }
        let midr = members
            .iter()
            .find_map(|r| r.midr.or_else(|| midr_by_cpu.get(&r.cpu).copied()));
        let max_freq_khz = members.iter().filter_map(|r| r.max_freq_khz).max();
        let cppc = members.iter().filter_map(|r| r.cppc_highest_perf).max();
        let name = if let Some(h) = key.hybrid {
            format!("Intel {h}")
        } else if let Some(m) = midr {
            m.display_name()
        } else if let Some(name) = ci.as_ref().and_then(|c| c.model_name.clone()) {
            name
        } else {
            "core".to_string()
        };
        kinds.push(CoreKind {
            name,
            source: String::new(),
            cpus,
            cores: cores.len() as u32,
            threads_per_core: cores.values().copied().max().unwrap_or(0),
            midr,
            capacity: key.capacity,
            max_freq_khz,
            cppc_highest_perf: cppc,
            performance_rank: 0,
        });
    }
    // Rank by capacity, then CPPC highest perf, then max frequency.
    let mut order: Vec<usize> = (0..kinds.len()).collect();
    order.sort_by_key(|&i| {
        kinds
            .get(i)
            .map(|k| (k.capacity, k.cppc_highest_perf, k.max_freq_khz))
            .unwrap_or_default()
    });
    for (rank, i) in order.iter().enumerate() {
        if let Some(k) = kinds.get_mut(*i) {
            k.performance_rank = rank as u32;
        }
    }
    // x86 kinds told apart by cache geometry only: name them by rank.
    if is_x86 && n_groups == 2 && groups.keys().all(|k| k.hybrid.is_none()) {
        for k in kinds.iter_mut() {
            let what = if k.performance_rank == 1 {
                "P-core (performance)"
            } else {
                "E-core (efficiency)"
            };
            k.name = format!("{} {what}", k.name);
        }
    }
    let src = source.into_iter().collect::<Vec<_>>().join(", ");
    for k in kinds.iter_mut() {
        k.source = if n_groups > 1 {
            src.clone()
        } else if src.is_empty() {
            "one kind (nothing tells cores apart)".to_string()
        } else {
            format!("one kind ({src} equal on all CPUs)")
        };
    }
    // Order kinds by their first CPU.
    kinds.sort_by_key(|k| k.cpus.first());
    for (i, k) in kinds.iter().enumerate() {
        for cpu in k.cpus.iter() {
            kind_of.insert(cpu, i as u32);
        }
    }
    (kinds, kind_of)
}

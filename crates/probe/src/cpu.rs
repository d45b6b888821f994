//! CPUs: the kernel's CPU sets, the process's allowed CPUs, topology (package, die, cluster,
//! core, thread), core kinds on hybrid parts, caches, and CPU identity per architecture.
//!
//! Sources (all under the [`SysRoot`]):
//! - `/sys/devices/system/cpu/{possible,present,online,offline}` (cpulist grammar);
//! - `/proc/self/status` `Cpus_allowed_list`, and the cgroup cpuset of `/proc/self/cgroup`
//!   (`cpuset.cpus.effective` on v2, `cpuset.effective_cpus` / `cpuset.cpus` on v1);
//! - `/sys/devices/system/cpu/cpuN/topology/*` (offline CPUs often have no `topology` folder);
//! - `/sys/devices/system/cpu/cpuN/cache/index*/*`, the sparc64 per-CPU files
//!   `cpuN/l1_dcache_size` etc., or the e2k trailing `cacheN:` lines of /proc/cpuinfo;
//! - `/sys/devices/system/cpu/cpuN/{cpu_capacity,regs/identification/midr_el1,acpi_cppc/highest_perf,cpufreq/cpuinfo_max_freq}`,
//!   `/sys/devices/cpu_core/cpus`, `/sys/devices/cpu_atom/cpus` (Intel hybrid), and on the live
//!   x86 machine cpuid leaf 0x1A (see [`x86`]);
//! - `/proc/cpuinfo` in each architecture's format (see [`cpuinfo`]), `/proc/sys/kernel/arch`.
//!
//! Decisions (deliberate differences from lscpu/hwloc are noted where they apply):
//! - Cores are counted as distinct groups of hardware threads (`thread_siblings_list` /
//!   `core_cpus_list`), never as distinct `core_id` values (those repeat per package, psutil
//!   #1620). Package ids (`physical_package_id`) are ids, not counts: Kunpeng 920 uses ACPI
//!   table offsets 36 and 8442.
//! - When the kernel's thread siblings do not share an L1 data cache, they are separate cores.
//!   This is AMD Bulldozer's compute unit (family 15h): the kernel pairs the two integer cores
//!   as "threads"; like hwloc we report 64 cores with 1 thread each, and name the compute units
//!   in the topology notes. The L2 and L1i, which the compute unit's two cores share, get the
//!   compute unit as their sharing set on AMD family 15h even where an old kernel lists one CPU.
//! - On sparc64 sun4v, old kernels give every core its own `physical_package_id`; when every
//!   package is exactly one core and the part is single-chip (UltraSPARC T1/T2), we report one
//!   chip (lscpu of 2011 says one socket per core).

mod allowed;
mod caches;
mod raw;
pub mod sets;
mod topology;
pub mod x86;

use std::collections::{BTreeMap, BTreeSet};

use hwsurvey_model::{CpuId, CpuSet, Probed, Unknown};

use crate::live::{kernel_machine, read_live_facts, LIVE_FACTS_PATH};
use crate::{ProbeError, SysRoot};
// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::cpu::*;
pub use raw::{max_cache_bytes, MAX_CACHE_LEAVES, MAX_CACHE_LEVEL};
pub use sets::MAX_CPUS;
pub(crate) use sets::{read_cpuset, shorten};

use allowed::probe_allowed;
use caches::build_caches;
use raw::{bound_to_possible, cpu_numbers, probed, read_raw_cpu, RawCpu, CPU_DIR};
use topology::{build_kinds, build_topology};

/// Detects the probed machine's architecture, the kernel's word first: the live machine's
/// `uname` machine (or, in a capture, the one `hwsurvey snapshot` kept), then
/// `/proc/sys/kernel/arch`, then `vendor_id: IBM/S390`, then the format of /proc/cpuinfo
/// (which cannot tell a 32-bit kernel on a 64-bit CPU without its `fdiv_bug` lines), else
/// (live machine only) the architecture this binary was built for.
pub fn detect_arch(root: &SysRoot, cpuinfo_text: Option<&str>) -> (Arch, String) {
    if let Some(m) = kernel_machine(root) {
        let arch = Arch::from_machine(&m.0);
        if arch != Arch::Unknown {
            return (arch, format!("{} says {:?}", m.1, m.0));
        }
    }
    if let Ok(text) = root.read_value("/proc/sys/kernel/arch") {
        let arch = Arch::from_machine(&text);
        if arch != Arch::Unknown {
            return (arch, format!("/proc/sys/kernel/arch says {text:?}"));
        }
    }
    if let Some((arch, how)) = cpuinfo_text.and_then(cpuinfo::detect_arch) {
        return (arch, how);
    }
    if root.is_live() {
        let arch = Arch::from_machine(std::env::consts::ARCH);
        return (
            arch,
            format!(
                "live machine: this binary's architecture ({})",
                std::env::consts::ARCH
            ),
        );
    }
    (
        Arch::Unknown,
        "no /proc/sys/kernel/arch and /proc/cpuinfo not recognised".to_string(),
    )
}

/// Probes the CPUs under `root`. Never fails: what cannot be read is `Unknown` with the reason
/// and listed in [`Cpu::problems`]. The named steps below, in order: the CPU sets, the CPU
/// folders, identity, topology, cpuid and core kinds, caches.
pub fn probe(root: &SysRoot) -> Cpu {
    let mut problems = Vec::new();
    let cpuinfo_text = root.read("/proc/cpuinfo");
    let ci = cpuinfo_text
        .as_ref()
        .ok()
        .map(|t| cpuinfo::parse_cpuinfo(t));
    let (arch, arch_source) = detect_arch(root, cpuinfo_text.as_ref().ok().map(String::as_str));
    let mut topology_notes = Vec::new();
    let (sets, numbers) = read_cpu_sets(root, &mut problems, &mut topology_notes);
    let allowed = probe_allowed(root);
    let raws = read_cpu_folders(root, &numbers, &sets, &mut problems);
    let identity = build_identity(&ci, &cpuinfo_text, arch);
    let heterogeneous = is_heterogeneous(&raws, &ci);
    let (mut topology, core_of, cluster_of) = build_topology(
        arch,
        &raws,
        &identity,
        heterogeneous,
        &mut topology_notes,
        &mut problems,
    );
    if let Probed::Known(set) = &sets.online {
        list_online_without_topology(root, &raws, set, &mut problems);
        // Every online CPU counts as a thread.
        topology.threads = Probed::Known(set.len() as u32);
    }
    list_online_without_caches(root, &raws, &mut problems);
    let cpuid = read_cpuid(root, arch);
    let core_types: BTreeMap<CpuId, String> = cpuid
        .known()
        .map(|c| c.core_types.clone())
        .unwrap_or_default();
    let (kinds, kind_of) = build_kinds(arch, &raws, &ci, &core_of, root, &core_types);
    let (caches, caches_source) =
        build_caches(arch, &raws, &ci, &identity, &topology, root, &mut problems);
    topology.notes.extend(topology_notes);
    Cpu {
        arch,
        arch_source,
        possible: sets.possible,
        present: sets.present,
        online: sets.online,
        offline: sets.offline,
        present_offline: sets.present_offline,
        allowed,
        topology,
        cpus: logical_cpus(&raws, &core_of, &cluster_of, &kind_of),
        kinds,
        caches,
        caches_source,
        identity,
        tlb: x86::tlbs(arch, &cpuid),
        nominal_clock: nominal::nominal_clock(arch, &cpuid, ci.as_ref()),
        cpuid,
        op_modes: hwsurvey_machine::cpu::modes::op_modes(
            arch,
            ci.as_ref().map_or(&[][..], |c| c.flags.as_slice()),
            live_aarch32_el0(root, arch),
        ),
        address_sizes: hwsurvey_machine::cpu::modes::address_sizes(
            arch,
            ci.as_ref().and_then(|c| c.address_sizes.as_deref()),
        ),
        byte_order: hwsurvey_machine::cpu::modes::byte_order(
            arch,
            root.read("/sys/kernel/cpu_byteorder").ok().as_deref(),
            kernel_machine(root).map(|m| m.0).as_deref(),
        ),
        problems,
    }
}

/// Whether the live arm64 kernel runs AArch32 code at EL0, asked as lscpu asks it: a
/// `personality(PER_LINUX32)` the kernel accepts (then restored). In a capture, the answer
/// the snapshot's live probe kept ([`crate::live::LiveFacts::aarch32_el0`]); `None` on
/// another architecture, in a capture that did not keep it, or without the `sys` feature.
fn live_aarch32_el0(root: &SysRoot, arch: Arch) -> Option<bool> {
    if arch != Arch::Aarch64 {
        return None;
    }
    if !root.is_live() {
        return crate::live::read_live_facts(root).and_then(|f| f.aarch32_el0);
    }
    #[cfg(all(feature = "sys", target_arch = "aarch64"))]
    {
        const PER_LINUX32: nix::libc::c_ulong = 0x0008;
        const QUERY: nix::libc::c_ulong = 0xffff_ffff;
        // SAFETY: personality only sets this process's execution domain; the old one is
        // read first (0xffffffff queries) and set back at once.
        unsafe {
            let old = nix::libc::personality(QUERY);
            if old == -1 {
                return None;
            }
            // arm64 refuses PER_LINUX32 with EINVAL where the CPUs have no AArch32 at EL0
            let ok = nix::libc::personality(PER_LINUX32) != -1;
            nix::libc::personality(old as nix::libc::c_ulong);
            return Some(ok);
        }
    }
    #[allow(unreachable_code)]
    None
}

/// The kernel's CPU sets (`/sys/devices/system/cpu/{possible,present,online,offline}`) and
/// present minus online.
struct CpuSets {
    possible: Probed<CpuSet>,
    present: Probed<CpuSet>,
    online: Probed<CpuSet>,
    offline: Probed<CpuSet>,
    present_offline: Probed<CpuSet>,
}

/// Reads the CPU sets and the numbers of the CPU folders ([`cpu_numbers`]). The kernel always
/// has at least one possible, present and online CPU (the one running): an empty list is a
/// damaged file. Without the global online file, each `cpuN/online` says
/// ([`online_from_cpu_files`]); present and online members beyond possible are dropped
/// ([`bound_sets_to_possible`]); offline is possible minus online ([`offline_set`]).
fn read_cpu_sets(
    root: &SysRoot,
    problems: &mut Vec<Unknown>,
    notes: &mut Vec<String>,
) -> (CpuSets, Vec<CpuId>) {
    let non_empty = |name: &str| {
        let path = format!("{CPU_DIR}/{name}");
        probed(read_cpuset(root, &path, None).and_then(|set| {
            if set.is_empty() {
                Err(ProbeError::invalid(&path, "a non-empty CPU list", ""))
            } else {
                Ok(set)
            }
        }))
    };
    let possible = non_empty("possible");
    let mut present = non_empty("present");
    let mut online = non_empty("online");
    let numbers = cpu_numbers(root, possible.known(), problems);
    if let Probed::Unknown(Unknown::Missing { .. }) = &online {
        if let Some(set) = online_from_cpu_files(root, &numbers, problems) {
            notes.push(format!(
                "no {CPU_DIR}/online: online CPUs {} from the per-CPU cpuN/online files",
                set.to_list_string()
            ));
            online = Probed::Known(set);
        }
    }
    bound_sets_to_possible(&possible, &mut present, &mut online, problems);
    let offline = offline_set(root, &possible, &online, problems);
    let present_offline = match (&present, &online) {
        (Probed::Known(p), Probed::Known(o)) => Probed::Known(p.difference(o)),
        (Probed::Unknown(u), _) | (_, Probed::Unknown(u)) => Probed::Unknown(u.clone()),
    };
    let sets = CpuSets {
        possible,
        present,
        online,
        offline,
        present_offline,
    };
    (sets, numbers)
}

/// The online CPUs by the per-CPU `cpuN/online` files (old or partial captures without the
/// global file); the boot CPU often has no such file and is online. `None` when no CPU has
/// the file or none is online.
fn online_from_cpu_files(
    root: &SysRoot,
    numbers: &[CpuId],
    problems: &mut Vec<Unknown>,
) -> Option<CpuSet> {
    let mut set = CpuSet::new();
    let mut any_file = false;
    for &n in numbers {
        let path = format!("{CPU_DIR}/cpu{n}/online");
        match root.read_parsed::<u8>(&path, "0 or 1") {
            Ok(1) => {
                any_file = true;
                set.insert(n);
            }
            Ok(0) => any_file = true,
            Ok(v) => problems.push(ProbeError::invalid(&path, "0 or 1", &v.to_string()).into()),
            Err(e) if e.is_missing() => {
                set.insert(n);
            }
            Err(e) => problems.push(e.into()),
        }
    }
    (any_file && !set.is_empty()).then_some(set)
}

/// The kernel's present and online sets lie inside possible; members beyond it are a damaged
/// file, listed in `problems` and dropped.
fn bound_sets_to_possible(
    possible: &Probed<CpuSet>,
    present: &mut Probed<CpuSet>,
    online: &mut Probed<CpuSet>,
    problems: &mut Vec<Unknown>,
) {
    let Probed::Known(p) = possible else {
        return;
    };
    for (name, set) in [("present", present), ("online", online)] {
        if let Probed::Known(s) = set {
            if !s.is_subset(p) {
                problems.push(
                    ProbeError::invalid(
                        format!("{CPU_DIR}/{name}"),
                        format!("CPUs inside possible ({})", p.to_list_string()),
                        &shorten(&s.to_list_string()),
                    )
                    .into(),
                );
                *s = s.intersection(p);
            }
        }
    }
}

/// `/sys/devices/system/cpu/offline`: the kernel's is possible minus online, so a file saying
/// otherwise is damaged (listed, and possible minus online taken), and a missing one is
/// possible minus online.
fn offline_set(
    root: &SysRoot,
    possible: &Probed<CpuSet>,
    online: &Probed<CpuSet>,
    problems: &mut Vec<Unknown>,
) -> Probed<CpuSet> {
    match read_cpuset(root, &format!("{CPU_DIR}/offline"), None) {
        Ok(s) => match (possible, online) {
            (Probed::Known(p), Probed::Known(o)) if s != p.difference(o) => {
                let u: Unknown = ProbeError::invalid(
                    format!("{CPU_DIR}/offline"),
                    format!(
                        "possible minus online ({})",
                        p.difference(o).to_list_string()
                    ),
                    &s.to_list_string(),
                )
                .into();
                problems.push(u);
                Probed::Known(p.difference(o))
            }
            _ => Probed::Known(s),
        },
        Err(e) => match (possible, online) {
            (Probed::Known(p), Probed::Known(o)) if e.is_missing() => {
                Probed::Known(p.difference(o))
            }
            _ => Probed::Unknown(e.into()),
        },
    }
}

/// Reads each CPU folder; online-ness from the online set (`cpuN/online` is absent for the
/// boot CPU), ids bounded to the possible CPUs.
fn read_cpu_folders(
    root: &SysRoot,
    numbers: &[CpuId],
    sets: &CpuSets,
    problems: &mut Vec<Unknown>,
) -> Vec<RawCpu> {
    let mut raws: Vec<RawCpu> = numbers
        .iter()
        .map(|&n| {
            let is_online = match &sets.online {
                Probed::Known(set) => set.contains(n),
                Probed::Unknown(_) => true,
            };
            read_raw_cpu(root, n, is_online, problems)
        })
        .collect();
    if let Probed::Known(p) = &sets.possible {
        for r in raws.iter_mut() {
            bound_to_possible(r, p, problems);
        }
    }
    raws
}

/// Whether the online CPUs are of more than one kind: MIDR (implementer, part) or capacity
/// differ. Only a property known for every online CPU can tell them apart (absent is not
/// different).
fn is_heterogeneous(raws: &[RawCpu], ci: &Option<Cpuinfo>) -> bool {
    let mut midrs = BTreeSet::new();
    let mut capacities = BTreeSet::new();
    for r in raws.iter().filter(|r| r.online) {
        let midr = r.midr.or_else(|| {
            ci.as_ref()?
                .cpus
                .iter()
                .find(|c| c.processor == Some(r.cpu))?
                .midr
        });
        midrs.insert(midr.map(|m| (m.implementer, m.part)));
        capacities.insert(r.capacity);
    }
    (midrs.len() > 1 && !midrs.contains(&None))
        || (capacities.len() > 1 && !capacities.contains(&None))
}

/// Lists in `problems` each online CPU whose topology folder could not be read.
fn list_online_without_topology(
    root: &SysRoot,
    raws: &[RawCpu],
    online: &CpuSet,
    problems: &mut Vec<Unknown>,
) {
    for n in online.iter() {
        if !raws.iter().any(|r| r.cpu == n && r.has_topology) {
            let path = format!("{CPU_DIR}/cpu{n}/topology");
            problems.push(match root.list_dir(&path) {
                Err(e) => e.into(),
                Ok(_) => Unknown::Missing { path },
            });
        }
    }
}

/// Caches are listed from the CPUs that have them; an online CPU without cache data while
/// others have it is said to be unknown in `problems` (never taken as a different core kind).
fn list_online_without_caches(root: &SysRoot, raws: &[RawCpu], problems: &mut Vec<Unknown>) {
    if !raws.iter().any(|r| r.online && !r.caches.is_empty()) {
        return;
    }
    for r in raws.iter().filter(|r| r.online && r.caches.is_empty()) {
        let path = format!("{CPU_DIR}/cpu{}/cache", r.cpu);
        let u = match root.list_dir(&path) {
            Err(e) => e.into(),
            Ok(_) => Unknown::Other {
                detail: format!(
                    "{path} has no index* folder: the caches of cpu{} are unknown",
                    r.cpu
                ),
            },
        };
        if !problems.contains(&u) {
            problems.push(u);
        }
    }
}

/// cpuid: read on the live machine; in a capture, the one `hwsurvey snapshot` kept
/// ([`LIVE_FACTS_PATH`]), else unknown; not on this platform for a machine that is not x86
/// (an arm64 or sparc64 capture probed on an x86 host).
fn read_cpuid(root: &SysRoot, arch: Arch) -> Probed<x86::CpuidInfo> {
    if !matches!(arch, Arch::X86_64 | Arch::X86) {
        return Probed::Unknown(Unknown::NotOnThisPlatform {
            detail: format!("cpuid is an x86 instruction; this is {}", arch.as_str()),
        });
    }
    if root.is_live() {
        return x86::probe_live();
    }
    match read_live_facts(root) {
        Some(facts) => facts.cpuid,
        None => Probed::Unknown(Unknown::Other {
            detail: format!("cpuid is read only on the live machine (a capture made by hwsurvey snapshot keeps it in {LIVE_FACTS_PATH})"),
        }),
    }
}

/// One [`LogicalCpu`] per CPU folder, with its core, cluster and core-kind index; its kernel
/// `cluster_id` only where the machine has a cluster level (`cluster_of`, see
/// [`topology`]'s `clusters`).
fn logical_cpus(
    raws: &[RawCpu],
    core_of: &BTreeMap<CpuId, u32>,
    cluster_of: &BTreeMap<CpuId, u32>,
    kind_of: &BTreeMap<CpuId, u32>,
) -> Vec<LogicalCpu> {
    raws.iter()
        .map(|r| LogicalCpu {
            cpu: r.cpu,
            online: r.online,
            package_id: r.package_id,
            die_id: r.die_id,
            cluster_id: r
                .cluster_id
                .filter(|id| cluster_of.contains_key(&r.cpu) && !topology::no_cluster_id(*id)),
            cluster_index: cluster_of.get(&r.cpu).copied(),
            core_id: r.core_id,
            core_index: core_of.get(&r.cpu).copied(),
            kind_index: kind_of.get(&r.cpu).copied(),
            max_freq_khz: r.max_freq_khz,
            min_freq_khz: r.min_freq_khz,
        })
        .collect()
}

fn build_identity(ci: &Option<Cpuinfo>, text: &Result<String, ProbeError>, arch: Arch) -> Identity {
    let Some(ci) = ci else {
        let reason = match text {
            Err(e) => Unknown::from(e.clone()),
            Ok(_) => Unknown::Other {
                detail: "unreachable".into(),
            },
        };
        return Identity {
            vendor: None,
            model_name: None,
            family: None,
            model: None,
            stepping: None,
            sparc_type: None,
            ncpus_probed: None,
            ncpus_active: None,
            machine_model: None,
            mhz_values: Vec::new(),
            flags: Vec::new(),
            microcode: Probed::Unknown(reason.clone()),
            cpuinfo: Probed::Unknown(reason),
        };
    };
    let mut mhz: Vec<f64> = ci.cpus.iter().filter_map(|c| c.mhz).collect();
    mhz.sort_by(|a, b| a.total_cmp(b));
    mhz.dedup();
    let mut model_name = ci.model_name.clone();
    if model_name.is_none() {
        // aarch64: name the distinct cores.
        let mut names: Vec<String> = Vec::new();
        for m in ci.cpus.iter().filter_map(|c| c.midr) {
            let n = m.display_name();
            if !names.contains(&n) {
                names.push(n);
            }
        }
        if !names.is_empty() {
            model_name = Some(names.join(" + "));
        }
    }
    let cpuinfo = match &ci.arch {
        Some((_, how)) => Probed::Known(how.clone()),
        None => Probed::Unknown(Unknown::Invalid {
            path: "/proc/cpuinfo".into(),
            detail: format!(
                "format not recognised (probed architecture: {})",
                arch.as_str()
            ),
        }),
    };
    Identity {
        vendor: ci.vendor.clone(),
        model_name,
        family: ci.family,
        model: ci.model,
        stepping: ci.stepping,
        sparc_type: ci.sparc_type.clone(),
        ncpus_probed: ci.ncpus_probed,
        ncpus_active: ci.ncpus_active,
        machine_model: ci.machine_model.clone(),
        mhz_values: mhz,
        flags: ci.flags.clone(),
        cpuinfo,
        microcode: crate::firmware::microcode_of(ci, arch),
    }
}

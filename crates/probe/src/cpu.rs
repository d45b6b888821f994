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

pub mod cpuinfo;
pub mod midr;
pub mod x86;

use std::collections::{BTreeMap, BTreeSet};

use hwsurvey_model::{CpuId, CpuSet, Probed, Unknown};
use serde::{Deserialize, Serialize};

use crate::live::{kernel_machine, read_live_facts, LIVE_FACTS_PATH};
use crate::{ProbeError, SysRoot};
pub use cpuinfo::{Arch, Cpuinfo};
pub use midr::Midr;

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// Everything about the probed machine's CPUs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cpu {
    /// Architecture of the probed machine.
    pub arch: Arch,
    /// How [`Cpu::arch`] was found (which file and what it said).
    pub arch_source: String,
    /// `/sys/devices/system/cpu/possible`: CPU numbers the kernel could ever bring up.
    pub possible: Probed<CpuSet>,
    /// `/sys/devices/system/cpu/present`: CPUs physically there.
    pub present: Probed<CpuSet>,
    /// `/sys/devices/system/cpu/online`: CPUs running.
    pub online: Probed<CpuSet>,
    /// `/sys/devices/system/cpu/offline`, or possible minus online when that file is missing.
    pub offline: Probed<CpuSet>,
    /// Present but not online (e.g. s390x 0,6,7; UltraSPARC T1 none: its 24-31 are not present).
    pub present_offline: Probed<CpuSet>,
    /// CPUs this process may run on.
    pub allowed: Allowed,
    /// Counts of packages, dies, clusters, cores, threads.
    pub topology: Topology,
    /// One entry per possible CPU (or per CPU folder), with its place in the topology.
    pub cpus: Vec<LogicalCpu>,
    /// Core kinds (one entry on homogeneous machines, several on hybrid/big.LITTLE parts).
    pub kinds: Vec<CoreKind>,
    /// Caches, one entry per (level, type, instance size); never averaged across kinds.
    pub caches: Vec<Cache>,
    /// Where [`Cpu::caches`] came from (`cache/index*`, sparc64 per-CPU files, e2k cpuinfo).
    pub caches_source: Probed<String>,
    /// Vendor, model name, family/model/stepping, sparc64 counts.
    pub identity: Identity,
    /// x86 cpuid on the live machine (cache and TLB geometry, hybrid core types).
    pub cpuid: Probed<x86::CpuidInfo>,
    /// Files that were there but could not be read or parsed, or that a present folder
    /// should have held.
    pub problems: Vec<Unknown>,
}

/// CPUs the probing process may run on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Allowed {
    /// `Cpus_allowed_list` of `/proc/self/status` (affinity and cpuset together).
    pub status_cpus: Probed<CpuSet>,
    /// The cgroup cpuset's effective CPUs.
    pub cgroup_cpus: Probed<CpuSet>,
    /// Which cgroup file [`Allowed::cgroup_cpus`] came from.
    pub cgroup_file: Option<String>,
}

/// Counts over the online CPUs that have a topology folder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Topology {
    /// Distinct packages (sockets, chips).
    pub packages: Probed<u32>,
    /// The package ids as the kernel gives them (ids, not counts: may be 36 and 8442).
    pub package_ids: Vec<i64>,
    /// Distinct dies (`die_id`, kernel >= 5.2; -1 means the firmware does not say).
    pub dies: Probed<u32>,
    /// Distinct clusters (`cluster_cpus_list`, kernel >= 5.16).
    pub clusters: Probed<u32>,
    /// Distinct cores (groups of hardware threads; see the module docs).
    pub cores: Probed<u32>,
    /// Online hardware threads: the size of `/sys/devices/system/cpu/online` (without that
    /// file, the online CPUs with a topology folder; unknown when there are none).
    /// Documents of machine schema 1 written before this was a `Probed` hold a plain number,
    /// which still reads (as known).
    pub threads: Probed<u32>,
    /// Online CPUs whose `cpuN/topology` folder was read; the other counts (packages, cores,
    /// per package) cover only these. Less than `threads` means the counts are incomplete
    /// (the missing folders are in [`Cpu::problems`]). `None` only in documents written
    /// before the field existed.
    #[serde(default)]
    pub threads_with_topology: Option<u32>,
    /// How many cores have how many threads, e.g. `{2: 6, 1: 8}` on a Raptor Lake; never an average.
    pub cores_by_threads: BTreeMap<u32, u32>,
    /// Cores and threads per package, by package id; never an average.
    pub per_package: Vec<PackageCounts>,
    /// Decisions taken on this machine, in words.
    pub notes: Vec<String>,
}

/// Cores and threads of one package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageCounts {
    /// The kernel's `physical_package_id`.
    pub package_id: i64,
    /// Cores in it.
    pub cores: u32,
    /// Online hardware threads in it.
    pub threads: u32,
}

/// One OS CPU and where it sits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogicalCpu {
    /// OS CPU number (`cpuN`).
    pub cpu: CpuId,
    /// In the kernel's online set.
    pub online: bool,
    /// `topology/physical_package_id` (`None`: no topology folder, or -1).
    pub package_id: Option<i64>,
    /// `topology/die_id`.
    pub die_id: Option<i64>,
    /// `topology/cluster_id`.
    pub cluster_id: Option<i64>,
    /// `topology/core_id` (unique only within a package).
    pub core_id: Option<i64>,
    /// Index of this CPU's core in a machine-wide numbering of cores (0..cores).
    pub core_index: Option<u32>,
    /// Index into [`Cpu::kinds`].
    pub kind_index: Option<u32>,
}

/// One kind of core on the machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreKind {
    /// Name for people, e.g. "ARM Cortex-A710", "Intel P-core (performance)".
    pub name: String,
    /// How the kind was told apart (MIDR part, cpu_capacity, Intel hybrid type, cache geometry).
    pub source: String,
    /// Online CPUs of this kind.
    pub cpus: CpuSet,
    /// Cores of this kind.
    pub cores: u32,
    /// Largest number of threads per core among them.
    pub threads_per_core: u32,
    /// aarch64 MIDR of these cores.
    pub midr: Option<Midr>,
    /// `cpu_capacity` (1024 = the biggest core), if the kernel gives it.
    pub capacity: Option<u32>,
    /// Largest `cpufreq/cpuinfo_max_freq` among them, in kHz.
    pub max_freq_khz: Option<u64>,
    /// Largest `acpi_cppc/highest_perf` among them (abstract performance units).
    pub cppc_highest_perf: Option<u32>,
    /// 0 = least performant kind; higher = more performant (like hwloc's cpukind efficiency).
    pub performance_rank: u32,
}

/// Cache type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheType {
    /// Data cache.
    Data,
    /// Instruction cache.
    Instruction,
    /// Unified cache.
    Unified,
}

impl CacheType {
    /// `d`, `i` or empty, as in "L1d".
    pub fn suffix(&self) -> &'static str {
        match self {
            CacheType::Data => "d",
            CacheType::Instruction => "i",
            CacheType::Unified => "",
        }
    }

    fn parse(text: &str) -> Option<CacheType> {
        match text.trim() {
            "Data" | "data" => Some(CacheType::Data),
            "Instruction" | "instruction" => Some(CacheType::Instruction),
            "Unified" | "unified" => Some(CacheType::Unified),
            _ => None,
        }
    }
}

/// One cache level/type with one instance size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    /// Level (1, 2, 3, 4).
    pub level: u8,
    /// Data, instruction or unified.
    pub cache_type: CacheType,
    /// Size of one instance in bytes (sysfs `size` is in KiB with a `K` suffix).
    pub size_bytes: Probed<u64>,
    /// `coherency_line_size`, bytes.
    pub line_size_bytes: Option<u32>,
    /// `ways_of_associativity`.
    pub ways: Option<u32>,
    /// `number_of_sets`.
    pub sets: Option<u32>,
    /// Number of instances.
    pub instances: u32,
    /// `instances x size_bytes`.
    pub total_bytes: Probed<u64>,
    /// CPUs of each instance.
    pub instance_cpus: Vec<CpuSet>,
    /// How instances were told apart: `cache id`, `shared_cpu_list`, `per core`, `per chip`.
    pub grouped_by: String,
}

/// CPU identity from /proc/cpuinfo.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Identity {
    /// `vendor_id` (x86, e2k, s390x), or the aarch64 implementer.
    pub vendor: Option<String>,
    /// `model name` (x86, e2k), `cpu` (sparc64, ppc64), or the aarch64 core names joined.
    pub model_name: Option<String>,
    /// x86/e2k `cpu family`.
    pub family: Option<u32>,
    /// x86/e2k `model`.
    pub model: Option<u32>,
    /// x86 `stepping`.
    pub stepping: Option<u32>,
    /// sparc64 `type` (sun4v, e90s).
    pub sparc_type: Option<String>,
    /// sparc64 `ncpus probed` (not used to count CPUs).
    pub ncpus_probed: Option<u32>,
    /// sparc64 `ncpus active` (not used to count CPUs).
    pub ncpus_active: Option<u32>,
    /// ppc64 platform/model, s390x machine type.
    pub machine_model: Option<String>,
    /// Distinct per-CPU clock values in MHz from cpuinfo (`cpu MHz`, sparc64 `CpuN MHz`).
    pub mhz_values: Vec<f64>,
    /// x86 flags / aarch64 Features / sparc64 cpucaps of the first CPU.
    pub flags: Vec<String>,
    /// /proc/cpuinfo unreadable or unrecognised: why.
    pub cpuinfo: Probed<String>,
}

/// The most CPUs a probe accepts: Linux's largest `NR_CPUS` (8192, `CONFIG_MAXSMP` on x86_64
/// and the powerpc maximum). A list or mask naming CPU [`MAX_CPUS`] or above is a damaged
/// file, refused before it is expanded (`0-1048575` in `possible` once took 11.8 s and
/// 1.28 GB).
pub const MAX_CPUS: u32 = 8192;

/// The largest CPU number a kernel list names (without expanding it), or `None` when the
/// text is not a list (the parser then says why).
fn list_max_id(text: &str) -> Option<u64> {
    let mut max = None;
    for item in text.trim().split(',') {
        let range = item.split(':').next().unwrap_or(item);
        for n in range.split('-') {
            let n = n.trim();
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let v = n.parse::<u64>().unwrap_or(u64::MAX);
            max = Some(max.map_or(v, |m: u64| m.max(v)));
        }
    }
    max
}

/// The highest set bit of a hex CPU mask (without expanding it), or `None` for an empty or
/// malformed mask.
fn mask_max_id(text: &str) -> Option<u64> {
    let hex: String = text.trim().chars().filter(|c| *c != ',').collect();
    let digits = hex.trim_start_matches('0');
    let first = digits.chars().next()?.to_digit(16)?;
    let bits_below = 4 * (digits.len() as u64 - 1);
    Some(bits_below + (31 - first.leading_zeros()) as u64)
}

fn beyond_max(path: &str, id: u64, text: &str) -> ProbeError {
    ProbeError::invalid(
        path,
        format!("CPU numbers below {MAX_CPUS} (the most any Linux kernel supports), not {id}"),
        &shorten(text),
    )
}

/// The first few dozen characters of a bad value, for an error line.
pub(crate) fn shorten(text: &str) -> String {
    let t = text.trim();
    if t.chars().count() > 40 {
        t.chars().take(40).collect::<String>() + "..."
    } else {
        t.to_string()
    }
}

/// Parses CPU list text read from `path`, refusing numbers of [`MAX_CPUS`] and above.
pub(crate) fn parse_cpulist_at(path: &str, text: &str) -> Result<CpuSet, ProbeError> {
    if let Some(m) = list_max_id(text) {
        if m >= MAX_CPUS as u64 {
            return Err(beyond_max(path, m, text));
        }
    }
    CpuSet::parse_list(text)
        .map_err(|_| ProbeError::invalid(path, "a CPU list like \"0-3,8\"", &shorten(text)))
}

/// Parses a hex CPU mask read from `path`, refusing bits of [`MAX_CPUS`] and above.
pub(crate) fn parse_cpumask_at(path: &str, text: &str) -> Result<CpuSet, ProbeError> {
    if let Some(m) = mask_max_id(text) {
        if m >= MAX_CPUS as u64 {
            return Err(beyond_max(path, m, text));
        }
    }
    CpuSet::parse_mask(text).map_err(|_| {
        ProbeError::invalid(path, "a hex CPU mask like \"ff,00000001\"", &shorten(text))
    })
}

/// Reads a CPU list file; a missing list falls back to the mask file `mask_path` if given.
/// CPU numbers of [`MAX_CPUS`] and above are refused with an error naming the file.
pub(crate) fn read_cpuset(
    root: &SysRoot,
    path: &str,
    mask_path: Option<&str>,
) -> Result<CpuSet, ProbeError> {
    match root.read_value(path) {
        Ok(text) => parse_cpulist_at(path, &text),
        Err(e) if e.is_missing() && mask_path.is_some() => {
            let mask = mask_path.unwrap_or_default();
            let text = root.read_value(mask)?;
            parse_cpumask_at(mask, &text)
        }
        Err(e) => Err(e),
    }
}

/// Reads a sibling or sharing list of CPU `cpu` (see [`read_cpuset`]); a list that does not
/// contain `cpu` itself is not what the kernel writes there.
fn read_own_cpuset(
    root: &SysRoot,
    path: &str,
    mask_path: Option<&str>,
    cpu: CpuId,
) -> Result<CpuSet, ProbeError> {
    let set = read_cpuset(root, path, mask_path)?;
    if set.contains(cpu) {
        Ok(set)
    } else {
        Err(ProbeError::invalid(
            path,
            format!("a CPU list containing cpu{cpu} itself"),
            &shorten(&set.to_list_string()),
        ))
    }
}

/// Reads topology file `name` of `topo` as a list (`<name>_list`), falling back to the mask
/// (`<name>`) when the list is absent (kernels before the `_list` files, some captures).
fn read_topology_set(
    root: &SysRoot,
    topo: &str,
    name: &str,
    cpu: CpuId,
) -> Result<CpuSet, ProbeError> {
    read_own_cpuset(
        root,
        &format!("{topo}/{name}_list"),
        Some(&format!("{topo}/{name}")),
        cpu,
    )
}

/// What a cache's `shared_cpu_list` / `shared_cpu_map` say about its sharing.
#[derive(Clone, Debug, PartialEq)]
enum Sharing {
    /// The CPUs sharing the cache (containing the CPU itself).
    Known(CpuSet),
    /// Neither file says (absent, unparsable, empty, or an all-zero map): not "private".
    Unknown,
}

/// Reads a cache's sharing: `shared_cpu_list`, or `shared_cpu_map` when the list is absent,
/// unparsable or empty. An all-zero map means the kernel does not know the sharing.
fn read_cache_sharing(
    root: &SysRoot,
    dir: &str,
    cpu: CpuId,
    problems: &mut Vec<Unknown>,
) -> Sharing {
    let list_path = format!("{dir}/shared_cpu_list");
    let map_path = format!("{dir}/shared_cpu_map");
    let from_list = match root.read_value(&list_path) {
        Ok(text) if text.is_empty() => {
            // The kernel never writes an empty list here (the CPU itself is always in it).
            problems.push(Unknown::Invalid {
                path: list_path.clone(),
                detail: "empty; shared_cpu_map used instead".into(),
            });
            None
        }
        Ok(text) => match parse_cpulist_at(&list_path, &text) {
            Ok(set) if set.is_empty() => None,
            Ok(set) => Some(Ok(set)),
            Err(e) => {
                problems.push(e.into());
                None
            }
        },
        Err(e) => {
            if !e.is_missing() {
                problems.push(e.into());
            }
            None
        }
    };
    let got = match from_list {
        Some(r) => r,
        None => match root.read_value(&map_path) {
            Ok(text) => match parse_cpumask_at(&map_path, &text) {
                Ok(set) if set.is_empty() => return Sharing::Unknown,
                Ok(set) => Ok(set),
                Err(e) => Err(e),
            },
            Err(e) if e.is_missing() => return Sharing::Unknown,
            Err(e) => Err(e),
        },
    };
    match got {
        Ok(set) if set.contains(cpu) => Sharing::Known(set),
        Ok(set) => {
            problems.push(
                ProbeError::invalid(
                    &list_path,
                    format!("a CPU list containing cpu{cpu} itself"),
                    &shorten(&set.to_list_string()),
                )
                .into(),
            );
            Sharing::Unknown
        }
        Err(e) => {
            problems.push(e.into());
            Sharing::Unknown
        }
    }
}

fn probed<T>(r: Result<T, ProbeError>) -> Probed<T> {
    match r {
        Ok(v) => Probed::Known(v),
        Err(e) => Probed::Unknown(e.into()),
    }
}

/// Records a non-missing error; returns the value.
fn keep<T>(problems: &mut Vec<Unknown>, r: Result<T, ProbeError>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            if !e.is_missing() {
                problems.push(e.into());
            }
            None
        }
    }
}

/// Like [`keep`], but a missing file is a problem too (the folder that should hold it exists).
fn expect<T>(problems: &mut Vec<Unknown>, r: Result<T, ProbeError>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            problems.push(e.into());
            None
        }
    }
}

fn read_i64(root: &SysRoot, path: &str) -> Result<i64, ProbeError> {
    root.read_parsed(path, "an integer")
}

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

/// The `cpuN` folder numbers, sorted; folders beyond `possible` (or [`MAX_CPUS`]) are listed
/// as problems and left out.
fn cpu_numbers(
    root: &SysRoot,
    possible: Option<&CpuSet>,
    problems: &mut Vec<Unknown>,
) -> Vec<CpuId> {
    match root.list_dir(CPU_DIR) {
        Ok(names) => {
            let mut v: Vec<CpuId> = Vec::new();
            for n in names.iter().filter_map(|n| n.strip_prefix("cpu")) {
                let Ok(id) = n.parse::<u64>() else {
                    continue;
                };
                let inside = match possible {
                    Some(p) => id <= u32::MAX as u64 && p.contains(id as u32),
                    None => id < MAX_CPUS as u64,
                };
                if inside {
                    v.push(id as CpuId);
                } else {
                    problems.push(Unknown::Invalid {
                        path: format!("{CPU_DIR}/cpu{}", shorten(n)),
                        detail: "a CPU folder beyond the possible CPUs; ignored".into(),
                    });
                }
            }
            v.sort_unstable();
            v
        }
        Err(e) => {
            problems.push(e.into());
            Vec::new()
        }
    }
}

struct RawCpu {
    cpu: CpuId,
    online: bool,
    has_topology: bool,
    package_id: Option<i64>,
    die_id: Option<i64>,
    cluster_id: Option<i64>,
    core_id: Option<i64>,
    /// `core_id` as written, -1 included (AMD compute units: the kernel's siblings with
    /// different or -1 core ids are separate cores).
    core_id_raw: Option<i64>,
    book_id: Option<i64>,
    siblings: Option<CpuSet>,
    package_cpus: Option<CpuSet>,
    die_cpus: Option<CpuSet>,
    cluster_cpus: Option<CpuSet>,
    capacity: Option<u32>,
    midr: Option<Midr>,
    max_freq_khz: Option<u64>,
    cppc_highest_perf: Option<u32>,
    caches: Vec<RawCache>,
}

#[derive(Clone)]
struct RawCache {
    level: u8,
    cache_type: CacheType,
    size: Result<u64, Unknown>,
    line: Option<u32>,
    ways: Option<u32>,
    sets: Option<u32>,
    /// The cache `id` (>= 0; -1 and absent are `None`).
    id: Option<i64>,
    shared: Sharing,
}

fn optional_id(
    root: &SysRoot,
    path: &str,
    problems: &mut Vec<Unknown>,
    required: bool,
) -> Option<i64> {
    let r = read_i64(root, path);
    let v = if required {
        expect(problems, r)
    } else {
        keep(problems, r)
    };
    v.filter(|v| *v >= 0)
}

/// Drops (and lists) topology and cache sets of `r` that name CPUs beyond `possible`.
fn bound_to_possible(r: &mut RawCpu, possible: &CpuSet, problems: &mut Vec<Unknown>) {
    let cpu = r.cpu;
    let mut check = |what: &str, set: &mut Option<CpuSet>| {
        if let Some(s) = set {
            if !s.is_subset(possible) {
                problems.push(Unknown::Invalid {
                    path: format!("{CPU_DIR}/cpu{cpu}/{what}"),
                    detail: format!(
                        "names CPUs beyond possible ({}): {}; ignored",
                        possible.to_list_string(),
                        shorten(&s.difference(possible).to_list_string())
                    ),
                });
                *set = None;
            }
        }
    };
    check("topology/thread_siblings_list", &mut r.siblings);
    check("topology/core_siblings_list", &mut r.package_cpus);
    check("topology/die_cpus_list", &mut r.die_cpus);
    check("topology/cluster_cpus_list", &mut r.cluster_cpus);
    for c in r.caches.iter_mut() {
        if let Sharing::Known(s) = &c.shared {
            let mut opt = Some(s.clone());
            let what = format!(
                "cache (L{}{}) shared_cpu_list",
                c.level,
                c.cache_type.suffix()
            );
            check(&what, &mut opt);
            if opt.is_none() {
                c.shared = Sharing::Unknown;
            }
        }
    }
}

/// `physical_package_id`: -1 is "not known" (`None`); any other negative id is not what a
/// kernel writes (a problem, and `None`).
fn package_id(root: &SysRoot, path: &str, problems: &mut Vec<Unknown>) -> Option<i64> {
    let v = expect(problems, read_i64(root, path))?;
    if v < -1 {
        problems.push(ProbeError::invalid(path, "a package id >= -1", &v.to_string()).into());
    }
    (v >= 0).then_some(v)
}

fn read_raw_cpu(root: &SysRoot, cpu: CpuId, online: bool, problems: &mut Vec<Unknown>) -> RawCpu {
    let base = format!("{CPU_DIR}/cpu{cpu}");
    let topo = format!("{base}/topology");
    let has_topology = root.exists(&topo);
    let mut raw = RawCpu {
        cpu,
        online,
        has_topology,
        package_id: None,
        die_id: None,
        cluster_id: None,
        core_id: None,
        core_id_raw: None,
        book_id: None,
        siblings: None,
        package_cpus: None,
        die_cpus: None,
        cluster_cpus: None,
        capacity: None,
        midr: None,
        max_freq_khz: None,
        cppc_highest_perf: None,
        caches: Vec::new(),
    };
    if has_topology {
        raw.package_id = package_id(root, &format!("{topo}/physical_package_id"), problems);
        raw.core_id_raw = expect(problems, read_i64(root, &format!("{topo}/core_id")));
        raw.core_id = raw.core_id_raw.filter(|v| *v >= 0);
        let die_id_raw = keep(problems, read_i64(root, &format!("{topo}/die_id")));
        raw.die_id = die_id_raw.filter(|v| *v >= 0);
        raw.cluster_id = optional_id(root, &format!("{topo}/cluster_id"), problems, false);
        raw.book_id = optional_id(root, &format!("{topo}/book_id"), problems, false);
        // Each set from its `_list` file, else its hex mask (older kernels, some captures);
        // core_cpus (>= 5.6) and thread_siblings are the same set, as are package_cpus and
        // core_siblings.
        let core_cpus = keep(problems, read_topology_set(root, &topo, "core_cpus", cpu));
        raw.siblings = core_cpus.or_else(|| {
            expect(
                problems,
                read_topology_set(root, &topo, "thread_siblings", cpu),
            )
        });
        raw.package_cpus = keep(
            problems,
            read_topology_set(root, &topo, "package_cpus", cpu),
        )
        .or_else(|| {
            keep(
                problems,
                read_topology_set(root, &topo, "core_siblings", cpu),
            )
        });
        // die_cpus says something only where die_id does not say -1 (the firmware does not
        // describe dies; the kernel then writes the package or the CPU itself).
        if die_id_raw != Some(-1) {
            raw.die_cpus = keep(problems, read_topology_set(root, &topo, "die_cpus", cpu));
        }
        raw.cluster_cpus = keep(
            problems,
            read_topology_set(root, &topo, "cluster_cpus", cpu),
        );
    }
    raw.capacity = keep(
        problems,
        root.read_parsed(&format!("{base}/cpu_capacity"), "an integer capacity"),
    );
    raw.midr = keep(
        problems,
        root.read_value(&format!("{base}/regs/identification/midr_el1"))
            .and_then(|t| {
                u64::from_str_radix(t.trim_start_matches("0x"), 16)
                    .map(Midr::from_raw)
                    .map_err(|_| {
                        ProbeError::invalid(
                            format!("{base}/regs/identification/midr_el1"),
                            "a hex MIDR",
                            &t,
                        )
                    })
            }),
    );
    raw.max_freq_khz = keep(
        problems,
        root.read_parsed(&format!("{base}/cpufreq/cpuinfo_max_freq"), "kHz"),
    );
    raw.cppc_highest_perf = keep(
        problems,
        root.read_parsed(&format!("{base}/acpi_cppc/highest_perf"), "an integer"),
    );
    raw.caches = read_cache_dirs(root, &base, cpu, problems);
    raw
}

fn read_cache_dirs(
    root: &SysRoot,
    base: &str,
    cpu: CpuId,
    problems: &mut Vec<Unknown>,
) -> Vec<RawCache> {
    let dir = format!("{base}/cache");
    let names = match root.list_dir(&dir) {
        Ok(n) => n,
        Err(e) => {
            keep::<()>(problems, Err(e));
            return Vec::new();
        }
    };
    let mut out: Vec<RawCache> = Vec::new();
    for name in names.iter().filter(|n| n.starts_with("index")) {
        let d = format!("{dir}/{name}");
        // The kernel numbers a CPU's cache leaves index0, index1, ... (a handful); a stray
        // index99999999 is not one of them and must not invent a cache or a core kind.
        match name["index".len()..].parse::<u32>() {
            Ok(i) if i < MAX_CACHE_LEAVES => {}
            _ => {
                problems.push(Unknown::Invalid {
                    path: d.clone(),
                    detail: format!(
                        "not a cache leaf the kernel writes (index0 to index{}); ignored",
                        MAX_CACHE_LEAVES - 1
                    ),
                });
                continue;
            }
        }
        let Some(level) = expect(
            problems,
            root.read_parsed::<u8>(&format!("{d}/level"), "a cache level"),
        ) else {
            continue;
        };
        if !(1..=MAX_CACHE_LEVEL).contains(&level) {
            problems.push(
                ProbeError::invalid(
                    format!("{d}/level"),
                    format!("a cache level from 1 to {MAX_CACHE_LEVEL}"),
                    &level.to_string(),
                )
                .into(),
            );
            continue;
        }
        let type_path = format!("{d}/type");
        let cache_type = match root.read_value(&type_path) {
            Ok(t) => match CacheType::parse(&t) {
                Some(ct) => ct,
                None => {
                    problems.push(
                        ProbeError::invalid(&type_path, "Data, Instruction or Unified", &t).into(),
                    );
                    continue;
                }
            },
            Err(e) => {
                problems.push(e.into());
                continue;
            }
        };
        let size_path = format!("{d}/size");
        let size = match root.read_value(&size_path) {
            Ok(t) => match cpuinfo::parse_size_bytes(&t).filter(|s| *s > 0) {
                Some(b) if b > max_cache_bytes(level) => Err(Unknown::from(ProbeError::invalid(
                    &size_path,
                    format!(
                        "a plausible L{level} size (at most {} KiB)",
                        max_cache_bytes(level) >> 10
                    ),
                    &shorten(&t),
                ))),
                Some(b) => Ok(b),
                None => Err(Unknown::from(ProbeError::invalid(
                    &size_path,
                    "a size like \"32K\"",
                    &shorten(&t),
                ))),
            },
            Err(e) => Err(e.into()),
        };
        if let Err(u) = &size {
            if !matches!(u, Unknown::Missing { .. }) {
                problems.push(u.clone());
            }
        }
        out.push(RawCache {
            level,
            cache_type,
            size,
            line: keep(
                problems,
                root.read_parsed(&format!("{d}/coherency_line_size"), "bytes"),
            ),
            ways: keep(
                problems,
                root.read_parsed(&format!("{d}/ways_of_associativity"), "an integer"),
            ),
            sets: keep(
                problems,
                root.read_parsed(&format!("{d}/number_of_sets"), "an integer"),
            ),
            // -1: the firmware gives no id (seen beside real ids on other CPUs).
            id: keep(problems, read_i64(root, &format!("{d}/id"))).filter(|i| *i >= 0),
            shared: read_cache_sharing(root, &d, cpu, problems),
        });
        if out
            .iter()
            .filter(|c| c.level == level && c.cache_type == cache_type)
            .count()
            > 1
        {
            problems.push(Unknown::Invalid {
                path: d.clone(),
                detail: format!(
                    "a second L{level}{} leaf of cpu{cpu}; the first is kept",
                    cache_type.suffix()
                ),
            });
            out.pop();
        }
    }
    out
}

/// Cache leaves a CPU may have: `cache/index0` to `index{MAX_CACHE_LEAVES - 1}`.
pub const MAX_CACHE_LEAVES: u32 = 64;
/// Highest cache level a probe accepts (IBM Z has L4).
pub const MAX_CACHE_LEVEL: u8 = 5;

/// The largest plausible size of one cache instance at `level`, bytes: 4 MiB for L1 (the
/// largest real ones are 256 KiB), 256 MiB for L2, 16 GiB beyond. Larger is a damaged file
/// (a `4294967296K` L1d once invented P-core/E-core kinds on a uniform CPU).
pub fn max_cache_bytes(level: u8) -> u64 {
    match level {
        1 => 4 << 20,
        2 => 256 << 20,
        _ => 16 << 30,
    }
}

/// Probes the CPUs under `root`. Never fails: what cannot be read is `Unknown` with the reason
/// and listed in [`Cpu::problems`].
pub fn probe(root: &SysRoot) -> Cpu {
    let mut problems = Vec::new();
    let cpuinfo_text = root.read("/proc/cpuinfo");
    let ci = cpuinfo_text
        .as_ref()
        .ok()
        .map(|t| cpuinfo::parse_cpuinfo(t));
    let (arch, arch_source) = detect_arch(root, cpuinfo_text.as_ref().ok().map(String::as_str));

    // The kernel always has at least one possible, present and online CPU (the one running).
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
    let mut topology_notes = Vec::new();
    let numbers = cpu_numbers(root, possible.known(), &mut problems);
    // Without the global online file (old or partial captures), each cpuN/online says; the
    // boot CPU often has no such file and is online.
    if let Probed::Unknown(Unknown::Missing { .. }) = &online {
        let mut set = CpuSet::new();
        let mut any_file = false;
        for &n in &numbers {
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
        if any_file && !set.is_empty() {
            topology_notes.push(format!(
                "no {CPU_DIR}/online: online CPUs {} from the per-CPU cpuN/online files",
                set.to_list_string()
            ));
            online = Probed::Known(set);
        }
    }
    // The kernel's present and online sets lie inside possible; members beyond it are a
    // damaged file, listed and dropped.
    if let Probed::Known(p) = &possible {
        for (name, set) in [("present", &mut present), ("online", &mut online)] {
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
    let offline = match read_cpuset(root, &format!("{CPU_DIR}/offline"), None) {
        // The kernel's offline is possible minus online; a file saying otherwise is damaged.
        Ok(s) => match (&possible, &online) {
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
        Err(e) => match (&possible, &online) {
            (Probed::Known(p), Probed::Known(o)) if e.is_missing() => {
                Probed::Known(p.difference(o))
            }
            _ => Probed::Unknown(e.into()),
        },
    };
    let present_offline = match (&present, &online) {
        (Probed::Known(p), Probed::Known(o)) => Probed::Known(p.difference(o)),
        (Probed::Unknown(u), _) | (_, Probed::Unknown(u)) => Probed::Unknown(u.clone()),
    };

    let allowed = probe_allowed(root);

    // CPU folders; online-ness from the online set (cpuN/online is absent for the boot CPU).
    let mut raws: Vec<RawCpu> = numbers
        .iter()
        .map(|&n| {
            let is_online = match &online {
                Probed::Known(set) => set.contains(n),
                Probed::Unknown(_) => true,
            };
            read_raw_cpu(root, n, is_online, &mut problems)
        })
        .collect();
    if let Probed::Known(p) = &possible {
        for r in raws.iter_mut() {
            bound_to_possible(r, p, &mut problems);
        }
    }

    let identity = build_identity(&ci, &cpuinfo_text, arch);
    let heterogeneous = {
        // Only a property known for every online CPU can tell them apart (absent is not
        // different).
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
    };
    let (mut topology, core_of) = build_topology(
        arch,
        &raws,
        &identity,
        heterogeneous,
        &mut topology_notes,
        &mut problems,
    );
    if let Probed::Known(set) = &online {
        // Every online CPU counts as a thread; one whose topology cannot be read is listed.
        for n in set.iter() {
            if !raws.iter().any(|r| r.cpu == n && r.has_topology) {
                let path = format!("{CPU_DIR}/cpu{n}/topology");
                problems.push(match root.list_dir(&path) {
                    Err(e) => e.into(),
                    Ok(_) => Unknown::Missing { path },
                });
            }
        }
        topology.threads = Probed::Known(set.len() as u32);
    }
    // Caches are listed from the CPUs that have them; an online CPU without cache data while
    // others have it is said to be unknown (never taken as a different core kind).
    if raws.iter().any(|r| r.online && !r.caches.is_empty()) {
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

    let cpuid = if root.is_live() {
        x86::probe_live()
    } else {
        match read_live_facts(root) {
            Some(facts) => facts.cpuid,
            None => Probed::Unknown(Unknown::Other {
                detail: format!("cpuid is read only on the live machine (a capture made by hwsurvey snapshot keeps it in {LIVE_FACTS_PATH})"),
            }),
        }
    };
    let core_types: BTreeMap<CpuId, String> = cpuid
        .known()
        .map(|c| c.core_types.clone())
        .unwrap_or_default();
    let (kinds, kind_of) = build_kinds(arch, &raws, &ci, &core_of, root, &core_types);

    let (caches, caches_source) =
        build_caches(arch, &raws, &ci, &identity, &topology, root, &mut problems);

    let cpus = raws
        .iter()
        .map(|r| LogicalCpu {
            cpu: r.cpu,
            online: r.online,
            package_id: r.package_id,
            die_id: r.die_id,
            cluster_id: r.cluster_id,
            core_id: r.core_id,
            core_index: core_of.get(&r.cpu).copied(),
            kind_index: kind_of.get(&r.cpu).copied(),
        })
        .collect();

    topology.notes.extend(topology_notes);
    Cpu {
        arch,
        arch_source,
        possible,
        present,
        online,
        offline,
        present_offline,
        allowed,
        topology,
        cpus,
        kinds,
        caches,
        caches_source,
        identity,
        cpuid,
        problems,
    }
}

/// Parses `Cpus_allowed_list` out of a `/proc/PID/status` text.
pub fn parse_status_allowed(text: &str) -> Option<Result<CpuSet, String>> {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    Some(CpuSet::parse_list(line).map_err(|_| line.trim().to_string()))
}

fn probe_allowed(root: &SysRoot) -> Allowed {
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
fn probe_cgroup_cpuset(root: &SysRoot) -> (Probed<CpuSet>, Option<String>) {
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
    }
}

fn is_amd_family_15h(identity: &Identity) -> bool {
    identity.vendor.as_deref() == Some("AuthenticAMD") && identity.family == Some(0x15)
}

/// The L1d sharing set of a CPU, if known.
fn l1d_shared(r: &RawCpu) -> Option<&CpuSet> {
    r.caches
        .iter()
        .find(|c| c.level == 1 && c.cache_type == CacheType::Data)
        .and_then(|c| match &c.shared {
            Sharing::Known(s) => Some(s),
            Sharing::Unknown => None,
        })
}

/// Returns the topology and the core index of each CPU.
fn build_topology(
    arch: Arch,
    raws: &[RawCpu],
    identity: &Identity,
    heterogeneous: bool,
    notes: &mut Vec<String>,
    problems: &mut Vec<Unknown>,
) -> (Topology, BTreeMap<CpuId, u32>) {
    let with_topo: Vec<&RawCpu> = raws.iter().filter(|r| r.online && r.has_topology).collect();
    let threads = with_topo.len() as u32;
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

    // Core groups.
    let mut split_compute_units = 0u32;
    let core_id_of: BTreeMap<CpuId, Option<i64>> =
        raws.iter().map(|r| (r.cpu, r.core_id_raw)).collect();
    let mut core_keys: BTreeMap<(Option<i64>, Vec<CpuId>), Vec<CpuId>> = BTreeMap::new();
    for r in &with_topo {
        let key: (Option<i64>, Vec<CpuId>) = match &r.siblings {
            Some(sib) => {
                let mut group = sib.clone();
                // Siblings that do not share an L1d are separate cores only where the
                // kernel's core ids say so too (differ, or -1: AMD compute units); Intel
                // SMT threads share a core id whatever a guest's cache files say.
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
                            split_compute_units += 1;
                        }
                    }
                }
                (None, group.iter().collect())
            }
            None => match r.core_id {
                // Unique within (package, die): keep them apart by using a pseudo-list.
                Some(core) => (
                    r.package_id,
                    vec![u32::MAX, core as u32, r.die_id.unwrap_or(0) as u32],
                ),
                None => (None, vec![r.cpu]),
            },
        };
        core_keys.entry(key).or_default().push(r.cpu);
    }
    let mut core_of = BTreeMap::new();
    let mut cores_by_threads: BTreeMap<u32, u32> = BTreeMap::new();
    for (i, members) in core_keys.values().enumerate() {
        for cpu in members {
            core_of.insert(*cpu, i as u32);
        }
        *cores_by_threads.entry(members.len() as u32).or_default() += 1;
    }
    if split_compute_units > 0 {
        let family = if is_amd_family_15h(identity) {
            " (AMD family 15h compute units)"
        } else {
            ""
        };
        notes.push(format!(
            "thread siblings that do not share an L1 data cache are counted as separate cores{family}: {} cores of 1 thread, {} compute units; a naive count says {} cores x 2 threads",
            core_keys.len(),
            core_keys.len() / 2,
            core_keys.len() / 2
        ));
    }
    let cores = if with_topo.is_empty() {
        Probed::Unknown(Unknown::Missing {
            path: format!("{CPU_DIR}/cpuN/topology"),
        })
    } else {
        Probed::Known(core_keys.len() as u32)
    };

    // Packages.
    let package_ids: Vec<i64> = with_topo
        .iter()
        .filter_map(|r| r.package_id)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut per_package = Vec::new();
    for pid in &package_ids {
        let cores = with_topo
            .iter()
            .filter(|r| r.package_id == Some(*pid))
            .filter_map(|r| core_of.get(&r.cpu))
            .collect::<BTreeSet<_>>()
            .len() as u32;
        let threads = with_topo
            .iter()
            .filter(|r| r.package_id == Some(*pid))
            .count() as u32;
        per_package.push(PackageCounts {
            package_id: *pid,
            cores,
            threads,
        });
    }
    // No package ids (-1 on s390x and POWER LPARs): the kernel's core_siblings groups are
    // the sockets lscpu reports.
    let sibling_packages: BTreeSet<&CpuSet> = with_topo
        .iter()
        .filter_map(|r| r.package_cpus.as_ref())
        .collect();
    // Package ids against the sibling masks: where the kernel gives both for every CPU, they
    // must group the CPUs the same way; when they do not, one file is damaged and the masks
    // (which the scheduler uses) are counted.
    let masks_disagree =
        !package_ids.is_empty() && with_topo.iter().all(|r| r.package_cpus.is_some()) && {
            let online: CpuSet = with_topo.iter().map(|r| r.cpu).collect();
            let by_mask: BTreeSet<CpuSet> = with_topo
                .iter()
                .filter_map(|r| r.package_cpus.as_ref())
                .map(|s| s.intersection(&online))
                .collect();
            let mut by_id: BTreeMap<Option<i64>, CpuSet> = BTreeMap::new();
            for r in &with_topo {
                by_id.entry(r.package_id).or_default().insert(r.cpu);
            }
            let by_id: BTreeSet<CpuSet> = by_id.into_values().collect();
            by_mask != by_id
        };
    let mut packages = if masks_disagree {
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
    };
    if arch == Arch::Sparc64 && package_ids.len() > 1 {
        let package_is_core = with_topo
            .iter()
            .all(|r| match (&r.package_cpus, &r.siblings) {
                (Some(p), Some(s)) => p == s,
                _ => false,
            });
        let model = identity.model_name.clone().unwrap_or_default();
        let single_chip = [
            "UltraSparc T1",
            "UltraSparc T2 ",
            "UltraSparc T2 (Niagara2)",
        ]
        .iter()
        .any(|m| model.starts_with(m.trim_end()) && !model.contains("T2+"));
        if package_is_core {
            if single_chip {
                packages = Probed::Known(1);
                notes.push(format!(
                    "sparc64: the kernel gives each core its own physical_package_id ({} ids); {model} is a single-chip part: 1 chip",
                    package_ids.len()
                ));
                per_package = vec![PackageCounts {
                    package_id: package_ids.first().copied().unwrap_or(0),
                    cores: core_keys.len() as u32,
                    threads,
                }];
            } else {
                packages = Probed::Unknown(Unknown::Other {
                    detail: format!(
                        "sparc64: the kernel gives each core its own physical_package_id; the chip count of {model:?} is not known"
                    ),
                });
            }
        }
    }

    let dies = if with_topo.iter().any(|r| r.die_id.is_some()) {
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
    };
    let clusters = if with_topo.iter().any(|r| r.cluster_cpus.is_some()) {
        Probed::Known(
            with_topo
                .iter()
                .filter_map(|r| r.cluster_cpus.as_ref())
                .collect::<BTreeSet<_>>()
                .len() as u32,
        )
    } else {
        Probed::Unknown(Unknown::Other {
            detail: "no cluster_cpus_list (kernel < 5.16 or no cluster level)".into(),
        })
    };
    // arm64 device-tree kernels before the cluster level (5.16) put the cpu-map cluster in
    // physical_package_id; a big.LITTLE SoC is one package whose "packages" are its clusters.
    let mut clusters = clusters;
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
        packages = Probed::Known(1);
        per_package = vec![PackageCounts {
            package_id: package_ids.first().copied().unwrap_or(0),
            cores: core_keys.len() as u32,
            threads,
        }];
    }
    let books: BTreeSet<i64> = with_topo.iter().filter_map(|r| r.book_id).collect();
    if !books.is_empty() {
        notes.push(format!("s390 books: {}", books.len()));
    }
    (
        Topology {
            packages,
            package_ids,
            dies,
            clusters,
            cores,
            threads: if threads > 0 {
                Probed::Known(threads)
            } else {
                Probed::Unknown(Unknown::Other {
                    detail: "no online CPU with a topology folder".into(),
                })
            },
            threads_with_topology: Some(threads),
            cores_by_threads,
            per_package,
            notes: Vec::new(),
        },
        core_of,
    )
}

/// Per-CPU cache geometry of levels 1-2 (size and type), used to tell x86 hybrid core kinds
/// apart in captures that lack the Intel hybrid PMU folders.
fn cache_signature(r: &RawCpu) -> Vec<(u8, CacheType, Option<u64>)> {
    let mut v: Vec<_> = r
        .caches
        .iter()
        .filter(|c| c.level <= 2)
        .map(|c| (c.level, c.cache_type, c.size.as_ref().ok().copied()))
        .collect();
    v.sort();
    v
}

fn build_kinds(
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

/// Caches of the /proc/cpuinfo `cacheN : level=.. type=.. scope=.. size=..` lines (e2k,
/// s390) above level `above`. Private caches are one per core (s390: per thread-sibling
/// group; e2k: per CPU); shared ones one per chip on e2k, and on s390 the L3 one per chip
/// (core_siblings group) and the L4 one per book (book id), each when the topology says.
fn cpuinfo_caches(arch: Arch, ci: &Cpuinfo, online: &[&RawCpu], above: u8) -> Vec<Cache> {
    let mut out = Vec::new();
    let n_cpus = online.len().max(ci.cpus.len()) as u32;
    let groups = |f: &dyn Fn(&RawCpu) -> Option<String>| -> Option<u32> {
        let keys: Option<BTreeSet<String>> = online.iter().map(|r| f(r)).collect();
        keys.map(|k| k.len() as u32).filter(|n| *n > 0)
    };
    for c in ci.e2k_caches.iter().filter(|c| c.level > above) {
        let ct = CacheType::parse(&c.cache_type).unwrap_or(CacheType::Unified);
        let shared = c.scope.as_deref() == Some("Shared");
        let (instances, grouped_by) = if arch == Arch::S390x {
            if !shared {
                match groups(&|r| r.siblings.as_ref().map(CpuSet::to_list_string)) {
                    Some(n) => (n, "s390 scope=Private (one per core)"),
                    None => (n_cpus, "s390 scope=Private (one per CPU)"),
                }
            } else if c.level >= 4 {
                match groups(&|r| r.book_id.map(|b| b.to_string())) {
                    Some(n) => (n, "s390 scope=Shared (one per book)"),
                    None => (1, "s390 scope=Shared (book count unknown: counted once)"),
                }
            } else {
                match groups(&|r| r.package_cpus.as_ref().map(CpuSet::to_list_string)) {
                    Some(n) => (n, "s390 scope=Shared (one per chip)"),
                    None => (1, "s390 scope=Shared (chip count unknown: counted once)"),
                }
            }
        } else if shared {
            (1, "e2k scope=Shared (one per chip)")
        } else {
            (n_cpus, "e2k scope=Private (one per core)")
        };
        let size_bytes = match c.size_bytes {
            Some(s) if s > max_cache_bytes(c.level) => Probed::Unknown(Unknown::Invalid {
                path: "/proc/cpuinfo".into(),
                detail: format!(
                    "cache{} size {s} bytes is not a plausible L{} size (at most {} KiB)",
                    c.level,
                    c.level,
                    max_cache_bytes(c.level) >> 10
                ),
            }),
            Some(s) => Probed::Known(s),
            None => Probed::Unknown(Unknown::Invalid {
                path: "/proc/cpuinfo".into(),
                detail: format!("cache{} line without a size", c.level),
            }),
        };
        out.push(Cache {
            level: c.level,
            cache_type: ct,
            total_bytes: size_bytes
                .clone()
                .map(|s| s.saturating_mul(instances as u64)),
            size_bytes,
            line_size_bytes: c.line_size_bytes,
            ways: c.ways,
            sets: None,
            instances,
            instance_cpus: Vec::new(),
            grouped_by: grouped_by.to_string(),
        });
    }
    out
}

struct CacheAcc {
    size: Result<u64, Unknown>,
    line: Option<u32>,
    ways: Option<u32>,
    sets: Option<u32>,
    instances: BTreeMap<String, CpuSet>,
    grouped_by: &'static str,
}

fn push_caches(
    out: &mut Vec<Cache>,
    accs: BTreeMap<(u8, CacheType, Option<u64>, String), CacheAcc>,
) {
    for ((level, cache_type, _, _), acc) in accs {
        let instances = acc.instances.len() as u32;
        let size_bytes = match acc.size {
            Ok(s) => Probed::Known(s),
            Err(u) => Probed::Unknown(u),
        };
        let total_bytes = size_bytes
            .clone()
            .map(|s| s.saturating_mul(instances as u64));
        out.push(Cache {
            level,
            cache_type,
            size_bytes,
            line_size_bytes: acc.line,
            ways: acc.ways,
            sets: acc.sets,
            instances,
            total_bytes,
            instance_cpus: acc.instances.into_values().collect(),
            grouped_by: acc.grouped_by.to_string(),
        });
    }
}

fn build_caches(
    arch: Arch,
    raws: &[RawCpu],
    ci: &Option<Cpuinfo>,
    identity: &Identity,
    topology: &Topology,
    root: &SysRoot,
    problems: &mut Vec<Unknown>,
) -> (Vec<Cache>, Probed<String>) {
    let mut out = Vec::new();
    let online: Vec<&RawCpu> = raws.iter().filter(|r| r.online).collect();
    if online.iter().any(|r| !r.caches.is_empty()) {
        let amd15 = is_amd_family_15h(identity);
        // Cache ids tell instances apart only where every CPU with that cache has one (an
        // id of -1 beside real ids once doubled the L3).
        let mut all_ids: BTreeMap<(u8, CacheType), bool> = BTreeMap::new();
        for r in &online {
            for c in &r.caches {
                let e = all_ids.entry((c.level, c.cache_type)).or_insert(true);
                *e &= c.id.is_some() && !(amd15 && c.level <= 2);
            }
        }
        let mut accs: BTreeMap<(u8, CacheType, Option<u64>, String), CacheAcc> = BTreeMap::new();
        // CPUs whose sharing neither file gives, placed after the known instances.
        let mut unknown_sharing: Vec<(&RawCpu, &RawCache)> = Vec::new();
        for r in &online {
            for c in &r.caches {
                let by_id = all_ids
                    .get(&(c.level, c.cache_type))
                    .copied()
                    .unwrap_or(false);
                let mut shared = match (&c.shared, by_id) {
                    (Sharing::Known(s), _) => s.clone(),
                    (Sharing::Unknown, true) => [r.cpu].into_iter().collect(),
                    (Sharing::Unknown, false) => {
                        unknown_sharing.push((r, c));
                        continue;
                    }
                };
                // AMD family 15h: the compute unit (kernel thread siblings) shares L2 and L1i.
                if amd15
                    && (c.level == 2 || (c.level == 1 && c.cache_type == CacheType::Instruction))
                {
                    if let Some(sib) = &r.siblings {
                        shared = shared.union(sib);
                    }
                }
                let (inst_key, grouped_by) = match c.id.filter(|_| by_id) {
                    Some(id) => (format!("id {id}"), "cache id"),
                    None => (shared.to_list_string(), "shared_cpu_list"),
                };
                let size_key = c.size.as_ref().ok().copied();
                let acc = accs
                    .entry((c.level, c.cache_type, size_key, grouped_by.to_string()))
                    .or_insert_with(|| CacheAcc {
                        size: c.size.clone(),
                        line: c.line,
                        ways: c.ways,
                        sets: c.sets,
                        instances: BTreeMap::new(),
                        grouped_by,
                    });
                let e = acc.instances.entry(inst_key).or_default();
                *e = e.union(&shared);
            }
        }
        // Unknown sharing (no shared_cpu_list, an empty or unparsable one, an all-zero
        // shared_cpu_map): a CPU that another CPU's instance already holds is in it; the
        // rest are assumed per core (L1, L2) or per package (L3+), and said so.
        let mut assumed: BTreeMap<(u8, CacheType), (CpuSet, bool)> = BTreeMap::new();
        for (r, c) in unknown_sharing {
            let size_key = c.size.as_ref().ok().copied();
            let e = assumed.entry((c.level, c.cache_type)).or_default();
            e.0.insert(r.cpu);
            let held = accs.iter().any(|((l, t, _, _), acc)| {
                *l == c.level
                    && *t == c.cache_type
                    && acc.instances.values().any(|s| s.contains(r.cpu))
            });
            if held {
                continue;
            }
            e.1 = true;
            let (set, how) = if c.level <= 2 {
                (r.siblings.clone(), "assumed per core (sharing unknown)")
            } else {
                (
                    r.package_cpus.clone(),
                    "assumed per package (sharing unknown)",
                )
            };
            let set = set.unwrap_or_else(|| [r.cpu].into_iter().collect());
            let acc = accs
                .entry((c.level, c.cache_type, size_key, how.to_string()))
                .or_insert_with(|| CacheAcc {
                    size: c.size.clone(),
                    line: c.line,
                    ways: c.ways,
                    sets: c.sets,
                    instances: BTreeMap::new(),
                    grouped_by: how,
                });
            let e = acc.instances.entry(set.to_list_string()).or_default();
            *e = e.union(&set);
        }
        for ((level, ct), (cpus, any_assumed)) in assumed {
            problems.push(Unknown::Other {
                detail: format!(
                    "L{level}{} sharing unknown on cpus {} (shared_cpu_list and shared_cpu_map absent, empty or all zero): {}",
                    ct.suffix(),
                    shorten(&cpus.to_list_string()),
                    match (any_assumed, level <= 2) {
                        (false, _) => "each is in an instance another CPU lists",
                        (true, true) => "assumed per core",
                        (true, false) => "assumed per package",
                    }
                ),
            });
        }
        push_caches(&mut out, accs);
        // s390 sysfs lists L1 and L2 only; the higher levels are cpuinfo `cacheN` lines.
        let top = out.iter().map(|c| c.level).max().unwrap_or(0);
        let more = ci
            .as_ref()
            .map(|ci| cpuinfo_caches(arch, ci, &online, top))
            .unwrap_or_default();
        if more.is_empty() {
            return (out, Probed::Known(format!("{CPU_DIR}/cpuN/cache/index*")));
        }
        out.extend(more);
        return (
            out,
            Probed::Known(format!(
                "{CPU_DIR}/cpuN/cache/index*; levels above L{top} from /proc/cpuinfo cacheN: lines"
            )),
        );
    }
    // sparc64 per-CPU files.
    if arch == Arch::Sparc64
        || online
            .iter()
            .any(|r| root.exists(&format!("{CPU_DIR}/cpu{}/l1_dcache_size", r.cpu)))
    {
        let mut accs: BTreeMap<(u8, CacheType, Option<u64>, String), CacheAcc> = BTreeMap::new();
        let mut any = false;
        let present_files: BTreeSet<&str> = ["l1_dcache", "l1_icache", "l2_cache", "l3_cache"]
            .into_iter()
            .filter(|f| {
                online
                    .iter()
                    .any(|r| root.exists(&format!("{CPU_DIR}/cpu{}/{f}_size", r.cpu)))
            })
            .collect();
        let all_online: CpuSet = online.iter().map(|r| r.cpu).collect();
        let per_package = topology.packages.known().is_some_and(|p| *p > 1);
        // A package's CPUs: its core_siblings mask, else the CPUs with its package id.
        let package_of = |r: &RawCpu| -> Option<CpuSet> {
            r.package_cpus.clone().or_else(|| {
                let id = r.package_id?;
                Some(
                    online
                        .iter()
                        .filter(|o| o.package_id == Some(id))
                        .map(|o| o.cpu)
                        .collect(),
                )
            })
        };
        for r in &online {
            let base = format!("{CPU_DIR}/cpu{}", r.cpu);
            for (file, level, ct) in [
                ("l1_dcache", 1u8, CacheType::Data),
                ("l1_icache", 1, CacheType::Instruction),
                ("l2_cache", 2, CacheType::Unified),
                ("l3_cache", 3, CacheType::Unified),
            ] {
                let size_path = format!("{base}/{file}_size");
                let size: Result<u64, Unknown> = match root.read_parsed::<u64>(&size_path, "bytes")
                {
                    Ok(0) => {
                        Err(ProbeError::invalid(&size_path, "a size in bytes above 0", "0").into())
                    }
                    Ok(s) if s > max_cache_bytes(level) => Err(ProbeError::invalid(
                        &size_path,
                        format!(
                            "a plausible L{level} size in bytes (at most {})",
                            max_cache_bytes(level)
                        ),
                        &s.to_string(),
                    )
                    .into()),
                    Ok(s) => Ok(s),
                    Err(e) if e.is_missing() => {
                        // Absent on every CPU: no such cache. Absent on some: a hole.
                        if present_files.contains(file) {
                            problems.push(e.into());
                        }
                        continue;
                    }
                    Err(e) => Err(e.into()),
                };
                if let Err(u) = &size {
                    problems.push(u.clone());
                }
                any = true;
                // L1 per core; L2/L3 one per package (chip): the files describe the chip's
                // cache. On a single-chip machine (and sun4v T1/T2, whose kernel gives each
                // core a package id) that is one for the machine.
                let (key, shared, grouped_by) = if level == 1 {
                    let s = r
                        .siblings
                        .clone()
                        .unwrap_or_else(|| [r.cpu].into_iter().collect());
                    (s.to_list_string(), s, "per core")
                } else if let (true, Some(pkg)) = (per_package, package_of(r)) {
                    (pkg.to_list_string(), pkg, "per package (chip)")
                } else {
                    ("chip".to_string(), all_online.clone(), "per chip")
                };
                let line = keep(
                    problems,
                    root.read_parsed(&format!("{base}/{file}_line_size"), "bytes"),
                );
                let acc = accs
                    .entry((level, ct, size.as_ref().ok().copied(), String::new()))
                    .or_insert_with(|| CacheAcc {
                        size: size.clone(),
                        line,
                        ways: None,
                        sets: None,
                        instances: BTreeMap::new(),
                        grouped_by,
                    });
                acc.instances.insert(key, shared);
            }
        }
        if any {
            if topology.packages.known().is_none() {
                problems.push(Unknown::Other {
                    detail: "sparc64: the package count is unknown, so L2/L3 are counted once for the machine"
                        .into(),
                });
            }
            push_caches(&mut out, accs);
            return (
                out,
                Probed::Known(format!("{CPU_DIR}/cpuN/l1_dcache_size etc. (sparc64)")),
            );
        }
    }
    // e2k and s390 cpuinfo trailing lines.
    if let Some(ci) = ci {
        if !ci.e2k_caches.is_empty() {
            out.extend(cpuinfo_caches(arch, ci, &online, 0));
            return (
                out,
                Probed::Known(format!("/proc/cpuinfo cacheN: lines ({})", arch.as_str())),
            );
        }
    }
    (
        out,
        Probed::Unknown(Unknown::Missing {
            path: format!("{CPU_DIR}/cpuN/cache"),
        }),
    )
}

//! The CPU document's types: the kernel's CPU sets, the process's allowed CPUs, topology,
//! logical CPUs, core kinds, caches and identity (units and sources on each field).

use std::collections::BTreeMap;

use hwsurvey_model::{CpuId, CpuSet, Probed, Unknown};
use serde::{Deserialize, Serialize};

use super::cpuinfo::Arch;
use super::midr::Midr;
use super::x86;

/// Everything about the probed machine's CPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// TLB levels with their entries and page sizes ([`super::tlb`]): from cpuid on x86,
    /// unknown with the reason elsewhere. Documents written before it existed read as unknown.
    #[serde(default = "super::tlb::not_recorded")]
    pub tlb: Probed<Vec<super::tlb::Tlb>>,
    /// The nominal clock a measured clock is held against ([`super::nominal`]): cpuid leaf
    /// 0x16's base clock, the model name's `@ N GHz`, the TSC's rate (cpuid leaf 0x15 or
    /// x86 bogomips / 2), sparc64 `ClkTck` or e2k `cpu MHz`; unknown with the reason
    /// elsewhere. Documents written before it existed read as unknown.
    #[serde(default = "super::nominal::not_recorded")]
    pub nominal_clock: Probed<super::nominal::NominalClock>,
    /// lscpu's "CPU op-mode(s)" ([`super::modes::op_modes`]). Documents written before it
    /// existed read as unknown.
    #[serde(default = "super::modes::not_recorded")]
    pub op_modes: Probed<super::modes::OpModes>,
    /// lscpu's "Address sizes": x86 `/proc/cpuinfo` `address sizes`, unknown with the reason
    /// elsewhere ([`super::modes::address_sizes`]). Documents written before it existed read
    /// as unknown.
    #[serde(default = "super::modes::not_recorded")]
    pub address_sizes: Probed<super::modes::AddressSizes>,
    /// lscpu's "Byte Order": `/sys/kernel/cpu_byteorder`, else the architecture's only order
    /// or the kernel's machine name ([`super::modes::byte_order`]). Documents written before
    /// it existed read as unknown.
    #[serde(default = "super::modes::not_recorded")]
    pub byte_order: Probed<super::modes::ByteOrder>,
    /// Files that were there but could not be read or parsed, or that a present folder
    /// should have held.
    pub problems: Vec<Unknown>,
}

/// CPUs the probing process may run on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Allowed {
    /// `Cpus_allowed_list` of `/proc/self/status` (affinity and cpuset together).
    pub status_cpus: Probed<CpuSet>,
    /// The cgroup cpusets' effective CPUs: each hierarchy's nearest on the way up from the
    /// process's cgroup (`hwsurvey_probe::cgroup`), intersected where there are several.
    pub cgroup_cpus: Probed<CpuSet>,
    /// Which cgroup file [`Allowed::cgroup_cpus`] came from (several joined by " ∩ ").
    pub cgroup_file: Option<String>,
}

/// How [`Topology::clusters`]' reason starts where the machine has no cluster level (a known
/// absence, printed as "none"): every `cluster_id` 65535, or every cluster one core or a whole
/// package.
pub const NO_CLUSTER_LEVEL: &str = "no cluster level";

/// Counts over the online CPUs that have a topology folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    /// Distinct packages (sockets, chips).
    pub packages: Probed<u32>,
    /// The package ids as the kernel gives them (ids, not counts: may be 36 and 8442).
    pub package_ids: Vec<i64>,
    /// Distinct dies (`die_id`, kernel >= 5.2; -1 means the firmware does not say).
    pub dies: Probed<u32>,
    /// Distinct clusters (`cluster_cpus_list`, kernel >= 5.16), where the level lies between a
    /// core and a package; unknown with the reason where it does not (every `cluster_id`
    /// 65535, every cluster one core or a whole package: lscpu and lstopo show no cluster).
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
    /// `topology/cluster_id`, where the machine has a cluster level ([`Topology::clusters`]
    /// known); `None` where it has none (the kernel's 65535 "no cluster", or clusters of one
    /// core each, as lscpu and lstopo show them), and in a big.LITTLE SoC whose clusters are
    /// the kernel's package ids.
    pub cluster_id: Option<i64>,
    /// Index of this CPU's cluster in a machine-wide numbering of clusters
    /// (0..[`Topology::clusters`]), `probe --cpus`'s CLUSTER column; `None` without a cluster
    /// level (and in files written before 2026-12-08).
    #[serde(default)]
    pub cluster_index: Option<u32>,
    /// `topology/core_id` (unique only within a package).
    pub core_id: Option<i64>,
    /// Index of this CPU's core in a machine-wide numbering of cores (0..cores).
    pub core_index: Option<u32>,
    /// Index into [`Cpu::kinds`].
    pub kind_index: Option<u32>,
    /// `cpufreq/cpuinfo_max_freq`, kHz (lscpu's MAXMHZ); `None` without cpufreq.
    #[serde(default)]
    pub max_freq_khz: Option<u64>,
    /// `cpufreq/cpuinfo_min_freq`, kHz (lscpu's MINMHZ); `None` without cpufreq.
    #[serde(default)]
    pub min_freq_khz: Option<u64>,
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

    pub fn parse(text: &str) -> Option<CacheType> {
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
    /// The sysfs `cache/indexM/id` of each instance, in the order of `instance_cpus`: `None`
    /// where the instances were told apart otherwise (see `grouped_by`). Empty in documents
    /// of older hwsurvey versions.
    #[serde(default)]
    pub instance_ids: Vec<Option<i64>>,
    /// How instances were told apart: `cache id`, `shared_cpu_list`, `per core`, `per chip`.
    pub grouped_by: String,
}

/// CPU identity from /proc/cpuinfo.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// The microcode revision of each CPU, from /proc/cpuinfo's `microcode` lines (x86 only),
    /// grouped by revision ([`crate::firmware::microcode_of`]); documents written before
    /// hwsurvey read it load as unknown.
    #[serde(default = "crate::firmware::microcode_not_probed")]
    pub microcode: Probed<Vec<crate::firmware::MicrocodeRevision>>,
}

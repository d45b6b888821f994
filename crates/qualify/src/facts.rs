//! [`Facts`]: the flat view of a machine (and optionally a result file and a binary) that the
//! qualification rules read.
//!
//! The rules never look at the probe's types directly: [`Facts`] is filled from the probe's
//! `Machine` document in one place ([`crate::from_machine`]), from the probe's text parsers for
//! captured `dmidecode`/EDAC output, or by hand in tests. Every value is a [`Probed`], so a rule
//! whose input is unknown reports "not evaluated" with the reason instead of passing silently.

use hwsurvey_model::{CpuId, CpuSet, NodeId, NodeSet, Probed, Unknown};
use serde::{Deserialize, Serialize};

/// A value not probed at all (the source was not given), with the words saying so.
pub fn not_given<T>(what: &str) -> Probed<T> {
    Probed::Unknown(Unknown::Other {
        detail: format!("{what} not given"),
    })
}

/// Everything the rules may read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Facts {
    /// CPU sets and settings.
    pub cpu: CpuFacts,
    /// NUMA nodes.
    pub numa: NumaFacts,
    /// DIMMs (SMBIOS Type 17) and EDAC counters.
    pub memory: MemoryFacts,
    /// THP and hugetlb pools.
    pub pages: PageFacts,
    /// PCIe links.
    pub io: IoFacts,
    /// Kernel identity and command line.
    pub os: OsFacts,
    /// The binary under test (`--binary FILE`, else hwsurvey itself).
    pub binary: Probed<BinaryFacts>,
    /// The hwsurvey target descriptor (`targets/<name>.toml`) of that binary; without a
    /// binary, of the kernel's machine ([`crate::machine::target_facts`]).
    pub target: Probed<TargetFacts>,
    /// Figures from a result file, when one was given.
    pub result: Probed<ResultFacts>,
    /// What the machine runs on (virtual machine, emulator): decides the report's verdict
    /// ([`crate::verdict`]), read by no rule.
    #[serde(default)]
    pub platform: crate::verdict::Platform,
}

impl Default for Facts {
    fn default() -> Self {
        Facts {
            cpu: CpuFacts::default(),
            numa: NumaFacts::default(),
            memory: MemoryFacts::default(),
            pages: PageFacts::default(),
            io: IoFacts::default(),
            os: OsFacts::default(),
            binary: not_given("binary"),
            target: not_given("target descriptor"),
            result: not_given("result file"),
            platform: crate::verdict::Platform::default(),
        }
    }
}

/// CPU sets (kernel cpulist grammar) and CPU-related settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpuFacts {
    /// `/sys/devices/system/cpu/possible`.
    pub possible: Probed<CpuSet>,
    /// `/sys/devices/system/cpu/present`.
    pub present: Probed<CpuSet>,
    /// `/sys/devices/system/cpu/online`.
    pub online: Probed<CpuSet>,
    /// CPUs that have a `/sys/devices/system/cpu/cpuN` directory: the kernel registered a CPU
    /// device for them (x86 registers present CPUs only; sparc64 every CPU its machine
    /// description lists, including those it did not bring up).
    pub registered: Probed<CpuSet>,
    /// CPUs this process may run on (`Cpus_allowed_list` in `/proc/self/status`).
    pub allowed: Probed<CpuSet>,
    /// `/sys/devices/system/cpu/smt/control`: on, off, forceoff, notsupported, notimplemented.
    pub smt_control: Probed<String>,
    /// Threads per core as the topology reports them (`thread_siblings_list`), when uniform.
    pub threads_per_core: Probed<u32>,
    /// Scaling governor per online CPU (`cpuN/cpufreq/scaling_governor`).
    pub governors: Probed<Vec<(CpuId, String)>>,
    /// The cgroup CPU quota that allows the least run time, on the process's cgroup or an
    /// ancestor (v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`); `Known(None)` =
    /// no quota.
    #[serde(default = "no_quota_given")]
    pub quota: Probed<Option<QuotaFacts>>,
}

/// A CPU quota: CPUs' worth of run time (quota / period) and the file that set it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuotaFacts {
    /// quota / period (1.5 = one and a half CPUs busy all the time).
    pub cpus: f64,
    /// The file, e.g. `cgroup v2 cpu.max (/sys/fs/cgroup/job/cpu.max)`.
    pub source: String,
}

fn no_quota_given() -> Probed<Option<QuotaFacts>> {
    not_given("CPU quota")
}

impl Default for CpuFacts {
    fn default() -> Self {
        CpuFacts {
            possible: not_given("possible CPUs"),
            present: not_given("present CPUs"),
            online: not_given("online CPUs"),
            registered: not_given("CPU directories"),
            allowed: not_given("allowed CPUs"),
            smt_control: not_given("SMT control"),
            threads_per_core: not_given("threads per core"),
            governors: not_given("governors"),
            quota: no_quota_given(),
        }
    }
}

/// NUMA nodes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NumaFacts {
    /// Node folders under `/sys/devices/system/node`.
    pub nodes: Probed<Vec<NodeFacts>>,
    /// `/sys/devices/system/node/possible`, when the kernel writes it.
    pub possible: Probed<NodeSet>,
}

impl Default for NumaFacts {
    fn default() -> Self {
        NumaFacts {
            nodes: not_given("NUMA nodes"),
            possible: not_given("possible NUMA nodes"),
        }
    }
}

/// One NUMA node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeFacts {
    /// Node number.
    pub id: NodeId,
    /// Its CPUs (`nodeN/cpulist` or `cpumap`).
    pub cpus: Probed<CpuSet>,
    /// `MemTotal` of `nodeN/meminfo`, in bytes (the kernel's "kB" is KiB).
    pub mem_total_bytes: Probed<u64>,
}

/// Memory population.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryFacts {
    /// Every SMBIOS Type 17 Memory Device (slot), populated or empty.
    pub dimms: Probed<Vec<DimmFacts>>,
    /// EDAC DIMMs (`/sys/devices/system/edac/mc/mcM/dimmN`) with their error counters.
    pub edac: Probed<Vec<EdacDimmFacts>>,
    /// Theoretical peak bandwidth, bytes per second (channels x MT/s x 8 bytes).
    pub theoretical_peak_bytes_per_s: Probed<f64>,
    /// The interleave the SMBIOS Type 19/20 records state
    /// (`hwsurvey_machine::memory::interleave`), or why it is unknown.
    #[serde(default = "no_interleave_given")]
    pub interleave: Probed<InterleaveFacts>,
    /// What the probe's channel labels rest on where it is a vendor's slot naming (Dell's
    /// A1-An), `hwsurvey_machine::memory::Population::channel_basis`.
    #[serde(default)]
    pub channel_basis: Option<String>,
    /// When the SMBIOS table lists fewer slots than its arrays declare, the probe's note
    /// (`Population::unlisted_slots_note`): channels without a listed module may exist.
    #[serde(default)]
    pub unlisted_slots: Option<String>,
}

fn no_interleave_given() -> Probed<InterleaveFacts> {
    not_given("SMBIOS Type 19/20 interleave")
}

impl Default for MemoryFacts {
    fn default() -> Self {
        MemoryFacts {
            dimms: not_given("SMBIOS memory devices"),
            edac: not_given("EDAC counters"),
            theoretical_peak_bytes_per_s: not_given("theoretical memory peak"),
            interleave: no_interleave_given(),
            channel_basis: None,
            unlisted_slots: None,
        }
    }
}

/// The interleave of the populated DIMMs as SMBIOS Type 20 (DSP0134 3.x section 7.21) states
/// it, per DIMM.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InterleaveFacts {
    /// Populated DIMMs in an interleave (Interleave Position >= 1, or a range shared with
    /// other DIMMs), by locator.
    pub interleaved: Vec<String>,
    /// Populated DIMMs mapped to a range of their own with Interleave Position 0.
    pub not_interleaved: Vec<String>,
    /// Populated DIMMs whose position is unknown (FFh) or that have no Type 20 record.
    pub unknown: Vec<String>,
    /// Widest interleave (devices per set); 0 when none interleaves.
    pub ways: u32,
    /// The state in words, as `hwsurvey probe` prints it.
    pub state: String,
    /// One line per populated DIMM: its range(s), Interleave Position and depth.
    pub devices: Vec<String>,
    /// Populated channels per socket, where the Type 17 locators name channels
    /// (`(socket, channels with a DIMM)`); empty when they do not.
    pub populated_channels: Vec<(String, u32)>,
}

/// One memory slot (SMBIOS Type 17).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DimmFacts {
    /// Type 17 Locator (`A1`, `D11`, `DIMM_A1`).
    pub locator: String,
    /// Type 17 Bank Locator (`/SYS/MB/P0`, `NODE 0 CHANNEL 1`), when given.
    pub bank_locator: Option<String>,
    /// Handle of the Type 16 Physical Memory Array holding the slot, when given.
    pub array_handle: Option<String>,
    /// The socket the probe placed the slot on (`hwsurvey_machine::memory::SlotPlace::socket`:
    /// read from the Locator / Bank Locator, or the Type 16 array standing for a socket), when
    /// it could; the rules group by this first, so they agree with `hwsurvey probe`.
    #[serde(default)]
    pub socket: Option<String>,
    /// The channel the probe placed the slot on, or why the locators do not tell
    /// (`hwsurvey_machine::memory::SlotPlace::channel`); `None` where no probe placed it (facts
    /// made by hand), and the rules place it with the probe's reader
    /// (`hwsurvey_machine::memory::population::locate`).
    #[serde(default)]
    pub channel: Option<Probed<String>>,
    /// True when a module sits in the slot (its size may still be unknown).
    pub populated: bool,
    /// Module size in bytes; `None` for an empty slot or a module whose size SMBIOS does not
    /// give (Size 0xFFFF, "Unknown"): check `populated`, never read `None` as empty or 0.
    pub size_bytes: Option<u64>,
    /// Memory type (`DDR4`).
    pub memory_type: Option<String>,
    /// Rated speed, MT/s (Type 17 Speed).
    pub speed_mt_per_s: Option<u32>,
    /// Configured speed, MT/s (Type 17 Configured Memory Speed).
    pub configured_speed_mt_per_s: Option<u32>,
    /// Ranks.
    pub rank: Option<u32>,
    /// Part number, trimmed.
    pub part_number: Option<String>,
}

/// One EDAC DIMM with its counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EdacDimmFacts {
    /// Memory controller number (`mcM`).
    pub mc: u32,
    /// DIMM number under the controller (`dimmN`); for csrow-only drivers the csrow number.
    pub dimm: u32,
    /// `dimm_label`, when set.
    pub label: Option<String>,
    /// Corrected errors (`dimm_ce_count`).
    pub ce_count: Option<u64>,
    /// Uncorrected errors (`dimm_ue_count`).
    pub ue_count: Option<u64>,
}

/// Page settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PageFacts {
    /// The selected mode of `/sys/kernel/mm/transparent_hugepage/enabled` (always, madvise, never).
    pub thp_enabled: Probed<String>,
    /// hugetlb pools (`/sys/kernel/mm/hugepages/hugepages-*kB/{nr,free}_hugepages`), the
    /// probe's ([`hwsurvey_machine::pages::HugePool::totals`]); known only when every pool's
    /// page count is.
    pub hugetlb: Probed<Vec<PoolTotals>>,
    /// The pages each pool must hold for every hugetlb point of the plan to run (the largest
    /// working set in pages of that size, `hwsurvey_workloads::families::mem_latency::
    /// hugetlb_needs` over the plan `run --plan-only` prints); `None` where no plan was built
    /// (facts of a result file, or made by hand).
    #[serde(default)]
    pub hugetlb_needed: Option<Vec<HugetlbNeed>>,
}

impl Default for PageFacts {
    fn default() -> Self {
        PageFacts {
            thp_enabled: not_given("THP mode"),
            hugetlb: not_given("hugetlb pools"),
            hugetlb_needed: None,
        }
    }
}

pub use hwsurvey_machine::pages::PoolTotals;

/// The pages one hugetlb pool must hold for the plan's hugetlb points of its size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HugetlbNeed {
    /// Page size in bytes.
    pub page_size_bytes: u64,
    /// Pages the pool must hold.
    pub pages: u64,
}

/// I/O.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IoFacts {
    /// PCIe links (`/sys/bus/pci/devices/*/{current,max}_link_{speed,width}`).
    pub pcie: Probed<Vec<PcieLinkFacts>>,
    /// Every endpoint's path to its root port (`hwsurvey_machine::pcie::paths`); `None` when
    /// not given (facts built by hand, or a result file written before the probe had it).
    #[serde(default)]
    pub pcie_paths: Option<Vec<hwsurvey_machine::pcie::PciePath>>,
}

impl Default for IoFacts {
    fn default() -> Self {
        IoFacts {
            pcie_paths: None,
            pcie: not_given("PCIe links"),
        }
    }
}

/// One PCIe link.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PcieLinkFacts {
    /// PCI address (`0000:3b:00.0`).
    pub address: String,
    /// What the device is, when known (class or driver name).
    pub device: Option<String>,
    /// Current link speed, GT/s.
    pub current_gt_per_s: Option<f64>,
    /// Maximum link speed, GT/s.
    pub max_gt_per_s: Option<f64>,
    /// Current link width (lanes).
    pub current_width: Option<u32>,
    /// Maximum link width (lanes).
    pub max_width: Option<u32>,
}

/// Kernel identity.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OsFacts {
    /// `/proc/sys/kernel/osrelease` (`6.1.0-18-amd64`).
    pub kernel_release: Probed<String>,
    /// The kernel's machine (`uname -m`: x86_64, aarch64, sparc64, e2k).
    pub kernel_machine: Probed<String>,
    /// `/proc/cmdline`.
    pub cmdline: Probed<String>,
    /// The kernel's clocksource (`/sys/devices/system/clocksource/clocksource0/`).
    #[serde(default = "no_clocksource_given")]
    pub clocksource: Probed<ClocksourceFacts>,
}

/// The clocksource in use and those available, as the kernel lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClocksourceFacts {
    /// `current_clocksource` (`tsc`, `hpet`, `arch_sys_counter`).
    pub current: String,
    /// `available_clocksource`, in the kernel's order.
    pub available: Probed<Vec<String>>,
}

fn no_clocksource_given() -> Probed<ClocksourceFacts> {
    not_given("clocksource")
}

impl Default for OsFacts {
    fn default() -> Self {
        OsFacts {
            kernel_release: not_given("kernel release"),
            kernel_machine: not_given("kernel machine"),
            cmdline: not_given("kernel command line"),
            clocksource: no_clocksource_given(),
        }
    }
}

/// The ELF identity of a binary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryFacts {
    /// Where it was read.
    pub path: String,
    /// 32 or 64 (ELF class).
    pub class_bits: u8,
    /// `e_machine` (62 x86_64, 183 aarch64, 43 SPARCV9, 175 EM_MCST_ELBRUS, 3 i386, 40 arm:
    /// the names of `hwsurvey_elf::MACHINES`).
    pub machine: u16,
    /// Little-endian data.
    pub little_endian: bool,
}

/// What the rules read from a target descriptor (`targets/<name>.toml`, parsed by
/// `hwsurvey_elf::TargetDescriptor`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetFacts {
    /// Descriptor name (`sparc64`).
    pub name: String,
    /// Rust target triple (`sparc64-unknown-linux-gnu`).
    pub triple: String,
    /// Where the descriptor was read (`targets/sparc64.toml (built in)`).
    pub descriptor: String,
    /// Why this descriptor: `ELF64 e_machine 43 of /proc/self/exe`, or the kernel's machine
    /// when no binary is known.
    pub chosen_by: String,
    /// Oldest supported kernel release, dotted (`4.4`): the descriptor's `min_kernel`.
    pub min_kernel: String,
    /// The descriptor's `min_kernel_source` (rustc platform support entry, or the vendor's).
    pub min_kernel_source: String,
}

/// Figures from a result file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultFacts {
    /// Where it was read.
    pub path: String,
    /// Highest STREAM Triad median over all thread counts, bytes per second.
    pub triad_peak_bytes_per_s: Option<f64>,
    /// Page modes the profile asked for (`base`, `thp`, `hugetlb`).
    pub page_modes: Vec<String>,
    /// The clocksource changes the run saw (`from`, `to`, the point after which it was read;
    /// the result file's `clocksource_changes`).
    #[serde(default)]
    pub clocksource_changes: Vec<(String, String, String)>,
    /// What the hardware watch saw during the run (the file's `watch` and every point's);
    /// `None` for a file written before the watch.
    #[serde(default)]
    pub watch: Option<WatchFacts>,
}

/// What the hardware watch saw during a run: the run's `watch` (sources, DIMMs, clock,
/// totals) and each watched point's delta, named `family id` (with the soak round).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchFacts {
    /// The file's `watch`.
    pub run: hwsurvey_machine::watch::RunWatch,
    /// `(point, what the watch saw during it)`, in run order.
    pub points: Vec<(String, hwsurvey_machine::watch::WatchDelta)>,
}

/// Parses the kernel's `kB` (KiB) hugepage folder name `hugepages-2048kB` into bytes.
pub fn hugepage_dir_bytes(name: &str) -> Option<u64> {
    let kib: u64 = name
        .strip_prefix("hugepages-")?
        .strip_suffix("kB")?
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// Parses the selected mode out of a THP `enabled` file (`always [madvise] never` -> `madvise`).
pub fn selected_mode(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hugepage_names() {
        assert_eq!(hugepage_dir_bytes("hugepages-2048kB"), Some(2 << 20));
        assert_eq!(hugepage_dir_bytes("hugepages-1048576kB"), Some(1 << 30));
        assert_eq!(hugepage_dir_bytes("hugepages-x"), None);
    }

    #[test]
    fn thp_mode() {
        assert_eq!(
            selected_mode("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(selected_mode("always madvise never"), None);
    }
}

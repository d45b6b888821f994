//! What a correct probe derives inside a guest, as its definition's `[expect]` table says.

use super::*;

/// Facts a correct probe derives inside a guest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Packages among the online CPUs.
    pub packages: u32,
    /// Dies among the online CPUs, when the definition says.
    pub dies: Option<u32>,
    /// Clusters among the online CPUs, when the definition says.
    pub clusters: Option<u32>,
    /// The probe finds no cluster level (each cluster is one core, as on x86 guests whose
    /// cores have an L2 each; lscpu and lstopo show none): its count is unknown, with why.
    #[serde(default)]
    pub no_cluster_level: bool,
    /// Cores among the online CPUs.
    pub cores: u32,
    /// Threads of every online core.
    pub threads_per_core: u32,
    /// `cpu/possible`.
    pub possible: String,
    /// `cpu/present`, when the definition says.
    pub present: Option<String>,
    /// `cpu/online`.
    pub online: String,
    /// Possible but not online (empty list: none).
    pub offline: String,
    /// `smt/active`, when the definition says.
    pub smt_active: Option<bool>,
    /// THP `enabled` selection.
    pub thp: String,
    /// The probe's platform line (`Virtualization::summary`): what the guest can tell about
    /// running under qemu-system TCG.
    pub platform: String,
    /// cgroup version governing memory.
    pub cgroup_version: u8,
    /// The memory limit in force, bytes.
    pub cgroup_memory_max_bytes: u64,
    /// NUMA nodes, ascending by id.
    pub nodes: Vec<ExpectNode>,
    /// Facts (as the tests name them) the probe is known to get wrong in this guest, each with
    /// the reason: printed as `KNOWN PROBE BUG` instead of failing; a listed fact that comes
    /// out right fails the test, so the list is emptied as the bugs are fixed.
    #[serde(default)]
    pub known_probe_bugs: BTreeMap<String, String>,
    /// The TLB as the probe must read it from the guest's CPUID, when the definition says:
    /// the sources of its levels (`"cpuid 0x80000005 EBX"`, ...), or empty where the CPU model
    /// describes no TLB (QEMU's Intel models: leaf 2 holds cache descriptors only and there is
    /// no leaf 0x18), and the probe must then say the TLB is unknown, with its reason.
    pub tlb_sources: Option<Vec<String>>,
    /// A PCIe link several endpoints share, when the guest has one ([`Guest::devices`]).
    pub pcie_shared: Option<ExpectSharedLink>,
    /// The measured run must find the critical rate (p99 under the bound) for every page
    /// mode, unless its search stopped because the workers were off their vCPUs past the bound
    /// for 1 % of two trials (`details.search.stop = "stalled"`: the host took the guest's
    /// CPUs away, as when other work runs beside the test). A miss for any other reason fails,
    /// unless the host was busy with other work in each of the test's boots (the test boots
    /// the guest again while it misses on a busy host, up to 3 times; see
    /// [`GuestRun::host_busy_elsewhere`]): a wrong pacing, accounting or pass criterion shows
    /// there. True for a guest whose vCPUs
    /// do not outnumber the host's CPUs, where a worker keeps its CPU on a quiet host (issue
    /// 17); false lets any miss pass that names its failing criterion with its numbers.
    #[serde(default)]
    pub critical_rate_found: bool,
    /// The clocksource the probe must find (`tsc-early` and `tsc` count as one), when the
    /// definition says: an x86 guest's may be changed by the kernel's watchdog under TCG.
    pub clocksource: Option<String>,
    /// A clocksource the test switches the guest's kernel to 2 s into a measured run (writing
    /// `current_clocksource`, as the kernel's watchdog does when it marks the TSC unstable):
    /// the run must record the change and say it is not comparable, and the probe and
    /// qualify's `clock.source` run after it must name the new clocksource.
    pub clocksource_switch: Option<String>,
    /// Whether the guest builds block devices on loop devices with its kernel's drivers (two
    /// device-mapper linear targets, an MD RAID1 array, a zram device writing back to one;
    /// `dm-mod`, `md-mod`, `raid1`, `zram` and `loop` in its modules, `dmsetup` and `mdadm` in
    /// its packages) and the test checks that a storage run naming a lower device, or a dm
    /// target whose lower device another target shares, is refused in one line naming what sits
    /// there, the device left byte for byte unchanged.
    #[serde(default)]
    pub stacked_refusals: bool,
    /// Hardware errors the host injects through qemu's monitor in the middle of a measured
    /// run: a machine check on one CPU bank and a correctable and an uncorrectable
    /// AER error on one PCIe port; the run's file must hold each against the point it came
    /// in, qualify must fail the run naming the bank and the device, compare must mark the
    /// point.
    pub hardware_errors: Option<ExpectHardwareErrors>,
}

/// What [`Expect::hardware_errors`] injects, and where.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectHardwareErrors {
    /// The CPU (qemu's index, the guest's OS CPU number) of the machine check.
    pub cpu: u32,
    /// Its MCA bank.
    pub bank: u32,
    /// MCi_STATUS of the machine check (hex, `0x...`), as `mce` takes it.
    pub status: String,
    /// MCG_STATUS of it.
    pub mcg_status: String,
    /// The qemu id of the PCIe port the AER errors are injected on (`up1`).
    pub port: String,
    /// Its PCI address in the guest (`0000:01:00.0`).
    pub device: String,
}

/// A shared PCIe link the probe must find (`io.pcie_paths[].shared`) and qualify's
/// `io.pcie_uplink` must warn about.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectSharedLink {
    /// The function whose link it is (a switch's upstream port), e.g. `0000:01:00.0`.
    pub device: String,
    /// The endpoints behind it, in address order.
    pub endpoints: Vec<String>,
    /// The link: `Gen1 x1`.
    pub link: String,
    /// Sum of the endpoints' maximum bandwidths over the link's: 4.0 for four x1 drives on an
    /// x1 uplink.
    pub oversubscription: f64,
}

/// Facts of one NUMA node.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectNode {
    /// Node id.
    pub node: u32,
    /// Online CPUs of the node (`nodeN/cpulist`).
    pub cpus: String,
    /// Huge pages reserved on this node, by page size in bytes.
    #[serde(default)]
    pub hugepages: BTreeMap<u64, u64>,
}

//! The built-in rules, split by domain (CPU, memory, NUMA, pages, I/O, binary and OS, and
//! what the hardware watch saw during a run). Each is
//! a pure function of [`crate::Facts`] and its [`crate::Params`]; an empty result means "pass"
//! (the engine then writes the rule's explanation as the pass line).

use crate::{ParamDef, ParamKind, RuleDef, RuleKind};
use cpu::GOVERNORS;

/// Returns the known value or, from the enclosing rule, a not-evaluated finding.
macro_rules! need {
    ($probed:expr, $id:expr) => {
        match &$probed {
            Probed::Known(v) => v,
            Probed::Unknown(why) => return vec![Finding::not_evaluated($id, why)],
        }
    };
}

mod cpu;
mod interleave;
mod io;
mod memory;
mod numa;
mod os;
mod pages;
mod watch;

pub use cpu::{cpu_allowed, cpu_governor, cpu_isolation, cpu_online, cpu_quota, cpu_smt};
pub use interleave::memory_interleave;
pub use io::{io_pcie_link, io_pcie_uplink, pcie_gen, pcie_lane_bytes_per_s};
pub use memory::{
    channel_token, memory_balance, memory_channels, memory_edac, memory_mixed, memory_speed,
    memory_triad_share, socket_token,
};
pub use numa::numa_nodes;
pub use os::{binary_arch, clock_source, elf_machine_name, os_kernel_min};
pub use pages::{pages_hugetlb, pages_sizes, pages_thp};
pub use watch::{thousands, watch_corrected, watch_errors, watch_link, watch_throttle};

/// All built-in rules.
pub static ALL: &[RuleDef] = &[
    RuleDef {
        id: "cpu.online",
        kind: RuleKind::Machine,
        explanation: "every possible CPU is present and online",
        params: &[],
        check: cpu_online,
    },
    RuleDef {
        id: "cpu.allowed",
        kind: RuleKind::Machine,
        explanation: "this process may run on every online CPU (no cpuset limit)",
        params: &[],
        check: cpu_allowed,
    },
    RuleDef {
        id: "cpu.quota",
        kind: RuleKind::Machine,
        explanation: "no cgroup CPU quota below the CPUs this process may use",
        params: &[],
        check: cpu_quota,
    },
    RuleDef {
        id: "cpu.smt",
        kind: RuleKind::Machine,
        explanation: "SMT state matches the expectation",
        params: &[ParamDef {
            name: "expect",
            kind: ParamKind::Choice(&["any", "on", "off"]),
            default: "\"any\"",
            doc: "SMT state expected: \"on\", \"off\", or \"any\" (only reported)",
        }],
        check: cpu_smt,
    },
    RuleDef {
        id: "cpu.governor",
        kind: RuleKind::Machine,
        explanation: "every online CPU runs the expected cpufreq governor",
        params: &[ParamDef {
            name: "expect",
            kind: ParamKind::Choice(GOVERNORS),
            default: "\"performance\"",
            doc: "cpufreq governor every CPU should run",
        }],
        check: cpu_governor,
    },
    RuleDef {
        id: "cpu.isolation",
        kind: RuleKind::Machine,
        explanation: "no CPUs are isolated from the scheduler (isolcpus, nohz_full, rcu_nocbs)",
        params: &[],
        check: cpu_isolation,
    },
    RuleDef {
        id: "memory.balance",
        kind: RuleKind::Machine,
        explanation: "DIMMs are populated alike across sockets and memory arrays",
        params: &[],
        check: memory_balance,
    },
    RuleDef {
        id: "memory.channels",
        kind: RuleKind::Machine,
        explanation: "every memory channel holds DIMMs, the same number each",
        params: &[],
        check: memory_channels,
    },
    RuleDef {
        id: "memory.mixed",
        kind: RuleKind::Machine,
        explanation: "all DIMMs have one size, speed, rank count and part number",
        params: &[ParamDef {
            name: "check_part_numbers",
            kind: ParamKind::Bool,
            default: "true",
            doc: "also warn about mixed part numbers (same size and speed, other vendor or die)",
        }],
        check: memory_mixed,
    },
    RuleDef {
        id: "memory.speed",
        kind: RuleKind::Machine,
        explanation: "every DIMM runs at its rated speed",
        params: &[],
        check: memory_speed,
    },
    RuleDef {
        id: "memory.interleave",
        kind: RuleKind::Machine,
        explanation: "the populated DIMMs are interleaved, across every populated channel, as SMBIOS Type 20 states",
        params: &[],
        check: memory_interleave,
    },
    RuleDef {
        id: "memory.triad_share",
        kind: RuleKind::Machine,
        explanation: "measured STREAM Triad peak reaches the set share of the theoretical peak",
        params: &[ParamDef {
            name: "min_share",
            kind: ParamKind::Float { min: 0.0, max: 1.0 },
            default: "0.6",
            doc: "smallest acceptable Triad peak / theoretical peak (0..1)",
        }],
        check: memory_triad_share,
    },
    RuleDef {
        id: "memory.edac",
        kind: RuleKind::Machine,
        explanation: "EDAC counts no memory errors",
        params: &[ParamDef {
            name: "max_ce",
            kind: ParamKind::Int {
                min: 0,
                max: 1_000_000_000,
            },
            default: "0",
            doc: "corrected errors per DIMM tolerated before a warning",
        }],
        check: memory_edac,
    },
    RuleDef {
        id: "numa.nodes",
        kind: RuleKind::Machine,
        explanation: "NUMA nodes are numbered without holes and each has CPUs and memory",
        params: &[],
        check: numa_nodes,
    },
    RuleDef {
        id: "pages.thp",
        kind: RuleKind::Precondition,
        explanation: "transparent huge pages are available when the profile measures them",
        params: &[ParamDef {
            name: "page_modes",
            kind: ParamKind::ChoiceList(&["base", "thp", "hugetlb"]),
            default: "[\"base\", \"thp\", \"hugetlb\"]",
            doc: "page modes the profile measures (a result file's own list takes precedence)",
        }],
        check: pages_thp,
    },
    RuleDef {
        id: "pages.hugetlb",
        kind: RuleKind::Precondition,
        explanation: "a hugetlb pool holds pages when the profile measures hugetlbfs",
        params: &[ParamDef {
            name: "page_modes",
            kind: ParamKind::ChoiceList(&["base", "thp", "hugetlb"]),
            default: "[\"base\", \"thp\", \"hugetlb\"]",
            doc: "page modes the profile measures (a result file's own list takes precedence)",
        }],
        check: pages_hugetlb,
    },
    RuleDef {
        id: "pages.sizes",
        kind: RuleKind::Machine,
        explanation: "at most one huge page size holds pages",
        params: &[],
        check: pages_sizes,
    },
    RuleDef {
        id: "io.pcie_link",
        kind: RuleKind::Machine,
        explanation: "every PCIe link runs at its maximum speed and width",
        params: &[],
        check: io_pcie_link,
    },
    RuleDef {
        id: "io.pcie_uplink",
        kind: RuleKind::Machine,
        explanation: "no PCIe endpoint is capped by an upstream link that is oversubscribed or below its maximum",
        params: &[],
        check: io_pcie_uplink,
    },
    RuleDef {
        id: "binary.arch",
        kind: RuleKind::Machine,
        explanation: "the binary is built for the kernel's machine and word size",
        params: &[],
        check: binary_arch,
    },
    RuleDef {
        id: "os.kernel_min",
        kind: RuleKind::Machine,
        explanation: "the kernel is at least the target's minimum version",
        params: &[ParamDef {
            name: "min_kernel",
            kind: ParamKind::VersionOr("target"),
            default: "\"target\"",
            doc: "oldest kernel release supported: \"target\" takes the binary's target descriptor's min_kernel (targets/<name>.toml), a version such as \"5.10\" overrides it",
        }],
        check: os_kernel_min,
    },
    RuleDef {
        id: "clock.source",
        kind: RuleKind::Machine,
        explanation: "the kernel times with a CPU counter (TSC, arch timer), not a device register",
        params: &[],
        check: clock_source,
    },
    RuleDef {
        id: "watch.errors",
        kind: RuleKind::Machine,
        explanation: "no uncorrected memory or PCIe error and no machine check during the run",
        params: &[],
        check: watch_errors,
    },
    RuleDef {
        id: "watch.corrected",
        kind: RuleKind::Machine,
        explanation: "no DIMM or PCIe function corrected errors above the set rate during the run",
        params: &[ParamDef {
            name: "max_per_day",
            kind: ParamKind::Float {
                min: 0.0,
                max: 1e9,
            },
            default: "10.0",
            doc: "corrected errors per DIMM or PCIe function per 24 h of run time tolerated (mcelog's ce-error-threshold, 10 / 24h)",
        }],
        check: watch_corrected,
    },
    RuleDef {
        id: "watch.link",
        kind: RuleKind::Machine,
        explanation: "no PCIe link changed its speed or width during the run",
        params: &[],
        check: watch_link,
    },
    RuleDef {
        id: "watch.throttle",
        kind: RuleKind::Machine,
        explanation: "no thermal throttling during the run, and the clock at its end within the set drop of the clock at its start",
        params: &[ParamDef {
            name: "max_clock_drop_pct",
            kind: ParamKind::Float {
                min: 0.0,
                max: 100.0,
            },
            default: "5.0",
            doc: "largest drop of the measured clock from the run's start to its end, percent",
        }],
        check: watch_throttle,
    },
];

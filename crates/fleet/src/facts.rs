//! What a fleet compares between hosts, read from a result file: the hardware identity that
//! groups hosts ([`Identity`]) and the settings and population that explain an outlier
//! ([`host_facts`]). Sources: the file's `machine` document (the probe's typed `Machine`:
//! /proc/cpuinfo, /sys/devices/system/cpu, SMBIOS Type 17, /sys/bus/pci, cgroup files) and
//! its `environment` (the run's live settings: THP, governor, hugetlb pools, kernel).

use hwsurvey_machine::Machine;
use hwsurvey_model::units::format_bytes_binary;
use hwsurvey_model::Probed;
use hwsurvey_result::ResultFile;
use serde::Serialize;

/// Bytes in a GiB (2^30).
const GIB: f64 = (1u64 << 30) as f64;

/// Relative difference of MemTotal up to which two hosts have the same memory: 2 %. Identical
/// servers differ by what the firmware and the kernel reserve (tens of MiB: 48 MiB of 23.5 GiB
/// is 0.2 %), which rounding to the GiB turned into two sizes at every half GiB; one DIMM of 32
/// missing is 3.1 %, of 8 is 12.5 %.
pub const MEMORY_TOLERANCE: f64 = 0.02;

/// Whether MemTotal `a` and `b` are the same memory size (both unknown counts as the same):
/// within [`MEMORY_TOLERANCE`] of the larger.
pub fn same_memory(a: Option<u64>, b: Option<u64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.abs_diff(b) as f64 <= MEMORY_TOLERANCE * a.max(b) as f64,
        (None, None) => true,
        _ => false,
    }
}

/// The hardware identity of a host: hosts with equal identities form a group.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Identity {
    /// Architecture the run executed as (`environment.arch`: `x86_64`, `aarch64`): a binary
    /// emulated under qemu-user measures another machine than a native one.
    pub arch: String,
    /// `model name` of /proc/cpuinfo (or the aarch64 core names), "unknown" when absent.
    pub cpu_model: String,
    /// Packages (sockets), from /sys/devices/system/cpu/cpuN/topology of the online CPUs;
    /// `None` when unknown. A lower bound when [`Identity::cpus_offline`] > 0 (an offline
    /// CPU has no topology folder).
    pub sockets: Option<u32>,
    /// Physical cores, all packages, among the online CPUs (a lower bound as `sockets`).
    pub cores: Option<u32>,
    /// Hardware threads (logical CPUs) present: the size of `/sys/devices/system/cpu/present`,
    /// online or not (without that file, the online threads). A lemon with CPUs offline
    /// (`maxcpus=`, a CPU taken offline) has as many as its siblings.
    pub threads: Option<u32>,
    /// Present CPUs that are not online (`cpu/present` minus `cpu/online`; 0 when either is
    /// unknown): when > 0, `sockets` and `cores` count only the online CPUs, and the host
    /// joins the group of an identity it can be a part of ([`Identity::joins`]).
    pub cpus_offline: u32,
    /// MemTotal of /proc/meminfo (bytes); `None` when unreadable. Two identities have the same
    /// memory when they are within [`MEMORY_TOLERANCE`] of each other ([`same_memory`]).
    pub memory_bytes: Option<u64>,
    /// DIMM population (`8 x 32 GiB`) from SMBIOS Type 17, where the firmware gives it.
    pub dimms: Option<String>,
    /// System vendor (SMBIOS Type 1 / DMI `sys_vendor`) and processor versions (Type 4),
    /// where DMI gives them.
    pub board: Option<String>,
}

impl std::fmt::Display for Identity {
    /// `x86_64, AMD EPYC, 1 socket x 2 cores x 1 thread, 24 GiB, DIMMs not given, board
    /// not given`: the CPUs as the compare report's machine line writes them
    /// ([`hwsurvey_model::units::sockets_cores_threads`]), what is unknown said in words.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cpus = match (self.sockets, self.cores, self.threads) {
            (Some(p), Some(c), Some(t)) => hwsurvey_model::units::sockets_cores_threads(
                u64::from(p),
                u64::from(c),
                u64::from(t),
                " x ",
            ),
            _ => [
                ("sockets", self.sockets),
                ("cores", self.cores),
                ("threads", self.threads),
            ]
            .iter()
            .map(|(what, n)| match n {
                Some(n) => format!("{n} {what}"),
                None => format!("{what} unknown"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        };
        write!(
            f,
            "{}, {}, {cpus}, {}, DIMMs {}, board {}",
            self.arch,
            self.cpu_model,
            self.memory_bytes
                .map(|b| format!("{} GiB", (b as f64 / GIB).round()))
                .unwrap_or_else(|| "memory size unknown".into()),
            self.dimms.as_deref().unwrap_or("not given"),
            self.board.as_deref().unwrap_or("not given")
        )?;
        if self.cpus_offline > 0 {
            write!(
                f,
                ", {} offline (sockets and cores count the online ones)",
                hwsurvey_model::units::plural(u64::from(self.cpus_offline), "present CPU")
            )?;
        }
        Ok(())
    }
}

impl Identity {
    /// Whether this identity differs from `group`'s only by its memory (MemTotal and the DIMM
    /// population): same architecture, CPU model, sockets, cores, threads, offline CPUs and
    /// board. A lemon with half its memory, or a DIMM missing, is such a host: grouped by its
    /// own identity it would be a group of one, never judged (see [`crate::MIN_GROUP_HOSTS`]),
    /// so a group too small to be judged that differs only so from a judged, larger group
    /// joins it, and its memory is named as the cause (facts `memory size`, `DIMMs`).
    ///
    /// Only less memory counts, and only a known size: a host with more memory than its
    /// siblings is no lemon, and one whose memory is unknown cannot be said to lack any.
    pub fn differs_only_in_memory(&self, group: &Identity) -> bool {
        let less = matches!(
            (self.memory_bytes, group.memory_bytes),
            (Some(a), Some(b)) if a < b && !same_memory(Some(a), Some(b))
        );
        less && self.same_part(group) && self.same_cpus(group)
    }

    /// Same sockets, cores and offline CPUs.
    fn same_cpus(&self, other: &Identity) -> bool {
        self.sockets == other.sockets
            && self.cores == other.cores
            && self.cpus_offline == other.cpus_offline
    }

    /// Same architecture, CPU model, present threads and board: the part number of the server,
    /// which the lemons of [`Identity::joins`] and [`Identity::differs_only_in_memory`] share
    /// with their group.
    fn same_part(&self, other: &Identity) -> bool {
        self.arch == other.arch
            && self.cpu_model == other.cpu_model
            && self.threads == other.threads
            && self.board == other.board
    }

    /// Whether a host of this identity belongs to the group of `group`: equal identities (the
    /// memory within [`MEMORY_TOLERANCE`]), or this host has present CPUs offline and `group` (with none offline) has the same
    /// architecture, CPU model, present threads, memory, DIMMs and board, and at least this
    /// host's sockets and cores (which count only its online CPUs). A lemon with two CPUs
    /// offline is compared with its siblings, and its offline CPUs are named as the cause.
    pub fn joins(&self, group: &Identity) -> bool {
        let at_most = |mine: Option<u32>, theirs: Option<u32>| match (mine, theirs) {
            (Some(a), Some(b)) => a <= b,
            (None, None) => true,
            _ => false,
        };
        let offline_lemon = self.cpus_offline > 0
            && group.cpus_offline == 0
            && at_most(self.sockets, group.sockets)
            && at_most(self.cores, group.cores);
        self.same_part(group)
            && same_memory(self.memory_bytes, group.memory_bytes)
            && self.dimms == group.dimms
            && (self.same_cpus(group) || offline_lemon)
    }
}

/// The `memory size` fact of MemTotal `bytes`: `23.5 GiB`. A group's members within
/// [`MEMORY_TOLERANCE`] of its median are given the median's (see `group_hosts`), so that
/// identical hosts a few MiB apart do not differ in it.
pub fn memory_size(bytes: u64) -> String {
    format_bytes_binary(bytes)
}

/// The `clocksource` fact: the clocksource the run started on (`tsc-early` read as `tsc`, the
/// same counter), and the last one it changed to during the run, if it did; from the file's
/// `load_before.clocksource` and `clocksource_changes`, else the machine document's.
fn clocksource_fact(file: &ResultFile, m: &Machine) -> String {
    let start = file
        .load_before
        .clocksource
        .known()
        .cloned()
        .or_else(|| m.os.clocksource.known().map(|c| c.current.clone()));
    let Some(start) = start else {
        return "unknown".into();
    };
    use hwsurvey_machine::clocksource::counter;
    match file.clocksource_changes.last() {
        Some(c) => format!(
            "{}, changed to {} during the run",
            counter(&start),
            counter(&c.to)
        ),
        None => counter(&start).to_string(),
    }
}

/// `8 x 32 GiB` (one entry per distinct size, largest first) of the populated slots; `None`
/// when SMBIOS is unknown or lists no populated slot.
fn dimm_population(m: &Machine) -> Option<String> {
    let s = m.memory.smbios.known()?;
    let mut sizes: Vec<Option<u64>> = s
        .devices
        .iter()
        .filter(|d| d.size.is_populated())
        .map(|d| d.size.size_bytes())
        .collect();
    if sizes.is_empty() {
        return None;
    }
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sizes.len() {
        let j = sizes[i..].iter().take_while(|s| **s == sizes[i]).count();
        let size = sizes[i]
            .map(format_bytes_binary)
            .unwrap_or_else(|| "size unknown".into());
        parts.push(format!("{j} x {size}"));
        i += j;
    }
    Some(parts.join(" + "))
}

/// The identity of the host of `file`, from its machine ([`ResultFile::machine`]) and
/// `environment.arch`.
pub fn identity(file: &ResultFile) -> Identity {
    let m = &file.machine;
    let topo = &m.cpu.topology;
    let board = m.memory.smbios.known().and_then(|s| {
        let mut words: Vec<String> = s.system_vendor.iter().cloned().collect();
        let mut procs = s.processors.clone();
        procs.dedup();
        words.extend(procs);
        (!words.is_empty()).then(|| words.join(" / "))
    });
    Identity {
        arch: file.environment.arch.clone(),
        cpu_model: m
            .cpu
            .identity
            .model_name
            .clone()
            .unwrap_or_else(|| "CPU model unknown".into()),
        sockets: topo.packages.known().copied(),
        cores: topo.cores.known().copied(),
        threads: m
            .cpu
            .present
            .known()
            .map(|p| p.len() as u32)
            .or_else(|| topo.threads.known().copied()),
        cpus_offline: match (m.cpu.present.known(), m.cpu.online.known()) {
            (Some(p), Some(o)) => p.difference(o).len() as u32,
            _ => 0,
        },
        memory_bytes: m.memory.meminfo.known().map(|mi| mi.mem_total_bytes),
        dimms: dimm_population(m),
        board,
    }
}

fn probed<T: std::fmt::Display>(p: &Probed<T>) -> String {
    match p {
        Probed::Known(v) => v.to_string(),
        Probed::Unknown(_) => "unknown".into(),
    }
}

/// The names of the facts of [`host_facts`], in its order.
pub const FACT_NAMES: [&str; 18] = [
    "memory size",
    "DIMMs",
    "DIMM speed",
    "memory channels",
    "PCIe links below max",
    "THP",
    "governor",
    "kernel",
    "CPUs online",
    "cgroup CPU quota",
    "cgroup memory limit",
    "cgroup cpuset",
    "hugetlb pools",
    "SMT",
    "numa_balancing",
    "clocksource",
    "BIOS",
    "microcode",
];

/// Facts of [`host_facts`] that explain a flagged host but never flag one by themselves: the
/// kernel release differs whenever a fleet is half-way through an update, and says nothing by
/// itself of what the hardware delivers. Every other fact is part of the host's
/// *configuration* (CPUs online, memory size, DIMMs, their speed and channels, PCIe links, THP, governor,
/// cgroup limits, hugetlb pools, SMT, numa_balancing, clocksource, BIOS, microcode): a host whose configuration differs from
/// its group's majority stands out with that cause, even when none of its figures is outside
/// the group's spread ([`crate::causes`], [`is_configuration`]).
pub const CONTEXT_ONLY_FACTS: [&str; 1] = ["kernel"];

/// Whether the fact `name` of [`host_facts`] is configuration: a difference from the group's
/// majority flags the host by itself (every fact but [`CONTEXT_ONLY_FACTS`]).
pub fn is_configuration(name: &str) -> bool {
    !CONTEXT_ONLY_FACTS.contains(&name)
}

/// The settings and population of a host that can explain a figure, `(name, value)` in a
/// fixed order; a fact the host's files do not give is `"unknown"` (absent is not a
/// difference worth naming, see [`crate::causes`]).
///
/// Names: `memory size` (MemTotal of /proc/meminfo, rounded to the GiB as in [`Identity`]),
/// `DIMMs` (count and sizes), `DIMM speed` (configured MT/s), `memory channels`
/// (populated), `PCIe links below max` (device, current vs max speed and width), `THP`,
/// `governor`, `kernel`, `CPUs online` (online vs present), `cgroup CPU quota`,
/// `cgroup memory limit`, `cgroup cpuset`, `hugetlb pools`, `SMT`, `numa_balancing`,
/// `clocksource` (the one the run started on, and what the kernel changed it to during it),
/// `BIOS` (SMBIOS Type 0 vendor, version and release date: [`hwsurvey_machine::firmware`]),
/// `microcode` (the CPUs' revision from /proc/cpuinfo, x86 only; each revision with its CPUs
/// when they differ).
pub fn host_facts(file: &ResultFile) -> Vec<(&'static str, String)> {
    let m = &file.machine;
    let env = &file.environment;
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let pop = m.memory.population.known();
    out.push((
        "memory size",
        m.memory
            .meminfo
            .known()
            .map(|mi| memory_size(mi.mem_total_bytes))
            .unwrap_or_else(|| "unknown".into()),
    ));
    out.push((
        "DIMMs",
        dimm_population(m).unwrap_or_else(|| "unknown".into()),
    ));
    out.push((
        "DIMM speed",
        pop.filter(|p| !p.configured_speeds_mt_per_s.is_empty())
            .map(|p| {
                p.configured_speeds_mt_per_s
                    .iter()
                    .map(|s| format!("{s} MT/s"))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_else(|| "unknown".into()),
    ));
    out.push((
        "memory channels",
        pop.and_then(|p| p.peak_bandwidth.known())
            .map(|b| format!("{} populated", b.populated_channels))
            .unwrap_or_else(|| "unknown".into()),
    ));
    out.push((
        "PCIe links below max",
        match m.io.pci.known() {
            None => "unknown".into(),
            Some(devs) => {
                let below: Vec<String> = devs
                    .iter()
                    .filter_map(|d| {
                        let l = d.link.as_ref()?;
                        if l.below_max_speed != Some(true) && l.below_max_width != Some(true) {
                            return None;
                        }
                        let speed = |s: &Probed<hwsurvey_machine::io::LinkSpeed>| {
                            s.known()
                                .map(|s| format!("Gen{}", s.generation))
                                .unwrap_or_else(|| "Gen?".into())
                        };
                        let width = |w: &Probed<u32>| {
                            w.known()
                                .map(|w| format!("x{w}"))
                                .unwrap_or_else(|| "x?".into())
                        };
                        Some(format!(
                            "{} {} {} of {} {}",
                            d.address,
                            speed(&l.current_speed),
                            width(&l.current_width_lanes),
                            speed(&l.max_speed),
                            width(&l.max_width_lanes)
                        ))
                    })
                    .collect();
                if below.is_empty() {
                    "none".into()
                } else {
                    below.join("; ")
                }
            }
        },
    ));
    out.push(("THP", probed(&env.thp_enabled)));
    out.push(("governor", probed(&env.governor)));
    out.push(("kernel", probed(&env.kernel_release)));
    out.push((
        "CPUs online",
        match (m.cpu.online.known(), m.cpu.present.known()) {
            (Some(on), Some(pr)) if on == pr => format!("all {} present", pr.len()),
            (Some(on), Some(pr)) => format!(
                "{} of {} present (online {on}, present {pr})",
                on.len(),
                pr.len()
            ),
            _ => "unknown".into(),
        },
    ));
    let cg = m.os.cgroup.known();
    out.push((
        "cgroup CPU quota",
        cg.and_then(|c| c.cpu_max.known())
            .map(|q| match q.quota_us {
                None => "none".to_string(),
                Some(us) => format!(
                    "{} CPUs",
                    hwsurvey_model::units::format_cpus(us as f64 / q.period_us.max(1) as f64)
                ),
            })
            .unwrap_or_else(|| "unknown".into()),
    ));
    out.push((
        "cgroup memory limit",
        cg.and_then(|c| c.memory_max_bytes.known())
            .map(|l| match l {
                None => "none".to_string(),
                Some(b) => format_bytes_binary(*b),
            })
            .unwrap_or_else(|| "unknown".into()),
    ));
    out.push((
        "cgroup cpuset",
        cg.and_then(|c| c.cpuset_cpus.known())
            .map(|s| s.to_string())
            .unwrap_or_else(|| "unknown".into()),
    ));
    out.push((
        "hugetlb pools",
        if env.huge_pools.is_empty() {
            "none".into()
        } else {
            env.huge_pools
                .iter()
                .map(|p| {
                    format!(
                        "{} x {}",
                        probed(&p.total_pages),
                        format_bytes_binary(p.page_size_bytes)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        },
    ));
    // the probe's fact, as qualify's cpu.smt reads it (the environment's copy of it was read
    // apart before 2026-12-05 and could disagree)
    out.push(("SMT", probed(&m.os.smt.clone().map(|s| s.control))));
    out.push(("numa_balancing", probed(&env.numa_balancing)));
    out.push(("clocksource", clocksource_fact(file, m)));
    out.push((
        "BIOS",
        m.firmware
            .known()
            .and_then(|d| d.bios())
            .unwrap_or_else(|| "unknown".into()),
    ));
    out.push((
        "microcode",
        m.cpu
            .identity
            .microcode
            .known()
            .map(|r| hwsurvey_machine::firmware::microcode_revisions(r))
            .unwrap_or_else(|| "unknown".into()),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`FACT_NAMES`] are the names [`host_facts`] gives, in its order; the facts that are not
    /// configuration are among them.
    #[test]
    fn fact_names_are_host_facts_names() {
        let file = hwsurvey_testkit::fleet_sample::example("x86_64-standard.json");
        let names: Vec<&str> = host_facts(&file).iter().map(|(n, _)| *n).collect();
        assert_eq!(names, FACT_NAMES);
        assert!(CONTEXT_ONLY_FACTS.iter().all(|f| FACT_NAMES.contains(f)));
        assert!(!is_configuration("kernel"));
        assert!(is_configuration("CPUs online") && is_configuration("THP"));
    }
}

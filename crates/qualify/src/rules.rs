//! The built-in rules. Each is a pure function of [`Facts`] and its [`Params`]; an empty
//! result means "pass" (the engine then writes the rule's explanation as the pass line).

use std::collections::BTreeMap;

use hwsurvey_model::units::{format_bytes_binary, format_rate_decimal};
use hwsurvey_model::{CpuSet, Probed};

use crate::config::parse_version;
use crate::facts::{DimmFacts, Facts};
use crate::{Finding, ParamDef, ParamKind, Params, RuleDef, RuleKind, Verdict};

/// Returns the known value or, from the enclosing rule, a not-evaluated finding.
macro_rules! need {
    ($probed:expr, $id:expr) => {
        match &$probed {
            Probed::Known(v) => v,
            Probed::Unknown(why) => return vec![Finding::not_evaluated($id, why)],
        }
    };
}

const GOVERNORS: &[&str] = &[
    "performance",
    "schedutil",
    "ondemand",
    "conservative",
    "powersave",
    "userspace",
];

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
];

fn list(set: &CpuSet) -> String {
    set.to_list_string()
}

// ---------------------------------------------------------------- CPUs

/// `cpu.online`: online < present is a failure; possible CPUs the kernel registered a device
/// for (a `cpuN` folder) but that are not present are a failure too (the hardware thread
/// exists, the kernel does not use it: UltraSPARC T1 sees 24 of 32); possible CPUs without a
/// folder are hot-plug slots the firmware reserves (informational).
pub fn cpu_online(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "cpu.online";
    let online = need!(f.cpu.online, ID);
    let present = need!(f.cpu.present, ID);
    let mut out = Vec::new();
    let possible = f.cpu.possible.known();
    let offline_present = present.difference(online);
    if !offline_present.is_empty() {
        out.push(
            Finding::new(
                ID,
                Verdict::Fail,
                format!(
                    "{} of {} present CPUs online; offline: {}",
                    online.len(),
                    present.len(),
                    list(&offline_present)
                ),
            )
            .with("/sys/devices/system/cpu/present", list(present))
            .with("/sys/devices/system/cpu/online", list(online))
            .fix("bring them online (echo 1 > /sys/devices/system/cpu/cpuN/online) and check maxcpus=/nr_cpus= on the kernel command line"),
        );
    }
    if let Some(possible) = possible {
        let not_present = possible.difference(present);
        if !not_present.is_empty() {
            match f.cpu.registered.known() {
                Some(registered) => {
                    let dormant = not_present.intersection(registered);
                    let slots = not_present.difference(registered);
                    if !dormant.is_empty() {
                        out.push(
                            Finding::new(
                                ID,
                                Verdict::Fail,
                                format!(
                                    "{} of {} possible CPUs online: CPUs {} have CPU folders but are not present",
                                    online.len(),
                                    possible.len(),
                                    list(&dormant)
                                ),
                            )
                            .with("/sys/devices/system/cpu/possible", list(possible))
                            .with("/sys/devices/system/cpu/present", list(present))
                            .with("/sys/devices/system/cpu/online", list(online))
                            .with("/sys/devices/system/cpu/cpuN folders", list(registered))
                            .fix("the firmware or hypervisor gives the kernel fewer threads than the chip has: check the CPU assignment (LDom/LPAR/BIOS core disable) and the kernel's NR_CPUS/possible_cpus="),
                        );
                    }
                    if !slots.is_empty() {
                        out.push(
                            Finding::new(
                                ID,
                                Verdict::Info,
                                format!(
                                    "{} possible CPUs not present ({}): hot-plug slots the firmware reserves, no CPU folders",
                                    slots.len(),
                                    list(&slots)
                                ),
                            )
                            .with("/sys/devices/system/cpu/possible", list(possible))
                            .with("/sys/devices/system/cpu/present", list(present))
                            .fix("nothing to do unless CPUs are physically missing"),
                        );
                    }
                }
                None => out.push(
                    Finding::new(
                        ID,
                        Verdict::Info,
                        format!(
                            "{} of {} possible CPUs present ({} not present); cannot tell hot-plug slots from dormant threads without the cpuN folders",
                            present.len(),
                            possible.len(),
                            list(&not_present)
                        ),
                    )
                    .with("/sys/devices/system/cpu/possible", list(possible))
                    .with("/sys/devices/system/cpu/present", list(present)),
                ),
            }
        }
    }
    out
}

/// `cpu.allowed`: the process's CPU affinity (cpuset, taskset, container) covers every online CPU.
pub fn cpu_allowed(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "cpu.allowed";
    let online = need!(f.cpu.online, ID);
    let allowed = need!(f.cpu.allowed, ID);
    let usable = allowed.intersection(online);
    if usable.len() < online.len() {
        return vec![Finding::new(
            ID,
            Verdict::Warn,
            format!(
                "this process may use {} of {} online CPUs ({})",
                usable.len(),
                online.len(),
                list(allowed)
            ),
        )
        .with("/proc/self/status Cpus_allowed_list", list(allowed))
        .with("/sys/devices/system/cpu/online", list(online))
        .fix("run outside the cpuset or widen it (taskset, systemd AllowedCPUs=, docker --cpuset-cpus)")];
    }
    vec![]
}

/// `cpu.smt`: SMT state from `smt/control`, else from threads per core.
pub fn cpu_smt(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "cpu.smt";
    let expect = p.str("expect").unwrap_or("any");
    if let Probed::Known(c) = &f.cpu.smt_control {
        if c == "notsupported" {
            // the CPU has no SMT: neither "on" nor "off"
            let evidence = ("/sys/devices/system/cpu/smt/control", c.clone());
            return match expect {
                "on" => vec![Finding::new(
                    ID,
                    Verdict::Warn,
                    "SMT not supported by this CPU (or the hypervisor hides it), the rules expect on",
                )
                .with(evidence.0, evidence.1)
                .fix("nothing to switch: use a CPU (or VM type) with SMT, or set expect = \"any\"")],
                _ => vec![Finding::new(
                    ID,
                    Verdict::Info,
                    "SMT not supported by this CPU (or the hypervisor hides it)",
                )
                .with(evidence.0, evidence.1)],
            };
        }
    }
    let (active, evidence) = match (&f.cpu.smt_control, &f.cpu.threads_per_core) {
        (Probed::Known(c), _) if ["on", "off", "forceoff"].contains(&c.as_str()) => (
            c == "on",
            ("/sys/devices/system/cpu/smt/control".to_string(), c.clone()),
        ),
        (_, Probed::Known(t)) => (
            *t > 1,
            (
                "threads per core (thread_siblings_list)".to_string(),
                t.to_string(),
            ),
        ),
        (Probed::Known(c), Probed::Unknown(why)) => {
            return vec![Finding::not_evaluated(
                ID,
                format!("smt/control says {c:?} and threads per core unknown: {why}"),
            )]
        }
        (Probed::Unknown(why), Probed::Unknown(_)) => return vec![Finding::not_evaluated(ID, why)],
    };
    let state = if active { "on" } else { "off" };
    match expect {
        "any" => vec![Finding::new(ID, Verdict::Info, format!("SMT is {state}"))
            .with(evidence.0, evidence.1)],
        want if want == state => vec![],
        want => vec![Finding::new(
            ID,
            Verdict::Warn,
            format!("SMT is {state}, the rules expect {want}"),
        )
        .with(evidence.0, evidence.1)
        .fix(format!(
            "echo {want} > /sys/devices/system/cpu/smt/control, or set SMT/Hyper-Threading in the firmware"
        ))],
    }
}

/// `cpu.governor`: CPUs whose governor differs from the expected one.
pub fn cpu_governor(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "cpu.governor";
    let expect = p.str("expect").unwrap_or("performance");
    let govs = need!(f.cpu.governors, ID);
    if govs.is_empty() {
        return vec![Finding::not_evaluated(
            ID,
            "no cpufreq governor (no cpufreq driver loaded, firmware-controlled, or a VM)",
        )];
    }
    let mut by: BTreeMap<&str, CpuSet> = BTreeMap::new();
    for (cpu, g) in govs {
        by.entry(g.as_str()).or_default().insert(*cpu);
    }
    let others: Vec<String> = by
        .iter()
        .filter(|(g, _)| **g != expect)
        .map(|(g, set)| format!("{g} on {} CPUs ({})", set.len(), list(set)))
        .collect();
    if others.is_empty() {
        return vec![];
    }
    let mut finding = Finding::new(
        ID,
        Verdict::Warn,
        format!("governor not {expect}: {}", others.join("; ")),
    )
    .fix(format!(
        "cpupower frequency-set -g {expect} (or the firmware's power profile set to performance)"
    ));
    for (g, set) in &by {
        finding = finding.with(
            "/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor",
            format!("{g}: {}", list(set)),
        );
    }
    vec![finding]
}

/// Values of `key=` parameters on a kernel command line.
fn cmdline_params<'a>(cmdline: &'a str, keys: &[&str]) -> Vec<(&'a str, &'a str)> {
    cmdline
        .split_whitespace()
        .filter_map(|w| w.split_once('='))
        .filter(|(k, _)| keys.contains(k))
        .collect()
}

/// `cpu.isolation`: isolcpus / nohz_full / rcu_nocbs on the kernel command line (informational).
pub fn cpu_isolation(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "cpu.isolation";
    let cmdline = need!(f.os.cmdline, ID);
    let found = cmdline_params(cmdline, &["isolcpus", "nohz_full", "rcu_nocbs"]);
    if found.is_empty() {
        return vec![];
    }
    let words: Vec<String> = found.iter().map(|(k, v)| format!("{k}={v}")).collect();
    vec![Finding::new(
        ID,
        Verdict::Info,
        format!(
            "CPU isolation on the command line: {} (the scheduler does not balance onto these CPUs)",
            words.join(" ")
        ),
    )
    .with("/proc/cmdline", cmdline.trim())
    .fix("pin benchmark threads explicitly, or drop these parameters when the whole machine is measured")]
}

// ---------------------------------------------------------------- memory

fn dimm_slots<'a>(f: &'a Facts, id: &str) -> Result<&'a [DimmFacts], Finding> {
    match &f.memory.dimms {
        Probed::Known(d) if d.is_empty() => Err(Finding::not_evaluated(
            id,
            "no SMBIOS Type 17 memory devices (firmware lists none)",
        )),
        Probed::Known(d) => Ok(d),
        Probed::Unknown(why) => Err(Finding::not_evaluated(id, why)),
    }
}

/// A socket named in a locator (`P0`, `CPU1`, `NODE 0`, `SOCKET 1`, `PROC 2`, `N1`), upper-cased.
pub fn socket_token(text: &str) -> Option<String> {
    let upper = text.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        for prefix in ["CPU", "SOCKET", "PROC", "NODE", "P", "N"] {
            if let Some(rest) = w.strip_prefix(prefix) {
                if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
                    return Some(format!("{prefix}{rest}"));
                }
                // "NODE 0", "CPU 1": the number is the next word
                if rest.is_empty() && prefix.len() > 1 {
                    if let Some(n) = words.get(i + 1) {
                        if n.bytes().all(|b| b.is_ascii_digit()) {
                            return Some(format!("{prefix}{n}"));
                        }
                    }
                }
            }
        }
    }
    None
}

/// A channel named in a locator (`CHANNEL 1`, `CH A`, `_CHB_`), upper-cased.
pub fn channel_token(text: &str) -> Option<String> {
    let upper = text.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        if *w == "CHANNEL" || *w == "CH" {
            if let Some(n) = words.get(i + 1) {
                return Some(n.to_string());
            }
        }
        if let Some(rest) = w.strip_prefix("CHANNEL").or_else(|| w.strip_prefix("CH")) {
            if !rest.is_empty() && rest.len() <= 2 {
                return Some(rest.to_string());
            }
        }
    }
    None
}

/// How slots group into sockets: from a socket word in the locators, else from a single
/// leading letter (`A1`..`B12` as Dell writes them), else one group.
fn socket_groups(dimms: &[DimmFacts]) -> (String, Vec<(String, Vec<&DimmFacts>)>) {
    // The probe's placement first, so that qualify and `hwsurvey probe` group alike.
    if dimms.iter().all(|d| d.socket.is_some()) {
        let mut groups: BTreeMap<String, Vec<&DimmFacts>> = BTreeMap::new();
        for d in dimms {
            groups
                .entry(d.socket.clone().unwrap_or_default())
                .or_default()
                .push(d);
        }
        return (
            "socket as the probe places each slot (Locator / Bank Locator)".to_string(),
            groups.into_iter().collect(),
        );
    }
    let by_token: Vec<Option<String>> = dimms
        .iter()
        .map(|d| {
            d.bank_locator
                .as_deref()
                .and_then(socket_token)
                .or_else(|| socket_token(&d.locator))
        })
        .collect();
    let mut groups: BTreeMap<String, Vec<&DimmFacts>> = BTreeMap::new();
    let how;
    if by_token.iter().all(|t| t.is_some()) {
        for (d, t) in dimms.iter().zip(by_token) {
            groups.entry(t.unwrap_or_default()).or_default().push(d);
        }
        how = "socket named in the Locator/Bank Locator".to_string();
    } else if dimms.iter().all(|d| letter_prefix(&d.locator).is_some()) {
        for d in dimms {
            groups
                .entry(letter_prefix(&d.locator).unwrap_or_default())
                .or_default()
                .push(d);
        }
        how = "slot group = the Locator's letter".to_string();
    } else {
        groups.insert("all".into(), dimms.iter().collect());
        how = "one group (the locators name no socket)".to_string();
    }
    (how, groups.into_iter().collect())
}

/// `A12` -> `A`; anything else -> None.
fn letter_prefix(locator: &str) -> Option<String> {
    let l = locator.trim();
    let mut chars = l.chars();
    let first = chars.next()?;
    let rest: String = chars.collect();
    (first.is_ascii_alphabetic() && !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        .then(|| first.to_ascii_uppercase().to_string())
}

fn populated<'a>(slots: &[&'a DimmFacts]) -> Vec<&'a DimmFacts> {
    slots.iter().copied().filter(|d| d.populated).collect()
}

fn group_line(name: &str, slots: &[&DimmFacts]) -> String {
    let pop = populated(slots);
    let total: u64 = pop.iter().filter_map(|d| d.size_bytes).sum();
    let empty: Vec<&str> = slots
        .iter()
        .filter(|d| !d.populated)
        .map(|d| d.locator.as_str())
        .collect();
    let unknown_size = pop.iter().filter(|d| d.size_bytes.is_none()).count();
    format!(
        "{name}: {} of {} slots, {}{}{}",
        pop.len(),
        slots.len(),
        format_bytes_binary(total),
        if unknown_size > 0 {
            format!(
                " + {} of unknown size",
                hwsurvey_model::units::plural(unknown_size as u64, "module")
            )
        } else {
            String::new()
        },
        if empty.is_empty() {
            String::new()
        } else {
            format!(", empty {}", empty.join(" "))
        }
    )
}

/// The per-group signature compared for balance: populated count and total size.
fn signature(slots: &[&DimmFacts]) -> (usize, u64) {
    let pop = populated(slots);
    (pop.len(), pop.iter().filter_map(|d| d.size_bytes).sum())
}

/// `memory.balance`: groups slots by socket, then by memory array, and compares populated
/// count and capacity. Says when the locators do not map slots to channels.
pub fn memory_balance(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "memory.balance";
    let dimms = match dimm_slots(f, ID) {
        Ok(d) => d,
        Err(e) => return vec![e],
    };
    if !dimms.iter().any(|d| d.populated) {
        // no module anywhere is not "populated alike"
        return vec![Finding::not_evaluated(
            ID,
            format!("none of {} DIMM slots listed holds a module", dimms.len()),
        )];
    }
    let (how, groups) = socket_groups(dimms);
    let mut uneven = Vec::new();
    let mut evidence = Vec::new();
    let sigs: Vec<(usize, u64)> = groups.iter().map(|(_, s)| signature(s)).collect();
    if sigs.windows(2).any(|w| w[0] != w[1]) {
        uneven.push("across sockets".to_string());
    }
    for (name, slots) in &groups {
        evidence.push(group_line(name, slots));
        let mut arrays: BTreeMap<&str, Vec<&DimmFacts>> = BTreeMap::new();
        for d in slots {
            arrays
                .entry(d.array_handle.as_deref().unwrap_or("?"))
                .or_default()
                .push(d);
        }
        if arrays.len() > 1 {
            let sigs: Vec<(usize, u64)> = arrays.values().map(|s| signature(s)).collect();
            for (a, s) in &arrays {
                evidence.push(group_line(&format!("{name} array {a}"), s));
            }
            if sigs.windows(2).any(|w| w[0] != w[1]) {
                uneven.push(format!("within {name} (between its memory arrays)"));
            }
        }
    }
    let channels_known = dimms.iter().any(|d| {
        channel_token(&d.locator).is_some()
            || d.bank_locator.as_deref().and_then(channel_token).is_some()
    });
    let channel_note = if channels_known {
        ""
    } else {
        "; the per-channel mapping is not in these locators (SMBIOS Type 17 Locator / Bank Locator), so channel balance is not checked"
    };
    let mut finding = if uneven.is_empty() {
        Finding::new(
            ID,
            Verdict::Pass,
            format!(
                "populated alike over {} ({how}){channel_note}",
                hwsurvey_model::units::plural(groups.len() as u64, "group")
            ),
        )
    } else {
        Finding::new(
            ID,
            Verdict::Warn,
            format!("DIMMs populated unevenly {}{channel_note}", uneven.join(" and ")),
        )
        .fix("populate every socket (and every memory array of a socket) with the same DIMMs in the same slots, as the board manual's population table shows")
    };
    for e in evidence {
        finding = finding.with("SMBIOS Type 17", e);
    }
    vec![finding]
}

/// `memory.channels`: channels without DIMMs or with unequal DIMM counts, where the locators
/// name channels; otherwise not evaluated, with the reason.
pub fn memory_channels(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "memory.channels";
    let dimms = match dimm_slots(f, ID) {
        Ok(d) => d,
        Err(e) => return vec![e],
    };
    let mut channels: BTreeMap<(String, String), Vec<&DimmFacts>> = BTreeMap::new();
    for d in dimms {
        let ch =
            channel_token(&d.locator).or_else(|| d.bank_locator.as_deref().and_then(channel_token));
        let Some(ch) = ch else {
            let sample: Vec<String> = dimms
                .iter()
                .take(3)
                .map(|d| {
                    format!(
                        "{} / {}",
                        d.locator,
                        d.bank_locator.as_deref().unwrap_or("-")
                    )
                })
                .collect();
            return vec![Finding::not_evaluated(
                ID,
                format!(
                    "the per-channel mapping is not in these locators (Locator / Bank Locator: {} ...)",
                    sample.join(", ")
                ),
            )];
        };
        let socket = d
            .bank_locator
            .as_deref()
            .and_then(socket_token)
            .or_else(|| socket_token(&d.locator))
            .unwrap_or_else(|| "-".into());
        channels.entry((socket, ch)).or_default().push(d);
    }
    let counts: Vec<((String, String), usize)> = channels
        .iter()
        .map(|(k, v)| (k.clone(), populated(v).len()))
        .collect();
    let empty: Vec<String> = counts
        .iter()
        .filter(|(_, n)| *n == 0)
        .map(|((s, c), _)| format!("{s} channel {c}"))
        .collect();
    let mut distinct: Vec<usize> = counts.iter().map(|(_, n)| *n).filter(|n| *n > 0).collect();
    distinct.sort();
    distinct.dedup();
    let mut out = Vec::new();
    let evidence: Vec<String> = counts
        .iter()
        .map(|((s, c), n)| format!("{s} channel {c}: {n} DIMM(s)"))
        .collect();
    if !empty.is_empty() {
        let mut fnd = Finding::new(
            ID,
            Verdict::Warn,
            format!(
                "{} of {} channels empty: {}",
                empty.len(),
                counts.len(),
                empty.join(", ")
            ),
        )
        .fix("add DIMMs so that every channel holds one: bandwidth scales with populated channels");
        for e in &evidence {
            fnd = fnd.with("SMBIOS Type 17", e.clone());
        }
        out.push(fnd);
    }
    if distinct.len() > 1 {
        out.push(
            Finding::new(
                ID,
                Verdict::Warn,
                format!("channels hold different numbers of DIMMs ({:?})", distinct),
            )
            .fix("populate every channel with the same number of DIMMs"),
        );
    }
    out
}

fn census<T: Ord + Clone>(items: impl Iterator<Item = T>) -> BTreeMap<T, usize> {
    let mut m = BTreeMap::new();
    for i in items {
        *m.entry(i).or_insert(0) += 1;
    }
    m
}

/// `memory.mixed`: mixed DIMM sizes, speeds, ranks or part numbers among populated slots.
pub fn memory_mixed(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "memory.mixed";
    let dimms = match dimm_slots(f, ID) {
        Ok(d) => d,
        Err(e) => return vec![e],
    };
    let pop: Vec<&DimmFacts> = dimms.iter().filter(|d| d.populated).collect();
    if pop.is_empty() {
        return vec![Finding::not_evaluated(ID, "no populated DIMM slots listed")];
    }
    if pop.iter().all(|d| {
        d.size_bytes.is_none()
            && d.speed_mt_per_s.is_none()
            && d.rank.is_none()
            && d.part_number.is_none()
    }) {
        // nothing to compare is not "all alike"
        return vec![Finding::not_evaluated(
            ID,
            format!(
                "none of {} populated DIMMs lists size, speed, rank or part number",
                pop.len()
            ),
        )];
    }
    let mut mixed = Vec::new();
    let show = |m: BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, n)| format!("{n} x {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sizes = census(pop.iter().filter_map(|d| d.size_bytes));
    if sizes.len() > 1 {
        mixed.push(format!(
            "sizes {}",
            show(
                sizes
                    .iter()
                    .map(|(k, n)| (format_bytes_binary(*k), *n))
                    .collect()
            )
        ));
    }
    let speeds = census(pop.iter().filter_map(|d| d.speed_mt_per_s));
    if speeds.len() > 1 {
        mixed.push(format!(
            "rated speeds {}",
            show(
                speeds
                    .iter()
                    .map(|(k, n)| (format!("{k} MT/s"), *n))
                    .collect()
            )
        ));
    }
    let ranks = census(pop.iter().filter_map(|d| d.rank));
    if ranks.len() > 1 {
        mixed.push(format!(
            "ranks {}",
            show(
                ranks
                    .iter()
                    .map(|(k, n)| (format!("rank {k}"), *n))
                    .collect()
            )
        ));
    }
    if p.0.get("check_part_numbers") != Some(&crate::ParamValue::Bool(false)) {
        let parts = census(pop.iter().filter_map(|d| d.part_number.clone()));
        if parts.len() > 1 {
            mixed.push(format!("part numbers {}", show(parts)));
        }
    }
    if mixed.is_empty() {
        return vec![];
    }
    vec![Finding::new(
        ID,
        Verdict::Warn,
        format!("mixed DIMMs: {}", mixed.join("; ")),
    )
    .with("SMBIOS Type 17", format!("{} populated DIMMs", pop.len()))
    .fix("use identical DIMMs (size, speed, ranks, part number) in every populated slot; mixed modules run at the slowest common timing")]
}

/// `memory.speed`: configured speed below rated speed.
pub fn memory_speed(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "memory.speed";
    let dimms = match dimm_slots(f, ID) {
        Ok(d) => d,
        Err(e) => return vec![e],
    };
    let pop: Vec<&DimmFacts> = dimms.iter().filter(|d| d.populated).collect();
    let both: Vec<(&DimmFacts, u32, u32)> = pop
        .iter()
        .filter_map(|d| Some((*d, d.speed_mt_per_s?, d.configured_speed_mt_per_s?)))
        .collect();
    if both.is_empty() {
        return vec![Finding::not_evaluated(
            ID,
            "no populated DIMM lists both Speed and Configured Memory Speed",
        )];
    }
    let slow: Vec<&(&DimmFacts, u32, u32)> = both.iter().filter(|(_, r, c)| c < r).collect();
    if slow.is_empty() {
        return vec![];
    }
    let pairs = census(slow.iter().map(|(_, r, c)| (*c, *r)));
    let what: Vec<String> = pairs
        .keys()
        .map(|(c, r)| format!("configured {c} MT/s below rated {r} MT/s"))
        .collect();
    let on = if slow.len() == pop.len() {
        format!("on every DIMM ({} of {})", slow.len(), pop.len())
    } else {
        format!("on {} of {} DIMMs", slow.len(), pop.len())
    };
    let locs: Vec<&str> = slow.iter().map(|(d, _, _)| d.locator.as_str()).collect();
    vec![Finding::new(ID, Verdict::Warn, format!("{} {on}", what.join("; ")))
        .with("SMBIOS Type 17 Speed / Configured Memory Speed", locs.join(" "))
        .fix("the memory controller caps the speed: check the CPU's supported DDR speed (e.g. Xeon Silver runs DDR4 at 2400 MT/s), DIMMs per channel, and the firmware's memory frequency setting")]
}

/// `memory.triad_share`: measured Triad peak / theoretical peak below the threshold.
pub fn memory_triad_share(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "memory.triad_share";
    let result = need!(f.result, ID);
    let peak = need!(f.memory.theoretical_peak_bytes_per_s, ID);
    let Some(triad) = result.triad_peak_bytes_per_s else {
        return vec![Finding::not_evaluated(
            ID,
            format!("{} has no STREAM Triad figure", result.path),
        )];
    };
    if *peak <= 0.0 || !peak.is_finite() {
        return vec![Finding::not_evaluated(
            ID,
            "theoretical peak is not a positive number",
        )];
    }
    let min = p.f64("min_share").unwrap_or(0.6);
    let share = triad / peak;
    let line = format!(
        "Triad peak {} is {:.0}% of the theoretical {} (threshold {:.0}%)",
        format_rate_decimal(triad),
        share * 100.0,
        format_rate_decimal(*peak),
        min * 100.0
    );
    let finding = Finding::new(
        ID,
        if share < min {
            Verdict::Warn
        } else {
            Verdict::Pass
        },
        line,
    )
    .with(
        format!("{} mem.bandwidth triad", result.path),
        format_rate_decimal(triad),
    )
    .with(
        "memory.theoretical_peak_bytes_per_s",
        format_rate_decimal(*peak),
    );
    if share < min {
        vec![finding.fix("check DIMM population (empty channels), configured speed, NUMA placement and the thread count of the peak")]
    } else {
        vec![finding]
    }
}

/// `memory.edac`: corrected (warn) and uncorrected (fail) error counts per DIMM.
pub fn memory_edac(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "memory.edac";
    let edac = need!(f.memory.edac, ID);
    if edac.is_empty() {
        return vec![Finding::not_evaluated(
            ID,
            "no EDAC memory controller (/sys/devices/system/edac/mc is empty: driver not loaded, or errors go to firmware)",
        )];
    }
    if edac
        .iter()
        .all(|d| d.ce_count.is_none() && d.ue_count.is_none())
    {
        // unreadable counters are not zero errors
        return vec![Finding::not_evaluated(
            ID,
            format!(
                "none of {} EDAC DIMMs has a readable dimm_ce_count or dimm_ue_count",
                edac.len()
            ),
        )];
    }
    let max_ce = p.i64("max_ce").unwrap_or(0).max(0) as u64;
    let name = |d: &crate::facts::EdacDimmFacts| {
        format!(
            "mc{} dimm{}{}",
            d.mc,
            d.dimm,
            d.label
                .as_deref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default()
        )
    };
    let mut out = Vec::new();
    let ue: Vec<_> = edac
        .iter()
        .filter(|d| d.ue_count.unwrap_or(0) > 0)
        .collect();
    if !ue.is_empty() {
        let mut fnd = Finding::new(
            ID,
            Verdict::Fail,
            format!(
                "uncorrected memory errors on {}",
                ue.iter().map(|d| name(d)).collect::<Vec<_>>().join(", ")
            ),
        )
        .fix("replace the named DIMMs; uncorrected errors crash or corrupt");
        for d in &ue {
            fnd = fnd.with(
                format!(
                    "/sys/devices/system/edac/mc/mc{}/dimm{}/dimm_ue_count",
                    d.mc, d.dimm
                ),
                d.ue_count.unwrap_or(0).to_string(),
            );
        }
        out.push(fnd);
    }
    let ce: Vec<_> = edac
        .iter()
        .filter(|d| d.ce_count.unwrap_or(0) > max_ce)
        .collect();
    if !ce.is_empty() {
        let total: u64 = ce.iter().filter_map(|d| d.ce_count).sum();
        let mut by_mc: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        for d in &ce {
            by_mc
                .entry(d.mc)
                .or_default()
                .push(format!("dimm{}", d.dimm));
        }
        let where_: Vec<String> = by_mc
            .iter()
            .map(|(mc, ds)| format!("mc{mc} {}", ds.join("/")))
            .collect();
        let mut fnd = Finding::new(
            ID,
            Verdict::Warn,
            format!(
                "{total} corrected memory errors on {}",
                where_.join(" and ")
            ),
        )
        .fix(
            "watch the counts; replace a DIMM whose count keeps rising (its label names the slot)",
        );
        for d in &ce {
            fnd = fnd.with(
                format!(
                    "/sys/devices/system/edac/mc/mc{}/dimm{}/dimm_ce_count",
                    d.mc, d.dimm
                ),
                format!("{} ({})", d.ce_count.unwrap_or(0), name(d)),
            );
        }
        out.push(fnd);
    }
    out
}

// ---------------------------------------------------------------- NUMA

/// `numa.nodes`: holes in node numbering (a node missing), nodes without CPUs or memory.
pub fn numa_nodes(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "numa.nodes";
    let nodes = need!(f.numa.nodes, ID);
    if nodes.is_empty() {
        return vec![Finding::not_evaluated(
            ID,
            "no /sys/devices/system/node/node* folders (kernel without NUMA)",
        )];
    }
    if nodes
        .iter()
        .all(|n| n.cpus.known().is_none() && n.mem_total_bytes.known().is_none())
    {
        // node folders without cpulist or meminfo: nothing but the numbering to judge
        return vec![Finding::not_evaluated(
            ID,
            format!(
                "none of {} NUMA nodes has a readable cpulist or meminfo",
                nodes.len()
            ),
        )];
    }
    let mut out = Vec::new();
    let ids: Vec<u32> = nodes.iter().map(|n| n.id).collect();
    let max = ids.iter().copied().max().unwrap_or(0);
    let missing: Vec<u32> = (0..=max).filter(|i| !ids.contains(i)).collect();
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().map(|i| format!("node{i}")).collect();
        out.push(
            Finding::new(
                ID,
                Verdict::Warn,
                format!(
                    "NUMA {} missing (nodes present: {})",
                    names.join(", "),
                    ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
                ),
            )
            .with("/sys/devices/system/node", ids.iter().map(|i| format!("node{i}")).collect::<Vec<_>>().join(" "))
            .fix("a socket's memory is not seen as its own node: check the DIMMs of that socket and the firmware's NUMA/SRAT setting (node interleaving off)"),
        );
    }
    for n in nodes {
        if let Probed::Known(cpus) = &n.cpus {
            if cpus.is_empty() {
                out.push(
                    Finding::new(
                        ID,
                        Verdict::Warn,
                        format!("node{} has no CPUs: its memory is remote to every CPU", n.id),
                    )
                    .with(format!("/sys/devices/system/node/node{}/cpulist", n.id), "(empty)")
                    .fix("expected for CXL or HBM expanders; otherwise the partition (LPAR/VM) was given memory without the CPUs beside it"),
                );
            }
        }
        if let Probed::Known(0) = n.mem_total_bytes {
            out.push(
                Finding::new(
                    ID,
                    Verdict::Warn,
                    format!(
                        "node{} has no memory: its CPUs reach all memory remotely",
                        n.id
                    ),
                )
                .with(
                    format!("/sys/devices/system/node/node{}/meminfo", n.id),
                    "MemTotal: 0 kB",
                )
                .fix("populate DIMMs on that socket"),
            );
        }
    }
    out
}

// ---------------------------------------------------------------- pages

fn page_modes(f: &Facts, p: &Params) -> Vec<String> {
    match &f.result {
        Probed::Known(r) if !r.page_modes.is_empty() => r.page_modes.clone(),
        _ => p.list("page_modes"),
    }
}

/// `pages.thp`: THP set to `never` while the profile measures THP.
pub fn pages_thp(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "pages.thp";
    if !page_modes(f, p).iter().any(|m| m == "thp") {
        return vec![Finding::new(
            ID,
            Verdict::Info,
            "the profile measures no THP pages",
        )];
    }
    let mode = need!(f.pages.thp_enabled, ID);
    if mode == "never" {
        return vec![Finding::new(
            ID,
            Verdict::Warn,
            "THP disabled (never) but the profile measures THP pages",
        )
        .with("/sys/kernel/mm/transparent_hugepage/enabled", mode.clone())
        .fix("echo madvise > /sys/kernel/mm/transparent_hugepage/enabled")];
    }
    vec![]
}

/// `pages.hugetlb`: every hugetlb pool empty while the profile measures hugetlbfs pages.
pub fn pages_hugetlb(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "pages.hugetlb";
    if !page_modes(f, p).iter().any(|m| m == "hugetlb") {
        return vec![Finding::new(
            ID,
            Verdict::Info,
            "the profile measures no hugetlb pages",
        )];
    }
    let pools = need!(f.pages.hugetlb, ID);
    if pools.is_empty() {
        return vec![Finding::new(
            ID,
            Verdict::Warn,
            "no hugetlb page sizes (kernel without hugetlbfs)",
        )
        .with("/sys/kernel/mm/hugepages", "(no pools)")];
    }
    if pools.iter().all(|p| p.pages == 0) {
        let mut fnd = Finding::new(
            ID,
            Verdict::Warn,
            "hugetlb pools are empty: the hugetlb page mode will be skipped",
        )
        .fix("echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages (or vm.nr_hugepages in sysctl.conf)");
        for pool in pools {
            fnd = fnd.with(
                format!(
                    "/sys/kernel/mm/hugepages/hugepages-{}kB/nr_hugepages",
                    pool.page_size_bytes / 1024
                ),
                pool.pages.to_string(),
            );
        }
        return vec![fnd];
    }
    vec![]
}

/// `pages.sizes`: several huge page sizes holding pages (informational, with the total).
pub fn pages_sizes(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "pages.sizes";
    let pools = need!(f.pages.hugetlb, ID);
    let used: Vec<_> = pools.iter().filter(|p| p.pages > 0).collect();
    if used.len() < 2 {
        return vec![];
    }
    let total: u64 = used
        .iter()
        .map(|p| p.pages.saturating_mul(p.page_size_bytes))
        .fold(0u64, |a, b| a.saturating_add(b));
    let parts: Vec<String> = used
        .iter()
        .map(|p| format!("{} x {}", p.pages, format_bytes_binary(p.page_size_bytes)))
        .collect();
    let mut fnd = Finding::new(
        ID,
        Verdict::Info,
        format!(
            "{} huge page sizes configured: {} = {} in total",
            used.len(),
            parts.join(" + "),
            format_bytes_binary(total)
        ),
    );
    for p in used {
        fnd = fnd.with(
            format!(
                "/sys/kernel/mm/hugepages/hugepages-{}kB/nr_hugepages",
                p.page_size_bytes / 1024
            ),
            p.pages.to_string(),
        );
    }
    vec![fnd]
}

// ---------------------------------------------------------------- I/O

/// Usable bytes per second of one PCIe lane at `gt_per_s` (after line coding: 8b/10b for
/// 2.5 and 5 GT/s, 128b/130b for 8, 16 and 32 GT/s, PCIe 6.0 FLIT 242/256 at 64 GT/s).
pub fn pcie_lane_bytes_per_s(gt_per_s: f64) -> f64 {
    let efficiency = if gt_per_s <= 5.0 {
        8.0 / 10.0
    } else if gt_per_s <= 32.0 {
        128.0 / 130.0
    } else {
        242.0 / 256.0
    };
    gt_per_s * 1e9 * efficiency / 8.0
}

/// PCIe generation of a link speed.
pub fn pcie_gen(gt_per_s: f64) -> u32 {
    match gt_per_s {
        g if g <= 2.5 => 1,
        g if g <= 5.0 => 2,
        g if g <= 8.0 => 3,
        g if g <= 16.0 => 4,
        g if g <= 32.0 => 5,
        _ => 6,
    }
}

/// `io.pcie_uplink`: endpoints whose ceiling is set above them: a link they share with other
/// endpoints whose maxima add up to more than it carries (a switch's uplink, 2:1 for four x4
/// drives on an x8), or a narrowest link that is not their own and runs below its maximum.
/// One finding per such link, naming the endpoints behind it.
pub fn io_pcie_uplink(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "io.pcie_uplink";
    let Some(paths) = &f.io.pcie_paths else {
        return vec![Finding::not_evaluated(
            ID,
            "no PCIe tree in these facts (a result file written before the probe read it)",
        )];
    };
    if paths.iter().all(|p| p.links.is_empty()) {
        return vec![Finding::not_evaluated(
            ID,
            if paths.is_empty() {
                "no endpoint below a PCIe root port (a VM's devices on the root bus, or no PCIe)"
                    .to_string()
            } else {
                format!(
                    "none of the {} endpoints below a root port has a link with known speed and width",
                    paths.len()
                )
            },
        )];
    }
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for p in paths {
        if let Some(sh) = p
            .shared
            .as_ref()
            .filter(|s| s.oversubscription.is_some_and(|o| o > 1.0))
        {
            if seen.contains(&sh.link.device) {
                continue;
            }
            seen.push(sh.link.device.clone());
            let o = sh.oversubscription.unwrap_or(0.0);
            out.push(
                Finding::new(
                    ID,
                    Verdict::Warn,
                    format!(
                        "{} endpoints ({}) share the Gen{} x{} link at {} = {}: {o:.2}:1 oversubscribed, so together they get at most {} each",
                        sh.endpoints.len(),
                        sh.endpoints.join(", "),
                        sh.link.generation,
                        sh.link.width_lanes,
                        sh.link.device,
                        format_rate_decimal(sh.link.bandwidth_bytes_per_s as f64),
                        format_rate_decimal(sh.link.bandwidth_bytes_per_s as f64 / sh.endpoints.len() as f64),
                    ),
                )
                .with(
                    format!("/sys/bus/pci/devices/{}/current_link_speed,_width", sh.link.device),
                    format!("Gen{} x{}", sh.link.generation, sh.link.width_lanes),
                )
                .fix("spread the devices over root ports (or switches) whose uplinks carry their sum, or accept the shared ceiling in the storage results"),
            );
        }
        if let Some(n) = p
            .narrowest
            .as_ref()
            .filter(|n| n.device != p.endpoint && n.below_max)
        {
            if seen.contains(&n.device) {
                continue;
            }
            seen.push(n.device.clone());
            out.push(
                Finding::new(
                    ID,
                    Verdict::Warn,
                    format!(
                        "{} is capped at {} by the link at {} above it, which runs Gen{} x{} below its maximum",
                        p.endpoint,
                        format_rate_decimal(n.bandwidth_bytes_per_s as f64),
                        n.device,
                        n.generation,
                        n.width_lanes
                    ),
                )
                .with(
                    format!("/sys/bus/pci/devices/{}/current_link_speed,_width", n.device),
                    format!("Gen{} x{}", n.generation, n.width_lanes),
                )
                .fix("reseat the switch or riser, check the slot's wiring and the firmware's link speed setting"),
            );
        }
    }
    out
}

/// `io.pcie_link`: links running below their maximum speed or width, with the ceiling lost.
pub fn io_pcie_link(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "io.pcie_link";
    let links = need!(f.io.pcie, ID);
    let mut out = Vec::new();
    let mut checked = 0usize;
    for l in links {
        let (Some(cs), Some(ms), Some(cw), Some(mw)) = (
            l.current_gt_per_s,
            l.max_gt_per_s,
            l.current_width,
            l.max_width,
        ) else {
            continue;
        };
        checked += 1;
        if cw == 0 || mw == 0 {
            continue; // link down / no device behind a bridge port
        }
        if cs < ms || cw < mw {
            let now = pcie_lane_bytes_per_s(cs) * cw as f64;
            let could = pcie_lane_bytes_per_s(ms) * mw as f64;
            out.push(
                Finding::new(
                    ID,
                    Verdict::Warn,
                    format!(
                        "{}{} runs Gen{} x{} = {} instead of Gen{} x{} = {}",
                        l.address,
                        l.device.as_deref().map(|d| format!(" ({d})")).unwrap_or_default(),
                        pcie_gen(cs),
                        cw,
                        format_rate_decimal(now),
                        pcie_gen(ms),
                        mw,
                        format_rate_decimal(could)
                    ),
                )
                .with(
                    format!("/sys/bus/pci/devices/{}/current_link_speed,_width", l.address),
                    format!("{cs} GT/s x{cw}"),
                )
                .with(
                    format!("/sys/bus/pci/devices/{}/max_link_speed,_width", l.address),
                    format!("{ms} GT/s x{mw}"),
                )
                .fix("check under load first (some devices lower the link speed when idle); then reseat the card, use a slot wired for the full width, check the firmware's slot speed setting"),
            );
        }
    }
    if checked == 0 {
        // absent is not a pass: no link to compare (a VM's virtio devices, no PCIe at all)
        return vec![Finding::not_evaluated(
            ID,
            if links.is_empty() {
                "no PCI device exposes link speed and width (a VM, or no PCIe devices)".to_string()
            } else {
                format!(
                    "none of {} PCI devices with link files has all of current/max link speed and width",
                    links.len()
                )
            },
        )];
    }
    out
}

// ---------------------------------------------------------------- binary / OS

/// Name of an ELF machine number, for messages: its name in the one table
/// ([`hwsurvey_elf::MACHINES`]: `x86_64`, `SPARCV9`), or `unknown machine N`.
pub fn elf_machine_name(machine: u16) -> String {
    let m = hwsurvey_elf::Machine(machine);
    m.name().map_or_else(|| m.to_string(), str::to_string)
}

/// `binary.arch`: the binary is 32-bit on a 64-bit kernel (compat mode), or for another machine.
pub fn binary_arch(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "binary.arch";
    let bin = need!(f.binary, ID);
    let kmach = need!(f.os.kernel_machine, ID);
    let Some(native) = hwsurvey_elf::MachineInfo::for_kernel(kmach) else {
        return vec![Finding::not_evaluated(
            ID,
            format!("unknown kernel machine {kmach:?}"),
        )];
    };
    let bits = native.bits;
    let evidence = format!(
        "ELF{} {} {}",
        bin.class_bits,
        elf_machine_name(bin.machine),
        if bin.little_endian { "LSB" } else { "MSB" }
    );
    if native.is_native(bin.class_bits, bin.machine) {
        return vec![];
    }
    let compat = native.runs_in_compat(bin.class_bits, bin.machine);
    let summary = if compat {
        format!(
            "{} is a {}-bit {} binary on a {}-bit {kmach} kernel (compat mode: fewer registers, 32-bit pointers, other numbers)",
            bin.path,
            bin.class_bits,
            elf_machine_name(bin.machine),
            bits
        )
    } else {
        format!(
            "{} is built for {} ({}-bit), the kernel is {kmach}: it runs only under emulation, if at all",
            bin.path,
            elf_machine_name(bin.machine),
            bin.class_bits
        )
    };
    vec![Finding::new(ID, Verdict::Fail, summary)
        .with(format!("ELF header of {}", bin.path), evidence)
        .with("uname -m", kmach.clone())
        .fix(format!(
            "build for the native {}-bit target of {kmach}",
            bits
        ))]
}

/// `os.kernel_min`: kernel release older than the minimum. The minimum is the target
/// descriptor's `min_kernel` ([`Facts::target`]: the binary's target, rustc's platform-support
/// figure for its triple) unless the rules file sets `min_kernel` to a version explicitly; the
/// evidence names which. Pass findings carry the evidence too.
pub fn os_kernel_min(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "os.kernel_min";
    let release = need!(f.os.kernel_release, ID);
    let setting = p.str("min_kernel").unwrap_or("target");
    let (min_text, source, source_value) = if setting == "target" {
        let t = need!(f.target, ID);
        (
            t.min_kernel.clone(),
            format!("min_kernel of {} (chosen by {})", t.descriptor, t.chosen_by),
            format!("{} ({})", t.min_kernel, t.min_kernel_source),
        )
    } else {
        (
            setting.to_string(),
            "rules file: rules.\"os.kernel_min\".min_kernel (overrides the target descriptor)"
                .to_string(),
            setting.to_string(),
        )
    };
    let numeric: String = release
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let (Some(have), Some(min)) = (
        parse_version(numeric.trim_end_matches('.')),
        parse_version(&min_text),
    ) else {
        return vec![Finding::not_evaluated(
            ID,
            format!("kernel release {release:?} does not start with a version"),
        )];
    };
    let finding = if have < min {
        Finding::new(
            ID,
            Verdict::Fail,
            format!("kernel {release} is older than the minimum {min_text}"),
        )
        .fix(format!("run a kernel {min_text} or newer"))
    } else {
        Finding::new(
            ID,
            Verdict::Pass,
            "the kernel is at least the target's minimum version",
        )
    };
    vec![finding
        .with("/proc/sys/kernel/osrelease", release.clone())
        .with(source, source_value)]
}

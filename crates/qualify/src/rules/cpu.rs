//! CPU rules: `cpu.online`, `cpu.allowed`, `cpu.quota`, `cpu.smt`, `cpu.governor`,
//! `cpu.isolation`.

use std::collections::BTreeMap;

use hwsurvey_model::units::format_cpus;
use hwsurvey_model::{CpuSet, Probed};

use crate::facts::Facts;
use crate::{Finding, Params, RuleFinding, Verdict};

pub(crate) const GOVERNORS: &[&str] = &[
    "performance",
    "schedutil",
    "ondemand",
    "conservative",
    "powersave",
    "userspace",
];

fn list(set: &CpuSet) -> String {
    set.to_list_string()
}

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

/// `cpu.quota`: a cgroup CPU quota allows less run time than the CPUs this process may use
/// (allowed and online) can take, so threads past it are throttled: a scaling curve flattens
/// at the quota, not at the machine's limit.
pub fn cpu_quota(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "cpu.quota";
    let Some(q) = need!(f.cpu.quota, ID) else {
        return vec![];
    };
    let online = need!(f.cpu.online, ID);
    let usable = match &f.cpu.allowed {
        Probed::Known(a) => a.intersection(online),
        Probed::Unknown(_) => online.clone(),
    };
    if q.cpus >= usable.len() as f64 {
        return vec![];
    }
    vec![Finding::new(
        ID,
        Verdict::Warn,
        format!(
            "a cgroup CPU quota allows {} CPUs' worth of run time of the {} this process may \
             use: threads past it are throttled",
            format_cpus(q.cpus),
            usable.len()
        ),
    )
    .with(q.source.clone(), format!("{} CPUs", format_cpus(q.cpus)))
    .with("CPUs allowed and online", list(&usable))
    .fix("run outside the quota or raise it (systemd CPUQuota=, docker --cpus, cgroup cpu.max)")]
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

//! The hardware watch's readers: which counters exist ([`discover`], once per run), one
//! reading of all of them ([`read`], before and after every point), cpufreq's current
//! frequency of a point's CPUs ([`cpufreq_low`]), and the kernel log from the run's start
//! ([`crate::kmsg::Follower`]). The types and the pure delta are `hwsurvey_machine::watch`.
//!
//! Files (Documentation/ABI/testing/sysfs-devices-edac, sysfs-bus-pci-devices-aer-stats,
//! sysfs-bus-pci, sysfs-devices-system-cpu):
//! - `/sys/devices/system/edac/mc/mcM/dimmN/{dimm_ce_count,dimm_ue_count,dimm_label,
//!   dimm_location,size}`; drivers without `dimmN` folders: `csrowN/{ce_count,ue_count,
//!   ch0_dimm_label}`; and `mcM/{ce,ue}_noinfo_count`;
//! - `/sys/bus/pci/devices/<address>/aer_dev_{correctable,nonfatal,fatal}`,
//!   `{current,max}_link_{speed,width}`;
//! - `/sys/devices/system/cpu/cpuN/thermal_throttle/{core,package}_throttle_count` (x86
//!   `therm_throt`: one counter per core and one per package, read on the first CPU of each);
//! - `/sys/devices/system/cpu/cpuN/cpufreq/{scaling_cur_freq,cpuinfo_max_freq}` (kHz).
//!
//! Each source that is absent is said once, with why ([`SourceState::unavailable`]): no EDAC
//! driver, no function with AER statistics (kernels before 5.1, VMs without PCIe ports),
//! no `thermal_throttle` folder (not x86, or a VM), no cpufreq driver, `/dev/kmsg` root-only.

use hwsurvey_model::Unknown;

use crate::run_env::CpuPlace;
use crate::{Machine, ProbeError, SysRoot};

// The types and the pure delta, under their paths here.
pub use hwsurvey_machine::watch::*;

/// The EDAC memory controllers' folder.
pub const EDAC_MC: &str = "/sys/devices/system/edac/mc";
/// The PCI functions' folder.
pub const PCI_DEVICES: &str = "/sys/bus/pci/devices";
/// The CPUs' folder.
pub const CPU: &str = "/sys/devices/system/cpu";

/// The plan of a run, and the kernel log followed from now.
#[derive(Debug)]
pub struct Live {
    /// What is read before and after every point.
    pub plan: WatchPlan,
    /// The kernel log from the run's start (`None`: unreadable, said in `plan.sources`).
    pub kmsg: Option<crate::kmsg::Follower>,
}

/// Finds what the watch reads under `root`, for the CPUs `cpus` (the run environment's, with
/// their packages and cores) and the machine's SMBIOS slots and PCI names (`machine`), and
/// opens the kernel log at its end. Never fails: each source that cannot be watched is said
/// in `plan.sources` with why.
pub fn start(root: &SysRoot, machine: &Machine, cpus: &[CpuPlace]) -> Live {
    let mut plan = discover(root, machine, cpus);
    let (kmsg, state) = match crate::kmsg::Follower::open(root) {
        Ok(f) => (
            Some(f),
            SourceState {
                source: WatchSource::KernelLog,
                watched: 1,
                what: format!(
                    "{} from the run's start: machine checks, EDAC, AER and [Hardware Error] lines",
                    crate::kmsg::KMSG
                ),
                unavailable: None,
            },
        ),
        Err(e) => (
            None,
            SourceState {
                source: WatchSource::KernelLog,
                watched: 0,
                what: crate::kmsg::KMSG.to_string(),
                unavailable: Some(e.into()),
            },
        ),
    };
    plan.sources.push(state);
    Live { plan, kmsg }
}

fn count(root: &SysRoot, path: &str) -> Result<u64, String> {
    root.read_parsed::<u64>(path, "a decimal count")
        .map_err(|e| e.to_string())
}

fn state(source: WatchSource, watched: usize, what: String, why: Option<Unknown>) -> SourceState {
    SourceState {
        source,
        watched,
        what,
        unavailable: if watched == 0 {
            Some(why.unwrap_or(Unknown::Other {
                detail: format!("nothing of {} found", source.words()),
            }))
        } else {
            None
        },
    }
}

fn numbered(names: Vec<String>, prefix: &str) -> Vec<(u32, String)> {
    let mut v: Vec<(u32, String)> = names
        .into_iter()
        .filter_map(|n| Some((n.strip_prefix(prefix)?.parse().ok()?, n)))
        .collect();
    v.sort();
    v
}

fn label(root: &SysRoot, path: &str) -> Option<String> {
    root.read_value(path).ok().filter(|l| !l.is_empty())
}

/// The EDAC units of `root`, their slots from `devices` (SMBIOS Type 17), and the state.
fn edac(root: &SysRoot, machine: &Machine) -> (Vec<EdacUnit>, SourceState) {
    let devices: &[crate::memory::MemoryDevice] = machine
        .memory
        .smbios
        .known()
        .map_or(&[], |s| s.devices.as_slice());
    let no_smbios = machine
        .memory
        .smbios
        .why_unknown()
        .map(|why| format!("no SMBIOS memory devices to name its slot ({why})"));
    let mcs = match root.list_dir(EDAC_MC) {
        Ok(n) => numbered(n, "mc"),
        Err(e) => {
            let why = match e {
                ProbeError::Missing { .. } => Unknown::Other {
                    detail: format!(
                        "{EDAC_MC} is missing: no EDAC driver bound (a VM, or errors go to the \
                         firmware)"
                    ),
                },
                e => e.into(),
            };
            return (
                vec![],
                state(WatchSource::Edac, 0, EDAC_MC.into(), Some(why)),
            );
        }
    };
    let mut units = Vec::new();
    let mut dimms = 0;
    for (_, mc) in &mcs {
        let dir = format!("{EDAC_MC}/{mc}");
        let entries = root.list_dir(&dir).unwrap_or_default();
        let named =
            |dimm: String, label: Option<String>, location: Option<String>, size: Option<u64>| {
                let (slot, slot_note) = match (&label, &no_smbios) {
                    (Some(l), None) => match slot::slot_of(l, size, devices) {
                        Ok((s, how)) => (Some(s), how.to_string()),
                        Err(why) => (None, why),
                    },
                    (None, _) => (None, "no dimm_label".to_string()),
                    (Some(_), Some(why)) => (None, why.clone()),
                };
                DimmSlot {
                    dimm,
                    label,
                    location,
                    slot,
                    slot_note,
                }
            };
        let dimm_dirs = numbered(entries.clone(), "dimm");
        for (_, d) in &dimm_dirs {
            let p = format!("{dir}/{d}");
            if !root.exists(&format!("{p}/dimm_ce_count")) {
                continue;
            }
            let size = root
                .read_parsed::<u64>(&format!("{p}/size"), "a size in MiB")
                .ok()
                .and_then(|m| m.checked_mul(1 << 20));
            units.push(EdacUnit {
                slot: named(
                    format!("{mc}/{d}"),
                    label(root, &format!("{p}/dimm_label")),
                    label(root, &format!("{p}/dimm_location")),
                    size,
                ),
                ce_path: format!("{p}/dimm_ce_count"),
                ue_path: root
                    .exists(&format!("{p}/dimm_ue_count"))
                    .then(|| format!("{p}/dimm_ue_count")),
            });
            dimms += 1;
        }
        if dimm_dirs.is_empty() {
            for (_, c) in numbered(entries.clone(), "csrow") {
                let p = format!("{dir}/{c}");
                if !root.exists(&format!("{p}/ce_count")) {
                    continue;
                }
                units.push(EdacUnit {
                    slot: named(
                        format!("{mc}/{c}"),
                        label(root, &format!("{p}/ch0_dimm_label")),
                        None,
                        None,
                    ),
                    ce_path: format!("{p}/ce_count"),
                    ue_path: root
                        .exists(&format!("{p}/ue_count"))
                        .then(|| format!("{p}/ue_count")),
                });
                dimms += 1;
            }
        }
        if root.exists(&format!("{dir}/ce_noinfo_count")) {
            units.push(EdacUnit {
                slot: DimmSlot {
                    dimm: format!("{mc}/noinfo"),
                    label: None,
                    location: None,
                    slot: None,
                    slot_note: "errors the driver could not put on a DIMM (ce_noinfo_count, \
                                ue_noinfo_count)"
                        .into(),
                },
                ce_path: format!("{dir}/ce_noinfo_count"),
                ue_path: root
                    .exists(&format!("{dir}/ue_noinfo_count"))
                    .then(|| format!("{dir}/ue_noinfo_count")),
            });
        }
    }
    let what = format!(
        "{} on {} ({EDAC_MC}/mc*/dimm*/dimm_{{ce,ue}}_count, csrow*/{{ce,ue}}_count, \
         {{ce,ue}}_noinfo_count)",
        hwsurvey_model::units::plural(dimms as u64, "DIMM"),
        hwsurvey_model::units::plural(mcs.len() as u64, "memory controller")
    );
    let why = Unknown::Other {
        detail: format!("{EDAC_MC} holds no memory controller with error counters"),
    };
    let n = units.len();
    (units, state(WatchSource::Edac, n, what, Some(why)))
}

/// A PCI function in words for the watch: its port role, else its device or class name.
fn pci_name(machine: &Machine, address: &str) -> Option<String> {
    let dev = machine
        .io
        .pci
        .known()?
        .iter()
        .find(|d| d.address == address)?;
    match dev.role {
        Some(r) if r != crate::pci::PcieRole::Endpoint => Some(r.words().to_string()),
        _ => dev
            .names
            .device
            .clone()
            .or_else(|| dev.names.class.clone())
            .or_else(|| dev.class_name.clone()),
    }
}

fn link_state(root: &SysRoot, dir: &str, which: &str) -> Result<LinkState, String> {
    let speed_path = format!("{dir}/{which}_link_speed");
    let width_path = format!("{dir}/{which}_link_width");
    let speed = root.read_value(&speed_path).map_err(|e| e.to_string())?;
    let speed = crate::pci::parse_link_speed(&speed).map_err(|e| format!("{speed_path}: {e}"))?;
    let width = root
        .read_parsed::<u32>(&width_path, "a lane count")
        .map_err(|e| e.to_string())?;
    if width == 0 {
        return Err(format!("{width_path}: 0 lanes (no link)"));
    }
    Ok(LinkState {
        speed_mt_per_s: speed.transfer_rate_mt_per_s,
        width,
    })
}

/// PCI functions with AER statistics, and PCIe links.
fn pci(root: &SysRoot, machine: &Machine) -> (Vec<AerFunction>, Vec<LinkWatch>, [SourceState; 2]) {
    let names = match root.list_dir(PCI_DEVICES) {
        Ok(n) => n,
        Err(e) => {
            let why: Unknown = e.into();
            return (
                vec![],
                vec![],
                [
                    state(WatchSource::Aer, 0, PCI_DEVICES.into(), Some(why.clone())),
                    state(WatchSource::Link, 0, PCI_DEVICES.into(), Some(why)),
                ],
            );
        }
    };
    let mut aer = Vec::new();
    let mut links = Vec::new();
    for address in names {
        let dir = format!("{PCI_DEVICES}/{address}");
        let files: Vec<AerSeverity> = AerSeverity::ALL
            .into_iter()
            .filter(|s| root.exists(&format!("{dir}/{}", s.file())))
            .collect();
        let name = pci_name(machine, &address);
        if !files.is_empty() {
            aer.push(AerFunction {
                device: address.clone(),
                name: name.clone(),
                dir: dir.clone(),
                files,
            });
        }
        if link_state(root, &dir, "current").is_ok() {
            links.push(LinkWatch {
                device: address.clone(),
                name,
                max: link_state(root, &dir, "max").ok(),
                dir,
            });
        }
    }
    let aer_state = state(
        WatchSource::Aer,
        aer.len(),
        format!(
            "{} ({PCI_DEVICES}/*/aer_dev_{{correctable,nonfatal,fatal}})",
            hwsurvey_model::units::plural(aer.len() as u64, "PCI function")
        ),
        Some(Unknown::Other {
            detail: format!(
                "no function under {PCI_DEVICES} has aer_dev_correctable (no PCIe port with \
                 AER: a VM, AER under firmware control, or a kernel before 5.1)"
            ),
        }),
    );
    let link_state_ = state(
        WatchSource::Link,
        links.len(),
        format!(
            "{} ({PCI_DEVICES}/*/current_link_{{speed,width}})",
            hwsurvey_model::units::plural(links.len() as u64, "PCIe link")
        ),
        Some(Unknown::Other {
            detail: format!("no function under {PCI_DEVICES} reports a PCIe link"),
        }),
    );
    (aer, links, [aer_state, link_state_])
}

/// Thermal throttle counters: one per core (its first CPU) and one per package.
fn throttle(root: &SysRoot, cpus: &[CpuPlace]) -> (Vec<ThrottleCounter>, SourceState) {
    let mut out = Vec::new();
    let mut cores = std::collections::BTreeSet::new();
    let mut packages = std::collections::BTreeSet::new();
    let mut first_missing = None;
    for c in cpus {
        let dir = format!("{CPU}/cpu{}/thermal_throttle", c.cpu);
        if !root.exists(&dir) {
            first_missing.get_or_insert(dir);
            continue;
        }
        if cores.insert((c.package, c.core.unwrap_or(i64::from(c.cpu)))) {
            let path = format!("{dir}/core_throttle_count");
            if root.exists(&path) {
                out.push(ThrottleCounter {
                    kind: ThrottleKind::Core,
                    cpu: c.cpu,
                    package: c.package,
                    path,
                });
            }
        }
        if packages.insert(c.package.unwrap_or(-1 - i64::from(c.cpu))) {
            let path = format!("{dir}/package_throttle_count");
            if root.exists(&path) {
                out.push(ThrottleCounter {
                    kind: ThrottleKind::Package,
                    cpu: c.cpu,
                    package: c.package,
                    path,
                });
            }
        }
    }
    let n_core = out.iter().filter(|t| t.kind == ThrottleKind::Core).count();
    let what = format!(
        "{} and {} ({CPU}/cpu*/thermal_throttle/{{core,package}}_throttle_count)",
        hwsurvey_model::units::plural(n_core as u64, "core counter"),
        hwsurvey_model::units::plural((out.len() - n_core) as u64, "package counter")
    );
    let why = Unknown::Other {
        detail: match first_missing {
            Some(d) => format!(
                "{d} is missing: the kernel's therm_throt counts throttling on x86 CPUs with a \
                 thermal monitor only (not arm64, not in a VM)"
            ),
            None => "no CPU to watch".into(),
        },
    };
    let n = out.len();
    (out, state(WatchSource::ThermalThrottle, n, what, Some(why)))
}

/// cpufreq's `cpuinfo_max_freq` per CPU.
fn cpufreq(root: &SysRoot, cpus: &[CpuPlace]) -> (Vec<(u32, u64)>, SourceState) {
    let mut out = Vec::new();
    let mut first_error = None;
    for c in cpus {
        let path = format!("{CPU}/cpu{}/cpufreq/cpuinfo_max_freq", c.cpu);
        match root.read_parsed::<u64>(&path, "a frequency in kHz") {
            Ok(k) if k > 0 => out.push((c.cpu, k)),
            Ok(_) => {
                first_error.get_or_insert(Unknown::Invalid {
                    path,
                    detail: "0 kHz".into(),
                });
            }
            Err(e) => {
                first_error.get_or_insert(match e {
                    ProbeError::Missing { path } => Unknown::Other {
                        detail: format!(
                            "{path} is missing: no cpufreq driver (a VM, or none loaded)"
                        ),
                    },
                    e => e.into(),
                });
            }
        }
    }
    let what = format!(
        "{} ({CPU}/cpu*/cpufreq/scaling_cur_freq of a point's CPUs right after it, against \
         cpuinfo_max_freq)",
        hwsurvey_model::units::plural(out.len() as u64, "CPU")
    );
    let n = out.len();
    (out, state(WatchSource::Cpufreq, n, what, first_error))
}

/// What the watch reads under `root` (without the kernel log: [`start`] opens it).
pub fn discover(root: &SysRoot, machine: &Machine, cpus: &[CpuPlace]) -> WatchPlan {
    let (edac, edac_state) = edac(root, machine);
    let (aer, links, [aer_state, link_state_]) = pci(root, machine);
    let (throttle, throttle_state) = throttle(root, cpus);
    let (cpufreq, cpufreq_state) = cpufreq(root, cpus);
    WatchPlan {
        edac,
        aer,
        links,
        throttle,
        cpufreq,
        sources: vec![
            edac_state,
            aer_state,
            link_state_,
            throttle_state,
            cpufreq_state,
        ],
    }
}

/// One reading of every counter of `plan` (one small file each).
pub fn read(root: &SysRoot, plan: &WatchPlan) -> WatchReading {
    WatchReading {
        edac: plan
            .edac
            .iter()
            .map(|u| {
                (
                    count(root, &u.ce_path),
                    u.ue_path.as_ref().map(|p| count(root, p)),
                )
            })
            .collect(),
        aer: plan
            .aer
            .iter()
            .map(|f| {
                f.files
                    .iter()
                    .map(|s| {
                        let path = format!("{}/{}", f.dir, s.file());
                        let text = root.read(&path).map_err(|e| e.to_string())?;
                        aer::parse_aer_stats(&text, *s).map_err(|e| format!("{path}: {e}"))
                    })
                    .collect()
            })
            .collect(),
        links: plan
            .links
            .iter()
            .map(|l| link_state(root, &l.dir, "current"))
            .collect(),
        throttle: plan.throttle.iter().map(|t| count(root, &t.path)).collect(),
    }
}

/// The lowest `scaling_cur_freq / cpuinfo_max_freq` among `cpus` (a point's CPUs; at most
/// 64 read) with cpufreq, read now; and the files that could not be read.
pub fn cpufreq_low(
    root: &SysRoot,
    plan: &WatchPlan,
    cpus: &[u32],
) -> (Option<CpufreqLow>, Vec<String>) {
    let mut low: Option<CpufreqLow> = None;
    let mut problems = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for &cpu in cpus.iter().filter(|c| seen.insert(**c)).take(64) {
        let Some(&(_, max_khz)) = plan.cpufreq.iter().find(|(c, _)| *c == cpu) else {
            continue;
        };
        match root.read_parsed::<u64>(
            &format!("{CPU}/cpu{cpu}/cpufreq/scaling_cur_freq"),
            "a frequency in kHz",
        ) {
            Ok(cur_khz) => {
                let this = CpufreqLow {
                    cpu,
                    cur_khz,
                    max_khz,
                };
                if low.as_ref().is_none_or(|l| this.ratio() < l.ratio()) {
                    low = Some(this);
                }
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    (low, problems)
}

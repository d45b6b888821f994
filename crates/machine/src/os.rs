//! The operating system and the settings that change measured numbers.
//!
//! Sources: `/proc/sys/kernel/{osrelease,version,arch}` (and `uname(2)` on the live machine
//! with the `sys` feature), `/etc/os-release` (or `/usr/lib/os-release`), `/proc/cmdline`,
//! `/sys/devices/system/cpu/cpufreq/policy*/`, `/sys/devices/system/cpu/smt/{control,active}`,
//! `/proc/sys/kernel/numa_balancing`, `/sys/kernel/mm/ksm/run`,
//! `/sys/devices/system/clocksource/clocksource0/` ([`crate::clocksource`]),
//! `/sys/devices/system/cpu/vulnerabilities/*`, `/proc/self/cgroup` with the cgroup v1 or v2
//! files it points at, the machine's identity (DMI product UUID and serial, `/etc/machine-id`,
//! kept hashed: [`host_id`]), and the ELF header of the running binary (`/proc/self/exe`, read by `hwsurvey_elf::parse_header`).
//!
//! A 32-bit build on a 64-bit kernel, or a binary of another machine (qemu-user, binfmt), is
//! recorded as data in [`BinaryVsKernel`]; the qualify step turns it into a verdict.

pub use crate::binary::{compare_binary, parse_elf_header, BinaryElf, BinaryVsKernel};
use hwsurvey_model::{CpuSet, Probed, Unknown};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

pub mod cgroup;
pub mod host_id;
pub use cgroup::{Cgroup, CgroupVersion, CpuMax};

/// Everything probed about the OS.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Os {
    /// Kernel release, version and machine.
    pub kernel: Kernel,
    /// `/etc/os-release`.
    pub distro: Probed<Distro>,
    /// `/proc/cmdline`, with the CPU isolation parameters parsed.
    pub cmdline: Probed<Cmdline>,
    /// cpufreq policies (empty folder or none: no cpufreq driver, common in VMs).
    pub cpufreq: Probed<Vec<CpufreqPolicy>>,
    /// SMT control.
    pub smt: Probed<Smt>,
    /// `/proc/sys/kernel/numa_balancing` (0 off, 1 on, 2/3 memory tiering modes).
    pub numa_balancing: Probed<u32>,
    /// `/sys/kernel/mm/ksm/run` (0 stopped, 1 running, 2 unmerging).
    pub ksm_run: Probed<u32>,
    /// Every file of `/sys/devices/system/cpu/vulnerabilities`.
    pub vulnerabilities: Probed<Vec<Vulnerability>>,
    /// This process's cgroup CPU and memory limits.
    pub cgroup: Probed<Cgroup>,
    /// ELF header of the running binary (live machine only).
    pub binary: Probed<BinaryElf>,
    /// The binary against the kernel's machine.
    pub binary_vs_kernel: Probed<BinaryVsKernel>,
    /// Native, virtual machine, full emulation or firmware partition, with the evidence
    /// ([`crate::virt`]). Machine documents written before it was probed read as unknown.
    #[serde(default = "virtualization_not_probed")]
    pub virtualization: Probed<crate::virt::Virtualization>,
    /// The kernel's clocksource ([`crate::clocksource`]). Machine documents written before it
    /// was probed read as unknown.
    #[serde(default = "clocksource_not_probed")]
    pub clocksource: Probed<crate::clocksource::Clocksource>,
    /// Which machine this is, hashed ([`host_id`]: DMI product UUID and serial,
    /// `/etc/machine-id`); empty in documents written before it was probed.
    #[serde(default, skip_serializing_if = "host_id::HostId::is_empty")]
    pub host_id: host_id::HostId,
}

/// [`Os::clocksource`] of a document written before hwsurvey probed it.
fn clocksource_not_probed() -> Probed<crate::clocksource::Clocksource> {
    Probed::Unknown(hwsurvey_model::Unknown::Other {
        detail: "not probed by the hwsurvey that wrote this document".into(),
    })
}

/// [`Os::virtualization`] of a document written before hwsurvey probed it (its serde
/// default): unknown, "not probed by the hwsurvey that wrote this document". A reader that
/// says "not in this file" for such a value compares with this.
pub fn virtualization_not_probed() -> Probed<crate::virt::Virtualization> {
    Probed::Unknown(hwsurvey_model::Unknown::Other {
        detail: "not probed by the hwsurvey that wrote this document".into(),
    })
}

/// Kernel identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    /// `/proc/sys/kernel/osrelease` (`uname -r`).
    pub release: Probed<String>,
    /// `/proc/sys/kernel/version` (`uname -v`).
    pub version: Probed<String>,
    /// `/proc/sys/kernel/arch` (kernels >= 6.1), else `uname -m` on the live machine (sys
    /// feature; under qemu-user uname reports the emulated machine, the file the real one).
    pub machine: Probed<String>,
}

/// `/etc/os-release` fields (freedesktop os-release(5)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Distro {
    /// `ID` (`debian`).
    pub id: Option<String>,
    /// `NAME`.
    pub name: Option<String>,
    /// `VERSION_ID` (`12`).
    pub version_id: Option<String>,
    /// `PRETTY_NAME`.
    pub pretty_name: Option<String>,
}

/// Parses os-release text: `KEY=value` lines, values optionally single- or double-quoted.
pub fn parse_os_release(text: &str) -> Distro {
    let get = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.trim().split_once('=')?;
            (k == key).then(|| {
                let v = v.trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                    .unwrap_or(v);
                v.replace("\\\"", "\"")
            })
        })
    };
    Distro {
        id: get("ID"),
        name: get("NAME"),
        version_id: get("VERSION_ID"),
        pretty_name: get("PRETTY_NAME"),
    }
}

/// `isolcpus=[flag,...,]cpulist` (Documentation/admin-guide/kernel-parameters.txt).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IsolCpus {
    /// Flags before the list (`nohz`, `domain`, `managed_irq`); none means `domain`.
    pub flags: Vec<String>,
    /// The isolated CPUs.
    pub cpus: CpuSet,
}

/// The kernel command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cmdline {
    /// The whole line, trimmed.
    pub raw: String,
    /// Parameters in order: `name` or `name=value`.
    pub params: Vec<(String, Option<String>)>,
    /// `isolcpus=`, parsed; `Some(Err)`-like problems appear as `Unknown`.
    pub isolcpus: Option<Probed<IsolCpus>>,
    /// `nohz_full=`, parsed.
    pub nohz_full: Option<Probed<CpuSet>>,
    /// `rcu_nocbs=`, parsed.
    pub rcu_nocbs: Option<Probed<CpuSet>>,
}

fn cpulist_param(name: &str, value: &str) -> Probed<CpuSet> {
    match CpuSet::parse_list(value) {
        Ok(s) => Probed::Known(s),
        Err(e) => Probed::Unknown(Unknown::Invalid {
            path: format!("/proc/cmdline {name}="),
            detail: e.to_string(),
        }),
    }
}

/// Parses `/proc/cmdline`. Pure; never fails (bad CPU lists become unknown values).
pub fn parse_cmdline(text: &str) -> Cmdline {
    let raw = text.trim().to_string();
    // Split on white space outside double quotes.
    let mut params = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in raw.chars().chain(std::iter::once(' ')) {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    let p = std::mem::take(&mut cur);
                    match p.split_once('=') {
                        Some((k, v)) => params.push((k.to_string(), Some(v.to_string()))),
                        None => params.push((p, None)),
                    }
                }
            }
            c => cur.push(c),
        }
    }
    let last = |name: &str| {
        params
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.clone())
    };
    let isolcpus = last("isolcpus").map(|v| {
        let mut flags = Vec::new();
        let mut rest: Vec<&str> = Vec::new();
        for item in v.split(',') {
            if rest.is_empty() && item.chars().all(|c| c.is_ascii_alphabetic() || c == '_') {
                flags.push(item.to_string());
            } else {
                rest.push(item);
            }
        }
        cpulist_param("isolcpus", &rest.join(",")).map(|cpus| IsolCpus { flags, cpus })
    });
    Cmdline {
        isolcpus,
        nohz_full: last("nohz_full").map(|v| cpulist_param("nohz_full", &v)),
        rcu_nocbs: last("rcu_nocbs").map(|v| cpulist_param("rcu_nocbs", &v)),
        params,
        raw,
    }
}

/// One cpufreq policy (`/sys/devices/system/cpu/cpufreq/policyN`). Frequencies in kHz as
/// the kernel writes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpufreqPolicy {
    /// `policyN`.
    pub name: String,
    /// `related_cpus` (all CPUs the policy covers, online or not).
    pub cpus: Probed<CpuSet>,
    /// `scaling_driver` (`intel_pstate`, `acpi-cpufreq`, `cppc_cpufreq`).
    pub driver: Probed<String>,
    /// `scaling_governor` (`performance`, `powersave`, `schedutil`, `ondemand`).
    pub governor: Probed<String>,
    /// `scaling_min_freq`, kHz.
    pub scaling_min_khz: Probed<u64>,
    /// `scaling_max_freq`, kHz.
    pub scaling_max_khz: Probed<u64>,
    /// `cpuinfo_min_freq`, kHz (hardware limit).
    pub cpuinfo_min_khz: Probed<u64>,
    /// `cpuinfo_max_freq`, kHz (hardware limit).
    pub cpuinfo_max_khz: Probed<u64>,
}

/// `/sys/devices/system/cpu/smt`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Smt {
    /// `control`: `on`, `off`, `forceoff`, `notsupported`, `notimplemented`.
    pub control: String,
    /// `active`: SMT siblings are online.
    pub active: Probed<bool>,
}

/// One file of `/sys/devices/system/cpu/vulnerabilities`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vulnerability {
    /// File name (`spectre_v2`).
    pub name: String,
    /// Its text (`Not affected`, `Mitigation: ...`, `Vulnerable`).
    pub status: String,
}

/// Parses cpufreq's own CPU list format, used by `policyN/related_cpus` and
/// `policyN/affected_cpus`: decimal CPU numbers each followed by a space, then a newline
/// (`"0 1 2 \n"`, drivers/cpufreq/cpufreq.c `cpufreq_show_cpus`). This is not the kernel
/// cpulist grammar (`0-2`) of the topology files. `None` for any other text, or no CPU at all.
pub fn parse_cpufreq_cpus(text: &str) -> Option<CpuSet> {
    let mut set = CpuSet::new();
    for word in text.split_ascii_whitespace() {
        if !word.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        set.insert(word.parse().ok()?);
    }
    (!set.is_empty()).then_some(set)
}

fn version(v: Option<CgroupVersion>) -> &'static str {
    match v {
        Some(CgroupVersion::V1) => "v1",
        Some(CgroupVersion::V2) => "v2",
        None => "no hierarchy",
    }
}

/// A value for the summary: bounded to [`SHOWN_CHARS`] characters, control characters escaped.
fn show<T: std::fmt::Display>(p: &Probed<T>) -> String {
    match p {
        Probed::Known(v) => shown(&v.to_string()),
        Probed::Unknown(u) => format!("unknown ({})", shown(&u.to_string())),
    }
}

/// The most characters of one value the summary shows (a command line may hold 4096).
const SHOWN_CHARS: usize = 4096;

fn shown(s: &str) -> String {
    hwsurvey_model::text::one_line(s, SHOWN_CHARS).into_owned()
}

/// A readable section (uname -a, os-release, cmdline, cpupower, cgroup limits), concise.
pub fn summary(os: &Os) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "OS");
    let _ = writeln!(
        out,
        "  kernel {} {} ({})",
        show(&os.kernel.release),
        show(&os.kernel.machine),
        show(&os.kernel.version)
    );
    match &os.virtualization {
        Probed::Known(v) => {
            let from: Vec<String> = v.evidence.iter().map(|e| e.source.clone()).collect();
            let _ = if from.is_empty() {
                writeln!(out, "  platform {}", v.summary())
            } else {
                writeln!(out, "  platform {} (from {})", v.summary(), from.join("; "))
            };
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  platform unknown ({u})");
        }
    }
    if let Probed::Known(d) = &os.distro {
        let _ = writeln!(
            out,
            "  distro {}",
            shown(
                &d.pretty_name
                    .clone()
                    .or(d.name.clone())
                    .unwrap_or_else(|| "?".into())
            )
        );
    }
    match &os.cmdline {
        Probed::Known(c) => {
            let _ = writeln!(out, "  cmdline {}", shown(&c.raw));
            if let Some(i) = &c.isolcpus {
                let _ = writeln!(
                    out,
                    "    isolcpus {}",
                    match i {
                        Probed::Known(i) => format!("{} {:?}", i.cpus, i.flags),
                        Probed::Unknown(u) => format!("unknown ({u})"),
                    }
                );
            }
            if let Some(n) = &c.nohz_full {
                let _ = writeln!(out, "    nohz_full {}", show(n));
            }
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  cmdline unknown ({u})");
        }
    }
    match &os.cpufreq {
        Probed::Known(ps) => {
            for p in ps {
                let _ = writeln!(
                    out,
                    "  cpufreq {} cpus {}: {} governor {}, {}-{} kHz (hw {}-{})",
                    p.name,
                    show(&p.cpus),
                    show(&p.driver),
                    show(&p.governor),
                    show(&p.scaling_min_khz),
                    show(&p.scaling_max_khz),
                    show(&p.cpuinfo_min_khz),
                    show(&p.cpuinfo_max_khz)
                );
            }
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  cpufreq unknown ({u})");
        }
    }
    let _ = writeln!(
        out,
        "  SMT {}; numa_balancing {}; KSM run {}",
        match &os.smt {
            Probed::Known(s) => format!("control {} active {}", s.control, show(&s.active)),
            Probed::Unknown(u) => format!("unknown ({u})"),
        },
        show(&os.numa_balancing),
        show(&os.ksm_run)
    );
    let _ = writeln!(
        out,
        "  clocksource {}",
        match &os.clocksource {
            Probed::Known(c) => format!(
                "{} (available: {}){}",
                shown(&c.current),
                match &c.available {
                    Probed::Known(a) => shown(&a.join(" ")),
                    Probed::Unknown(u) => format!("unknown: {}", shown(&u.to_string())),
                },
                match crate::clocksource::kind(&c.current) {
                    crate::clocksource::ClockKind::DeviceRegister => {
                        "; a device register, not a CPU counter: every clock read costs \
                         microseconds"
                    }
                    crate::clocksource::ClockKind::Tick => {
                        "; the tick counter: a resolution of 1-10 ms"
                    }
                    _ => "",
                }
            ),
            Probed::Unknown(u) => format!("unknown ({})", shown(&u.to_string())),
        }
    );
    if let Probed::Known(v) = &os.vulnerabilities {
        let vulnerable: Vec<&str> = v
            .iter()
            .filter(|v| v.status.starts_with("Vulnerable"))
            .map(|v| v.name.as_str())
            .collect();
        let _ = writeln!(
            out,
            "  vulnerabilities: {} listed, vulnerable: {}",
            v.len(),
            if vulnerable.is_empty() {
                "none".to_string()
            } else {
                vulnerable.join(", ")
            }
        );
    }
    match &os.cgroup {
        Probed::Known(c) => {
            let _ = writeln!(
                out,
                "  cgroup cpu {}, cpuset {}, memory {} ({})",
                match &c.cpu_max {
                    // the source names the version ("cgroup v1 cpu.cfs_quota_us (FILE)")
                    Probed::Known(CpuMax {
                        quota_us: Some(q),
                        period_us,
                        source: Some(s),
                    }) => format!("{q}/{period_us} us, from {s}"),
                    Probed::Known(CpuMax {
                        quota_us: Some(q),
                        period_us,
                        source: None,
                    }) => format!("{q}/{period_us} us ({})", version(c.cpu_version)),
                    Probed::Known(_) => format!("unlimited ({})", version(c.cpu_version)),
                    Probed::Unknown(u) => format!("unknown ({u}) ({})", version(c.cpu_version)),
                },
                show(&c.cpuset_cpus),
                match &c.memory_max_bytes {
                    Probed::Known(Some(b)) => hwsurvey_model::units::format_bytes_binary(*b),
                    Probed::Known(None) => "unlimited".into(),
                    Probed::Unknown(u) => format!("unknown ({u})"),
                },
                version(c.memory_version)
            );
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  cgroup unknown ({u})");
        }
    }
    match &os.binary_vs_kernel {
        Probed::Known(b) => {
            let _ = writeln!(
                out,
                "  binary: {}-bit e_machine {} on {} kernel{}",
                b.binary_bits,
                b.binary_e_machine,
                b.kernel_machine,
                b.finding
                    .as_deref()
                    .map(|f| format!(": {f}"))
                    .unwrap_or_else(|| " (native)".into())
            );
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  binary vs kernel: unknown ({u})");
        }
    }
    out
}

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

use hwsurvey_model::{Probed, Unknown};

use crate::live::{read_live_facts, LIVE_FACTS_PATH};
use crate::{ProbeError, SysRoot};

pub mod host_id;

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::os::*;

fn probed<T>(r: Result<T, ProbeError>) -> Probed<T> {
    match r {
        Ok(v) => Probed::Known(v),
        Err(e) => Probed::Unknown(e.into()),
    }
}

/// The longest kernel setting word or one-line string accepted (`/proc/sys/kernel/version`,
/// a cpufreq governor, the SMT control), bytes: the kernel's are under 100; a longer one (a
/// 1 MiB governor once made `qualify` print 2 MB) is a damaged file.
pub const MAX_SETTING_BYTES: usize = 256;

/// A one-line kernel setting: not empty, at most [`MAX_SETTING_BYTES`], and without control
/// characters (ESC, NUL, U+FFFE: no kernel writes them into these files).
fn setting(path: &str, v: String) -> Result<String, ProbeError> {
    if v.is_empty() {
        Err(ProbeError::invalid(path, "a value", ""))
    } else if v.len() > MAX_SETTING_BYTES {
        Err(ProbeError::invalid(
            path,
            format!("a one-line setting of at most {MAX_SETTING_BYTES} bytes"),
            &hwsurvey_model::text::quote(&v).to_string(),
        ))
    } else if v.chars().any(hwsurvey_model::text::is_unsafe) {
        Err(ProbeError::invalid(
            path,
            "a setting without control characters",
            &hwsurvey_model::text::quote(&v).to_string(),
        ))
    } else {
        Ok(v)
    }
}

fn value(root: &SysRoot, path: &str) -> Probed<String> {
    probed(root.read_value(path).and_then(|v| setting(path, v)))
}

fn live_machine() -> Option<String> {
    #[cfg(feature = "sys")]
    {
        nix::sys::utsname::uname()
            .ok()
            .map(|u| u.machine().to_string_lossy().into_owned())
    }
    #[cfg(not(feature = "sys"))]
    {
        None
    }
}

fn kernel(root: &SysRoot) -> Kernel {
    let kept = read_live_facts(root).and_then(|f| f.kernel_machine);
    // /proc/sys/kernel/arch (kernels >= 6.1) first: it is the kernel's own word, while uname
    // under qemu-user reports the emulated machine (aarch64 on an x86_64 kernel), which would
    // hide the emulation from `binary_vs_kernel`. uname, or the snapshot's kept value, else.
    let machine = match value(root, "/proc/sys/kernel/arch") {
        Probed::Known(m) => Probed::Known(m),
        unknown => match root.is_live().then(live_machine).flatten() {
            Some(m) => Probed::Known(m),
            None => kept.unwrap_or(unknown),
        },
    };
    Kernel {
        release: value(root, "/proc/sys/kernel/osrelease"),
        version: value(root, "/proc/sys/kernel/version"),
        machine,
    }
}

fn khz(root: &SysRoot, path: &str) -> Probed<u64> {
    probed(root.read_parsed(path, "a frequency in kHz"))
}

fn cpufreq(root: &SysRoot) -> Probed<Vec<CpufreqPolicy>> {
    const DIR: &str = "/sys/devices/system/cpu/cpufreq";
    let names = match root.list_dir(DIR) {
        Ok(n) => n,
        Err(e) => return Probed::Unknown(e.into()),
    };
    let mut policies: Vec<(u32, String)> = names
        .into_iter()
        .filter_map(|n| Some((n.strip_prefix("policy")?.parse().ok()?, n)))
        .collect();
    policies.sort();
    if policies.is_empty() {
        return Probed::Unknown(Unknown::Other {
            detail: format!("{DIR} has no policyN (no cpufreq driver, e.g. in a VM)"),
        });
    }
    Probed::Known(
        policies
            .into_iter()
            .map(|(_, name)| {
                let d = format!("{DIR}/{name}");
                let cpus_path = format!("{d}/related_cpus");
                CpufreqPolicy {
                    cpus: probed(root.read(&cpus_path).and_then(|t| {
                        parse_cpufreq_cpus(&t).ok_or_else(|| {
                            ProbeError::invalid(
                                &cpus_path,
                                "space-separated CPU numbers like \"0 1 2\"",
                                &t,
                            )
                        })
                    })),
                    driver: value(root, &format!("{d}/scaling_driver")),
                    governor: value(root, &format!("{d}/scaling_governor")),
                    scaling_min_khz: khz(root, &format!("{d}/scaling_min_freq")),
                    scaling_max_khz: khz(root, &format!("{d}/scaling_max_freq")),
                    cpuinfo_min_khz: khz(root, &format!("{d}/cpuinfo_min_freq")),
                    cpuinfo_max_khz: khz(root, &format!("{d}/cpuinfo_max_freq")),
                    name,
                }
            })
            .collect(),
    )
}

fn smt(root: &SysRoot) -> Probed<Smt> {
    const CONTROL: &str = "/sys/devices/system/cpu/smt/control";
    const ACTIVE: &str = "/sys/devices/system/cpu/smt/active";
    match root.read_value(CONTROL) {
        Ok(control) if control.is_empty() => {
            Probed::Unknown(ProbeError::invalid(CONTROL, "on/off/forceoff/notsupported", "").into())
        }
        Ok(control) => match setting(CONTROL, control) {
            Err(e) => Probed::Unknown(e.into()),
            Ok(control) => Probed::Known(Smt {
                control,
                active: probed(root.read_value(ACTIVE).and_then(|v| match v.as_str() {
                    "0" => Ok(false),
                    "1" => Ok(true),
                    _ => Err(ProbeError::invalid(ACTIVE, "0 or 1", &v)),
                })),
            }),
        },
        Err(e) => Probed::Unknown(e.into()),
    }
}

fn vulnerabilities(root: &SysRoot) -> Probed<Vec<Vulnerability>> {
    const DIR: &str = "/sys/devices/system/cpu/vulnerabilities";
    match root.list_dir(DIR) {
        Ok(names) => Probed::Known(
            names
                .into_iter()
                .map(|name| {
                    let status = root
                        .read_value(&format!("{DIR}/{name}"))
                        .unwrap_or_else(|e| format!("unreadable: {e}"));
                    Vulnerability { name, status }
                })
                .collect(),
        ),
        Err(e) => Probed::Unknown(e.into()),
    }
}

fn binary(root: &SysRoot) -> Probed<BinaryElf> {
    if !root.is_live() {
        // A snapshot made by `hwsurvey snapshot` keeps the binary that took it.
        if let Some(b) = read_live_facts(root).and_then(|f| f.binary) {
            return b;
        }
        return Probed::Unknown(Unknown::Other {
            detail: format!(
                "the running binary is not part of a captured snapshot (hwsurvey snapshot \
                 keeps it in {})",
                LIVE_FACTS_PATH
            ),
        });
    }
    use std::io::Read;
    let mut head = [0u8; 64];
    let read = std::fs::File::open("/proc/self/exe").and_then(|mut f| f.read(&mut head));
    match read {
        Ok(n) => match parse_elf_header(head.get(..n).unwrap_or(&[])) {
            Ok(b) => Probed::Known(b),
            Err(detail) => Probed::Unknown(Unknown::Invalid {
                path: "/proc/self/exe".into(),
                detail,
            }),
        },
        Err(e) => Probed::Unknown(Unknown::Invalid {
            path: "/proc/self/exe".into(),
            detail: e.to_string(),
        }),
    }
}

/// Probes the OS under `root`.
pub fn probe(root: &SysRoot) -> Os {
    let kernel = kernel(root);
    let binary = binary(root);
    let binary_vs_kernel = match (&kernel.machine, &binary) {
        (Probed::Known(m), Probed::Known(b)) => Probed::Known(compare_binary(m, b)),
        (Probed::Unknown(u), _) | (_, Probed::Unknown(u)) => Probed::Unknown(u.clone()),
    };
    let distro = match root.read("/etc/os-release") {
        Ok(t) => Probed::Known(parse_os_release(&t)),
        Err(e) if e.is_missing() => probed(
            root.read("/usr/lib/os-release")
                .map(|t| parse_os_release(&t)),
        ),
        Err(e) => Probed::Unknown(e.into()),
    };
    Os {
        distro,
        cmdline: probed(root.read("/proc/cmdline").map(|t| parse_cmdline(&t))),
        cpufreq: cpufreq(root),
        smt: smt(root),
        numa_balancing: probed(root.read_parsed("/proc/sys/kernel/numa_balancing", "0..3")),
        ksm_run: probed(root.read_parsed("/sys/kernel/mm/ksm/run", "0, 1 or 2")),
        vulnerabilities: vulnerabilities(root),
        cgroup: crate::cgroup::probe(root),
        binary,
        binary_vs_kernel,
        virtualization: Probed::Known(crate::virt::probe(root)),
        clocksource: crate::clocksource::probe(root),
        host_id: host_id::probe(root),
        kernel,
    }
}

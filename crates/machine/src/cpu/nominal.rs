//! The CPU's nominal clock: the figure a measured clock (`cpu.clock`) is held against, so
//! that a report can say "measured 3.91 GHz, 1.50x the TSC's 2.60 GHz: turbo or the host's
//! clock" where cpufreq is absent (VMs) and no `perf stat -e cycles` or turbostat runs.
//!
//! Sources, the first that gives a figure:
//! 1. x86 cpuid leaf 0x16 EAX, the processor base frequency in MHz (Intel SDM vol. 2A,
//!    "CPUID—Processor Frequency Information Leaf"; Skylake and later; hypervisors often
//!    return zeros).
//! 2. The model name's own clock, `... @ 2.70GHz` (Intel's brand strings; `/proc/cpuinfo`
//!    `model name`).
//! 3. x86 cpuid leaf 0x15, the TSC's rate: crystal Hz (ECX) x EBX / EAX (SDM, "Time Stamp
//!    Counter and Nominal Core Crystal Clock Information Leaf"), where ECX names the crystal.
//! 4. x86 `/proc/cpuinfo` `bogomips` / 2 with the `tsc` flag: the kernel sets its delay loop
//!    from the TSC (`arch/x86/kernel/tsc.c`: loops_per_jiffy = tsc_khz x 1000 / HZ, and
//!    BogoMIPS = loops_per_jiffy / (500000 / HZ) = tsc_khz / 500), so half of it is the TSC's
//!    rate in MHz to 0.01 MHz (this VM: 5199.99, the kernel's "tsc: Detected 2599.998 MHz").
//!    The TSC runs at the base clock on Intel (the maximum non-turbo ratio) and at P0 on AMD
//!    (the EPYC 7451 capture: 4590.83 / 2 = 2295 MHz, its 2.3 GHz base).
//! 5. sparc64 `Cpu0ClkTck` (hex Hz: the UltraSPARC T1 capture's 0x3b9aca00 = 1.0 GHz, the
//!    tick register's rate, the processor clock), and the MCST sparc64 and e2k `cpu MHz` /
//!    `CpuN MHz` lines (the E16C capture: 2000).
//!
//! arm64 gives none of these to EL0 (`CNTFRQ_EL0` is the generic timer's rate, not the
//! core's): unknown with the reason, as on ppc64 and others.

use hwsurvey_model::{Probed, Unknown};
use serde::{Deserialize, Serialize};

use super::cpuinfo::{Arch, Cpuinfo};
use super::x86::CpuidInfo;

/// What a nominal clock is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NominalKind {
    /// The processor base frequency (cpuid leaf 0x16).
    BaseClock,
    /// The clock the model name states (`@ 2.70GHz`).
    ModelName,
    /// The TSC's rate (cpuid leaf 0x15, or bogomips / 2).
    Tsc,
    /// The clock the kernel reports for a CPU without cpufreq (sparc64 `ClkTck`, e2k and MCST
    /// sparc64 `cpu MHz`).
    Kernel,
}

impl NominalKind {
    /// What it is, for people: `TSC rate`, `base clock`.
    pub fn name(self) -> &'static str {
        match self {
            NominalKind::BaseClock => "base clock",
            NominalKind::ModelName => "model name's clock",
            NominalKind::Tsc => "TSC rate",
            NominalKind::Kernel => "kernel's CPU clock",
        }
    }

    /// Words for people, possessive: `the TSC's`, `the base clock's`.
    pub fn words(self) -> &'static str {
        match self {
            NominalKind::BaseClock => "the base clock's",
            NominalKind::ModelName => "the model name's",
            NominalKind::Tsc => "the TSC's",
            NominalKind::Kernel => "the kernel's",
        }
    }
}

/// A nominal clock and where it was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NominalClock {
    /// The clock, Hz.
    pub hz: f64,
    /// What it is.
    pub kind: NominalKind,
    /// Where it was read, with the text read: `cpuid leaf 0x16 EAX = 2600 MHz`,
    /// `/proc/cpuinfo bogomips 5199.99 / 2`.
    pub source: String,
}

/// `Probed` value for documents written before the nominal clock was kept.
pub fn not_recorded() -> Probed<NominalClock> {
    Probed::Unknown(Unknown::Other {
        detail: "not recorded (the document predates the nominal clock)".into(),
    })
}

/// The clock a model name states: `Intel(R) Xeon(R) CPU E5-2680 0 @ 2.70GHz` -> 2.7e9 Hz
/// (also `MHz`); `None` without an `@ <number>GHz|MHz` at its end.
pub fn model_name_hz(model: &str) -> Option<f64> {
    let (_, tail) = model.rsplit_once('@')?;
    let tail = tail.trim();
    let (number, scale) = if let Some(n) = tail.strip_suffix("GHz") {
        (n, 1e9)
    } else {
        (tail.strip_suffix("MHz")?, 1e6)
    };
    let v: f64 = number.trim().parse().ok()?;
    (v.is_finite() && v > 0.0).then_some(v * scale)
}

/// The nominal clock of a CPU of `arch`, from its cpuid (x86, live or kept in a snapshot) and
/// `/proc/cpuinfo`; unknown with what was looked at.
pub fn nominal_clock(
    arch: Arch,
    cpuid: &Probed<CpuidInfo>,
    cpuinfo: Option<&Cpuinfo>,
) -> Probed<NominalClock> {
    let known = |hz: f64, kind, source: String| Probed::Known(NominalClock { hz, kind, source });
    let id = cpuid.known();
    if let Some(mhz) = id.and_then(|c| c.base_mhz) {
        return known(
            mhz as f64 * 1e6,
            NominalKind::BaseClock,
            format!("cpuid leaf 0x16 EAX = {mhz} MHz"),
        );
    }
    if let Some(name) = cpuinfo.and_then(|c| c.model_name.as_deref()) {
        if let Some(hz) = model_name_hz(name) {
            return known(
                hz,
                NominalKind::ModelName,
                format!("/proc/cpuinfo model name \"{}\"", name.trim()),
            );
        }
    }
    if let Some(hz) = id.and_then(|c| c.tsc_hz) {
        return known(
            hz as f64,
            NominalKind::Tsc,
            format!("cpuid leaf 0x15 (crystal x EBX / EAX) = {hz} Hz"),
        );
    }
    let x86 = matches!(arch, Arch::X86_64 | Arch::X86);
    if let Some(c) = cpuinfo {
        if let Some(b) = c.bogomips.filter(|b| x86 && *b > 0.0) {
            if c.flags.iter().any(|f| f == "tsc") {
                return known(
                    b / 2.0 * 1e6,
                    NominalKind::Tsc,
                    format!("/proc/cpuinfo bogomips {b:.2} / 2, the kernel timing its delay loop by the TSC"),
                );
            }
        }
        if let Some(hz) = c.clock_tick_hz.filter(|h| *h > 0) {
            return known(
                hz as f64,
                NominalKind::Kernel,
                format!("/proc/cpuinfo Cpu0ClkTck = {hz:#x} Hz"),
            );
        }
        if matches!(arch, Arch::Sparc64 | Arch::E2k) {
            if let Some(mhz) = c.cpus.iter().find_map(|p| p.mhz).filter(|m| *m > 0.0) {
                return known(
                    mhz * 1e6,
                    NominalKind::Kernel,
                    format!("/proc/cpuinfo cpu MHz = {mhz}"),
                );
            }
        }
    }
    Probed::Unknown(if x86 {
        Unknown::Other {
            detail: "cpuid leaf 0x16 gives no base clock (hypervisors often hide it), the model \
                     name states no GHz, cpuid leaf 0x15 names no crystal, and /proc/cpuinfo \
                     gives no bogomips with the tsc flag"
                .into(),
        }
    } else {
        Unknown::NotOnThisPlatform {
            detail: format!(
                "{} names no CPU clock where a process can read it (no cpuid; arm64's \
                 CNTFRQ_EL0 is the timer's rate); cpufreq's cpuinfo_max_freq, where a driver \
                 exists, is the clock to go by",
                arch.as_str()
            ),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_name_clock() {
        assert_eq!(
            model_name_hz("Intel(R) Xeon(R) CPU E5-2680 0 @ 2.70GHz"),
            Some(2.7e9)
        );
        assert_eq!(
            model_name_hz("Intel(R) Xeon(R) CPU           X7550  @ 2.00GHz"),
            Some(2.0e9)
        );
        assert_eq!(
            model_name_hz("Intel(R) Pentium(R) M @ 1600MHz"),
            Some(1.6e9)
        );
        assert_eq!(model_name_hz("AMD EPYC 7451 24-Core Processor"), None);
        assert_eq!(model_name_hz("Intel(R) Xeon(R) Processor"), None);
        assert_eq!(model_name_hz("odd @ fastGHz"), None);
        assert_eq!(model_name_hz("odd @ -1GHz"), None);
    }
}

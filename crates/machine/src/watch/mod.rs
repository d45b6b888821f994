//! The hardware watch: what a run reads just before and just after every measured point to
//! see the hardware misbehave while it measured, and what it keeps of it.
//!
//! Sources (found once per run by `hwsurvey_probe::watch::discover`, read by
//! `hwsurvey_probe::watch::read`, outside the family's timed samples):
//! - EDAC, `/sys/devices/system/edac/mc/mcM/dimmN/dimm_{ce,ue}_count` with `dimm_label` and
//!   `dimm_location` (csrow drivers: `csrowN/{ce,ue}_count` and `ch0_dimm_label`), and
//!   `mcM/{ce,ue}_noinfo_count` (errors the driver could not put on a DIMM); the slot of each
//!   DIMM from the SMBIOS Type 17 record its label names ([`slot::slot_of`]);
//! - PCIe AER, `/sys/bus/pci/devices/<address>/aer_dev_{correctable,nonfatal,fatal}`
//!   ([`aer`], Linux 5.1+), and each PCIe link's `current_link_{speed,width}` against the
//!   state it had before the point and its `max_link_{speed,width}`;
//! - thermal throttling, `/sys/devices/system/cpu/cpuN/thermal_throttle/core_throttle_count`
//!   (one CPU per core) and `package_throttle_count` (one CPU per package; x86 `therm_throt`);
//! - cpufreq, `cpuN/cpufreq/scaling_cur_freq` of the point's CPUs right after it, against
//!   `cpuinfo_max_freq` (kHz);
//! - the kernel log, `/dev/kmsg` followed from the run's start ([`kmsg`]: machine checks,
//!   EDAC and AER lines, `[Hardware Error]`);
//! - the measured clock at the run's start and end (an add chain at 1 thread, [`ClockWatch`]).
//!
//! A counter is cumulative: a point's figure is the difference of the two readings. What a
//! run keeps (docs/result-format.md, `watch` and `tests[].watch`): per point a [`WatchDelta`]
//! that lists only what moved (an empty list is "read, and nothing moved"); once per run what
//! is watched, or why a source is not ([`SourceState`], absent is not zero), the DIMMs and
//! their slots ([`DimmSlot`]), the clock, and the totals over the run.

pub mod aer;
pub mod kmsg;
pub mod plan;
pub mod slot;

use hwsurvey_model::Unknown;
use serde::{Deserialize, Serialize};

pub use aer::{AerSeverity, AerStats};
pub use kmsg::{LogEvent, LogKind, LogSeverity};
pub use plan::{
    delta, AerFunction, CountRead, EdacUnit, LinkWatch, ThrottleCounter, WatchPlan, WatchReading,
};

/// One source of the watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WatchSource {
    /// EDAC memory error counters.
    Edac,
    /// PCIe AER counters.
    Aer,
    /// PCIe link speed and width.
    Link,
    /// x86 thermal throttle counters.
    ThermalThrottle,
    /// cpufreq's current frequency against the maximum.
    Cpufreq,
    /// Hardware-error lines of the kernel log.
    KernelLog,
}

impl WatchSource {
    /// Every source, in the order the file lists them.
    pub const ALL: [WatchSource; 6] = [
        WatchSource::Edac,
        WatchSource::Aer,
        WatchSource::Link,
        WatchSource::ThermalThrottle,
        WatchSource::Cpufreq,
        WatchSource::KernelLog,
    ];

    /// In words: `EDAC`, `PCIe AER`, `PCIe links`, `thermal throttle counters`, `cpufreq`,
    /// `kernel log`.
    pub fn words(self) -> &'static str {
        match self {
            WatchSource::Edac => "EDAC",
            WatchSource::Aer => "PCIe AER",
            WatchSource::Link => "PCIe links",
            WatchSource::ThermalThrottle => "thermal throttle counters",
            WatchSource::Cpufreq => "cpufreq",
            WatchSource::KernelLog => "kernel log",
        }
    }

    /// Whether it can see a hardware error (EDAC, AER, the kernel log), as against the link
    /// state, throttling and the clock.
    pub fn sees_errors(self) -> bool {
        matches!(
            self,
            WatchSource::Edac | WatchSource::Aer | WatchSource::KernelLog
        )
    }
}

/// What a run watches of one source, said once: how many counters or files, which, or why
/// none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceState {
    /// The source.
    pub source: WatchSource,
    /// Counters (or links, CPUs) read before and after every point; 0 when unavailable.
    pub watched: usize,
    /// What they are, with their files: `16 DIMMs on mc0-mc1 (/sys/devices/system/edac/mc/
    /// mc*/dimm*/dimm_{ce,ue}_count)`.
    pub what: String,
    /// Why the source is not watched (no EDAC driver, no function with AER statistics, no
    /// thermal_throttle folder: not x86 or a VM, `/dev/kmsg` root-only); `None` when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<Unknown>,
}

/// An EDAC DIMM (or csrow, or a controller's unattributed errors) and its slot, said once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DimmSlot {
    /// `mc0/dimm3`, `mc1/csrow0`, `mc0/noinfo` (errors the driver put on no DIMM).
    pub dimm: String,
    /// `dimm_label` (`ch0_dimm_label` of a csrow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// `dimm_location` (`csrow 0 channel 1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The SMBIOS Type 17 Locator the label names ([`slot::slot_of`]), where they agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
    /// How the slot was found, or why there is none.
    pub slot_note: String,
}

impl DimmSlot {
    /// The DIMM for people: `DIMM B2 (mc0/dimm3)` (`DIMM_P0_B0 (mc0/dimm1)` where the locator
    /// says DIMM itself), else `mc0/dimm3 (CPU_SrcID#0_MC#0_Chan#1_DIMM#0)`.
    pub fn words(&self) -> String {
        dimm_words(&self.dimm, self.slot.as_deref(), self.label.as_deref())
    }
}

/// `DIMM B2 (mc0/dimm3)`; a locator that names itself a DIMM (`DIMM_P0_B0`) as it is.
fn dimm_words(dimm: &str, slot: Option<&str>, label: Option<&str>) -> String {
    match (slot, label) {
        (Some(s), _) if s.to_ascii_uppercase().contains("DIMM") => format!("{s} ({dimm})"),
        (Some(s), _) => format!("DIMM {s} ({dimm})"),
        (None, Some(l)) => format!("{dimm} ({l})"),
        (None, None) => dimm.to_string(),
    }
}

/// One clock measurement of the watch: an add chain on one CPU (the `cpu.clock` method).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockReading {
    /// The OS CPU it ran on (pinned).
    pub cpu: u32,
    /// Adds per second of the thread's own CPU time, Hz: the clock where `reliable`.
    pub clock_hz: f64,
    /// How long the timed chain ran, seconds.
    pub seconds: f64,
    /// The chain (`asm_add_chain_x86_64`, `portable_add_chain`).
    pub method: String,
    /// One add per cycle holds (an assembly chain): the figure is a clock.
    pub reliable: bool,
}

/// The measured clock at the run's start and its end: a drop shows throttling where no
/// counter exists (VMs, arm64).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockWatch {
    /// Before the first point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<ClockReading>,
    /// After the last point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<ClockReading>,
    /// Why a reading is missing (no clock check in this build, the run interrupted, the
    /// chain failed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// Why the readings are no CPU clock, where they are not (full-system emulation: the
    /// chain times the emulator's pace, which moves with the host's load); a drop between them
    /// is then no throttling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_a_clock: Option<String>,
}

impl ClockWatch {
    /// How far the end's clock lies below the start's, percent (negative: above); `None`
    /// unless both were measured on one CPU by a reliable chain, and on no emulator
    /// ([`ClockWatch::not_a_clock`]).
    pub fn drop_pct(&self) -> Option<f64> {
        if self.not_a_clock.is_some() {
            return None;
        }
        let (s, e) = (self.start.as_ref()?, self.end.as_ref()?);
        (s.reliable && e.reliable && s.cpu == e.cpu && s.clock_hz > 0.0)
            .then(|| (s.clock_hz - e.clock_hz) / s.clock_hz * 100.0)
    }
}

/// The errors one EDAC DIMM counted during a point (or a run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdacDelta {
    /// `mc0/dimm3` ([`DimmSlot::dimm`]).
    pub dimm: String,
    /// Its SMBIOS slot, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
    /// Its `dimm_label`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Corrected errors (`dimm_ce_count` after less before).
    pub corrected: u64,
    /// Uncorrected errors (`dimm_ue_count`).
    pub uncorrected: u64,
}

impl EdacDelta {
    /// `DIMM B2 (mc0/dimm3)`, else the EDAC name and label.
    pub fn words(&self) -> String {
        dimm_words(&self.dimm, self.slot.as_deref(), self.label.as_deref())
    }
}

/// The AER errors one PCI function counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AerDelta {
    /// `0000:01:00.0`.
    pub device: String,
    /// What it is (`Non-Volatile memory controller`, `PCI bridge`), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `TOTAL_ERR_COR` after less before.
    pub correctable: u64,
    /// `TOTAL_ERR_NONFATAL`.
    pub nonfatal: u64,
    /// `TOTAL_ERR_FATAL`.
    pub fatal: u64,
    /// The error kinds that rose, `RxErr +1`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
}

impl AerDelta {
    /// `0000:01:00.0 (Non-Volatile memory controller)`.
    pub fn words(&self) -> String {
        match &self.name {
            Some(n) => format!("{} ({n})", self.device),
            None => self.device.clone(),
        }
    }
}

/// A PCIe link state: rate and lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkState {
    /// Per-lane transfer rate, MT/s (8000 = 8 GT/s).
    pub speed_mt_per_s: u32,
    /// Lanes.
    pub width: u32,
}

impl std::fmt::Display for LinkState {
    /// `8 GT/s x8`, `2.5 GT/s x1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let gt = f64::from(self.speed_mt_per_s) / 1000.0;
        write!(f, "{gt} GT/s x{}", self.width)
    }
}

/// A link whose speed or width changed between two readings: it retrained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkChange {
    /// `0000:00:01.0`.
    pub device: String,
    /// What it is, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `8 GT/s x8`.
    pub before: String,
    /// `2.5 GT/s x8`.
    pub after: String,
    /// `max_link_{speed,width}`, where readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    /// It ended below its maximum speed or width.
    pub below_max: bool,
}

/// Which thermal throttle counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThrottleKind {
    /// `core_throttle_count`: the core went over its temperature limit (PROCHOT).
    Core,
    /// `package_throttle_count`: the package did.
    Package,
}

/// Throttle events one counter counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThrottleDelta {
    /// Core or package.
    pub kind: ThrottleKind,
    /// The CPU whose file was read.
    pub cpu: u32,
    /// Its package (`physical_package_id`), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<i64>,
    /// Events (the counter after less before).
    pub events: u64,
}

impl ThrottleDelta {
    /// `package 0 (CPU 0): 3 events`, `core of CPU 5: 1 event`.
    pub fn words(&self) -> String {
        let n = hwsurvey_model::units::plural(self.events, "event");
        match (self.kind, self.package) {
            (ThrottleKind::Package, Some(p)) => format!("package {p} (CPU {}): {n}", self.cpu),
            (ThrottleKind::Package, None) => format!("package of CPU {}: {n}", self.cpu),
            (ThrottleKind::Core, _) => format!("core of CPU {}: {n}", self.cpu),
        }
    }
}

/// The lowest cpufreq current frequency over maximum among a point's CPUs, read right after
/// it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpufreqLow {
    /// The CPU.
    pub cpu: u32,
    /// `scaling_cur_freq`, kHz.
    pub cur_khz: u64,
    /// `cpuinfo_max_freq`, kHz.
    pub max_khz: u64,
}

impl CpufreqLow {
    /// `cur_khz / max_khz`.
    pub fn ratio(&self) -> f64 {
        self.cur_khz as f64 / self.max_khz.max(1) as f64
    }
}

/// Most kernel-log events kept for one point; the rest are counted in
/// [`WatchDelta::kernel_log_more`].
pub const MAX_POINT_LOG_EVENTS: usize = 32;
/// Most kept for a run's totals.
pub const MAX_RUN_LOG_EVENTS: usize = 256;

/// What the watch saw between two readings: a point's own (`tests[].watch`) or the run's
/// totals (`watch.totals`). Each list holds only what moved: a watched counter that is not in
/// it read the same before and after. Counters that could not be read are in `problems`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchDelta {
    /// Seconds between the readings.
    pub seconds: f64,
    /// EDAC DIMMs that counted errors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edac: Vec<EdacDelta>,
    /// PCI functions that counted AER errors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aer: Vec<AerDelta>,
    /// Links that retrained.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkChange>,
    /// Thermal throttle counters that rose.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throttle: Vec<ThrottleDelta>,
    /// Hardware-error lines of the kernel log read (at most [`MAX_POINT_LOG_EVENTS`], or
    /// [`MAX_RUN_LOG_EVENTS`] in the totals).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_log: Vec<LogEvent>,
    /// Hardware-error lines beyond those kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kernel_log_more: u64,
    /// The lowest cpufreq current frequency against its maximum among the point's CPUs
    /// (points only; where readable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpufreq: Option<CpufreqLow>,
    /// Counters that gave no figure this time, one line each (a read failed, a counter went
    /// backwards: the driver reloaded or its counters were reset).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl WatchDelta {
    /// Whether any error was seen: an EDAC or AER count rose, or a hardware-error event of
    /// the kernel log was read.
    pub fn has_errors(&self) -> bool {
        !self.edac.is_empty()
            || !self.aer.is_empty()
            || self.kernel_log.iter().any(|e| e.is_event())
    }

    /// Whether a thermal throttle counter rose.
    pub fn throttled(&self) -> bool {
        !self.throttle.is_empty()
    }

    /// The marks of a point measured under these circumstances, as compare prints them:
    /// `throttled during this point`, `hardware errors during this point`, `PCIe link
    /// retrained during this point`; empty for a sound point.
    pub fn marks(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.throttled() {
            out.push(THROTTLED_MARK);
        }
        if self.has_errors() {
            out.push(ERRORS_MARK);
        }
        if !self.links.is_empty() {
            out.push(LINK_MARK);
        }
        out
    }

    /// Every uncorrected error and machine check, one line each, naming what it happened on:
    /// `uncorrected: 1 on DIMM B2 (mc0/dimm3)`, `machine check on CPU 1 bank 4 (uncorrected)`,
    /// `uncorrectable non-fatal AER: 1 on 0000:00:1c.0 (PCI bridge)`.
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        for d in self.edac.iter().filter(|d| d.uncorrected > 0) {
            out.push(format!(
                "{} uncorrected memory {} on {}",
                d.uncorrected,
                if d.uncorrected == 1 {
                    "error"
                } else {
                    "errors"
                },
                d.words()
            ));
        }
        for a in &self.aer {
            for (n, sev) in [
                (a.nonfatal, AerSeverity::Nonfatal),
                (a.fatal, AerSeverity::Fatal),
            ] {
                if n > 0 {
                    out.push(format!(
                        "{n} {} AER error{} on {}",
                        sev.words(),
                        if n == 1 { "" } else { "s" },
                        a.words()
                    ));
                }
            }
        }
        // `Machine check events logged` says again what a `CPU n ... Bank m` line of the
        // same reading said
        let banked = self
            .kernel_log
            .iter()
            .any(|e| e.kind == LogKind::MachineCheck && e.bank.is_some());
        for e in self.kernel_log.iter().filter(|e| e.is_event()) {
            let bad = e.kind == LogKind::MachineCheck
                || matches!(e.severity, LogSeverity::Uncorrected | LogSeverity::Fatal);
            if !bad || (e.kind == LogKind::MachineCheck && e.bank.is_none() && banked) {
                continue;
            }
            // counted above already: an AER line for a device whose counters moved, an
            // EDAC line where a DIMM counted an uncorrected error
            let counted = match e.kind {
                LogKind::Pcie => e.device.as_ref().is_some_and(|d| {
                    self.aer
                        .iter()
                        .any(|a| &a.device == d && a.nonfatal + a.fatal > 0)
                }),
                LogKind::Memory => self.edac.iter().any(|d| d.uncorrected > 0),
                _ => false,
            };
            if counted {
                continue;
            }
            let severity = match e.severity {
                LogSeverity::Fatal => " (fatal)",
                LogSeverity::Uncorrected => " (uncorrected)",
                LogSeverity::Corrected => " (corrected)",
                LogSeverity::Unknown => "",
            };
            out.push(match e.subject() {
                Some(s) => format!("{} on {s}{severity}: {}", e.kind.words(), e.text),
                None => format!("{}{severity}: {}", e.kind.words(), e.text),
            });
        }
        out
    }

    /// Corrected errors per subject (`DIMM B2 (mc0/dimm3)`, `0000:01:00.0 (...)`): the EDAC
    /// and AER counters, and the kernel log's corrected events of a subject no counter
    /// covers; in order of first appearance.
    pub fn corrected(&self) -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = Vec::new();
        let mut add = |who: String, n: u64| match out.iter_mut().find(|(w, _)| *w == who) {
            Some(e) => e.1 += n,
            None => out.push((who, n)),
        };
        for d in self.edac.iter().filter(|d| d.corrected > 0) {
            add(d.words(), d.corrected);
        }
        for a in self.aer.iter().filter(|a| a.correctable > 0) {
            add(a.words(), a.correctable);
        }
        for e in self
            .kernel_log
            .iter()
            .filter(|e| e.is_event() && e.severity == LogSeverity::Corrected)
        {
            let covered = match e.kind {
                LogKind::Pcie => e
                    .device
                    .as_ref()
                    .is_some_and(|d| self.aer.iter().any(|a| &a.device == d)),
                LogKind::Memory => !self.edac.is_empty(),
                _ => false,
            };
            if !covered && e.kind != LogKind::MachineCheck {
                add(e.subject().unwrap_or_else(|| e.kind.words().to_string()), 1);
            }
        }
        out
    }
}

/// The mark of a point during which a thermal throttle counter rose.
pub const THROTTLED_MARK: &str = "throttled during this point";
/// The mark of a point during which errors were counted or logged.
pub const ERRORS_MARK: &str = "hardware errors during this point";
/// The mark of a point during which a PCIe link retrained.
pub const LINK_MARK: &str = "PCIe link retrained during this point";

/// The watch of a whole run, said once (the result file's `watch`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunWatch {
    /// Each source: what is watched, or why not.
    pub sources: Vec<SourceState>,
    /// The EDAC DIMMs watched and their slots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dimms: Vec<DimmSlot>,
    /// The measured clock at the start and the end.
    #[serde(default)]
    pub clock: ClockWatch,
    /// From the reading before the first point to the one after the latest point (updated
    /// after every point), the kernel log's events with the point they fell in; `None`
    /// before the first point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub totals: Option<WatchDelta>,
}

impl RunWatch {
    /// The state of `source`, when the file says.
    pub fn source(&self, source: WatchSource) -> Option<&SourceState> {
        self.sources.iter().find(|s| s.source == source)
    }

    /// The sources not watched, with why: `EDAC (no EDAC driver ...)`.
    pub fn unwatched(&self) -> Vec<String> {
        self.sources
            .iter()
            .filter_map(|s| {
                s.unavailable
                    .as_ref()
                    .map(|why| format!("{} ({why})", s.source.words()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;

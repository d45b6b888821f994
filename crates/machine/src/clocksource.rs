//! The kernel's clocksource: the counter behind `clock_gettime(CLOCK_MONOTONIC)`, which every
//! timed figure of a run reads (the open-loop service driver reads it two or three times a
//! request).
//!
//! Sources: `/sys/devices/system/clocksource/clocksource0/current_clocksource` (one word) and
//! `available_clocksource` (words separated by spaces), Linux
//! `Documentation/timers/timekeeping.rst` and the `clocksource=` parameter of
//! `Documentation/admin-guide/kernel-parameters.txt`.
//!
//! The kernel may change the clocksource while it runs: its watchdog marks the TSC unstable
//! ("Marking clocksource 'tsc' as unstable because the skew is too large") and falls back to
//! the HPET or the ACPI PM timer, whose every read is a device register access. Measured
//! 2026-12-04 in the 2-vCPU x86 guest (TCG): the critical rate of `service.point_select` was
//! 1.3-1.5 M/s with `tsc-early` and 30 k/s with `clocksource=hpet`; in CI the change came in
//! the middle of a run, after the closed loop and before the open-loop search.

use hwsurvey_model::Probed;
use serde::{Deserialize, Serialize};

/// Clocksources read from a device register rather than a CPU counter: the x86 HPET, the ACPI
/// PM timer and the i8253 PIT. Each read costs microseconds.
pub const DEVICE_CLOCKSOURCES: &[&str] = &["hpet", "acpi_pm", "pit"];

/// The tick counters: their resolution is the scheduler tick, 1-10 ms, so they cannot time a
/// request of microseconds at all.
pub const TICK_CLOCKSOURCES: &[&str] = &["jiffies", "refined-jiffies"];

/// Clocksources that read a counter of the CPU or one the hypervisor keeps in step with it,
/// each read in nanoseconds: `tsc` (x86; `tsc-early` before its refined calibration),
/// `kvm-clock`, `hyperv_clocksource_tsc_page`, `xen` (paravirtual clocks), `arch_sys_counter`
/// (the Arm generic timer), `timebase` (powerpc), `tod` (s390), `stick`, `tick`, `hbtick`
/// (sparc64), `riscv_clocksource`.
pub const CPU_COUNTER_CLOCKSOURCES: &[&str] = &[
    "tsc",
    "tsc-early",
    "kvm-clock",
    "hyperv_clocksource_tsc_page",
    "xen",
    "arch_sys_counter",
    "timebase",
    "tod",
    "stick",
    "tick",
    "hbtick",
    "riscv_clocksource",
];

/// What a clocksource reads, as far as hwsurvey knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockKind {
    /// One of [`CPU_COUNTER_CLOCKSOURCES`].
    CpuCounter,
    /// One of [`DEVICE_CLOCKSOURCES`].
    DeviceRegister,
    /// One of [`TICK_CLOCKSOURCES`].
    Tick,
    /// A name hwsurvey does not know.
    Unknown,
}

/// What the clocksource `name` reads.
pub fn kind(name: &str) -> ClockKind {
    if CPU_COUNTER_CLOCKSOURCES.contains(&name) {
        ClockKind::CpuCounter
    } else if DEVICE_CLOCKSOURCES.contains(&name) {
        ClockKind::DeviceRegister
    } else if TICK_CLOCKSOURCES.contains(&name) {
        ClockKind::Tick
    } else {
        ClockKind::Unknown
    }
}

/// The kernel's clocksource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clocksource {
    /// `current_clocksource`, e.g. `tsc`, `kvm-clock`, `arch_sys_counter`, `hpet`.
    pub current: String,
    /// `available_clocksource`, in the kernel's order.
    pub available: Probed<Vec<String>>,
}

impl Clocksource {
    /// Whether the current clocksource is a device register or a tick counter (see [`kind`]).
    pub fn is_slow(&self) -> bool {
        is_slow(&self.current)
    }
}

/// Whether `name` is a device register or a tick counter (see [`kind`]).
pub fn is_slow(name: &str) -> bool {
    matches!(kind(name), ClockKind::DeviceRegister | ClockKind::Tick)
}

/// Whether `word` can be a clocksource name: 1 to 64 ASCII letters, digits, `_`, `-` or `.`
/// (the kernel's names are C identifiers with dashes).
pub fn is_name(word: &str) -> bool {
    (1..=64).contains(&word.len())
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Whether two clocksource names read the same counter: `tsc-early` (the boot-time TSC,
/// before its refined calibration) and `tsc` do; the kernel switches from one to the other
/// about a second after boot, which changes no cost.
pub fn same_counter(a: &str, b: &str) -> bool {
    counter(a) == counter(b)
}

/// The counter a clocksource name reads: `tsc-early` reads `tsc`; other names are their own.
pub fn counter(name: &str) -> &str {
    name.strip_suffix("-early").unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsc_early_and_tsc_are_one_counter_hpet_is_another() {
        assert!(same_counter("tsc-early", "tsc"));
        assert!(same_counter("tsc", "tsc"));
        assert!(!same_counter("tsc-early", "hpet"));
        assert!(!same_counter("kvm-clock", "tsc"));
        assert!(is_slow("hpet") && is_slow("acpi_pm") && !is_slow("tsc-early"));
        assert_eq!(kind("jiffies"), ClockKind::Tick);
        assert_eq!(kind("foo"), ClockKind::Unknown);
        assert!(!is_name("tsc\0") && !is_name("") && is_name("refined-jiffies"));
    }
}

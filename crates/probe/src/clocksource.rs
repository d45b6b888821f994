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

use hwsurvey_model::{Probed, Unknown};
use serde::{Deserialize, Serialize};

use crate::SysRoot;

/// The clocksource in use.
pub const CURRENT_PATH: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
/// The clocksources the kernel could use.
pub const AVAILABLE_PATH: &str =
    "/sys/devices/system/clocksource/clocksource0/available_clocksource";

/// Clocksources read from a device register rather than a CPU counter: the x86 HPET, the ACPI
/// PM timer and the i8253 PIT, and the tick counters `jiffies` / `refined-jiffies` (a
/// resolution of 1-10 ms). Each read of the first three costs microseconds, and the tick
/// counters cannot time a microsecond request at all.
pub const SLOW_CLOCKSOURCES: &[&str] = &["hpet", "acpi_pm", "pit", "jiffies", "refined-jiffies"];

/// The kernel's clocksource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clocksource {
    /// `current_clocksource`, e.g. `tsc`, `kvm-clock`, `arch_sys_counter`, `hpet`.
    pub current: String,
    /// `available_clocksource`, in the kernel's order (empty when the file is missing).
    pub available: Vec<String>,
}

impl Clocksource {
    /// Whether the current clocksource is one of [`SLOW_CLOCKSOURCES`].
    pub fn is_slow(&self) -> bool {
        is_slow(&self.current)
    }
}

/// Whether `name` is one of [`SLOW_CLOCKSOURCES`].
pub fn is_slow(name: &str) -> bool {
    SLOW_CLOCKSOURCES.contains(&name)
}

/// Whether two clocksource names read the same counter: `tsc-early` (the boot-time TSC,
/// before its refined calibration) and `tsc` do; the kernel switches from one to the other
/// about a second after boot, which changes no cost.
pub fn same_counter(a: &str, b: &str) -> bool {
    let base = |s: &str| s.strip_suffix("-early").unwrap_or(s).to_string();
    base(a) == base(b)
}

/// Reads [`CURRENT_PATH`] under `root`: one word. Errors (missing file, not one word) are an
/// unknown naming the file and the text.
pub fn current(root: &SysRoot) -> Probed<String> {
    match root.read(CURRENT_PATH) {
        Ok(t) => {
            let word = t.trim();
            if word.is_empty() || word.contains(char::is_whitespace) || word.len() > 64 {
                Probed::Unknown(Unknown::Invalid {
                    path: CURRENT_PATH.into(),
                    detail: format!(
                        "expected one clocksource name, got {}",
                        hwsurvey_model::text::quote(word)
                    ),
                })
            } else {
                Probed::Known(word.to_string())
            }
        }
        Err(e) => Probed::Unknown(e.into()),
    }
}

/// Probes the clocksource under `root` (see the module doc); the list of available ones is
/// empty when its file cannot be read.
pub fn probe(root: &SysRoot) -> Probed<Clocksource> {
    current(root).map(|current| Clocksource {
        current,
        available: root
            .read(AVAILABLE_PATH)
            .map(|t| t.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
    })
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
    }
}

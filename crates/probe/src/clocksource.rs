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

use crate::SysRoot;

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::clocksource::*;

/// The clocksource in use.
pub const CURRENT_PATH: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
/// The clocksources the kernel could use.
pub const AVAILABLE_PATH: &str =
    "/sys/devices/system/clocksource/clocksource0/available_clocksource";

/// Reads [`CURRENT_PATH`] under `root`: one word. Errors (missing file, not one word) are an
/// unknown naming the file and the text.
pub fn current(root: &SysRoot) -> Probed<String> {
    match root.read(CURRENT_PATH) {
        Ok(t) => {
            let word = t.trim();
            if !is_name(word) {
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

/// Reads [`AVAILABLE_PATH`] under `root`: names separated by spaces. A file without a name,
/// or with a word that cannot be one, is an unknown naming the file and the text.
pub fn available(root: &SysRoot) -> Probed<Vec<String>> {
    match root.read(AVAILABLE_PATH) {
        Ok(t) => {
            let words: Vec<&str> = t.split_whitespace().collect();
            if words.is_empty() || !words.iter().all(|w| is_name(w)) {
                Probed::Unknown(Unknown::Invalid {
                    path: AVAILABLE_PATH.into(),
                    detail: format!(
                        "expected clocksource names separated by spaces, got {}",
                        hwsurvey_model::text::quote(t.trim())
                    ),
                })
            } else {
                Probed::Known(words.into_iter().map(str::to_string).collect())
            }
        }
        Err(e) => Probed::Unknown(e.into()),
    }
}

/// Probes the clocksource under `root` (see the module doc).
pub fn probe(root: &SysRoot) -> Probed<Clocksource> {
    current(root).map(|current| Clocksource {
        current,
        available: available(root),
    })
}

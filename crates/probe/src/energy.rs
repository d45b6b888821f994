//! Energy counters the kernel exposes, read around a measured point: which counters exist
//! ([`discover`]), one reading of all of them ([`read`]), and the energy between two readings
//! ([`between`]).
//!
//! Sources:
//! - powercap RAPL zones, `/sys/class/powercap/intel-rapl:<N>` (package or `psys` domain) and
//!   their subzones `intel-rapl:<N>:<M>` named `dram` (kernel `intel_rapl_common`; AMD Zen
//!   processors fill the same zones through `rapl_msr` since 5.8, package domain only).
//!   `energy_uj` counts microjoules and wraps at `max_energy_range_uj`; since 5.10
//!   (CVE-2020-8694, "Platypus") `energy_uj` is readable by root only. Core and uncore
//!   subzones lie inside the package and are not read.
//! - hwmon `/sys/class/hwmon/hwmon<N>/energy<K>_input` (microjoules, a running total; Ampere
//!   Altra `smpro`/`xgene-hwmon`, some BMC drivers) and, where a chip has no energy input,
//!   `power<K>_input` (microwatts, a present reading, `Documentation/hwmon/sysfs-interface`).
//!   A power input gives no total: the energy between two readings is estimated as the mean
//!   of the two readings x the time between them, and says so ([`EnergyMethod`]).
//!
//! [`discover`] answers once per run: the counters, or why there are none (no powercap and no
//! hwmon energy in this VM; `energy_uj` root-only). A counter that fails later reads as
//! missing for that point only.

use std::time::Instant;

use hwsurvey_model::Unknown;

use crate::{ProbeError, SysRoot};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::energy::*;

/// The powercap class folder.
pub const POWERCAP: &str = "/sys/class/powercap";
/// The hwmon class folder.
pub const HWMON: &str = "/sys/class/hwmon";

/// One reading of every counter, in [`discover`]'s order, with the time it was taken.
#[derive(Debug, Clone)]
pub struct Reading {
    /// When the reading was taken.
    pub at: Instant,
    /// Microjoules (counters) or microwatts (power inputs) per counter; `Err` when that file
    /// could not be read this time.
    pub values: Vec<Result<u64, ProbeError>>,
}

fn read_u64(root: &SysRoot, path: &str) -> Result<u64, ProbeError> {
    let text = root.read_value(path)?;
    text.parse()
        .map_err(|_| ProbeError::invalid(path, "an unsigned integer", &text))
}

/// The RAPL zones under `/sys/class/powercap`: top-level `intel-rapl:<N>` zones and their
/// `dram` subzones. `Err` for the first `energy_uj` that cannot be read (root-only since 5.10).
fn rapl(root: &SysRoot) -> Result<Vec<EnergyCounter>, ProbeError> {
    let mut zones: Vec<String> = root
        .list_dir(POWERCAP)?
        .into_iter()
        .filter(|n| n.starts_with("intel-rapl:"))
        .collect();
    zones.sort_by_key(|z| {
        z.trim_start_matches("intel-rapl:")
            .split(':')
            .map(|p| p.parse::<u32>().unwrap_or(u32::MAX))
            .collect::<Vec<_>>()
    });
    let mut out = Vec::new();
    for zone in zones {
        let dir = format!("{POWERCAP}/{zone}");
        let subzone = zone.matches(':').count() > 1;
        let name = root
            .read_value(&format!("{dir}/name"))
            .unwrap_or_else(|_| zone.clone());
        if subzone && name != "dram" {
            continue;
        }
        let source = format!("{dir}/energy_uj");
        read_u64(root, &source)?;
        let max_range_uj = read_u64(root, &format!("{dir}/max_energy_range_uj"))
            .ok()
            .filter(|m| *m > 0);
        out.push(EnergyCounter {
            in_total: name != "psys",
            domain: name,
            source,
            method: EnergyMethod::Counter,
            max_range_uj,
        });
    }
    Ok(out)
}

/// hwmon energy inputs (or, per chip without any, its power inputs).
fn hwmon(root: &SysRoot) -> Vec<EnergyCounter> {
    let Ok(mut chips) = root.list_dir(HWMON) else {
        return Vec::new();
    };
    chips.sort_by_key(|c| {
        c.trim_start_matches("hwmon")
            .parse::<u32>()
            .unwrap_or(u32::MAX)
    });
    let mut out = Vec::new();
    for chip in chips {
        let dir = format!("{HWMON}/{chip}");
        let Ok(mut files) = root.list_dir(&dir) else {
            continue;
        };
        files.sort();
        let chip_name = root
            .read_value(&format!("{dir}/name"))
            .unwrap_or_else(|_| chip.clone());
        let inputs = |prefix: &str| -> Vec<String> {
            files
                .iter()
                .filter(|f| f.starts_with(prefix) && f.ends_with("_input"))
                .cloned()
                .collect()
        };
        let (files, method) = match inputs("energy") {
            e if !e.is_empty() => (e, EnergyMethod::Counter),
            _ => (inputs("power"), EnergyMethod::PowerSampled),
        };
        for f in files {
            let source = format!("{dir}/{f}");
            if read_u64(root, &source).is_err() {
                continue;
            }
            let stem = f.trim_end_matches("_input");
            let label = root
                .read_value(&format!("{dir}/{stem}_label"))
                .unwrap_or_else(|_| stem.to_string());
            out.push(EnergyCounter {
                domain: format!("{chip_name}/{label}"),
                source,
                method,
                max_range_uj: None,
                in_total: true,
            });
        }
    }
    out
}

/// The energy counters under `root`: RAPL zones, else hwmon energy (or power) inputs.
///
/// # Errors
/// An [`Unknown`] saying why there are none: `energy_uj` unreadable
/// ([`Unknown::PermissionDenied`] with its path: root-only since Linux 5.10), or neither
/// `/sys/class/powercap/intel-rapl:*` nor a hwmon energy or power input exists (most VMs).
pub fn discover(root: &SysRoot) -> Result<Vec<EnergyCounter>, Unknown> {
    let denied = match rapl(root) {
        Ok(c) if !c.is_empty() => return Ok(c),
        Ok(_) => None,
        Err(e) if e.is_missing() => None,
        Err(e) => Some(e),
    };
    let h = hwmon(root);
    if !h.is_empty() {
        return Ok(h);
    }
    Err(unavailable(denied))
}

/// Why there are no counters, from the first RAPL file that could not be read (`None`: no
/// RAPL zone and no hwmon input at all). A denied `energy_uj` names the file and says it is
/// root-only since Linux 5.10.
pub fn unavailable(first_error: Option<ProbeError>) -> Unknown {
    match first_error {
        Some(ProbeError::PermissionDenied { path }) => Unknown::PermissionDenied {
            path: format!("{path} (root-only since Linux 5.10)"),
        },
        Some(e) => Unknown::from(e),
        None => Unknown::Other {
            detail: format!(
                "no energy counters: neither {POWERCAP}/intel-rapl:* nor a hwmon energy*_input \
                 or power*_input under {HWMON} (a VM, or a platform whose kernel exposes none)"
            ),
        },
    }
}

/// One reading of every counter (one small file each).
pub fn read(root: &SysRoot, counters: &[EnergyCounter]) -> Reading {
    Reading {
        at: Instant::now(),
        values: counters.iter().map(|c| read_u64(root, &c.source)).collect(),
    }
}

/// The energy per counter between `before` and `after` (two [`read`]s of `counters`).
///
/// A counter total that went backwards wrapped once: `after + max_range_uj - before`
/// (RAPL's `max_energy_range_uj`); without a range it gives no figure and says so. A power
/// input gives `(before + after) / 2 x seconds`.
pub fn between(counters: &[EnergyCounter], before: &Reading, after: &Reading) -> PointEnergy {
    let seconds = after.at.saturating_duration_since(before.at).as_secs_f64();
    let mut domains = Vec::new();
    let mut problems = Vec::new();
    for (i, c) in counters.iter().enumerate() {
        let (b, a) = match (before.values.get(i), after.values.get(i)) {
            (Some(Ok(b)), Some(Ok(a))) => (*b, *a),
            (Some(Err(e)), _) | (_, Some(Err(e))) => {
                problems.push(e.to_string());
                continue;
            }
            _ => continue,
        };
        let (microjoules, wrapped) = match c.method {
            EnergyMethod::PowerSampled => ((a as f64 + b as f64) / 2.0 * seconds, false),
            EnergyMethod::Counter if a >= b => ((a - b) as f64, false),
            EnergyMethod::Counter => match c.max_range_uj.filter(|m| *m >= b) {
                Some(m) => (((m - b) + a) as f64, true),
                None => {
                    problems.push(format!(
                        "{}: went from {b} to {a} uJ and gives no max_energy_range_uj to \
                         unwrap it",
                        c.source
                    ));
                    continue;
                }
            },
        };
        let joules = microjoules / 1e6;
        domains.push(DomainEnergy {
            domain: c.domain.clone(),
            source: c.source.clone(),
            method: c.method,
            joules,
            mean_watts: (seconds > 0.0).then(|| joules / seconds),
            in_total: c.in_total,
            wrapped,
        });
    }
    PointEnergy {
        seconds,
        domains,
        problems,
    }
}

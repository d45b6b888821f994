//! Energy counters the kernel exposes ([`EnergyCounter`]) and the energy of a measured point
//! ([`PointEnergy`]). Which counters exist (`discover`), one reading of all of them (`read`)
//! and the energy between two readings (`between`) are `hwsurvey_probe::energy`.
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
//! `discover` answers once per run: the counters, or why there are none (no powercap and no
//! hwmon energy in this VM; `energy_uj` root-only). A counter that fails later reads as
//! missing for that point only.

use serde::{Deserialize, Serialize};

/// How a counter's energy is had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnergyMethod {
    /// A running total in microjoules (RAPL `energy_uj`, hwmon `energy*_input`): the energy
    /// is the difference of two readings (mod the counter's range).
    Counter,
    /// A present power in microwatts (hwmon `power*_input`): the energy is the mean of the
    /// readings before and after x the time between them, an estimate.
    PowerSampled,
}

/// One energy counter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnergyCounter {
    /// Domain as the kernel names it: RAPL `name` (`package-0`, `dram`, `psys`), or the
    /// hwmon chip and label (`smpro/CPU energy`, `xgene/energy1`).
    pub domain: String,
    /// The file read, e.g. `/sys/class/powercap/intel-rapl:0/energy_uj`.
    pub source: String,
    /// Total or sampled power.
    pub method: EnergyMethod,
    /// `max_energy_range_uj`: the counter wraps to 0 past this many microjoules (RAPL);
    /// `None` for counters that do not wrap in practice (64-bit hwmon totals) or power inputs.
    pub max_range_uj: Option<u64>,
    /// True when the domain is counted in a total (package and DRAM domains, hwmon energy);
    /// false for `psys` (the whole platform, which holds the packages).
    pub in_total: bool,
}

/// The energy of one domain between two readings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainEnergy {
    /// The counter's domain ([`EnergyCounter::domain`]).
    pub domain: String,
    /// The file read ([`EnergyCounter::source`]).
    pub source: String,
    /// Total or sampled power.
    pub method: EnergyMethod,
    /// Energy between the readings, joules.
    pub joules: f64,
    /// `joules / seconds`: mean power, watts; `None` when no time passed between the readings.
    pub mean_watts: Option<f64>,
    /// Counted in a total ([`EnergyCounter::in_total`]).
    pub in_total: bool,
    /// True when the counter wrapped between the readings (handled with `max_range_uj`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wrapped: bool,
}

/// The energy of a point: every domain that could be read before and after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointEnergy {
    /// Seconds between the two readings.
    pub seconds: f64,
    /// Per domain.
    pub domains: Vec<DomainEnergy>,
    /// Counters that gave no figure for this point, with why (a read failed, or a counter
    /// without a range went backwards).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

impl PointEnergy {
    /// Joules of the domains counted in the total (package and DRAM, or hwmon energy);
    /// `None` when none is.
    pub fn total_joules(&self) -> Option<f64> {
        let counted: Vec<f64> = self
            .domains
            .iter()
            .filter(|d| d.in_total)
            .map(|d| d.joules)
            .collect();
        (!counted.is_empty()).then(|| counted.iter().sum())
    }

    /// Mean watts of the counted domains over the point; `None` without a total or time.
    pub fn total_mean_watts(&self) -> Option<f64> {
        let j = self.total_joules()?;
        (self.seconds > 0.0).then(|| j / self.seconds)
    }

    /// `domain + domain (source kind)` for people: `package-0 + dram (RAPL)`.
    pub fn domains_words(&self) -> String {
        let names: Vec<&str> = self
            .domains
            .iter()
            .filter(|d| d.in_total)
            .map(|d| d.domain.as_str())
            .collect();
        names.join(" + ")
    }
}

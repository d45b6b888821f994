//! Normalised views: all-core family headline figures (one thread per core, past the caches
//! for memory families) divided by cores, GHz or populated memory channels, read from each
//! result's machine document.

use hwsurvey_result::plan::split_rung;
use hwsurvey_result::ResultFile;
use serde_json::Value;

use crate::format::human;
use crate::input::Input;
use crate::layout::{Cell, Row, Table};
use crate::machine::known;

/// What a normalised view divides by, read from a result file.
type Divisor = fn(&ResultFile) -> Result<f64, String>;

/// The machine's cores (`machine.cpu.topology.cores`), or why not.
fn cores(f: &ResultFile) -> Result<f64, String> {
    Some(f64::from(*known(&f.machine.cpu.topology.cores)?))
        .filter(|c| *c > 0.0)
        .ok_or_else(|| "core count not known".into())
}

/// The highest `cpuinfo_max_freq` of the machine's CPU kinds (`machine.cpu.kinds[].
/// max_freq_khz`), GHz; why not when no kind has one above 0.
pub(crate) fn ghz(f: &ResultFile) -> Result<f64, String> {
    f.machine
        .cpu
        .kinds
        .iter()
        .filter_map(|k| k.max_freq_khz)
        .map(|khz| khz as f64)
        .reduce(f64::max)
        .map(|khz| khz / 1e6)
        .filter(|g| *g > 0.0)
        .ok_or_else(|| "clock not known (no cpufreq cpuinfo_max_freq)".into())
}

/// The effective core clock measured by `cpu.clock` at one thread (median `clock_hz` of its
/// 1-thread point), GHz; why not when the run has no such point or measured it with the
/// portable chain (`reliable: false`: adds per second, not a clock).
pub(crate) fn measured_ghz(f: &ResultFile) -> Result<f64, String> {
    let t = f
        .tests
        .iter()
        .find(|t| t.point.family == "cpu.clock" && t.point.threads == 1)
        .ok_or("no cpu.clock point at 1 thread in this result file")?;
    if t.outcome != hwsurvey_result::Outcome::Measured {
        return Err(format!(
            "cpu.clock at 1 thread {}: {}",
            t.outcome,
            t.reason.as_deref().unwrap_or("no reason given")
        ));
    }
    if t.details.get("reliable").and_then(Value::as_bool) != Some(true) {
        return Err(format!(
            "cpu.clock's chain is not a clock here ({})",
            t.details
                .get("caveat")
                .and_then(Value::as_str)
                .unwrap_or("not marked reliable")
        ));
    }
    t.metrics
        .iter()
        .find(|m| m.name == "clock_hz")
        .and_then(|m| m.summary.as_ref())
        .map(|s| s.median / 1e9)
        .filter(|g| *g > 0.0)
        .ok_or_else(|| "cpu.clock at 1 thread has no clock_hz median".into())
}

/// Share of the nominal clock within which a measured clock is taken as the nominal one
/// (issue 34: "within 5 % of ... the host's nominal clock").
pub(crate) const NOMINAL_TOLERANCE: f64 = 0.05;

/// How a measured clock of `measured_ghz` sits against the nominal clock the machine document
/// names (`machine.cpu.nominal_clock`, [`hwsurvey_machine::cpu::nominal`]), when it is more than
/// [`NOMINAL_TOLERANCE`] away: `measured 3.91 GHz, 1.50x the TSC's 2.60 GHz (/proc/cpuinfo
/// bogomips 5199.99 / 2 ...): turbo or the host's clock`; `None` within it or without a
/// nominal clock.
pub(crate) fn against_nominal(f: &ResultFile, measured_ghz: f64) -> Option<String> {
    let n = f.machine.cpu.nominal_clock.known()?;
    let nominal_ghz = n.hz / 1e9;
    if !(nominal_ghz > 0.0 && measured_ghz > 0.0) {
        return None;
    }
    let ratio = measured_ghz / nominal_ghz;
    if (ratio - 1.0).abs() <= NOMINAL_TOLERANCE {
        return None;
    }
    let why = if ratio > 1.0 {
        "turbo or the host's clock"
    } else {
        "a power or thermal cap, a slow host clock, or time the host took from the vCPU"
    };
    Some(format!(
        "measured {measured_ghz:.2} GHz at 1 thread, {ratio:.2}x {} {nominal_ghz:.2} GHz ({}): {why}",
        n.kind.words(),
        n.source
    ))
}

/// The clock a figure is divided by, GHz, and whether it was measured: cpufreq's
/// `cpuinfo_max_freq` ([`ghz`]), else the measured one ([`measured_ghz`]); both reasons when
/// neither is known.
pub(crate) fn clock_ghz(f: &ResultFile) -> Result<(f64, bool), String> {
    match ghz(f) {
        Ok(g) => Ok((g, false)),
        Err(no_cpufreq) => match measured_ghz(f) {
            Ok(g) => Ok((g, true)),
            Err(no_measure) => Err(format!("{no_cpufreq}; {no_measure}")),
        },
    }
}

fn clock(f: &ResultFile) -> Result<f64, String> {
    clock_ghz(f).map(|(g, _)| g)
}

/// The populated memory channels (`machine.memory.population.peak_bandwidth.
/// populated_channels`), or why not.
fn channels(f: &ResultFile) -> Result<f64, String> {
    let p = known(&f.machine.memory.population)?;
    Some(f64::from(known(&p.peak_bandwidth)?.populated_channels))
        .filter(|c| *c > 0.0)
        .ok_or_else(|| "populated channels not known".into())
}

/// Least working set of a memory-resident point, as a share of the run's "memory" working set
/// (`plan.memory_working_set_bytes`, >= 4x the last-level cache): STREAM's arrays are that
/// size less the rounding to whole elements per thread.
const MEMORY_RESIDENT_SHARE: f64 = 0.9;

/// Whether the row `label` of `family` is an all-core figure of file `f`: one thread per core
/// (its rung's threads = the machine's cores; where the ladder has both, the landmark rung
/// placed one thread per core, `/threads=8/cores`, rather than the plain rung of that count:
/// `labels` are the rows the platform measured),
/// and for a memory family a working set past the caches. A 1 KiB block read (L1-resident)
/// or a 1-thread result divided by every core is no figure per core.
fn all_core(f: &ResultFile, family: &str, label: &str, labels: &[&str], cores: f64) -> bool {
    let Some(rung) = split_rung(label) else {
        return false;
    };
    if rung.threads as f64 != cores {
        return false;
    }
    if rung.own.is_none()
        && labels.iter().any(|l| {
            split_rung(l).is_some_and(|r| {
                r.prefix == rung.prefix && r.threads == rung.threads && r.own == Some("cores")
            })
        })
    {
        return false;
    }
    if !family.starts_with("mem.") {
        return true;
    }
    let memory = f.plan.memory_working_set_bytes as f64;
    f.tests
        .iter()
        .find(|t| t.point.family == family && t.point.id == label)
        .and_then(|t| t.point.params.get("working_set_bytes"))
        .and_then(Value::as_f64)
        .is_some_and(|ws| memory > 0.0 && ws >= memory * MEMORY_RESIDENT_SHARE)
}

/// Best all-core headline value per family and platform ([`all_core`]: one thread per core,
/// past the caches for memory families), divided by cores, by GHz of the fastest core kind,
/// and by populated memory channels (bandwidth only). Families without thread rungs (latency,
/// c2c, storage, point-select) have no such figure and no row.
pub(crate) fn normalised_table(inputs: &[Input], tables: &[Table], flags: &[String]) -> Table {
    let mut rows = Vec::new();
    for t in tables.iter().filter(|t| t.id.starts_with("family:")) {
        let family = &t.title;
        let Some(unit) = t.rows.iter().find_map(|r| r.unit.clone()) else {
            continue;
        };
        if unit == "ns" || unit == "hz" {
            continue; // a latency or a clock per core or per GHz means nothing
        }
        if !t.rows.iter().any(|r| split_rung(&r.label).is_some()) {
            continue;
        }
        // per platform: the best all-core value, or why there is none
        let best: Vec<Result<f64, String>> = inputs
            .iter()
            .enumerate()
            .map(|(k, i)| {
                let n = cores(&i.file)?;
                // the rows this platform measured (another's `/cores` rung is no reason to
                // pass over this one's plain rung)
                let labels: Vec<&str> = t
                    .rows
                    .iter()
                    .filter(|r| r.cells.get(k).is_some_and(|c| c.value.is_some()))
                    .map(|r| r.label.as_str())
                    .collect();
                t.rows
                    .iter()
                    .filter(|r| r.unit.as_deref() == Some(unit.as_str()))
                    .filter(|r| all_core(&i.file, family, &r.label, &labels, n))
                    .filter_map(|r| r.cells.get(k).and_then(|c| c.value))
                    .reduce(f64::max)
                    .ok_or_else(|| {
                        if family.starts_with("mem.") {
                            "no all-core point past the caches measured".into()
                        } else {
                            "no all-core point measured".into()
                        }
                    })
            })
            .collect();
        let views: [(&str, Divisor); 3] = [
            ("per core", cores),
            ("per GHz", clock),
            ("per populated memory channel", channels),
        ];
        for (name, div) in views {
            if name.ends_with("channel") && !(unit == "bytes_per_s" && family.starts_with("mem.")) {
                continue;
            }
            rows.push(Row {
                label: format!("{family} all-core best {name}"),
                unit: Some(unit.clone()),
                x: None,
                cells: inputs
                    .iter()
                    .zip(&best)
                    .map(|(i, b)| match (b, div(&i.file)) {
                        (Err(why), _) => Cell::missing(why.clone()),
                        (Ok(_), Err(why)) => Cell::missing(why),
                        (Ok(v), Ok(d)) => {
                            let mut c = Cell::computed(human(v / d, &unit), v / d);
                            if name == "per GHz" && clock_ghz(&i.file).is_ok_and(|(_, m)| m) {
                                c.note = Some("measured clock".into());
                            }
                            c
                        }
                    })
                    .collect(),
            });
        }
    }
    let mut notes = flags.to_vec();
    notes.push("all-core best = highest median of the family's rows run with one thread per core (threads = the machine's cores), for memory families only those whose working set is the run's memory working set (past the caches); per GHz uses the fastest core kind's cpuinfo_max_freq, or where cpufreq is absent the clock cpu.clock measured at 1 thread (noted \"measured clock\")".into());
    Table {
        id: "normalised".into(),
        title: "Normalised views".into(),
        row_header: "figure".into(),
        columns: inputs.iter().map(|i| i.label.clone()).collect(),
        rows,
        notes,
        plot: None,
    }
}

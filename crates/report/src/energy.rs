//! Performance per watt, beside each scaling figure: in a family's table ([`crate::family`]),
//! after the platforms' columns, one column `<label> per W` for each platform whose file
//! carries an energy reading for a point of that family (`tests[].energy`,
//! docs/result-format.md). A cell is the row's figure (the point's median throughput) divided
//! by the mean power of the counted domains over the point (package and DRAM, or the hwmon
//! energy inputs): GB/s per W (= GB per J) for bandwidth metrics, operations per joule for
//! `*_ops_per_s`, `iterations_per_s` and `iops`; the mean watts in its note.
//!
//! The power is the mean over the whole point (calibration, warm-up and every sample), read
//! before and after it; the throughput is the median of its samples. A platform without
//! readings gets no column, and the table says why once, in a note; the machine table's
//! `energy counters` row names each run's counters or why it has none ([`counters_words`]),
//! so a comparison where no platform has counters says it there, once.

use hwsurvey_result::{ResultFile, TestResult};

use crate::input::Input;
use crate::layout::Cell;

/// Header suffix of a per-watt column: `<label> per W`.
pub const COLUMN_SUFFIX: &str = " per W";

/// The unit of a per-watt value for a figure in `unit` (the row's base unit): `bytes_per_j`
/// for bandwidth (`bytes_per_s`), `ops_per_j` for operation rates (`ops_per_s`,
/// `iterations_per_s`, `iops`); `None` for what is no rate (latency, a ratio, a clock).
pub fn per_joule_unit(metric: &str) -> Option<&'static str> {
    if metric.ends_with("bytes_per_s") {
        Some("bytes_per_j")
    } else if metric.ends_with("ops_per_s")
        || metric.ends_with("iterations_per_s")
        || metric == "iops"
    {
        Some("ops_per_j")
    } else {
        None
    }
}

/// `350 MB/s/W`, `4.56 Mops/J`.
fn per_joule_text(value: f64, unit: &str) -> String {
    let (v, p) = hwsurvey_model::units::decimal_prefixed(value);
    match unit {
        "bytes_per_j" => format!("{v} {p}B/s/W"),
        _ => format!("{v} {p}ops/J"),
    }
}

/// The measured point `id` of `family` in `file`.
fn test<'a>(file: &'a ResultFile, family: &str, id: &str) -> Option<&'a TestResult> {
    file.tests.iter().find(|t| {
        t.point.family == family
            && t.point.id == id
            && t.outcome == hwsurvey_result::Outcome::Measured
    })
}

/// The per-watt figure of a measured point: its headline metric's median (the figure the
/// family table shows) over the mean power of its counted domains, with the unit; `Err` with
/// why not when the point has a rate but no usable reading; `Ok(None)` when the headline is
/// no rate (latency) or has no median.
fn figure(t: &TestResult) -> Result<Option<(f64, &'static str, f64)>, String> {
    let Some(m) = t.metrics.first() else {
        return Ok(None);
    };
    let (Some(unit), Some(s)) = (per_joule_unit(&m.name), m.summary.as_ref()) else {
        return Ok(None);
    };
    let e = t
        .energy
        .as_ref()
        .ok_or("no energy reading for this point")?;
    match e.total_mean_watts() {
        Some(w) if w > 0.0 => Ok(Some((s.median / w, unit, w))),
        Some(w) => Err(format!("the counted domains read {w} W over the point")),
        None if e.problems.is_empty() => Err("no counted energy domain read".into()),
        None => Err(format!("no counted domain read: {}", e.problems.join("; "))),
    }
}

/// Whether `file` has a per-watt figure for some point of `family`.
fn has_figure(file: &ResultFile, family: &str) -> bool {
    file.tests
        .iter()
        .filter(|t| t.point.family == family)
        .any(|t| matches!(figure(t), Ok(Some(_))))
}

/// The platforms (indexes into `inputs`) that get a per-watt column in `family`'s table:
/// those with a figure for at least one of its points.
pub(crate) fn platforms(inputs: &[Input], family: &str) -> Vec<usize> {
    (0..inputs.len())
        .filter(|&k| has_figure(&inputs[k].file, family))
        .collect()
}

/// The per-watt cell of row `id` for one platform: the figure with the mean watts in its
/// note and its unit; empty where the row is no rate or the point did not run (the value
/// beside it says why); missing with why where the point ran without a usable reading.
pub(crate) fn cell(file: &ResultFile, family: &str, id: &str) -> Cell {
    let Some(t) = test(file, family, id) else {
        return Cell::text("");
    };
    match figure(t) {
        Ok(Some((value, unit, watts))) => Cell {
            note: Some(format!("{watts:.1} W")),
            unit: Some(unit.to_string()),
            ..Cell::computed(per_joule_text(value, unit), value)
        },
        Ok(None) => Cell::text(""),
        Err(why) => Cell::missing(why),
    }
}

/// Why `file` has no energy readings, in words (`None`: it has some).
fn why_none(file: &ResultFile) -> Option<String> {
    match &file.energy {
        None => Some(
            "no energy readings in this file (written before hwsurvey read energy counters, \
             or by another build)"
                .into(),
        ),
        Some(e) => e.unavailable.as_ref().map(|why| why.to_string()),
    }
}

/// The notes of `family`'s table when it has per-watt columns (`with`: their platforms): how
/// a figure is made, each column's counters, and for every other platform why it has no
/// column (once).
pub(crate) fn notes(inputs: &[Input], family: &str, with: &[usize]) -> Vec<String> {
    if with.is_empty() {
        return Vec::new();
    }
    let mut notes = vec![format!(
        "per W: the row's median / the mean power of the counted energy domains over the whole \
         point (read before and after it: package and DRAM RAPL zones, or hwmon energy \
         inputs), that power in parentheses; B/s/W is bytes per joule, ops/J operations per \
         joule"
    )];
    for (k, i) in inputs.iter().enumerate() {
        if with.contains(&k) {
            let sources: Vec<String> = i
                .file
                .energy
                .iter()
                .flat_map(|e| &e.counters)
                .map(|c| format!("{} ({})", c.domain, c.source))
                .collect();
            notes.push(format!("{} per W: {}", i.label, sources.join(", ")));
        } else {
            let why = why_none(&i.file).unwrap_or_else(|| {
                format!("none of its {family} points carries an energy reading with a rate")
            });
            notes.push(format!("{}: no per-watt column: {why}", i.label));
        }
    }
    notes
}

/// The machine table's `energy counters` cell of `file`: the counted domains and their kind
/// (`package-0 + dram (RAPL)`), or why there are none.
pub(crate) fn counters_words(file: &ResultFile) -> Result<String, String> {
    if let Some(why) = why_none(file) {
        return Err(why);
    }
    let counters = file.energy.iter().flat_map(|e| &e.counters);
    let names: Vec<String> = counters
        .clone()
        .map(|c| {
            if c.in_total {
                c.domain.clone()
            } else {
                format!("{} (not counted)", c.domain)
            }
        })
        .collect();
    if names.is_empty() {
        return Err("no energy counters found, and no reason recorded".into());
    }
    let kind = if counters.clone().all(|c| c.source.contains("/powercap/")) {
        "RAPL"
    } else {
        "hwmon"
    };
    Ok(format!("{} ({kind})", names.join(" + ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_joule_words_for_bandwidth_and_operations() {
        assert_eq!(per_joule_text(2.5e8, "bytes_per_j"), "250 MB/s/W");
        assert_eq!(per_joule_text(4.56e6, "ops_per_j"), "4.56 Mops/J");
        assert_eq!(per_joule_unit("bandwidth_bytes_per_s"), Some("bytes_per_j"));
        assert_eq!(per_joule_unit("throughput_ops_per_s"), Some("ops_per_j"));
        assert_eq!(per_joule_unit("iops"), Some("ops_per_j"));
        assert_eq!(per_joule_unit("latency_ns"), None);
        assert_eq!(per_joule_unit("clock_hz"), None);
    }
}

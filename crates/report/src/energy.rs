//! Performance per watt, beside a family's scaling tables: for each measured point that carries
//! an energy reading (`tests[].energy`, docs/result-format.md), the point's throughput median
//! divided by the mean power of the counted domains over the point (package and DRAM, or the
//! hwmon energy inputs): GB/s per W (= GB per J) for bandwidth metrics, operations per joule
//! for `*_ops_per_s`, `iterations_per_s` and `iops`.
//!
//! The power is the mean over the whole point (calibration, warm-up and every sample), read
//! before and after it; the throughput is the median of its samples. A platform without
//! counters shows why once, in a note under the table (the reason its file gives once); a family whose points carry
//! no reading on any platform gets no table.

use hwsurvey_result::{ResultFile, TestResult};

use crate::input::Input;
use crate::layout::{Cell, Row, Table};

/// The throughput metric of a point and how its per-joule figure is named: (metric name,
/// base unit of the per-joule value, words for people).
fn throughput(t: &TestResult) -> Option<(&hwsurvey_result::MetricResult, &'static str)> {
    t.metrics.iter().find_map(|m| {
        if m.name.ends_with("bytes_per_s") {
            Some((m, "bytes_per_j"))
        } else if m.name.ends_with("_per_s") || m.name == "iops" {
            Some((m, "ops_per_j"))
        } else {
            None
        }
    })
}

/// `12.3 GB/s per W`, `4.56 Mops per J`.
fn per_joule_text(value: f64, unit: &str) -> String {
    let (v, p) = hwsurvey_model::units::decimal_prefixed(value);
    match unit {
        "bytes_per_j" => format!("{v} {p}B/s per W"),
        _ => format!("{v} {p}ops per J"),
    }
}

/// Why a platform's point has no per-watt figure.
fn missing(file: &ResultFile, t: Option<&TestResult>) -> String {
    if file
        .energy
        .as_ref()
        .is_some_and(|e| e.unavailable.is_some())
    {
        return "no energy counters (the note under the table says why)".into();
    }
    if file.energy.is_none() {
        return "no energy readings in this file (written before energy was read, or by \
                another build)"
            .into();
    }
    match t {
        None => "not measured".into(),
        Some(t) => match &t.energy {
            None => "no energy reading for this point".into(),
            Some(e) if e.total_mean_watts().is_none() => {
                format!("no counted domain read: {}", e.problems.join("; "))
            }
            Some(_) => "no throughput metric with a median".into(),
        },
    }
}

fn cell(file: &ResultFile, t: Option<&TestResult>) -> (Cell, Option<&'static str>) {
    let figure = t.and_then(|t| {
        let e = t.energy.as_ref()?;
        let watts = e.total_mean_watts().filter(|w| *w > 0.0)?;
        let (m, unit) = throughput(t)?;
        let median = m.summary.as_ref()?.median;
        Some((median / watts, unit, watts, e))
    });
    match figure {
        Some((value, unit, watts, e)) => (
            Cell {
                text: per_joule_text(value, unit),
                value: Some(value),
                note: Some(format!(
                    "mean {watts:.1} W, {:.1} J over {:.1} s ({})",
                    e.total_joules().unwrap_or(0.0),
                    e.seconds,
                    e.domains_words()
                )),
                missing: None,
                x: None,
                stats: None,
            },
            Some(unit),
        ),
        None => (
            Cell {
                text: String::new(),
                value: None,
                note: None,
                missing: Some(missing(file, t)),
                x: None,
                stats: None,
            },
            None,
        ),
    }
}

/// The per-watt table of `family`, or `None` when no platform has an energy reading for any
/// of its measured points. Rows: the family's points in the order of the first file that ran
/// them; columns: the platforms.
pub fn energy_table(inputs: &[Input], family: &str, flags: &[String]) -> Option<Table> {
    let has_energy = |t: &TestResult| {
        t.point.family == family
            && t.energy
                .as_ref()
                .is_some_and(|e| e.total_joules().is_some())
    };
    if !inputs.iter().any(|i| i.file.tests.iter().any(has_energy)) {
        return None;
    }
    let mut ids: Vec<String> = Vec::new();
    for i in inputs {
        for t in i.file.tests.iter().filter(|t| t.point.family == family) {
            if throughput(t).is_some() && !ids.contains(&t.point.id) {
                ids.push(t.point.id.clone());
            }
        }
    }
    let mut rows = Vec::new();
    for id in &ids {
        let mut unit = None;
        let cells: Vec<Cell> = inputs
            .iter()
            .map(|i| {
                let t = i
                    .file
                    .tests
                    .iter()
                    .find(|t| t.point.family == family && &t.point.id == id);
                let (c, u) = cell(&i.file, t);
                unit = unit.or(u);
                c
            })
            .collect();
        rows.push(Row {
            label: id.clone(),
            unit: unit.map(str::to_string),
            x: None,
            cells,
        });
    }
    let mut notes = vec![
        "performance per watt: the point's median throughput / the mean power of the counted \
         energy domains over the whole point (read before and after it: package and DRAM RAPL \
         zones, or hwmon energy inputs); GB/s per W is GB per J"
            .to_string(),
    ];
    for i in inputs {
        if let Some(e) = &i.file.energy {
            let sources: Vec<String> = e
                .counters
                .iter()
                .map(|c| format!("{} ({})", c.domain, c.source))
                .collect();
            if !sources.is_empty() {
                notes.push(format!("{}: {}", i.label, sources.join(", ")));
            }
            if let Some(why) = &e.unavailable {
                notes.push(format!("{}: energy unknown: {why}", i.label));
            }
        }
    }
    notes.extend(flags.iter().cloned());
    Some(Table {
        id: format!("energy:{family}"),
        title: format!("{family}: performance per watt"),
        row_header: "test".into(),
        columns: inputs.iter().map(|i| i.label.clone()).collect(),
        rows,
        notes,
        plot: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_joule_words_for_bandwidth_and_operations() {
        assert_eq!(per_joule_text(2.5e8, "bytes_per_j"), "250 MB/s per W");
        assert_eq!(per_joule_text(4.56e6, "ops_per_j"), "4.56 Mops per J");
        let point: hwsurvey_result::Point = serde_json::from_value(serde_json::json!({
            "family": "cpu.scaling", "id": "int/threads=2", "threads": 2,
            "placement": "compact", "cpus": [0, 1], "params": {},
            "memory_bytes": 0, "estimated_s": 1.0
        }))
        .unwrap();
        let t = TestResult::new(
            point,
            hwsurvey_result::PointOutcome::Measured(hwsurvey_result::Measurement {
                metrics: vec![
                    hwsurvey_result::Metric::latency("latency_ns", vec![1.0, 2.0]),
                    hwsurvey_result::Metric::throughput("ops_per_s", vec![1e9, 1e9]),
                ],
                pins: vec![],
                details: Default::default(),
            }),
            "t".into(),
            1.0,
        );
        let (m, unit) = throughput(&t).unwrap();
        assert_eq!((m.name.as_str(), unit), ("ops_per_s", "ops_per_j"));
    }
}

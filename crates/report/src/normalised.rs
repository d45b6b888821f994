//! Normalised views: family headline figures divided by cores, GHz or populated memory
//! channels, read from each result's machine document.

use hwsurvey_result::ResultFile;
use serde_json::Value;

use crate::format::human;
use crate::input::Input;
use crate::layout::{Cell, Row, Table};
use crate::machine::known;

/// What a normalised view divides by, read from a result file.
type Divisor = fn(&ResultFile) -> Result<f64, String>;

fn cores(f: &ResultFile) -> Result<f64, String> {
    known(f.machine.pointer("/cpu/topology/cores"))?
        .as_f64()
        .filter(|c| *c > 0.0)
        .ok_or_else(|| "core count not known".into())
}

/// The highest `cpuinfo_max_freq` of the machine's CPU kinds (`/cpu/kinds[].max_freq_khz`),
/// GHz; why not when no kind has one above 0.
pub(crate) fn ghz(f: &ResultFile) -> Result<f64, String> {
    f.machine
        .pointer("/cpu/kinds")
        .and_then(Value::as_array)
        .and_then(|k| {
            k.iter()
                .filter_map(|k| k.get("max_freq_khz").and_then(Value::as_f64))
                .reduce(f64::max)
        })
        .map(|khz| khz / 1e6)
        .filter(|g| *g > 0.0)
        .ok_or_else(|| "clock not known (no cpufreq cpuinfo_max_freq)".into())
}

fn channels(f: &ResultFile) -> Result<f64, String> {
    let p = known(f.machine.pointer("/memory/population"))?;
    known(p.get("peak_bandwidth"))?
        .get("populated_channels")
        .and_then(Value::as_f64)
        .filter(|c| *c > 0.0)
        .ok_or_else(|| "populated channels not known".into())
}

/// Best headline value per family and platform, divided by cores, by GHz of the fastest core
/// kind, and by populated memory channels (bandwidth only).
pub(crate) fn normalised_table(inputs: &[Input], tables: &[Table], flags: &[String]) -> Table {
    let mut rows = Vec::new();
    for t in tables.iter().filter(|t| t.id.starts_with("family:")) {
        let family = &t.title;
        // best value per platform over the family's rows of its most common unit
        let Some(unit) = t.rows.iter().find_map(|r| r.unit.clone()) else {
            continue;
        };
        let lower_better = unit == "ns";
        let best: Vec<Option<f64>> = (0..inputs.len())
            .map(|k| {
                t.rows
                    .iter()
                    .filter(|r| r.unit.as_deref() == Some(unit.as_str()))
                    .filter_map(|r| r.cells.get(k).and_then(|c| c.value))
                    .reduce(if lower_better { f64::min } else { f64::max })
            })
            .collect();
        if lower_better {
            continue; // a latency per core or per GHz means nothing
        }
        let views: [(&str, Divisor); 3] = [
            ("per core", cores),
            ("per GHz", ghz),
            ("per populated memory channel", channels),
        ];
        for (name, div) in views {
            if name.ends_with("channel") && !(unit == "bytes_per_s" && family.starts_with("mem.")) {
                continue;
            }
            rows.push(Row {
                label: format!("{family} best {name}"),
                unit: Some(unit.clone()),
                x: None,
                cells: inputs
                    .iter()
                    .zip(&best)
                    .map(|(i, b)| match (b, div(&i.file)) {
                        (None, _) => Cell::missing("no measured value"),
                        (Some(_), Err(why)) => Cell::missing(why),
                        (Some(v), Ok(d)) => Cell {
                            text: human(v / d, &unit),
                            value: Some(v / d),
                            note: None,
                            missing: None,
                            x: None,
                            stats: None,
                        },
                    })
                    .collect(),
            });
        }
    }
    let mut notes = flags.to_vec();
    notes.push("best = highest median of the family's rows; per GHz uses the fastest core kind's cpuinfo_max_freq".into());
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

//! Scaling tables: one table per curve of a family, rows = the curve's x (working sets, block
//! sizes, clients, load levels), columns = platforms, each carrying how it is plotted
//! ([`PlotSpec`]). The SVG plots ([`crate::plot`]) are drawn from these tables, so the curves
//! and the tables never disagree.
//!
//! Curves (point ids and params as `hwsurvey run` writes them, docs/result-format.md):
//! - `mem.latency`: `latency_ns` vs `params.working_set_bytes`, one table per
//!   `<order>/<page mode>` (id `<order>/<mode>/ws=<size>`);
//! - `mem.bandwidth`: `bandwidth_bytes_per_s` vs `params.block_size_bytes`, one table per
//!   `<read|write>/threads=N` (id `<op>/block=<size>/threads=N`);
//! - `service.point_select`: `throughput_ops_per_s` and `latency_p99_ns` vs `params.clients`
//!   of the `closed/pages=<mode>/clients=N` points, one table each per page mode;
//! - `mem.loaded_latency`: `latency_ns` (y) vs the `bandwidth_bytes_per_s` the load threads
//!   delivered (x, per cell), one table per `params.load_kind`; the idle point (no load
//!   threads, no bandwidth metric) starts every kind's curve at x = 0.

use hwsurvey_model::units::{format_bytes_binary, format_rate_decimal};
use hwsurvey_result::{MetricResult, ResultFile, TestResult};
use serde_json::Value;

use crate::build::{human, Input};
use crate::layout::{Cell, PlotSpec, Row, Table};

/// Where one point sits: curve key, row key (sorts rows), row label, row x.
struct Place {
    curve: String,
    row_key: f64,
    label: String,
    x: Option<f64>,
}

/// How one family's points become curves.
struct CurveRule {
    /// Places of a point (`id`, `params`); empty when the point is not on a curve.
    place: fn(&str, &Value) -> Vec<Place>,
    /// Metric plotted (y).
    metric: &'static str,
    /// Metric giving each cell's own x, if x differs per platform.
    x_metric: Option<&'static str>,
    /// Table title after the family name, given the curve key.
    title: fn(&str) -> String,
    /// Plot axes.
    spec: fn() -> PlotSpec,
}

fn param_f64(p: &Value, key: &str) -> Option<f64> {
    p.get(key).and_then(Value::as_f64)
}

fn latency_place(id: &str, p: &Value) -> Vec<Place> {
    let (Some((curve, _)), Some(ws)) = (id.rsplit_once("/ws="), param_f64(p, "working_set_bytes"))
    else {
        return Vec::new();
    };
    vec![Place {
        curve: curve.to_string(),
        row_key: ws,
        label: format_bytes_binary(ws as u64),
        x: Some(ws),
    }]
}

fn block_place(id: &str, p: &Value) -> Vec<Place> {
    let (Some(op), Some(size)) = (
        p.get("op").and_then(Value::as_str),
        param_f64(p, "block_size_bytes"),
    ) else {
        return Vec::new();
    };
    let Some((_, threads)) = id.rsplit_once("/threads=") else {
        return Vec::new();
    };
    vec![Place {
        curve: format!("{op}/threads={threads}"),
        row_key: size,
        label: format_bytes_binary(size as u64),
        x: Some(size),
    }]
}

fn closed_place(id: &str, p: &Value) -> Vec<Place> {
    let (Some(mode), Some(clients)) = (
        p.get("page_mode").and_then(Value::as_str),
        param_f64(p, "clients"),
    ) else {
        return Vec::new();
    };
    if !id.starts_with("closed/") {
        return Vec::new();
    }
    vec![Place {
        curve: format!("pages={mode}"),
        row_key: clients,
        label: format!("{clients} client{}", if clients == 1.0 { "" } else { "s" }),
        x: Some(clients),
    }]
}

fn loaded_place(id: &str, p: &Value) -> Vec<Place> {
    let threads = param_f64(p, "load_threads").unwrap_or(0.0);
    let delay = param_f64(p, "delay_ns_per_chunk").unwrap_or(0.0);
    // increasing load: more threads, then a shorter pause per chunk
    let row_key = threads * 1e12 - delay;
    if threads == 0.0 {
        // idle: no load threads, so nothing delivered (the file records no bandwidth metric)
        return ["read", "write"]
            .into_iter()
            .map(|kind| Place {
                curve: kind.to_string(),
                row_key,
                label: id.to_string(),
                x: Some(0.0),
            })
            .collect();
    }
    let Some(kind) = p.get("load_kind").and_then(Value::as_str) else {
        return Vec::new();
    };
    vec![Place {
        curve: kind.to_string(),
        row_key,
        label: id.to_string(),
        x: None,
    }]
}

fn rule(family: &str) -> Vec<CurveRule> {
    match family {
        "mem.latency" => vec![CurveRule {
            place: latency_place,
            metric: "latency_ns",
            x_metric: None,
            title: |c| format!("latency vs working set ({})", c.replace('/', ", ")),
            spec: || PlotSpec {
                x_label: "working set".into(),
                x_unit: "bytes".into(),
                x_log: true,
                y_label: "load-to-use latency".into(),
                y_log: true,
            },
        }],
        "mem.bandwidth" => vec![CurveRule {
            place: block_place,
            metric: "bandwidth_bytes_per_s",
            x_metric: None,
            title: |c| {
                let (op, threads) = c.split_once('/').unwrap_or((c, ""));
                format!("{op} bandwidth vs block size ({threads})")
            },
            spec: || PlotSpec {
                x_label: "block size per thread".into(),
                x_unit: "bytes".into(),
                x_log: true,
                y_label: "bandwidth".into(),
                y_log: false,
            },
        }],
        "service.point_select" => vec![
            CurveRule {
                place: closed_place,
                metric: "throughput_ops_per_s",
                x_metric: None,
                title: |c| format!("throughput vs clients ({c})"),
                spec: || PlotSpec {
                    x_label: "closed-loop clients".into(),
                    x_unit: "clients".into(),
                    x_log: true,
                    y_label: "throughput".into(),
                    y_log: false,
                },
            },
            CurveRule {
                place: closed_place,
                metric: "latency_p99_ns",
                x_metric: None,
                title: |c| format!("p99 latency vs clients ({c})"),
                spec: || PlotSpec {
                    x_label: "closed-loop clients".into(),
                    x_unit: "clients".into(),
                    x_log: true,
                    y_label: "p99 latency".into(),
                    y_log: true,
                },
            },
        ],
        "mem.loaded_latency" => vec![CurveRule {
            place: loaded_place,
            metric: "latency_ns",
            x_metric: Some("bandwidth_bytes_per_s"),
            title: |c| format!("latency vs delivered bandwidth ({c} load)"),
            spec: || PlotSpec {
                x_label: "bandwidth delivered by the load threads".into(),
                x_unit: "bytes_per_s".into(),
                x_log: false,
                y_label: "load-to-use latency".into(),
                y_log: false,
            },
        }],
        _ => Vec::new(),
    }
}

fn metric<'a>(t: &'a TestResult, name: &str) -> Option<&'a MetricResult> {
    t.metrics.iter().find(|m| m.name == name)
}

fn measured_cell(t: &TestResult, r: &CurveRule) -> Cell {
    if t.outcome != hwsurvey_result::Outcome::Measured {
        return Cell::missing(format!(
            "{}: {}",
            t.outcome,
            t.reason.as_deref().unwrap_or("no reason given")
        ));
    }
    let Some(m) = metric(t, r.metric) else {
        return Cell::missing(format!("measured, but no {} recorded", r.metric));
    };
    let Some(s) = &m.summary else {
        return Cell::missing(format!(
            "no statistics: {}",
            m.summary_error.as_deref().unwrap_or("too few samples")
        ));
    };
    let unit = crate::build::unit_of(&m.name);
    let mut cell = Cell::measured(s, human(s.median, &unit));
    if let Some(xm) = r.x_metric {
        // absent (the idle point): the row's x stands
        if let Some(xs) = metric(t, xm).and_then(|m| m.summary.as_ref()) {
            cell.x = Some(xs.median);
            cell.text = format!("{} at {}", cell.text, format_rate_decimal(xs.median));
        }
    }
    cell
}

/// One row being gathered: sort key, label, x, and the cell of each platform so far.
struct GatherRow {
    key: f64,
    label: String,
    x: Option<f64>,
    cells: Vec<Option<Cell>>,
}

/// One curve being gathered.
struct Gather {
    key: String,
    rows: Vec<GatherRow>,
}

fn gather(
    file: &ResultFile,
    family: &str,
    r: &CurveRule,
    k: usize,
    n: usize,
    out: &mut Vec<Gather>,
) {
    let tested = file
        .tests
        .iter()
        .filter(|t| t.point.family == family)
        .map(|t| (t.point.id.as_str(), &t.point.params, Some(t)));
    let skipped = file
        .skipped
        .iter()
        .chain(file.plan.families.iter().flat_map(|f| f.skipped.iter()))
        .filter(|s| s.family == family)
        .map(|s| (s.id.as_str(), &s.params, None));
    let reasons: Vec<(&str, &str)> = file
        .skipped
        .iter()
        .chain(file.plan.families.iter().flat_map(|f| f.skipped.iter()))
        .filter(|s| s.family == family)
        .map(|s| (s.id.as_str(), s.reason.as_str()))
        .collect();
    for (id, params, test) in tested.chain(skipped) {
        for place in (r.place)(id, params) {
            let g = match out.iter().position(|g| g.key == place.curve) {
                Some(i) => &mut out[i],
                None => {
                    out.push(Gather {
                        key: place.curve.clone(),
                        rows: Vec::new(),
                    });
                    let last = out.len() - 1;
                    &mut out[last]
                }
            };
            let row = match g.rows.iter().position(|row| row.label == place.label) {
                Some(i) => &mut g.rows[i],
                None => {
                    g.rows.push(GatherRow {
                        key: place.row_key,
                        label: place.label.clone(),
                        x: place.x,
                        cells: vec![None; n],
                    });
                    let last = g.rows.len() - 1;
                    &mut g.rows[last]
                }
            };
            if row.cells[k].is_some() {
                continue; // a test result wins over a skip record of the same point
            }
            row.cells[k] = Some(match test {
                Some(t) => measured_cell(t, r),
                None => {
                    let why = reasons
                        .iter()
                        .find(|(sid, _)| *sid == id)
                        .map(|(_, why)| *why)
                        .unwrap_or("no reason given");
                    Cell::missing(format!("skipped: {why}"))
                }
            });
        }
    }
}

/// The scaling tables of `family` (none for families without curves), in curve order of the
/// first platform that has each curve; rows sorted by increasing x (or load).
pub fn scaling_tables(inputs: &[Input], family: &str, flags: &[String]) -> Vec<Table> {
    let mut out = Vec::new();
    for r in rule(family) {
        let mut curves: Vec<Gather> = Vec::new();
        for (k, i) in inputs.iter().enumerate() {
            gather(&i.file, family, &r, k, inputs.len(), &mut curves);
        }
        for mut g in curves {
            g.rows.sort_by(|a, b| a.key.total_cmp(&b.key));
            let unit = crate::build::unit_of(r.metric);
            let rows: Vec<Row> = g
                .rows
                .into_iter()
                .map(|r| Row {
                    label: r.label,
                    unit: Some(unit.clone()),
                    x: r.x,
                    cells: r
                        .cells
                        .into_iter()
                        .map(|c| {
                            c.unwrap_or_else(|| {
                                Cell::missing("not run: no such point in this run's plan")
                            })
                        })
                        .collect(),
                })
                .collect();
            if !rows
                .iter()
                .any(|row| row.cells.iter().any(|c| c.value.is_some()))
            {
                continue;
            }
            let spec = (r.spec)();
            let mut notes = flags.to_vec();
            notes.push(format!(
                "rows: {}; value = median {} of the samples (CV = coefficient of variation); one line per platform in the plot",
                spec.x_label, r.metric
            ));
            out.push(Table {
                id: format!("scaling:{family}:{}:{}", r.metric, g.key),
                title: format!("{family} {}", (r.title)(&g.key)),
                row_header: match spec.x_unit.as_str() {
                    "bytes_per_s" => "load level".into(),
                    _ => spec.x_label.clone(),
                },
                columns: inputs.iter().map(|i| i.label.clone()).collect(),
                rows,
                notes,
                plot: Some(spec),
            });
        }
    }
    out
}

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
//!   threads, no bandwidth metric) starts every kind's curve at x = 0;
//! - `storage.iops`: `iops` and `cpu_ns_per_io` vs the number of devices driven at once
//!   (`params.targets`), one table per `<pattern>/threads=T/qd=Q`, over the first target alone
//!   (`target=dir0`/`dev0`) and the device-count ladder (`target=first<N>`, `target=all`); the
//!   IOPS table's notes give each platform's scaling efficiency against N x one device, the
//!   knee, and what limits the top of the ladder ([`ladder_notes`]).

use hwsurvey_model::units::{format_bytes_binary, format_rate_decimal};
use hwsurvey_result::{MetricResult, ResultFile, TestResult};
use serde_json::Value;

use crate::format::{human, unit_of};
use crate::input::Input;
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
    let Some(rung) = hwsurvey_result::plan::split_rung(id) else {
        return Vec::new();
    };
    vec![Place {
        curve: format!(
            "{op}/{}",
            hwsurvey_result::plan::rung_id_part(rung.threads, rung.own)
        ),
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

fn devices_place(id: &str, p: &Value) -> Vec<Place> {
    let parts: Vec<&str> = id.split('/').collect();
    let [pattern, target, threads, qd] = parts.as_slice() else {
        return Vec::new();
    };
    let Some(key) = target.strip_prefix("target=") else {
        return Vec::new();
    };
    if !(key == "dir0" || key == "dev0" || key == "all" || key.starts_with("first")) {
        return Vec::new();
    }
    let Some(n) = p.get("targets").and_then(Value::as_array).map(Vec::len) else {
        return Vec::new();
    };
    vec![Place {
        curve: format!("{pattern}/{threads}/{qd}"),
        row_key: n as f64,
        label: format!("{n} device{}", if n == 1 { "" } else { "s" }),
        x: Some(n as f64),
    }]
}

fn devices_spec(y_label: &str) -> PlotSpec {
    PlotSpec {
        x_label: "devices driven at once".into(),
        x_unit: "devices".into(),
        x_log: true,
        y_label: y_label.into(),
        y_log: false,
    }
}

/// One point of a platform's device-count ladder.
struct LadderPoint {
    devices: usize,
    iops: f64,
    busy_cpus: Option<f64>,
    bytes_per_s: Option<f64>,
    link_ceiling_bytes_per_s: Option<f64>,
}

/// The tightest link the targets of a point (`details.targets[].pci_address`) share, from the
/// probed PCIe tree of the result's machine (`machine.io.pcie_paths[].shared`): the bandwidth of the
/// shared link counted once per group of targets behind it, plus the own ceilings of the
/// targets behind no shared link. `None` when no target is behind a shared link.
fn shared_ceiling(file: &ResultFile, details: &serde_json::Map<String, Value>) -> Option<f64> {
    let paths = &file.machine.io.pcie_paths;
    let targets = details.get("targets")?.as_array()?;
    let mut links: Vec<(String, f64)> = Vec::new();
    let mut own = 0.0;
    let mut any_shared = false;
    for t in targets {
        let addr = t.get("pci_address").and_then(Value::as_str)?;
        let shared = paths
            .iter()
            .find(|p| p.endpoint == addr)
            .and_then(|p| p.shared.as_ref());
        match shared.map(|s| (s.link.device.clone(), s.link.bandwidth_bytes_per_s as f64)) {
            Some((device, bw)) => {
                any_shared = true;
                if !links.iter().any(|(d, _)| *d == device) {
                    links.push((device, bw));
                }
            }
            None => own += t.get("pcie_current_ceiling_bytes_per_s")?.as_f64()?,
        }
    }
    any_shared.then(|| own + links.iter().map(|(_, bw)| bw).sum::<f64>())
}

/// The notes of a `storage.iops` IOPS-vs-devices table (`curve`: `<pattern>/threads=T/qd=Q`),
/// one per platform with two or more ladder points: the top of the ladder against N x one
/// device (scaling efficiency), the knee (the most devices still at >= 90 % efficiency), and
/// the limit there: the CPU when the busy CPUs (`details.cpu_busy_cpus`) reach 80 % of the run's
/// usable CPUs, the links when the bytes moved reach 80 % of the sum of the devices' current
/// PCIe ceilings (`details.targets[].pcie_current_ceiling_bytes_per_s`), or of the link they
/// share where the probe found one (a switch's uplink, [`shared_ceiling`]), else the devices.
pub fn ladder_notes(inputs: &[Input], curve: &str) -> Vec<String> {
    let mut out = Vec::new();
    for i in inputs {
        let mut pts: Vec<LadderPoint> = Vec::new();
        for t in &i.file.tests {
            if t.point.family != "storage.iops" || t.outcome != hwsurvey_result::Outcome::Measured {
                continue;
            }
            let Some(place) = devices_place(&t.point.id, &t.point.params).pop() else {
                continue;
            };
            let Some(iops) = metric(t, "iops").and_then(|m| m.summary.as_ref()) else {
                continue;
            };
            if place.curve != curve || pts.iter().any(|p| p.devices == place.row_key as usize) {
                continue;
            }
            let d = &t.details;
            let ceilings: Option<Vec<f64>> = d
                .get("targets")
                .and_then(Value::as_array)
                .map(|ts| {
                    ts.iter()
                        .map(|c| {
                            c.get("pcie_current_ceiling_bytes_per_s")
                                .and_then(Value::as_f64)
                        })
                        .collect::<Option<Vec<f64>>>()
                })
                .unwrap_or(None);
            pts.push(LadderPoint {
                devices: place.row_key as usize,
                iops: iops.median,
                busy_cpus: d.get("cpu_busy_cpus").and_then(Value::as_f64),
                bytes_per_s: d
                    .get("block_size_bytes")
                    .and_then(Value::as_f64)
                    .map(|b| b * iops.median),
                link_ceiling_bytes_per_s: ceilings
                    .map(|c| c.iter().sum::<f64>())
                    .map(|own| own.min(shared_ceiling(&i.file, d).unwrap_or(f64::INFINITY))),
            });
        }
        pts.sort_by_key(|p| p.devices);
        let (Some(one), Some(top)) = (pts.first(), pts.last()) else {
            continue;
        };
        if pts.len() < 2 || one.devices != 1 || one.iops <= 0.0 {
            continue;
        }
        let eff = |p: &LadderPoint| p.iops / (p.devices as f64 * one.iops);
        let knee = pts
            .iter()
            .filter(|p| eff(p) >= 0.9)
            .map(|p| p.devices)
            .max()
            .unwrap_or(1);
        let cpus = i.file.environment.cpus.len();
        // both figures in every case, the limiting one first
        let cpu = top
            .busy_cpus
            .map(|b| format!("{b:.1} of {cpus} usable CPUs busy"))
            .unwrap_or_else(|| "CPU busy time unknown".into());
        let links = match (top.bytes_per_s, top.link_ceiling_bytes_per_s) {
            (Some(m), Some(c)) => format!(
                "links {} of {} together",
                format_rate_decimal(m),
                format_rate_decimal(c)
            ),
            _ => "link ceilings unknown".into(),
        };
        let limit = match (top.busy_cpus, top.bytes_per_s, top.link_ceiling_bytes_per_s) {
            (Some(b), _, _) if cpus > 0 && b >= 0.8 * cpus as f64 => {
                format!("the CPU ({cpu}; {links})")
            }
            (_, Some(moved), Some(ceiling)) if ceiling > 0.0 && moved >= 0.8 * ceiling => {
                format!("the PCIe links ({links}; {cpu})")
            }
            _ => format!("the devices ({cpu}; {links})"),
        };
        out.push(format!(
            "{}: {} devices {} = {:.0} % of {} x 1 device ({}); knee at {}; limit: {limit}",
            i.label,
            top.devices,
            human(top.iops, "IOPS"),
            100.0 * eff(top),
            top.devices,
            human(one.iops, "IOPS"),
            if knee == 1 {
                "1 device".to_string()
            } else {
                format!("{knee} devices")
            },
        ));
    }
    out
}

/// Id of the storage ceilings table ([`storage_ceilings_table`]).
pub const CEILINGS_ID: &str = "storage:ceilings";

/// Each storage device's PCIe ceiling against the most it moved alone: one row per device
/// (its block device and PCI address, from the points' `details.targets`), one column per
/// platform, each cell the best median `bandwidth_bytes_per_s` of the device's single-target
/// points with its share of the device's current link ceiling (`pcie_current_ceiling_bytes_per_s`)
/// in the note. `None` when no device of any platform has a known ceiling (a VM's virtio disk,
/// loop devices).
pub fn storage_ceilings_table(inputs: &[Input], flags: &[String]) -> Option<Table> {
    // per device label, per platform: (best bandwidth, its link ceiling)
    type Best = Option<(f64, Option<f64>)>;
    let mut rows: Vec<(String, Vec<Best>)> = Vec::new();
    for (k, i) in inputs.iter().enumerate() {
        for t in &i.file.tests {
            if t.point.family != "storage.iops" || t.outcome != hwsurvey_result::Outcome::Measured {
                continue;
            }
            let targets = t.details.get("targets").and_then(Value::as_array);
            let [target] = targets.map(Vec::as_slice).unwrap_or(&[]) else {
                continue; // several devices at once: not one device's figure
            };
            let Some(bw) = metric(t, "bandwidth_bytes_per_s").and_then(|m| m.summary.as_ref())
            else {
                continue;
            };
            let name = target
                .get("block_device")
                .and_then(Value::as_str)
                .unwrap_or("?");
            let label = match target.get("pci_address").and_then(Value::as_str) {
                Some(a) => format!("{name} ({a})"),
                None => name.to_string(),
            };
            let ceiling = target
                .get("pcie_current_ceiling_bytes_per_s")
                .and_then(Value::as_f64);
            let at = match rows.iter().position(|(l, _)| *l == label) {
                Some(at) => at,
                None => {
                    rows.push((label, vec![None; inputs.len()]));
                    rows.len() - 1
                }
            };
            let cell = &mut rows[at].1[k];
            if cell.is_none_or(|(best, _)| bw.median > best) {
                *cell = Some((bw.median, ceiling));
            }
        }
    }
    let known = rows
        .iter()
        .any(|(_, cells)| cells.iter().flatten().any(|(_, c)| c.is_some()));
    if !known {
        return None;
    }
    let mut notes = flags.to_vec();
    notes.push(
        "rows: each storage device alone; value = the best median bandwidth of its points \
         (any pattern, threads, queue depth), with its share of the device's current PCIe link \
         ceiling (per direction)"
            .into(),
    );
    Some(Table {
        id: CEILINGS_ID.into(),
        title: "storage.iops: each device's bandwidth against its PCIe ceiling".into(),
        row_header: "device".into(),
        columns: inputs.iter().map(|i| i.label.clone()).collect(),
        rows: rows
            .into_iter()
            .map(|(label, cells)| Row {
                label,
                unit: Some("bytes_per_s".into()),
                x: None,
                cells: cells
                    .into_iter()
                    .map(|c| match c {
                        None => Cell::missing("this device was not measured alone here"),
                        Some((bw, ceiling)) => {
                            let mut cell = Cell::text(format_rate_decimal(bw));
                            cell.value = Some(bw);
                            cell.note = Some(match ceiling {
                                Some(c) if c > 0.0 => format!(
                                    "{:.0} % of its {} link ceiling",
                                    100.0 * bw / c,
                                    format_rate_decimal(c)
                                ),
                                _ => "link ceiling unknown".into(),
                            });
                            cell
                        }
                    })
                    .collect(),
            })
            .collect(),
        notes,
        plot: None,
    })
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
        "storage.iops" => vec![
            CurveRule {
                place: devices_place,
                metric: "iops",
                x_metric: None,
                title: |c| format!("IOPS vs devices ({})", c.replace('/', ", ")),
                spec: || devices_spec("IOPS"),
            },
            CurveRule {
                place: devices_place,
                metric: "cpu_ns_per_io",
                x_metric: None,
                title: |c| format!("CPU time per I/O vs devices ({})", c.replace('/', ", ")),
                spec: || devices_spec("CPU time per I/O"),
            },
        ],
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
    let unit = unit_of(&m.name);
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
            let unit = unit_of(r.metric);
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
            // one storage target: no ladder, the family table already has its figures
            if family == "storage.iops" && rows.len() < 2 {
                continue;
            }
            let spec = (r.spec)();
            let mut notes = flags.to_vec();
            notes.push(format!(
                "rows: {}; value = median {} of the samples (CV = coefficient of variation); one line per platform in the plot",
                spec.x_label, r.metric
            ));
            if family == "storage.iops" && r.metric == "iops" {
                notes.extend(ladder_notes(inputs, &g.key));
            }
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

//! SVG plots (plotters): scaling curves, one line per platform, axis labels with units.
//! Thread scaling series come from family-table rows whose test ids end in `/threads=N` (x =
//! threads, y = the row's headline value); every other curve is a scaling table with a
//! [`PlotSpec`] ([`crate::scaling`]).

use std::collections::BTreeMap;

use plotters::prelude::*;

use hwsurvey_model::units::{format_bytes_binary, three_significant};

use crate::layout::{Comparison, PlotSpec, Table};

/// Per test id without `/threads=N`: (unit, per platform the (threads, value) points).
type SeriesGroups = BTreeMap<String, (String, Vec<Vec<(f64, f64)>>)>;

fn scaling_series(t: &Table, platforms: usize) -> SeriesGroups {
    let mut out: SeriesGroups = BTreeMap::new();
    for r in &t.rows {
        let Some((prefix, n)) = r.label.rsplit_once("/threads=") else {
            continue;
        };
        let Ok(threads) = n.parse::<f64>() else {
            continue;
        };
        let entry = out.entry(prefix.to_string()).or_insert_with(|| {
            (
                r.unit.clone().unwrap_or_default(),
                vec![Vec::new(); platforms],
            )
        });
        for (k, cell) in r.cells.iter().take(platforms).enumerate() {
            if let Some(v) = cell.value.filter(|v| v.is_finite()) {
                entry.1[k].push((threads, v));
            }
        }
    }
    out
}

/// Unit label and divisor for a base unit.
fn axis_unit(unit: &str, max: f64) -> (String, f64) {
    match unit {
        "bytes_per_s" => ("GB/s".into(), 1e9),
        "ns" => ("ns".into(), 1.0),
        u if max >= 1e6 => (format!("million {}", u.replace("_per_s", "/s")), 1e6),
        u => (u.replace("_per_s", "/s"), 1.0),
    }
}

/// SVG plots for every family table with scaling rows: `(title, svg)`; at most
/// `max_per_family` series groups per family. The title starts with `<family>:`.
pub fn scaling_plots(c: &Comparison, max_per_family: usize) -> Vec<(String, String)> {
    let n = c.platforms.len();
    let mut out = Vec::new();
    for t in c.tables.iter().filter(|t| t.id.starts_with("family:")) {
        for (prefix, (unit, series)) in scaling_series(t, n).into_iter().take(max_per_family) {
            if series.iter().all(|s| s.len() < 2) {
                continue;
            }
            let title = format!("{}: {prefix} vs threads", t.title);
            if let Some(svg) = line_plot(&title, &unit, &c.platforms, &series) {
                out.push((title, svg));
            }
        }
    }
    out
}

fn line_plot(
    title: &str,
    unit: &str,
    labels: &[String],
    series: &[Vec<(f64, f64)>],
) -> Option<String> {
    let xmax = series.iter().flatten().map(|p| p.0).fold(1.0, f64::max);
    let ymax = series.iter().flatten().map(|p| p.1).fold(0.0, f64::max);
    let (ylabel, div) = axis_unit(unit, ymax);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 360)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..xmax * 1.05, 0.0..(ymax / div * 1.1).max(1e-9))
            .ok()?;
        chart
            .configure_mesh()
            .x_desc("threads")
            .y_desc(ylabel)
            .draw()
            .ok()?;
        for (k, (s, label)) in series.iter().zip(labels).enumerate() {
            let color = Palette99::pick(k).to_rgba();
            let mut pts = s.clone();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let pts: Vec<(f64, f64)> = pts.into_iter().map(|(x, y)| (x, y / div)).collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .ok()?
                .label(label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            chart
                .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))
                .ok()?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .ok()?;
        root.present().ok()?;
    }
    Some(svg)
}

/// SVG plots of the scaling tables (those with a [`PlotSpec`]): `(table title, svg)`, one
/// line per platform; x from each cell's `x`, else its row's; y the cell's value. Tables
/// where no platform has two points are not plotted.
pub fn curve_plots(c: &Comparison) -> Vec<(String, String)> {
    let n = c.platforms.len();
    let mut out = Vec::new();
    for t in &c.tables {
        let Some(spec) = &t.plot else {
            continue;
        };
        let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n];
        for r in &t.rows {
            for (k, cell) in r.cells.iter().take(n).enumerate() {
                let (Some(x), Some(y)) = (cell.x.or(r.x), cell.value) else {
                    continue;
                };
                let x = if spec.x_log { x.log2() } else { x };
                let y = if spec.y_log { y.log10() } else { y };
                if x.is_finite() && y.is_finite() {
                    series[k].push((x, y));
                }
            }
        }
        if series.iter().all(|s| s.len() < 2) {
            continue;
        }
        let unit = t
            .rows
            .iter()
            .find_map(|r| r.unit.clone())
            .unwrap_or_default();
        if let Some(svg) = spec_plot(&t.title, spec, &unit, &c.platforms, &series) {
            out.push((t.title.clone(), svg));
        }
    }
    out
}

/// Tick text of an x value (already log2 when the axis is logarithmic).
fn x_tick(spec: &PlotSpec, v: f64) -> String {
    let raw = if spec.x_log { v.exp2() } else { v };
    match spec.x_unit.as_str() {
        "bytes" => format_bytes_binary(raw.round().max(0.0) as u64),
        "bytes_per_s" => three_significant(raw / 1e9),
        _ => three_significant(raw),
    }
}

fn spec_plot(
    title: &str,
    spec: &PlotSpec,
    unit: &str,
    labels: &[String],
    series: &[Vec<(f64, f64)>],
) -> Option<String> {
    let pts = || series.iter().flatten();
    let (mut xmin, mut xmax) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut ymin, mut ymax) = (f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y) in pts() {
        xmin = xmin.min(x);
        xmax = xmax.max(x);
        ymin = ymin.min(y);
        ymax = ymax.max(y);
    }
    // y axis in a readable unit: divide linear values; log axes show the raw unit
    let (yunit, div) = if spec.y_log {
        (unit.replace("_per_s", "/s"), 1.0)
    } else {
        axis_unit(unit, ymax)
    };
    let (x0, x1) = if spec.x_log {
        (xmin.floor() - 0.25, xmax.ceil() + 0.25)
    } else {
        (0.0, (xmax * 1.05).max(1e-9))
    };
    let (y0, y1) = if spec.y_log {
        (ymin.floor(), ymax.ceil().max(ymin.floor() + 1.0))
    } else {
        (0.0, (ymax / div * 1.1).max(1e-9))
    };
    let xdesc = match (spec.x_unit.as_str(), spec.x_log) {
        ("bytes", true) => format!("{} (bytes, log scale)", spec.x_label),
        ("bytes_per_s", _) => format!("{} (GB/s)", spec.x_label),
        (u, true) => format!("{} ({u}, log scale)", spec.x_label),
        (u, false) => format!("{} ({u})", spec.x_label),
    };
    let ydesc = if spec.y_log {
        format!("{} ({yunit}, log scale)", spec.y_label)
    } else {
        format!("{} ({yunit})", spec.y_label)
    };
    let xticks = if spec.x_log {
        ((x1 - x0).round() as usize + 1).clamp(2, 14)
    } else {
        8
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 360)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 15))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0..y1)
            .ok()?;
        let xfmt = |v: &f64| x_tick(spec, *v);
        let yfmt = |v: &f64| {
            if spec.y_log {
                three_significant(10f64.powf(*v))
            } else {
                three_significant(*v)
            }
        };
        chart
            .configure_mesh()
            .x_labels(xticks)
            .x_label_formatter(&xfmt)
            .y_label_formatter(&yfmt)
            .x_desc(xdesc)
            .y_desc(ydesc)
            .draw()
            .ok()?;
        for (k, (s, label)) in series.iter().zip(labels).enumerate() {
            if s.is_empty() {
                continue;
            }
            let color = Palette99::pick(k).to_rgba();
            let mut pts = s.clone();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let pts: Vec<(f64, f64)> = pts
                .into_iter()
                .map(|(x, y)| (x, if spec.y_log { y } else { y / div }))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .ok()?
                .label(label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            chart
                .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))
                .ok()?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .ok()?;
        root.present().ok()?;
    }
    Some(svg)
}

/// Every plot of a comparison, in table order: thread scaling (at most three series groups
/// per family) and the scaling tables' curves. `(title, svg)`; the HTML report places a plot
/// after the table whose title it carries (or starts with, followed by `:`).
pub fn all_plots(c: &Comparison) -> Vec<(String, String)> {
    let mut out = scaling_plots(c, 3);
    out.extend(curve_plots(c));
    out
}

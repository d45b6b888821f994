//! SVG plots (plotters): scaling curves, one line per platform, axis labels with units.
//! Series come from test ids ending in `/threads=N`: the x axis is threads, the y axis the
//! row's headline value in its base unit.

use std::collections::BTreeMap;

use plotters::prelude::*;

use crate::layout::{Comparison, Table};

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

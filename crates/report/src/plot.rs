//! SVG plots (plotters): scaling curves, one line per platform, axis labels with units, all
//! drawn by one drawer ([`figure`]): the printed report's small multiples and the standalone
//! files of `compare --plots DIR` alike.
//! Thread scaling series come from family-table rows whose test ids end in `/threads=N` (x =
//! threads, y = the row's headline value; [`hwsurvey_result::plan::split_rung`]); every other curve is a scaling table with a
//! [`PlotSpec`] ([`crate::scaling`]).

use std::collections::BTreeMap;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use hwsurvey_model::units::{format_bytes_binary, three_significant};

use crate::layout::{Comparison, PlotSpec, Table};

/// Per platform the points of one curve, `(x, y)`.
pub(crate) type Series = Vec<Vec<(f64, f64)>>;

/// Per test id without `/threads=N`: (unit, per platform the (threads, value) points).
pub(crate) type SeriesGroups = BTreeMap<String, (String, Vec<Vec<(f64, f64)>>)>;

pub(crate) fn scaling_series(t: &Table, platforms: usize) -> SeriesGroups {
    let mut out: SeriesGroups = BTreeMap::new();
    for r in &t.rows {
        // a landmark rung with CPUs of its own (`/threads=48/cores`) is placed differently from
        // the ladder's other rungs: it stays in the tables, off the curve
        let Some(rung) = hwsurvey_result::plan::split_rung(&r.label).filter(|r| r.own.is_none())
        else {
            continue;
        };
        let threads = rung.threads as f64;
        let entry = out.entry(rung.prefix.to_string()).or_insert_with(|| {
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

/// What a value in a base unit is, for an axis title.
fn quantity(unit: &str) -> &'static str {
    match unit {
        "bytes_per_s" => "bandwidth",
        "ns" => "latency",
        "bytes" => "size",
        u if u.ends_with("per_s") || u == "iops" => "throughput",
        _ => "value",
    }
}

/// Unit label and divisor for a base unit.
fn axis_unit(unit: &str, max: f64) -> (String, f64) {
    match unit {
        "bytes_per_s" => ("GB/s".into(), 1e9),
        // a loaded machine's latency runs to hundreds of microseconds
        "ns" if max >= 1e4 => ("µs".into(), 1e3),
        "ns" => ("ns".into(), 1.0),
        u if max >= 1e6 => (format!("million {}", u.replace("_per_s", "/s")), 1e6),
        u => (u.replace("_per_s", "/s"), 1.0),
    }
}

/// SVG plots for every family table with scaling rows: `(title, svg)`, one plot per series
/// group, at most `max_per_family` per family, those with a line for the most platforms first
/// ([`thread_groups`]). The title starts with `<family>:`; the SVG does not carry it (the HTML
/// report's figure caption is the plot's only heading). Drawn as [`plot_files`] draws, on
/// log axes where its lines lie more than [`SHARED_Y_SPAN`] apart.
pub fn scaling_plots(c: &Comparison, max_per_family: usize) -> Vec<(String, String)> {
    figure::single_plots(c, max_per_family, false, false)
}

/// The thread-scaling series groups of family table `t` that have a line of two points or
/// more: `(test id without /threads=N, unit, per platform the points)`, those most platforms
/// can draw a line of first (a block size only one run had comes last), among them STREAM
/// Triad, then the other STREAM kernels, then by name.
pub(crate) fn thread_groups(t: &Table, platforms: usize) -> Vec<(String, String, Series)> {
    let mut groups: Vec<_> = scaling_series(t, platforms)
        .into_iter()
        .filter(|(_, (_, series))| series.iter().any(|s| s.len() >= 2))
        .map(|(prefix, (unit, series))| (prefix, unit, series))
        .collect();
    groups.sort_by_key(|(prefix, _, series)| {
        let headline = if prefix.contains("triad") {
            0 // STREAM Triad: the bandwidth headline
        } else if prefix.starts_with("stream.") {
            1
        } else {
            2
        };
        (
            std::cmp::Reverse(series.iter().filter(|s| s.len() >= 2).count()),
            headline,
        )
    });
    groups
}

/// The thread-scaling series groups of `c`, at most `max_per_family` per family, in
/// [`thread_groups`]' order: `(title, unit, per platform the points)`, the title
/// `"<family>: <test id without /threads=N> vs threads"`.
pub(crate) fn scaling_groups(
    c: &Comparison,
    max_per_family: usize,
) -> Vec<(String, String, Series)> {
    let n = c.platforms.len();
    let mut out = Vec::new();
    for t in c.tables.iter().filter(|t| t.id.starts_with("family:")) {
        for (prefix, unit, series) in thread_groups(t, n).into_iter().take(max_per_family) {
            out.push((format!("{}: {prefix} vs threads", t.title), unit, series));
        }
    }
    out
}

/// An f64 axis with its ticks (and grid lines) exactly at given values: the count and log2
/// axes, where plotters' own choice would put ticks at fractions.
struct TickedAxis {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl TickedAxis {
    fn new(range: std::ops::Range<f64>, ticks: Vec<f64>) -> TickedAxis {
        TickedAxis {
            inner: range.into(),
            ticks,
        }
    }
}

impl Ranged for TickedAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// Integer tick positions for a count axis from 0 to `max`: every integer up to 16, else a
/// step of 2, 4, 8 ... so that at most about 16 ticks remain. Never a fraction of a thread.
pub fn count_ticks(max: f64) -> Vec<f64> {
    let top = max.max(1.0).ceil() as u64;
    let mut step = 1u64;
    while top / step > 16 {
        step *= 2;
    }
    (0..=top / step).map(|k| (k * step) as f64).collect()
}

/// Integer positions on a log2 axis between `x0` and `x1` (powers of two of the raw value),
/// thinned to at most 14 ticks.
pub fn log2_ticks(x0: f64, x1: f64) -> Vec<f64> {
    let (lo, hi) = (x0.ceil() as i64, x1.floor() as i64);
    if hi < lo {
        return vec![x0.round()];
    }
    let span = (hi - lo) as usize + 1;
    let step = span.div_ceil(14).max(1);
    (lo..=hi).step_by(step).map(|v| v as f64).collect()
}

/// Ticks at multiples of 1, 2 or 5 x 10^k between `x0` and `x1`, about `n` of them.
pub fn linear_ticks(x0: f64, x1: f64, n: usize) -> Vec<f64> {
    let span = x1 - x0;
    if !(span.is_finite() && span > 0.0) || n == 0 {
        return vec![x0];
    }
    let raw = span / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (x0 / step).ceil() as i64;
    let last = (x1 / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// Ticks of a log10 axis (values are log10 of the raw value) at 1, 2 and 5 x 10^k; only
/// the decades when that would be more than 12 ticks.
pub fn log10_ticks(y0: f64, y1: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let all = (y1 - y0) <= 4.0;
    let mut k = y0.floor() as i64;
    while (k as f64) <= y1 {
        let subs: &[f64] = if all { &[1.0, 2.0, 5.0] } else { &[1.0] };
        for m in subs {
            let v = k as f64 + m.log10();
            if v >= y0 - 1e-9 && v <= y1 + 1e-9 {
                out.push(v);
            }
        }
        k += 1;
    }
    out
}

/// Tick text: at most three decimals, no trailing zeros (`0.2`, `1.8`, `60`, `200`).
pub fn tick_text(v: f64) -> String {
    if v.abs() >= 1000.0 {
        return format!("{v:.0}");
    }
    let t = format!("{v:.3}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" || t.is_empty() {
        "0".into()
    } else {
        t.to_string()
    }
}

/// Line colours readable on white, after Okabe & Ito's colour-blind-safe palette (no yellow),
/// with black third; markers and dash patterns differ too, so lines stay apart in greyscale.
const COLOURS: [RGBColor; 6] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0x8C, 0x56, 0x1A), // brown
];

/// Colour of platform `k`'s line.
pub fn colour(k: usize) -> RGBColor {
    COLOURS[k % COLOURS.len()]
}

/// Marker of platform `k` at pixel offset (0, 0): filled circle, triangle, square, cross,
/// open circle, open square.
fn marker<DB: DrawingBackend>(k: usize, c: RGBColor) -> DynElement<'static, DB, (i32, i32)> {
    match k % 6 {
        0 => Circle::new((0, 0), 4, c.filled()).into_dyn(),
        1 => TriangleMarker::new((0, 0), 5, c.filled()).into_dyn(),
        2 => Rectangle::new([(-4, -4), (4, 4)], c.filled()).into_dyn(),
        3 => Cross::new((0, 0), 4, c.stroke_width(2)).into_dyn(),
        4 => Circle::new((0, 0), 4, c.stroke_width(2)).into_dyn(),
        _ => Rectangle::new([(-4, -4), (4, 4)], c.stroke_width(2)).into_dyn(),
    }
}

/// Dash pattern of platform `k` (dash, gap in pixels), `None` for solid: solid, dashed, dotted.
fn dashes(k: usize) -> Option<(u32, u32)> {
    match k % 3 {
        0 => None,
        1 => Some((10, 5)),
        _ => Some((3, 4)),
    }
}

/// Draws one platform's line with its colour, dash pattern and markers (the legend, drawn
/// once per figure above its panels, shows the same).
fn draw_line<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    k: usize,
    pts: Vec<(f64, f64)>,
) -> Option<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let c = colour(k);
    let style = c.stroke_width(2);
    match dashes(k) {
        None => chart
            .draw_series(LineSeries::new(pts.clone(), style))
            .ok()?,
        Some((d, g)) => chart
            .draw_series(DashedLineSeries::new(pts.clone(), d, g, style))
            .ok()?,
    };
    // the legend's markers, one concrete element type per shape
    let at = pts.into_iter();
    let sq = [(-4, -4), (4, 4)];
    let drawn = match k % 6 {
        0 => chart
            .draw_series(at.map(|p| Circle::new(p, 4, c.filled())))
            .map(|_| ()),
        1 => chart
            .draw_series(at.map(|p| TriangleMarker::new(p, 5, c.filled())))
            .map(|_| ()),
        2 => chart
            .draw_series(at.map(|p| EmptyElement::at(p) + Rectangle::new(sq, c.filled())))
            .map(|_| ()),
        3 => chart
            .draw_series(at.map(|p| Cross::new(p, 4, c.stroke_width(2))))
            .map(|_| ()),
        4 => chart
            .draw_series(at.map(|p| Circle::new(p, 4, c.stroke_width(2))))
            .map(|_| ()),
        _ => chart
            .draw_series(at.map(|p| EmptyElement::at(p) + Rectangle::new(sq, c.stroke_width(2))))
            .map(|_| ()),
    };
    drawn.ok()?;
    Some(())
}

/// A series value as drawn: log10 values as they are, linear ones in the axis unit (`div`).
fn drawn_y(y_log: bool, div: f64) -> impl Fn(f64) -> f64 {
    move |y| if y_log { y } else { y / div }
}

/// Draws each platform's line ([`draw_line`]), its points in x order and each y through
/// `y` (a unit's divisor); a platform without points gets no line.
fn draw_lines<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    series: &[Vec<(f64, f64)>],
    y: impl Fn(f64) -> f64,
) -> Option<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (k, s) in series.iter().enumerate() {
        if s.is_empty() {
            continue;
        }
        let mut pts: Vec<(f64, f64)> = s.iter().map(|&(px, py)| (px, y(py))).collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        draw_line(chart, k, pts)?;
    }
    Some(())
}

/// SVG plots of the scaling tables (those with a [`PlotSpec`]): `(table title, svg)`, one
/// line per platform; x from each cell's `x`, else its row's; y the cell's value. Tables
/// where no platform has two points are not plotted.
pub fn curve_plots(c: &Comparison) -> Vec<(String, String)> {
    figure::single_plots(c, 0, true, false)
}

/// The points of scaling table `t`'s curve per platform, x as log2 and y as log10 where its
/// [`PlotSpec`] says so; `None` without a spec or when no platform has two points.
pub(crate) fn curve_series(t: &Table, platforms: usize) -> Option<Series> {
    let spec = t.plot.as_ref()?;
    let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); platforms];
    for r in &t.rows {
        for (k, cell) in r.cells.iter().take(platforms).enumerate() {
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
        return None;
    }
    Some(series)
}

/// Base unit of a table's values (its first row with one).
pub(crate) fn table_unit(t: &Table) -> String {
    t.rows
        .iter()
        .find_map(|r| r.unit.clone())
        .unwrap_or_default()
}

/// Tick text of an x value (already log2 when the axis is logarithmic).
fn x_tick(spec: &PlotSpec, v: f64) -> String {
    let raw = if spec.x_log { v.exp2() } else { v };
    match spec.x_unit.as_str() {
        "bytes" => format_bytes_binary(raw.round().max(0.0) as u64),
        "bytes_per_s" => tick_text(raw / 1e9),
        // counts (clients): whole numbers, never "2.00"
        _ if (raw - raw.round()).abs() < 1e-6 => format!("{:.0}", raw.round()),
        _ => three_significant(raw),
    }
}

mod figure;

pub use figure::{report_figures, COLUMNS, SHARED_Y_SPAN};

/// The figures of the printed report ([`report_figures`]): small multiples, per family its
/// first [`REPORT_PLOTS_PER_FAMILY`] thread-scaling series groups as panels of one figure,
/// and per view of the scaling tables one figure with a panel per table. `(title, svg)`, the
/// SVG without the title: the HTML report gives each figure its caption.
pub fn all_plots(c: &Comparison) -> Vec<(String, String)> {
    report_figures(c)
}

/// Thread-scaling series groups the report draws per family, as panels of one figure (one
/// row of [`COLUMNS`]); [`plot_files`] writes every one as its own plot, and
/// [`left_out_of_report`] names the others.
pub const REPORT_PLOTS_PER_FAMILY: usize = 4;

/// Titles of the thread-scaling plots [`all_plots`] leaves out of the report (beyond
/// [`REPORT_PLOTS_PER_FAMILY`] per family), so that the report can say so.
pub fn left_out_of_report(c: &Comparison) -> Vec<String> {
    let shown: Vec<String> = scaling_groups(c, REPORT_PLOTS_PER_FAMILY)
        .into_iter()
        .map(|(t, _, _)| t)
        .collect();
    scaling_groups(c, usize::MAX)
        .into_iter()
        .map(|(t, _, _)| t)
        .filter(|t| !shown.contains(t))
        .collect()
}

/// [`all_plots`] for standalone files, without the report's per-family limit: one plot per
/// thread-scaling series group and per scaling table, drawn by the report's figure drawer
/// (the same units, ticks and log axes where lines lie more than [`SHARED_Y_SPAN`] apart,
/// said on the axis) as one panel at 640 x 360 px under its title, and
/// paired with its file name ([`file_name`]), unique within the comparison:
/// `(file name, svg)`.
pub fn plot_files(c: &Comparison) -> Vec<(String, String)> {
    // every plot: the directory is where the ones the report leaves out are found
    let plots = figure::single_plots(c, usize::MAX, true, true);
    let mut out: Vec<(String, String)> = Vec::new();
    for (title, svg) in plots {
        let base = file_name(&title);
        let mut name = format!("{base}.svg");
        let mut k = 2;
        while out.iter().any(|(n, _)| *n == name) {
            name = format!("{base}-{k}.svg");
            k += 1;
        }
        out.push((name, svg));
    }
    out
}

/// File name stem of a plot from its title, stable across runs: the family as written, then
/// the view in lower case with every run of other characters than letters, digits, `.` and
/// `_` as one `-`. `"mem.bandwidth: stream.triad vs threads"` ->
/// `mem.bandwidth-stream.triad-vs-threads`; `"mem.latency latency vs working set
/// (chase.random, thp)"` -> `mem.latency-latency-vs-working-set-chase.random-thp`.
pub fn file_name(title: &str) -> String {
    let mut out = String::new();
    let mut gap = false;
    // at most 200 bytes: a name must fit NAME_MAX (255) with ".svg"
    for ch in title.chars() {
        if out.len() >= 200 {
            break;
        }
        if ch.is_ascii_alphanumeric() || ch == '.' || ch == '_' {
            if gap && !out.is_empty() {
                out.push('-');
            }
            gap = false;
            out.push(ch.to_ascii_lowercase());
        } else {
            gap = true;
        }
    }
    if out.is_empty() {
        "plot".into()
    } else {
        out
    }
}

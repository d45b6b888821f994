//! Small multiples for the printed report: one figure per family's thread scaling and per
//! view of a family's scaling tables (block size at each thread count, working set in each
//! page mode), its panels side by side, at most [`COLUMNS`] in a row, on the same axes (x
//! always; y too unless one panel's values are more than [`SHARED_Y_SPAN`] times
//! another's), with the axis titles and one legend written once, above the panels. A panel
//! is drawn at the size it is printed, so its text stays legible on paper. The standalone
//! files of `compare --plots DIR` are figures of one panel each, drawn here too
//! ([`single_plots`]): one plotting path, the same log axes.

use plotters::prelude::*;

use crate::layout::{Comparison, PlotSpec};

use super::{
    axis_unit, colour, count_ticks, curve_series, dashes, draw_lines, drawn_y, linear_ticks,
    log10_ticks, log2_ticks, marker, quantity, scaling_groups, table_unit, thread_groups,
    tick_text, x_tick, Series, TickedAxis, REPORT_PLOTS_PER_FAMILY,
};

/// Panels in a row: four fill the printed width of an A4 page (190 mm at 96 dpi, 718 px).
pub const COLUMNS: usize = 4;
/// Largest ratio of one panel's highest value to another's on a shared linear y axis; a
/// figure with a wider spread gives each panel its own y range (and says so), and a figure
/// whose lines lie further apart than this is drawn on log axes.
pub const SHARED_Y_SPAN: f64 = 10.0;

/// Sizes of a figure, pixels: the report's small multiples or a standalone file.
#[derive(Clone, Copy)]
struct Style {
    /// Width and height of one panel (drawn at the size printed).
    panel: (u32, u32),
    /// Ticks per axis in a panel, at most.
    max_ticks: usize,
    /// Font size of tick labels and of panel titles.
    tick_font: u32,
    title_font: u32,
    /// Height of the tick labels under a panel's x axis.
    x_labels: u32,
    /// Height of the title above the strip (0: none, the HTML caption gives it).
    caption: u32,
}

/// The printed report's panels: four in a row.
const REPORT: Style = Style {
    panel: (176, 150),
    max_ticks: 5,
    tick_font: 10,
    title_font: 11,
    x_labels: 16,
    caption: 0,
};

/// A standalone file (`compare --plots DIR`): its title, the strip and one panel, 640 x 360
/// in all.
const FILE: Style = Style {
    panel: (640, 298),
    max_ticks: 10,
    tick_font: 12,
    title_font: 15,
    x_labels: 22,
    caption: 24,
};

/// [`FILE`] without the title: an HTML caption gives it.
const UNTITLED_FILE: Style = Style {
    panel: (640, 322),
    caption: 0,
    ..FILE
};

/// One figure: panels that share a spec and a unit.
struct Figure {
    title: String,
    spec: PlotSpec,
    unit: String,
    /// (panel title, per platform the points, x log2 / y log10 where the spec says so).
    panels: Vec<(String, Series)>,
}

/// The spec of a thread-scaling figure: threads on a linear count axis.
fn threads_spec(unit: &str) -> PlotSpec {
    PlotSpec {
        x_label: "threads".into(),
        x_unit: "threads".into(),
        x_log: false,
        y_label: quantity(unit).into(),
        y_log: false,
    }
}

/// The view and the panel of a scaling table's title: `"mem.latency latency vs working set
/// (full_random, thp)"` -> (`"mem.latency latency vs working set"`, `"full_random, thp"`).
fn view_and_panel(title: &str) -> (String, String) {
    match title.strip_suffix(')').and_then(|t| t.split_once(" (")) {
        Some((view, panel)) => (view.to_string(), panel.to_string()),
        None => (title.to_string(), String::new()),
    }
}

fn figures(c: &Comparison) -> Vec<Figure> {
    let n = c.platforms.len();
    let mut out: Vec<Figure> = Vec::new();
    for t in c.tables.iter().filter(|t| t.id.starts_with("family:")) {
        let groups = thread_groups(t, n);
        let mut family: Vec<Figure> = Vec::new();
        for (prefix, unit, series) in groups.into_iter().take(REPORT_PLOTS_PER_FAMILY) {
            match family.iter_mut().find(|f| f.unit == unit) {
                Some(f) => f.panels.push((prefix, series)),
                None => family.push(Figure {
                    title: format!("{} vs threads", t.title),
                    spec: threads_spec(&unit),
                    unit,
                    panels: vec![(prefix, series)],
                }),
            }
        }
        out.extend(family);
    }
    // the scaling tables: one figure per view (read and write block-size tables alternate
    // by thread count: each view gathers its own), in the order of their first tables
    let threads_figures = out.len();
    for t in c.tables.iter() {
        let (Some(spec), Some(series)) = (&t.plot, curve_series(t, n)) else {
            continue;
        };
        let (view, panel) = view_and_panel(&t.title);
        let unit = table_unit(t);
        match out[threads_figures..]
            .iter_mut()
            .find(|f| f.title == view && f.unit == unit && &f.spec == spec)
        {
            Some(f) => f.panels.push((panel, series)),
            None => out.push(Figure {
                title: view,
                spec: spec.clone(),
                unit,
                panels: vec![(panel, series)],
            }),
        }
    }
    out
}

/// Every `k`-th tick so that at most `max` remain (the first one kept).
fn thin(ticks: Vec<f64>, max: usize) -> Vec<f64> {
    let step = ticks.len().div_ceil(max).max(1);
    ticks.into_iter().step_by(step).collect()
}

/// y range and ticks of values up to `max` (after the unit's divisor), or of log10 values
/// from `min` to `max`, at most `ticks` of them.
fn y_axis(log: bool, min: f64, max: f64, ticks: usize) -> (f64, f64, Vec<f64>) {
    if log {
        let (lo, hi) = (min.floor(), max.ceil().max(min.floor() + 1.0));
        (lo, hi, thin(log10_ticks(lo, hi), ticks))
    } else {
        let top = (max * 1.08).max(1e-9);
        (
            0.0,
            top,
            linear_ticks(0.0, top, ticks.saturating_sub(1).max(1)),
        )
    }
}

/// The figures of the printed report as SVG, `(title, svg)`: per family its first
/// [`REPORT_PLOTS_PER_FAMILY`] thread-scaling series groups as panels of one figure, then per
/// view of the scaling tables one figure with a panel per table. The titles are the HTML
/// figure captions (the SVG has none); the panels' titles, the axis titles and the legend are
/// in the SVG.
pub fn report_figures(c: &Comparison) -> Vec<(String, String)> {
    figures(c)
        .into_iter()
        .filter_map(|f| Some((f.title.clone(), draw(&f, &c.platforms, REPORT)?)))
        .collect()
}

/// One plot per thread-scaling series group (at most `max_per_family` per family) and, with
/// `curves`, per scaling table, each a figure of one panel drawn as a standalone file
/// ([`FILE`]): `(title, svg)`. With `titled` the SVG carries the title above the plot (a
/// file says what it shows); without, it has none (an HTML caption gives it).
pub(super) fn single_plots(
    c: &Comparison,
    max_per_family: usize,
    curves: bool,
    titled: bool,
) -> Vec<(String, String)> {
    let n = c.platforms.len();
    let mut figures: Vec<Figure> = scaling_groups(c, max_per_family)
        .into_iter()
        .map(|(title, unit, series)| Figure {
            spec: threads_spec(&unit),
            unit,
            panels: vec![(String::new(), series)],
            title,
        })
        .collect();
    if curves {
        for t in &c.tables {
            let (Some(spec), Some(series)) = (&t.plot, curve_series(t, n)) else {
                continue;
            };
            figures.push(Figure {
                title: t.title.clone(),
                spec: spec.clone(),
                unit: table_unit(t),
                panels: vec![(String::new(), series)],
            });
        }
    }
    let style = if titled { FILE } else { UNTITLED_FILE };
    figures
        .into_iter()
        .filter_map(|f| Some((f.title.clone(), draw(&f, &c.platforms, style)?)))
        .collect()
}

/// The largest over the smallest of the series' highest values (per panel and platform, values
/// above 0) of coordinate `pick`: how far apart the lines of a figure lie.
fn spread(f: &Figure, pick: fn(&(f64, f64)) -> f64) -> f64 {
    let tops: Vec<f64> = f
        .panels
        .iter()
        .flat_map(|(_, s)| s.iter())
        .filter_map(|line| {
            let top = line.iter().map(pick).fold(f64::NEG_INFINITY, f64::max);
            (top > 0.0 && top.is_finite()).then_some(top)
        })
        .collect();
    let lo = tops.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = tops.iter().copied().fold(0.0, f64::max);
    if lo.is_finite() && lo > 0.0 {
        hi / lo
    } else {
        1.0
    }
}

/// `f` on log axes where its lines lie more than [`SHARED_Y_SPAN`] apart on a linear one
/// (machines 30x apart: the slower lines flat on zero, a loaded-latency curve a spike at
/// x = 0): y as log10, x (a rate, not threads) as log2, each said on its axis; `None` when
/// the linear axes do.
fn on_log_axes(f: &Figure) -> Option<Figure> {
    let y = !f.spec.y_log && spread(f, |p| p.1) > SHARED_Y_SPAN;
    let x = !f.spec.x_log && f.spec.x_unit != "threads" && spread(f, |p| p.0) > SHARED_Y_SPAN;
    if !x && !y {
        return None;
    }
    let mut spec = f.spec.clone();
    spec.y_log |= y;
    spec.x_log |= x;
    let panels = f
        .panels
        .iter()
        .map(|(title, s)| {
            let s = s
                .iter()
                .map(|line| {
                    line.iter()
                        .filter(|p| (!y || p.1 > 0.0) && (!x || p.0 > 0.0))
                        .map(|&(px, py)| {
                            (
                                if x { px.log2() } else { px },
                                if y { py.log10() } else { py },
                            )
                        })
                        .collect()
                })
                .collect();
            (title.clone(), s)
        })
        .collect();
    Some(Figure {
        title: f.title.clone(),
        spec,
        unit: f.unit.clone(),
        panels,
    })
}

fn draw(f: &Figure, labels: &[String], style: Style) -> Option<String> {
    if let Some(logged) = on_log_axes(f) {
        return draw(&logged, labels, style);
    }
    let max_ticks = style.max_ticks;
    let spec = &f.spec;
    let pts = || f.panels.iter().flat_map(|(_, s)| s.iter().flatten());
    let (mut xmin, mut xmax) = (f64::INFINITY, f64::NEG_INFINITY);
    for &(x, _) in pts() {
        xmin = xmin.min(x);
        xmax = xmax.max(x);
    }
    let ymax_all = pts().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    if !xmin.is_finite() || !ymax_all.is_finite() {
        return None;
    }
    // y in a readable unit: linear values divided; log axes show the raw unit
    let (yunit, div) = if spec.y_log {
        (f.unit.replace("_per_s", "/s"), 1.0)
    } else {
        axis_unit(&f.unit, ymax_all)
    };
    let threads = spec.x_unit == "threads";
    let (x0, x1, xticks) = if threads {
        let ticks = count_ticks(xmax);
        let top = ticks.last().copied().unwrap_or(1.0).max(xmax);
        (0.0, top * 1.05, thin(ticks, max_ticks))
    } else if spec.x_log {
        let (a, b) = (xmin.floor() - 0.25, xmax.ceil() + 0.25);
        let ticks = if spec.x_unit == "bytes_per_s" {
            // a rate reads in decimal steps (0.1, 0.2, 0.5, 1 GB/s), not powers of two
            // (0.134, 0.268, 0.537 GB/s): log10_ticks' positions, back on this log2 axis
            let l = std::f64::consts::LOG10_2;
            log10_ticks(a * l, b * l)
                .into_iter()
                .map(|t| t / l)
                .collect()
        } else {
            log2_ticks(a, b)
        };
        (a, b, thin(ticks, max_ticks))
    } else {
        let top = (xmax * 1.05).max(1e-9);
        (0.0, top, linear_ticks(0.0, top, max_ticks - 1))
    };
    // per panel (min, max) of y, divided into the axis unit
    let extent: Vec<(f64, f64)> = f
        .panels
        .iter()
        .map(|(_, s)| {
            let ys = || s.iter().flatten().map(|p| p.1 / div);
            (
                ys().fold(f64::INFINITY, f64::min),
                ys().fold(f64::NEG_INFINITY, f64::max),
            )
        })
        .collect();
    let tops: Vec<f64> = extent.iter().map(|e| e.1).filter(|v| *v > 0.0).collect();
    let lowest_top = tops.iter().copied().fold(f64::INFINITY, f64::min);
    let highest_top = tops.iter().copied().fold(0.0, f64::max);
    let shared_y = spec.y_log || highest_top <= lowest_top * SHARED_Y_SPAN;
    let all_min = extent.iter().map(|e| e.0).fold(f64::INFINITY, f64::min);
    let shared = y_axis(spec.y_log, all_min, ymax_all / div, max_ticks);

    let axes: Vec<(f64, f64, Vec<f64>)> = extent
        .iter()
        .map(|e| {
            if shared_y {
                shared.clone()
            } else {
                y_axis(spec.y_log, e.0, e.1, max_ticks)
            }
        })
        .collect();
    let yfmt = |v: &f64| {
        if spec.y_log {
            // raw values on a log axis: 500M, 2G rather than 2000000000
            let raw = 10f64.powf(*v);
            if raw >= 1e3 {
                let (n, prefix) = hwsurvey_model::units::decimal_prefixed(raw);
                let n = if n.contains('.') {
                    n.trim_end_matches('0').trim_end_matches('.').to_string()
                } else {
                    n
                };
                format!("{n}{prefix}")
            } else {
                tick_text(raw)
            }
        } else {
            tick_text(*v)
        }
    };
    // room for the widest y tick label, the same in every panel
    let widest = axes
        .iter()
        .flat_map(|a| a.2.iter())
        .map(|v| yfmt(v).chars().count())
        .max()
        .unwrap_or(1);
    let y_area = 8 + char_px(style.tick_font) * widest as u32;

    let n = f.panels.len();
    let cols = n.min(COLUMNS);
    let rows = n.div_ceil(cols);
    let width = style.panel.0 * cols as u32;
    // axis titles, then the legend: one entry per platform with points
    let xdesc = match (spec.x_unit.as_str(), spec.x_log) {
        ("threads", _) => "threads".to_string(),
        ("bytes", true) => format!("{} (log scale)", spec.x_label),
        ("bytes_per_s", true) => format!("{} (GB/s, log scale)", spec.x_label),
        ("bytes_per_s", _) => format!("{} (GB/s)", spec.x_label),
        (u, true) => format!("{} ({u}, log scale)", spec.x_label),
        (u, false) => format!("{} ({u})", spec.x_label),
    };
    let ydesc = format!(
        "{} ({yunit}{}){}",
        spec.y_label,
        if spec.y_log { ", log scale" } else { "" },
        if shared_y {
            ""
        } else {
            ", own scale per panel"
        }
    );
    let shown: Vec<(usize, &String)> = labels
        .iter()
        .enumerate()
        .filter(|(k, _)| f.panels.iter().any(|(_, s)| !s[*k].is_empty()))
        .collect();
    let strip = Strip::lay_out(&xdesc, &ydesc, &shown, width, style);
    let size = (
        width,
        style.caption + strip.height + style.panel.1 * rows as u32,
    );
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let (caption, below) = root.split_vertically(style.caption);
        if style.caption > 0 {
            caption
                .titled(&f.title, ("sans-serif", style.title_font))
                .ok()?;
        }
        let (top, grid) = below.split_vertically(strip.height);
        strip.draw(&top, style)?;
        let areas = grid.split_evenly((rows, cols));
        for (k, (area, (title, series))) in areas.iter().zip(&f.panels).enumerate() {
            let (y0, y1, yticks) = axes[k].clone();
            let mut builder = ChartBuilder::on(area);
            if !title.is_empty() {
                builder.caption(title, ("sans-serif", style.title_font));
            }
            let mut chart = builder
                .margin(3)
                .margin_right(16)
                .x_label_area_size(style.x_labels)
                .y_label_area_size(y_area)
                .build_cartesian_2d(
                    TickedAxis::new(x0..x1, xticks.clone()),
                    TickedAxis::new(y0..y1, yticks),
                )
                .ok()?;
            let xfmt = |v: &f64| x_tick(spec, *v);
            chart
                .configure_mesh()
                .x_label_formatter(&xfmt)
                .y_label_formatter(&yfmt)
                .label_style(("sans-serif", style.tick_font))
                .draw()
                .ok()?;
            draw_lines(&mut chart, series, drawn_y(spec.y_log, div))?;
        }
        root.present().ok()?;
    }
    Some(svg)
}

/// Width of a character of sans-serif at `font` pixels: about 0.6 of the font size.
fn char_px(font: u32) -> u32 {
    (font * 6).div_ceil(10)
}

/// The strip above a figure's panels: the axis titles (`x: ...   y: ...`, or one a line
/// when that is wider than the figure: a loaded-latency figure of two panels cut its y title
/// at `load-to-use late`), then the legend, an entry per platform with points, in as many
/// rows as the figure's width needs (five machines do not fit one row of two panels).
struct Strip {
    titles: Vec<String>,
    /// Per row of the legend: (platform, label, x of its entry).
    legend: Vec<Vec<(usize, String, i32)>>,
    /// Height of a line of text.
    line: u32,
    height: u32,
}

impl Strip {
    fn lay_out(
        xdesc: &str,
        ydesc: &str,
        shown: &[(usize, &String)],
        width: u32,
        style: Style,
    ) -> Strip {
        let fits =
            |text: &str| 8 + char_px(style.tick_font + 1) * text.chars().count() as u32 <= width;
        let one = format!("x: {xdesc}   y: {ydesc}");
        let titles = if fits(&one) {
            vec![one]
        } else {
            vec![format!("x: {xdesc}"), format!("y: {ydesc}")]
        };
        let mut legend: Vec<Vec<(usize, String, i32)>> = vec![Vec::new()];
        let mut x = 4i32;
        for (k, label) in shown {
            let w = 28 + (char_px(style.tick_font) * label.chars().count() as u32) as i32;
            if x > 4 && x + w > width as i32 {
                legend.push(Vec::new());
                x = 4;
            }
            if let Some(row) = legend.last_mut() {
                row.push((*k, (*label).clone(), x));
            }
            x += w + 16;
        }
        let line = style.tick_font + 6;
        let height = line * (titles.len() + legend.len()) as u32 + 2;
        Strip {
            titles,
            legend,
            line,
            height,
        }
    }

    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, plotters::coord::Shift>,
        style: Style,
    ) -> Option<()> {
        let font = ("sans-serif", style.tick_font + 1).into_font();
        let line = self.line as i32;
        for (i, t) in self.titles.iter().enumerate() {
            area.draw(&Text::new(
                t.clone(),
                (4, 3 + line * i as i32),
                font.clone(),
            ))
            .ok()?;
        }
        for (r, row) in self.legend.iter().enumerate() {
            // the legend's line under the axis titles
            let y = line * (self.titles.len() + r) as i32 + 9;
            for (k, label, x) in row {
                let (c, x) = (colour(*k), *x);
                let ends = vec![(x, y), (x + 22, y)];
                let stroke = c.stroke_width(2);
                match dashes(*k) {
                    None => area.draw(&PathElement::new(ends, stroke)).ok()?,
                    Some((d, g)) => area
                        .draw(&plotters::element::DashedPathElement::new(
                            ends, d, g, stroke,
                        ))
                        .ok()?,
                }
                area.draw(&(EmptyElement::at((x + 11, y)) + marker(*k, c)))
                    .ok()?;
                area.draw(&Text::new(label.clone(), (x + 28, y - 6), font.clone()))
                    .ok()?;
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_and_panel_split_at_the_last_parenthesis() {
        assert_eq!(
            view_and_panel("mem.latency latency vs working set (full_random, thp)"),
            (
                "mem.latency latency vs working set".to_string(),
                "full_random, thp".to_string()
            )
        );
        assert_eq!(
            view_and_panel("storage.iops: each device"),
            ("storage.iops: each device".to_string(), String::new())
        );
    }

    #[test]
    fn thin_keeps_at_most_five_ticks_from_the_first() {
        let t: Vec<f64> = (0..=16).map(f64::from).collect();
        assert_eq!(thin(t, 5), [0.0, 4.0, 8.0, 12.0, 16.0]);
        assert_eq!(thin(vec![0.0, 1.0, 2.0], 5), [0.0, 1.0, 2.0]);
    }
}

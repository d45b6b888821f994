//! The summaries between the findings and the detail tables (issue 18): per thread-scaling
//! series its scaling (peak, efficiency at all threads, knee; [`hwsurvey_stats::scaling`]), and the
//! A/B views of the latency curves (THP over base pages, page-local over full-random chase at
//! each working set). Both read the family tables, so they show exactly the medians there.

use hwsurvey_stats::scaling::{analyse, Scaling, ScalingPoint};

use crate::format::human;
use crate::layout::{Cell, Row, Table};
use crate::plot::scaling_series;

/// A curve's parallel efficiency in words, the efficiency at all threads first: it is the
/// figure that means the same on every machine (issue 49). `73% @16` where the peak is at all
/// threads; `10% @16 (91% @2)` where the curve falls after its peak at 2 threads; `10% @8,
/// does not scale (peak @1)` where no thread count beats 1 thread (its 100 % at the peak is
/// never shown). `None` without a 1-thread point.
pub fn efficiency_words(a: &Scaling) -> Option<String> {
    let at_peak = a.efficiency_at_peak?;
    let all = a.efficiency_at_all_threads.unwrap_or(at_peak);
    let pct = |e: f64| format!("{:.0}%", e * 100.0);
    Some(if a.does_not_scale() {
        format!("{} @{}, does not scale (peak @1)", pct(all), a.all_threads)
    } else if a.all_threads > a.peak_threads {
        format!(
            "{} @{} ({} @{})",
            pct(all),
            a.all_threads,
            pct(at_peak),
            a.peak_threads
        )
    } else {
        format!("{} @{}", pct(all), a.all_threads.max(a.peak_threads))
    })
}

/// Id of the scaling summary table.
pub const SCALING_ID: &str = "scaling-summary";
/// Id of the A/B table.
pub const AB_ID: &str = "ab";

/// One row per thread-scaling series of every family table (rows `<test>/threads=N`, the
/// landmark rungs with CPUs of their own left out as on the plots): per platform with two or
/// more thread counts `peak @N, efficiency at all threads ([`efficiency_words`]), knee`; `None` when no family has such
/// a series.
pub(crate) fn scaling_table(
    tables: &[Table],
    platforms: &[String],
    flags: &[String],
) -> Option<Table> {
    let n = platforms.len();
    let mut rows = Vec::new();
    for t in tables.iter().filter(|t| t.id.starts_with("family:")) {
        // in the family table's order (its rows keep a test's rungs together)
        let mut groups: Vec<_> = scaling_series(t, n).into_iter().collect();
        let first_row = |prefix: &str| {
            t.rows
                .iter()
                .position(|r| r.label.starts_with(&format!("{prefix}/threads=")))
        };
        groups.sort_by_key(|(prefix, _)| first_row(prefix));
        for (prefix, (unit, series)) in groups {
            if !series.iter().any(|s| s.len() >= 2) {
                continue;
            }
            let cells = series
                .iter()
                .map(|pts| {
                    if pts.len() < 2 {
                        return Cell::missing("fewer than 2 thread counts measured");
                    }
                    if unit == "hz" {
                        return clock_ladder(pts);
                    }
                    let points: Vec<ScalingPoint> = pts
                        .iter()
                        .map(|&(threads, v)| ScalingPoint {
                            threads: threads as usize,
                            throughput: v,
                        })
                        .collect();
                    let Some(a) = analyse(&points) else {
                        return Cell::missing("no positive figure");
                    };
                    let eff = efficiency_words(&a).unwrap_or_else(|| "no 1-thread point".into());
                    Cell::computed(
                        format!(
                            "{} @{}, {eff}, knee {}",
                            human(a.peak, &unit),
                            a.peak_threads,
                            a.knee_threads
                        ),
                        a.peak,
                    )
                })
                .collect();
            rows.push(Row {
                label: format!("{} {prefix}", t.title),
                unit: Some(unit.clone()),
                x: None,
                cells,
            });
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut notes = flags.to_vec();
    notes.push("peak @threads, parallel efficiency at all threads (the figure at the most threads / (threads x the 1-thread figure); the efficiency at the peak beside it where the peak is at fewer threads; \"does not scale\" where no thread count beats 1 thread), knee (the fewest threads reaching 90% of the peak), from the medians of the family tables below; value = the peak".into());
    if rows.iter().any(|r| r.unit.as_deref() == Some("hz")) {
        notes.push("a clock (cpu.clock: each worker's own, averaged) is no sum over threads: its row gives the clock at each thread count and the most threads' over the fewest's (turbo falls as cores wake); value = the clock at the most threads".into());
    }
    Some(Table {
        id: SCALING_ID.into(),
        title: "Scaling summary".into(),
        row_header: "series".into(),
        columns: platforms.to_vec(),
        rows,
        notes,
        plot: None,
    })
}

/// A clock series (`cpu.clock`'s `clock_hz`: the mean of each worker's own clock, so no sum
/// over threads and no efficiency): the clock at each thread count, and the most threads'
/// over the fewest's, `3.59 GHz @1, 3.71 GHz @2: 1.03x`; value = the clock at the most
/// threads.
fn clock_ladder(pts: &[(f64, f64)]) -> Cell {
    let mut pts = pts.to_vec();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (Some(first), Some(last)) = (pts.first(), pts.last()) else {
        return Cell::missing("fewer than 2 thread counts measured");
    };
    let rungs: Vec<String> = pts
        .iter()
        .map(|(threads, hz)| format!("{} @{threads}", human(*hz, "hz")))
        .collect();
    let ratio = if first.1 > 0.0 {
        format!(": {:.2}x", last.1 / first.1)
    } else {
        String::new()
    };
    Cell::computed(format!("{}{ratio}", rungs.join(", ")), last.1)
}

/// Bytes of a working-set id part (`4MiB`, `256KiB`), 0 when it is none of those.
fn size_bytes(ws: &str) -> f64 {
    let digits = ws.find(|c: char| !c.is_ascii_digit()).unwrap_or(ws.len());
    let n: f64 = ws[..digits].parse().unwrap_or(0.0);
    let unit = match &ws[digits..] {
        "KiB" => 1u64 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => 1,
    };
    n * unit as f64
}

/// The pairs of mem.latency curves the A/B table divides: (row label, numerator mode,
/// denominator mode), modes as `pattern/pages`.
const AB_PAIRS: [(&str, &str, &str); 3] = [
    (
        "full_random THP/base",
        "full_random/thp",
        "full_random/base",
    ),
    ("page_local THP/base", "page_local/thp", "page_local/base"),
    (
        "base page_local/full_random",
        "page_local/base",
        "full_random/base",
    ),
];

/// mem.latency's A/B views: at every working set where some platform has both curves, the
/// latency with THP over that with base pages (full random and page-local chase), and the
/// page-local chase over the full random one (base pages): below 1, the first is faster.
pub(crate) fn ab_table(tables: &[Table], platforms: &[String], flags: &[String]) -> Option<Table> {
    let latency = tables.iter().find(|t| t.id == "family:mem.latency")?;
    let n = platforms.len();
    // (mode, working set label) -> row
    let find = |mode: &str, ws: &str| {
        latency
            .rows
            .iter()
            .find(|r| r.label == format!("{mode}/ws={ws}"))
    };
    let mut sets: Vec<(f64, String)> = Vec::new();
    for r in &latency.rows {
        let Some((_, ws)) = r.label.rsplit_once("/ws=") else {
            continue;
        };
        if !sets.iter().any(|(_, w)| w == ws) {
            sets.push((size_bytes(ws), ws.to_string()));
        }
    }
    sets.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut rows = Vec::new();
    for (label, num, den) in AB_PAIRS {
        for (_, ws) in &sets {
            let (Some(a), Some(b)) = (find(num, ws), find(den, ws)) else {
                continue;
            };
            let cells: Vec<Cell> = (0..n)
                .map(|k| {
                    let (x, y) = (
                        a.cells.get(k).and_then(|c| c.value),
                        b.cells.get(k).and_then(|c| c.value),
                    );
                    match (x, y) {
                        (Some(x), Some(y)) if y > 0.0 => {
                            Cell::computed(format!("{:.2}x", x / y), x / y)
                        }
                        _ => Cell::missing("not both measured"),
                    }
                })
                .collect();
            if cells.iter().any(|c| c.value.is_some()) {
                rows.push(Row {
                    label: format!("{label} ws={ws}"),
                    unit: Some("ratio".into()),
                    x: None,
                    cells,
                });
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut notes = flags.to_vec();
    notes.push("ratio of the medians of mem.latency's two curves at one working set; below 1 the first is faster (THP: fewer TLB misses; page-local: the chase stays inside a page)".into());
    Some(Table {
        id: AB_ID.into(),
        title: "A/B: mem.latency THP vs base pages, page-local vs full random".into(),
        row_header: "ratio".into(),
        columns: platforms.to_vec(),
        rows,
        notes,
        plot: None,
    })
}

#[cfg(test)]
mod tests {
    use super::size_bytes;

    #[test]
    fn working_set_sizes_order_as_bytes() {
        assert_eq!(size_bytes("4MiB"), 4.0 * 1048576.0);
        assert_eq!(size_bytes("256KiB"), 262144.0);
        assert_eq!(size_bytes("1GiB"), 1073741824.0);
        assert_eq!(size_bytes("x"), 0.0);
    }
}

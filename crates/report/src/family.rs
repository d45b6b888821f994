//! Family tables: per family the headline metric of every test side by side, then the
//! performance per watt of each platform with energy readings ([`crate::energy`]), then
//! relative columns against the baseline judged by the runs' own noise
//! (`hwsurvey_stats::within_noise`).

use hwsurvey_result::outcome::Better;
use hwsurvey_result::{MetricResult, ResultFile};

use crate::format::{human, unit_of};
use crate::input::Input;
use crate::layout::{Cell, Row, Table};

fn headline<'a>(file: &'a ResultFile, family: &str, id: &str) -> Result<&'a MetricResult, String> {
    if let Some(t) = file
        .tests
        .iter()
        .find(|t| t.point.family == family && t.point.id == id)
    {
        return match t.outcome {
            hwsurvey_result::Outcome::Measured => t
                .metrics
                .first()
                .ok_or_else(|| "measured, but no metric recorded".into()),
            other => Err(format!(
                "{other}: {}",
                t.reason.as_deref().unwrap_or("no reason given")
            )),
        };
    }
    if let Some(s) = file
        .skipped
        .iter()
        .chain(file.plan.families.iter().flat_map(|f| f.skipped.iter()))
        .find(|s| s.family == family && (s.id == id || s.id == "*"))
    {
        return Err(format!("skipped: {}", s.reason));
    }
    if !file.plan.families.iter().any(|f| f.family == family) {
        return Err("unsupported: family not in this run's plan".into());
    }
    Err("not run: not in this run's plan".into())
}

/// Puts the thread rungs of one test together, in increasing threads (a landmark rung with
/// CPUs of its own after the plain rung of its count): `stream.copy/threads=1, 2, 4, 8,
/// 8/cores, 16`, then `stream.scale/...`, the tests in the order they first appear. The ids
/// come plan by plan, so the rungs only a bigger machine has would otherwise follow every
/// test's common rungs, pages away from them. Ids without a rung keep their place among the
/// tests.
fn group_rungs(ids: &mut [String]) {
    use hwsurvey_result::plan::split_rung;
    let mut prefixes: Vec<String> = Vec::new();
    for id in ids.iter() {
        let p = split_rung(id).map_or(id.as_str(), |r| r.prefix);
        if !prefixes.iter().any(|q| q == p) {
            prefixes.push(p.to_string());
        }
    }
    ids.sort_by_cached_key(|id| match split_rung(id) {
        Some(r) => (
            prefixes.iter().position(|q| q == r.prefix),
            r.threads,
            r.own.is_some(),
        ),
        None => (prefixes.iter().position(|q| q == id), 0, false),
    });
}

pub(crate) fn family_table(inputs: &[Input], base: usize, family: &str, flags: &[String]) -> Table {
    let mut ids: Vec<String> = Vec::new();
    for i in inputs {
        let planned = i
            .file
            .plan
            .families
            .iter()
            .filter(|f| f.family == family)
            .flat_map(|f| {
                f.points
                    .iter()
                    .map(|p| p.id.clone())
                    .chain(f.skipped.iter().map(|s| s.id.clone()))
            });
        let tested = i
            .file
            .tests
            .iter()
            .filter(|t| t.point.family == family)
            .map(|t| t.point.id.clone());
        for id in planned.chain(tested) {
            if id != "*" && !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    group_rungs(&mut ids);
    let mut columns: Vec<String> = inputs.iter().map(|i| i.label.clone()).collect();
    // performance per watt beside the figures, for the platforms with energy readings
    let per_watt = crate::energy::platforms(inputs, family);
    for &k in &per_watt {
        columns.push(format!(
            "{}{}",
            inputs[k].label,
            crate::energy::COLUMN_SUFFIX
        ));
    }
    let others: Vec<usize> = (0..inputs.len()).filter(|&k| k != base).collect();
    for &k in &others {
        columns.push(format!("{} vs {}", inputs[k].label, inputs[base].label));
    }
    // A run the headline calls not comparable (emulated, quick profile, busy at start, ...)
    // gets no win or loss here either.
    let comparable: Vec<bool> = inputs
        .iter()
        .map(|i| crate::headline::not_comparable(&i.file).is_empty())
        .collect();
    let mut rows = Vec::new();
    for id in &ids {
        let metrics: Vec<Result<&MetricResult, String>> = inputs
            .iter()
            .map(|i| headline(&i.file, family, id))
            .collect();
        let unit = metrics
            .iter()
            .find_map(|m| m.as_ref().ok().map(|m| unit_of(&m.name)));
        // points measured while the hardware watch saw throttling or errors: marked, never
        // a win or a loss
        let marks: Vec<Vec<&'static str>> = inputs
            .iter()
            .map(|i| i.file.watch_marks(family, id))
            .collect();
        let mut cells: Vec<Cell> = metrics
            .iter()
            .zip(&marks)
            .map(|(m, mk)| match m {
                Err(why) => Cell::missing(why.clone()),
                Ok(m) => match &m.summary {
                    Some(s) => marked(Cell::measured(s, human(s.median, &unit_of(&m.name))), mk),
                    None => Cell::missing(format!(
                        "no statistics: {}",
                        m.summary_error.as_deref().unwrap_or("too few samples")
                    )),
                },
            })
            .collect();
        for &k in &per_watt {
            cells.push(crate::energy::cell(&inputs[k].file, family, id));
        }
        for &k in &others {
            let cell = relative(
                &metrics[k],
                &metrics[base],
                comparable[k] && comparable[base],
            );
            cells.push(affected(cell, &marks[k], &marks[base], &inputs[base].label));
        }
        rows.push(Row {
            label: id.clone(),
            unit,
            x: None,
            cells,
        });
    }
    if family == "service.point_select" {
        rows.push(critical_ratio_row(inputs, per_watt.len() + others.len()));
    }
    let mut notes = flags.to_vec();
    notes.extend(crate::energy::notes(inputs, family, &per_watt));
    if marks_any(inputs, family) {
        notes.push(format!(
            "a point measured while the hardware watch saw throttling, errors or a link retrain \
             is marked \"{}\", \"{}\" or \"{}\" (the run's watch in its file, tests[].watch): \
             its relative figure is never a win or a loss",
            hwsurvey_machine::watch::THROTTLED_MARK,
            hwsurvey_machine::watch::ERRORS_MARK,
            hwsurvey_machine::watch::LINK_MARK
        ));
    }
    notes.push("value = median of the samples (CV = coefficient of variation); a relative figure inside both runs' noise (overlapping 95% bootstrap intervals of the medians, or a difference below the larger CV) is shown as \"within noise\", never as a win or a loss; a relative figure of a run the headline calls not comparable (or against such a baseline) is shown as \"not comparable\"".into());
    Table {
        id: format!("family:{family}"),
        title: family.to_string(),
        row_header: "test".into(),
        columns,
        rows,
        notes,
        plot: None,
    }
}

/// Whether a point of `family` of some input carries a watch mark.
fn marks_any(inputs: &[Input], family: &str) -> bool {
    inputs.iter().any(|i| {
        i.file
            .tests
            .iter()
            .filter(|t| t.point.family == family)
            .any(|t| t.watch.as_ref().is_some_and(|w| !w.marks().is_empty()))
    })
}

/// A measured cell with its point's watch marks after its CV.
fn marked(mut cell: Cell, marks: &[&str]) -> Cell {
    if !marks.is_empty() {
        let words = marks.join("; ");
        cell.note = Some(match cell.note {
            Some(n) => format!("{n}; {words}"),
            None => words,
        });
    }
    cell
}

/// A relative cell whose point (`marks`), or the baseline's (`base_marks`), was measured
/// while the watch saw something: the ratio stays, the verdict becomes the marks (never a win
/// or a loss).
fn affected(mut cell: Cell, marks: &[&str], base_marks: &[&str], base_label: &str) -> Cell {
    if cell.missing.is_some() || (marks.is_empty() && base_marks.is_empty()) {
        return cell;
    }
    let mut words: Vec<String> = marks.iter().map(|m| m.to_string()).collect();
    words.extend(
        base_marks
            .iter()
            .filter(|m| !marks.contains(m))
            .map(|m| format!("{base_label}: {m}")),
    );
    cell.note = Some(words.join("; "));
    cell
}

/// The note of a relative cell inside both runs' noise.
pub(crate) const WITHIN_NOISE: &str = "within noise";
/// The note of a relative cell where one of the two runs is not comparable.
pub(crate) const NOT_COMPARABLE: &str = "not comparable";

/// `service.point_select`: the critical rate with THP over that with base pages, per platform
/// (the page-size effect on latency-bounded throughput); a missing cell says which critical
/// point has no rate and why. The per-watt and "vs" columns (`vs_columns` in all) are left
/// empty: the ratio is already relative.
fn critical_ratio_row(inputs: &[Input], vs_columns: usize) -> Row {
    use crate::critical::critical_thp_base_ratio;
    let mut cells: Vec<Cell> = inputs
        .iter()
        .map(|i| match critical_thp_base_ratio(&i.file.tests) {
            Ok(r) => Cell {
                text: format!("{:.2}", r.thp_over_base),
                value: Some(r.thp_over_base),
                note: Some(format!(
                    "{} / {}",
                    human(r.thp_ops_per_s, "ops_per_s"),
                    human(r.base_ops_per_s, "ops_per_s")
                )),
                missing: None,
                x: None,
                stats: None,
                unit: None,
            },
            Err(_) => Cell::missing(crate::critical::short_reason_without_ratio(&i.file.tests)),
        })
        .collect();
    cells.extend((0..vs_columns).map(|_| Cell::text("")));
    Row {
        label: "critical rate THP/base".into(),
        unit: Some("ratio".into()),
        x: None,
        cells,
    }
}

/// The ratio of `m` to the baseline `b`, judged: "within noise", "+N% better", "-N% worse",
/// or "not comparable" when `comparable` is false (never a win or a loss).
fn relative(
    m: &Result<&MetricResult, String>,
    b: &Result<&MetricResult, String>,
    comparable: bool,
) -> Cell {
    let (Ok(m), Ok(b)) = (m, b) else {
        return Cell::missing("no pair to compare");
    };
    let (Some(sm), Some(sb)) = (&m.summary, &b.summary) else {
        return Cell::missing("no statistics");
    };
    if sb.median == 0.0 || !sb.median.is_finite() || !sm.median.is_finite() {
        return Cell::missing("baseline is zero");
    }
    let ratio = sm.median / sb.median;
    let text = format!("{:.2}x", ratio);
    let verdict = if !comparable {
        Some(NOT_COMPARABLE)
    } else if hwsurvey_stats::within_noise(sm, sb) {
        Some(WITHIN_NOISE)
    } else {
        None
    };
    if let Some(verdict) = verdict {
        return Cell {
            text,
            value: Some(ratio),
            note: Some(verdict.into()),
            missing: None,
            x: None,
            stats: None,
            unit: None,
        };
    }
    let better = match m.better {
        Better::Higher => ratio > 1.0,
        Better::Lower => ratio < 1.0,
    };
    Cell {
        text,
        value: Some(ratio),
        note: Some(format!(
            "{:+.0}% {}",
            (ratio - 1.0) * 100.0,
            if better { "better" } else { "worse" }
        )),
        missing: None,
        x: None,
        stats: None,
        unit: None,
    }
}

#[cfg(test)]
mod tests {
    use super::group_rungs;

    #[test]
    fn rungs_of_a_test_together_in_thread_order() {
        let mut ids: Vec<String> = [
            "stream.copy/threads=1",
            "stream.copy/threads=2",
            "stream.scale/threads=1",
            "idle",
            "stream.copy/threads=16",
            "stream.copy/threads=8/cores",
            "stream.copy/threads=8",
            "stream.scale/threads=4",
        ]
        .map(String::from)
        .to_vec();
        group_rungs(&mut ids);
        assert_eq!(
            ids,
            [
                "stream.copy/threads=1",
                "stream.copy/threads=2",
                "stream.copy/threads=8",
                "stream.copy/threads=8/cores",
                "stream.copy/threads=16",
                "stream.scale/threads=1",
                "stream.scale/threads=4",
                "idle",
            ]
        );
    }
}

//! The run's own tables, for people: the plan before it starts (profile, the machine's figures
//! the plan was sized by, landmarks, one line per family with its estimate), the warning for a
//! long run, the closing headline, and the full end-of-run summary (one row per metric, the
//! thread-scaling lines, time per family, points dropped at run time). Pure: model -> text.

use std::collections::BTreeMap;

use hwsurvey_model::units::{format_bytes_binary, format_cpus, plural};
use hwsurvey_result::outcome::Better;
use hwsurvey_result::plan::{Plan, SkippedPoint};
use hwsurvey_result::{ResultFile, TestResult};
use hwsurvey_stats::scaling::{analyse, ScalingPoint};

use crate::critical::critical_thp_base_ratio;
use crate::format::{duration_text, human_metric};
use crate::headline::run_tables;
use crate::input::{default_label, Input};
use crate::layout::Comparison;

/// ` (CPU quota 1.50 CPUs from SOURCE: threads past 1.50 CPUs' worth of run time are
/// throttled)` after the usable CPUs; a quota at or above them reads ` (CPU quota 4.00 CPUs
/// from SOURCE, not binding)`.
fn quota_words(q: &hwsurvey_machine::limits::CpuQuota, usable: usize) -> String {
    let cpus = format_cpus(q.cpus());
    if q.cpus() < usable as f64 {
        format!(
            " (CPU quota {cpus} CPUs from {}: threads past {cpus} CPUs' worth of run time are \
             throttled)",
            q.source
        )
    } else {
        format!(" (CPU quota {cpus} CPUs from {}, not binding)", q.source)
    }
}

/// The plan for people: the profile, the machine's figures the plan was sized by, the thread
/// landmarks, then one line per family (points, estimated time, planned skips counted) and
/// the total; with `points`, each family's points (thread count, CPUs) and planned skips
/// (with their reasons) under its line.
pub fn render_plan(plan: &Plan, description: &str, points: bool) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "profile {} v{}: {description}",
        plan.profile_id, plan.profile_version
    );
    let _ = writeln!(
        s,
        "usable CPUs {}{}, thread counts {:?}, last-level cache {}, memory working set {}, memory cap {}",
        plan.usable_cpus,
        plan.cpu_quota
            .as_ref()
            .map(|q| quota_words(q, plan.usable_cpus))
            .unwrap_or_default(),
        plan.thread_counts,
        plan.llc_total_bytes
            .map(format_bytes_binary)
            .unwrap_or_else(|| "unknown".into()),
        format_bytes_binary(plan.memory_working_set_bytes),
        match (plan.memory_cap_bytes, &plan.memory_cap_source) {
            (Some(b), Some(src)) => format!("{} (from {src})", format_bytes_binary(b)),
            (Some(b), None) => format_bytes_binary(b),
            (None, Some(src)) => src.clone(),
            (None, None) => "unknown (1 GiB assumed)".into(),
        },
    );
    if !plan.landmarks.is_empty() {
        let marks: Vec<String> = plan
            .landmarks
            .iter()
            .map(|m| format!("{} {}", m.name, m.threads))
            .collect();
        let _ = writeln!(s, "landmarks: {}", marks.join(", "));
    }
    for f in &plan.families {
        if f.points.is_empty() {
            let _ = writeln!(s, "{}: no points", f.family);
        } else {
            let skipped = if f.skipped.is_empty() || points {
                String::new()
            } else {
                format!(
                    "; {} skipped by the plan (--plan-points lists them)",
                    f.skipped.len()
                )
            };
            let _ = writeln!(
                s,
                "{}: {}, estimated {} (allowance {}){skipped}",
                f.family,
                plural(f.points.len() as u64, "point"),
                duration_text(f.estimated_s),
                duration_text(f.budget_s)
            );
        }
        if !points {
            continue;
        }
        for p in &f.points {
            let _ = writeln!(
                s,
                "  {:<40} threads {:<3} cpus {}",
                p.id,
                p.threads,
                cpus_text(&p.cpus)
            );
        }
        for k in &f.skipped {
            let _ = writeln!(s, "  {:<40} skipped: {}", k.id, k.reason);
        }
    }
    if plan.point_count() == 0 {
        let _ = writeln!(s, "total: no points");
    } else {
        let most: f64 = plan.families.iter().map(|f| f.budget_s).sum();
        let _ = writeln!(
            s,
            "total: {}, estimated {} (allowance {})",
            plural(plan.point_count() as u64, "point"),
            duration_text(plan.estimated_s()),
            duration_text(most)
        );
    }
    s
}

/// A run estimated past this is announced with a warning before it starts, seconds.
pub const LONG_RUN_WARNING_S: f64 = 30.0 * 60.0;

/// The warning for a plan estimated past [`LONG_RUN_WARNING_S`], or `None`.
pub fn long_run_warning(plan: &Plan) -> Option<String> {
    let est = plan.estimated_s();
    (est > LONG_RUN_WARNING_S).then(|| {
        format!(
            "warning: this run is estimated at {}, over 30 min ({} thread counts: {:?})",
            duration_text(est),
            plan.thread_counts.len(),
            plan.thread_counts
        )
    })
}

fn cpus_text(cpus: &[u32]) -> String {
    let mut v: Vec<String> = cpus.iter().take(8).map(|c| c.to_string()).collect();
    if cpus.len() > 8 {
        v.push("...".into());
    }
    v.join(",")
}

/// `run`'s closing summary (without --full-summary): the machine in one line and the
/// headline of `compare` for this one result (crate::headline: int and fp
/// scaling, STREAM Triad, idle and loaded latency, c2c, point-select and critical rate,
/// IOPS, RAID-6, findings), its unknowns as numbered notes, one line each; rows of families
/// outside this run's plan (`--only`) left out ([`crate::headline::run_tables`]). Then the estimated and actual run time and where the full
/// figures are. At most 40 lines for the standard profile at 80 columns and wider.
pub fn render_closing(file: &ResultFile, width: Option<usize>) -> String {
    let label = default_label(file);
    let inputs = [Input {
        label: label.clone(),
        file: file.clone(),
    }];
    let [glance, mut headline] = run_tables(&inputs[0]);
    // The machine in one line (wrapped) above the headline, its unknowns in the same notes.
    let machine = glance
        .rows
        .first()
        .and_then(|r| r.cells.first())
        .map(|c| c.text.clone())
        .unwrap_or_default();
    let mut notes = glance.notes;
    notes.append(&mut headline.notes);
    headline.notes = notes;
    let c = Comparison {
        platforms: vec![label.clone()],
        baseline: label,
        flags: Vec::new(),
        tables: vec![headline],
        runs: Vec::new(),
        verdicts: Vec::new(),
        written_at: None,
    };
    let w = width.unwrap_or(crate::cells::HEADLINE_COLUMNS);
    let mut out = crate::cells::wrap_note(&format!("machine: {machine}"), w, 4);
    out += "\n\n";
    // to a pipe or file (`width` None) the table is still fitted to 100 columns, each note
    // in full on one line; on a terminal a note that does not fit one line is printed in
    // full at the very end (never cut)
    let (headline, notes_at_end) = crate::terminal::screen_parts(
        &c,
        &crate::terminal::Screen {
            width: width.map(|_| w),
            details: true,
            hint: None,
            one_line_notes: true,
        },
    );
    out += &headline;
    if let Some(line) = time_line(file) {
        out += &line;
        out.push('\n');
    }
    let planned: usize = file.plan.families.iter().map(|f| f.skipped.len()).sum();
    if planned > 0 {
        out += &format!(
            "{} skipped by the plan (reasons in the file's \"skipped\")\n",
            plural(planned as u64, "point")
        );
    }
    let dropped = dropped_at_run_time(&file.plan, &file.skipped);
    if !dropped.is_empty() {
        let line = format!(
            "{} dropped at run time (reasons in the file's \"skipped\"): {}",
            plural(dropped.len() as u64, "point"),
            dropped
                .iter()
                .map(|d| format!("{} {}", d.family, d.id))
                .collect::<Vec<_>>()
                .join(", ")
        );
        out += &crate::cells::wrap_note(&line, w, 4);
        out.push('\n');
    }
    if !notes_at_end.is_empty() {
        out.push('\n');
        out += &notes_at_end;
    }
    out
}

/// The closing line on the run's time: estimated and actual; for an interrupted run, how many
/// of the plan's points ran, their estimate and the whole plan's, never the "estimated 0 s" of
/// a family stopped in its first point. `None` for a file without family times.
fn time_line(file: &ResultFile) -> Option<String> {
    if file.family_times.is_empty() {
        return None;
    }
    let estimated: f64 = file.family_times.iter().map(|f| f.estimated_s).sum();
    let actual: f64 = file.family_times.iter().map(|f| f.actual_s).sum();
    let more = "every metric, scaling series and family time: `hwsurvey compare FILE` (or run \
                with --full-summary)";
    if file.status != hwsurvey_result::RunStatus::Interrupted {
        return Some(format!(
            "time: estimated {}, actual {}; {more}",
            duration_text(estimated),
            duration_text(actual)
        ));
    }
    let ran: usize = file.family_times.iter().map(|f| f.points_run).sum();
    let planned = file.plan.point_count();
    let whole = duration_text(file.plan.estimated_s());
    Some(if ran == 0 {
        format!(
            "time: interrupted after {} before any point finished (the plan was estimated at \
             {whole}); {more}",
            duration_text(actual)
        )
    } else {
        format!(
            "time: interrupted after {}: {ran} of {planned} points ran, estimated {} (the \
             whole plan {whole}); {more}",
            duration_text(actual),
            duration_text(estimated)
        )
    })
}

/// The end-of-run table: one row per measured metric, skipped/failed points with reasons,
/// and a scaling line per thread-swept series. `width`: the terminal's columns, to which the
/// table is shrunk (a skip reason of 400 characters wraps in its cell); `None`: natural width.
pub fn render_summary(file: &ResultFile, width: Option<usize>) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for t in &file.tests {
        if t.outcome != hwsurvey_result::Outcome::Measured {
            rows.push(vec![
                t.point.family.clone(),
                t.point.id.clone(),
                t.outcome.to_string(),
                t.reason.clone().unwrap_or_default(),
                String::new(),
                String::new(),
                String::new(),
            ]);
            continue;
        }
        for m in &t.metrics {
            let (median, range, cv) = metric_cells(m, &t.details);
            rows.push(vec![
                t.point.family.clone(),
                t.point.id.clone(),
                m.name.clone(),
                median,
                range,
                cv,
                m.peak.map(|p| human_metric(&m.name, p)).unwrap_or_default(),
            ]);
        }
    }
    let header = [
        "family", "point", "metric", "median", "min..max", "CV", "peak",
    ]
    .map(String::from)
    .to_vec();
    let mut out = crate::terminal::boxed(header, rows, width);
    for line in scaling_lines(file) {
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(line) = critical_ratio_line(file) {
        out.push_str(&line);
        out.push('\n');
    }
    let planned: usize = file.plan.families.iter().map(|f| f.skipped.len()).sum();
    if planned > 0 {
        out.push_str(&format!(
            "{} skipped by the plan (reasons in the plan above and in the file's \"skipped\")\n",
            plural(planned as u64, "point")
        ));
    }
    if !file.family_times.is_empty() {
        out.push_str("time per family, estimated -> actual:\n");
        for ft in &file.family_times {
            if ft.points_run == 0 {
                // stopped in its first point: no estimate of points that ran to hold it to
                out.push_str(&format!(
                    "  {:<22} no point finished ({} of {} planned ran; run {})\n",
                    ft.family, ft.points_run, ft.points_planned, file.status
                ));
                continue;
            }
            out.push_str(&format!(
                "  {:<22} {} -> {}{}\n",
                ft.family,
                duration_text(ft.estimated_s),
                duration_text(ft.actual_s),
                ft.actual_over_estimate()
                    .map(|r| format!(" ({:+.0} %)", (r - 1.0) * 100.0))
                    .unwrap_or_default()
            ));
        }
    }
    let dropped = dropped_at_run_time(&file.plan, &file.skipped);
    if !dropped.is_empty() {
        out.push_str(&format!(
            "{} dropped at run time (also in the file's \"skipped\"):\n",
            plural(dropped.len() as u64, "point")
        ));
        for d in dropped {
            out.push_str(&format!("  {} {}: {}\n", d.family, d.id, d.reason));
        }
    }
    out
}

/// `service.point_select`'s critical rate THP vs base pages (`None` when the run has neither
/// critical point), or why there is no ratio.
fn critical_ratio_line(file: &ResultFile) -> Option<String> {
    let any = file
        .tests
        .iter()
        .any(|t| t.point.family == "service.point_select" && t.point.id.starts_with("critical/"));
    if !any {
        return None;
    }
    let name = "critical_throughput_ops_per_s";
    Some(match critical_thp_base_ratio(&file.tests) {
        Ok(r) => format!(
            "service.point_select critical rate: base {}, thp {}, THP/base {:.2}",
            human_metric(name, r.base_ops_per_s),
            human_metric(name, r.thp_ops_per_s),
            r.thp_over_base
        ),
        Err(why) => format!("service.point_select critical rate THP/base: n/a ({why})"),
    })
}

/// Points the engine skipped while running (interrupted, family not in
/// this build): the file's `skipped` entries that are not planned skips.
fn dropped_at_run_time<'a>(plan: &Plan, skipped: &'a [SkippedPoint]) -> Vec<&'a SkippedPoint> {
    let planned: std::collections::BTreeSet<(&str, &str)> = plan
        .families
        .iter()
        .flat_map(|f| f.skipped.iter())
        .map(|k| (k.family.as_str(), k.id.as_str()))
        .collect();
    skipped
        .iter()
        .filter(|k| !planned.contains(&(k.family.as_str(), k.id.as_str())))
        .collect()
}

/// Median, min..max and CV cells of one metric. With fewer than two samples there are no
/// statistics: one sample shows its value ("(1 sample)"), none shows why (the point's
/// `no_pass_reason` detail when it has one), never a statistics error.
fn metric_cells(
    m: &hwsurvey_result::MetricResult,
    details: &serde_json::Map<String, serde_json::Value>,
) -> (String, String, String) {
    if let Some(s) = &m.summary {
        return (
            human_metric(&m.name, s.median),
            format!(
                "{}..{}",
                human_metric(&m.name, s.min),
                human_metric(&m.name, s.max)
            ),
            s.cv.map(|c| format!("{:.1}%", c * 100.0))
                .unwrap_or_default(),
        );
    }
    let finite: Vec<f64> = m
        .samples
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let median = match finite.as_slice() {
        [] => {
            let why = details
                .get("no_pass_reason")
                .and_then(|v| v.as_str())
                .unwrap_or("no finite samples recorded");
            format!("not measured: {why}")
        }
        [one] => format!("{} (1 sample)", human_metric(&m.name, *one)),
        more => format!(
            "{}..{} ({} samples, no statistics)",
            human_metric(&m.name, more.iter().copied().fold(f64::INFINITY, f64::min)),
            human_metric(
                &m.name,
                more.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            ),
            more.len()
        ),
    };
    (median, String::new(), String::new())
}

/// For every series whose point ids differ only in their `threads=N` segment (N the point's
/// [`hwsurvey_result::plan::Point::threads`]): single thread, peak, knee.
fn scaling_lines(file: &ResultFile) -> Vec<String> {
    let mut series: BTreeMap<(String, String, String), Vec<ScalingPoint>> = BTreeMap::new();
    for t in &file.tests {
        let Some(m) = t.metrics.first() else {
            continue;
        };
        let Some(s) = &m.summary else { continue };
        // the point's own thread count names the segment that varies along the series
        let threads = format!("threads={}", t.point.threads);
        if m.better != Better::Higher || !t.point.id.split('/').any(|p| p == threads) {
            continue;
        }
        let key: Vec<&str> = t.point.id.split('/').filter(|p| *p != threads).collect();
        series
            .entry((t.point.family.clone(), key.join("/"), m.name.clone()))
            .or_default()
            .push(ScalingPoint {
                threads: t.point.threads,
                throughput: s.median,
            });
    }
    series
        .into_iter()
        .filter(|(_, pts)| pts.len() >= 2)
        .filter_map(|((family, id, name), pts)| {
            let a = analyse(&pts)?;
            Some(format!(
                "{family} {id}: 1 thread {}, peak {} at {}, efficiency {}, knee (90% of peak) at {}",
                a.single_thread.map(|v| human_metric(&name, v)).unwrap_or_else(|| "n/a".into()),
                human_metric(&name, a.peak),
                plural(a.peak_threads as u64, "thread"),
                crate::summary::efficiency_words(&a).unwrap_or_else(|| "n/a".into()),
                plural(a.knee_threads as u64, "thread")
            ))
        })
        .collect()
}

/// One plain progress line for a finished test:
/// `[12/105] mem.latency full_random/base/ws=64MiB: 98.1 ns` (median of the headline metric),
/// or `[3/105] service.point_select critical/pages=base: skipped (reason)`.
pub fn progress_line(done: usize, total: usize, t: &TestResult) -> String {
    let what = if t.outcome != hwsurvey_result::Outcome::Measured {
        format!(
            "{} ({})",
            t.outcome,
            t.reason.as_deref().unwrap_or("no reason given")
        )
    } else {
        match t.metrics.first() {
            Some(m) => metric_cells(m, &t.details).0,
            None => "no metrics".into(),
        }
    };
    format!("[{done}/{total}] {} {}: {what}", t.point.family, t.point.id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsurvey_result::outcome::{Metric, PointOutcome};
    use hwsurvey_result::plan::FamilyPlan;
    use hwsurvey_result::{MetricResult, TestResult};
    use hwsurvey_testkit::plans::{plan, point};

    fn skipped(family: &str, id: &str, reason: &str) -> SkippedPoint {
        SkippedPoint {
            family: family.into(),
            id: id.into(),
            params: serde_json::Value::Null,
            reason: reason.into(),
        }
    }

    /// The plan's CPU line names a CPU quota and whether it binds (below the usable CPUs).
    #[test]
    fn the_plan_names_a_cpu_quota() {
        let mut p = plan(vec![]);
        p.usable_cpus = 4;
        let quota = |quota_us| hwsurvey_machine::limits::CpuQuota {
            quota_us,
            period_us: 100_000,
            source: "cgroup v2 cpu.max (/sys/fs/cgroup/job/cpu.max)".into(),
        };
        p.cpu_quota = Some(quota(150_000));
        let text = render_plan(&p, "d", false);
        assert!(
            text.contains(
                "usable CPUs 4 (CPU quota 1.50 CPUs from cgroup v2 cpu.max \
                 (/sys/fs/cgroup/job/cpu.max): threads past 1.50 CPUs' worth of run time are \
                 throttled), thread counts"
            ),
            "{text}"
        );
        p.cpu_quota = Some(quota(400_000));
        let text = render_plan(&p, "d", false);
        assert!(
            text.contains("usable CPUs 4 (CPU quota 4.00 CPUs from cgroup v2 cpu.max (/sys/fs/cgroup/job/cpu.max), not binding), thread counts"),
            "{text}"
        );
    }

    #[test]
    fn values_carry_their_units() {
        assert_eq!(human_metric("latency_p99_ns", 2_449_407.0), "2.45 ms");
        assert_eq!(human_metric("latency_p99_ns", 786_175.0), "786 µs");
        assert_eq!(human_metric("latency_ns", 95.4), "95.4 ns");
        assert_eq!(human_metric("latency_p99_ns", 25_000_000.0), "25.0 ms");
        assert_eq!(human_metric("cpu_ns_per_io", 12_919.0), "12.9 µs CPU/IO");
        assert_eq!(human_metric("iops", 1_800.0), "1.80 kIOPS");
    }

    /// The closing headline of the shipped standard run of this VM: the figures of its
    /// result file, at most 40 lines at 80 and 100 columns and in a pipe, none wider than the
    /// terminal.
    #[test]
    fn closing_summary_is_the_headline_in_at_most_40_lines() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports/examples/v1/x86_64-standard.json");
        let file = hwsurvey_result::load(&path).expect("the shipped example loads");
        for width in [Some(80), Some(100), None] {
            let text = render_closing(&file, width);
            let lines: Vec<&str> = text.lines().collect();
            // at most 40 lines, then the notes that do not fit one line, in full
            let head = lines.iter().take_while(|l| **l != "Notes in full").count();
            assert!(head <= 40, "{head} lines at {width:?}:\n{text}");
            // a note is never cut (issue 33: "… (471 bytes)" and "e.g. i…" in the headline)
            for l in &lines {
                assert!(!l.ends_with('…'), "cut at {width:?}: {l}\n{text}");
            }
            if let Some(w) = width {
                let widest = lines.iter().map(|l| l.chars().count()).max().unwrap();
                assert!(widest <= w, "{widest} columns at {w}:\n{text}");
            } else {
                // to a pipe nothing is cut (breaker finding: notes ended in "…" there)
                for l in lines.iter().filter(|l| l.starts_with("note: ")) {
                    assert!(!l.ends_with('…'), "cut in a pipe: {l}");
                }
            }
            for figure in [
                "STREAM Triad peak @N",
                "44.4 GB/s @2",
                "241 ns @256MiB",
                "2.34M @16",
                "40.6 GB/s (18+2)",
                // the empty hugetlb pool is an unmet precondition, not a warning about the VM
                "0 fail, 0 warn",
                "│ unmet preconditions         │ pages.hugetlb",
            ] {
                assert!(
                    text.contains(figure),
                    "{figure} missing at {width:?}:\n{text}"
                );
            }
        }
        // why a run is not comparable is wrapped on a terminal, never cut (breaker finding:
        // a CPU quota's reason was cut off after "quick profile ...; C…")
        let mut quick = file.clone();
        quick.profile.id = "quick".into();
        quick.environment.cpu_quota = Some(hwsurvey_machine::limits::CpuQuota {
            quota_us: 50_000,
            period_us: 100_000,
            source: "cgroup v1 cpu.cfs_quota_us (/sys/fs/cgroup/cpu/brk/cpu.cfs_quota_us)".into(),
        });
        let text = render_closing(&quick, Some(80));
        let joined = text.replace("\n      ", " ");
        assert!(
            joined.contains(
                "A: not comparable: quick profile (small working sets, few samples); CPU quota \
                 0.50 CPUs of 2 usable: threads past it are throttled; machine busy at start"
            ),
            "{text}"
        );
        // the 40 lines, then the notes in full
        let head = text.lines().take_while(|l| *l != "Notes in full").count();
        assert!(head <= 40, "{text}");
        // a run of cpu.scaling alone: its rows and the findings, no row of a family not run
        let mut only = file.clone();
        only.plan.families.retain(|f| f.family == "cpu.scaling");
        only.tests.retain(|t| t.point.family == "cpu.scaling");
        only.skipped.retain(|t| t.family == "cpu.scaling");
        let text = render_closing(&only, Some(80));
        assert!(
            text.contains("int 1 thread, ops/s") && text.contains("9.94G"),
            "{text}"
        );
        assert!(text.contains("0 fail, 0 warn"), "{text}");
        for absent in [
            "STREAM",
            "latency",
            "c2c",
            "IOPS",
            "RAID-6",
            "not in this run",
        ] {
            assert!(!text.contains(absent), "{absent} in:\n{text}");
        }
    }

    #[test]
    fn plan_says_no_points_and_singular_forms() {
        let p = plan(vec![
            FamilyPlan {
                family: "storage.iops".into(),
                budget_s: 10.0,
                estimated_s: 0.0,
                points: vec![],
                skipped: vec![skipped("storage.iops", "*", "no --storage-dir")],
            },
            FamilyPlan {
                family: "mem.latency".into(),
                budget_s: 10.0,
                estimated_s: 3.0,
                points: vec![point("mem.latency", "full_random/base/ws=64MiB", 1)],
                skipped: vec![],
            },
        ]);
        let text = render_plan(&p, "test", true);
        assert!(text.contains("storage.iops: no points\n"), "{text}");
        assert!(!text.contains("estimated 0 s"), "{text}");
        assert!(
            text.contains("mem.latency: 1 point, estimated 3 s (allowance 10 s)\n"),
            "{text}"
        );
        assert!(
            text.contains("total: 1 point, estimated 3 s (allowance 20 s)\n"),
            "{text}"
        );
        assert_eq!(long_run_warning(&p), None);
        let mut long = p.clone();
        long.families[1].estimated_s = 1801.0;
        assert_eq!(
            long_run_warning(&long).as_deref(),
            Some(
                "warning: this run is estimated at 30 min 01 s, over 30 min (1 thread counts: [1])"
            )
        );
        assert_eq!(duration_text(209.6), "3 min 30 s");
        assert_eq!(duration_text(3725.0), "1 h 02 min");
        assert_eq!(plural(1, "thread"), "1 thread");
        assert_eq!(plural(4, "thread"), "4 threads");
        assert_eq!(plural(0, "point"), "0 points");
    }

    #[test]
    fn points_dropped_at_run_time_are_listed_apart_from_planned_skips() {
        let p = plan(vec![FamilyPlan {
            family: "mem.bandwidth".into(),
            budget_s: 2.0,
            estimated_s: 3.0,
            points: vec![
                point("mem.bandwidth", "stream.triad/threads=1", 1),
                point("mem.bandwidth", "stream.triad/threads=2", 2),
            ],
            skipped: vec![skipped(
                "mem.bandwidth",
                "stream.copy/threads=64",
                "mem cap",
            )],
        }]);
        let all = vec![
            skipped("mem.bandwidth", "stream.copy/threads=64", "mem cap"),
            skipped(
                "mem.bandwidth",
                "stream.triad/threads=2",
                "not run: interrupted (SIGTERM)",
            ),
        ];
        let dropped = dropped_at_run_time(&p, &all);
        assert_eq!(dropped.len(), 1);
        assert_eq!(dropped[0].id, "stream.triad/threads=2");
        assert_eq!(dropped[0].reason, "not run: interrupted (SIGTERM)");
    }

    #[test]
    fn metrics_with_fewer_than_two_samples_show_why_not_a_stats_error() {
        let mut details = serde_json::Map::new();
        let none =
            MetricResult::from_metric(Metric::throughput("critical_throughput_ops_per_s", vec![]));
        assert_eq!(
            metric_cells(&none, &details).0,
            "not measured: no finite samples recorded"
        );
        details.insert(
            "no_pass_reason".into(),
            serde_json::json!("no open-loop rate kept p99 <= 2000000 ns"),
        );
        let (median, range, cv) = metric_cells(&none, &details);
        assert_eq!(
            median,
            "not measured: no open-loop rate kept p99 <= 2000000 ns"
        );
        assert!(range.is_empty() && cv.is_empty());
        let one = MetricResult::from_metric(Metric::latency("latency_ns", vec![98.1]));
        assert_eq!(metric_cells(&one, &details).0, "98.1 ns (1 sample)");
        let nan = MetricResult::from_metric(Metric::latency("latency_ns", vec![f64::NAN, 5.0]));
        assert_eq!(metric_cells(&nan, &details).0, "5.00 ns (1 sample)");
        let two = MetricResult::from_metric(Metric::latency("latency_ns", vec![98.0, 100.0]));
        assert_eq!(metric_cells(&two, &details).0, "99.0 ns");
    }

    #[test]
    fn plain_progress_line_per_finished_test() {
        let p = point("mem.latency", "full_random/base/ws=64MiB", 1);
        let m = hwsurvey_result::Measurement {
            metrics: vec![Metric::latency("latency_ns", vec![98.0, 98.1, 98.2])],
            pins: vec![],
            details: Default::default(),
        };
        let t = TestResult::new(p.clone(), PointOutcome::Measured(m), "t".into(), 1.0);
        assert_eq!(
            progress_line(12, 105, &t),
            "[12/105] mem.latency full_random/base/ws=64MiB: 98.1 ns"
        );
        let t = TestResult::new(
            p,
            PointOutcome::Skipped {
                reason: "THP unavailable".into(),
            },
            "t".into(),
            0.0,
        );
        assert_eq!(
            progress_line(13, 105, &t),
            "[13/105] mem.latency full_random/base/ws=64MiB: skipped (THP unavailable)"
        );
    }
}

//! Rules on what the hardware watch saw during a run (`watch` and `tests[].watch` of a result
//! file, `hwsurvey_machine::watch`): `watch.errors` (an uncorrected error or a machine check
//! fails the run, naming the DIMM slot, the PCIe device or the CPU bank and the point),
//! `watch.corrected` (corrected errors above a rate), `watch.link` (a link that retrained)
//! and `watch.throttle` (thermal throttling, or a clock that fell from the run's start to its
//! end). Each needs a result file written with the watch; a source the run could not watch
//! is named, never taken for "no errors".

use std::collections::BTreeMap;

use hwsurvey_machine::watch::{RunWatch, WatchDelta, WatchSource};
use hwsurvey_model::Probed;

use crate::facts::{Facts, WatchFacts};
use crate::{Finding, Params, RuleFinding, Verdict};

/// The run's watch, or the finding that says why there is none.
fn watch<'f>(f: &'f Facts, id: &str) -> Result<&'f WatchFacts, Finding> {
    match &f.result {
        Probed::Known(r) => r.watch.as_ref().ok_or_else(|| {
            Finding::not_evaluated(
                id,
                format!(
                    "{} holds no hardware watch (written before hwsurvey watched the hardware)",
                    r.path
                ),
            )
        }),
        Probed::Unknown(_) => Err(Finding::not_evaluated(
            id,
            "no result file: the hardware is watched during `hwsurvey run` (give its result file)",
        )),
    }
}

pub use hwsurvey_result::watch::thousands;

/// The sources that see errors and were not watched, with why.
fn unwatched_error_sources(run: &RunWatch) -> Vec<String> {
    run.sources
        .iter()
        .filter(|s| s.source.sees_errors())
        .filter_map(|s| {
            s.unavailable
                .as_ref()
                .map(|why| format!("{} ({why})", s.source.words()))
        })
        .collect()
}

/// The evidence source of a point's watch.
fn point_source(point: &str) -> String {
    format!("tests[].watch of {point}")
}

/// Failures the totals hold beyond the points' (between two points: the kernel log's lines
/// read then, and counts no point's readings hold).
fn between_points(w: &WatchFacts) -> Vec<String> {
    let Some(t) = &w.run.totals else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let in_points =
        |f: &dyn Fn(&WatchDelta) -> u64| -> u64 { w.points.iter().map(|(_, d)| f(d)).sum() };
    let ue = |d: &WatchDelta| d.edac.iter().map(|e| e.uncorrected).sum::<u64>();
    let aer = |d: &WatchDelta| d.aer.iter().map(|a| a.nonfatal + a.fatal).sum::<u64>();
    for (what, total, points) in [
        ("uncorrected memory errors", ue(t), in_points(&ue)),
        ("uncorrectable AER errors", aer(t), in_points(&aer)),
    ] {
        if total > points {
            out.push(format!(
                "{} {what} counted between two points ({})",
                total - points,
                t.failures()
                    .into_iter()
                    .filter(|l| !l.starts_with("machine check"))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
    }
    let between = WatchDelta {
        kernel_log: t
            .kernel_log
            .iter()
            .filter(|e| e.point.is_none())
            .cloned()
            .collect(),
        ..WatchDelta::default()
    };
    out.extend(
        between
            .failures()
            .into_iter()
            .map(|l| format!("{l} (logged between two points)")),
    );
    out
}

/// `watch.errors`: an uncorrected memory or PCIe error, or a machine check, during the run
/// fails it, naming the DIMM slot, PCIe device or CPU bank and the point.
pub fn watch_errors(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "watch.errors";
    let w = match watch(f, ID) {
        Ok(w) => w,
        Err(nf) => return vec![nf],
    };
    let mut lines: Vec<(String, String)> = Vec::new();
    for (point, d) in &w.points {
        for l in d.failures() {
            lines.push((point.clone(), l));
        }
    }
    let between = between_points(w);
    let unwatched = unwatched_error_sources(&w.run);
    if lines.is_empty() && between.is_empty() {
        let watched = w
            .run
            .sources
            .iter()
            .filter(|s| s.source.sees_errors() && s.unavailable.is_none())
            .count();
        if watched == 0 {
            return vec![Finding::not_evaluated(
                ID,
                format!(
                    "no source of hardware errors could be watched: {}",
                    unwatched.join("; ")
                ),
            )];
        }
        let summary = if unwatched.is_empty() {
            "no uncorrected error or machine check during the run".to_string()
        } else {
            format!(
                "no uncorrected error or machine check during the run; not watched: {}",
                unwatched.join("; ")
            )
        };
        return vec![Finding::new(ID, Verdict::Pass, summary)];
    }
    let first: Vec<String> = lines
        .iter()
        .map(|(p, l)| format!("{l} during {p}"))
        .chain(between.iter().cloned())
        .collect();
    let summary = format!(
        "{} during the run: {}{}",
        if first.len() == 1 {
            "1 uncorrected error or machine check".to_string()
        } else {
            format!("{} uncorrected errors or machine checks", first.len())
        },
        first.iter().take(3).cloned().collect::<Vec<_>>().join("; "),
        if first.len() > 3 {
            format!("; and {} more (evidence)", first.len() - 3)
        } else {
            String::new()
        }
    );
    let mut fnd = Finding::new(ID, Verdict::Fail, summary).fix(
        "replace or reseat what is named (the DIMM in its slot, the PCIe device or its riser); \
         for a machine check, have the CPU and board checked (the vendor's diagnostics, \
         `mcelog --client` or rasdaemon's `ras-mc-ctl --errors`); run again to confirm",
    );
    for (p, l) in &lines {
        fnd = fnd.with(point_source(p), l.clone());
    }
    for l in &between {
        fnd = fnd.with("watch.totals", l.clone());
    }
    vec![fnd]
}

/// `watch.corrected`: corrected errors of one DIMM or PCIe function above the rate
/// `max_per_day` (per 24 h of run time).
pub fn watch_corrected(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "watch.corrected";
    let w = match watch(f, ID) {
        Ok(w) => w,
        Err(nf) => return vec![nf],
    };
    let max_per_day = p.f64("max_per_day").unwrap_or(10.0);
    // per subject: count over the run, and the points with theirs
    let mut by: BTreeMap<String, (u64, Vec<String>)> = BTreeMap::new();
    for (point, d) in &w.points {
        for (who, n) in d.corrected() {
            let e = by.entry(who).or_default();
            e.0 += n;
            e.1.push(format!("{} during {point}", thousands(n)));
        }
    }
    if let Some(t) = &w.run.totals {
        // counts between points, where the totals hold more than the points
        for (who, n) in t.corrected() {
            let e = by.entry(who).or_default();
            if n > e.0 {
                e.1.push(format!("{} between points", thousands(n - e.0)));
                e.0 = n;
            }
        }
    }
    let seconds = w.run.totals.as_ref().map_or_else(
        || w.points.iter().map(|(_, d)| d.seconds).sum(),
        |t| t.seconds,
    );
    let watched: Vec<&str> = [WatchSource::Edac, WatchSource::Aer, WatchSource::KernelLog]
        .into_iter()
        .filter(|s| w.run.source(*s).is_some_and(|s| s.unavailable.is_none()))
        .map(WatchSource::words)
        .collect();
    if by.is_empty() {
        if watched.is_empty() {
            return vec![Finding::not_evaluated(
                ID,
                format!(
                    "no source of corrected errors could be watched: {}",
                    unwatched_error_sources(&w.run).join("; ")
                ),
            )];
        }
        return vec![];
    }
    let days = (seconds / 86_400.0).max(1e-9);
    let mut over = Vec::new();
    let mut under = Vec::new();
    for (who, (n, points)) in &by {
        let rate = *n as f64 / days;
        let line = format!(
            "{} corrected {} on {who} ({}; {rate:.0} per day over the run's {})",
            thousands(*n),
            if *n == 1 { "error" } else { "errors" },
            points.join(", "),
            hwsurvey_model::units::plural(seconds.round() as u64, "second")
        );
        if rate > max_per_day {
            over.push(line);
        } else {
            under.push(line);
        }
    }
    if over.is_empty() {
        let mut fnd = Finding::new(
            ID,
            Verdict::Info,
            format!(
                "corrected errors at or below {max_per_day} per day: {}",
                under.join("; ")
            ),
        );
        for l in under {
            fnd = fnd.with("watch", l);
        }
        return vec![fnd];
    }
    let mut fnd = Finding::new(
        ID,
        Verdict::Warn,
        format!(
            "{} (above {max_per_day} per day, mcelog's ce-error-threshold)",
            over.join("; ")
        ),
    )
    .fix(
        "a DIMM or link that corrects errors under load is failing: replace or reseat it \
         (the slot or device named) and run again",
    );
    for l in over.into_iter().chain(under) {
        fnd = fnd.with("watch", l);
    }
    vec![fnd]
}

/// `watch.link`: a PCIe link retrained (speed or width changed) during the run.
pub fn watch_link(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "watch.link";
    let w = match watch(f, ID) {
        Ok(w) => w,
        Err(nf) => return vec![nf],
    };
    if let Some(why) = w
        .run
        .source(WatchSource::Link)
        .and_then(|s| s.unavailable.as_ref())
    {
        return vec![Finding::not_evaluated(ID, why)];
    }
    let mut lines: Vec<(String, String)> = Vec::new();
    for (point, d) in &w.points {
        for l in &d.links {
            lines.push((
                point.clone(),
                format!(
                    "{}{} retrained from {} to {}{}",
                    l.device,
                    l.name
                        .as_deref()
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default(),
                    l.before,
                    l.after,
                    match (&l.max, l.below_max) {
                        (Some(m), true) => format!(", below its maximum {m}"),
                        _ => String::new(),
                    }
                ),
            ));
        }
    }
    if lines.is_empty() {
        if let Some(t) = w.run.totals.as_ref().filter(|t| !t.links.is_empty()) {
            for l in &t.links {
                lines.push((
                    "the run (between two points)".into(),
                    format!("{} went from {} to {}", l.device, l.before, l.after),
                ));
            }
        }
    }
    if lines.is_empty() {
        return vec![];
    }
    let mut fnd = Finding::new(
        ID,
        Verdict::Warn,
        format!(
            "a PCIe link retrained during the run: {}",
            lines
                .iter()
                .map(|(p, l)| format!("{l} during {p}"))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    )
    .fix("reseat the device or its riser and check its slot; a link that retrains under load is marginal");
    for (p, l) in lines {
        fnd = fnd.with(point_source(&p), l);
    }
    vec![fnd]
}

/// `watch.throttle`: thermal throttle counters rose during the run, or the clock measured at
/// the end lies more than `max_clock_drop_pct` below the one at the start.
pub fn watch_throttle(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "watch.throttle";
    let w = match watch(f, ID) {
        Ok(w) => w,
        Err(nf) => return vec![nf],
    };
    let max_drop = p.f64("max_clock_drop_pct").unwrap_or(5.0);
    let counters = w
        .run
        .source(WatchSource::ThermalThrottle)
        .is_some_and(|s| s.unavailable.is_none());
    let mut lines: Vec<(String, String)> = Vec::new();
    for (point, d) in &w.points {
        for t in &d.throttle {
            lines.push((point_source(point), format!("{} during {point}", t.words())));
        }
    }
    let clock = &w.run.clock;
    let drop = clock.drop_pct();
    if let (Some(d), Some(s), Some(e)) = (drop, &clock.start, &clock.end) {
        if d > max_drop {
            lines.push((
                "watch.clock".into(),
                format!(
                    "the clock measured on CPU {} fell {d:.1} % from the run's start to its end \
                     ({:.2} GHz to {:.2} GHz, above {max_drop} %)",
                    s.cpu,
                    s.clock_hz / 1e9,
                    e.clock_hz / 1e9
                ),
            ));
        }
    }
    if lines.is_empty() {
        if !counters && drop.is_none() {
            let why = w
                .run
                .source(WatchSource::ThermalThrottle)
                .and_then(|s| s.unavailable.as_ref())
                .map(|u| u.to_string())
                .unwrap_or_else(|| "no thermal_throttle counters".into());
            let clock_why = match (&clock.not_a_clock, clock.problems.is_empty()) {
                (Some(why), _) => format!("the clock at the start and the end: {why}"),
                (None, true) => "no reliable clock at the start and the end".to_string(),
                (None, false) => clock.problems.join("; "),
            };
            return vec![Finding::not_evaluated(ID, format!("{why}; {clock_why}"))];
        }
        return vec![];
    }
    let counted = lines.iter().any(|(src, _)| src != "watch.clock");
    let mut fnd = Finding::new(
        ID,
        Verdict::Warn,
        format!(
            "{}: {}",
            if counted {
                "throttled during the run"
            } else {
                // no counter rose: a CPU that slowed, or in a VM the host's load or turbo
                "the clock fell during the run (throttling, or in a VM the host's load)"
            },
            lines
                .iter()
                .map(|(_, l)| l.as_str())
                .take(4)
                .collect::<Vec<_>>()
                .join("; ")
        ),
    )
    .fix(
        "check the cooling (fans, heat sinks, airflow, inlet temperature) and the power \
         limits in the firmware; the throttled points' figures are not the machine's",
    );
    for (src, l) in lines {
        fnd = fnd.with(src, l);
    }
    vec![fnd]
}

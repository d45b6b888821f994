//! What `hwsurvey run --soak` prints: each round's figures as it finishes, against round 1's
//! (so that drift is seen), with what the hardware watch saw during the round
//! ([`round_text`]); and at the end the rounds' drift and what the watch saw over the whole
//! soak ([`closing_text`]). Pure functions of the result file's `soak` and `watch`
//! (`hwsurvey_result::watch`); every line fits 80 columns, a long point id aside.

use std::fmt::Write as _;

use hwsurvey_result::{Outcome, ResultFile, SoakPoint, SoakRound};

use crate::format::{duration_text, human_metric};

/// Width of the point id column.
const ID_WIDTH: usize = 34;

/// `0.98x` of `p` against the same point in `first`, when both have a median.
fn ratio(p: &SoakPoint, first: Option<&SoakRound>) -> Option<f64> {
    let f = first?
        .points
        .iter()
        .find(|q| q.family == p.family && q.id == p.id)?;
    let (a, b) = (p.median?, f.median?);
    (b != 0.0 && a.is_finite() && b.is_finite()).then(|| a / b)
}

/// What the watch saw during `round` in a few words: `nothing seen`, or the marks and the
/// points they fell on. `first_watch`: round 1's watch is its tests' (`file.tests[].watch`).
fn watch_words(round: &SoakRound, file: &ResultFile) -> String {
    let mut seen: Vec<String> = Vec::new();
    for p in &round.points {
        let w = match (&p.watch, round.round) {
            (Some(w), _) => Some(w),
            (None, 1) => file
                .tests
                .iter()
                .find(|t| t.point.family == p.family && t.point.id == p.id)
                .and_then(|t| t.watch.as_ref()),
            _ => None,
        };
        for m in w.map(|w| w.marks()).unwrap_or_default() {
            let word = m.trim_end_matches(" during this point").to_string();
            if !seen.contains(&word) {
                seen.push(word);
            }
        }
    }
    if seen.is_empty() {
        "nothing seen".into()
    } else {
        seen.join(", ")
    }
}

/// The block of one finished round: a heading with its time, what the watch saw, then
/// per family its points' figures and their ratio to round 1, each point the watch marked
/// followed by its marks.
pub fn round_text(round: &SoakRound, file: &ResultFile) -> String {
    let soak = file.soak.as_ref();
    let first = soak.and_then(|s| s.rounds.first());
    let elapsed: f64 = soak
        .map(|s| {
            s.rounds
                .iter()
                .take_while(|r| r.round <= round.round)
                .map(|r| r.duration_s)
                .sum()
        })
        .unwrap_or(round.duration_s);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "round {} ({}; {} of {} in all)",
        round.round,
        duration_text(round.duration_s),
        duration_text(elapsed),
        duration_text(soak.map_or(0.0, |s| s.duration_s)),
    );
    let _ = writeln!(out, "  hardware watch: {}", watch_words(round, file));
    let mut family = "";
    for p in &round.points {
        if p.family != family {
            family = &p.family;
            let _ = writeln!(out, "  {family}");
        }
        let value = match (p.outcome, &p.metric, p.median) {
            (Outcome::Measured, Some(m), Some(v)) => human_metric(m, v),
            (o, _, _) => o.to_string(),
        };
        let vs = match ratio(p, first) {
            Some(r) if round.round > 1 => format!("  {r:.2}x round 1"),
            _ => String::new(),
        };
        let _ = writeln!(out, "    {:<ID_WIDTH$} {value:>12}{vs}", p.id);
        let marks = match (&p.watch, round.round) {
            (Some(w), _) => w.marks(),
            (None, 1) => file.watch_marks(&p.family, &p.id),
            _ => Vec::new(),
        };
        if !marks.is_empty() {
            let _ = writeln!(out, "      {}", marks.join("; "));
        }
    }
    out
}

/// The end of a soak: rounds and time, each point's first and last figure with the drift
/// (the lowest and highest ratio to round 1 over the rounds), and the watch's lines
/// ([`ResultFile::watch_lines`]) or that it saw nothing.
pub fn closing_text(file: &ResultFile) -> String {
    let Some(soak) = &file.soak else {
        return String::new();
    };
    let mut out = String::new();
    let total: f64 = soak.rounds.iter().map(|r| r.duration_s).sum();
    let _ = writeln!(
        out,
        "soak: {} in {} (asked {}), families {}",
        hwsurvey_model::units::plural(soak.rounds.len() as u64, "round"),
        duration_text(total),
        duration_text(soak.duration_s),
        soak.families.join(", ")
    );
    let first = soak.rounds.first();
    if soak.rounds.len() > 1 {
        let _ = writeln!(
            out,
            "  drift against round 1 (lowest .. highest ratio over the rounds; last round):"
        );
        for p in first.map(|r| r.points.as_slice()).unwrap_or_default() {
            let ratios: Vec<f64> = soak
                .rounds
                .iter()
                .skip(1)
                .filter_map(|r| {
                    r.points
                        .iter()
                        .find(|q| q.family == p.family && q.id == p.id)
                })
                .filter_map(|q| ratio(q, first))
                .collect();
            let (Some(lo), Some(hi), Some(last)) = (
                ratios.iter().copied().reduce(f64::min),
                ratios.iter().copied().reduce(f64::max),
                ratios.last(),
            ) else {
                continue;
            };
            let _ = writeln!(
                out,
                "    {:<ID_WIDTH$} {lo:.2}x .. {hi:.2}x; last {last:.2}x",
                format!("{} {}", short_family(&p.family), p.id)
            );
        }
    }
    let lines = file.watch_lines();
    if lines.is_empty() {
        let unwatched = file
            .watch
            .as_ref()
            .map(|w| w.unwatched())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "hardware watch: nothing seen during the soak{}",
            if unwatched.is_empty() {
                String::new()
            } else {
                format!("; not watched: {}", unwatched.join("; "))
            }
        );
    } else {
        let _ = writeln!(out, "hardware watch:");
        for l in lines {
            let _ = writeln!(out, "  {l}");
        }
    }
    out
}

/// `mem.bandwidth` -> `mem`, `cpu.scaling` -> `cpu.scaling` (short enough).
fn short_family(f: &str) -> &str {
    match f {
        "mem.bandwidth" => "mem",
        "cpu.scaling" => "cpu",
        "cpu.clock" => "clock",
        other => other,
    }
}

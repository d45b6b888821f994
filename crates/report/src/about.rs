//! What page 1 of a printed report says before its tables: each run's dates, hwsurvey version
//! and profile, and one verdict sentence per machine (what it is, what is wrong with it, how
//! it compares with the baseline), built from the result files and the headline table.

use hwsurvey_machine::Machine;
use hwsurvey_model::units::plural;
use hwsurvey_result::provenance::{platform, platform_words, Wording};

use crate::headline::{letter, not_comparable, HEADLINE_ID};
use crate::input::Input;
use crate::layout::Table;

/// One line per run: `A vm: run 2026-12-02 14:43 to 15:00 UTC by hwsurvey 0.1.0
/// (7ff915a702cd) on aarch64, profile standard v3`. From the result file's `started_at`,
/// `finished_at`, `tool` and `profile`.
pub fn run_lines(inputs: &[Input]) -> Vec<String> {
    inputs
        .iter()
        .enumerate()
        .map(|(k, i)| {
            let f = &i.file;
            let start = short_time(&f.started_at);
            let finish = f
                .finished_at
                .as_deref()
                .map_or_else(|| "(not finished)".to_string(), short_time);
            // the finish without its date when the run ended on the day it started
            let finish = match (start.split_once(' '), finish.split_once(' ')) {
                (Some((d1, _)), Some((d2, t2))) if d1 == d2 => t2.to_string(),
                _ => finish,
            };
            let rev = match f.tool.git_revision.as_str() {
                "" => String::new(),
                r => format!(" ({r})"),
            };
            format!(
                "{} {}: run {start} to {finish} UTC by hwsurvey {}{rev} for {}, profile {} v{}",
                letter(k),
                i.label,
                f.tool.version,
                f.tool.arch,
                f.profile.id,
                f.profile.version
            )
        })
        .collect()
}

/// `2026-12-02T14:43:10Z` -> `2026-12-02 14:43`; other text as it is.
fn short_time(rfc3339: &str) -> String {
    match rfc3339.split_once('T') {
        Some((d, t)) if t.len() >= 5 => format!("{d} {}", &t[..5]),
        _ => rfc3339.to_string(),
    }
}

/// The topology as lscpu users read it: `2 sockets of 4 cores x 2 threads`; totals where the
/// sockets or cores differ; `None` when the probe did not count them
/// (`machine.cpu.topology`).
fn topology(m: &Machine) -> Option<String> {
    let t = &m.cpu.topology;
    let n = |p: &hwsurvey_model::Probed<u32>| p.known().map(|&n| u64::from(n));
    let (p, c, t) = (n(&t.packages)?, n(&t.cores)?, n(&t.threads)?);
    Some(hwsurvey_model::units::sockets_cores_threads(
        p, c, t, " of ",
    ))
}

/// What the platform (`machine.os.virtualization`) makes of the figures, for the sentence
/// ([`platform_words`] of a sentence); `platform unknown` where the probe could not tell.
fn platform_sentence(m: &Machine) -> &'static str {
    match m.os.virtualization.known() {
        Some(v) => platform_words(platform(v), Wording::Sentence),
        None => "platform unknown",
    }
}

/// One sentence per machine: `B: 2 sockets of 4 cores x 2 threads, emulated: figures measure
/// qemu, not the hardware; not compared (full-system emulation ...)`, or for a comparable
/// machine how its headline figures stand against the baseline's (`against A: 3 better,
/// 2 worse, 1 within noise`).
pub fn verdicts(inputs: &[Input], base: usize, tables: &[Table]) -> Vec<String> {
    let headline = tables.iter().find(|t| t.id == HEADLINE_ID);
    let base_nc = !not_comparable(&inputs[base].file).is_empty();
    inputs
        .iter()
        .enumerate()
        .map(|(k, i)| {
            let m = &i.file.machine;
            let model = m
                .cpu
                .identity
                .model_name
                .as_deref()
                .unwrap_or("CPU model unknown");
            let what = format!(
                "{}, {}",
                model,
                topology(m).unwrap_or_else(|| "topology unknown".into())
            );
            let why = not_comparable(&i.file);
            let wrong = if why.is_empty() {
                String::new()
            } else {
                // the platform is said already; the other reasons follow
                let rest: Vec<&String> = why.iter().filter(|w| !w.contains("emulat")).collect();
                if rest.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {}",
                        rest.iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join("; ")
                    )
                }
            };
            let compares = if k == base {
                "the baseline".to_string()
            } else if !why.is_empty() {
                "not compared: no figure of it is a win or a loss".to_string()
            } else if base_nc {
                format!(
                    "not compared: the baseline {} is not comparable",
                    letter(base)
                )
            } else {
                let notes: Vec<&str> = headline
                    .map(|h| {
                        h.rows
                            .iter()
                            .filter_map(|r| r.cells.get(k).and_then(|c| c.note.as_deref()))
                            .collect()
                    })
                    .unwrap_or_default();
                let count = |end: &str| notes.iter().filter(|n| n.ends_with(end)).count();
                format!(
                    "against {}: {} better, {} worse, {} within noise",
                    letter(base),
                    plural(count(" +") as u64, "headline figure"),
                    count(" -"),
                    count(" ~")
                )
            };
            format!(
                "{}: {what}, {}{wrong}; {compares}.",
                letter(k),
                platform_sentence(m)
            )
        })
        .collect()
}

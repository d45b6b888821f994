//! The verdict of a finished run, read from its result file alone: the exit status
//! `hwsurvey run` ends with and the one line it prints for a run that did not fully succeed.
//! Any caller of the engine reads the same verdict from the same file.

use hwsurvey_model::units::plural;

use crate::{Outcome, ResultFile, TestResult};

/// Exit status of a run in which at least one test failed (the result file holds each error).
pub const EXIT_TEST_FAILED: u8 = 1;
// Exit status 2 (the CLI's main.rs, every subcommand's error): a run that refused to start (bad
// option or profile, a refused `--storage-dir`/`--storage-device`, an existing `-o` file) or
// could not write its result.
/// Exit status of a run that measured nothing: every point it was asked for was skipped.
pub const EXIT_NOTHING_MEASURED: u8 = 3;

/// The exit status and one line for a finished (not interrupted) run that did not fully
/// succeed: [`EXIT_TEST_FAILED`] when a test failed, naming the first and how many;
/// [`EXIT_NOTHING_MEASURED`] when no test was measured, with the skip reasons (at most three,
/// each shortened to 100 characters). `None`: at least one test measured and none failed.
pub fn run_verdict(file: &ResultFile) -> Option<(u8, String)> {
    let short = |s: &str| {
        let mut out: String = s.chars().take(100).collect();
        if s.chars().count() > 100 {
            out.push('…');
        }
        out
    };
    let failed: Vec<&TestResult> = file
        .tests
        .iter()
        .filter(|t| t.outcome == Outcome::Failed)
        .collect();
    if let Some(first) = failed.first() {
        return Some((
            EXIT_TEST_FAILED,
            format!(
                "{} of {} failed; first: {} {}: {}",
                plural(failed.len() as u64, "test"),
                file.tests.len(),
                first.point.family,
                first.point.id,
                short(first.reason.as_deref().unwrap_or("no error given"))
            ),
        ));
    }
    if file.tests.iter().any(|t| t.outcome == Outcome::Measured) {
        return None;
    }
    let mut reasons: Vec<String> = Vec::new();
    let skipped = file
        .tests
        .iter()
        .filter_map(|t| t.reason.as_deref().map(|r| (t.point.family.as_str(), r)))
        .chain(
            file.skipped
                .iter()
                .map(|s| (s.family.as_str(), s.reason.as_str())),
        );
    let mut points = 0;
    for (family, reason) in skipped {
        points += 1;
        let r = format!("{family}: {}", short(reason));
        if !reasons.contains(&r) {
            reasons.push(r);
        }
    }
    let more = reasons.len().saturating_sub(3);
    reasons.truncate(3);
    Some((
        EXIT_NOTHING_MEASURED,
        format!(
            "nothing was measured: {} skipped ({}{})",
            plural(points as u64, "point"),
            reasons.join("; "),
            if more > 0 {
                format!("; {more} more reasons in the result file")
            } else {
                String::new()
            }
        ),
    ))
}

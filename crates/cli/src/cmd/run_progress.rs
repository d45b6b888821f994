//! The progress `hwsurvey run` draws while the engine runs: an indicatif bar on a terminal with
//! the ETA ([`hwsurvey_engine::eta`]), or one plain line per finished test on stderr. It only
//! draws: the result file is the engine's ([`hwsurvey_engine::run::RunRequest`]).

use hwsurvey_engine::eta::Eta;
use hwsurvey_engine::plan::Plan;
use hwsurvey_engine::run::Observer;
use hwsurvey_report::format::duration_text;
use hwsurvey_report::run::progress_line;
use hwsurvey_result::TestResult;

/// Progress: an indicatif bar on a terminal; otherwise (CI, `| tee`, where indicatif hides
/// itself) one plain line per finished test on stderr.
pub struct Progress {
    /// The bar (hidden off a terminal); finish it before printing the summary.
    pub bar: indicatif::ProgressBar,
    tty: bool,
    done: usize,
    total: usize,
    eta: Eta,
    started: std::time::Instant,
    /// The plan, to start a soak's next round afresh.
    plan: Plan,
}

impl Progress {
    /// The progress of `plan`, drawn as a bar when `tty`.
    pub fn new(plan: &Plan, tty: bool) -> Self {
        let total = plan.point_count();
        let bar = if tty {
            indicatif::ProgressBar::new(total as u64)
        } else {
            indicatif::ProgressBar::hidden()
        };
        // `wide_msg` takes the width the rest leaves and cuts the message there: the line never
        // wraps. Colours go through `console`, which honours NO_COLOR and CLICOLOR.
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "[{elapsed_precise}] {bar:30.cyan/blue} {pos}/{len} {wide_msg}",
        ) {
            bar.set_style(style);
        }
        Progress {
            bar,
            tty,
            done: 0,
            total,
            eta: Eta::new(plan),
            started: std::time::Instant::now(),
            plan: plan.clone(),
        }
    }
}

impl Observer for Progress {
    fn point_started(&mut self, point: &hwsurvey_engine::Point, index: usize, _total: usize) {
        self.done = index;
        self.bar.set_position(index as u64);
        let eta = self.eta.left_s(self.started.elapsed().as_secs_f64());
        self.bar.set_message(format!(
            "ETA {} · {} {}",
            duration_text(eta),
            point.family,
            point.id
        ));
    }
    fn point_finished(&mut self, result: &TestResult) {
        self.done += 1;
        self.eta.finished(result);
        self.bar.inc(1);
        if !self.tty {
            errln!("{}", progress_line(self.done, self.total, result));
        } else if result.outcome != hwsurvey_result::Outcome::Measured {
            self.bar
                .println(not_measured_line(result, crate::fit::stderr_width()));
        }
    }
    /// A soak round: its figures against round 1's and what the watch saw, on stdout
    /// ([`hwsurvey_report::soak::round_text`]); the bar starts the next round afresh.
    fn round_finished(
        &mut self,
        round: &hwsurvey_result::SoakRound,
        file: &hwsurvey_result::ResultFile,
    ) {
        let text = hwsurvey_report::soak::round_text(round, file);
        let width = crate::terminal_width();
        self.bar.suspend(|| {
            for line in text.lines() {
                match width {
                    Some(w) => out!("{}", crate::fit::fit(line, w)),
                    None => outln!("{line}"),
                }
            }
        });
        self.done = 0;
        self.bar.set_position(0);
        self.eta = Eta::new(&self.plan);
        self.started = std::time::Instant::now();
    }
}

/// The line a point that was not measured prints above the progress bar: family, id, outcome
/// and reason, wrapped with a hanging indent to a terminal `width` columns wide (the reason of
/// a skipped critical-rate search runs to 700 characters; a new user's 80-column terminal got
/// it on one line). Durations in the reason are in the unit people read (`p99 39.8 ms`, as the
/// report's notes: the file keeps whole ns).
fn not_measured_line(result: &TestResult, width: Option<usize>) -> String {
    let line = format!(
        "{} {}: {} ({})",
        result.point.family,
        result.point.id,
        result.outcome,
        hwsurvey_report::format::humanize_ns(result.reason.as_deref().unwrap_or(""))
    );
    match width {
        Some(w) => crate::fit::fit(&line, w).trim_end_matches('\n').to_string(),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsurvey_testkit::plans::point;

    /// A skipped critical-rate search's reason (as the 2-vCPU guest printed it in CI) fits an
    /// 80-column terminal, every word kept; without a terminal it is one line.
    #[test]
    fn a_not_measured_line_fits_the_terminal() {
        let reason = "no open-loop rate kept p99 <= 1000000 ns (4 trials, search stopped: trial \
                      budget spent); lowest rate tried: 108169/s requested, 15604/s achieved, \
                      3598 abandoned, p50 28721151 ns, p99 39845887 ns, p999 40009727 ns; \
                      workers stalled 21.9 % of the window (220 stalls > 50 us, longest 0.64 \
                      ms; 0.00 % past the bound); failed: 3598 of 4327 requests abandoned";
        let r = TestResult::new(
            point("service.point_select", "critical/pages=base", 2),
            hwsurvey_engine::PointOutcome::SkippedAfterTrying {
                reason: reason.into(),
                details: Default::default(),
            },
            "2026-12-04T00:00:00Z".into(),
            1.0,
        );
        let wrapped = not_measured_line(&r, Some(80));
        assert!(wrapped.lines().count() > 3, "{wrapped}");
        assert!(
            wrapped.lines().all(|l| crate::fit::display_width(l) <= 80),
            "{wrapped}"
        );
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        let whole = not_measured_line(&r, None);
        assert_eq!(whole.lines().count(), 1);
        assert_eq!(words(&wrapped), words(&whole));
        assert!(whole.starts_with("service.point_select critical/pages=base: skipped"));
        // the file's whole ns in the unit people read (a new user saw `p50 8634367 ns`)
        assert!(whole.contains("p99 <= 1.00 ms"), "{whole}");
        assert!(
            whole.contains("p50 28.7 ms, p99 39.8 ms, p999 40.0 ms"),
            "{whole}"
        );
        assert!(!whole.contains("8721151"), "{whole}");
    }
}

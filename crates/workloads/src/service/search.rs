//! Search for the highest arrival rate whose p99 latency stays under a bound (the
//! latency-bounded throughput, after SPECjbb2015's critical-jOPS): open-loop trials at fixed
//! rates, stepping up geometrically from a fraction of the closed-loop maximum until a trial
//! fails (stepping down while none has passed, to at most [`OVERLOAD_MARGIN`] of the rate an
//! overloaded trial achieved), then bisecting between the best pass and the lowest failure until they are within
//! `resolution` of each other or the trial budget is spent. Going down (no pass yet), it stops
//! before a rate whose window would hold fewer than [`MIN_REQUESTS_FOR_P99`] requests.
//!
//! A trial passes when it abandoned no request, served at least `min_achieved_fraction` of the
//! requested rate, and its p99 (measured from intended send times) is at most the bound; a
//! failing trial names each criterion it failed with its numbers ([`FailedCriterion`]).
//!
//! On a busy machine the workers are taken off their CPUs for whole scheduler slices
//! (milliseconds), and every request due during such a stall is charged the rest of the stall
//! as latency: a request due in the first `S - bound` of a stall of length `S` exceeds the
//! bound. When those parts of the stalls cover 1 % of the window
//! ([`OpenLoopPoint::stalled_past_bound_fraction`]), p99 exceeds the bound at *every* rate. So a
//! failing rate is tried `retry_failed` more times before it counts as failing (stalls come
//! and go), and when two failing trials in a row without any pass had at least
//! [`STALLED_FRACTION_HOPELESS`] of their workers' time stalled past the bound, the search stops
//! ([`SearchStop::Stalled`]) instead of trying ever lower rates. Stalls shorter than the bound
//! do not stop it, however many: a lower rate queues less behind them and may pass. (Measured
//! 2026-12-03 in the 2-vCPU guest: 5.8 % of the window stalled, longest 1.26 ms, so 0.3 % at
//! most past a 1 ms bound; the old rule, "1 % stalled and one stall >= the bound", stopped
//! there after two trials.)

use serde::{Deserialize, Serialize};

use super::open_loop::OpenLoopPoint;

/// How the search proceeds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SearchParams {
    /// p99 bound (ns), e.g. 1 ms = 1_000_000.
    pub p99_bound_ns: u64,
    /// First trial rate as a fraction of the closed-loop maximum (e.g. 0.25).
    pub start_fraction: f64,
    /// Factor between successive rates while every trial passes (e.g. 1.5).
    pub step_factor: f64,
    /// Stop bisecting when (lowest failing rate / best passing rate - 1) <= this (e.g. 0.05).
    pub resolution: f64,
    /// Most trials to run (the time budget divided by the length of one trial).
    pub max_trials: usize,
    /// Smallest served/requested ratio of a passing trial (e.g. 0.98).
    pub min_achieved_fraction: f64,
    /// Extra tries of a rate that failed before it counts as failing (0 = none).
    #[serde(default)]
    pub retry_failed: usize,
}

/// Fewest requests a trial's measured window must hold for its p99 to be the latency of a
/// request that was measured rather than the slowest one: with fewer than 100, the 99th
/// percentile is the maximum. The search never descends to a rate whose window would hold fewer
/// ([`SearchStop::TooFewRequests`]): at 10 requests/s a 40 ms window holds no request at all,
/// and such a trial can only fail with "no request served".
pub const MIN_REQUESTS_FOR_P99: f64 = 100.0;

/// Share of the workers' time stalled past the bound (see
/// [`OpenLoopPoint::stalled_past_bound_fraction`]) from which a p99 criterion cannot be met at
/// any rate: 1 %, the tail that p99 leaves out.
pub const STALLED_FRACTION_HOPELESS: f64 = 0.01;

/// Share of an overloaded trial's achieved rate that the search tries next while no rate has
/// passed (see [`search_critical_rate`]): 0.8, a load at which queueing behind requests of
/// microseconds stays far below a p99 bound of a millisecond. Measured 2026-12-04 in the 2-vCPU
/// guest after its clocksource changed to hpet mid-run: the closed loop had served 1.73 M/s,
/// the open loop 15.6 k/s at 108 k/s requested, and stepping down by step_factor^2 from 0.25 x
/// the closed loop spent the quick profile's 4 trials above 100 k/s.
pub const OVERLOAD_MARGIN: f64 = 0.8;

/// A pass criterion a trial failed, with its numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "criterion", rename_all = "snake_case")]
pub enum FailedCriterion {
    /// Requests were abandoned (a worker fell more than the lag limit behind).
    Abandoned {
        /// Requests abandoned.
        abandoned_ops: u64,
        /// Requests due in the window.
        due_ops: u64,
    },
    /// Served less than the required share of the requested rate.
    AchievedRate {
        /// Served rate (requests per second).
        achieved_ops_per_s: f64,
        /// Lowest passing served rate (requests per second).
        required_ops_per_s: f64,
    },
    /// p99 above the bound.
    P99 {
        /// Measured p99 (ns, from intended send times).
        p99_ns: u64,
        /// The bound (ns).
        bound_ns: u64,
    },
    /// Nothing was served, so there is no latency to judge.
    NoLatency,
}

impl std::fmt::Display for FailedCriterion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FailedCriterion::Abandoned {
                abandoned_ops,
                due_ops,
            } => write!(f, "{abandoned_ops} of {due_ops} requests abandoned"),
            FailedCriterion::AchievedRate {
                achieved_ops_per_s,
                required_ops_per_s,
            } => write!(
                f,
                "achieved {achieved_ops_per_s:.0}/s < required {required_ops_per_s:.0}/s"
            ),
            FailedCriterion::P99 { p99_ns, bound_ns } => {
                write!(f, "p99 {p99_ns} ns > bound {bound_ns} ns")
            }
            FailedCriterion::NoLatency => f.write_str("no request served"),
        }
    }
}

/// One trial of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateTrial {
    /// The open-loop run.
    pub point: OpenLoopPoint,
    /// Whether it met the bound (see the module doc).
    pub passed: bool,
    /// The criteria it failed, with their numbers (empty when it passed).
    #[serde(default)]
    pub failed: Vec<FailedCriterion>,
}

impl RateTrial {
    /// Judges `point` against `params`.
    pub fn judged(point: OpenLoopPoint, params: &SearchParams) -> Self {
        let failed = judge(&point, params);
        RateTrial {
            passed: failed.is_empty(),
            failed,
            point,
        }
    }

    /// One line: requested and achieved rate, abandoned, p50/p99/p999, stalls, verdict.
    pub fn describe(&self) -> String {
        let p = &self.point;
        let lat = p.latency.as_ref().map_or("no latency".to_string(), |l| {
            format!(
                "p50 {} ns, p99 {} ns, p999 {} ns",
                l.p50_ns, l.p99_ns, l.p999_ns
            )
        });
        let verdict = if self.passed {
            "passed".to_string()
        } else {
            let why: Vec<String> = self.failed.iter().map(|c| c.to_string()).collect();
            format!("failed: {}", why.join("; "))
        };
        format!(
            "{:.0}/s requested, {:.0}/s achieved, {} abandoned, {lat}; workers stalled {:.1} % \
             of the window ({} stalls > {} us, longest {:.2} ms; {:.2} % past the bound); \
             {verdict}",
            p.requested_rate_ops_per_s,
            p.achieved_rate_ops_per_s,
            p.abandoned_ops,
            100.0 * p.stalled_fraction(),
            p.stalls,
            super::open_loop::STALL_NS / 1000,
            p.max_stall_ns as f64 / 1e6,
            100.0 * p.stalled_past_bound_fraction(),
        )
    }
}

/// Why the search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchStop {
    /// Best pass and lowest failure are within `resolution`.
    Converged,
    /// `max_trials` trials were run.
    BudgetSpent,
    /// Rates went past 4x the closed-loop maximum and still passed (bound too loose).
    NoFailureFound,
    /// Rates fell below 1/1000 of the closed-loop maximum and still failed.
    NoPassFound,
    /// Two failing trials in a row, with no pass yet, had their workers stalled past the bound
    /// for at least [`STALLED_FRACTION_HOPELESS`] of the window: no lower rate can meet p99.
    Stalled,
    /// The closed-loop maximum was not a positive finite rate, so there was nowhere to start.
    NoStartingRate,
    /// No pass yet, and the next lower rate would put fewer than [`MIN_REQUESTS_FOR_P99`]
    /// requests in a trial's window (rate x window length), too few to judge a p99.
    TooFewRequests,
}

impl std::fmt::Display for SearchStop {
    /// In words, for reasons shown to people (the serialised form stays snake_case).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SearchStop::Converged => "converged",
            SearchStop::BudgetSpent => "trial budget spent",
            SearchStop::NoFailureFound => "no failing rate found up to 4x the closed-loop maximum",
            SearchStop::NoPassFound => {
                "no passing rate found down to 1/1000 of the closed-loop maximum"
            }
            SearchStop::NoStartingRate => "no closed-loop maximum to start from",
            SearchStop::TooFewRequests => {
                "the next lower rate would put fewer than 100 requests in a trial's window, \
                 too few to judge p99 (a longer window or a looser bound is needed)"
            }
            SearchStop::Stalled => {
                "the workers were off their CPUs for longer than the bound, past it for >= 1 % \
                 of two trials in a row (a busy machine): no lower rate can meet p99"
            }
        })
    }
}

/// Outcome of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    /// The bound searched for (ns).
    pub p99_bound_ns: u64,
    /// Closed-loop maximum the search started from (requests per second).
    pub closed_loop_max_ops_per_s: f64,
    /// Highest achieved rate of a passing trial (requests per second); `None` when no trial passed.
    pub critical_throughput_ops_per_s: Option<f64>,
    /// Lowest requested rate that failed (requests per second); `None` when none failed.
    pub lowest_failing_rate_ops_per_s: Option<f64>,
    /// Why the search stopped.
    pub stop: SearchStop,
    /// Every trial in the order run.
    pub trials: Vec<RateTrial>,
}

/// The criteria `p` fails under `params` (see the module doc); empty when it passes.
pub fn judge(p: &OpenLoopPoint, params: &SearchParams) -> Vec<FailedCriterion> {
    let mut out = Vec::new();
    if p.abandoned_ops > 0 {
        out.push(FailedCriterion::Abandoned {
            abandoned_ops: p.abandoned_ops,
            due_ops: p.abandoned_ops + p.issued_ops,
        });
    }
    let required = params.min_achieved_fraction * p.requested_rate_ops_per_s;
    if p.achieved_rate_ops_per_s < required {
        out.push(FailedCriterion::AchievedRate {
            achieved_ops_per_s: p.achieved_rate_ops_per_s,
            required_ops_per_s: required,
        });
    }
    match &p.latency {
        None => out.push(FailedCriterion::NoLatency),
        Some(l) if l.p99_ns > params.p99_bound_ns => out.push(FailedCriterion::P99 {
            p99_ns: l.p99_ns,
            bound_ns: params.p99_bound_ns,
        }),
        Some(_) => {}
    }
    out
}

/// Whether `p` meets `params` (see the module doc).
pub fn passes(p: &OpenLoopPoint, params: &SearchParams) -> bool {
    judge(p, params).is_empty()
}

/// Runs the search; `trial(rate)` runs one open-loop trial at `rate` requests per second.
/// Errors of a trial end the search and are returned as they are.
pub fn search_critical_rate<E>(
    closed_loop_max_ops_per_s: f64,
    params: &SearchParams,
    mut trial: impl FnMut(f64) -> Result<OpenLoopPoint, E>,
) -> Result<SearchOutcome, E> {
    let mut out = SearchOutcome {
        p99_bound_ns: params.p99_bound_ns,
        closed_loop_max_ops_per_s,
        critical_throughput_ops_per_s: None,
        lowest_failing_rate_ops_per_s: None,
        stop: SearchStop::BudgetSpent,
        trials: Vec::new(),
    };
    if !(closed_loop_max_ops_per_s.is_finite() && closed_loop_max_ops_per_s > 0.0) {
        out.stop = SearchStop::NoStartingRate;
        return Ok(out);
    }
    let step = params.step_factor.max(1.01);
    let mut best_pass: Option<f64> = None;
    let mut rate = closed_loop_max_ops_per_s * params.start_fraction.clamp(1e-3, 1.0);
    let mut stalled_failures = 0usize;
    while out.trials.len() < params.max_trials {
        let mut tries = 0;
        let passed = loop {
            let t = RateTrial::judged(trial(rate)?, params);
            let passed = t.passed;
            // Hopeless only by the stalls' parts past the bound: shorter stalls cannot by
            // themselves push p99 over it, and a lower rate may still pass.
            let stalled = t.point.stalled_past_bound_fraction() >= STALLED_FRACTION_HOPELESS;
            out.trials.push(t);
            if passed {
                stalled_failures = 0;
                break true;
            }
            stalled_failures = if stalled { stalled_failures + 1 } else { 0 };
            if best_pass.is_none() && stalled_failures >= 2 {
                out.lowest_failing_rate_ops_per_s = Some(
                    out.lowest_failing_rate_ops_per_s
                        .map_or(rate, |f| f.min(rate)),
                );
                out.stop = SearchStop::Stalled;
                return Ok(out);
            }
            tries += 1;
            if tries > params.retry_failed || out.trials.len() >= params.max_trials {
                break false;
            }
        };
        let point = &out.trials[out.trials.len() - 1].point;
        if passed {
            best_pass = Some(best_pass.map_or(rate, |b: f64| b.max(rate)));
            let achieved = point.achieved_rate_ops_per_s;
            out.critical_throughput_ops_per_s = Some(
                out.critical_throughput_ops_per_s
                    .map_or(achieved, |c| c.max(achieved)),
            );
        } else {
            out.lowest_failing_rate_ops_per_s = Some(
                out.lowest_failing_rate_ops_per_s
                    .map_or(rate, |f| f.min(rate)),
            );
        }
        rate = match (best_pass, out.lowest_failing_rate_ops_per_s) {
            (Some(lo), None) => {
                let next = lo * step;
                if next > 4.0 * closed_loop_max_ops_per_s {
                    out.stop = SearchStop::NoFailureFound;
                    return Ok(out);
                }
                next
            }
            (None, Some(hi)) => {
                // An overloaded trial measured what the service can serve: the next rate is
                // at most OVERLOAD_MARGIN of it, however far below the closed-loop maximum
                // (a slower clock, slow wake-ups), so the budget is not spent stepping down.
                let mut next = hi / (step * step);
                if point.achieved_rate_ops_per_s > 0.0
                    && point.achieved_rate_ops_per_s
                        < params.min_achieved_fraction * point.requested_rate_ops_per_s
                {
                    next = next.min(OVERLOAD_MARGIN * point.achieved_rate_ops_per_s);
                }
                if next * point.window_s < MIN_REQUESTS_FOR_P99 {
                    out.stop = SearchStop::TooFewRequests;
                    return Ok(out);
                }
                if next < closed_loop_max_ops_per_s * 1e-3 {
                    out.stop = SearchStop::NoPassFound;
                    return Ok(out);
                }
                next
            }
            (Some(lo), Some(hi)) => {
                if hi / lo - 1.0 <= params.resolution || hi <= lo {
                    out.stop = SearchStop::Converged;
                    return Ok(out);
                }
                (lo * hi).sqrt()
            }
            (None, None) => unreachable!("a trial either passed or failed"),
        };
    }
    Ok(out)
}

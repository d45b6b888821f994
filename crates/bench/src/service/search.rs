//! Search for the highest arrival rate whose p99 latency stays under a bound (the
//! latency-bounded throughput, after SPECjbb2015's critical-jOPS): open-loop trials at fixed
//! rates, stepping up geometrically from a fraction of the closed-loop maximum until a trial
//! fails, then bisecting between the best pass and the lowest failure until they are within
//! `resolution` of each other or the trial budget is spent.
//!
//! A trial passes when it abandoned no request, served at least `min_achieved_fraction` of the
//! requested rate, and its p99 (measured from intended send times) is at most the bound.

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
}

/// One trial of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateTrial {
    /// The open-loop run.
    pub point: OpenLoopPoint,
    /// Whether it met the bound (see the module doc).
    pub passed: bool,
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
    /// The closed-loop maximum was not a positive finite rate, so there was nowhere to start.
    NoStartingRate,
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

/// Whether `p` meets `params` (see the module doc).
pub fn passes(p: &OpenLoopPoint, params: &SearchParams) -> bool {
    p.abandoned_ops == 0
        && p.achieved_rate_ops_per_s >= params.min_achieved_fraction * p.requested_rate_ops_per_s
        && p.latency
            .as_ref()
            .is_some_and(|l| l.p99_ns <= params.p99_bound_ns)
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
    while out.trials.len() < params.max_trials {
        let point = trial(rate)?;
        let passed = passes(&point, params);
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
        out.trials.push(RateTrial { point, passed });
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
                let next = hi / (step * step);
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

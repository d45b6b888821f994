//! The latency-bounded throughput search on a synthetic service whose p99 crosses the bound at
//! a known rate, and the closed-loop driver on a small real table.

use std::time::Duration;

use hwsurvey_workloads::service::clock::MonotonicClock;
use hwsurvey_workloads::service::closed_loop::run_closed_loop;
use hwsurvey_workloads::service::histogram::LatencyRecorder;
use hwsurvey_workloads::service::index::HashIndex;
use hwsurvey_workloads::service::open_loop::OpenLoopPoint;
use hwsurvey_workloads::service::search::{search_critical_rate, SearchParams, SearchStop};
use hwsurvey_workloads::service::table::Table;
use hwsurvey_workloads::service::{PointSelect, ServiceError};

fn params() -> SearchParams {
    SearchParams {
        p99_bound_ns: 1_000_000,
        start_fraction: 0.25,
        step_factor: 1.5,
        resolution: 0.05,
        max_trials: 20,
        min_achieved_fraction: 0.98,
        retry_failed: 0,
    }
}

/// A synthetic trial: p99 of 100 us up to `knee` req/s, 5 ms above; served rate = requested.
fn synthetic(knee: f64) -> impl FnMut(f64) -> Result<OpenLoopPoint, ()> {
    move |rate| {
        let mut rec = LatencyRecorder::new();
        let lat = if rate <= knee { 100_000 } else { 5_000_000 };
        for _ in 0..1000 {
            rec.record_ns(lat);
        }
        Ok(OpenLoopPoint {
            requested_rate_ops_per_s: rate,
            workers: 2,
            window_s: 0.5,
            issued_ops: (rate * 0.5) as u64,
            abandoned_ops: 0,
            achieved_rate_ops_per_s: rate,
            max_send_lag_ns: 0,
            stalls: 0,
            stalled_ns: 0,
            max_stall_ns: 0,
            stalled_past_bound_ns: 0,
            latency: rec.summary(),
        })
    }
}

#[test]
fn finds_the_knee_within_resolution() {
    let out = search_critical_rate(1_000_000.0, &params(), synthetic(700_000.0)).unwrap();
    assert_eq!(out.stop, SearchStop::Converged);
    let c = out.critical_throughput_ops_per_s.unwrap();
    let f = out.lowest_failing_rate_ops_per_s.unwrap();
    assert!(
        c <= 700_000.0 && f > 700_000.0 && f / c - 1.0 <= 0.05,
        "{c} {f}"
    );
    // 250k, 375k, 562.5k pass, 843.75k fails, then bisection.
    assert_eq!(out.trials[0].point.requested_rate_ops_per_s, 250_000.0);
    assert!(out.trials[..3].iter().all(|t| t.passed));
    assert!(!out.trials[3].passed);
}

#[test]
fn knee_below_start_steps_down() {
    let out = search_critical_rate(1_000_000.0, &params(), synthetic(30_000.0)).unwrap();
    assert_eq!(out.stop, SearchStop::Converged);
    let c = out.critical_throughput_ops_per_s.unwrap();
    assert!((28_500.0..=30_000.0).contains(&c), "{c}");
}

#[test]
fn a_served_rate_below_the_requested_one_fails() {
    let mut inner = synthetic(f64::INFINITY);
    let trial = |rate: f64| {
        inner(rate).map(|mut p| {
            // The service tops out at 400k req/s whatever is offered.
            p.achieved_rate_ops_per_s = rate.min(400_000.0);
            p
        })
    };
    let out = search_critical_rate(1_000_000.0, &params(), trial).unwrap();
    let c = out.critical_throughput_ops_per_s.unwrap();
    assert!((380_000.0..=400_000.0).contains(&c), "{c}");
}

#[test]
fn budget_and_degenerate_starts_are_reported() {
    let p = SearchParams {
        max_trials: 3,
        ..params()
    };
    let out = search_critical_rate(1_000_000.0, &p, synthetic(700_000.0)).unwrap();
    assert_eq!((out.stop, out.trials.len()), (SearchStop::BudgetSpent, 3));
    let out = search_critical_rate(0.0, &params(), synthetic(1.0)).unwrap();
    assert_eq!(out.stop, SearchStop::NoStartingRate);
    assert!(out.trials.is_empty() && out.critical_throughput_ops_per_s.is_none());
    let out = search_critical_rate(1_000_000.0, &params(), synthetic(0.0)).unwrap();
    assert_eq!(out.stop, SearchStop::NoPassFound);
    assert_eq!(out.critical_throughput_ops_per_s, None);
    let out = search_critical_rate(1_000.0, &params(), synthetic(f64::INFINITY)).unwrap();
    assert_eq!(out.stop, SearchStop::NoFailureFound);
}

/// The fault seen in a 16-vCPU guest: every trial failed (stalls shorter than the bound), and
/// the search went down to 10/s in a 40 ms window, where no request is due, so each trial
/// "failed" with no request served until the trial budget ran out. It now stops at the first
/// rate whose window would hold fewer than 100 requests, and says so.
#[test]
fn the_search_stops_where_a_window_would_hold_too_few_requests_for_a_p99() {
    let window_s = 0.04;
    let trial = |rate: f64| {
        let mut p = synthetic(0.0)(rate).unwrap();
        p.window_s = window_s;
        p.issued_ops = (rate * window_s) as u64;
        Ok::<_, ()>(p)
    };
    // 10 000/s closed loop: 2 500/s (100 requests in 40 ms) fails; the next rate, 1 111/s,
    // would put 44 requests in the window.
    let out = search_critical_rate(10_000.0, &params(), trial).unwrap();
    assert_eq!(out.stop, SearchStop::TooFewRequests);
    assert_eq!(out.trials.len(), 1);
    assert_eq!(out.trials[0].point.requested_rate_ops_per_s, 2_500.0);
    assert_eq!(out.lowest_failing_rate_ops_per_s, Some(2_500.0));
    let reason = hwsurvey_workloads::families::service_point_select::no_pass_reason(&out);
    assert!(
        reason.contains("search stopped: the next lower rate would put fewer than 100 requests")
            && reason.contains("lowest rate tried: 2500/s requested"),
        "{reason}"
    );
    // A longer window lets the same search go further down: 0.5 s holds 100 requests down to
    // 200/s, so it tries 2 500, 1 111, 494 and 219/s (4 trials) before 98/s would be too few.
    let out = search_critical_rate(10_000.0, &params(), synthetic(0.0)).unwrap();
    assert_eq!(out.stop, SearchStop::TooFewRequests);
    assert_eq!(out.trials.len(), 4);
}

/// Every trial of a search whose bound a 1 000/s service cannot meet, 0.5 s windows: the
/// first rate, 250/s, fails, and the next, 111/s, would hold 55 requests.
#[test]
fn a_slow_service_stops_before_too_few_requests() {
    let out = search_critical_rate(1_000.0, &params(), synthetic(0.0)).unwrap();
    assert_eq!(out.stop, SearchStop::TooFewRequests);
    assert_eq!(out.trials.len(), 1);
}

#[test]
fn closed_loop_on_a_small_table_counts_every_request() {
    let rows = 10_000;
    let ps = PointSelect::build(
        rows,
        Box::new(vec![0u64; Table::required_words(rows)]),
        Box::new(vec![0u64; HashIndex::required_words(rows)]),
    )
    .unwrap();
    let clock = MonotonicClock::new();
    let op = |r: u64| ps.select_random(r);
    let p = run_closed_loop(
        &clock,
        3,
        Duration::from_millis(10),
        Duration::from_millis(100),
        &op,
    )
    .unwrap();
    assert_eq!(p.clients, 3);
    assert!(p.ops > 100, "{} ops", p.ops);
    assert!(p.window_s >= 0.1);
    assert!((p.throughput_ops_per_s - p.ops as f64 / p.window_s).abs() < 1e-6);
    let l = p.latency.unwrap();
    assert_eq!(l.samples, p.ops);
    assert!(l.min_ns <= l.p50_ns && l.p50_ns <= l.p99_ns && l.p99_ns <= l.p999_ns);
    assert!(l.p999_ns <= l.max_ns);
    assert!(matches!(
        run_closed_loop(&clock, 0, Duration::ZERO, Duration::from_millis(1), &op),
        Err(ServiceError::BadConfig(_))
    ));
}

/// A trial whose two workers were stalled for `stalled` of a 0.5 s window in stalls of
/// `each_ns`, p99 5 ms (fails 1 ms); the stalls' parts past the 1 ms bound are summed as the
/// open-loop driver sums them.
fn stalled_by(rate: f64, stalled: f64, each_ns: u64) -> OpenLoopPoint {
    let mut p = synthetic(0.0)(rate).unwrap();
    p.stalled_ns = (stalled * 0.5e9 * 2.0) as u64;
    p.stalls = p.stalled_ns / each_ns;
    p.max_stall_ns = each_ns;
    p.stalled_past_bound_ns = p.stalls * each_ns.saturating_sub(1_000_000);
    p
}

/// As [`stalled_by`], in three stalls.
fn stalled_trial(rate: f64, stalled: f64) -> OpenLoopPoint {
    let stalled_ns = (stalled * 0.5e9 * 2.0) as u64;
    stalled_by(rate, stalled, (stalled_ns / 3).max(1))
}

#[test]
fn a_busy_machine_stops_the_search_with_the_stall_as_reason() {
    let p = SearchParams {
        retry_failed: 1,
        ..params()
    };
    // Stalled 5 % of every trial: the rate and its retry fail, and the search stops there
    // instead of trying ever lower rates.
    let out =
        search_critical_rate(1_000_000.0, &p, |r| Ok::<_, ()>(stalled_trial(r, 0.05))).unwrap();
    assert_eq!(out.stop, SearchStop::Stalled);
    assert_eq!(out.trials.len(), 2);
    assert_eq!(out.lowest_failing_rate_ops_per_s, Some(250_000.0));
    assert!(out.trials.iter().all(|t| !t.passed && !t.failed.is_empty()));
    // Without stalls the same failures go on down, two tries per rate, from 250k/s by
    // 1/2.25 each time to 1.95k/s (the next, 867/s, is below 1/1000 of the maximum).
    let out =
        search_critical_rate(1_000_000.0, &p, |r| Ok::<_, ()>(stalled_trial(r, 0.0))).unwrap();
    assert_eq!(out.stop, SearchStop::NoPassFound);
    assert_eq!(out.trials.len(), 14);
    // Stalled as much, but in stalls shorter than the 1 ms bound (0.5 ms each): they cannot
    // make p99 fail at every rate, so the search goes on down as without stalls.
    let out = search_critical_rate(1_000_000.0, &p, |r| {
        Ok::<_, ()>(stalled_by(r, 0.05, 500_000))
    })
    .unwrap();
    assert_eq!(out.stop, SearchStop::NoPassFound);
    assert_eq!(out.trials.len(), 14);
    // The 2-vCPU guest's failing trial of 2026-12-03 (quick profile, 40 ms window, two
    // workers): 21 stalls over 50 us, 5.8 % of the window, the longest 1.26 ms. At most three
    // of them can be over 1 ms (4.64 ms in all), so 0.26-0.78 ms is past the bound, under 1 %:
    // a lower rate queues less behind the stalls and may pass. The rule before ("1 % stalled
    // and one stall >= the bound") stopped the search after that rate and its retry.
    let guest = |r: f64| {
        let mut t = synthetic(0.0)(r).unwrap();
        (t.window_s, t.stalls, t.stalled_ns, t.max_stall_ns) = (0.04, 21, 4_640_000, 1_260_000);
        t.stalled_past_bound_ns = 260_000;
        Ok::<_, ()>(t)
    };
    let out = search_critical_rate(1_000_000.0, &p, guest).unwrap();
    assert!((out.trials[0].point.stalled_fraction() - 0.058).abs() < 1e-9);
    assert!((out.trials[0].point.stalled_past_bound_fraction() - 0.00325).abs() < 1e-9);
    assert_eq!(out.stop, SearchStop::TooFewRequests);
    assert!(out.trials.len() > 2, "{}", out.trials.len());
    // Stalls long enough that their parts past the bound fill 1 % (5.8 % in 1.26 ms stalls:
    // 46 of them, 0.26 ms each past it, 1.2 %) stop it after the rate and its retry.
    let out = search_critical_rate(1_000_000.0, &p, |r| {
        Ok::<_, ()>(stalled_by(r, 0.058, 1_260_000))
    })
    .unwrap();
    assert!((out.trials[0].point.stalled_past_bound_fraction() - 0.01196).abs() < 1e-6);
    assert_eq!(out.stop, SearchStop::Stalled);
    assert_eq!(out.trials.len(), 2);
}

#[test]
fn a_failing_rate_is_retried_and_a_pass_on_retry_counts() {
    let p = SearchParams {
        retry_failed: 1,
        ..params()
    };
    // Every first try of a rate is hit by a stall (p99 5 ms), its retry is clean.
    let mut calls = 0;
    let mut clean = synthetic(700_000.0);
    let out = search_critical_rate(1_000_000.0, &p, |r| {
        calls += 1;
        if calls % 2 == 1 {
            Ok(stalled_trial(r, 0.0))
        } else {
            clean(r)
        }
    })
    .unwrap();
    let c = out.critical_throughput_ops_per_s.unwrap();
    assert!(c <= 700_000.0 && c > 600_000.0, "{c}");
    assert_eq!(out.stop, SearchStop::Converged);
}

/// The fault of CI on 2026-12-04 in the 2-vCPU guest: the guest's clocksource changed to hpet
/// after the closed loop had served 1.73 M/s, and the open loop then served about 20 k/s
/// whatever it was asked. With the quick profile's search (4 trials, step 2, one retry of a
/// failing rate) it tried 432 k/s twice and 108 k/s twice (15.6 k/s achieved) and stopped with
/// "trial budget spent". An overloaded trial's achieved rate now bounds the next one, so the
/// third trial runs at 0.8 x what the service served, passes, and the rate is found.
#[test]
fn an_open_loop_far_slower_than_the_closed_loop_is_found_within_the_quick_budget() {
    let quick = SearchParams {
        p99_bound_ns: 1_000_000,
        start_fraction: 0.25,
        step_factor: 2.0,
        resolution: 0.25,
        max_trials: 4,
        min_achieved_fraction: 0.98,
        retry_failed: 1,
    };
    let capacity = 20_000.0;
    let mut inner = synthetic(capacity);
    let trial = |rate: f64| {
        inner(rate).map(|mut p| {
            p.achieved_rate_ops_per_s = rate.min(capacity);
            p.window_s = 0.04;
            p
        })
    };
    let out = search_critical_rate(1_730_000.0, &quick, trial).unwrap();
    let rates: Vec<f64> = out
        .trials
        .iter()
        .map(|t| t.point.requested_rate_ops_per_s)
        .collect();
    assert_eq!(rates[..3], [432_500.0, 432_500.0, 16_000.0], "{rates:?}");
    assert!(out.trials[2].passed);
    assert_eq!(out.critical_throughput_ops_per_s, Some(16_000.0));
    // Without the overload bound the third trial would have been 432 500 / 4 = 108 125/s.
    assert_eq!(out.trials.len(), 4);
}

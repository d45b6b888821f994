//! The latency accounting of the open-loop driver against a known answer, on a hand-moved
//! clock (exact, cannot flake): a known service time, a known stall, and the p50, p99, p999
//! and coordinated-omission correction they must give.

use std::sync::atomic::{AtomicU64, Ordering};

use hwsurvey_workloads::service::clock::{Clock, ManualClock};
use hwsurvey_workloads::service::histogram::LatencyRecorder;
use hwsurvey_workloads::service::open_loop::{run_worker, ArrivalSchedule, WorkerWindow};
use hwsurvey_workloads::service::search::{judge, FailedCriterion, RateTrial, SearchParams};

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

/// One worker, one request every 100 us from 0 (10_000/s).
const TEN_PER_MS: ArrivalSchedule = ArrivalSchedule {
    start_ns: 0,
    rate_ops_per_s: 10_000.0,
    workers: 1,
};

/// A worker's window from `measure_from_ns` to `end_ns`, judged against `latency_bound_ns`; it
/// gives up 50 ms behind.
fn window(measure_from_ns: u64, end_ns: u64, latency_bound_ns: u64) -> WorkerWindow {
    WorkerWindow {
        measure_from_ns,
        end_ns,
        max_lag_ns: 50 * MS,
        latency_bound_ns,
    }
}

/// Whether the histogram's `got` reports `exact` within its error bound (10^-3, never below).
fn near(got: u64, exact: u64) -> bool {
    got >= exact && (got - exact) as f64 <= exact as f64 * 1e-3
}

/// 1000 requests at 10_000/s (one every 100 us), 10 us of service each; request 100 takes
/// 5 ms (the stall). Returns the tally and the latencies timed from the actual send.
fn run() -> (
    hwsurvey_workloads::service::open_loop::WorkerTally,
    LatencyRecorder,
) {
    let clock = ManualClock::at(0);
    let window = window(0, 100 * MS, 0);
    let mut from_send = LatencyRecorder::new();
    let mut op = |n: u64| {
        let d = if n == 100 { 5 * MS } else { 10 * US };
        let t0 = clock.now_ns();
        clock.advance_ns(d);
        from_send.record_ns(clock.now_ns() - t0);
        n
    };
    let tally = run_worker(&clock, &TEN_PER_MS, 0, &window, &mut op);
    (tally, from_send)
}

#[test]
fn known_service_time_and_stall_give_the_known_quantiles() {
    let (tally, _) = run();
    assert_eq!((tally.issued, tally.abandoned), (1000, 0));
    // Request 100 + j (j >= 1) is due at 10 ms + j x 100 us; the backlog behind the stall
    // drains one request per 10 us from 15 ms, so it completes at 15 ms + j x 10 us: latency
    // 5 ms - j x 90 us while that is above 10 us, i.e. for j = 1..=55. So the sorted latencies
    // are 944 x 10 us, then 5 ms - j x 90 us for j = 55 down to 1, then 5 ms (request 100).
    let s = tally.latency.summary().unwrap();
    assert_eq!(s.samples, 1000);
    // p50: rank 500 -> 10 us.
    assert!(near(s.p50_ns, 10 * US), "p50 {}", s.p50_ns);
    // p99: rank 990 = 944 + 46 -> j = 56 - 46 = 10 -> 5 ms - 900 us = 4.1 ms.
    assert!(near(s.p99_ns, 4_100 * US), "p99 {}", s.p99_ns);
    // p999: rank 999 -> j = 1 -> 4.91 ms; max: the stalled request itself, 5 ms.
    assert!(near(s.p999_ns, 4_910 * US), "p999 {}", s.p999_ns);
    assert!(near(s.max_ns, 5 * MS), "max {}", s.max_ns);
    // The stall is seen as one (the 5 ms request); the worst send lag is request 101's.
    assert_eq!((tally.stalls, tally.stalled_ns), (1, 5 * MS));
    assert_eq!(tally.max_send_lag_ns, 4_900 * US);
}

#[test]
fn coordinated_omission_correction_is_the_queueing_behind_the_stall() {
    let (tally, from_send) = run();
    // Timed from the actual send (what a closed-loop client measures) only one request is
    // slow: p99 is the plain service time.
    let naive = from_send.summary().unwrap();
    assert!(
        near(naive.p50_ns, 10 * US) && near(naive.p99_ns, 10 * US),
        "{naive:?}"
    );
    assert!(near(naive.max_ns, 5 * MS));
    // Timed from the intended send, the 55 requests queued behind it carry their wait: the
    // correction adds sum_{j=1..55} (5 ms - j x 90 us - 10 us) = 55 x 4.99 ms - 90 us x 1540.
    let corrected = tally.latency.summary().unwrap();
    let added_ns = (corrected.mean_ns - naive.mean_ns) * 1000.0;
    let exact_ns = 55.0 * 4_990_000.0 - 90_000.0 * 1540.0;
    assert!(
        (added_ns / exact_ns - 1.0).abs() < 2e-3,
        "added {added_ns} ns vs {exact_ns} ns"
    );
    assert_eq!(tally.latency.count_at_or_above_ns(MS), 45);
    assert_eq!(from_send.count_at_or_above_ns(MS), 1);
}

#[test]
fn the_stall_fails_a_1ms_bound_by_p99_and_names_it() {
    let (tally, _) = run();
    let point = hwsurvey_workloads::service::open_loop::OpenLoopPoint {
        requested_rate_ops_per_s: 10_000.0,
        workers: 1,
        window_s: 0.1,
        issued_ops: tally.issued,
        abandoned_ops: tally.abandoned,
        achieved_rate_ops_per_s: 10_000.0,
        max_send_lag_ns: tally.max_send_lag_ns,
        stalls: tally.stalls,
        stalled_ns: tally.stalled_ns,
        max_stall_ns: tally.max_stall_ns,
        stalled_past_bound_ns: tally.stalled_past_bound_ns,
        latency: tally.latency.summary(),
    };
    let params = SearchParams {
        p99_bound_ns: MS,
        start_fraction: 0.25,
        step_factor: 1.5,
        resolution: 0.05,
        max_trials: 6,
        min_achieved_fraction: 0.98,
        retry_failed: 0,
    };
    let failed = judge(&point, &params);
    assert_eq!(failed.len(), 1);
    let FailedCriterion::P99 { p99_ns, bound_ns } = failed[0] else {
        panic!("{failed:?}");
    };
    assert!(near(p99_ns, 4_100 * US) && bound_ns == MS);
    // 5 ms of stall in a 100 ms window: 5 %.
    assert!((point.stalled_fraction() - 0.05).abs() < 1e-12);
    // A 5 ms bound passes.
    let t = RateTrial::judged(
        point,
        &SearchParams {
            p99_bound_ns: 5 * MS,
            ..params
        },
    );
    assert!(t.passed && t.failed.is_empty(), "{}", t.describe());
}

/// A [`ManualClock`] whose `read`-th reading (1-based) first moves it on by `stall_ns`: the
/// thread off its CPU just before it reads the clock.
struct StallingClock {
    inner: ManualClock,
    reads: AtomicU64,
    stalls: Vec<(u64, u64)>,
}

impl Clock for StallingClock {
    fn now_ns(&self) -> u64 {
        let n = self.reads.fetch_add(1, Ordering::SeqCst) + 1;
        for &(read, stall_ns) in &self.stalls {
            if read == n {
                self.inner.advance_ns(stall_ns);
            }
        }
        self.inner.now_ns()
    }

    fn wait_until_ns(&self, t_ns: u64) {
        self.inner.wait_until_ns(t_ns);
    }
}

/// Stalls just before a send are seen whether the worker was waiting for the request's time
/// (late past the intended time) or behind its schedule (late past the previous completion),
/// and their parts past the latency bound are summed. Before 2026-12-03 only stalls inside a
/// wait's spin or a request were seen: neither of these two.
#[test]
fn stalls_before_a_send_are_seen_ahead_of_and_behind_the_schedule() {
    // Readings per request: the send, then the completion. Request k's send is reading
    // 2k + 1. Request 100 takes 5 ms; request 101 (due at 10.1 ms, behind: it could go at
    // 15 ms, when request 100 completes) is sent 2 ms later; request 500 (due at 50 ms, long after the backlog has
    // drained) is sent 3 ms late.
    let clock = StallingClock {
        inner: ManualClock::at(0),
        reads: AtomicU64::new(0),
        stalls: vec![(2 * 101 + 1, 2 * MS), (2 * 500 + 1, 3 * MS)],
    };
    let window = window(0, 100 * MS, MS);
    let mut op = |n: u64| {
        clock
            .inner
            .advance_ns(if n == 100 { 5 * MS } else { 10 * US });
        n
    };
    let tally = run_worker(&clock, &TEN_PER_MS, 0, &window, &mut op);
    assert_eq!((tally.issued, tally.abandoned), (1000, 0));
    // Three stalls: the 5 ms request, 2 ms behind the schedule, 3 ms ahead of it.
    assert_eq!(tally.stalls, 3);
    assert_eq!(tally.stalled_ns, 10 * MS);
    assert_eq!(tally.max_stall_ns, 5 * MS);
    // Past the 1 ms bound: 4 + 1 + 2 ms.
    assert_eq!(tally.stalled_past_bound_ns, 7 * MS);
    // Request 101: due at 10.1 ms, sent at 15 + 2 ms.
    assert_eq!(tally.max_send_lag_ns, 6_900 * US);
    // It completes at 17.01 ms: 6.91 ms after it was due, the slowest.
    assert!(near(tally.latency.summary().unwrap().max_ns, 6_910 * US));
}

/// A stall that began in the warm-up and ends inside the measured window counts by its part in
/// the window: the measured requests due in it are charged the rest of it. Before 2026-12-04 a
/// stall was counted only for a measured request, so one that held up the window's first
/// requests from the warm-up was not seen at all, while their latency was.
#[test]
fn a_stall_reaching_from_the_warm_up_into_the_window_counts_by_its_part_in_it() {
    // One request every 100 us, 10 us of service; the window opens at 10 ms. Request 95, a
    // warm-up request due at 9.5 ms, is served for 4 ms: from 9.5 ms to 13.5 ms, 3.5 ms of it
    // inside the window.
    let clock = ManualClock::at(0);
    let window = window(10 * MS, 60 * MS, MS);
    let mut op = |n: u64| {
        clock.advance_ns(if n == 95 { 4 * MS } else { 10 * US });
        n
    };
    let tally = run_worker(&clock, &TEN_PER_MS, 0, &window, &mut op);
    assert_eq!((tally.issued, tally.abandoned), (500, 0));
    assert_eq!(tally.stalls, 1);
    // 10 ms to 13.5 ms
    assert_eq!(tally.stalled_ns, 3_500 * US);
    assert_eq!(tally.max_stall_ns, 3_500 * US);
    // requests due from 10 ms to 12.5 ms complete after 13.5 ms: past the 1 ms bound
    assert_eq!(tally.stalled_past_bound_ns, 2_500 * US);
    // request 100, due at 10 ms, is sent after the warm-up's 96..=99 at 13.54 ms, done at
    // 13.55 ms: the slowest measured request
    assert!(near(tally.latency.summary().unwrap().max_ns, 3_550 * US));
}

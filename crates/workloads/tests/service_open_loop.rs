//! The open-loop rate limiter: requests leave at the requested arrival rate, and each latency
//! is measured from the request's intended send time, so a stall is charged to every request
//! that queued behind it (no coordinated omission).
//!
//! Exact checks run on a hand-moved clock; the real-clock checks use bounds that a loaded
//! 2-CPU machine cannot break (a sleep is never shorter than asked; the arrival rate is the
//! least-squares slope of 10_000 send times, which one late wake-up barely moves).

use std::time::Duration;

use hwsurvey_workloads::service::clock::{Clock, ManualClock, MonotonicClock};
use hwsurvey_workloads::service::open_loop::{
    run_open_loop, run_worker, ArrivalSchedule, OpenLoopConfig, WorkerWindow,
};
use hwsurvey_workloads::service::ServiceError;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

/// Whether a histogram value `got` reports `exact` within the histogram's error bound (10^-3).
fn near(got: u64, exact: u64) -> bool {
    got >= exact && (got - exact) as f64 <= exact as f64 * 1e-3
}

#[test]
fn manual_clock_sends_exactly_on_schedule() {
    let clock = ManualClock::at(0);
    let schedule = ArrivalSchedule {
        start_ns: 1_000,
        rate_ops_per_s: 10_000.0,
        workers: 1,
    };
    let window = WorkerWindow {
        measure_from_ns: 1_000,
        end_ns: 1_000 + 1_000 * MS,
        max_lag_ns: 100 * MS,
        latency_bound_ns: 0,
    };
    let mut sends = Vec::new();
    let mut op = |n: u64| {
        sends.push((n, clock.now_ns()));
        clock.advance_ns(10 * US);
        n
    };
    let tally = run_worker(&clock, &schedule, 0, &window, &mut op);
    assert_eq!(tally.issued, 10_000);
    assert_eq!(tally.abandoned, 0);
    assert_eq!(tally.max_send_lag_ns, 0);
    for (k, &(n, t)) in sends.iter().enumerate() {
        assert_eq!(n, k as u64);
        assert_eq!(t, 1_000 + k as u64 * 100 * US);
    }
    let s = tally.latency.summary().unwrap();
    assert!(near(s.min_ns, 10 * US) && near(s.max_ns, 10 * US), "{s:?}");
}

#[test]
fn workers_share_the_schedule_round_robin() {
    let s = ArrivalSchedule {
        start_ns: 0,
        rate_ops_per_s: 1_000.0,
        workers: 4,
    };
    // Request n is due at n ms whichever worker sends it.
    assert_eq!(s.intended_ns(0, 0), 0);
    assert_eq!(s.intended_ns(3, 0), 3 * MS);
    assert_eq!(s.intended_ns(1, 2), 9 * MS);
}

#[test]
fn manual_clock_stall_is_charged_to_the_requests_queued_behind_it() {
    // 10_000 req/s (one every 100 us), service 10 us, request 100 stalls for 5 ms.
    let clock = ManualClock::at(0);
    let schedule = ArrivalSchedule {
        start_ns: 0,
        rate_ops_per_s: 10_000.0,
        workers: 1,
    };
    let window = WorkerWindow {
        measure_from_ns: 0,
        end_ns: 100 * MS,
        max_lag_ns: 50 * MS,
        latency_bound_ns: 0,
    };
    let mut service_ns = Vec::new();
    let mut op = |n: u64| {
        let d = if n == 100 { 5 * MS } else { 10 * US };
        clock.advance_ns(d);
        service_ns.push(d);
        0
    };
    let tally = run_worker(&clock, &schedule, 0, &window, &mut op);
    assert_eq!(tally.issued, 1000);
    // Request 100 + j (j >= 1) is due at 10 ms + j * 100 us and sent at 15 ms + (j - 1) * 10 us
    // while the backlog drains, so its latency is 5 ms - j * 90 us; 1 ms or more for j <= 44.
    // With request 100 itself (5 ms), 45 requests take >= 1 ms.
    assert_eq!(tally.latency.count_at_or_above_ns(MS), 45);
    assert!(near(tally.latency.summary().unwrap().max_ns, 5 * MS));
    // Timing from the actual send (the closed-loop way) sees a single slow request.
    let slow_by_send_time = service_ns.iter().filter(|&&d| d >= MS).count();
    assert_eq!(slow_by_send_time, 1);
    // The backlog drained: the worst send lag was request 101's, 4.9 ms.
    assert_eq!(tally.max_send_lag_ns, 4_900 * US);
}

#[test]
fn manual_clock_overload_abandons_instead_of_running_forever() {
    // 10_000 req/s offered, each takes 1 ms: the lag grows 0.9 ms per request.
    let clock = ManualClock::at(0);
    let schedule = ArrivalSchedule {
        start_ns: 0,
        rate_ops_per_s: 10_000.0,
        workers: 1,
    };
    let window = WorkerWindow {
        measure_from_ns: 0,
        end_ns: 100 * MS,
        max_lag_ns: 10 * MS,
        latency_bound_ns: 0,
    };
    let mut op = |_n: u64| {
        clock.advance_ns(MS);
        0
    };
    let tally = run_worker(&clock, &schedule, 0, &window, &mut op);
    // Request k is sent at k ms, lag k * 0.9 ms: the 12th (k = 12, lag 10.8 ms) is not sent.
    assert_eq!(tally.issued, 12);
    assert_eq!(tally.abandoned, 1000 - 12);
}

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`): a real, continuously advancing
/// clock that stands still while the thread is descheduled, so a busy machine cannot make the
/// client late. Waits spin (which advances it).
#[cfg(feature = "sys")]
struct ThreadCpuClock;

#[cfg(feature = "sys")]
impl Clock for ThreadCpuClock {
    fn now_ns(&self) -> u64 {
        use nix::time::{clock_gettime, ClockId};
        let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).unwrap();
        t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
    }
    fn wait_until_ns(&self, t_ns: u64) {
        while self.now_ns() < t_ns {
            std::hint::spin_loop();
        }
    }
}

/// Runs `count` tiny requests at `rate` on `clock`; returns (issued rate from the first due time
/// to the last actual send, largest lateness of a send behind its due time, ns).
fn issued_rate<C: Clock>(clock: &C, rate: f64, count: u64) -> (f64, u64) {
    let schedule = ArrivalSchedule {
        start_ns: clock.now_ns() + MS,
        rate_ops_per_s: rate,
        workers: 1,
    };
    let window = WorkerWindow {
        measure_from_ns: schedule.start_ns,
        end_ns: schedule.intended_ns(0, count),
        max_lag_ns: 10_000 * MS,
        latency_bound_ns: 0,
    };
    let mut sends = Vec::with_capacity(count as usize);
    let mut op = |n: u64| {
        sends.push(clock.now_ns());
        // A tiny service: a few dependent multiplies.
        (0..16).fold(n, |a, _| {
            a.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(7)
        })
    };
    let tally = run_worker(clock, &schedule, 0, &window, &mut op);
    assert_eq!(tally.issued, count);
    let max_late = sends
        .iter()
        .enumerate()
        .map(|(k, &t)| t - schedule.intended_ns(0, k as u64))
        .max()
        .unwrap_or(0);
    let span_s = (sends[sends.len() - 1] - schedule.start_ns) as f64 / 1e9;
    ((count - 1) as f64 / span_s, max_late)
}

/// 10_000 requests at 20_000/s on the thread's CPU-time clock: the issued rate is within 2%
/// of the requested one. (On the wall clock the same run is within 2% on an idle machine, but
/// a client descheduled for tens of ms on a loaded one - load 20 on 2 CPUs here - sends late,
/// which the open-loop driver then charges as latency; see the stall tests.)
#[cfg(feature = "sys")]
#[test]
fn arrival_rate_within_two_percent_on_a_real_clock() {
    let (rate, max_late) = issued_rate(&ThreadCpuClock, 20_000.0, 10_000);
    assert!(
        (rate / 20_000.0 - 1.0).abs() <= 0.02,
        "issued {rate:.1}/s vs 20000/s requested (largest lateness {max_late} ns)"
    );
    // Never early, so the rate cannot overshoot beyond the last send's rounding.
    assert!(rate <= 20_000.0 * 1.0001, "{rate}");
}

/// The wall clock never sends early, so its issued rate never exceeds the requested one.
#[test]
fn wall_clock_never_sends_early() {
    let (rate, _) = issued_rate(&MonotonicClock::new(), 20_000.0, 2_000);
    assert!(rate <= 20_000.0 * 1.0001, "{rate}");
}

#[test]
fn real_clock_open_loop_run_issues_every_request_of_the_window() {
    let clock = MonotonicClock::new();
    let op = |n: u64| n;
    let cfg = OpenLoopConfig {
        rate_ops_per_s: 10_000.0,
        workers: 2,
        warmup: Duration::from_millis(10),
        duration: Duration::from_millis(300),
        max_lag: Duration::from_secs(5),
        latency_bound_ns: 0,
    };
    let p = run_open_loop(&clock, &cfg, &op, &|_| {}).unwrap();
    assert_eq!(p.issued_ops, 3_000);
    assert_eq!(p.abandoned_ops, 0);
    assert_eq!(p.latency.unwrap().samples, 3_000);
    // Served rate never exceeds the requested one (the window only stretches).
    assert!(p.achieved_rate_ops_per_s <= 10_000.0 * 1.0001);
}

#[test]
fn real_clock_stall_latency_counts_from_intended_send_time() {
    // 5_000 req/s for 0.5 s (2_500 requests); request 1_000 sleeps 20 ms. The 50 requests due
    // in the first 10 ms of the stall complete after it ends, so each waits >= 10 ms: 2% of the
    // requests, which puts p99 at >= 10 ms. Timed from the actual send they would be fast.
    let clock = MonotonicClock::new();
    let op = |n: u64| {
        if n == 1_000 {
            std::thread::sleep(Duration::from_millis(20));
        }
        n
    };
    let cfg = OpenLoopConfig {
        rate_ops_per_s: 5_000.0,
        workers: 1,
        warmup: Duration::ZERO,
        duration: Duration::from_millis(500),
        max_lag: Duration::from_secs(5),
        latency_bound_ns: 0,
    };
    let p = run_open_loop(&clock, &cfg, &op, &|_| {}).unwrap();
    assert_eq!(p.issued_ops, 2_500);
    let l = p.latency.unwrap();
    assert!(l.max_ns >= 20 * MS, "max {} ns", l.max_ns);
    assert!(l.p99_ns >= 10 * MS, "p99 {} ns", l.p99_ns);
    assert!(p.max_send_lag_ns >= 19 * MS);
}

#[test]
fn bad_configs_are_refused() {
    let clock = MonotonicClock::new();
    let op = |n: u64| n;
    for (rate, workers, d) in [
        (0.0, 1, 10),
        (f64::NAN, 1, 10),
        (100.0, 0, 10),
        (100.0, 1, 0),
    ] {
        let cfg = OpenLoopConfig {
            rate_ops_per_s: rate,
            workers,
            warmup: Duration::ZERO,
            duration: Duration::from_millis(d),
            max_lag: Duration::from_secs(1),
            latency_bound_ns: 0,
        };
        assert!(matches!(
            run_open_loop(&clock, &cfg, &op, &|_| {}),
            Err(ServiceError::BadConfig(_))
        ));
    }
}

/// The schedule starts after every worker has started and run `pin`: a worker whose start took
/// 30 ms (here its `pin` moves the clock on by that much) sends its first request on time. On
/// 2026-12-04 the schedule was fixed before the threads were spawned, and a slow start in a
/// busy guest was charged to the first requests as latency (p99 3.9 ms, no stall counted).
#[test]
fn the_schedule_starts_after_every_worker_is_ready() {
    let clock = ManualClock::at(0);
    let op = |_n: u64| {
        clock.advance_ns(10 * US);
        0
    };
    let cfg = OpenLoopConfig {
        rate_ops_per_s: 10_000.0,
        workers: 1,
        warmup: Duration::ZERO,
        duration: Duration::from_millis(10),
        max_lag: Duration::from_secs(1),
        latency_bound_ns: MS,
    };
    let pin = |_w: usize| clock.advance_ns(30 * MS);
    let p = run_open_loop(&clock, &cfg, &op, &pin).unwrap();
    assert_eq!((p.issued_ops, p.abandoned_ops), (100, 0));
    assert_eq!(p.max_send_lag_ns, 0);
    assert_eq!(p.stalls, 0);
    let l = p.latency.unwrap();
    assert!(near(l.max_ns, 10 * US), "{l:?}");
}

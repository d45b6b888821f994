//! Open-loop (rate-limited) driver: requests arrive on a fixed schedule whatever the service
//! does, and each latency is measured from the request's *intended* send time, so a stall shows
//! up as queueing delay in every request that should have been sent during it. A closed-loop
//! client that waits for each reply before timing the next one hides exactly that delay
//! ("coordinated omission", Gil Tene, "How NOT to Measure Latency", 2013; wrk2 does the same).
//!
//! The schedule is absolute (request `n` is due at `start + n / rate`), so waiting late never
//! accumulates into a lower rate: a worker that falls behind sends its overdue requests at once.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::clock::Clock;
use super::histogram::{LatencyRecorder, LatencySummary};
use super::ServiceError;

/// Fixed-rate arrivals shared round-robin by `workers` workers: request `n` (global) is due at
/// `start_ns + n * 1e9 / rate_ops_per_s`; worker `w` sends requests `w, w + workers, ...`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArrivalSchedule {
    /// Due time of request 0 (ns on the driver's clock).
    pub start_ns: u64,
    /// Requested arrival rate over all workers (requests per second, > 0).
    pub rate_ops_per_s: f64,
    /// Number of workers sharing the schedule (>= 1).
    pub workers: usize,
}

impl ArrivalSchedule {
    /// Global number of the `k`-th request of `worker`.
    #[inline]
    pub fn request_number(&self, worker: usize, k: u64) -> u64 {
        k * self.workers as u64 + worker as u64
    }

    /// Intended send time (ns) of the `k`-th request of `worker`.
    #[inline]
    pub fn intended_ns(&self, worker: usize, k: u64) -> u64 {
        let n = self.request_number(worker, k) as f64;
        self.start_ns + (n * 1e9 / self.rate_ops_per_s) as u64
    }
}

/// Window and overload limit of one worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerWindow {
    /// Requests due before this instant are warm-up: sent, not recorded.
    pub measure_from_ns: u64,
    /// Requests due at or after this instant are not sent.
    pub end_ns: u64,
    /// A worker whose send lag (actual minus intended send time) exceeds this stops and counts
    /// the requests it did not send as abandoned: the rate is beyond what it can serve.
    pub max_lag_ns: u64,
    /// The latency bound the run is judged against (ns; 0 = none): the part of each stall
    /// beyond it is summed into [`WorkerTally::stalled_past_bound_ns`].
    pub latency_bound_ns: u64,
}

/// A gap in a worker's clock readings (while it waits to send), a send later than it could
/// have been (after the intended time and after the previous completion), or a single request
/// longer than this counts as a stall: 50 us is two orders of magnitude above a point select
/// and far below a scheduler time slice, so what it catches is the thread being off its CPU.
pub const STALL_NS: u64 = 50_000;

/// What one worker did in the measured window.
#[derive(Debug, Clone, Default)]
pub struct WorkerTally {
    /// Requests due in the window and sent.
    pub issued: u64,
    /// Requests due in the window and never sent (overload; see [`WorkerWindow::max_lag_ns`]).
    pub abandoned: u64,
    /// Latest completion of a measured request (ns).
    pub last_completion_ns: Option<u64>,
    /// Largest send lag of a measured request (ns).
    pub max_send_lag_ns: u64,
    /// Stalls (see [`STALL_NS`]) that end in the measured window (one that began in the
    /// warm-up counts by its part in the window).
    pub stalls: u64,
    /// Their total length in the window (ns).
    pub stalled_ns: u64,
    /// The longest, in the window (ns).
    pub max_stall_ns: u64,
    /// Their length past [`WorkerWindow::latency_bound_ns`], summed (ns; 0 without a bound).
    pub stalled_past_bound_ns: u64,
    /// Latency from intended send time to completion, per measured request.
    pub latency: LatencyRecorder,
    /// Fold of the operation results (keeps the work from being optimised away).
    pub sink: u64,
}

impl WorkerTally {
    /// Counts a stall of `stall_ns` ending at `end_ns` when it is longer than [`STALL_NS`] and
    /// ends inside the measured window, by its part inside the window (from
    /// [`WorkerWindow::measure_from_ns`] on): a stall that began in the warm-up is charged to
    /// the measured requests due after the window opened, not to the warm-up's. Its part past
    /// the bound is the time from that start until `latency_bound_ns` before its end: requests
    /// due then complete later than the bound.
    fn count_stall(&mut self, stall_ns: u64, end_ns: u64, window: &WorkerWindow) {
        if stall_ns <= STALL_NS || end_ns <= window.measure_from_ns {
            return;
        }
        let from = end_ns.saturating_sub(stall_ns).max(window.measure_from_ns);
        let inside = end_ns - from;
        self.stalls += 1;
        self.stalled_ns += inside;
        self.max_stall_ns = self.max_stall_ns.max(inside);
        if window.latency_bound_ns > 0 {
            self.stalled_past_bound_ns += end_ns
                .saturating_sub(window.latency_bound_ns)
                .saturating_sub(from);
        }
    }
}

/// Runs one worker's share of `schedule`; `op` gets the global request number and returns a
/// value folded into [`WorkerTally::sink`].
pub fn run_worker<C: Clock + ?Sized>(
    clock: &C,
    schedule: &ArrivalSchedule,
    worker: usize,
    window: &WorkerWindow,
    op: &mut dyn FnMut(u64) -> u64,
) -> WorkerTally {
    let mut tally = WorkerTally::default();
    let mut k = 0u64;
    // Completion of the previous request: a worker behind its schedule sends at once after
    // it, so a later send is time off its CPU that no wait of the clock saw.
    let mut prev_done = 0u64;
    loop {
        let intended = schedule.intended_ns(worker, k);
        if intended >= window.end_ns {
            break;
        }
        let gap = clock.wait_until_observed_ns(intended);
        let send = clock.now_ns();
        let lag = send.saturating_sub(intended);
        if lag > window.max_lag_ns {
            let mut j = k;
            loop {
                let t = schedule.intended_ns(worker, j);
                if t >= window.end_ns {
                    break;
                }
                if t >= window.measure_from_ns {
                    tally.abandoned += 1;
                }
                j += 1;
            }
            break;
        }
        let r = op(schedule.request_number(worker, k));
        let done = clock.now_ns();
        tally.sink = tally.sink.wrapping_add(r);
        if intended >= window.measure_from_ns {
            tally.issued += 1;
            tally.latency.record_ns(done.saturating_sub(intended));
            tally.max_send_lag_ns = tally.max_send_lag_ns.max(lag);
            tally.last_completion_ns = Some(done);
        }
        // Before the send: the longest gap seen while waiting, or the delay past the moment it
        // could have been sent (the two may be one stall: the larger counts). Counted also for
        // a warm-up request when the stall reaches into the window: the measured requests due
        // in it are charged the rest of it.
        let late = send.saturating_sub(intended.max(prev_done));
        tally.count_stall(gap.max(late), send, window);
        tally.count_stall(done.saturating_sub(send), done, window);
        prev_done = done;
        k += 1;
    }
    tally
}

/// Settings of one open-loop run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpenLoopConfig {
    /// Requested arrival rate (requests per second, > 0).
    pub rate_ops_per_s: f64,
    /// Worker threads sharing the arrivals (>= 1).
    pub workers: usize,
    /// Unrecorded lead-in.
    pub warmup: Duration,
    /// Measured window.
    pub duration: Duration,
    /// Send lag beyond which a worker gives up (see [`WorkerWindow::max_lag_ns`]).
    pub max_lag: Duration,
    /// The latency bound the run is judged against (ns; 0 = none), for
    /// [`OpenLoopPoint::stalled_past_bound_ns`].
    pub latency_bound_ns: u64,
}

/// Result of one open-loop run at a fixed requested rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopPoint {
    /// Requested arrival rate (requests per second).
    pub requested_rate_ops_per_s: f64,
    /// Worker threads.
    pub workers: usize,
    /// Length of the measured window (s).
    pub window_s: f64,
    /// Requests due in the window and served.
    pub issued_ops: u64,
    /// Requests due in the window and abandoned because a worker fell more than the lag limit
    /// behind (0 when the rate was sustainable).
    pub abandoned_ops: u64,
    /// Served requests per second: issued / (from window start to the later of window end and
    /// the last completion).
    pub achieved_rate_ops_per_s: f64,
    /// Largest lag of an actual send behind its intended time (ns).
    pub max_send_lag_ns: u64,
    /// Stalls of all workers in the window (see [`STALL_NS`]): a thread off its CPU when it
    /// should have been sending or serving (descheduled by other work, or its virtual CPU
    /// stolen by the host). Every request due during a stall is charged its length as latency.
    #[serde(default)]
    pub stalls: u64,
    /// Their total length (ns), summed over workers.
    #[serde(default)]
    pub stalled_ns: u64,
    /// The longest stall (ns).
    #[serde(default)]
    pub max_stall_ns: u64,
    /// Stalls' length past the latency bound of [`OpenLoopConfig::latency_bound_ns`], summed
    /// over stalls and workers (ns; 0 without a bound, and in files written before 2026-12-03).
    /// Requests due in that part of a stall finish later than the bound whatever the rate.
    #[serde(default)]
    pub stalled_past_bound_ns: u64,
    /// Latency from intended send time to completion (`None` when nothing was served).
    pub latency: Option<LatencySummary>,
}

impl OpenLoopPoint {
    /// Share of the workers' time in the window spent stalled (0..=1, summed stall time over
    /// workers x window).
    pub fn stalled_fraction(&self) -> f64 {
        self.share_of_workers_time(self.stalled_ns)
    }

    /// Share of the workers' time in the window within a stall and more than the latency bound
    /// after its start (0..=1, [`OpenLoopPoint::stalled_past_bound_ns`] over workers x
    /// window): with arrivals spread evenly, the share of requests that exceed the bound
    /// however low the rate, so p99 cannot meet the bound at any rate when it is >= 1 %.
    pub fn stalled_past_bound_fraction(&self) -> f64 {
        self.share_of_workers_time(self.stalled_past_bound_ns)
    }

    /// `ns` over workers x window, capped at 1 (0 for an empty window).
    fn share_of_workers_time(&self, ns: u64) -> f64 {
        let span_ns = self.window_s * 1e9 * self.workers.max(1) as f64;
        if span_ns > 0.0 {
            (ns as f64 / span_ns).min(1.0)
        } else {
            0.0
        }
    }
}

/// `start_at` before the coordinator has fixed the schedule's start.
const NOT_YET: u64 = 0;
/// `start_at` when a spawn failed: the started workers leave without sending.
const ABORTED: u64 = u64::MAX;

/// Counts a worker as ready when dropped (after `pin`, or while unwinding from it).
struct Arrival<'a>(&'a AtomicUsize);

impl Drop for Arrival<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

/// Spins until the coordinator stores the schedule's start (or [`ABORTED`]) in `start_at`.
fn wait_for_start(start_at: &AtomicU64) -> u64 {
    let mut spins = 0u32;
    loop {
        let v = start_at.load(Ordering::Acquire);
        if v != NOT_YET {
            return v;
        }
        spins = spins.wrapping_add(1);
        if spins & 1023 == 0 {
            // the coordinator may share this CPU: let it run
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Runs `op` open-loop at `cfg.rate_ops_per_s` over `cfg.workers` threads; `pin(w)` runs first
/// on worker `w`'s thread (pinning, or nothing), and the schedule starts once every worker has
/// run it.
///
/// Errors: [`ServiceError::BadConfig`] for a non-positive rate or zero workers,
/// [`ServiceError::Spawn`] when a thread cannot be started.
pub fn run_open_loop<C, F>(
    clock: &C,
    cfg: &OpenLoopConfig,
    op: &F,
    pin: &(dyn Fn(usize) + Sync),
) -> Result<OpenLoopPoint, ServiceError>
where
    C: Clock,
    F: Fn(u64) -> u64 + Sync,
{
    if !(cfg.rate_ops_per_s.is_finite() && cfg.rate_ops_per_s > 0.0)
        || cfg.workers == 0
        || cfg.duration.is_zero()
    {
        return Err(ServiceError::BadConfig(format!(
            "open loop needs a positive rate, >= 1 worker and a non-zero window, \
             got {} ops/s, {} workers, {:?}",
            cfg.rate_ops_per_s, cfg.workers, cfg.duration
        )));
    }
    // The schedule starts once every worker has started and run `pin` (moving a thread to
    // another CPU can take milliseconds on a busy machine): a schedule fixed before the
    // threads were spawned charged a slow start to the first requests as latency, which the
    // stall count, blind before a worker's first request, never saw (measured 2026-12-04 in
    // the 2-vCPU guest on a busy host: p99 3.9 ms with no stall over 0.54 ms). The workers
    // spin at the start (they number at most the usable CPUs, each on its own), so they see
    // it at once; the lead covers the reading of it. Not `hwsurvey_engine::gate::StartGate`:
    // its waiters are parked, and a woken thread on a busy host may wait milliseconds for its
    // CPU, which is the lateness this start exists to keep out of the latencies.
    let lead_ns = 1_000_000 + 100_000 * cfg.workers as u64;
    let ready = AtomicUsize::new(0);
    let start_at = AtomicU64::new(NOT_YET);
    let tallies: Mutex<Vec<WorkerTally>> = Mutex::new(Vec::with_capacity(cfg.workers));
    let warmup_ns = cfg.warmup.as_nanos() as u64;
    let duration_ns = cfg.duration.as_nanos() as u64;
    let window_from = |start_ns: u64| WorkerWindow {
        measure_from_ns: start_ns + warmup_ns,
        end_ns: start_ns + warmup_ns + duration_ns,
        max_lag_ns: cfg.max_lag.as_nanos() as u64,
        latency_bound_ns: cfg.latency_bound_ns,
    };
    let schedule_from = |start_ns: u64| ArrivalSchedule {
        start_ns,
        rate_ops_per_s: cfg.rate_ops_per_s,
        workers: cfg.workers,
    };
    let spawned: Result<u64, ServiceError> = std::thread::scope(|s| {
        for w in 0..cfg.workers {
            let (ready, start_at, tallies) = (&ready, &start_at, &tallies);
            let (window_from, schedule_from) = (&window_from, &schedule_from);
            let started = std::thread::Builder::new()
                .name(format!("open-loop-{w}"))
                .stack_size(256 * 1024)
                .spawn_scoped(s, move || {
                    // counted as ready also when `pin` panics, so the coordinator never waits
                    // for it (the panic is raised again when the scope ends)
                    let arrived = Arrival(ready);
                    pin(w);
                    drop(arrived);
                    let start_ns = wait_for_start(start_at);
                    if start_ns == ABORTED {
                        return;
                    }
                    let (schedule, window) = (schedule_from(start_ns), window_from(start_ns));
                    let mut f = |n: u64| op(n);
                    let t = run_worker(clock, &schedule, w, &window, &mut f);
                    if let Ok(mut v) = tallies.lock() {
                        v.push(t);
                    }
                });
            if let Err(e) = started {
                // the workers already started leave without sending
                start_at.store(ABORTED, Ordering::Release);
                return Err(ServiceError::Spawn {
                    threads: cfg.workers,
                    message: e.to_string(),
                });
            }
        }
        while ready.load(Ordering::Acquire) < cfg.workers {
            std::thread::sleep(Duration::from_micros(50));
        }
        let start_ns = clock.now_ns() + lead_ns;
        start_at.store(start_ns, Ordering::Release);
        Ok(start_ns)
    });
    let start_ns = spawned?;
    let (schedule, window) = (schedule_from(start_ns), window_from(start_ns));
    let tallies = tallies.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(combine(&schedule, &window, cfg, &tallies))
}

fn combine(
    schedule: &ArrivalSchedule,
    window: &WorkerWindow,
    cfg: &OpenLoopConfig,
    tallies: &[WorkerTally],
) -> OpenLoopPoint {
    let mut latency = LatencyRecorder::new();
    let (mut issued, mut abandoned, mut lag) = (0u64, 0u64, 0u64);
    let (mut stalls, mut stalled_ns, mut max_stall_ns) = (0u64, 0u64, 0u64);
    let mut stalled_past_bound_ns = 0u64;
    let mut last = window.end_ns;
    for t in tallies {
        latency.merge(&t.latency);
        issued += t.issued;
        abandoned += t.abandoned;
        lag = lag.max(t.max_send_lag_ns);
        stalls += t.stalls;
        stalled_ns += t.stalled_ns;
        max_stall_ns = max_stall_ns.max(t.max_stall_ns);
        stalled_past_bound_ns += t.stalled_past_bound_ns;
        last = last.max(t.last_completion_ns.unwrap_or(0));
    }
    let span_s = (last - window.measure_from_ns) as f64 / 1e9;
    OpenLoopPoint {
        requested_rate_ops_per_s: schedule.rate_ops_per_s,
        workers: cfg.workers,
        window_s: cfg.duration.as_secs_f64(),
        issued_ops: issued,
        abandoned_ops: abandoned,
        // span_s > 0: the window is non-zero (checked in run_open_loop).
        achieved_rate_ops_per_s: issued as f64 / span_s,
        max_send_lag_ns: lag,
        stalls,
        stalled_ns,
        max_stall_ns,
        stalled_past_bound_ns,
        latency: latency.summary(),
    }
}

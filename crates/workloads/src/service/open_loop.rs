//! Open-loop (rate-limited) driver: requests arrive on a fixed schedule whatever the service
//! does, and each latency is measured from the request's *intended* send time, so a stall shows
//! up as queueing delay in every request that should have been sent during it. A closed-loop
//! client that waits for each reply before timing the next one hides exactly that delay
//! ("coordinated omission", Gil Tene, "How NOT to Measure Latency", 2013; wrk2 does the same).
//!
//! The schedule is absolute (request `n` is due at `start + n / rate`), so waiting late never
//! accumulates into a lower rate: a worker that falls behind sends its overdue requests at once.

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
}

/// A gap in a worker's clock readings (while it waits to send) or a single request longer than
/// this counts as a stall: 50 us is two orders of magnitude above a point select and far
/// below a scheduler time slice, so what it catches is the thread being off its CPU.
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
    /// Stalls (see [`STALL_NS`]) in the measured window.
    pub stalls: u64,
    /// Their total length (ns).
    pub stalled_ns: u64,
    /// The longest (ns).
    pub max_stall_ns: u64,
    /// Latency from intended send time to completion, per measured request.
    pub latency: LatencyRecorder,
    /// Fold of the operation results (keeps the work from being optimised away).
    pub sink: u64,
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
            for stall in [gap, done.saturating_sub(send)] {
                if stall > STALL_NS {
                    tally.stalls += 1;
                    tally.stalled_ns += stall;
                    tally.max_stall_ns = tally.max_stall_ns.max(stall);
                }
            }
        }
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
    /// Latency from intended send time to completion (`None` when nothing was served).
    pub latency: Option<LatencySummary>,
}

impl OpenLoopPoint {
    /// Share of the workers' time in the window spent stalled (0..=1, summed stall time over
    /// workers x window).
    pub fn stalled_fraction(&self) -> f64 {
        let span_ns = self.window_s * 1e9 * self.workers.max(1) as f64;
        if span_ns > 0.0 {
            (self.stalled_ns as f64 / span_ns).min(1.0)
        } else {
            0.0
        }
    }
}

/// Runs `op` open-loop at `cfg.rate_ops_per_s` over `cfg.workers` threads; `pin(w)` runs first
/// on worker `w`'s thread (pinning, or nothing).
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
    // Leave time to start the threads before the first request is due.
    let lead_ns = 2_000_000 + 100_000 * cfg.workers as u64;
    let schedule = ArrivalSchedule {
        start_ns: clock.now_ns() + lead_ns,
        rate_ops_per_s: cfg.rate_ops_per_s,
        workers: cfg.workers,
    };
    let measure_from_ns = schedule.start_ns + cfg.warmup.as_nanos() as u64;
    let window = WorkerWindow {
        measure_from_ns,
        end_ns: measure_from_ns + cfg.duration.as_nanos() as u64,
        max_lag_ns: cfg.max_lag.as_nanos() as u64,
    };
    let tallies: Mutex<Vec<WorkerTally>> = Mutex::new(Vec::with_capacity(cfg.workers));
    let spawned: Result<(), ServiceError> = std::thread::scope(|s| {
        for w in 0..cfg.workers {
            let (schedule, window, tallies) = (&schedule, &window, &tallies);
            std::thread::Builder::new()
                .name(format!("open-loop-{w}"))
                .stack_size(256 * 1024)
                .spawn_scoped(s, move || {
                    pin(w);
                    let mut f = |n: u64| op(n);
                    let t = run_worker(clock, schedule, w, window, &mut f);
                    if let Ok(mut v) = tallies.lock() {
                        v.push(t);
                    }
                })
                .map_err(|e| ServiceError::Spawn {
                    threads: cfg.workers,
                    message: e.to_string(),
                })?;
        }
        Ok(())
    });
    spawned?;
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
    let mut last = window.end_ns;
    for t in tallies {
        latency.merge(&t.latency);
        issued += t.issued;
        abandoned += t.abandoned;
        lag = lag.max(t.max_send_lag_ns);
        stalls += t.stalls;
        stalled_ns += t.stalled_ns;
        max_stall_ns = max_stall_ns.max(t.max_stall_ns);
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
        latency: latency.summary(),
    }
}

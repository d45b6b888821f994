//! `sync.contention`: throughput of one shared mutex-protected counter and of one shared atomic
//! counter, vs threads, up to oversubscription (2x the online CPUs).
//!
//! Every thread increments the same counter as fast as it can for a fixed wall time; the sum of
//! the threads' counts must equal the counter's final value (a lost update would show), which
//! also keeps the work from being optimised away. Throughput is total increments divided by the
//! longest thread's wall time, in increments per second.
//!
//! The mutex is `std::sync::Mutex` (a futex on Linux: spinning briefly, then sleeping in the
//! kernel, so oversubscribed runs show lock-holder preemption); the atomic is `fetch_add` with
//! `Relaxed` ordering (`lock xadd` on x86, `ldadd`/LL-SC on aarch64, `casx` loops on sparc64).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use hwsurvey_engine::runner::StartGate;

/// Increments between two looks at the stop flag.
pub const BATCH: u64 = 64;

/// Which primitive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Primitive {
    /// Lock a shared `std::sync::Mutex<u64>`, increment, unlock.
    Mutex,
    /// `AtomicU64::fetch_add(1, Relaxed)` on one shared counter.
    AtomicIncrement,
}

impl Primitive {
    /// Stable name: `mutex`, `atomic_increment`.
    pub fn name(self) -> &'static str {
        match self {
            Primitive::Mutex => "mutex",
            Primitive::AtomicIncrement => "atomic_increment",
        }
    }
}

/// One contention sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contention {
    /// Threads that ran.
    pub threads: usize,
    /// Increments per thread.
    pub per_thread_increments: Vec<u64>,
    /// Sum of `per_thread_increments` (equal to the counter's final value).
    pub total_increments: u64,
    /// Longest thread wall time, nanoseconds.
    pub elapsed_ns: u64,
    /// total_increments / elapsed, increments per second.
    pub increments_per_s: f64,
}

/// Errors of a contention run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContentionError {
    /// Zero threads asked.
    #[error("contention needs at least one thread")]
    NoThreads,
    /// The counter does not equal the sum of the threads' counts.
    #[error("{primitive}: counter ended at {counter}, threads counted {counted}")]
    LostUpdate {
        /// Primitive name.
        primitive: &'static str,
        /// Final counter value.
        counter: u64,
        /// Sum of per-thread counts.
        counted: u64,
    },
    /// A worker panicked or could not be started.
    #[error("contention worker failed: {0}")]
    Thread(String),
    /// The run's cancel flag (SIGINT/SIGTERM/SIGHUP) was set before the window ended.
    #[error("cancelled")]
    Cancelled,
}

/// Runs `threads` workers on `primitive` for `duration`. `pin(i)` is called first in worker
/// `i` (the caller pins it to its CPU, wrapping around when oversubscribed). Timing starts when
/// all workers have started. [`run_cancellable`] without a cancel flag.
pub fn run<P>(
    primitive: Primitive,
    threads: usize,
    duration: Duration,
    pin: &P,
) -> Result<Contention, ContentionError>
where
    P: Fn(usize) + Sync,
{
    run_cancellable(primitive, threads, duration, pin, &AtomicBool::new(false))
}

/// Poll period of the spawning thread (while workers start, and in the timed window it looks
/// at `cancel` this often).
const POLL: Duration = Duration::from_millis(1);

/// [`run`] that honours `cancel` (the engine's interrupt flag, set by SIGINT/SIGTERM/SIGHUP):
/// spawning stops, workers waiting at the start gate are released and return, and a timed
/// window ends within about a millisecond; the result is then [`ContentionError::Cancelled`].
///
/// The start is a gate, not a `Barrier` for all threads: when thread `k` cannot be spawned
/// (the tester's 200000-thread point failed at 16367 threads), the `k` already running are
/// released and joined instead of waiting for ever for threads that never come.
///
/// After the stop (or the cancel), every spinning worker must be scheduled once more to see
/// it: about (threads / CPUs) x the scheduler's time slice, which the profile bounds through
/// `oversubscription_factor` <= 64 threads per CPU. Seen on 2 CPUs: 512 spinners stop within
/// the cancel test's bound (tests/sync_cancel.rs); 4096 atomic spinners (2048 per CPU, more
/// than any plan makes) took 26 s to drain a 0.2 s window.
pub fn run_cancellable<P>(
    primitive: Primitive,
    threads: usize,
    duration: Duration,
    pin: &P,
    cancel: &AtomicBool,
) -> Result<Contention, ContentionError>
where
    P: Fn(usize) + Sync,
{
    if threads == 0 {
        return Err(ContentionError::NoThreads);
    }
    let mutex = Mutex::new(0u64);
    let atomic = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let gate = StartGate::new();
    let ready = AtomicUsize::new(0);
    let (mutex, atomic, stop, gate, ready) = (&mutex, &atomic, &stop, &gate, &ready);
    let results: Vec<(u64, Duration)> = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(threads);
        let abort = |e: ContentionError| {
            gate.abort();
            stop.store(true, Ordering::SeqCst);
            Err(e)
        };
        for i in 0..threads {
            if cancel.load(Ordering::Relaxed) {
                return abort(ContentionError::Cancelled);
            }
            let h = std::thread::Builder::new()
                .name(format!("sync-{i}"))
                .stack_size(256 * 1024)
                .spawn_scoped(s, move || {
                    pin(i);
                    ready.fetch_add(1, Ordering::SeqCst);
                    if !gate.wait() {
                        return (0, Duration::ZERO);
                    }
                    let start = Instant::now();
                    let mut count = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        match primitive {
                            Primitive::Mutex => {
                                for _ in 0..BATCH {
                                    // A poisoned lock cannot happen (nothing panics while holding
                                    // it); recover the guard anyway.
                                    let mut g = mutex.lock().unwrap_or_else(|p| p.into_inner());
                                    *g += 1;
                                }
                            }
                            Primitive::AtomicIncrement => {
                                for _ in 0..BATCH {
                                    atomic.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        }
                        count += BATCH;
                    }
                    (count, start.elapsed())
                });
            match h {
                Ok(h) => handles.push(h),
                Err(e) => return abort(ContentionError::Thread(e.to_string())),
            }
        }
        // every worker pinned and waiting: open the gate together
        while ready.load(Ordering::SeqCst) < threads {
            if cancel.load(Ordering::Relaxed) {
                return abort(ContentionError::Cancelled);
            }
            std::thread::sleep(POLL);
        }
        gate.open();
        let end = Instant::now() + duration;
        loop {
            let now = Instant::now();
            if now >= end || cancel.load(Ordering::Relaxed) {
                break;
            }
            std::thread::sleep((end - now).min(POLL));
        }
        stop.store(true, Ordering::Relaxed);
        let joined: Result<Vec<(u64, Duration)>, ContentionError> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| ContentionError::Thread("worker panicked".into()))
            })
            .collect();
        if cancel.load(Ordering::Relaxed) {
            return Err(ContentionError::Cancelled);
        }
        joined
    })?;
    let per_thread_increments: Vec<u64> = results.iter().map(|r| r.0).collect();
    let total: u64 = per_thread_increments.iter().sum();
    let counter = match primitive {
        Primitive::Mutex => *mutex.lock().unwrap_or_else(|p| p.into_inner()),
        Primitive::AtomicIncrement => atomic.load(Ordering::Relaxed),
    };
    if counter != total {
        return Err(ContentionError::LostUpdate {
            primitive: primitive.name(),
            counter,
            counted: total,
        });
    }
    let elapsed = results.iter().map(|r| r.1).max().unwrap_or_default();
    let elapsed_ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX).max(1);
    Ok(Contention {
        threads,
        per_thread_increments,
        total_increments: total,
        elapsed_ns,
        increments_per_s: total as f64 * 1e9 / elapsed_ns as f64,
    })
}

// ---------------------------------------------------------------------------------------------
// The family: plan and run over the engine.

use hwsurvey_engine::affinity::{pin_current_thread, PinStatus};
use hwsurvey_engine::outcome::{Measurement, Metric, PointOutcome};
use hwsurvey_engine::plan::{FamilyPoints, PlanInput, Point};
use hwsurvey_engine::profile::{CheckedParams, Checker, ProfileError};
use hwsurvey_engine::runner::RunContext;
use hwsurvey_engine::Family;

/// The family.
pub struct SyncContention;

/// `[families."sync.contention".params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Primitives to run (non-empty, no duplicates).
    pub primitives: Vec<Primitive>,
    /// Include the oversubscription point (the run's factor x usable CPUs, at most
    /// `MAX_THREADS_PER_POINT` = 4096 threads).
    pub oversubscribe: bool,
}

impl CheckedParams for Params {
    /// The ranges in the field docs.
    fn check(&self, c: &Checker<'_>) -> Result<(), ProfileError> {
        c.list("primitives", &self.primitives)
    }
}

/// Parameters of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointParams {
    /// Primitive.
    pub primitive: Primitive,
    /// Threads (may exceed the usable CPUs: oversubscription).
    pub threads: usize,
}

impl Family for SyncContention {
    type Params = Params;
    type PointParams = PointParams;

    fn id(&self) -> &'static str {
        "sync.contention"
    }

    fn describe(&self) -> &'static str {
        "shared mutex and atomic-increment throughput vs threads, up to oversubscription"
    }

    fn plan(&self, p: Params, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        let mut out = FamilyPoints::default();
        for &primitive in &p.primitives {
            for rung in input.ladder(p.oversubscribe) {
                let params = PointParams {
                    primitive,
                    threads: rung.threads,
                };
                let mut point = input.rung_point(
                    format!("{}/{}", primitive.name(), rung.id_part()),
                    &rung,
                    &params,
                    0,
                );
                // each sample is one window of sample_min_s, not a calibrated repetition
                point.estimated_s = input.windowed_point_s() + input.fixed_work_s(0, rung.threads);
                out.points.push(point);
            }
        }
        Ok(out)
    }

    fn run_point(&self, params: PointParams, point: &Point, ctx: &RunContext<'_>) -> PointOutcome {
        let threads = params.threads.max(1);
        let pins: std::sync::Mutex<Vec<Option<PinStatus>>> =
            std::sync::Mutex::new(vec![None; threads]);
        let pin = |i: usize| {
            let Some(&cpu) = point.cpus.get(i).or(point.cpus.first()) else {
                return;
            };
            let status = pin_current_thread(cpu);
            if let Ok(mut g) = pins.lock() {
                if let Some(slot) = g.get_mut(i) {
                    *slot = Some(status);
                }
            }
        };
        let window = Duration::from_secs_f64(ctx.min_sample_s());
        // warm-up: one short window, not recorded
        if ctx.settings.warmup_s > 0.0 {
            let warm = Duration::from_secs_f64(ctx.settings.warmup_s);
            if let Err(e) =
                run_cancellable(params.primitive, threads, warm, &pin, ctx.cancel_flag())
            {
                if e == ContentionError::Cancelled {
                    return interrupted();
                }
                return PointOutcome::Failed {
                    error: e.to_string(),
                };
            }
        }
        let mut fairness: Vec<f64> = Vec::new();
        let samples = ctx.repeat(|| {
            run_cancellable(params.primitive, threads, window, &pin, ctx.cancel_flag()).map(|c| {
                let max = c.per_thread_increments.iter().copied().max().unwrap_or(0) as f64;
                let min = c.per_thread_increments.iter().copied().min().unwrap_or(0) as f64;
                fairness.push(if max > 0.0 { min / max } else { 0.0 });
                c.increments_per_s
            })
        });
        let samples = match samples {
            Ok(s) => s,
            Err(ContentionError::Cancelled) => return interrupted(),
            Err(e) => {
                return PointOutcome::Failed {
                    error: e.to_string(),
                }
            }
        };
        let pins: Vec<PinStatus> = pins
            .into_inner()
            .unwrap_or_default()
            .into_iter()
            .flatten()
            .collect();
        PointOutcome::Measured(
            Measurement {
                metrics: vec![Metric::throughput("ops_per_s", samples)],
                pins,
                ..Default::default()
            }
            .detail("primitive", params.primitive.name())
            .detail("window_s", window.as_secs_f64())
            .detail("fairness_min_over_max_per_sample", fairness),
        )
    }
}

/// The outcome of a point cut by SIGINT/SIGTERM/SIGHUP.
fn interrupted() -> PointOutcome {
    PointOutcome::Skipped {
        reason: format!(
            "interrupted ({})",
            hwsurvey_engine::signals::interrupt_cause()
        ),
    }
}

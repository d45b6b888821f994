//! [`RunContext`]: what a family gets to run a point: pinned workers with a barrier, first
//! touch of per-thread state by its owning thread, calibrated timed regions (>= the clock's
//! resolution x ticks and >= the profile's minimum sample time), warm-up, the bounded
//! adaptive repetition rule, and cancellation (Ctrl-C) and budget checks.

pub use crate::gate::StartGate;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use hwsurvey_model::CpuId;
use hwsurvey_stats::Adaptive;
use serde::{Deserialize, Serialize};

use crate::affinity::{pin_current_thread, PinStatus};
use crate::env::RunEnv;
use crate::plan_input::RunOptions;
use crate::profile::RunSettings;
use hwsurvey_result::plan::Point;

/// One worker thread as a family's closure sees it.
pub struct Worker<'a> {
    /// Worker index, 0..threads.
    pub index: usize,
    /// Number of workers.
    pub threads: usize,
    /// What pinning achieved.
    pub pin: PinStatus,
    /// Shared barrier of all workers (for families that synchronise themselves).
    pub barrier: &'a Barrier,
}

/// Timing of one parallel measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timed {
    /// Kernel repetitions per worker per sample (calibrated, checked against the first sample,
    /// then fixed: every sample has them).
    pub reps_per_sample: u64,
    /// Wall time of each timed sample, seconds (barrier to barrier, all workers).
    pub sample_s: Vec<f64>,
    /// Pinning of each worker.
    pub pins: Vec<PinStatus>,
    /// Whether sampling stopped early for Ctrl-C or the point's time allowance.
    pub cut_short: Option<String>,
}

impl Timed {
    /// Rate per sample: `work_per_rep x reps x threads / seconds` (e.g. bytes per second
    /// when `work_per_rep` is bytes moved by one repetition of one worker).
    pub fn rates(&self, work_per_rep: f64) -> Vec<f64> {
        let n = self.pins.len() as f64;
        self.sample_s
            .iter()
            .map(|s| work_per_rep * self.reps_per_sample as f64 * n / s)
            .collect()
    }
}

/// Errors of the runner helpers.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// A worker thread panicked or could not be spawned.
    #[error("worker thread failed: {0}")]
    Worker(String),
    /// The run was cancelled (Ctrl-C) before any sample was taken.
    #[error("cancelled")]
    Cancelled,
    /// The kernel took longer than the point's allowance even for one repetition.
    #[error("one repetition takes {0:.2} s, over the point's time allowance")]
    TooSlow(f64),
}

/// What a family's `run_point` gets.
pub struct RunContext<'a> {
    /// Engine rules of the profile.
    pub settings: &'a RunSettings,
    /// Live facts.
    pub env: &'a RunEnv,
    /// Command-line options for families.
    pub options: &'a RunOptions,
    cancel: &'a AtomicBool,
    deadline: Instant,
    tick_s: f64,
}

impl<'a> RunContext<'a> {
    /// A context whose points must end by `deadline`. `cancel` is set by the Ctrl-C handler.
    pub fn new(
        settings: &'a RunSettings,
        env: &'a RunEnv,
        options: &'a RunOptions,
        cancel: &'a AtomicBool,
        deadline: Instant,
    ) -> Self {
        RunContext {
            settings,
            env,
            options,
            cancel,
            deadline,
            tick_s: clock_tick_s(),
        }
    }

    /// Whether Ctrl-C was pressed: long loops should stop and return what they have.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The run's cancel flag (set by the SIGINT/SIGTERM/SIGHUP handler), for families whose
    /// own threads must look at it while they wait or spin.
    pub fn cancel_flag(&self) -> &AtomicBool {
        self.cancel
    }

    /// Time left of the point's allowance.
    pub fn time_left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// The measured resolution of `Instant`, seconds.
    pub fn clock_tick_s(&self) -> f64 {
        self.tick_s
    }

    /// Minimum length of one timed sample: max(profile's `sample_min_s`,
    /// `sample_min_clock_ticks` x clock resolution), seconds.
    pub fn min_sample_s(&self) -> f64 {
        self.settings
            .sample_min_s
            .max(self.settings.sample_min_clock_ticks as f64 * self.tick_s)
    }

    /// The adaptive repetition rule of the profile.
    pub fn adaptive(&self) -> Adaptive {
        Adaptive {
            min_samples: self.settings.samples_min,
            max_samples: self.settings.samples_max,
            target_cv: self.settings.target_cv,
        }
    }

    /// Spawns one scoped thread per CPU in `cpus`, pins each, and runs `f` in it; returns
    /// the results in worker order. `f` gets a [`Worker`] with a barrier shared by all.
    ///
    /// `f` starts only once every worker exists: when a spawn fails, or the run's cancel flag
    /// is set while spawning, the workers already started return without calling `f` (so none
    /// waits at the barrier for threads that never come) and the error is
    /// [`RunError::Worker`] or [`RunError::Cancelled`].
    pub fn run_pinned<R: Send>(
        &self,
        cpus: &[CpuId],
        f: impl Fn(&Worker<'_>) -> R + Sync,
    ) -> Result<Vec<R>, RunError> {
        let threads = cpus.len().max(1);
        let barrier = Barrier::new(threads);
        let gate = StartGate::new();
        let (f, barrier, gate) = (&f, &barrier, &gate);
        std::thread::scope(|s| {
            let mut handles = Vec::with_capacity(threads);
            let mut failed = None;
            for index in 0..threads {
                if self.cancelled() {
                    failed = Some(RunError::Cancelled);
                    break;
                }
                let cpu = cpus.get(index).copied().unwrap_or(0);
                let spawned = std::thread::Builder::new()
                    .name(format!("hwsurvey-w{index}"))
                    .spawn_scoped(s, move || {
                        let pin = pin_current_thread(cpu);
                        if !gate.wait() {
                            return None;
                        }
                        Some(f(&Worker {
                            index,
                            threads,
                            pin,
                            barrier,
                        }))
                    });
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        failed = Some(RunError::Worker(e.to_string()));
                        break;
                    }
                }
            }
            if let Some(e) = failed {
                gate.abort();
                return Err(e);
            }
            gate.open();
            let mut out = Vec::with_capacity(threads);
            for h in handles {
                match h.join() {
                    Ok(Some(r)) => out.push(r),
                    Ok(None) | Err(_) => return Err(RunError::Worker("a worker panicked".into())),
                }
            }
            Ok(out)
        })
    }

    /// The standard timed parallel measurement, for throughput kernels.
    ///
    /// One pinned worker per entry of `point.cpus`. Each worker calls `setup` in its own
    /// thread (so buffers are first touched by their owner), then all meet at a barrier.
    /// Calibration doubles the repetitions until a run lasts >= 1/4 of the minimum sample
    /// time (this is also the warm-up, extended to the profile's `warmup_s`), then fixes
    /// `reps` so a sample lasts >= [`RunContext::min_sample_s`]; a first sample shorter than
    /// that or over twice as long is dropped and `reps` fixed again ([`MAX_REFITS`]). Each sample: barrier, the
    /// leader reads the clock, every worker runs `kernel(state, reps)`, barrier, the leader
    /// reads the clock. Samples continue by the adaptive rule (on the sample times), stop at
    /// the cap, at Ctrl-C, or when the point's time allowance is spent (the profile's
    /// `samples_min` are always taken; only the adaptive extras yield to time).
    pub fn measure_parallel<S>(
        &self,
        point: &Point,
        setup: impl Fn(&Worker<'_>) -> S + Sync,
        kernel: impl Fn(&mut S, u64) + Sync,
    ) -> Result<Timed, RunError> {
        let reps = AtomicU64::new(1);
        let stop = AtomicBool::new(false);
        let log: Mutex<(Vec<f64>, u64, Option<String>)> = Mutex::new((Vec::new(), 1, None));
        let min_sample = self.min_sample_s();
        let adaptive = self.adaptive();
        let warmup = self.settings.warmup_s;
        let pins = self.run_pinned(&point.cpus, |w| {
            let mut state = setup(w);
            let leader = w.index == 0;
            // Leader-only bookkeeping.
            let started = Instant::now();
            let mut phase = Phase::Calibrate;
            let mut samples: Vec<f64> = Vec::new();
            let mut cut: Option<String> = None;
            let mut refits = 0usize;
            loop {
                w.barrier.wait();
                if stop.load(Ordering::Acquire) {
                    break;
                }
                let r = reps.load(Ordering::Acquire);
                let t0 = Instant::now();
                kernel(&mut state, r);
                w.barrier.wait();
                if !leader {
                    continue;
                }
                let elapsed = t0.elapsed().as_secs_f64();
                if self.cancelled() {
                    if let Ok(mut l) = log.lock() {
                        *l = (
                            std::mem::take(&mut samples),
                            r,
                            Some(format!("cancelled ({})", crate::signals::interrupt_cause())),
                        );
                    }
                    stop.store(true, Ordering::Release);
                    continue;
                }
                match phase {
                    Phase::Calibrate => {
                        if elapsed * 4.0 < min_sample && r < u64::MAX / 4 {
                            reps.store(r * 2, Ordering::Release);
                        } else {
                            // Long enough to extrapolate: fix reps for one sample.
                            let per_rep = elapsed / r as f64;
                            let want = ((min_sample * 1.05) / per_rep.max(1e-12)).ceil() as u64;
                            reps.store(want.max(1), Ordering::Release);
                            phase = if started.elapsed().as_secs_f64() >= warmup {
                                Phase::Measure
                            } else {
                                Phase::Warm
                            };
                        }
                        continue;
                    }
                    Phase::Warm => {
                        if started.elapsed().as_secs_f64() < warmup {
                            continue;
                        }
                        phase = Phase::Measure;
                        // This run was untimed warm-up; the next one is the first sample.
                        continue;
                    }
                    Phase::Measure => {}
                }
                // The repetitions were fixed from one calibration run. When the machine's pace
                // changed since (a neighbour took the CPU during calibration, or gave it back),
                // the first sample is far from the minimum length: it is then not kept, and the
                // repetitions are fixed again from it (at most MAX_REFITS times a point; every
                // kept sample has the same repetitions). On this 2-CPU VM next to a busy guest,
                // a 0.2 s minimum gave samples of 0.06 s.
                let off_pace = elapsed < min_sample || elapsed > 2.0 * min_sample * 1.05;
                if samples.is_empty() && off_pace && refits < MAX_REFITS {
                    refits += 1;
                    let per_rep = elapsed / r as f64;
                    let fitted = ((min_sample * 1.05) / per_rep.max(1e-12)).ceil() as u64;
                    reps.store(fitted.max(1), Ordering::Release);
                    continue;
                }
                samples.push(elapsed);
                let more = adaptive.wants_more(&samples);
                // the profile's minimum is always taken; only extra samples yield to time
                if samples.len() >= adaptive.min_samples.max(2)
                    && more
                    && self.time_left().as_secs_f64() < elapsed
                {
                    cut = Some("point time allowance spent".into());
                    stop.store(true, Ordering::Release);
                } else if !more {
                    stop.store(true, Ordering::Release);
                }
                if stop.load(Ordering::Acquire) {
                    if let Ok(mut l) = log.lock() {
                        *l = (std::mem::take(&mut samples), r, cut.take());
                    }
                }
            }
            w.pin.clone()
        })?;
        let (sample_s, reps_per_sample, cut_short) = log
            .into_inner()
            .map_err(|_| RunError::Worker("log poisoned".into()))?;
        if sample_s.is_empty() {
            return Err(RunError::Cancelled);
        }
        Ok(Timed {
            reps_per_sample,
            sample_s,
            pins,
            cut_short,
        })
    }

    /// Takes samples from `one` by the adaptive rule, for families that time themselves
    /// (latency chases, ping-pong). Stops at Ctrl-C, or when the allowance is spent once the
    /// profile's `samples_min` are taken. An error from `one` ends sampling and is returned.
    pub fn repeat<E>(&self, mut one: impl FnMut() -> Result<f64, E>) -> Result<Vec<f64>, E> {
        let rule = self.adaptive();
        let mut out = Vec::new();
        while rule.wants_more(&out) {
            let t0 = Instant::now();
            out.push(one()?);
            let took = t0.elapsed();
            let minimum = out.len() >= rule.min_samples.max(2);
            if self.cancelled() || (minimum && self.time_left() < took) {
                break;
            }
        }
        Ok(out)
    }
}

/// Times [`RunContext::measure_parallel`] fixes a point's repetitions again when its first
/// sample is shorter than the minimum or over twice its length (the pace changed after the
/// calibration run).
pub const MAX_REFITS: usize = 3;

enum Phase {
    Calibrate,
    Warm,
    Measure,
}

/// The smallest non-zero step of `Instant`, seconds (median of 32 tries).
pub fn clock_tick_s() -> f64 {
    let mut steps = Vec::with_capacity(32);
    for _ in 0..32 {
        let t0 = Instant::now();
        let mut t1 = Instant::now();
        let mut guard = 0u32;
        while t1 == t0 && guard < 1_000_000 {
            t1 = Instant::now();
            guard += 1;
        }
        steps.push((t1 - t0).as_secs_f64());
    }
    steps.sort_by(f64::total_cmp);
    steps.get(16).copied().unwrap_or(1e-6).max(1e-9)
}

/// Keeps the compiler from deleting a computation whose result is otherwise unused.
#[inline]
pub fn consume<T>(value: T) -> T {
    std::hint::black_box(value)
}

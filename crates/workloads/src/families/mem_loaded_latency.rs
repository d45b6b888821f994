//! `mem.loaded_latency`: dependent-load latency of one thread while other threads stream
//! memory bandwidth, i.e. the loaded-latency curve Intel Memory Latency Checker reports
//! (`mlc --loaded_latency`), on every architecture.
//!
//! One point = one load level ([`crate::service::loaded`]): `load_threads` streaming threads
//! (each reading or writing its own buffer of `load_buffer_bytes`, first touched by itself)
//! with an optional pause of `delay_ns_per_chunk` after each 4 KiB chunk (MLC's delay
//! injection), while the latency thread chases a single random cycle of cache lines (Sattolo's
//! algorithm) over the run's "memory" working set (>= 4 x LLC). The latency thread runs on the
//! point's first CPU and the streaming threads on the following ones (profile placement, pinned
//! with the engine's `sched_setaffinity` helper); levels go from idle (0 threads) through 1, 2,
//! 4, ... to all other usable CPUs at full speed, then all of them with each delay.
//!
//! Each sample is one window of `window_s`: metrics `latency_ns` (mean per dependent load,
//! headline) and `bandwidth_bytes_per_s` (bytes the streaming threads moved in that window,
//! counted as touched by the program: reads, or writes without write-allocate traffic; absent
//! for the idle point, where no thread streams and the metric does not apply). Details: load kind, threads, delay, chase and buffer sizes, pinning of every thread.
//!
//! For `compare` and plots (report): per result file and `params.load_kind`, plot `latency_ns`
//! (y) against `bandwidth_bytes_per_s` (x), one marker per point, the idle point (no
//! bandwidth metric) as the zero-load reference;
//! points are ordered by increasing load within each kind.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::families::mem_latency::{
    chase, lay_out, successors, ChaseOrder, CHASE_SEED, LINE_BYTES,
};
use crate::service::loaded::{
    plan_load_levels, run_loaded_point, LatencyProbe, LoadKind, LoadLevel, LoadedRun, Role,
    CHUNK_BYTES,
};
use hwsurvey_engine::affinity::{pin_current_thread, PinStatus};
use hwsurvey_engine::outcome::{Measurement, Metric, PointOutcome};
use hwsurvey_engine::pages::{PageBuffer, PageMode};
use hwsurvey_engine::plan::{FamilyPoints, PlanInput, Point};
use hwsurvey_engine::profile::{CheckedParams, Checker, ProfileError};
use hwsurvey_engine::runner::RunContext;
use hwsurvey_engine::Family;

/// The family.
pub struct MemLoadedLatency;

/// `[families."mem.loaded_latency".params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Kinds of streaming load, one curve each (non-empty, no duplicates).
    pub load_kinds: Vec<LoadKind>,
    /// Pauses per 4 KiB chunk applied at the largest thread count (ns): non-empty, strictly
    /// ascending, each 0..=1_000_000_000.
    pub delays_ns_per_chunk: Vec<u64>,
    /// Buffer of each streaming thread, bytes (reduced to fit the memory cap); a multiple of
    /// the 4 KiB chunk, 4096..=2^40.
    pub load_buffer_bytes: u64,
    /// Streaming time before each measured window (s); [0, 60].
    pub warmup_s: f64,
    /// One measured window (s); (0, 60].
    pub window_s: f64,
}

impl CheckedParams for Params {
    /// The ranges in the field docs.
    fn check(&self, c: &Checker<'_>) -> Result<(), ProfileError> {
        c.list("load_kinds", &self.load_kinds)?;
        c.int_list(
            "delays_ns_per_chunk",
            &self.delays_ns_per_chunk,
            0,
            1_000_000_000,
            "ns",
        )?;
        if self.delays_ns_per_chunk.windows(2).any(|w| w[0] >= w[1]) {
            return Err(c.error(
                "delays_ns_per_chunk",
                format!(
                    "expected ascending delays, got {:?}",
                    self.delays_ns_per_chunk
                ),
            ));
        }
        let chunk = CHUNK_BYTES as u64;
        c.int(
            "load_buffer_bytes",
            self.load_buffer_bytes,
            chunk,
            hwsurvey_engine::profile::MAX_SIZE_BYTES,
            "bytes",
        )?;
        if !self.load_buffer_bytes.is_multiple_of(chunk) {
            return Err(c.error(
                "load_buffer_bytes",
                format!(
                    "expected a multiple of the {chunk}-byte chunk, got {}",
                    self.load_buffer_bytes
                ),
            ));
        }
        c.float("warmup_s", self.warmup_s, 0.0, false, 60.0, "seconds")?;
        c.float("window_s", self.window_s, 0.0, true, 60.0, "seconds")
    }
}

/// One point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointParams {
    /// Streaming threads (0 = idle).
    pub load_threads: usize,
    /// Pause per chunk (ns).
    pub delay_ns_per_chunk: u64,
    /// Streaming kind.
    pub load_kind: LoadKind,
    /// Chased working set, bytes.
    pub chase_working_set_bytes: u64,
    /// Buffer per streaming thread, bytes.
    pub load_buffer_bytes: u64,
    /// Streaming lead-in per window (s).
    pub warmup_s: f64,
    /// Window (s).
    pub window_s: f64,
}

impl Family for MemLoadedLatency {
    type Params = Params;
    type PointParams = PointParams;

    fn id(&self) -> &'static str {
        "mem.loaded_latency"
    }

    fn describe(&self) -> &'static str {
        "Pointer-chase latency of one thread while 0..N threads stream memory: latency vs delivered bandwidth"
    }

    fn plan(&self, p: Params, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        let mut out = FamilyPoints::default();
        let cpus = input.env.cpu_count().max(1);
        let max_load = cpus.saturating_sub(1).max(1);
        let chase = input.memory_working_set_bytes();
        let cap = input.memory_cap_bytes();
        let per_thread = p
            .load_buffer_bytes
            .min(cap.saturating_sub(chase) / max_load as u64)
            / CHUNK_BYTES as u64
            * CHUNK_BYTES as u64;
        // each sample is a fixed window: the minimum samples and half a sample
        let samples = input.windowed_samples();
        // the chase's layout (first touch and a Sattolo step a line, at this machine's
        // measured speeds); the streaming buffers' first touch and the threads' start come
        // with each point's threads and memory
        let per_point = 0.02
            + input
                .speed()
                .chain_layout_s(chase / LINE_BYTES as u64, LINE_BYTES as u64)
            + samples * (p.warmup_s + p.window_s)
            + 0.05;
        let mut idle_done = false;
        for &kind in &p.load_kinds {
            for level in plan_load_levels(max_load, &p.delays_ns_per_chunk) {
                if level.load_threads == 0 && idle_done {
                    continue;
                }
                let params = PointParams {
                    load_threads: level.load_threads,
                    delay_ns_per_chunk: level.delay_ns_per_chunk,
                    load_kind: kind,
                    chase_working_set_bytes: chase,
                    load_buffer_bytes: per_thread,
                    warmup_s: p.warmup_s,
                    window_s: p.window_s,
                };
                let id = if level.load_threads == 0 {
                    idle_done = true;
                    "idle".to_string()
                } else {
                    format!(
                        "{}/load_threads={}/delay_ns={}",
                        kind.name(),
                        level.load_threads,
                        level.delay_ns_per_chunk
                    )
                };
                if level.load_threads > 0 && per_thread < CHUNK_BYTES as u64 {
                    out.skipped.push(input.skip(
                        id,
                        &params,
                        "no memory left for streaming buffers under the run's memory cap",
                    ));
                    continue;
                }
                let mem = chase + per_thread * level.load_threads as u64;
                let threads = level.load_threads + 1;
                let mut point = input.point(id, threads, &params, mem);
                // the buffers are touched once; the streaming threads start anew in each
                // run of the point (the samples plus the engine's calibration run)
                point.estimated_s = per_point
                    + input.fixed_work_s(per_thread * level.load_threads as u64, threads)
                    + samples * level.load_threads as f64 * input.speed().spawn_s;
                out.points.push(point);
            }
        }
        Ok(out)
    }

    fn run_point(&self, p: PointParams, point: &Point, ctx: &RunContext<'_>) -> PointOutcome {
        match run(point, ctx, &p) {
            Ok(m) => PointOutcome::Measured(m),
            Err(error) => PointOutcome::Failed { error },
        }
    }
}

struct Chase<'a> {
    words: &'a [usize],
    pos: usize,
}

impl LatencyProbe for Chase<'_> {
    fn chase_ns_per_load(&mut self, min_duration: Duration) -> f64 {
        const ROUND: u64 = 8192;
        let t0 = Instant::now();
        let mut steps = 0u64;
        loop {
            self.pos = chase(self.words, self.pos, ROUND);
            steps += ROUND;
            if t0.elapsed() >= min_duration {
                break;
            }
        }
        std::hint::black_box(self.pos);
        t0.elapsed().as_nanos() as f64 / steps as f64
    }
}

fn run(point: &Point, ctx: &RunContext<'_>, p: &PointParams) -> Result<Measurement, String> {
    let dur = |s: f64| Duration::try_from_secs_f64(s).map_err(|e| format!("{s} s: {e}"));
    let (warmup, window) = (dur(p.warmup_s)?, dur(p.window_s)?);
    let level = LoadLevel {
        load_threads: p.load_threads,
        delay_ns_per_chunk: p.delay_ns_per_chunk,
    };
    let lat_cpu = point.cpus.first().copied().unwrap_or(0);
    let load_cpus: Vec<_> = point.cpus.iter().skip(1).copied().collect();
    let pins: Mutex<Vec<(String, PinStatus)>> = Mutex::new(Vec::new());
    let results = ctx
        .run_pinned(
            &[lat_cpu],
            |w| -> Result<(Vec<f64>, Vec<f64>, f64), String> {
                if let Ok(mut v) = pins.lock() {
                    v.push(("latency".into(), w.pin.clone()));
                }
                let t0 = Instant::now();
                let mut chase_buf =
                    PageBuffer::allocate(PageMode::Base, p.chase_working_set_bytes as usize)
                        .map_err(|e| e.to_string())?;
                // mem.latency's full-random chase (Sattolo cycle over cache lines), same seed.
                let lines = p.chase_working_set_bytes as usize / LINE_BYTES;
                let next = successors(ChaseOrder::FullRandom, lines, CHASE_SEED);
                let start = lay_out(chase_buf.as_words_mut(), &next).map_err(|e| e.to_string())?;
                drop(next);
                let setup_s = t0.elapsed().as_secs_f64();
                let mut bufs = Vec::with_capacity(p.load_threads);
                for _ in 0..p.load_threads {
                    bufs.push(
                        PageBuffer::allocate(PageMode::Base, p.load_buffer_bytes as usize)
                            .map_err(|e| e.to_string())?,
                    );
                }
                let mut slices: Vec<&mut [usize]> =
                    bufs.iter_mut().map(|b| b.as_words_mut()).collect();
                let pin = |r: Role| {
                    if let Role::Load(i) = r {
                        let cpu = load_cpus.get(i).copied().unwrap_or(lat_cpu);
                        let s = pin_current_thread(cpu);
                        // Streaming threads restart each window: record each role once.
                        let role = format!("load-{i}");
                        if let Ok(mut v) = pins.lock() {
                            if !v.iter().any(|(r, _)| *r == role) {
                                v.push((role, s));
                            }
                        }
                    }
                };
                let mut probe = Chase {
                    words: chase_buf.as_words(),
                    pos: start,
                };
                let mut bandwidth = Vec::new();
                // the streaming threads touch their buffers in the first run only
                let mut touched = false;
                let latency = ctx.repeat(|| -> Result<f64, String> {
                    let pt = run_loaded_point(
                        &mut probe,
                        &mut slices,
                        level,
                        p.load_kind,
                        LoadedRun {
                            warmup,
                            duration: window,
                            first_touch: !touched,
                        },
                        &pin,
                    )
                    .map_err(|e| e.to_string())?;
                    touched = true;
                    bandwidth.push(pt.bandwidth_bytes_per_s);
                    Ok(pt.latency_ns)
                })?;
                Ok((latency, bandwidth, setup_s))
            },
        )
        .map_err(|e| e.to_string())?;
    let (latency, bandwidth, setup_s) = results
        .into_iter()
        .next()
        .ok_or_else(|| "latency thread returned nothing".to_string())??;
    let pins = pins.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut m = Measurement {
        metrics: point_metrics(p.load_threads, latency, bandwidth),
        pins: pins.iter().map(|(_, s)| s.clone()).collect(),
        details: Default::default(),
    };
    m = m
        .detail("load_kind", p.load_kind)
        .detail("load_threads", p.load_threads)
        .detail("delay_ns_per_chunk", p.delay_ns_per_chunk)
        .detail("chunk_bytes", CHUNK_BYTES)
        .detail("chase_working_set_bytes", p.chase_working_set_bytes)
        .detail("chase_line_bytes", LINE_BYTES)
        .detail("load_buffer_bytes", p.load_buffer_bytes)
        .detail("chase_setup_s", setup_s)
        .detail("chase_order", "full_random")
        .detail(
            "bandwidth",
            if p.load_threads == 0 {
                "not applicable: idle point, no streaming threads"
            } else {
                "bytes the streaming threads moved per window"
            },
        )
        .detail(
            "thread_roles",
            pins.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>(),
        );
    Ok(m)
}

/// The metrics of one point: `latency_ns` always; `bandwidth_bytes_per_s` only when
/// `load_threads > 0` (with no streaming thread the delivered bandwidth does not apply, and
/// absent is not zero).
fn point_metrics(load_threads: usize, latency: Vec<f64>, bandwidth: Vec<f64>) -> Vec<Metric> {
    let mut metrics = vec![Metric::latency("latency_ns", latency)];
    if load_threads > 0 {
        metrics.push(Metric::throughput("bandwidth_bytes_per_s", bandwidth));
    }
    metrics
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_point_has_no_bandwidth_metric() {
        let idle = point_metrics(0, vec![90.0, 91.0], vec![0.0, 0.0]);
        let names: Vec<&str> = idle.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["latency_ns"]);
        let loaded = point_metrics(3, vec![120.0, 125.0], vec![8.0e9, 8.1e9]);
        let names: Vec<&str> = loaded.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["latency_ns", "bandwidth_bytes_per_s"]);
        assert_eq!(loaded[1].samples, [8.0e9, 8.1e9]);
    }
}

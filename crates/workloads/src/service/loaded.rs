//! Loaded latency: the latency of one dependent-load chain while other threads stream memory
//! bandwidth through their own buffers, giving latency against delivered bandwidth (the
//! "loaded latency" curve of Intel Memory Latency Checker, here on every architecture). The load
//! is varied by the number of streaming threads and, at the largest count, by a pause after each
//! [`CHUNK_BYTES`] chunk (MLC's "delay injection"), so even a 2-CPU machine gets several points.
//!
//! The chase itself is behind [`LatencyProbe`], so the dependent-load kernel of `mem.latency`
//! is reused; pinning is a callback, so this module makes no system calls.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::ServiceError;
use hwsurvey_engine::gate::StartGate;

/// Bytes each streaming thread moves between two looks at the clock and the phase flag (4 KiB).
pub const CHUNK_BYTES: usize = 4096;
const CHUNK_WORDS: usize = CHUNK_BYTES / std::mem::size_of::<usize>();

/// What the streaming threads do to their buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadKind {
    /// Sum every word (reads only).
    Read,
    /// Store to every word (writes; with write-allocate caches the memory also reads the lines).
    Write,
}

impl LoadKind {
    /// The profile's name of the kind ("read", "write").
    pub fn name(self) -> &'static str {
        match self {
            LoadKind::Read => "read",
            LoadKind::Write => "write",
        }
    }
}

/// Reads every word of `buf`; returns their wrapping sum (four independent accumulators).
/// Words are machine words (`usize`), the unit page buffers hand out.
#[inline]
pub fn stream_read(buf: &[usize]) -> usize {
    let mut acc = [0usize; 4];
    let mut chunks = buf.chunks_exact(4);
    for c in &mut chunks {
        acc[0] = acc[0].wrapping_add(c[0]);
        acc[1] = acc[1].wrapping_add(c[1]);
        acc[2] = acc[2].wrapping_add(c[2]);
        acc[3] = acc[3].wrapping_add(c[3]);
    }
    let tail: usize = chunks
        .remainder()
        .iter()
        .fold(0usize, |a, &w| a.wrapping_add(w));
    acc.iter().fold(tail, |a, &w| a.wrapping_add(w))
}

/// Stores `value` to every word of `buf`.
#[inline]
pub fn stream_write(buf: &mut [usize], value: usize) {
    buf.fill(value);
}

/// One load level: how many streaming threads, and their pause per chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadLevel {
    /// Streaming threads (0 = idle machine, the unloaded latency).
    pub load_threads: usize,
    /// Pause after each [`CHUNK_BYTES`] chunk (ns; 0 = full speed).
    pub delay_ns_per_chunk: u64,
}

/// How long one run of a loaded point lasts, and whether it first touches the buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadedRun {
    /// Streaming before the chase starts.
    pub warmup: Duration,
    /// The chase's measured window.
    pub duration: Duration,
    /// Each streaming thread first writes its whole buffer (see [`run_loaded_point`]).
    pub first_touch: bool,
}

/// The load levels for up to `max_load_threads` streaming threads: idle; 1, 2, 4, ... and
/// `max_load_threads` at full speed; then `max_load_threads` with each of `delays_ns` (ascending
/// delay = descending bandwidth). Duplicates are removed, order is kept.
pub fn plan_load_levels(max_load_threads: usize, delays_ns: &[u64]) -> Vec<LoadLevel> {
    let mut levels = vec![LoadLevel {
        load_threads: 0,
        delay_ns_per_chunk: 0,
    }];
    let mut push = |l: LoadLevel| {
        if !levels.contains(&l) {
            levels.push(l);
        }
    };
    let mut n = 1;
    while n < max_load_threads {
        push(LoadLevel {
            load_threads: n,
            delay_ns_per_chunk: 0,
        });
        n *= 2;
    }
    if max_load_threads > 0 {
        for &d in std::iter::once(&0).chain(delays_ns.iter()) {
            push(LoadLevel {
                load_threads: max_load_threads,
                delay_ns_per_chunk: d,
            });
        }
    }
    levels
}

/// A dependent-load chase that reports its average latency per load.
pub trait LatencyProbe {
    /// Chases for at least `min_duration` and returns the mean latency of one load (ns).
    fn chase_ns_per_load(&mut self, min_duration: Duration) -> f64;
}

/// Roles a thread takes in a loaded-latency point (for the pinning callback).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The chasing thread (the caller's thread).
    Latency,
    /// Streaming thread number `i` (0-based).
    Load(usize),
}

/// One point of the loaded-latency curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedLatencyPoint {
    /// Streaming threads.
    pub load_threads: usize,
    /// Pause per chunk of the streaming threads (ns).
    pub delay_ns_per_chunk: u64,
    /// What the streaming threads did.
    pub load_kind: LoadKind,
    /// Mean latency of one dependent load of the chasing thread (ns).
    pub latency_ns: f64,
    /// Bandwidth the streaming threads delivered while the chase ran (bytes per second;
    /// 0 with no streaming thread, a measured zero, not an unknown).
    pub bandwidth_bytes_per_s: f64,
    /// Measured window (s).
    pub window_s: f64,
}

/// A per-thread byte counter on its own cache line(s), so streaming threads do not contend.
#[repr(align(128))]
#[derive(Default)]
struct Counter(AtomicU64);

const RUN: u8 = 1;
const MEASURE: u8 = 2;
const STOP: u8 = 3;

/// Measures one point: starts `level.load_threads` streaming threads over `load_buffers` (one
/// buffer each; extra buffers are unused), lets them run for `run.warmup`, then chases on the
/// caller's thread for `run.duration` while counting the bytes streamed. `pin(role)` runs first on
/// each thread (including the caller's, with [`Role::Latency`]). With `run.first_touch`, each
/// streaming thread first writes its whole buffer (its pages land on its NUMA node, the page
/// faults stay out of the window); the later samples of a point, on the same buffers and CPUs,
/// pass `false` (rewriting 15 x 36 MB per sample made a point in a 16-vCPU TCG guest take 25-35 s
/// for 1 s of measuring, issue 13).
///
/// Errors: [`ServiceError::BadConfig`] when fewer buffers than threads are given or a buffer is
/// smaller than one chunk; [`ServiceError::Spawn`] when a thread cannot be started.
pub fn run_loaded_point(
    probe: &mut dyn LatencyProbe,
    load_buffers: &mut [&mut [usize]],
    level: LoadLevel,
    kind: LoadKind,
    run: LoadedRun,
    pin: &(dyn Fn(Role) + Sync),
) -> Result<LoadedLatencyPoint, ServiceError> {
    if load_buffers.len() < level.load_threads {
        return Err(ServiceError::BadConfig(format!(
            "loaded latency: {} streaming threads need as many buffers, got {}",
            level.load_threads,
            load_buffers.len()
        )));
    }
    if let Some(b) = load_buffers.iter().find(|b| b.len() < CHUNK_WORDS) {
        return Err(ServiceError::BadConfig(format!(
            "loaded latency: a streaming buffer of {} bytes is below one chunk ({CHUNK_BYTES})",
            std::mem::size_of_val(&**b)
        )));
    }
    let phase = AtomicU8::new(RUN);
    let gate = StartGate::new();
    let counters: Vec<Counter> = (0..level.load_threads)
        .map(|_| Counter::default())
        .collect();
    pin(Role::Latency);
    std::thread::scope(|s| {
        let mut started = 0;
        for (i, buf) in load_buffers.iter_mut().take(level.load_threads).enumerate() {
            let (phase, gate) = (&phase, &gate);
            let bytes = &counters[i].0;
            let buf: &mut [usize] = buf;
            let spawned = std::thread::Builder::new()
                .name(format!("load-{i}"))
                .spawn_scoped(s, move || {
                    pin(Role::Load(i));
                    // First touch by the streaming thread itself (NUMA placement, page faults
                    // out of the measured window).
                    if run.first_touch {
                        stream_write(buf, 0);
                    }
                    // asleep until every streaming thread has touched its buffer
                    gate.arrive_and_wait();
                    stream_until_stopped(buf, kind, level.delay_ns_per_chunk, phase, bytes);
                });
            match spawned {
                Ok(_) => started += 1,
                Err(e) => {
                    phase.store(STOP, Ordering::SeqCst);
                    gate.open();
                    return Err(ServiceError::Spawn {
                        threads: level.load_threads,
                        message: e.to_string(),
                    });
                }
            }
        }
        gate.wait_for_arrivals(started);
        gate.open();
        std::thread::sleep(run.warmup);
        phase.store(MEASURE, Ordering::SeqCst);
        let t0 = Instant::now();
        let latency_ns = probe.chase_ns_per_load(run.duration);
        let window = t0.elapsed();
        // Read the byte counts before stopping so they cover the same window.
        let streamed: u64 = counters.iter().map(|c| c.0.load(Ordering::SeqCst)).sum();
        phase.store(STOP, Ordering::SeqCst);
        let window_s = window.as_secs_f64().max(1e-9);
        Ok(LoadedLatencyPoint {
            load_threads: level.load_threads,
            delay_ns_per_chunk: level.delay_ns_per_chunk,
            load_kind: kind,
            latency_ns,
            bandwidth_bytes_per_s: streamed as f64 / window_s,
            window_s,
        })
    })
}

fn stream_until_stopped(
    buf: &mut [usize],
    kind: LoadKind,
    delay_ns: u64,
    phase: &AtomicU8,
    bytes: &AtomicU64,
) {
    let mut sink = 0usize;
    let mut value = 1usize;
    let mut counted = 0u64;
    'outer: loop {
        for chunk in buf.chunks_exact_mut(CHUNK_WORDS) {
            let p = phase.load(Ordering::Relaxed);
            if p == STOP {
                break 'outer;
            }
            match kind {
                LoadKind::Read => sink = sink.wrapping_add(stream_read(chunk)),
                LoadKind::Write => stream_write(chunk, value),
            }
            if p == MEASURE {
                // The thread's own counter: a plain store per 4 KiB chunk, no contention.
                counted += CHUNK_BYTES as u64;
                bytes.store(counted, Ordering::Relaxed);
            }
            if delay_ns > 0 {
                let t = Instant::now();
                while (t.elapsed().as_nanos() as u64) < delay_ns {
                    std::hint::spin_loop();
                }
            }
        }
        value = value.wrapping_add(1);
        std::hint::black_box(&mut *buf);
    }
    std::hint::black_box(sink);
}

//! Closed-loop driver: `clients` threads each send a request, wait for it, and send the next at
//! once (the way a benchmark client with one connection per thread drives a database). Client
//! threads are deliberately *not* pinned: the scheduler's handling of more runnable threads
//! than CPUs (the oversubscribed range) is part of what is measured.

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::clock::Clock;
use super::histogram::{LatencyRecorder, LatencySummary};
use super::rng::SplitMix64;
use super::ServiceError;
use hwsurvey_engine::gate::StartGate;

const WARMUP: u8 = 0;
const MEASURE: u8 = 1;
const STOP: u8 = 2;

/// Result of one closed-loop run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClosedLoopPoint {
    /// Client threads.
    pub clients: usize,
    /// Measured window as timed by the coordinator (s).
    pub window_s: f64,
    /// Requests completed in the window.
    pub ops: u64,
    /// ops / window (requests per second).
    pub throughput_ops_per_s: f64,
    /// Per-request latency (send to completion) in the window; `None` when nothing completed.
    pub latency: Option<LatencySummary>,
}

/// Runs `op` in a closed loop on `clients` threads: unrecorded for `warmup`, then recorded for
/// `duration`. `op` receives a per-thread pseudo-random `u64` (SplitMix64 seeded by the thread
/// number) and returns a value that is folded away so the work stays.
///
/// Errors: [`ServiceError::BadConfig`] for zero clients or a zero window,
/// [`ServiceError::Spawn`] when a thread cannot be started (e.g. a thread limit).
pub fn run_closed_loop<C, F>(
    clock: &C,
    clients: usize,
    warmup: Duration,
    duration: Duration,
    op: &F,
) -> Result<ClosedLoopPoint, ServiceError>
where
    C: Clock,
    F: Fn(u64) -> u64 + Sync,
{
    if clients == 0 || duration.is_zero() {
        return Err(ServiceError::BadConfig(format!(
            "closed loop needs >= 1 client and a non-zero window, got {clients} clients, {duration:?}"
        )));
    }
    let phase = AtomicU8::new(WARMUP);
    let gate = StartGate::new();
    let mut window_ns = 0u64;
    // Each client hands its count and histogram back through its join handle: a mutex shared
    // by every client at the end was a convoy when clients outnumber the CPUs (a holder taken
    // off its CPU made all others wait for its next slice).
    let results = std::thread::scope(|s| -> Result<Vec<(u64, LatencyRecorder)>, ServiceError> {
        let mut handles = Vec::with_capacity(clients);
        let mut spawn_error = None;
        for c in 0..clients {
            let (phase, gate) = (&phase, &gate);
            let spawned = std::thread::Builder::new()
                .name(format!("client-{c}"))
                .stack_size(256 * 1024)
                .spawn_scoped(s, move || {
                    let mut rng = SplitMix64::new(0xc11e_0000 + c as u64);
                    let mut rec = LatencyRecorder::new();
                    let mut ops = 0u64;
                    let mut sink = 0u64;
                    // asleep until every client is up (see the gate's module doc)
                    gate.arrive_and_wait();
                    loop {
                        let p = phase.load(Ordering::Relaxed);
                        if p == STOP {
                            break;
                        }
                        let r = rng.next_u64();
                        let t0 = clock.now_ns();
                        sink = sink.wrapping_add(op(r));
                        let t1 = clock.now_ns();
                        if p == MEASURE {
                            rec.record_ns(t1.saturating_sub(t0));
                            ops += 1;
                        }
                    }
                    std::hint::black_box(sink);
                    (ops, rec)
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    spawn_error = Some(e.to_string());
                    break;
                }
            }
        }
        if let Some(message) = spawn_error {
            // Release the threads that did start, then report.
            phase.store(STOP, Ordering::SeqCst);
            gate.open();
            return Err(ServiceError::Spawn {
                threads: clients,
                message,
            });
        }
        gate.wait_for_arrivals(handles.len());
        gate.open();
        std::thread::sleep(warmup);
        phase.store(MEASURE, Ordering::Relaxed);
        let t0 = clock.now_ns();
        std::thread::sleep(duration);
        phase.store(STOP, Ordering::Relaxed);
        window_ns = clock.now_ns().saturating_sub(t0).max(1);
        // a client that panicked (it cannot: the op is the caller's) would be left out
        Ok(handles.into_iter().filter_map(|h| h.join().ok()).collect())
    })?;
    let mut latency = LatencyRecorder::new();
    let mut ops = 0u64;
    for (n, rec) in &results {
        ops += n;
        latency.merge(rec);
    }
    let window_s = window_ns as f64 / 1e9;
    Ok(ClosedLoopPoint {
        clients,
        window_s,
        ops,
        throughput_ops_per_s: ops as f64 / window_s,
        latency: latency.summary(),
    })
}

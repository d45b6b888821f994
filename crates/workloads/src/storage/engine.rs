//! The timed I/O loop: io_uring workers where the kernel allows it, pread/pwrite workers
//! otherwise. Every worker records each I/O's completion latency into its own HDR histogram
//! (merged at the end) and stops at the deadline or when the engine's stop flag is set.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::{AlignedBuf, IoEngine, IoPointResult, OffsetGen, Pattern, StorageError};

/// One target of a point: an open O_DIRECT file or device and the bytes to use.
#[derive(Debug, Clone, Copy)]
pub struct IoTarget<'a> {
    /// Path, for messages.
    pub path: &'a str,
    /// Opened read-write with O_DIRECT.
    pub file: &'a File,
    /// Bytes of it the point may touch, from offset 0.
    pub size_bytes: u64,
}

/// Which engine to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    /// io_uring if a ring can be set up, else pread/pwrite.
    Auto,
    /// pread/pwrite workers only.
    PreadPwrite,
}

/// One point's shape.
#[derive(Debug, Clone, Copy)]
pub struct IoSpec {
    /// Pattern.
    pub pattern: Pattern,
    /// Worker threads per target.
    pub threads_per_target: usize,
    /// I/Os in flight per worker thread.
    pub queue_depth: usize,
    /// Timed duration.
    pub duration: Duration,
    /// Engine.
    pub engine: EngineChoice,
}

struct WorkerOut {
    ios: u64,
    hist: Histogram<u64>,
}

fn new_hist() -> Histogram<u64> {
    // 1 ns .. 100 s at 3 significant digits; new_with_bounds only fails for bad bounds.
    Histogram::new_with_bounds(1, 100_000_000_000, 3)
        .unwrap_or_else(|_| Histogram::new(3).unwrap_or_else(|_| unreachable!()))
}

/// io_uring setup flags, in the order they are tried: each set is the previous one minus its
/// newest flag, down to none. `SINGLE_ISSUER | DEFER_TASKRUN` (Linux 6.1) run completion work
/// only when the submitting thread asks for events, and `COOP_TASKRUN` (5.19) signals it without
/// an interrupt: fio 3.33's io_uring engine sets all three, so the two engines run the same ring
/// kind when they are compared (benches/storage_peers.rs).
/// Every worker owns its ring and is its only submitter, as SINGLE_ISSUER requires.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const RING_FLAG_SETS: &[&[&str]] = &[
    &["coop_taskrun", "single_issuer", "defer_taskrun"],
    &["coop_taskrun"],
    &[],
];

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn build_ring(entries: u32, flags: &[&str]) -> std::io::Result<io_uring::IoUring> {
    let mut b = io_uring::IoUring::builder();
    for f in flags {
        match *f {
            "coop_taskrun" => b.setup_coop_taskrun(),
            "single_issuer" => b.setup_single_issuer(),
            "defer_taskrun" => b.setup_defer_taskrun(),
            _ => &mut b,
        };
    }
    b.build(entries)
}

/// Whether an io_uring can be set up here, and with which setup flags (the first of
/// [`RING_FLAG_SETS`] the kernel accepts, as names: `coop_taskrun`, `single_issuer`,
/// `defer_taskrun`); `Err` says why not (ENOSYS under qemu-user or old kernels, EPERM with
/// kernel.io_uring_disabled, not built for this architecture).
pub fn io_uring_usable() -> Result<Vec<String>, String> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        let mut last = String::new();
        for flags in RING_FLAG_SETS {
            match build_ring(2, flags) {
                Ok(_) => return Ok(flags.iter().map(|f| f.to_string()).collect()),
                Err(e) => last = format!("io_uring_setup failed: {e}"),
            }
        }
        Err(last)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Err(format!(
            "io_uring bindings not built for {}",
            std::env::consts::ARCH
        ))
    }
}

/// Process CPU time (user + system), ns, from getrusage(RUSAGE_SELF).
pub fn process_cpu_ns() -> Option<u64> {
    let r = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF).ok()?;
    let tv = |t: nix::sys::time::TimeVal| {
        (t.tv_sec() as u64).saturating_mul(1_000_000_000) + t.tv_usec() as u64 * 1000
    };
    Some(tv(r.user_time()) + tv(r.system_time()))
}

fn io_err(path: &str, op: &'static str, detail: String) -> StorageError {
    StorageError::Io {
        path: path.to_string(),
        op,
        detail,
    }
}

fn sync_worker(
    t: IoTarget<'_>,
    pattern: Pattern,
    mut offs: OffsetGen,
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<WorkerOut, StorageError> {
    let bs = pattern.block_bytes();
    let mut buf = AlignedBuf::new(bs);
    crate::raid6::fill_pseudo_random(buf.as_mut_slice(), offs.next_offset() | 1);
    super::sample::stamp(buf.as_mut_slice());
    let mut hist = new_hist();
    let mut ios = 0u64;
    loop {
        let off = offs.next_offset();
        let t0 = Instant::now();
        let r = if pattern.is_write() {
            t.file.write_at(buf.as_slice(), off)
        } else {
            t.file.read_at(buf.as_mut_slice(), off)
        };
        let t1 = Instant::now();
        match r {
            Ok(n) if n == bs => {}
            Ok(n) => {
                return Err(io_err(
                    t.path,
                    "short transfer",
                    format!("{n} of {bs} bytes at offset {off}"),
                ))
            }
            Err(e) => {
                return Err(io_err(
                    t.path,
                    if pattern.is_write() {
                        "pwrite"
                    } else {
                        "pread"
                    },
                    e.to_string(),
                ))
            }
        }
        let _ = hist.record((t1 - t0).as_nanos().max(1) as u64);
        ios += 1;
        if t1 >= deadline || stop.load(Ordering::Relaxed) {
            break;
        }
    }
    Ok(WorkerOut { ios, hist })
}

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn uring_worker(
    t: IoTarget<'_>,
    pattern: Pattern,
    qd: usize,
    setup_flags: &[String],
    mut offs: OffsetGen,
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<WorkerOut, StorageError> {
    use io_uring::{opcode, types, IoUring};
    /// `IORING_ENTER_GETEVENTS` (include/uapi/linux/io_uring.h).
    const IORING_ENTER_GETEVENTS: u32 = 1;
    use std::os::fd::AsRawFd;
    let bs = pattern.block_bytes();
    let qd = qd.max(1);
    let flag_names: Vec<&str> = setup_flags.iter().map(String::as_str).collect();
    let mut ring = build_ring(qd.next_power_of_two() as u32, &flag_names)
        .map_err(|e| io_err(t.path, "io_uring_setup", e.to_string()))?;
    let mut bufs: Vec<AlignedBuf> = (0..qd).map(|_| AlignedBuf::new(bs)).collect();
    for (i, b) in bufs.iter_mut().enumerate() {
        crate::raid6::fill_pseudo_random(b.as_mut_slice(), i as u64 + 11);
        super::sample::stamp(b.as_mut_slice());
    }
    let fd = types::Fd(t.file.as_raw_fd());
    let mut started = vec![Instant::now(); qd];
    let mut offsets = vec![0u64; qd];
    let mut hist = new_hist();
    let mut ios = 0u64;
    let mut inflight = 0usize;
    let mut failure: Option<StorageError> = None;
    let mut done = false;

    let mut submit_slot = |ring: &mut IoUring,
                           slot: usize,
                           bufs: &mut [AlignedBuf],
                           started: &mut [Instant],
                           offsets: &mut [u64]|
     -> bool {
        let off = offs.next_offset();
        offsets[slot] = off;
        let ptr = bufs[slot].as_mut_ptr();
        let entry = if pattern.is_write() {
            opcode::Write::new(fd, ptr, bs as u32).offset(off).build()
        } else {
            opcode::Read::new(fd, ptr, bs as u32).offset(off).build()
        }
        .user_data(slot as u64);
        started[slot] = Instant::now();
        // SAFETY: the buffer of `slot` stays alive and untouched until its completion is reaped
        // (the loop below drains every in-flight I/O before the buffers are dropped).
        unsafe { ring.submission().push(&entry).is_ok() }
    };
    for slot in 0..qd {
        if submit_slot(&mut ring, slot, &mut bufs, &mut started, &mut offsets) {
            inflight += 1;
        }
    }
    // As fio's io_uring engine does: submit what is queued and collect what has completed
    // without waiting (GETEVENTS with min_complete 0 also runs the deferred completion work of
    // DEFER_TASKRUN), and sleep for a completion only when none is there.
    let mut done_now: Vec<(usize, i32)> = Vec::with_capacity(qd);
    while inflight > 0 {
        let queued = ring.submission().len() as u32;
        // SAFETY: plain io_uring_enter on this ring with no argument structure.
        let entered = unsafe {
            ring.submitter()
                .enter::<()>(queued, 0, IORING_ENTER_GETEVENTS, None)
        };
        let reap = |ring: &mut IoUring, out: &mut Vec<(usize, i32)>| {
            out.clear();
            out.extend(
                ring.completion()
                    .map(|c| (c.user_data() as usize, c.result())),
            );
        };
        let waited = entered.and_then(|_| {
            reap(&mut ring, &mut done_now);
            if done_now.is_empty() {
                ring.submit_and_wait(1)?;
                reap(&mut ring, &mut done_now);
            }
            Ok(())
        });
        if let Err(e) = waited {
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            // Cannot reap reliably any more: leak the buffers rather than free memory the
            // kernel may still write.
            std::mem::forget(bufs);
            return Err(io_err(t.path, "io_uring_enter", e.to_string()));
        }
        for &(slot, res) in &done_now {
            let now = Instant::now();
            inflight -= 1;
            if res != bs as i32 && failure.is_none() {
                let detail = if res < 0 {
                    std::io::Error::from_raw_os_error(-res).to_string()
                } else {
                    format!(
                        "short transfer: {res} of {bs} bytes at offset {}",
                        offsets.get(slot).copied().unwrap_or(0)
                    )
                };
                failure = Some(io_err(
                    t.path,
                    if pattern.is_write() {
                        "io_uring write"
                    } else {
                        "io_uring read"
                    },
                    detail,
                ));
            }
            if let Some(s) = started.get(slot) {
                let _ = hist.record((now - *s).as_nanos().max(1) as u64);
                ios += 1;
            }
            if now >= deadline || stop.load(Ordering::Relaxed) || failure.is_some() {
                done = true;
            }
            if !done
                && slot < qd
                && submit_slot(&mut ring, slot, &mut bufs, &mut started, &mut offsets)
            {
                inflight += 1;
                // Submit each I/O as soon as it is queued, as fio does by default
                // (iodepth_batch_submit=1): handing the kernel a batch of them at once held
                // 4 KiB random reads at QD16 ~15% below fio's IOPS on this virtio disk
                // (benches/storage_peers.rs). An error here is reported by the enter at the
                // top of the loop, which submits whatever is still queued.
                let _ = ring.submit();
            }
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(WorkerOut { ios, hist }),
    }
}

/// Runs one point on all `targets` at once and merges the workers' counts and histograms.
///
/// Errors: the first worker's I/O error, [`StorageError::Interrupted`] when `stop` was set
/// before the deadline.
pub fn run_point(
    targets: &[IoTarget<'_>],
    spec: &IoSpec,
    stop: &AtomicBool,
) -> Result<IoPointResult, StorageError> {
    let engine = match spec.engine {
        EngineChoice::PreadPwrite => IoEngine::PreadPwrite {
            why_not_io_uring: "pread/pwrite requested".into(),
        },
        EngineChoice::Auto => match io_uring_usable() {
            Ok(setup_flags) => IoEngine::IoUring { setup_flags },
            Err(why) => IoEngine::PreadPwrite {
                why_not_io_uring: why,
            },
        },
    };
    let threads = spec.threads_per_target.max(1);
    let qd = spec.queue_depth.max(1);
    let workers_per_target = match engine {
        IoEngine::IoUring { .. } => threads,
        IoEngine::PreadPwrite { .. } => threads * qd,
    };
    // A fresh seed per call, so repeated windows do not re-read the same blocks (a cache in the
    // device or the hypervisor would otherwise serve them).
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let cpu0 = process_cpu_ns();
    let start = Instant::now();
    let deadline = start + spec.duration;
    let results: Vec<Result<WorkerOut, StorageError>> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (ti, t) in targets.iter().enumerate() {
            for w in 0..workers_per_target {
                let offs = OffsetGen::new(
                    spec.pattern,
                    t.size_bytes,
                    w,
                    workers_per_target,
                    (ti * 1000 + w + 1) as u64 ^ nonce,
                );
                let t = *t;
                let engine = &engine;
                handles.push(s.spawn(move || match engine {
                    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
                    IoEngine::IoUring { setup_flags } => {
                        uring_worker(t, spec.pattern, qd, setup_flags, offs, deadline, stop)
                    }
                    _ => sync_worker(t, spec.pattern, offs, deadline, stop),
                }));
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(io_err("worker", "join", "worker thread panicked".into()))
                })
            })
            .collect()
    });
    let elapsed = start.elapsed();
    let cpu1 = process_cpu_ns();
    if stop.load(Ordering::Relaxed) {
        return Err(StorageError::Interrupted);
    }
    let mut hist = new_hist();
    let mut ios = 0u64;
    for r in results {
        let w = r?;
        ios += w.ios;
        let _ = hist.add(&w.hist);
    }
    let elapsed_ns = elapsed.as_nanos().max(1) as u64;
    let secs = elapsed_ns as f64 / 1e9;
    let bytes = ios * spec.pattern.block_bytes() as u64;
    let cpu_ns = match (cpu0, cpu1) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    Ok(IoPointResult {
        pattern: spec.pattern,
        engine,
        threads_per_target: threads,
        queue_depth: qd,
        targets: targets.len(),
        ios,
        bytes,
        elapsed_ns,
        iops: ios as f64 / secs,
        bandwidth_bytes_per_s: bytes as f64 / secs,
        latency_p50_ns: hist.value_at_quantile(0.5),
        latency_p99_ns: hist.value_at_quantile(0.99),
        latency_p999_ns: hist.value_at_quantile(0.999),
        latency_max_ns: hist.max(),
        // A CPU-time delta of 0 with I/Os done means the process clock did not advance
        // (tick-based accounting, or qemu-user's emulated getrusage): unknown, not free.
        cpu_ns_per_io: cpu_ns
            .filter(|&c| ios > 0 && c > 0)
            .map(|c| c as f64 / ios as f64),
        cpu_busy_cpus: cpu_ns.map(|c| c as f64 / elapsed_ns as f64),
    })
}

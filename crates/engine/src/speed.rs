//! How fast this machine does a point's fixed work: the measurement behind the time estimate's
//! non-sample part ([`FixedWorkSpeed`], kept in the plan of the result file).
//!
//! A point's time is its timed samples (as long on any machine) plus fixed work that scales
//! with the machine: allocating and first touching its memory, laying out a pointer chain or a
//! hash table, starting its threads. In a 16-vCPU qemu TCG guest on 2 host cores that work ran
//! 5-20x slower than on this VM, so an estimate from constants was off by up to 47x for a
//! family (issue 13). Four small jobs, each timed three times (the median kept), measure it:
//!
//! - **touch**: fill a fresh 16 MiB buffer (page faults, zeroing, stores), one thread;
//! - **layout**: Sattolo's shuffle of a 1 Mi-slot (8 MiB) cyclic chain, one thread;
//! - **spawn**: start 16 threads at once, each filling a 256 KiB buffer (a latency histogram's
//!   size) and waiting for the others, then join them: a worker's start, first touch and exit
//!   in a process with other threads (its stacks and buffers are mapped and unmapped while
//!   they run, which costs TLB shootdowns on a many-CPU guest);
//! - **drain**: 8 busy threads per usable CPU (at most 256) spin on a flag; the time from
//!   setting it until the last has exited, per thread beyond the CPUs. Each must get a CPU
//!   once to see the flag: on this VM (EEVDF) that is a scheduler slice each, about 10 ms per
//!   closed-loop client past the CPUs over a point's runs;
//! - **parallel**: the touch job over 4 MiB by `min(usable CPUs, 64)` unpinned threads at once
//!   against one thread alone, giving the CPUs that really run at once.
//!
//! About 0.1 s on this VM. Nothing here reads /proc or /sys.

use std::time::Instant;

pub use hwsurvey_result::plan::FixedWorkSpeed;

const TOUCH_BYTES: usize = 16 << 20;
const LAYOUT_SLOTS: usize = 1 << 20;
const SPAWN_THREADS: usize = 16;
const SPAWN_BUFFER_BYTES: usize = 256 << 10;
const PARALLEL_BYTES: usize = 4 << 20;
const MAX_PARALLEL_THREADS: usize = 64;
const MAX_DRAIN_THREADS: usize = 256;

/// Stack each measuring thread reserves (std's default for spawned threads), bytes: it counts
/// against an address-space limit (`RLIMIT_AS`) though little of it is touched.
const THREAD_STACK_BYTES: usize = 2 << 20;

/// The most memory the measurement holds at once with `usable_cpus` usable CPUs, bytes: the
/// largest of its jobs (the 16 MiB touch, the 8 MiB chain, 16 spawned threads' buffers and
/// stacks, the parallel touch's threads), counting every thread's stack reservation.
pub fn bytes_needed(usable_cpus: usize) -> u64 {
    let threads = usable_cpus.clamp(1, MAX_PARALLEL_THREADS);
    [
        TOUCH_BYTES,
        LAYOUT_SLOTS * 8,
        SPAWN_THREADS * (SPAWN_BUFFER_BYTES + THREAD_STACK_BYTES),
        threads * (PARALLEL_BYTES + THREAD_STACK_BYTES),
    ]
    .into_iter()
    .max()
    .unwrap_or(0) as u64
}

/// [`measure`] when `headroom_bytes` (what the process's memory limits leave it, see
/// `RunEnv::memory_cap`) holds twice [`bytes_needed`]; otherwise the reference figures, with
/// the two sizes as the reason: under a tight cgroup or `ulimit -v` the measurement itself
/// would be killed or abort on a failed allocation (measured 2026-12-04: `run --plan-only`
/// aborted under `ulimit -v` 40 MiB, allocating the parallel touch's 4 MiB).
pub fn measure_within(usable_cpus: usize, headroom_bytes: Option<u64>) -> FixedWorkSpeed {
    let need = bytes_needed(usable_cpus);
    match headroom_bytes {
        Some(h) if h < 2 * need => FixedWorkSpeed::reference(format!(
            "reference machine (not measured: the memory limits leave {}, measuring needs {} \
             twice over)",
            hwsurvey_model::units::format_bytes_binary(h),
            hwsurvey_model::units::format_bytes_binary(need)
        )),
        _ => measure(usable_cpus),
    }
}

/// Measures this machine's [`FixedWorkSpeed`] with `usable_cpus` threads for the parallel part
/// (clamped to 1..=64). Never fails: a thread that cannot start counts as not run in parallel.
pub fn measure(usable_cpus: usize) -> FixedWorkSpeed {
    let touch_s = median3(|| timed(|| touch(TOUCH_BYTES)));
    let layout_s = median3(|| timed(|| layout(LAYOUT_SLOTS)));
    let spawn_s = median3(|| timed(spawn_workers));
    let drain_s = drain_s_per_thread(usable_cpus.max(1));
    let threads = usable_cpus.clamp(1, MAX_PARALLEL_THREADS);
    let (one, all) = if threads > 1 {
        let one = median3(|| timed(|| touch(PARALLEL_BYTES)));
        let all = median3(|| {
            timed(|| {
                std::thread::scope(|s| {
                    for _ in 0..threads {
                        let _ =
                            std::thread::Builder::new().spawn_scoped(s, || touch(PARALLEL_BYTES));
                    }
                })
            })
        });
        (one, all)
    } else {
        (1.0, 1.0)
    };
    FixedWorkSpeed {
        touch_s_per_byte: touch_s / TOUCH_BYTES as f64,
        layout_s_per_slot: layout_s / LAYOUT_SLOTS as f64,
        spawn_s: spawn_s / SPAWN_THREADS as f64,
        drain_s_per_thread: Some(drain_s),
        parallel_cpus: parallel_cpus(threads, one, all),
        parallel_threads: threads,
        source: "measured".into(),
    }
}

/// [`FixedWorkSpeed::drain_s_per_thread`]: `8 x cpus` (at most 256) threads spin on a flag
/// for 20 ms; seconds from setting the flag until all have exited, per thread beyond `cpus`
/// (median of three). The threads are started asleep at a [`crate::gate::StartGate`] and
/// spin only once all are there: spinning as soon as each started, they took the CPUs from
/// the thread starting the rest, whose every start then waited for a scheduler round of 8
/// spinners a CPU (in the 16-vCPU TCG guest x86-2s4n-smt on 2 host CPUs, each `hwsurvey run`
/// spent 95-155 s planning, 2026-12-06).
fn drain_s_per_thread(cpus: usize) -> f64 {
    let n = (8 * cpus).min(MAX_DRAIN_THREADS);
    if n <= cpus {
        return 0.0;
    }
    let t = median3(|| {
        let stop = std::sync::atomic::AtomicBool::new(false);
        let gate = crate::gate::StartGate::new();
        let mut stopped_at = None;
        std::thread::scope(|s| {
            let mut spawned = 0;
            for _ in 0..n {
                let (stop, gate) = (&stop, &gate);
                let ok = std::thread::Builder::new()
                    .stack_size(64 * 1024)
                    .spawn_scoped(s, move || {
                        if !gate.arrive_and_wait() {
                            return;
                        }
                        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                            std::hint::spin_loop();
                        }
                    })
                    .is_ok();
                spawned += usize::from(ok);
            }
            gate.wait_for_arrivals(spawned);
            gate.open();
            std::thread::sleep(std::time::Duration::from_millis(20));
            stopped_at = Some(Instant::now());
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        stopped_at.map_or(0.0, |t| t.elapsed().as_secs_f64())
    });
    t / (n - cpus) as f64
}

/// CPUs running at once: `threads` jobs of `one_s` each took `all_s` together, clamped to
/// 1..=`threads`.
pub fn parallel_cpus(threads: usize, one_s: f64, all_s: f64) -> f64 {
    if !(one_s > 0.0 && all_s > 0.0) {
        return 1.0;
    }
    (threads as f64 * one_s / all_s).clamp(1.0, threads.max(1) as f64)
}

/// Starts [`SPAWN_THREADS`] threads that each fill [`SPAWN_BUFFER_BYTES`] and then sleep
/// until all have done so, then joins them. A thread that cannot start is not waited for.
fn spawn_workers() {
    let gate = crate::gate::StartGate::new();
    std::thread::scope(|s| {
        let mut spawned = 0;
        for _ in 0..SPAWN_THREADS {
            let gate = &gate;
            let ok = std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn_scoped(s, move || {
                    let buf = vec![1u8; SPAWN_BUFFER_BYTES];
                    gate.arrive_and_wait();
                    std::hint::black_box(buf);
                })
                .is_ok();
            spawned += usize::from(ok);
        }
        gate.wait_for_arrivals(spawned);
        gate.open();
    });
}

fn timed(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

fn median3(mut f: impl FnMut() -> f64) -> f64 {
    let mut v = [f(), f(), f()];
    v.sort_by(f64::total_cmp);
    v[1]
}

/// Fills a fresh buffer of `bytes` (first touch of every page) and reads one word back.
fn touch(bytes: usize) {
    let words = vec![1u64; bytes / 8];
    std::hint::black_box(&words);
}

/// Sattolo's shuffle: a single random cycle over `slots` slots (the layout of a chase).
fn layout(slots: usize) {
    let mut next: Vec<u64> = (0..slots as u64).collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..slots).rev() {
        // SplitMix64 step
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let j = (z % i as u64) as usize;
        next.swap(i, j);
    }
    std::hint::black_box(&next);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under a tight memory limit the reference figures are used, with the two sizes as the
    /// reason; with room (or no limit known) the machine is measured. 2 CPUs: the spawn job's
    /// 16 x (256 KiB + 2 MiB) = 36 MiB is the largest.
    #[test]
    fn a_tight_memory_limit_uses_the_reference_figures() {
        assert_eq!(bytes_needed(2), 36 << 20);
        // 64 CPUs: 64 x (4 MiB + 2 MiB)
        assert_eq!(bytes_needed(64), 384 << 20);
        let s = measure_within(2, Some(16 << 20));
        assert_eq!(
            s.source,
            "reference machine (not measured: the memory limits leave 16 MiB, measuring needs \
             36 MiB twice over)"
        );
        assert_eq!(s.parallel_threads, 0);
        assert_eq!(measure_within(2, Some(72 << 20)).source, "measured");
        assert_eq!(measure_within(2, None).source, "measured");
    }

    #[test]
    fn parallel_cpus_is_the_speedup_clamped_to_the_threads() {
        // 16 jobs of 10 ms in 80 ms: 2 CPUs at once (a 16-vCPU guest on 2 host cores)
        assert!((parallel_cpus(16, 0.010, 0.080) - 2.0).abs() < 1e-12);
        // faster than possible (timer noise) is clamped to the threads
        assert_eq!(parallel_cpus(4, 0.010, 0.001), 4.0);
        // slower than one at a time is 1
        assert_eq!(parallel_cpus(4, 0.010, 0.100), 1.0);
        assert_eq!(parallel_cpus(4, 0.0, 0.1), 1.0);
    }

    #[test]
    fn a_measurement_gives_positive_figures_within_the_threads() {
        let s = measure(2);
        eprintln!("{s:?}");
        assert_eq!(s.source, "measured");
        assert_eq!(s.parallel_threads, 2);
        assert!((1.0..=2.0).contains(&s.parallel_cpus), "{s:?}");
        // 16 MiB filled in 0.1 ms .. 10 s; a slot laid out in 0.1 ns .. 10 us; a thread in
        // 1 us .. 100 ms: wide bounds, but a unit error (ms for s) falls outside them.
        assert!((6e-15..6e-7).contains(&s.touch_s_per_byte), "{s:?}");
        assert!((1e-10..1e-5).contains(&s.layout_s_per_slot), "{s:?}");
        assert!((1e-6..0.1).contains(&s.spawn_s), "{s:?}");
        // 16 spinning threads on 2 CPUs: each waits for a slice (0 .. 100 ms)
        assert!((0.0..0.1).contains(&s.drain_s()), "{s:?}");
    }
}

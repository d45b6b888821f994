//! `mem.bandwidth`: STREAM Copy/Scale/Add/Triad vs threads, and read/write bandwidth by
//! block size vs threads.
//!
//! STREAM (J. D. McCalpin, "Memory Bandwidth and Machine Balance in Current High Performance
//! Computers", IEEE TCCA Newsletter, 1995; <https://www.cs.virginia.edu/stream/ref.html>):
//! three arrays a, b, c of `f64`, together the profile's "memory" working set (>= 4x the total
//! last-level cache), split into private per-thread parts first-touched by their owner (as
//! STREAM's OpenMP static schedule does). Credited bytes per element, as STREAM counts them
//! (no write-allocate traffic): Copy `c = a` 16, Scale `b = s*c` 16, Add `c = a + b` 24,
//! Triad `a = b + s*c` 24. The best sample is reported as peak, as STREAM reports best-of-N.
//!
//! Block read/write (sysbench-memory style, but each thread has its own block rather than
//! one shared buffer): per repetition each thread reads (sums) or writes (fills) its whole
//! block once; bandwidth = block bytes x threads x repetitions / time. Small blocks are
//! cache-resident on purpose: the curve over block size shows each cache level.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use hwsurvey_engine::outcome::{Measurement, Metric, PointOutcome};
use hwsurvey_engine::pages::{PageBuffer, PageMode};
use hwsurvey_engine::plan::{FamilyPoints, PlanInput, Point};
use hwsurvey_engine::profile::{CheckedParams, Checker, ProfileError};
use hwsurvey_engine::runner::{consume, RunContext, RunError, Timed};
use hwsurvey_engine::Family;

mod block;
mod trial;
pub use block::ReadPath;

/// The family.
pub struct MemBandwidth;

/// A STREAM kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamKernel {
    /// `c[i] = a[i]`, 16 bytes credited per element.
    Copy,
    /// `b[i] = s * c[i]`, 16 bytes.
    Scale,
    /// `c[i] = a[i] + b[i]`, 24 bytes.
    Add,
    /// `a[i] = b[i] + s * c[i]`, 24 bytes.
    Triad,
}

impl StreamKernel {
    /// Bytes STREAM credits per element.
    pub fn credited_bytes_per_element(self) -> u64 {
        match self {
            StreamKernel::Copy | StreamKernel::Scale => 16,
            StreamKernel::Add | StreamKernel::Triad => 24,
        }
    }
    fn name(self) -> &'static str {
        match self {
            StreamKernel::Copy => "copy",
            StreamKernel::Scale => "scale",
            StreamKernel::Add => "add",
            StreamKernel::Triad => "triad",
        }
    }
}

/// A block operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockOp {
    /// Sum the block's 64-bit words.
    Read,
    /// Fill the block with a value.
    Write,
}

/// `[families."mem.bandwidth".params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// STREAM kernels to run, in order (non-empty, no duplicates: one test id each).
    pub stream_kernels: Vec<StreamKernel>,
    /// Block sizes for read/write, bytes (each thread has its own block of this size);
    /// non-empty, no duplicates, each 64..=2^30 and a multiple of 8 (the kernels move u64 words).
    pub block_sizes_bytes: Vec<u64>,
    /// Block operations (non-empty, no duplicates).
    pub block_ops: Vec<BlockOp>,
}

impl CheckedParams for Params {
    /// The ranges in the field docs.
    fn check(&self, c: &Checker<'_>) -> Result<(), ProfileError> {
        c.list("stream_kernels", &self.stream_kernels)?;
        // the block kernels read/write whole u64 words: a size must be a multiple of 8 bytes
        c.int_list(
            "block_sizes_bytes",
            &self.block_sizes_bytes,
            64,
            1 << 30,
            "bytes",
        )?;
        if let Some(bad) = self
            .block_sizes_bytes
            .iter()
            .find(|&&b| !b.is_multiple_of(8))
        {
            return Err(c.error(
                "block_sizes_bytes",
                format!(
                    "expected every entry in 64..=1073741824 and a multiple of 8 bytes, got {bad}"
                ),
            ));
        }
        c.list("block_ops", &self.block_ops)
    }
}

/// Parameters of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "test", rename_all = "snake_case")]
pub enum PointParams {
    /// A STREAM kernel.
    Stream {
        /// Kernel.
        kernel: StreamKernel,
        /// Elements per array over all threads.
        elements_total: u64,
        /// All three arrays, bytes.
        working_set_bytes: u64,
        /// Bytes credited per element.
        credited_bytes_per_element: u64,
    },
    /// Block read or write.
    Block {
        /// Operation.
        op: BlockOp,
        /// Block per thread, bytes.
        block_size_bytes: u64,
    },
}

const SCALAR: f64 = 3.0;

impl Family for MemBandwidth {
    type Params = Params;
    type PointParams = PointParams;

    fn id(&self) -> &'static str {
        "mem.bandwidth"
    }

    fn describe(&self) -> &'static str {
        "STREAM Copy/Scale/Add/Triad and per-thread block read/write bandwidth vs threads"
    }

    fn plan(&self, params: Params, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        let mut out = FamilyPoints::default();
        let rungs = input.ladder(false);
        let ws = input.memory_working_set_bytes();
        for &kernel in &params.stream_kernels {
            for rung in &rungs {
                let t = rung.threads;
                // each thread's part of each array: a whole number of 64-byte lines
                let per_thread = (ws / 3 / 8 / t as u64) / 8 * 8;
                let elements_total = per_thread * t as u64;
                let p = PointParams::Stream {
                    kernel,
                    elements_total,
                    working_set_bytes: elements_total * 3 * 8,
                    credited_bytes_per_element: kernel.credited_bytes_per_element(),
                };
                let id = format!("stream.{}/{}", kernel.name(), rung.id_part());
                if per_thread == 0 {
                    out.skipped.push(input.skip(
                        id,
                        &p,
                        "working set too small for this many threads",
                    ));
                    continue;
                }
                out.points
                    .push(input.rung_point(id, rung, &p, elements_total * 3 * 8));
            }
        }
        for &op in &params.block_ops {
            for &size in &params.block_sizes_bytes {
                for rung in &rungs {
                    let t = rung.threads;
                    let p = PointParams::Block {
                        op,
                        block_size_bytes: size,
                    };
                    let id = format!(
                        "{}/block={}/{}",
                        match op {
                            BlockOp::Read => "read",
                            BlockOp::Write => "write",
                        },
                        hwsurvey_model::units::format_bytes_binary(size).replace(' ', ""),
                        rung.id_part()
                    );
                    if size < 64 {
                        out.skipped
                            .push(input.skip(id, &p, "block smaller than 64 bytes"));
                        continue;
                    }
                    out.points
                        .push(input.rung_point(id, rung, &p, size * t as u64));
                }
            }
        }
        Ok(out)
    }

    fn run_point(&self, params: PointParams, point: &Point, ctx: &RunContext<'_>) -> PointOutcome {
        match params {
            PointParams::Stream {
                kernel,
                elements_total,
                credited_bytes_per_element,
                ..
            } => run_stream(
                point,
                ctx,
                kernel,
                elements_total,
                credited_bytes_per_element,
            ),
            PointParams::Block {
                op,
                block_size_bytes,
            } => block::run_block(point, ctx, op, block_size_bytes),
        }
    }
}

struct StreamArrays {
    a: PageBuffer,
    b: PageBuffer,
    c: PageBuffer,
}

fn run_stream(
    point: &Point,
    ctx: &RunContext<'_>,
    kernel: StreamKernel,
    elements_total: u64,
    credited: u64,
) -> PointOutcome {
    let threads = point.cpus.len().max(1);
    let per_thread = (elements_total / threads as u64) as usize;
    let store = store_kind(per_thread * 8);
    // the non-temporal stores' width, by trial (see `trial`); plain stores have no paths
    let paths = trial::PathTrial::new(match store {
        StoreKind::NonTemporal => NtPath::supported(),
        StoreKind::Regular => vec![NtPath::Sse2],
    });
    let setup_error = Mutex::new(None);
    let timed = ctx.measure_parallel(
        point,
        |w| -> Result<(StreamArrays, NtPath), String> {
            let arrays = || -> Result<StreamArrays, String> {
                let alloc = || {
                    PageBuffer::allocate(PageMode::Default, per_thread * 8)
                        .map_err(|e| remember(&setup_error, e.to_string()))
                };
                let mut s = StreamArrays {
                    a: alloc()?,
                    b: alloc()?,
                    c: alloc()?,
                };
                // first touch by the owning thread, STREAM's initial values
                s.a.as_f64_mut().iter_mut().for_each(|v| *v = 1.0);
                s.b.as_f64_mut().iter_mut().for_each(|v| *v = 2.0);
                s.c.as_f64_mut().iter_mut().for_each(|v| *v = 0.0);
                Ok(s)
            };
            let mut arrays = arrays();
            let bytes = credited as f64 * per_thread as f64;
            let pass = arrays.as_mut().ok().map(|s| {
                move |p: NtPath| {
                    stream_once(kernel, s, store, p);
                    bytes
                }
            });
            let path = paths.choose(w, pass);
            arrays.map(|s| (s, path))
        },
        |state, reps| {
            let Ok((s, path)) = state else { return };
            for _ in 0..reps {
                stream_once(kernel, s, store, *path);
            }
            consume(s.a.as_f64_mut().first().copied());
        },
    );
    let timed = match timed_or_failed(setup_error, timed) {
        Ok(t) => t,
        Err(failed) => return failed,
    };
    let bytes_per_rep = credited as f64 * per_thread as f64;
    let m = Measurement {
        metrics: vec![Metric::bandwidth_bytes_per_s(timed.rates(bytes_per_rep))],
        pins: timed.pins.clone(),
        details: Default::default(),
    }
    .detail("credited_bytes_per_element", credited)
    .detail("store", store)
    .detail("elements_per_thread", per_thread)
    .detail("reps_per_sample", timed.reps_per_sample)
    .detail("sample_s", &timed.sample_s)
    .detail("cut_short", &timed.cut_short);
    // the width of the streaming stores, where they were used
    let m = match store {
        StoreKind::NonTemporal => m
            .detail("store_path", paths.fastest())
            .detail("store_path_trial_bytes_per_s", paths.rates()),
        StoreKind::Regular => m,
    };
    PointOutcome::Measured(m)
}

/// How the STREAM kernels store: non-temporal stores (x86_64 `movntpd`, as STREAM compiled
/// with streaming stores and likwid-bench's `stream_mem` kernels do: no write-allocate read of
/// the destination) for arrays that cannot be cache-resident, plain stores otherwise and on
/// other architectures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreKind {
    /// Ordinary stores (the compiler vectorises the loop).
    Regular,
    /// x86_64 non-temporal stores of the widest vector the CPU has ([`NtPath`]), `sfence`
    /// after each pass.
    NonTemporal,
}

/// The vector width of the non-temporal STREAM stores (x86_64). Each STREAM point with
/// non-temporal stores measures with the width that moved the most bytes in a short trial of
/// every width the CPU runs (`is_x86_feature_detected!`, i.e. CPUID and the OS's XSAVE state;
/// see `trial`): AVX-512 stores a whole 64-byte line per instruction, which the write-combining
/// buffers take as one full-line write (likwid-bench's fastest Triad on Intel AVX-512 machines
/// is its `stream_mem_avx512`), while on a Zen 4 guest its `stream_mem_avx` now and then won.
/// Recorded in each STREAM point as `store_path`, with the trial's rates as
/// `store_path_trial_bytes_per_s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NtPath {
    /// SSE2 `_mm_stream_pd`, 16 bytes (part of the x86_64 baseline).
    Sse2,
    /// AVX `_mm256_stream_pd`, 32 bytes.
    Avx,
    /// AVX-512F `_mm512_stream_pd`, 64 bytes.
    Avx512,
}

impl NtPath {
    /// Every path this CPU runs, narrowest first.
    pub fn supported() -> Vec<NtPath> {
        #[cfg(target_arch = "x86_64")]
        {
            let mut v = vec![NtPath::Sse2];
            if is_x86_feature_detected!("avx") {
                v.push(NtPath::Avx);
            }
            if is_x86_feature_detected!("avx512f") {
                v.push(NtPath::Avx512);
            }
            v
        }
        #[cfg(not(target_arch = "x86_64"))]
        Vec::new()
    }
}

/// Arrays of at least this many bytes use non-temporal stores where available.
const NON_TEMPORAL_MIN_BYTES: usize = 1 << 20;

fn store_kind(array_bytes: usize) -> StoreKind {
    if cfg!(target_arch = "x86_64") && array_bytes >= NON_TEMPORAL_MIN_BYTES {
        StoreKind::NonTemporal
    } else {
        StoreKind::Regular
    }
}

/// One pass of a STREAM kernel over one thread's arrays; `path` is the non-temporal store
/// width, used only with [`StoreKind::NonTemporal`] and only where the CPU runs it (else the
/// plain kernel runs).
fn stream_once(kernel: StreamKernel, s: &mut StreamArrays, store: StoreKind, path: NtPath) {
    let (a, b, c) = (s.a.as_f64_mut(), s.b.as_f64_mut(), s.c.as_f64_mut());
    #[cfg(target_arch = "x86_64")]
    if store == StoreKind::NonTemporal && nt::pass(path, kernel, a, b, c) {
        return;
    }
    let _ = (store, path);
    match kernel {
        StreamKernel::Copy => copy(a, c),
        StreamKernel::Scale => scale(c, b),
        StreamKernel::Add => add(a, b, c),
        StreamKernel::Triad => triad(b, c, a),
    }
}

// Plain zipped iterators: no bounds checks in the loop, so the compiler vectorises them.

#[inline(never)]
fn copy(a: &[f64], c: &mut [f64]) {
    for (c, a) in c.iter_mut().zip(a) {
        *c = *a;
    }
}

#[inline(never)]
fn scale(c: &[f64], b: &mut [f64]) {
    for (b, c) in b.iter_mut().zip(c) {
        *b = SCALAR * *c;
    }
}

#[inline(never)]
fn add(a: &[f64], b: &[f64], c: &mut [f64]) {
    for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
        *c = *a + *b;
    }
}

#[inline(never)]
fn triad(b: &[f64], c: &[f64], a: &mut [f64]) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = *b + SCALAR * *c;
    }
}

/// Non-temporal-store STREAM kernels (x86_64 only), one module per vector width
/// ([`NtPath`]), made by one macro so the four kernels are written once. Each pass walks the
/// arrays one 64-byte line (8 elements) per iteration with unaligned loads and streaming
/// stores from a 64-byte aligned destination (the buffers are page-aligned), does the
/// scalar tail with plain stores, and ends with `sfence`.
#[cfg(target_arch = "x86_64")]
mod nt {
    use super::{NtPath, StreamKernel};

    /// Runs one pass on `path` and returns true, or returns false (nothing done) when the CPU
    /// lacks `path` or a destination is not 64-byte aligned.
    pub fn pass(
        path: NtPath,
        kernel: StreamKernel,
        a: &mut [f64],
        b: &mut [f64],
        c: &mut [f64],
    ) -> bool {
        let aligned = [a.as_ptr(), b.as_ptr(), c.as_ptr()]
            .iter()
            .all(|p| (*p as usize).is_multiple_of(64));
        let n = a.len().min(b.len()).min(c.len());
        if !aligned {
            return false;
        }
        // SAFETY: each path runs only where the CPU has its feature (checked here); all
        // three slices hold at least n elements and are 64-byte aligned.
        unsafe {
            match path {
                NtPath::Sse2 => sse2::pass(kernel, n, a, b, c),
                NtPath::Avx if is_x86_feature_detected!("avx") => avx::pass(kernel, n, a, b, c),
                NtPath::Avx512 if is_x86_feature_detected!("avx512f") => {
                    avx512::pass(kernel, n, a, b, c)
                }
                _ => return false,
            }
        }
        true
    }

    macro_rules! width {
        ($name:ident, $feature:literal, $lanes:literal, $load:ident, $stream:ident,
         $add:ident, $mul:ident, $set1:ident) => {
            mod $name {
                use std::arch::x86_64::{_mm_sfence, $add, $load, $mul, $set1, $stream};

                use super::super::{StreamKernel, SCALAR};

                /// One pass of `kernel` over the first `n` elements.
                ///
                /// # Safety
                /// The CPU has the target feature; `a`, `b`, `c` hold at least `n` elements
                /// and are 64-byte aligned.
                #[target_feature(enable = $feature)]
                pub unsafe fn pass(
                    kernel: StreamKernel,
                    n: usize,
                    a: &mut [f64],
                    b: &mut [f64],
                    c: &mut [f64],
                ) {
                    let body = n / 8 * 8;
                    let (pa, pb, pc) = (a.as_mut_ptr(), b.as_mut_ptr(), c.as_mut_ptr());
                    // SAFETY (every block below): i + k < body <= n; the stores' addresses
                    // are multiples of the vector width (64-byte base, k * 8 bytes apart).
                    let s = $set1(SCALAR);
                    let mut i = 0;
                    match kernel {
                        StreamKernel::Copy => {
                            while i < body {
                                for k in (0..8).step_by($lanes) {
                                    unsafe { $stream(pc.add(i + k), $load(pa.add(i + k))) };
                                }
                                i += 8;
                            }
                        }
                        StreamKernel::Scale => {
                            while i < body {
                                for k in (0..8).step_by($lanes) {
                                    unsafe {
                                        $stream(pb.add(i + k), $mul(s, $load(pc.add(i + k))))
                                    };
                                }
                                i += 8;
                            }
                        }
                        StreamKernel::Add => {
                            while i < body {
                                for k in (0..8).step_by($lanes) {
                                    unsafe {
                                        $stream(
                                            pc.add(i + k),
                                            $add($load(pa.add(i + k)), $load(pb.add(i + k))),
                                        )
                                    };
                                }
                                i += 8;
                            }
                        }
                        StreamKernel::Triad => {
                            while i < body {
                                for k in (0..8).step_by($lanes) {
                                    unsafe {
                                        $stream(
                                            pa.add(i + k),
                                            $add(
                                                $load(pb.add(i + k)),
                                                $mul(s, $load(pc.add(i + k))),
                                            ),
                                        )
                                    };
                                }
                                i += 8;
                            }
                        }
                    }
                    _mm_sfence();
                    for j in body..n {
                        match kernel {
                            StreamKernel::Copy => c[j] = a[j],
                            StreamKernel::Scale => b[j] = SCALAR * c[j],
                            StreamKernel::Add => c[j] = a[j] + b[j],
                            StreamKernel::Triad => a[j] = b[j] + SCALAR * c[j],
                        }
                    }
                }
            }
        };
    }

    width!(
        sse2,
        "sse2",
        2,
        _mm_loadu_pd,
        _mm_stream_pd,
        _mm_add_pd,
        _mm_mul_pd,
        _mm_set1_pd
    );
    width!(
        avx,
        "avx",
        4,
        _mm256_loadu_pd,
        _mm256_stream_pd,
        _mm256_add_pd,
        _mm256_mul_pd,
        _mm256_set1_pd
    );
    width!(
        avx512,
        "avx512f",
        8,
        _mm512_loadu_pd,
        _mm512_stream_pd,
        _mm512_add_pd,
        _mm512_mul_pd,
        _mm512_set1_pd
    );
}

/// The timings of a parallel measurement, or the point's failure: a worker's setup error
/// first (a worker that could not allocate leaves empty timings that mean nothing), then the
/// engine's error.
fn timed_or_failed(
    setup_error: Mutex<Option<String>>,
    timed: Result<Timed, RunError>,
) -> Result<Timed, PointOutcome> {
    if let Some(error) = setup_error.into_inner().ok().flatten() {
        return Err(PointOutcome::Failed { error });
    }
    timed.map_err(|e| PointOutcome::Failed {
        error: e.to_string(),
    })
}

/// Keeps the first setup error of any worker.
fn remember(slot: &Mutex<Option<String>>, error: String) -> String {
    if let Ok(mut s) = slot.lock() {
        s.get_or_insert_with(|| error.clone());
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsurvey_engine::DynFamily;
    use hwsurvey_probe::run_env::ReadRunEnv as _;

    #[test]
    fn kernels_compute_stream_values() {
        // 8024 bytes -> 1003 elements: exercises the 8-element unrolled body and a tail of 3
        let nt = NtPath::supported()
            .into_iter()
            .map(|p| (StoreKind::NonTemporal, p));
        for (store, path) in [(StoreKind::Regular, NtPath::Sse2)].into_iter().chain(nt) {
            let mut s = StreamArrays {
                a: PageBuffer::allocate(PageMode::Default, 8024).unwrap(),
                b: PageBuffer::allocate(PageMode::Default, 8024).unwrap(),
                c: PageBuffer::allocate(PageMode::Default, 8024).unwrap(),
            };
            // distinct values per element so a shifted or skipped element shows
            for (i, v) in s.a.as_f64_mut().iter_mut().enumerate() {
                *v = 1.0 + i as f64;
            }
            s.b.as_f64_mut().iter_mut().for_each(|v| *v = 2.0);
            for k in [
                StreamKernel::Copy,
                StreamKernel::Scale,
                StreamKernel::Add,
                StreamKernel::Triad,
            ] {
                stream_once(k, &mut s, store, path);
            }
            // STREAM's sequence from a=x, b=2, c=0: c=x, b=3x, c=x+3x=4x, a=3x+3*4x=15x
            let n = s.a.len_bytes() / 8;
            assert_eq!(n, 1003);
            for i in 0..n {
                let x = 1.0 + i as f64;
                assert_eq!(s.a.as_f64_mut()[i], 15.0 * x, "{store:?} {path:?} a[{i}]");
                assert_eq!(s.b.as_f64_mut()[i], 3.0 * x, "{store:?} {path:?} b[{i}]");
                assert_eq!(s.c.as_f64_mut()[i], 4.0 * x, "{store:?} {path:?} c[{i}]");
            }
        }
        assert_eq!(StreamKernel::Triad.credited_bytes_per_element(), 24);
        assert_eq!(StreamKernel::Add.credited_bytes_per_element(), 24);
        assert_eq!(StreamKernel::Copy.credited_bytes_per_element(), 16);
        assert_eq!(StreamKernel::Scale.credited_bytes_per_element(), 16);
    }

    fn settings() -> hwsurvey_engine::profile::RunSettings {
        hwsurvey_engine::profile::RunSettings {
            placement: hwsurvey_engine::affinity::Placement::Compact,
            sample_min_s: 0.005,
            sample_min_clock_ticks: 20,
            warmup_s: 0.0,
            samples_min: 2,
            samples_max: 3,
            target_cv: 0.5,
            memory_fraction: 0.5,
            memory_llc_multiple: 1.0,
            memory_min_working_set_bytes: 1 << 20,
            memory_max_working_set_bytes: None,
            oversubscription_factor: 2,
            budget_s: None,
        }
    }

    fn block_point(size: u64, threads: usize) -> Point {
        Point {
            family: "mem.bandwidth".into(),
            id: "test".into(),
            threads,
            placement: hwsurvey_engine::affinity::Placement::Compact,
            cpus: vec![0; threads],
            params: serde_json::to_value(PointParams::Block {
                op: BlockOp::Read,
                block_size_bytes: size,
            })
            .unwrap(),
            memory_bytes: size,
            estimated_s: 0.1,
            landmarks: vec![],
        }
    }

    #[test]
    fn run_point_measures_and_reports_allocation_failure() {
        let settings = settings();
        let env =
            hwsurvey_engine::env::RunEnv::read(&hwsurvey_probe::SysRoot::new("/nonexistent-root"));
        let options = hwsurvey_engine::plan::RunOptions::default();
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let ctx = RunContext::new(&settings, &env, &options, &cancel, deadline);
        match DynFamily::run_point(&MemBandwidth, &block_point(64 << 10, 2), &ctx) {
            PointOutcome::Measured(m) => {
                let bw = &m.metrics[0];
                assert_eq!(bw.name, "bandwidth_bytes_per_s");
                assert!(bw.samples.len() >= 2 && bw.samples.len() <= 3);
                assert!(bw.samples.iter().all(|v| v.is_finite() && *v > 0.0));
                assert_eq!(m.pins.len(), 2);
            }
            other => panic!("{other:?}"),
        }
        // 2^60 bytes cannot be had: the point fails with the reason, no bogus bandwidth
        match DynFamily::run_point(&MemBandwidth, &block_point(1 << 60, 1), &ctx) {
            PointOutcome::Failed { error } => assert!(
                error
                    .contains("allocating 1152921504606846976 bytes with page mode default failed"),
                "{error}"
            ),
            other => panic!("{other:?}"),
        }
    }
}

//! Block read/write points of `mem.bandwidth`, and the read kernels by vector width.
//!
//! A read pass sums the block's 64-bit words. Which instruction width reads fastest depends on
//! the machine and on where the block lives (see [`super::trial`]): every read point first runs
//! a short trial of each width this CPU has ([`ReadPath::supported`]), all threads reading
//! together, and measures with the fastest; the choice and the trial's rates are in the
//! point's details (`read_path`, `read_path_trial_bytes_per_s`).

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use hwsurvey_engine::outcome::{Measurement, Metric, PointOutcome};
use hwsurvey_engine::pages::{PageBuffer, PageMode};
use hwsurvey_engine::plan::Point;
use hwsurvey_engine::runner::{consume, RunContext};

use super::trial::PathTrial;
use super::{remember, BlockOp};

/// The instructions a block read pass loads with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadPath {
    /// Plain Rust over `u64` words with 8 accumulators; the compiler vectorises it for the
    /// build's baseline (NEON on aarch64, scalar on sparc64 and e2k). Not used on x86_64,
    /// where [`ReadPath::Sse2`] reads the same way a few % faster.
    Portable,
    /// x86_64 SSE2 `paddq` over 16-byte loads (the x86_64 baseline), 8 loads a loop turn: as
    /// likwid-bench's `load_sse` loads (measured 2026-12-04 on a Zen 4 guest, 64 MiB a
    /// thread: 5-8 % above the compiler's vectorisation of [`ReadPath::Portable`]).
    Sse2,
    /// x86_64 AVX2 `vpaddq` over 32-byte loads, 8 loads a loop turn.
    Avx2,
    /// x86_64 AVX-512F `vpaddq` over 64-byte loads, 4 loads a loop turn.
    Avx512,
}

impl ReadPath {
    /// Every path this CPU runs (`is_x86_feature_detected!`: CPUID and the OS's XSAVE state),
    /// narrowest first: `Sse2` and what of `Avx2`, `Avx512` the CPU has on x86_64,
    /// `[Portable]` elsewhere.
    pub fn supported() -> Vec<ReadPath> {
        #[cfg(not(target_arch = "x86_64"))]
        let v = vec![ReadPath::Portable];
        #[cfg(target_arch = "x86_64")]
        let mut v = vec![ReadPath::Sse2];
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx2") {
                v.push(ReadPath::Avx2);
            }
            if is_x86_feature_detected!("avx512f") {
                v.push(ReadPath::Avx512);
            }
        }
        v
    }

    /// The wrapping sum of `words` read with this path ([`ReadPath::kernel`] called once).
    pub fn sum(self, words: &[u64]) -> u64 {
        (self.kernel())(words)
    }

    /// The function that reads with this path, resolved once (the CPU's features are checked
    /// here, not on every pass of a timed loop: a 1 KiB block is read in nanoseconds). A path
    /// the CPU lacks reads as [`ReadPath::Portable`] (never chosen: [`ReadPath::supported`]
    /// leaves it out).
    pub fn kernel(self) -> ReadFn {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                ReadPath::Sse2 => return x86::sse2,
                ReadPath::Avx2 if is_x86_feature_detected!("avx2") => return x86::avx2,
                ReadPath::Avx512 if is_x86_feature_detected!("avx512f") => return x86::avx512,
                _ => {}
            }
        }
        read_sum
    }
}

/// A read pass: the wrapping sum of the words.
pub type ReadFn = fn(&[u64]) -> u64;

/// Sum of the words, with 8 independent accumulators so the loop vectorises.
#[inline(never)]
pub(super) fn read_sum(words: &[u64]) -> u64 {
    let mut acc = [0u64; 8];
    let chunks = words.chunks_exact(8);
    let rest = chunks.remainder();
    for ch in chunks {
        for (a, w) in acc.iter_mut().zip(ch) {
            *a = a.wrapping_add(*w);
        }
    }
    let mut s = rest.iter().fold(0u64, |s, w| s.wrapping_add(*w));
    for a in acc {
        s = s.wrapping_add(a);
    }
    s
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// [`sum_sse2`]: SSE2 is part of the x86_64 baseline.
    pub(super) fn sse2(words: &[u64]) -> u64 {
        // SAFETY: every x86_64 CPU has SSE2.
        unsafe { sum_sse2(words) }
    }

    /// [`sum_avx2`]; handed out only by `ReadPath::kernel` after it saw AVX2.
    pub(super) fn avx2(words: &[u64]) -> u64 {
        // SAFETY: ReadPath::kernel returns this function only when the CPU has AVX2.
        unsafe { sum_avx2(words) }
    }

    /// [`sum_avx512`]; handed out only by `ReadPath::kernel` after it saw AVX-512F.
    pub(super) fn avx512(words: &[u64]) -> u64 {
        // SAFETY: ReadPath::kernel returns this function only when the CPU has AVX-512F.
        unsafe { sum_avx512(words) }
    }

    /// SSE2 sum: 4 accumulators of 2 words, 8 unaligned 16-byte loads a turn (128 bytes);
    /// the tail of fewer than 16 words goes through [`super::read_sum`].
    #[target_feature(enable = "sse2")]
    #[inline(never)]
    pub unsafe fn sum_sse2(words: &[u64]) -> u64 {
        let body = words.len() / 16 * 16;
        let p = words.as_ptr() as *const __m128i;
        let mut a = [_mm_setzero_si128(); 4];
        let mut i = 0;
        while i < body / 2 {
            // SAFETY: i + 7 < body / 2: every load is inside `words`.
            for k in 0..8 {
                a[k % 4] = _mm_add_epi64(a[k % 4], _mm_loadu_si128(p.add(i + k)));
            }
            i += 8;
        }
        let s = _mm_add_epi64(_mm_add_epi64(a[0], a[1]), _mm_add_epi64(a[2], a[3]));
        let mut lanes = [0u64; 2];
        _mm_storeu_si128(lanes.as_mut_ptr() as *mut __m128i, s);
        lanes
            .iter()
            .fold(super::read_sum(&words[body..]), |x, y| x.wrapping_add(*y))
    }

    /// AVX2 sum: 4 accumulators of 4 words, 8 unaligned 32-byte loads a turn (256 bytes);
    /// the tail of fewer than 32 words goes through [`super::read_sum`].
    #[target_feature(enable = "avx2")]
    #[inline(never)]
    pub unsafe fn sum_avx2(words: &[u64]) -> u64 {
        let body = words.len() / 32 * 32;
        let p = words.as_ptr() as *const __m256i;
        let mut a = [_mm256_setzero_si256(); 4];
        let mut i = 0;
        while i < body / 4 {
            // SAFETY: i + 7 < body / 4: every load is inside `words`.
            for k in 0..8 {
                a[k % 4] = _mm256_add_epi64(a[k % 4], _mm256_loadu_si256(p.add(i + k)));
            }
            i += 8;
        }
        let s = _mm256_add_epi64(_mm256_add_epi64(a[0], a[1]), _mm256_add_epi64(a[2], a[3]));
        let mut lanes = [0u64; 4];
        _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, s);
        lanes
            .iter()
            .fold(super::read_sum(&words[body..]), |x, y| x.wrapping_add(*y))
    }

    /// AVX-512F sum: 4 accumulators of 8 words, 4 unaligned 64-byte loads a turn (256 bytes);
    /// the tail of fewer than 32 words goes through [`super::read_sum`].
    #[target_feature(enable = "avx512f")]
    #[inline(never)]
    pub unsafe fn sum_avx512(words: &[u64]) -> u64 {
        let body = words.len() / 32 * 32;
        let p = words.as_ptr();
        let mut a = [_mm512_setzero_si512(); 4];
        let mut i = 0;
        while i < body {
            // SAFETY: i + 31 < body: every 8-word load is inside `words`.
            for (k, acc) in a.iter_mut().enumerate() {
                *acc = _mm512_add_epi64(*acc, _mm512_loadu_si512(p.add(i + 8 * k) as *const _));
            }
            i += 32;
        }
        let s = _mm512_add_epi64(_mm512_add_epi64(a[0], a[1]), _mm512_add_epi64(a[2], a[3]));
        (_mm512_reduce_add_epi64(s) as u64).wrapping_add(super::read_sum(&words[body..]))
    }
}

#[inline(never)]
fn write_fill(words: &mut [u64], value: u64) {
    for w in words.iter_mut() {
        *w = value;
    }
}

/// A worker's block and the read path all workers agreed on.
struct Block {
    buf: PageBuffer,
    path: ReadPath,
}

/// Runs one block read or write point (see the module docs).
pub(super) fn run_block(
    point: &Point,
    ctx: &RunContext<'_>,
    op: BlockOp,
    size: u64,
) -> PointOutcome {
    let setup_error = Mutex::new(None);
    let paths = PathTrial::new(match op {
        BlockOp::Read => ReadPath::supported(),
        // writes have one path; the trial is for reads
        BlockOp::Write => vec![ReadPath::Portable],
    });
    // each path's function, resolved once: the trial times passes, as the samples do
    let kernels: Vec<(ReadPath, ReadFn)> = ReadPath::supported()
        .into_iter()
        .map(|p| (p, p.kernel()))
        .collect();
    let timed = ctx.measure_parallel(
        point,
        |w| -> Result<Block, String> {
            let mut buf = PageBuffer::allocate(PageMode::Default, size as usize)
                .map_err(|e| remember(&setup_error, e.to_string()))
                .map(|mut b| {
                    b.as_u64_mut()
                        .iter_mut()
                        .enumerate()
                        .for_each(|(i, v)| *v = i as u64 ^ w.index as u64);
                    b
                });
            let pass = buf.as_mut().ok().map(|b| {
                let bytes = b.len_bytes() as f64;
                let kernels = &kernels;
                move |p: ReadPath| {
                    let read = kernels
                        .iter()
                        .find(|(k, _)| *k == p)
                        .map_or(read_sum as ReadFn, |(_, f)| *f);
                    consume(read(consume(&*b.as_u64_mut())));
                    bytes
                }
            });
            let path = paths.choose(w, pass);
            buf.map(|buf| Block { buf, path })
        },
        |state, reps| {
            let Ok(b) = state else { return };
            match op {
                BlockOp::Read => {
                    let words = &*b.buf.as_u64_mut();
                    let read = b.path.kernel();
                    let mut acc = 0u64;
                    for _ in 0..reps {
                        acc = acc.wrapping_add(read(consume(words)));
                    }
                    consume(acc);
                }
                BlockOp::Write => {
                    for r in 0..reps {
                        write_fill(consume(b.buf.as_u64_mut()), r);
                    }
                }
            }
        },
    );
    let timed = match super::timed_or_failed(setup_error, timed) {
        Ok(t) => t,
        Err(failed) => return failed,
    };
    let bytes_per_rep = (size / 8 * 8) as f64;
    let m = Measurement {
        metrics: vec![Metric::bandwidth_bytes_per_s(timed.rates(bytes_per_rep))],
        pins: timed.pins.clone(),
        details: Default::default(),
    }
    .detail("block_size_bytes", size)
    .detail("reps_per_sample", timed.reps_per_sample)
    .detail("sample_s", &timed.sample_s)
    .detail("cut_short", &timed.cut_short);
    let m = match op {
        BlockOp::Write => m,
        BlockOp::Read => m
            .detail("read_path", paths.fastest())
            .detail("read_path_trial_bytes_per_s", paths.rates()),
    };
    PointOutcome::Measured(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_sums_like_the_naive_sum() {
        // 1003 words: a body of 992 (31 turns of 32) and a tail of 11, and short slices that
        // are all tail
        for n in [0usize, 1, 7, 15, 16, 17, 31, 32, 33, 64, 1003] {
            let v: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 3)
                .collect();
            let naive = v.iter().fold(0u64, |s, w| s.wrapping_add(*w));
            for p in ReadPath::supported()
                .into_iter()
                .chain([ReadPath::Portable])
            {
                assert_eq!(p.sum(&v), naive, "{p:?} over {n} words");
            }
        }
    }
}

//! x86_64 AVX2 P+Q generation, after the kernel's avx2x4 (lib/raid6/avx2.c): four 256-bit
//! registers per step (128 bytes); the per-byte high-bit mask comes from a signed compare
//! against zero, the doubling from a byte add. Selected only when
//! `is_x86_feature_detected!("avx2")` holds.

use std::arch::x86_64::{
    __m256i, _mm256_add_epi8, _mm256_and_si256, _mm256_cmpgt_epi8, _mm256_loadu_si256,
    _mm256_set1_epi8, _mm256_setzero_si256, _mm256_storeu_si256, _mm256_xor_si256,
};

/// Bytes per step: four 32-byte vectors.
pub const STEP: usize = 128;

/// Whether this CPU can run [`gen_range_avx2`].
pub fn avx2_available() -> bool {
    is_x86_feature_detected!("avx2")
}

/// Computes P and Q over `[0, to)` with AVX2; `to` must be a multiple of [`STEP`] and every
/// block at least `to` long. Returns `false` (doing nothing) when the CPU lacks AVX2.
pub(crate) fn gen_range(data: &[&[u8]], p: &mut [u8], q: &mut [u8], to: usize) -> bool {
    if !avx2_available() || data.is_empty() {
        return false;
    }
    let ok = to.is_multiple_of(STEP)
        && p.len() >= to
        && q.len() >= to
        && data.iter().all(|d| d.len() >= to);
    if !ok {
        return false;
    }
    // SAFETY: AVX2 was detected above and every block holds at least `to` bytes, which is all
    // the unaligned loads and stores below touch.
    unsafe { gen_range_avx2(data, p, q, to) };
    true
}

#[target_feature(enable = "avx2")]
unsafe fn gen_range_avx2(data: &[&[u8]], p: &mut [u8], q: &mut [u8], to: usize) {
    let z0 = data.len() - 1;
    let poly = _mm256_set1_epi8(0x1d);
    let zero = _mm256_setzero_si256();
    let mut off = 0;
    while off < to {
        let mut wp = [zero; 4];
        let mut wq = [zero; 4];
        for k in 0..4 {
            wp[k] = _mm256_loadu_si256(data[z0].as_ptr().add(off + 32 * k) as *const __m256i);
            wq[k] = wp[k];
        }
        for z in (0..z0).rev() {
            let src = data[z].as_ptr().add(off);
            for k in 0..4 {
                let wd = _mm256_loadu_si256(src.add(32 * k) as *const __m256i);
                // 0xff where the byte's top bit is set (signed byte < 0).
                let mask = _mm256_cmpgt_epi8(zero, wq[k]);
                let dbl = _mm256_add_epi8(wq[k], wq[k]);
                wq[k] = _mm256_xor_si256(_mm256_xor_si256(dbl, _mm256_and_si256(mask, poly)), wd);
                wp[k] = _mm256_xor_si256(wp[k], wd);
            }
        }
        for k in 0..4 {
            _mm256_storeu_si256(p.as_mut_ptr().add(off + 32 * k) as *mut __m256i, wp[k]);
            _mm256_storeu_si256(q.as_mut_ptr().add(off + 32 * k) as *mut __m256i, wq[k]);
        }
        off += STEP;
    }
}

//! x86_64 P+Q generation and two-data recovery, four vector registers per step:
//!
//! - [`Isa::Avx2`] after the kernel's avx2x4 (lib/raid6/avx2.c): 4 x 256 bits (128 bytes); the
//!   per-byte high-bit mask from a signed compare against zero, the doubling from a byte add.
//! - [`Isa::Avx512`] after the kernel's avx512x4 (lib/raid6/avx512.c), AVX-512F + BW: 4 x 512
//!   bits (256 bytes); the mask from VPMOVB2M into a k-register, the reduction a zero-masked
//!   move of 0x1d, both XORs in one VPTERNLOGD.
//! - [`Isa::GfniAvx2`] (VEX, 256 bits) and [`Isa::GfniAvx512`] (EVEX, 512 bits): the
//!   multiplication by g = 2 in one GF2P8AFFINEQB with the bit matrix of "times 2" in the
//!   RAID-6 field ([`super::gf::affine_matrix`]), as ISA-L's `*_gfni` erasure-code kernels do.
//!
//! Recovery of two data blocks (the combine step after the partial syndromes) multiplies by two
//! constants: with PSHUFB nibble tables on the AVX2 and AVX-512 paths (kernel recov_avx2.c,
//! recov_avx512.c), with GF2P8AFFINEQB on the GFNI paths. Each path runs only when
//! `is_x86_feature_detected!` reports every feature it is compiled for.

use std::arch::x86_64::{
    __m128i, __m256i, __m512i, _mm256_add_epi8, _mm256_and_si256, _mm256_broadcastsi128_si256,
    _mm256_cmpgt_epi8, _mm256_gf2p8affine_epi64_epi8, _mm256_loadu_si256, _mm256_set1_epi64x,
    _mm256_set1_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_srli_epi16,
    _mm256_storeu_si256, _mm256_xor_si256, _mm512_add_epi8, _mm512_and_si512,
    _mm512_broadcast_i32x4, _mm512_gf2p8affine_epi64_epi8, _mm512_loadu_si512,
    _mm512_maskz_mov_epi8, _mm512_movepi8_mask, _mm512_set1_epi64, _mm512_set1_epi8,
    _mm512_shuffle_epi8, _mm512_srli_epi16, _mm512_storeu_si512, _mm512_ternarylogic_epi32,
    _mm512_xor_si512, _mm_loadu_si128,
};

use super::gf;
use super::Recov2;

/// An x86_64 vector path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isa {
    /// AVX2, 256-bit.
    Avx2,
    /// AVX-512F + AVX-512BW, 512-bit.
    Avx512,
    /// GFNI with AVX2 (VEX encoding), 256-bit.
    GfniAvx2,
    /// GFNI with AVX-512F + BW (EVEX encoding), 512-bit.
    GfniAvx512,
}

/// Bit matrix of "multiply by 2" (g) in GF(2^8) mod 0x11d, for GF2P8AFFINEQB.
const MAT_MUL2: u64 = gf::affine_matrix(2);

impl Isa {
    /// Whether this CPU has every feature the path is compiled for.
    pub(crate) fn available(self) -> bool {
        let avx512 = || is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw");
        match self {
            Isa::Avx2 => is_x86_feature_detected!("avx2"),
            Isa::Avx512 => avx512(),
            Isa::GfniAvx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("gfni"),
            Isa::GfniAvx512 => avx512() && is_x86_feature_detected!("gfni"),
        }
    }

    /// Bytes per step (four registers).
    pub(crate) fn step(self) -> usize {
        match self {
            Isa::Avx2 | Isa::GfniAvx2 => 128,
            Isa::Avx512 | Isa::GfniAvx512 => 256,
        }
    }
}

/// Computes P and Q over `[0, to)` with `isa`; `to` must be a multiple of [`Isa::step`] and
/// every block at least `to` long. Returns `false` (doing nothing) when the CPU lacks the
/// features or the shapes do not hold.
pub(crate) fn gen_range(isa: Isa, data: &[&[u8]], p: &mut [u8], q: &mut [u8], to: usize) -> bool {
    if !isa.available() || data.is_empty() {
        return false;
    }
    let ok = to.is_multiple_of(isa.step())
        && p.len() >= to
        && q.len() >= to
        && data.iter().all(|d| d.len() >= to);
    if !ok {
        return false;
    }
    // SAFETY: the path's CPU features were detected above and every block holds at least `to`
    // bytes, which is all the unaligned loads and stores below touch.
    unsafe {
        match isa {
            Isa::Avx2 => gen_avx2(data, p, q, to),
            Isa::Avx512 => gen_avx512(data, p, q, to),
            Isa::GfniAvx2 => gen_gfni_avx2(data, p, q, to),
            Isa::GfniAvx512 => gen_gfni_avx512(data, p, q, to),
        }
    }
    true
}

/// The combine step of two-data recovery over `[0, to)` (see [`Recov2`]); same contract as
/// [`gen_range`].
pub(crate) fn recov_2data_range(isa: Isa, r: &mut Recov2<'_>, to: usize) -> bool {
    if !isa.available() || !to.is_multiple_of(isa.step()) || r.len() < to {
        return false;
    }
    // SAFETY: as in gen_range: features detected, all six blocks hold at least `to` bytes.
    unsafe {
        match isa {
            Isa::Avx2 => recov_avx2(r, to),
            Isa::Avx512 => recov_avx512(r, to),
            Isa::GfniAvx2 => recov_gfni_avx2(r, to),
            Isa::GfniAvx512 => recov_gfni_avx512(r, to),
        }
    }
    true
}

#[target_feature(enable = "avx2")]
unsafe fn gen_avx2(data: &[&[u8]], p: &mut [u8], q: &mut [u8], to: usize) {
    let z0 = data.len() - 1;
    let poly = _mm256_set1_epi8(0x1d);
    let zero = _mm256_setzero_si256();
    let mut off = 0;
    while off < to {
        let mut wp = [zero; 4];
        let mut wq = [zero; 4];
        for k in 0..4 {
            wp[k] = _mm256_loadu_si256(data[z0].as_ptr().add(off + 32 * k).cast());
            wq[k] = wp[k];
        }
        for z in (0..z0).rev() {
            let src = data[z].as_ptr().add(off);
            for k in 0..4 {
                let wd = _mm256_loadu_si256(src.add(32 * k).cast());
                // 0xff where the byte's top bit is set (signed byte < 0).
                let mask = _mm256_cmpgt_epi8(zero, wq[k]);
                let dbl = _mm256_add_epi8(wq[k], wq[k]);
                wq[k] = _mm256_xor_si256(_mm256_xor_si256(dbl, _mm256_and_si256(mask, poly)), wd);
                wp[k] = _mm256_xor_si256(wp[k], wd);
            }
        }
        for k in 0..4 {
            _mm256_storeu_si256(p.as_mut_ptr().add(off + 32 * k).cast(), wp[k]);
            _mm256_storeu_si256(q.as_mut_ptr().add(off + 32 * k).cast(), wq[k]);
        }
        off += 128;
    }
}

#[target_feature(enable = "avx2,gfni")]
unsafe fn gen_gfni_avx2(data: &[&[u8]], p: &mut [u8], q: &mut [u8], to: usize) {
    let z0 = data.len() - 1;
    let m2 = _mm256_set1_epi64x(MAT_MUL2 as i64);
    let zero = _mm256_setzero_si256();
    let mut off = 0;
    while off < to {
        let mut wp = [zero; 4];
        let mut wq = [zero; 4];
        for k in 0..4 {
            wp[k] = _mm256_loadu_si256(data[z0].as_ptr().add(off + 32 * k).cast());
            wq[k] = wp[k];
        }
        for z in (0..z0).rev() {
            let src = data[z].as_ptr().add(off);
            for k in 0..4 {
                let wd = _mm256_loadu_si256(src.add(32 * k).cast());
                wq[k] = _mm256_xor_si256(_mm256_gf2p8affine_epi64_epi8::<0>(wq[k], m2), wd);
                wp[k] = _mm256_xor_si256(wp[k], wd);
            }
        }
        for k in 0..4 {
            _mm256_storeu_si256(p.as_mut_ptr().add(off + 32 * k).cast(), wp[k]);
            _mm256_storeu_si256(q.as_mut_ptr().add(off + 32 * k).cast(), wq[k]);
        }
        off += 128;
    }
}

#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn gen_avx512(data: &[&[u8]], p: &mut [u8], q: &mut [u8], to: usize) {
    let z0 = data.len() - 1;
    let poly = _mm512_set1_epi8(0x1d);
    let mut off = 0;
    while off < to {
        let mut wp = [poly; 4];
        let mut wq = [poly; 4];
        for k in 0..4 {
            wp[k] = _mm512_loadu_si512(data[z0].as_ptr().add(off + 64 * k).cast());
            wq[k] = wp[k];
        }
        for z in (0..z0).rev() {
            let src = data[z].as_ptr().add(off);
            for k in 0..4 {
                let wd = _mm512_loadu_si512(src.add(64 * k).cast());
                // k-mask of the bytes whose top bit is set; 0x1d in those bytes, 0 elsewhere.
                let red = _mm512_maskz_mov_epi8(_mm512_movepi8_mask(wq[k]), poly);
                let dbl = _mm512_add_epi8(wq[k], wq[k]);
                // 0x96: three-way XOR.
                wq[k] = _mm512_ternarylogic_epi32::<0x96>(dbl, red, wd);
                wp[k] = _mm512_xor_si512(wp[k], wd);
            }
        }
        for k in 0..4 {
            _mm512_storeu_si512(p.as_mut_ptr().add(off + 64 * k).cast(), wp[k]);
            _mm512_storeu_si512(q.as_mut_ptr().add(off + 64 * k).cast(), wq[k]);
        }
        off += 256;
    }
}

#[target_feature(enable = "avx512f,avx512bw,gfni")]
unsafe fn gen_gfni_avx512(data: &[&[u8]], p: &mut [u8], q: &mut [u8], to: usize) {
    let z0 = data.len() - 1;
    let m2 = _mm512_set1_epi64(MAT_MUL2 as i64);
    let mut off = 0;
    while off < to {
        let mut wp = [m2; 4];
        let mut wq = [m2; 4];
        for k in 0..4 {
            wp[k] = _mm512_loadu_si512(data[z0].as_ptr().add(off + 64 * k).cast());
            wq[k] = wp[k];
        }
        for z in (0..z0).rev() {
            let src = data[z].as_ptr().add(off);
            for k in 0..4 {
                let wd = _mm512_loadu_si512(src.add(64 * k).cast());
                wq[k] = _mm512_xor_si512(_mm512_gf2p8affine_epi64_epi8::<0>(wq[k], m2), wd);
                wp[k] = _mm512_xor_si512(wp[k], wd);
            }
        }
        for k in 0..4 {
            _mm512_storeu_si512(p.as_mut_ptr().add(off + 64 * k).cast(), wp[k]);
            _mm512_storeu_si512(q.as_mut_ptr().add(off + 64 * k).cast(), wq[k]);
        }
        off += 256;
    }
}

/// Loads a 16-byte nibble table.
#[target_feature(enable = "sse2")]
unsafe fn table128(t: &[u8; 16]) -> __m128i {
    _mm_loadu_si128(t.as_ptr().cast())
}

#[target_feature(enable = "avx2")]
unsafe fn recov_avx2(r: &mut Recov2<'_>, to: usize) {
    let pb = gf::nibble_tables(r.pb_coef);
    let qt = gf::nibble_tables(r.q_coef);
    let pb_lo = _mm256_broadcastsi128_si256(table128(&pb[0]));
    let pb_hi = _mm256_broadcastsi128_si256(table128(&pb[1]));
    let q_lo = _mm256_broadcastsi128_si256(table128(&qt[0]));
    let q_hi = _mm256_broadcastsi128_si256(table128(&qt[1]));
    let low4 = _mm256_set1_epi8(0x0f);
    let mul = |lo: __m256i, hi: __m256i, v: __m256i| {
        let l = _mm256_and_si256(v, low4);
        let h = _mm256_and_si256(_mm256_srli_epi16::<4>(v), low4);
        _mm256_xor_si256(_mm256_shuffle_epi8(lo, l), _mm256_shuffle_epi8(hi, h))
    };
    let mut off = 0;
    while off < to {
        for k in 0..4 {
            let o = off + 32 * k;
            let ld = |s: &[u8]| _mm256_loadu_si256(s.as_ptr().add(o).cast::<__m256i>());
            let px = _mm256_xor_si256(ld(r.p), ld(r.dp));
            let qx = _mm256_xor_si256(ld(r.q), ld(r.dq));
            let db = _mm256_xor_si256(mul(pb_lo, pb_hi, px), mul(q_lo, q_hi, qx));
            _mm256_storeu_si256(r.db.as_mut_ptr().add(o).cast(), db);
            _mm256_storeu_si256(r.da.as_mut_ptr().add(o).cast(), _mm256_xor_si256(db, px));
        }
        off += 128;
    }
}

#[target_feature(enable = "avx2,gfni")]
unsafe fn recov_gfni_avx2(r: &mut Recov2<'_>, to: usize) {
    let mpb = _mm256_set1_epi64x(gf::affine_matrix(r.pb_coef) as i64);
    let mq = _mm256_set1_epi64x(gf::affine_matrix(r.q_coef) as i64);
    let mut off = 0;
    while off < to {
        for k in 0..4 {
            let o = off + 32 * k;
            let ld = |s: &[u8]| _mm256_loadu_si256(s.as_ptr().add(o).cast::<__m256i>());
            let px = _mm256_xor_si256(ld(r.p), ld(r.dp));
            let qx = _mm256_xor_si256(ld(r.q), ld(r.dq));
            let db = _mm256_xor_si256(
                _mm256_gf2p8affine_epi64_epi8::<0>(px, mpb),
                _mm256_gf2p8affine_epi64_epi8::<0>(qx, mq),
            );
            _mm256_storeu_si256(r.db.as_mut_ptr().add(o).cast(), db);
            _mm256_storeu_si256(r.da.as_mut_ptr().add(o).cast(), _mm256_xor_si256(db, px));
        }
        off += 128;
    }
}

#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn recov_avx512(r: &mut Recov2<'_>, to: usize) {
    let pb = gf::nibble_tables(r.pb_coef);
    let qt = gf::nibble_tables(r.q_coef);
    let pb_lo = _mm512_broadcast_i32x4(table128(&pb[0]));
    let pb_hi = _mm512_broadcast_i32x4(table128(&pb[1]));
    let q_lo = _mm512_broadcast_i32x4(table128(&qt[0]));
    let q_hi = _mm512_broadcast_i32x4(table128(&qt[1]));
    let low4 = _mm512_set1_epi8(0x0f);
    let mul = |lo: __m512i, hi: __m512i, v: __m512i| {
        let l = _mm512_and_si512(v, low4);
        let h = _mm512_and_si512(_mm512_srli_epi16::<4>(v), low4);
        _mm512_xor_si512(_mm512_shuffle_epi8(lo, l), _mm512_shuffle_epi8(hi, h))
    };
    let mut off = 0;
    while off < to {
        for k in 0..4 {
            let o = off + 64 * k;
            let ld = |s: &[u8]| _mm512_loadu_si512(s.as_ptr().add(o).cast::<__m512i>());
            let px = _mm512_xor_si512(ld(r.p), ld(r.dp));
            let qx = _mm512_xor_si512(ld(r.q), ld(r.dq));
            let db = _mm512_xor_si512(mul(pb_lo, pb_hi, px), mul(q_lo, q_hi, qx));
            _mm512_storeu_si512(r.db.as_mut_ptr().add(o).cast(), db);
            _mm512_storeu_si512(r.da.as_mut_ptr().add(o).cast(), _mm512_xor_si512(db, px));
        }
        off += 256;
    }
}

#[target_feature(enable = "avx512f,avx512bw,gfni")]
unsafe fn recov_gfni_avx512(r: &mut Recov2<'_>, to: usize) {
    let mpb = _mm512_set1_epi64(gf::affine_matrix(r.pb_coef) as i64);
    let mq = _mm512_set1_epi64(gf::affine_matrix(r.q_coef) as i64);
    let mut off = 0;
    while off < to {
        for k in 0..4 {
            let o = off + 64 * k;
            let ld = |s: &[u8]| _mm512_loadu_si512(s.as_ptr().add(o).cast::<__m512i>());
            let px = _mm512_xor_si512(ld(r.p), ld(r.dp));
            let qx = _mm512_xor_si512(ld(r.q), ld(r.dq));
            let db = _mm512_xor_si512(
                _mm512_gf2p8affine_epi64_epi8::<0>(px, mpb),
                _mm512_gf2p8affine_epi64_epi8::<0>(qx, mq),
            );
            _mm512_storeu_si512(r.db.as_mut_ptr().add(o).cast(), db);
            _mm512_storeu_si512(r.da.as_mut_ptr().add(o).cast(), _mm512_xor_si512(db, px));
        }
        off += 256;
    }
}

//! aarch64 NEON P+Q generation, after the kernel's neonx4 (lib/raid6/neon.uc): four 128-bit
//! registers per step (64 bytes); the per-byte high-bit mask comes from an arithmetic shift
//! right by 7. NEON is part of the aarch64 base ISA; it is still checked with
//! `is_aarch64_feature_detected!("neon")`. Two-data recovery multiplies by its two constants
//! with TBL lookups of nibble tables (kernel lib/raid6/recov_neon_inner.c).

use std::arch::aarch64::{
    uint8x16_t, vaddq_u8, vandq_u8, vdupq_n_u8, veorq_u8, vld1q_u8, vqtbl1q_u8,
    vreinterpretq_s8_u8, vreinterpretq_u8_s8, vshrq_n_s8, vshrq_n_u8, vst1q_u8,
};

use super::{gf, Recov2};

/// Bytes per step: four 16-byte vectors.
pub const STEP: usize = 64;

/// Whether this CPU can run the NEON path.
pub fn neon_available() -> bool {
    std::arch::is_aarch64_feature_detected!("neon")
}

/// Computes P and Q over `[0, to)` with NEON; `to` must be a multiple of [`STEP`] and every
/// block at least `to` long. Returns `false` (doing nothing) when NEON is missing.
pub(crate) fn gen_range(data: &[&[u8]], p: &mut [u8], q: &mut [u8], to: usize) -> bool {
    if !neon_available() || data.is_empty() {
        return false;
    }
    let ok = to.is_multiple_of(STEP)
        && p.len() >= to
        && q.len() >= to
        && data.iter().all(|d| d.len() >= to);
    if !ok {
        return false;
    }
    // SAFETY: NEON was detected above and every block holds at least `to` bytes, which is all
    // the loads and stores below touch.
    unsafe { gen_range_neon(data, p, q, to) };
    true
}

#[target_feature(enable = "neon")]
unsafe fn gen_range_neon(data: &[&[u8]], p: &mut [u8], q: &mut [u8], to: usize) {
    let z0 = data.len() - 1;
    let poly = vdupq_n_u8(0x1d);
    let mut off = 0;
    while off < to {
        let mut wp: [uint8x16_t; 4] = [poly; 4];
        let mut wq: [uint8x16_t; 4] = [poly; 4];
        for k in 0..4 {
            wp[k] = vld1q_u8(data[z0].as_ptr().add(off + 16 * k));
            wq[k] = wp[k];
        }
        for z in (0..z0).rev() {
            let src = data[z].as_ptr().add(off);
            for k in 0..4 {
                let wd = vld1q_u8(src.add(16 * k));
                let mask = vreinterpretq_u8_s8(vshrq_n_s8::<7>(vreinterpretq_s8_u8(wq[k])));
                let dbl = vaddq_u8(wq[k], wq[k]);
                wq[k] = veorq_u8(veorq_u8(dbl, vandq_u8(mask, poly)), wd);
                wp[k] = veorq_u8(wp[k], wd);
            }
        }
        for k in 0..4 {
            vst1q_u8(p.as_mut_ptr().add(off + 16 * k), wp[k]);
            vst1q_u8(q.as_mut_ptr().add(off + 16 * k), wq[k]);
        }
        off += STEP;
    }
}

/// The combine step of two-data recovery over `[0, to)` with NEON (see [`Recov2`]); `to` a
/// multiple of [`STEP`] within every block. Returns `false` (doing nothing) otherwise.
pub(crate) fn recov_2data_range(r: &mut Recov2<'_>, to: usize) -> bool {
    if !neon_available() || !to.is_multiple_of(STEP) || r.len() < to {
        return false;
    }
    // SAFETY: NEON detected; the six blocks hold at least `to` bytes.
    unsafe { recov_neon(r, to) };
    true
}

#[target_feature(enable = "neon")]
unsafe fn recov_neon(r: &mut Recov2<'_>, to: usize) {
    let pb = gf::nibble_tables(r.pb_coef);
    let qt = gf::nibble_tables(r.q_coef);
    let (pb_lo, pb_hi) = (vld1q_u8(pb[0].as_ptr()), vld1q_u8(pb[1].as_ptr()));
    let (q_lo, q_hi) = (vld1q_u8(qt[0].as_ptr()), vld1q_u8(qt[1].as_ptr()));
    let low4 = vdupq_n_u8(0x0f);
    let mul = |lo: uint8x16_t, hi: uint8x16_t, v: uint8x16_t| {
        veorq_u8(
            vqtbl1q_u8(lo, vandq_u8(v, low4)),
            vqtbl1q_u8(hi, vshrq_n_u8::<4>(v)),
        )
    };
    let mut off = 0;
    while off < to {
        let px = veorq_u8(
            vld1q_u8(r.p.as_ptr().add(off)),
            vld1q_u8(r.dp.as_ptr().add(off)),
        );
        let qx = veorq_u8(
            vld1q_u8(r.q.as_ptr().add(off)),
            vld1q_u8(r.dq.as_ptr().add(off)),
        );
        let db = veorq_u8(mul(pb_lo, pb_hi, px), mul(q_lo, q_hi, qx));
        vst1q_u8(r.db.as_mut_ptr().add(off), db);
        vst1q_u8(r.da.as_mut_ptr().add(off), veorq_u8(db, px));
        off += 16;
    }
}

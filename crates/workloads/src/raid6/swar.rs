//! Portable P+Q generation with 64-bit words ("SWAR"), after the kernel's int64 variant
//! (lib/raid6/int.uc): eight GF(2^8) lanes per `u64`, four words per step.
//!
//! Endianness-neutral: every operation is confined to its byte lane (shifts are masked per
//! byte and the high-bit mask is built by arithmetic that never carries across lanes), so
//! loading with `from_ne_bytes` and storing with `to_ne_bytes` gives the same bytes on
//! little- and big-endian machines (tested under qemu-sparc64).

const LANES_80: u64 = 0x8080_8080_8080_8080;
const LANES_FE: u64 = 0xfefe_fefe_fefe_fefe;
const LANES_1D: u64 = 0x1d1d_1d1d_1d1d_1d1d;

/// 0xff in every byte lane whose top bit is set, 0x00 elsewhere.
#[inline(always)]
fn high_bit_mask(v: u64) -> u64 {
    let h = v & LANES_80;
    (h << 1).wrapping_sub(h >> 7)
}

/// Multiplies each byte lane by g = 2 in GF(2^8) mod 0x11d.
#[inline(always)]
pub(crate) fn mul2_lanes(v: u64) -> u64 {
    ((v << 1) & LANES_FE) ^ (high_bit_mask(v) & LANES_1D)
}

/// Bytes processed per step (four 64-bit words).
pub const STEP: usize = 32;

#[inline(always)]
fn load4(s: &[u8]) -> [u64; 4] {
    let mut w = [0u64; 4];
    for (i, c) in s.chunks_exact(8).take(4).enumerate() {
        let mut b = [0u8; 8];
        b.copy_from_slice(c);
        w[i] = u64::from_ne_bytes(b);
    }
    w
}

#[inline(always)]
fn store4(s: &mut [u8], w: [u64; 4]) {
    for (c, v) in s.chunks_exact_mut(8).zip(w) {
        c.copy_from_slice(&v.to_ne_bytes());
    }
}

/// Computes P and Q over the bytes `[from, to)` of every block; `to - from` must be a multiple
/// of [`STEP`] and all blocks at least `to` long (checked by the caller).
pub(crate) fn gen_range(data: &[&[u8]], p: &mut [u8], q: &mut [u8], from: usize, to: usize) {
    let Some((top, rest)) = data.split_last() else {
        return;
    };
    let mut off = from;
    while off + STEP <= to {
        let mut wp = load4(&top[off..off + STEP]);
        let mut wq = wp;
        for d in rest.iter().rev() {
            let wd = load4(&d[off..off + STEP]);
            for k in 0..4 {
                wp[k] ^= wd[k];
                wq[k] = mul2_lanes(wq[k]) ^ wd[k];
            }
        }
        store4(&mut p[off..off + STEP], wp);
        store4(&mut q[off..off + STEP], wq);
        off += STEP;
    }
}

/// Bytewise Horner gen for the tail `[from, len)` that is shorter than a vector step.
pub(crate) fn gen_tail_bytes(data: &[&[u8]], p: &mut [u8], q: &mut [u8], from: usize) {
    let Some((top, rest)) = data.split_last() else {
        return;
    };
    for k in from..p.len() {
        let mut wp = top[k];
        let mut wq = wp;
        for d in rest.iter().rev() {
            wp ^= d[k];
            wq = super::gf::mul(wq, 2) ^ d[k];
        }
        p[k] = wp;
        q[k] = wq;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul2_lanes_matches_field_per_byte() {
        // Every byte value in every lane position, on this machine's byte order.
        for v in 0..=255u8 {
            for lane in 0..8 {
                let mut b = [0x5au8; 8];
                b[lane] = v;
                let out = mul2_lanes(u64::from_ne_bytes(b)).to_ne_bytes();
                for (i, &o) in out.iter().enumerate() {
                    let want = super::super::gf::mul(b[i], 2);
                    assert_eq!(o, want, "value {v:#04x} lane {lane} byte {i}");
                }
            }
        }
    }
}

//! RAID-6 P+Q syndromes and recovery, as Linux lib/raid6 defines them.
//!
//! A stripe has `n` data blocks D_0..D_{n-1} of equal length plus two parity blocks:
//! P = D_0 ⊕ D_1 ⊕ … ⊕ D_{n-1} and Q = g^0·D_0 ⊕ g^1·D_1 ⊕ … ⊕ g^{n-1}·D_{n-1} over GF(2^8)
//! with polynomial 0x11d and generator g = 2, computed by the Horner scheme from the highest data
//! block down (H. Peter Anvin, "The mathematics of RAID-6", 2004; lib/raid6/int.uc). Any two lost
//! blocks of a stripe can be rebuilt ([`recover`]).
//!
//! Generation paths ([`Algorithm`]): a portable 64-bit SWAR path that builds on every target and
//! byte order, AVX2 on x86_64 and NEON on aarch64, chosen at run time ([`Algorithm::best`]) and
//! recorded by the kernel's names. Every path is checked against [`reference`], an independent
//! bytewise implementation.

pub mod gf;
pub mod kmsg;
#[cfg(target_arch = "aarch64")]
mod neon;
pub mod reference;
mod swar;
#[cfg(target_arch = "x86_64")]
mod x86;

use serde::{Deserialize, Serialize};

/// Most data blocks a stripe may have: the coefficients g^0..g^{n-1} must be distinct, and g has
/// order 255.
pub const MAX_DATA_BLOCKS: usize = 255;
/// Fewest data blocks (the kernel's minimum RAID-6 array has 4 disks: 2 data + P + Q).
pub const MIN_DATA_BLOCKS: usize = 2;

/// Errors of RAID-6 generation and recovery: the stripe's shape is not one this code accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Raid6Error {
    /// Data block count outside [`MIN_DATA_BLOCKS`]..=[`MAX_DATA_BLOCKS`].
    #[error("RAID-6 stripe: expected {MIN_DATA_BLOCKS}..={MAX_DATA_BLOCKS} data blocks, got {data_blocks}")]
    DataBlockCount {
        /// The count given.
        data_blocks: usize,
    },
    /// Blocks of one stripe differ in length.
    #[error(
        "RAID-6 stripe: block {block} is {got_bytes} bytes, expected {expected_bytes} like block 0"
    )]
    LengthMismatch {
        /// Index of the offending block (data 0..n, then P = n, Q = n+1).
        block: usize,
        /// Length of block 0, in bytes.
        expected_bytes: usize,
        /// Length found, in bytes.
        got_bytes: usize,
    },
    /// The two lost blocks are not two distinct indices of the stripe.
    #[error("RAID-6 recovery: lost blocks ({a}, {b}) must be two distinct indices below {blocks}")]
    BadLostPair {
        /// First index given.
        a: usize,
        /// Second index given.
        b: usize,
        /// Blocks in the stripe (data + 2).
        blocks: usize,
    },
    /// The requested generation path does not run on this CPU or build.
    #[error("RAID-6 algorithm {name} is not available on this CPU")]
    Unavailable {
        /// Kernel-style name of the path.
        name: &'static str,
    },
}

/// A P+Q generation path. Names follow the kernel's (`int64x4`, `avx2x4`, `neonx4`), so a result
/// can be read beside the kernel's own boot-time choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// Portable: eight byte lanes per 64-bit word, four words per step; every target.
    Int64x4,
    /// x86_64 AVX2: four 256-bit registers per step.
    Avx2x4,
    /// aarch64 NEON: four 128-bit registers per step.
    Neonx4,
}

impl Algorithm {
    /// Every path this crate has, runnable or not.
    pub const ALL: [Algorithm; 3] = [Algorithm::Int64x4, Algorithm::Avx2x4, Algorithm::Neonx4];

    /// The kernel-style name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Int64x4 => "int64x4",
            Algorithm::Avx2x4 => "avx2x4",
            Algorithm::Neonx4 => "neonx4",
        }
    }

    /// Whether the path runs here (compiled for this architecture and detected on this CPU).
    pub fn is_available(self) -> bool {
        match self {
            Algorithm::Int64x4 => true,
            #[cfg(target_arch = "x86_64")]
            Algorithm::Avx2x4 => x86::avx2_available(),
            #[cfg(target_arch = "aarch64")]
            Algorithm::Neonx4 => neon::neon_available(),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The runnable paths, portable first.
    pub fn available() -> Vec<Algorithm> {
        Self::ALL.into_iter().filter(|a| a.is_available()).collect()
    }

    /// The widest runnable path (SIMD when detected, otherwise [`Algorithm::Int64x4`]).
    pub fn best() -> Algorithm {
        Self::available()
            .last()
            .copied()
            .unwrap_or(Algorithm::Int64x4)
    }
}

fn check_stripe(data: &[&[u8]], p: &[u8], q: &[u8]) -> Result<usize, Raid6Error> {
    let n = data.len();
    if !(MIN_DATA_BLOCKS..=MAX_DATA_BLOCKS).contains(&n) {
        return Err(Raid6Error::DataBlockCount { data_blocks: n });
    }
    let len = data[0].len();
    let lens = data.iter().map(|d| d.len()).chain([p.len(), q.len()]);
    for (block, got) in lens.enumerate() {
        if got != len {
            return Err(Raid6Error::LengthMismatch {
                block,
                expected_bytes: len,
                got_bytes: got,
            });
        }
    }
    Ok(len)
}

/// Computes P and Q of the data blocks with `alg`.
///
/// Shapes: `data` holds n = 2..=255 blocks, all of `p`'s and `q`'s length (any length; vector
/// paths handle the multiple of their step, the portable code the rest).
///
/// Errors: [`Raid6Error::DataBlockCount`], [`Raid6Error::LengthMismatch`],
/// [`Raid6Error::Unavailable`] when `alg` cannot run on this CPU.
pub fn gen_syndrome(
    alg: Algorithm,
    data: &[&[u8]],
    p: &mut [u8],
    q: &mut [u8],
) -> Result<(), Raid6Error> {
    let len = check_stripe(data, p, q)?;
    if !alg.is_available() {
        return Err(Raid6Error::Unavailable { name: alg.name() });
    }
    let vec_done = match alg {
        Algorithm::Int64x4 => 0,
        #[cfg(target_arch = "x86_64")]
        Algorithm::Avx2x4 => {
            let to = len - len % x86::STEP;
            if x86::gen_range(data, p, q, to) {
                to
            } else {
                return Err(Raid6Error::Unavailable { name: alg.name() });
            }
        }
        #[cfg(target_arch = "aarch64")]
        Algorithm::Neonx4 => {
            let to = len - len % neon::STEP;
            if neon::gen_range(data, p, q, to) {
                to
            } else {
                return Err(Raid6Error::Unavailable { name: alg.name() });
            }
        }
        #[allow(unreachable_patterns)]
        _ => return Err(Raid6Error::Unavailable { name: alg.name() }),
    };
    let swar_to = vec_done + (len - vec_done) / swar::STEP * swar::STEP;
    swar::gen_range(data, p, q, vec_done, swar_to);
    swar::gen_tail_bytes(data, p, q, swar_to);
    Ok(())
}

/// Which blocks a recovery rebuilt, in the kernel's terms (lib/raid6/recov.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LostPair {
    /// Two data blocks (`raid6_2data_recov`).
    TwoData,
    /// One data block and P (`raid6_datap_recov`).
    DataAndP,
    /// One data block and Q (rebuilt from P, then Q regenerated).
    DataAndQ,
    /// P and Q (both regenerated).
    PAndQ,
}

/// Rebuilds blocks `a` and `b` of `stripe` in place; their old contents are ignored.
///
/// Shapes: `stripe` = n data blocks then P then Q (indices n and n+1), all of one length;
/// `a` != `b`, both < n+2, in any order. Generation inside uses `alg`.
///
/// Errors: as [`gen_syndrome`], plus [`Raid6Error::BadLostPair`].
pub fn recover(
    alg: Algorithm,
    stripe: &mut [&mut [u8]],
    a: usize,
    b: usize,
) -> Result<LostPair, Raid6Error> {
    let blocks = stripe.len();
    let (a, b) = (a.min(b), a.max(b));
    if a == b || b >= blocks || blocks < MIN_DATA_BLOCKS + 2 {
        return Err(Raid6Error::BadLostPair { a, b, blocks });
    }
    let n = blocks - 2;
    let (data, pq) = stripe.split_at_mut(n);
    let [p, q] = pq else {
        return Err(Raid6Error::BadLostPair { a, b, blocks });
    };
    {
        let view: Vec<&[u8]> = data.iter().map(|d| &**d).collect();
        check_stripe(&view, p, q)?;
    }
    let len = p.len();
    if a == n {
        // P and Q lost: regenerate both.
        let view: Vec<&[u8]> = data.iter().map(|d| &**d).collect();
        gen_syndrome(alg, &view, p, q)?;
        return Ok(LostPair::PAndQ);
    }
    if b == n + 1 {
        // Data a and Q lost: D_a = P ⊕ (other data), then Q regenerated.
        data[a].copy_from_slice(p);
        let (lo, rest) = data.split_at_mut(a);
        let (da, hi) = rest
            .split_first_mut()
            .ok_or(Raid6Error::BadLostPair { a, b, blocks })?;
        for other in lo.iter().chain(hi.iter()) {
            for (x, y) in da.iter_mut().zip(other.iter()) {
                *x ^= *y;
            }
        }
        let view: Vec<&[u8]> = data.iter().map(|d| &**d).collect();
        let mut scratch = vec![0u8; len];
        gen_syndrome(alg, &view, &mut scratch, q)?;
        return Ok(LostPair::DataAndQ);
    }
    // From here at least one data block is lost: zero the lost data, compute the partial
    // syndromes dp, dq of the survivors.
    data[a].fill(0);
    if b < n {
        data[b].fill(0);
    }
    let mut dp = vec![0u8; len];
    let mut dq = vec![0u8; len];
    {
        let view: Vec<&[u8]> = data.iter().map(|d| &**d).collect();
        gen_syndrome(alg, &view, &mut dp, &mut dq)?;
    }
    if b == n {
        // Data a and P lost: D_a = (Q ⊕ dq) · g^{-a}; then P = dp ⊕ D_a.
        let qmul = &gf::MUL[gf::inv(gf::pow2(a)) as usize];
        for k in 0..len {
            let da = qmul[(q[k] ^ dq[k]) as usize];
            data[a][k] = da;
            p[k] = dp[k] ^ da;
        }
        return Ok(LostPair::DataAndP);
    }
    // Two data blocks a < b: with px = P ⊕ dp = D_a ⊕ D_b and qx = Q ⊕ dq = g^a·D_a ⊕ g^b·D_b,
    // D_b = px·(g^{b-a} ⊕ 1)^{-1} ⊕ qx·(g^a ⊕ g^b)^{-1}, D_a = D_b ⊕ px.
    let pbmul = &gf::MUL[gf::inv(gf::pow2(b - a) ^ 1) as usize];
    let qmul = &gf::MUL[gf::inv(gf::pow2(a) ^ gf::pow2(b)) as usize];
    let (lo, hi) = data.split_at_mut(b);
    let da = &mut lo[a];
    let db = &mut hi[0];
    for k in 0..len {
        let px = p[k] ^ dp[k];
        let qx = qmul[(q[k] ^ dq[k]) as usize];
        let y = pbmul[px as usize] ^ qx;
        db[k] = y;
        da[k] = y ^ px;
    }
    Ok(LostPair::TwoData)
}

/// A small deterministic byte generator (xorshift64*) for filling benchmark and test stripes.
pub fn fill_pseudo_random(buf: &mut [u8], seed: u64) {
    let mut s = seed | 1;
    for chunk in buf.chunks_mut(8) {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        let v = s.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

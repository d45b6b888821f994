//! RAID-6 P+Q syndromes and recovery, as Linux lib/raid6 defines them.
//!
//! A stripe has `n` data blocks D_0..D_{n-1} of equal length plus two parity blocks:
//! P = D_0 ⊕ D_1 ⊕ … ⊕ D_{n-1} and Q = g^0·D_0 ⊕ g^1·D_1 ⊕ … ⊕ g^{n-1}·D_{n-1} over GF(2^8)
//! with polynomial 0x11d and generator g = 2, computed by the Horner scheme from the highest data
//! block down (H. Peter Anvin, "The mathematics of RAID-6", 2004; lib/raid6/int.uc). Any two lost
//! blocks of a stripe can be rebuilt ([`recover`]).
//!
//! Generation paths ([`Algorithm`]): a portable 64-bit SWAR path that builds on every target and
//! byte order, AVX2, AVX-512BW and GFNI (256- and 512-bit) on x86_64, NEON on aarch64; the
//! fastest runnable one is chosen at run time by timing them all ([`select_fastest`], as the
//! kernel's raid6_select_algo does) and recorded by the kernel's names. Two-data recovery
//! multiplies by constants with the same path's vector unit (byte shuffles of nibble tables, or
//! GF2P8AFFINEQB). Every path is checked against [`reference`], an independent bytewise
//! implementation.

pub mod gf;
pub mod kmsg;
#[cfg(target_arch = "aarch64")]
mod neon;
pub mod reference;
mod select;
mod swar;
#[cfg(target_arch = "x86_64")]
mod x86;

use serde::{Deserialize, Serialize};

pub use select::{
    select_fastest, time_paths, unbuilt_paths, PathFigure, Selection, UnbuiltPath,
    SELECTION_MAX_CHUNK_BYTES, SELECTION_ROUNDS, SELECTION_ROUND_MIN,
};

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

/// A P+Q generation path. Names follow the kernel's where it has the path (`int64x4`,
/// `avx2x4`, `avx512x4`, `neonx4`), so a result can be read beside the kernel's own boot-time
/// choice; the GFNI paths have no kernel counterpart (ISA-L's erasure codes use GFNI).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// Portable: eight byte lanes per 64-bit word, four words per step; every target.
    Int64x4,
    /// aarch64 NEON: four 128-bit registers per step.
    Neonx4,
    /// x86_64 AVX2: four 256-bit registers per step.
    Avx2x4,
    /// x86_64 GFNI + AVX2 (VEX): four 256-bit registers, times 2 by GF2P8AFFINEQB.
    GfniAvx2x4,
    /// x86_64 AVX-512F + AVX-512BW: four 512-bit registers per step.
    Avx512x4,
    /// x86_64 GFNI + AVX-512F/BW (EVEX): four 512-bit registers, times 2 by GF2P8AFFINEQB.
    GfniAvx512x4,
}

impl Algorithm {
    /// Every path this crate has, runnable or not, portable first, then by register width.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::Int64x4,
        Algorithm::Neonx4,
        Algorithm::Avx2x4,
        Algorithm::GfniAvx2x4,
        Algorithm::Avx512x4,
        Algorithm::GfniAvx512x4,
    ];

    /// The kernel-style name (also the serialized form).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Int64x4 => "int64x4",
            Algorithm::Neonx4 => "neonx4",
            Algorithm::Avx2x4 => "avx2x4",
            Algorithm::GfniAvx2x4 => "gfni_avx2x4",
            Algorithm::Avx512x4 => "avx512x4",
            Algorithm::GfniAvx512x4 => "gfni_avx512x4",
        }
    }

    /// The CPU features the path needs, as `/proc/cpuinfo` spells them (empty: none).
    pub fn cpu_features(self) -> &'static [&'static str] {
        match self {
            Algorithm::Int64x4 => &[],
            Algorithm::Neonx4 => &["asimd"],
            Algorithm::Avx2x4 => &["avx2"],
            Algorithm::GfniAvx2x4 => &["avx2", "gfni"],
            Algorithm::Avx512x4 => &["avx512f", "avx512bw"],
            Algorithm::GfniAvx512x4 => &["avx512f", "avx512bw", "gfni"],
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn isa(self) -> Option<x86::Isa> {
        match self {
            Algorithm::Avx2x4 => Some(x86::Isa::Avx2),
            Algorithm::GfniAvx2x4 => Some(x86::Isa::GfniAvx2),
            Algorithm::Avx512x4 => Some(x86::Isa::Avx512),
            Algorithm::GfniAvx512x4 => Some(x86::Isa::GfniAvx512),
            _ => None,
        }
    }

    /// Whether the path runs here (compiled for this architecture and detected on this CPU).
    pub fn is_available(self) -> bool {
        match self {
            Algorithm::Int64x4 => true,
            #[cfg(target_arch = "aarch64")]
            Algorithm::Neonx4 => neon::neon_available(),
            #[cfg(target_arch = "x86_64")]
            a => a.isa().is_some_and(|i| i.available()),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The runnable paths, portable first, then by register width.
    pub fn available() -> Vec<Algorithm> {
        Self::ALL.into_iter().filter(|a| a.is_available()).collect()
    }

    /// The widest runnable path by the fixed order of [`Algorithm::ALL`] (no timing). The
    /// benchmark's choice is [`select_fastest`], which times them.
    pub fn widest() -> Algorithm {
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
        #[cfg(target_arch = "aarch64")]
        Algorithm::Neonx4 => {
            let to = len - len % neon::STEP;
            if neon::gen_range(data, p, q, to) {
                to
            } else {
                return Err(Raid6Error::Unavailable { name: alg.name() });
            }
        }
        #[cfg(target_arch = "x86_64")]
        a => match a.isa() {
            Some(isa) => {
                let to = len - len % isa.step();
                if x86::gen_range(isa, data, p, q, to) {
                    to
                } else {
                    return Err(Raid6Error::Unavailable { name: alg.name() });
                }
            }
            None => return Err(Raid6Error::Unavailable { name: alg.name() }),
        },
        #[cfg(not(target_arch = "x86_64"))]
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
    let (lo, hi) = data.split_at_mut(b);
    let mut r = Recov2 {
        p,
        dp: &dp,
        q,
        dq: &dq,
        da: &mut *lo[a],
        db: &mut *hi[0],
        pb_coef: gf::inv(gf::pow2(b - a) ^ 1),
        q_coef: gf::inv(gf::pow2(a) ^ gf::pow2(b)),
    };
    let vec_done = recov_2data_vector(alg, &mut r, len);
    r.combine_bytes(vec_done);
    Ok(LostPair::TwoData)
}

/// The combine step of two-data recovery, on blocks of one length: with px = P ⊕ dp and
/// qx = Q ⊕ dq, D_b = pb_coef·px ⊕ q_coef·qx and D_a = D_b ⊕ px (kernel lib/raid6/recov.c).
pub(crate) struct Recov2<'a> {
    /// The stripe's P.
    pub(crate) p: &'a [u8],
    /// P of the survivors (lost blocks zeroed).
    pub(crate) dp: &'a [u8],
    /// The stripe's Q.
    pub(crate) q: &'a [u8],
    /// Q of the survivors.
    pub(crate) dq: &'a [u8],
    /// Output: lost block a (the lower index).
    pub(crate) da: &'a mut [u8],
    /// Output: lost block b.
    pub(crate) db: &'a mut [u8],
    /// (g^{b-a} ⊕ 1)^{-1}.
    pub(crate) pb_coef: u8,
    /// (g^a ⊕ g^b)^{-1}.
    pub(crate) q_coef: u8,
}

impl Recov2<'_> {
    /// Bytes every one of the six blocks holds.
    pub(crate) fn len(&self) -> usize {
        [
            self.p.len(),
            self.dp.len(),
            self.q.len(),
            self.dq.len(),
            self.da.len(),
            self.db.len(),
        ]
        .into_iter()
        .min()
        .unwrap_or(0)
    }

    /// The combine step bytewise over `[from, len)` with the 64 KiB product table.
    fn combine_bytes(&mut self, from: usize) {
        let pbmul = &gf::MUL[self.pb_coef as usize];
        let qmul = &gf::MUL[self.q_coef as usize];
        for k in from..self.len() {
            let px = self.p[k] ^ self.dp[k];
            let y = pbmul[px as usize] ^ qmul[(self.q[k] ^ self.dq[k]) as usize];
            self.db[k] = y;
            self.da[k] = y ^ px;
        }
    }
}

/// Runs the vector combine of `alg` over the largest multiple of its step; returns where it
/// stopped (0 when the path has no vector combine here).
#[allow(unused_variables)]
fn recov_2data_vector(alg: Algorithm, r: &mut Recov2<'_>, len: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(isa) = alg.isa() {
        let to = len - len % isa.step();
        if x86::recov_2data_range(isa, r, to) {
            return to;
        }
    }
    #[cfg(target_arch = "aarch64")]
    if alg == Algorithm::Neonx4 {
        let to = len - len % neon::STEP;
        if neon::recov_2data_range(r, to) {
            return to;
        }
    }
    0
}

/// A zeroed block of bytes whose first byte sits on a 64-byte boundary (a cache line, one
/// AVX-512 register), as the kernel's pages and ISA-L's buffers are: on x86_64 an AVX-512 load
/// that straddles two lines costs a third or more of the generation rate, so stripes built for
/// timing use these. Dereferences to `[u8]` of the length asked for.
pub struct AlignedBlock {
    buf: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBlock {
    /// Alignment of the first byte, bytes.
    pub const ALIGN: usize = 64;

    /// `len_bytes` zero bytes, 64-byte aligned.
    pub fn zeroed(len_bytes: usize) -> Self {
        let buf = vec![0u8; len_bytes + Self::ALIGN - 1];
        // align_offset on a u8 pointer always succeeds; the fallback keeps it total.
        let start = match buf.as_ptr().align_offset(Self::ALIGN) {
            o if o < Self::ALIGN => o,
            _ => 0,
        };
        Self {
            buf,
            start,
            len: len_bytes,
        }
    }
}

impl std::ops::Deref for AlignedBlock {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf[self.start..self.start + self.len]
    }
}

impl std::ops::DerefMut for AlignedBlock {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..self.start + self.len]
    }
}

impl Clone for AlignedBlock {
    /// A new aligned block with the same bytes (a derived clone could lose the alignment).
    fn clone(&self) -> Self {
        let mut b = Self::zeroed(self.len);
        b.copy_from_slice(self);
        b
    }
}

impl std::fmt::Debug for AlignedBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBlock({} bytes)", self.len)
    }
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

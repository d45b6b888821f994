//! SplitMix64: a tiny, fast, seedable generator for picking keys inside measured loops.
//!
//! Source: Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014;
//! constants as in Vigna's public-domain `splitmix64.c`. Not cryptographic. Used here rather
//! than `rand` because the generator runs inside the timed loop and must cost a few cycles.

/// The SplitMix64 finaliser: a bijection on `u64` that scatters nearby inputs.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A SplitMix64 stream.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A stream starting from `seed`; equal seeds give equal streams.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next value of the stream.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.state)
    }
}

/// Maps `r` uniformly onto `0..n` (Lemire's multiply-shift, without the rejection step: the bias
/// is below n / 2^64). Returns 0 when `n` is 0.
#[inline]
pub fn below(r: u64, n: u64) -> u64 {
    ((u128::from(r) * u128::from(n)) >> 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_first_outputs_of_seed_zero() {
        // Reference values of splitmix64.c with x = 0.
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(g.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn below_stays_in_range() {
        let mut g = SplitMix64::new(7);
        for _ in 0..10_000 {
            assert!(below(g.next_u64(), 13) < 13);
        }
        assert_eq!(below(u64::MAX, 1), 0);
    }
}

//! The portable add chain (sparc64, e2k and every architecture without an assembly chain):
//! Rust adds whose addend goes through `black_box`, so the compiler can neither fold the chain
//! into one multiply nor vectorise it. Each add carries a load of the addend beside it, and the
//! adds per cycle are not known: the figure is adds per second, never a clock.

use super::{ChainMethod, ADDS_PER_BLOCK};

/// This chain's method.
pub const METHOD: ChainMethod = ChainMethod {
    name: "portable_add_chain",
    reliable: false,
    caveat: Some(
        "portable Rust add chain (no inline assembly for this architecture in stable Rust): \
         adds per cycle unknown, so adds per second is not a clock",
    ),
};

/// `blocks` x 64 dependent adds of `step` onto `seed`.
pub fn add_chain(blocks: u64, seed: u64, step: u64) -> u64 {
    let mut x = seed;
    for _ in 0..blocks {
        for _ in 0..ADDS_PER_BLOCK {
            x = x.wrapping_add(std::hint::black_box(step));
        }
    }
    x
}

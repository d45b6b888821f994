//! The x86_64 add chain: `add r64, r64` repeated [`super::ADDS_PER_BLOCK`] times per loop
//! iteration (1-cycle latency on every x86_64 core, one add per cycle).

use super::ChainMethod;

/// This chain's method.
pub const METHOD: ChainMethod = ChainMethod {
    name: "asm_add_chain_x86_64",
    reliable: true,
    caveat: None,
};

/// `blocks` x 64 dependent adds of `step` onto `seed`.
pub fn add_chain(blocks: u64, seed: u64, step: u64) -> u64 {
    let mut x = seed;
    if blocks == 0 {
        return x;
    }
    // SAFETY: register-only arithmetic and a backward branch to the local label; no memory, no
    // stack; the flags are clobbered (no `preserves_flags`).
    unsafe {
        core::arch::asm!(
            "2:",
            ".rept 64",
            "add {x}, {s}",
            ".endr",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            s = in(reg) step,
            n = inout(reg) blocks => _,
            options(nomem, nostack),
        );
    }
    x
}

//! The effective core clock, measured as lmbench's `mhz` does: a chain of dependent integer
//! adds, each waiting for the one before it, runs one add per cycle on every core hwsurvey
//! targets with an assembly chain, so adds per second of wall time (`CLOCK_MONOTONIC`, through
//! `Instant`) is the clock the core ran at while busy.
//!
//! One chain per architecture, each in its own module, chosen by `cfg(target_arch)`:
//!
//! | arch | chain | add latency assumed | source of the assumption |
//! |---|---|---|---|
//! | x86_64 | `x86_64.rs`: `add r64, r64` x [`ADDS_PER_BLOCK`], then `dec`/`jnz` | 1 cycle | Intel optimization manual and Agner Fog's tables: 1 cycle from the P6 on (Core 2, Nehalem ... Golden Cove, Atom/E-cores), AMD K8 ... Zen 5. A register addend, not an immediate: Golden Cove's renamer folds chains of small-immediate adds (several per cycle), which would read as a clock above the real one |
//! | aarch64 | `aarch64.rs`: `add x, x, x` x [`ADDS_PER_BLOCK`], then `subs`/`b.ne` | 1 cycle | Arm software optimization guides (Cortex-A53/A55/A72/A76, Neoverse N1/N2/V1: ALU latency 1); Apple and ThunderX2 also 1 |
//! | sparc64, e2k, others | `portable.rs`: Rust adds with an opaque addend (`black_box`) | unknown | stable Rust has no inline assembly for sparc64 (experimental) nor a backend for e2k; the compiled loop carries a load per add, so adds per cycle depend on the core. On CMT SPARC (T1-T5, M7) the hardware threads of a core share one pipeline, and e2k is a VLIW core whose compiler (lcc) schedules statically: the figure is marked unreliable and is never shown as a clock |
//!
//! Loop overhead: the counter decrement and branch are independent of the chain and issue
//! beside it on out-of-order cores; with 64 adds per block the chain is 64 of every 66
//! instructions. Hardware threads sharing a core (x86 SMT, two per core) each get their own
//! chain; a core with at least two integer ALUs runs both at one add per cycle.

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
/// Compiled everywhere (its tests run on every target); used where no assembly chain exists.
pub mod portable;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;

/// Dependent adds per loop iteration (block) of every chain.
pub const ADDS_PER_BLOCK: u64 = 64;

/// How this build's chain is made, and whether its adds per second is a clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainMethod {
    /// Stable name stored in result files: `asm_add_chain_x86_64`, `asm_add_chain_aarch64`,
    /// `portable_add_chain`.
    pub name: &'static str,
    /// Whether one add per cycle holds (an assembly chain on an architecture whose integer add
    /// has 1-cycle latency): only then is the figure a clock.
    pub reliable: bool,
    /// Why not, when not reliable.
    pub caveat: Option<&'static str>,
}

/// The chain of this build.
pub fn method() -> ChainMethod {
    imp::METHOD
}

/// Runs `blocks` x [`ADDS_PER_BLOCK`] dependent adds of `step` onto `seed` and returns the sum
/// (`seed + blocks x 64 x step`, wrapping): the result proves every add ran.
#[inline(never)]
pub fn add_chain(blocks: u64, seed: u64, step: u64) -> u64 {
    imp::add_chain(blocks, seed, step)
}

/// What [`add_chain`] must return.
pub fn expected(blocks: u64, seed: u64, step: u64) -> u64 {
    seed.wrapping_add(blocks.wrapping_mul(ADDS_PER_BLOCK).wrapping_mul(step))
}

#[cfg(target_arch = "aarch64")]
use aarch64 as imp;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
use portable as imp;
#[cfg(target_arch = "x86_64")]
use x86_64 as imp;

/// One timed run of the chain on the calling thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainRun {
    /// Adds executed.
    pub adds: u64,
    /// Wall time, seconds (monotonic clock).
    pub elapsed_s: f64,
    /// The thread's own CPU time over the run, seconds (`CLOCK_THREAD_CPUTIME_ID`): the wall
    /// time less what the scheduler gave to other tasks. `None` in builds without the `sys`
    /// feature.
    pub cpu_s: Option<f64>,
}

impl ChainRun {
    /// Adds per second of wall time: the clock in Hz where the method is reliable and the
    /// thread had its CPU to itself.
    pub fn hz(&self) -> f64 {
        self.adds as f64 / self.elapsed_s.max(1e-12)
    }

    /// Adds per second the thread was on its CPU ([`ChainRun::cpu_s`], never more than the
    /// wall time): the clock while it ran, even when other tasks shared the CPU. Falls back
    /// to [`ChainRun::hz`] without a thread CPU clock.
    pub fn on_cpu_hz(&self) -> f64 {
        match self.cpu_s {
            Some(c) if c > 0.0 => self.adds as f64 / c.min(self.elapsed_s).max(1e-12),
            _ => self.hz(),
        }
    }

    /// Share of the wall time the thread was on its CPU (1 without a thread CPU clock).
    pub fn on_cpu_fraction(&self) -> f64 {
        match self.cpu_s {
            Some(c) if self.elapsed_s > 0.0 => (c / self.elapsed_s).min(1.0),
            _ => 1.0,
        }
    }
}

/// The calling thread's CPU time, seconds (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`).
#[cfg(feature = "sys")]
pub fn thread_cpu_s() -> Option<f64> {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .ok()
        .map(|t| t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9)
}

/// Without the `sys` feature: no thread CPU clock.
#[cfg(not(feature = "sys"))]
pub fn thread_cpu_s() -> Option<f64> {
    None
}

/// Errors of a chain run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// The chain returned another sum than [`expected`]: an add was lost or folded away.
    #[error("add chain of {blocks} blocks returned {got:#x}, expected {want:#x}")]
    WrongSum {
        /// Blocks run.
        blocks: u64,
        /// Returned.
        got: u64,
        /// Expected.
        want: u64,
    },
}

/// Times `blocks` blocks of the chain on the calling thread, checking the sum.
///
/// Errors: [`ChainError::WrongSum`] when the sum is not [`expected`].
pub fn timed(blocks: u64) -> Result<ChainRun, ChainError> {
    let seed = std::hint::black_box(0x9E37_79B9_7F4A_7C15u64);
    let step = std::hint::black_box(3u64);
    let c0 = thread_cpu_s();
    let t0 = std::time::Instant::now();
    let got = add_chain(blocks, seed, step);
    let elapsed_s = t0.elapsed().as_secs_f64();
    let cpu_s = c0.and_then(|a| thread_cpu_s().map(|b| b - a));
    let want = expected(blocks, seed, step);
    if got != want {
        return Err(ChainError::WrongSum { blocks, got, want });
    }
    Ok(ChainRun {
        adds: blocks.saturating_mul(ADDS_PER_BLOCK),
        elapsed_s,
        cpu_s,
    })
}

/// Blocks for a run of about `seconds`: doubles from 1024 blocks until a run takes >= 1/8 of
/// `seconds` (this is also the warm-up that wakes a core from a low-power state), then
/// extrapolates. At least 1 block.
///
/// Errors: as [`timed`].
pub fn calibrate(seconds: f64) -> Result<u64, ChainError> {
    let mut blocks = 1024u64;
    loop {
        let r = timed(blocks)?;
        if r.elapsed_s * 8.0 >= seconds || blocks >= u64::MAX / 4 {
            let per_block = r.elapsed_s / blocks as f64;
            return Ok(((seconds / per_block.max(1e-15)).ceil() as u64).max(1));
        }
        blocks *= 2;
    }
}

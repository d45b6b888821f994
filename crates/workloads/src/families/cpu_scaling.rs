//! `cpu.scaling`: an integer kernel and a floating-point kernel whose work is the same on every
//! architecture, run on 1..N threads.
//!
//! Both kernels are scalar recurrences: each iteration depends on the previous one, so no
//! compiler can vectorise them across iterations. Inside an iteration the FP kernel is one
//! dependent chain (nothing to pack side by side); the integer kernel's four chains have
//! different shapes. The instruction mix is thus the same with SSE2, AVX-512, NEON or no SIMD:
//! the x86_64 release disassembly of the loops holds only scalar `imul`/`add`/`xor`/`shr`/`rol`
//! and `mulsd`/`addsd`/`subsd` (checked by hand when the kernels were written).
//!
//! Floating point uses only IEEE-754 double multiply, add and subtract without fused
//! multiply-add (Rust never contracts `a * b + c`), so results are bit-identical on every
//! architecture and endianness: each worker's result is compared with the single-threaded
//! reference of the same length ([`check`]), which also keeps the work from being deleted.
//!
//! Each point records `ops_per_s` over all threads; the derived single-thread score, peak,
//! parallel efficiency and knee (fewest threads reaching 90% of peak) of a kernel's curve are
//! `hwsurvey_stats::scaling::analyse` over the per-thread-count medians.

use std::hint::black_box;

/// Operations per integer-kernel iteration, by kind: 2 multiplies, 3 adds/subtracts,
/// 5 xors, 5 shifts and 2 rotates (17 integer operations on 64-bit values; the loop counter
/// is not counted).
pub const INT_OPS_PER_ITER: u64 = 17;

/// Floating-point operations per FP-kernel iteration: 2 multiplies and 2 adds/subtracts on f64,
/// one dependent chain.
pub const FP_FLOPS_PER_ITER: u64 = 4;

/// Which kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kernel {
    /// [`int_kernel`].
    Integer,
    /// [`fp_kernel`].
    FloatingPoint,
}

impl Kernel {
    /// Runs the kernel for `iters` iterations from `seed` and returns its checked result
    /// (the FP state as IEEE bits).
    pub fn run(self, iters: u64, seed: u64) -> u64 {
        match self {
            Kernel::Integer => int_kernel(iters, seed),
            Kernel::FloatingPoint => fp_kernel(iters, seed),
        }
    }

    /// Stable name used in result files: `integer`, `floating_point`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Integer => "integer",
            Kernel::FloatingPoint => "floating_point",
        }
    }

    /// Operations one iteration performs (see [`INT_OPS_PER_ITER`], [`FP_FLOPS_PER_ITER`]).
    pub fn ops_per_iter(self) -> u64 {
        match self {
            Kernel::Integer => INT_OPS_PER_ITER,
            Kernel::FloatingPoint => FP_FLOPS_PER_ITER,
        }
    }
}

/// State of the integer kernel: four 64-bit chains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntState {
    /// Multiplicative congruential chain (Knuth MMIX constants).
    pub a: u64,
    /// xorshift chain (Marsaglia 2003, 13/7/17).
    pub b: u64,
    /// Rotate-add-xor chain.
    pub c: u64,
    /// Xor-multiply chain fed by `a`.
    pub d: u64,
}

impl IntState {
    /// Initial state from a seed (non-zero `b` so the xorshift chain never sticks at 0).
    pub fn from_seed(seed: u64) -> Self {
        IntState {
            a: seed,
            b: seed | 1,
            c: seed.rotate_left(32) ^ 0x5851_F42D_4C95_7F2D,
            d: !seed,
        }
    }

    /// One iteration `i` of the kernel (the definition [`int_kernel`] must match).
    pub fn step(&mut self, i: u64) {
        self.a = self
            .a
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.b ^= self.b << 13;
        self.b ^= self.b >> 7;
        self.b ^= self.b << 17;
        self.c = self.c.rotate_left(11).wrapping_add(i) ^ 0x2545_F491_4F6C_DD1D;
        self.d = (self.d ^ (self.a >> 29))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(7);
        self.d = self.d.wrapping_sub(self.c >> 3);
    }

    /// Folds the state into the checked result.
    pub fn digest(&self) -> u64 {
        self.a ^ self.b.rotate_left(16) ^ self.c.rotate_left(32) ^ self.d.rotate_left(48)
    }
}

/// Integer kernel: `iters` iterations of [`IntState::step`] from [`IntState::from_seed`];
/// returns [`IntState::digest`]. Four chains of different shapes: multiply-add, xorshift,
/// rotate-add-xor and xor-multiply-rotate-subtract.
#[inline(never)]
pub fn int_kernel(iters: u64, seed: u64) -> u64 {
    let mut s = IntState::from_seed(black_box(seed));
    let iters = black_box(iters);
    let mut i = 0;
    while i < iters {
        s.step(i);
        i += 1;
    }
    s.digest()
}

/// State of the FP kernel: one harmonic oscillator integrated with symplectic Euler steps,
/// which keep the orbit bounded for any number of steps (the map is area-preserving), so the
/// values never overflow, underflow to subnormals, or settle at a fixed point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FpState {
    /// Position.
    pub x: f64,
    /// Momentum.
    pub y: f64,
}

/// Step of the oscillator (radians per iteration, about).
pub const FP_E1: f64 = 0.001_953_125 * 1.618_033_988_749_895;

impl FpState {
    /// Initial state from a seed: amplitude in [1, 2).
    pub fn from_seed(seed: u64) -> Self {
        FpState {
            x: 1.0 + (seed >> 11) as f64 / (1u64 << 53) as f64,
            y: 0.0,
        }
    }

    /// One iteration (the definition [`fp_kernel`] must match): position, then momentum from
    /// the new position. Every operation depends on the one before, so there are no two
    /// independent operations an SLP vectoriser could pack (two oscillators side by side were
    /// packed into `mulpd`/`addpd` by LLVM on x86_64: independent chains are not safe).
    pub fn step(&mut self) {
        self.x -= FP_E1 * self.y;
        self.y += FP_E1 * self.x;
    }

    /// Folds the state into the checked result: the IEEE bits of `3x + y`.
    pub fn digest(&self) -> u64 {
        (self.x * 3.0 + self.y).to_bits()
    }
}

/// FP kernel: `iters` iterations of [`FpState::step`] from [`FpState::from_seed`]; returns
/// [`FpState::digest`] (IEEE-754 bits of an f64).
#[inline(never)]
pub fn fp_kernel(iters: u64, seed: u64) -> u64 {
    let mut s = FpState::from_seed(black_box(seed));
    let iters = black_box(iters);
    let mut i = 0;
    while i < iters {
        s.step();
        i += 1;
    }
    s.digest()
}

/// A worker's result differs from the reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kernel} kernel, {iters} iterations, seed {seed:#x}: got {got:#018x}, reference {expected:#018x}")]
pub struct CheckError {
    /// Kernel name.
    pub kernel: &'static str,
    /// Iterations.
    pub iters: u64,
    /// Seed.
    pub seed: u64,
    /// Worker's result.
    pub got: u64,
    /// Reference result.
    pub expected: u64,
}

/// Compares a worker's result with the reference computed once for the same kernel, length and
/// seed. A mismatch means a miscompiled kernel, a broken CPU, or a corrupted run.
pub fn check(
    kernel: Kernel,
    iters: u64,
    seed: u64,
    got: u64,
    expected: u64,
) -> Result<(), CheckError> {
    if got == expected {
        Ok(())
    } else {
        Err(CheckError {
            kernel: kernel.name(),
            iters,
            seed,
            got,
            expected,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The family: plan and run over the engine.

use serde::{Deserialize, Serialize};

use hwsurvey_engine::outcome::{Measurement, Metric, PointOutcome};
use hwsurvey_engine::plan::{FamilyPoints, PlanInput, Point};
use hwsurvey_engine::profile::{CheckedParams, Checker, ProfileError};
use hwsurvey_engine::runner::{consume, RunContext};
use hwsurvey_engine::Family;

/// Seed of every kernel run (part of the profile's definition).
pub const KERNEL_SEED: u64 = 0x0123_4567_89AB_CDEF;

/// The family.
pub struct CpuScaling;

/// `[families."cpu.scaling".params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Kernels to run (non-empty, no duplicates).
    pub kernels: Vec<Kernel>,
    /// Kernel iterations per repetition of one worker (the runner repeats to fill a sample);
    /// 1..=1_000_000_000.
    pub iterations_per_rep: u64,
}

impl CheckedParams for Params {
    /// The ranges in the field docs.
    fn check(&self, c: &Checker<'_>) -> Result<(), ProfileError> {
        c.list("kernels", &self.kernels)?;
        c.int(
            "iterations_per_rep",
            self.iterations_per_rep,
            1,
            1_000_000_000,
            "",
        )
    }
}

/// Parameters of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointParams {
    /// Kernel.
    pub kernel: Kernel,
    /// Iterations per repetition per worker.
    pub iterations_per_rep: u64,
    /// Operations per iteration (integer ops or flops).
    pub ops_per_iter: u64,
    /// Seed.
    pub seed: u64,
}

impl Family for CpuScaling {
    type Params = Params;
    type PointParams = PointParams;

    fn id(&self) -> &'static str {
        "cpu.scaling"
    }

    fn describe(&self) -> &'static str {
        "scalar integer and floating-point kernels, identical on every architecture, vs threads"
    }

    fn plan(&self, p: Params, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        let mut out = FamilyPoints::default();
        for &kernel in &p.kernels {
            for rung in input.ladder(false) {
                let params = PointParams {
                    kernel,
                    iterations_per_rep: p.iterations_per_rep.max(1),
                    ops_per_iter: kernel.ops_per_iter(),
                    seed: KERNEL_SEED,
                };
                out.points.push(input.rung_point(
                    format!("{}/{}", kernel.name(), rung.id_part()),
                    &rung,
                    &params,
                    0,
                ));
            }
        }
        Ok(out)
    }

    fn run_point(&self, params: PointParams, point: &Point, ctx: &RunContext<'_>) -> PointOutcome {
        let (kernel, iters, seed) = (params.kernel, params.iterations_per_rep, params.seed);
        let expected = kernel.run(iters, seed);
        let mismatch: std::sync::Mutex<Option<CheckError>> = std::sync::Mutex::new(None);
        let timed = ctx.measure_parallel(
            point,
            |_w| (),
            |_state, reps| {
                for _ in 0..reps {
                    let got = consume(kernel.run(iters, seed));
                    if let Err(e) = check(kernel, iters, seed, got, expected) {
                        if let Ok(mut g) = mismatch.lock() {
                            g.get_or_insert(e);
                        }
                    }
                }
            },
        );
        let timed = match timed {
            Ok(t) => t,
            Err(e) => {
                return PointOutcome::Failed {
                    error: e.to_string(),
                }
            }
        };
        if let Some(e) = mismatch.into_inner().ok().flatten() {
            return PointOutcome::Failed {
                error: e.to_string(),
            };
        }
        let ops = timed.rates((iters * kernel.ops_per_iter()) as f64);
        let iterations = timed.rates(iters as f64);
        PointOutcome::Measured(
            Measurement {
                metrics: vec![
                    Metric::throughput("ops_per_s", ops),
                    Metric::throughput("iterations_per_s", iterations),
                ],
                pins: timed.pins,
                ..Default::default()
            }
            .detail("ops_per_iter", kernel.ops_per_iter())
            .detail("checked_result", format!("{expected:#018x}"))
            .detail("cut_short", &timed.cut_short),
        )
    }
}

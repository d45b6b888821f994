//! cpu.scaling and sync.contention kernels produce their checked results.

use std::time::Duration;

use hwsurvey_workloads::families::cpu_scaling::{
    check, fp_kernel, int_kernel, FpState, IntState, Kernel,
};
use hwsurvey_workloads::families::sync_contention::{run, Primitive};

#[test]
fn int_kernel_matches_its_step_definition() {
    for (iters, seed) in [(0u64, 1u64), (1, 1), (1000, 42), (12_345, 0xDEAD_BEEF)] {
        let mut s = IntState::from_seed(seed);
        for i in 0..iters {
            s.step(i);
        }
        assert_eq!(int_kernel(iters, seed), s.digest(), "iters {iters}");
    }
}

#[test]
fn fp_kernel_matches_its_step_definition_and_stays_bounded() {
    let seed = 7;
    let mut s = FpState::from_seed(seed);
    for n in 1..=200_000u64 {
        s.step();
        if n % 50_000 == 0 {
            assert_eq!(fp_kernel(n, seed), s.digest(), "after {n} iterations");
        }
    }
    // symplectic Euler keeps the oscillator on a bounded ellipse (amplitude starts in [1, 2))
    for v in [s.x, s.y] {
        assert!(v.is_finite() && v.abs() < 4.0, "{v}");
    }
    // and keeps moving: no fixed point
    assert_ne!(fp_kernel(200_000, seed), fp_kernel(200_001, seed));
}

#[test]
fn results_are_the_same_on_every_architecture() {
    // Integer wrapping arithmetic and IEEE-754 f64 without FMA are exact: these digests come
    // from an independent C transcription of the two kernels (gcc -O2 -ffp-contract=off on
    // x86_64) and must come out the same on aarch64 and big-endian sparc64 (qemu).
    assert_eq!(int_kernel(1_000_000, 1), INT_DIGEST_1M_SEED1);
    assert_eq!(fp_kernel(1_000_000, 1), FP_DIGEST_1M_SEED1);
}

const INT_DIGEST_1M_SEED1: u64 = 16917536978982370396;
const FP_DIGEST_1M_SEED1: u64 = 4613287653468574658;

#[test]
fn check_reports_mismatch() {
    let good = Kernel::Integer.run(5000, 3);
    assert!(check(Kernel::Integer, 5000, 3, good, good).is_ok());
    let e = check(Kernel::Integer, 5000, 3, good ^ 1, good).unwrap_err();
    assert!(
        e.to_string().contains("integer kernel, 5000 iterations"),
        "{e}"
    );
}

#[test]
fn contention_counts_every_increment() {
    for primitive in [Primitive::Mutex, Primitive::AtomicIncrement] {
        let c = run(primitive, 3, Duration::from_millis(50), &|_| {}).unwrap();
        assert_eq!(c.threads, 3);
        assert_eq!(c.per_thread_increments.len(), 3);
        assert_eq!(
            c.total_increments,
            c.per_thread_increments.iter().sum::<u64>()
        );
        assert!(c.total_increments > 0 && c.increments_per_s > 0.0);
    }
    assert!(run(Primitive::Mutex, 0, Duration::from_millis(1), &|_| {}).is_err());
}

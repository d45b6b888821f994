//! The soak subset of the profile (`hwsurvey run --soak DURATION`, the burn-in a team runs on
//! new hardware before it accepts it): what is repeated round after round while the hardware
//! watch reads EDAC, AER, the links, the throttle counters and the kernel log.
//!
//! The subset ([`FAMILIES`]): `mem.bandwidth`'s STREAM points (Copy, Scale, Add, Triad at every
//! thread count: the memory under its heaviest load, where a DIMM that corrects errors only
//! under load shows them), `cpu.scaling` (integer and floating-point kernels at every thread
//! count: every core busy, where a package throttles) and `cpu.clock` (the clock at 1 thread,
//! one thread per core and every CPU: a clock falling round after round is throttling without
//! a counter). Block bandwidth, latency, c2c, sync, service, storage and RAID are left out:
//! they load the memory or the CPUs less, or write to devices.

use hwsurvey_engine::plan::Plan;

/// The families a soak repeats (they run in the profile's order).
pub const FAMILIES: [&str; 3] = ["mem.bandwidth", "cpu.scaling", "cpu.clock"];

/// Whether point `id` of `family` is in the soak subset: every point of [`FAMILIES`], of
/// `mem.bandwidth` the STREAM ones (`stream.*`) only.
pub fn in_subset(family: &str, id: &str) -> bool {
    FAMILIES.contains(&family) && (family != "mem.bandwidth" || id.starts_with("stream."))
}

/// `plan` (built with `--only` the [`FAMILIES`]) cut to the subset: other points dropped
/// from their families (named among its skipped points, as `not in the soak subset`), each
/// family's estimate and allowance the sum of its points'.
pub fn subset(mut plan: Plan) -> Plan {
    plan.families
        .retain(|f| FAMILIES.contains(&f.family.as_str()));
    for f in &mut plan.families {
        let (keep, drop): (Vec<_>, Vec<_>) = f
            .points
            .drain(..)
            .partition(|p| in_subset(&p.family, &p.id));
        f.points = keep;
        f.skipped.extend(
            drop.into_iter()
                .map(|p| hwsurvey_engine::plan::SkippedPoint {
                    family: p.family,
                    id: p.id,
                    params: p.params,
                    reason: "not in the soak subset (STREAM points only)".into(),
                }),
        );
        f.estimated_s = f.points.iter().map(|p| p.estimated_s).sum();
        f.budget_s = f.points.iter().map(|p| p.allowance_s()).sum();
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_points_and_the_cpu_families_only() {
        assert!(in_subset("mem.bandwidth", "stream.triad/threads=2"));
        assert!(!in_subset("mem.bandwidth", "read/block=4096/threads=1"));
        assert!(in_subset("cpu.scaling", "integer/threads=1"));
        assert!(in_subset("cpu.clock", "add_chain/threads=1"));
        assert!(!in_subset("mem.latency", "base/full_random/ws=1MiB"));
    }
}

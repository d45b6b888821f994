//! Scaling analysis of a throughput-vs-threads curve: single-thread score, peak, parallel
//! efficiency and the knee.
//!
//! Input points are `(threads, throughput)` with throughput in any "higher is better" unit
//! (ops/s, bytes/s); the analysis keeps that unit.
//!
//! The figure a reader compares between machines is the efficiency at all threads
//! ([`Scaling::efficiency_at_all_threads`]): it means the same on every machine. The efficiency
//! at the peak is 100 % for any curve whose peak is its 1-thread point, however far it falls
//! after it (1 thread 10 ops/s, 8 threads 8 ops/s: 100 % at the peak, 10 % at all threads);
//! such a curve does not scale ([`Scaling::does_not_scale`]).

use serde::{Deserialize, Serialize};

/// One point of a scaling curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScalingPoint {
    /// Worker threads.
    pub threads: usize,
    /// Throughput at that thread count (median of its sample), caller's unit.
    pub throughput: f64,
}

/// What a scaling curve says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaling {
    /// Throughput at 1 thread, if measured.
    pub single_thread: Option<f64>,
    /// Highest throughput on the curve.
    pub peak: f64,
    /// Thread count of the peak.
    pub peak_threads: usize,
    /// `peak / (peak_threads * single_thread)`; absent without a 1-thread point or when the
    /// single-thread figure is 0. Not the figure to compare between machines: it is 100 % for
    /// any curve that peaks at 1 thread ([`Scaling::efficiency_at_all_threads`] is).
    pub efficiency_at_peak: Option<f64>,
    /// The knee: the fewest threads reaching `knee_fraction` (0.9) of the peak.
    pub knee_threads: usize,
    /// Fraction of peak defining the knee (0.9).
    pub knee_fraction: f64,
    /// The largest thread count on the curve ("all threads"; 0 in values written before
    /// 2026-12-03).
    #[serde(default)]
    pub all_threads: usize,
    /// Efficiency there: the highest throughput at `all_threads` / (`all_threads` x
    /// single_thread); absent as `efficiency_at_peak` is. Below `efficiency_at_peak` when the
    /// curve falls after its peak: 1.30 G ops/s at 1 thread and 1.28 G at 2 is 100 % at the
    /// peak and 49 % at all threads.
    #[serde(default)]
    pub efficiency_at_all_threads: Option<f64>,
}

/// Fraction of the peak that defines the knee.
pub const KNEE_FRACTION: f64 = 0.9;

impl Scaling {
    /// The curve has more than one thread count and its peak is its 1-thread point: adding
    /// threads never raised the throughput. Its efficiency at the peak (100 %) says nothing;
    /// [`Scaling::efficiency_at_all_threads`] says how far it falls.
    pub fn does_not_scale(&self) -> bool {
        self.peak_threads == 1 && self.all_threads > 1
    }
}

/// Analyses a curve; `None` when it has no point with a finite, positive throughput.
/// Points may come in any order; non-finite throughputs are ignored.
pub fn analyse(points: &[ScalingPoint]) -> Option<Scaling> {
    let mut pts: Vec<ScalingPoint> = points
        .iter()
        .copied()
        .filter(|p| p.throughput.is_finite() && p.threads > 0)
        .collect();
    pts.sort_by_key(|p| p.threads);
    let peak_point = pts
        .iter()
        .copied()
        .filter(|p| p.throughput > 0.0)
        .max_by(|a, b| a.throughput.total_cmp(&b.throughput))?;
    let single = pts.iter().find(|p| p.threads == 1).map(|p| p.throughput);
    let knee = pts
        .iter()
        .find(|p| p.throughput >= KNEE_FRACTION * peak_point.throughput)
        .map(|p| p.threads)
        .unwrap_or(peak_point.threads);
    let efficiency_of = |p: ScalingPoint| {
        single
            .filter(|s| *s > 0.0)
            .map(|s| p.throughput / (p.threads as f64 * s))
    };
    let efficiency = efficiency_of(peak_point);
    // Sorted by threads: the last point has the most; the best of the points there.
    let all_threads = pts.last().map_or(peak_point.threads, |p| p.threads);
    let at_all = pts
        .iter()
        .copied()
        .filter(|p| p.threads == all_threads)
        .max_by(|a, b| a.throughput.total_cmp(&b.throughput));
    Some(Scaling {
        single_thread: single,
        peak: peak_point.throughput,
        peak_threads: peak_point.threads,
        efficiency_at_peak: efficiency,
        knee_threads: knee,
        knee_fraction: KNEE_FRACTION,
        all_threads,
        efficiency_at_all_threads: at_all.and_then(efficiency_of),
    })
}

/// Parallel efficiency at each point: `throughput / (threads * single_thread)`; absent
/// without a positive 1-thread point.
pub fn efficiencies(points: &[ScalingPoint]) -> Vec<(usize, Option<f64>)> {
    let single = points
        .iter()
        .find(|p| p.threads == 1)
        .map(|p| p.throughput)
        .filter(|s| *s > 0.0 && s.is_finite());
    points
        .iter()
        .map(|p| {
            (
                p.threads,
                single.map(|s| p.throughput / (p.threads as f64 * s)),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pts(v: &[(usize, f64)]) -> Vec<ScalingPoint> {
        v.iter()
            .map(|&(threads, throughput)| ScalingPoint {
                threads,
                throughput,
            })
            .collect()
    }

    #[test]
    fn knee_and_efficiency() {
        // 1: 10, 2: 19, 4: 30, 8: 32 -> peak 32 at 8, 90% = 28.8 reached at 4.
        let s = analyse(&pts(&[(4, 30.0), (1, 10.0), (2, 19.0), (8, 32.0)])).unwrap();
        assert_eq!(s.single_thread, Some(10.0));
        assert_eq!(s.peak, 32.0);
        assert_eq!(s.peak_threads, 8);
        assert_eq!(s.knee_threads, 4);
        assert!((s.efficiency_at_peak.unwrap() - 0.4).abs() < 1e-12);
        let e = efficiencies(&pts(&[(1, 10.0), (2, 19.0)]));
        assert_eq!(e[1].0, 2);
        assert!((e[1].1.unwrap() - 0.95).abs() < 1e-12);
    }

    /// The breaker's quick run (2026-12-03): fp 1.301 G ops/s at 1 thread, 1.277 G at 2. The
    /// peak is at 1 thread (100 % there); at all threads the efficiency is 49 %.
    #[test]
    fn a_curve_that_falls_after_its_peak_keeps_its_all_thread_efficiency() {
        let s = analyse(&pts(&[(1, 1.301e9), (2, 1.277e9)])).unwrap();
        assert_eq!((s.peak_threads, s.knee_threads, s.all_threads), (1, 1, 2));
        assert_eq!(s.efficiency_at_peak, Some(1.0));
        let all = s.efficiency_at_all_threads.unwrap();
        assert!((all - 1.277 / 2.602).abs() < 1e-12, "{all}");
        // Where the peak is at all threads the two are one; of two points at the largest
        // count (a plain rung and a landmark), the better one counts.
        let s = analyse(&pts(&[(1, 10.0), (4, 30.0), (8, 32.0), (8, 24.0)])).unwrap();
        assert_eq!(s.all_threads, 8);
        assert_eq!(s.efficiency_at_all_threads, s.efficiency_at_peak);
        assert_eq!(
            analyse(&pts(&[(2, 5.0)]))
                .unwrap()
                .efficiency_at_all_threads,
            None
        );
    }

    #[test]
    fn no_single_thread_point() {
        let s = analyse(&pts(&[(2, 5.0), (4, 6.0)])).unwrap();
        assert_eq!(s.single_thread, None);
        assert_eq!(s.efficiency_at_peak, None);
        assert_eq!(s.knee_threads, 4);
        assert!(analyse(&pts(&[(1, f64::NAN)])).is_none());
        assert!(analyse(&[]).is_none());
    }

    /// Issue 49 item 2: a curve that peaks at 1 thread of 8 is 100 % efficient at its peak,
    /// and that is not the figure to compare: at all 8 threads it is 10 %, and it does not
    /// scale.
    #[test]
    fn a_curve_peaking_at_one_thread_of_eight_does_not_scale() {
        let s = analyse(&pts(&[(1, 10.0), (2, 9.0), (4, 8.5), (8, 8.0)])).unwrap();
        assert_eq!((s.peak_threads, s.knee_threads, s.all_threads), (1, 1, 8));
        assert_eq!(s.efficiency_at_peak, Some(1.0));
        assert_eq!(s.efficiency_at_all_threads, Some(0.1));
        assert!(s.does_not_scale());
        // a curve that scales, and a single point, are not "does not scale"
        let s = analyse(&pts(&[(1, 10.0), (8, 60.0)])).unwrap();
        assert!(!s.does_not_scale());
        assert_eq!(s.efficiency_at_all_threads, Some(0.75));
        assert!(!analyse(&pts(&[(1, 10.0)])).unwrap().does_not_scale());
    }

    proptest! {
        /// The efficiency at all threads never exceeds the efficiency at the peak: the peak
        /// is the highest throughput, and all threads are at least the peak's threads.
        #[test]
        fn all_thread_efficiency_not_above_the_peak_efficiency(
            v in prop::collection::vec((1usize..64, 0.1f64..1e9), 1..20),
            single in 0.1f64..1e9,
        ) {
            let mut v = v;
            v.push((1, single));
            let s = analyse(&pts(&v)).unwrap();
            let (all, peak) = (s.efficiency_at_all_threads.unwrap(), s.efficiency_at_peak.unwrap());
            prop_assert!(all <= peak * (1.0 + 1e-12), "{all} > {peak}");
            prop_assert_eq!(s.does_not_scale(), s.peak_threads == 1 && s.all_threads > 1);
        }

        #[test]
        fn knee_not_after_peak(v in prop::collection::vec((1usize..64, 0.1f64..1e9), 1..20)) {
            let s = analyse(&pts(&v)).unwrap();
            prop_assert!(s.knee_threads <= s.peak_threads);
            prop_assert!(v.iter().all(|p| p.1 <= s.peak));
        }
    }
}

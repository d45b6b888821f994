//! Latency histograms: HdrHistogram (Gil Tene's High Dynamic Range Histogram, the `hdrhistogram`
//! crate) with [`SIGNIFICANT_FIGURES`] significant decimal digits over 1 ns ..
//! [`HIGHEST_TRACKABLE_NS`].
//!
//! Error bound: with `d` significant figures every recorded value shares its bucket only with
//! values within a relative distance of 10^-d, and a quantile is reported as the highest value
//! of its bucket, so a reported quantile `q` and the exact order statistic `x` of the same rank
//! (rank = ceil(quantile x count), at least 1) satisfy `x <= q <= x + x * 10^-d` (exact below
//! 2 x 10^d ns). [`LatencySummary::quantile_relative_error_bound`] records 10^-d.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Significant decimal digits kept by every latency histogram.
pub const SIGNIFICANT_FIGURES: u8 = 3;
/// Highest latency tracked exactly (60 s); longer samples are clamped to it and counted in
/// [`LatencySummary::clamped_samples`].
pub const HIGHEST_TRACKABLE_NS: u64 = 60_000_000_000;

/// Records latencies in nanoseconds.
#[derive(Debug, Clone)]
pub struct LatencyRecorder {
    hist: Histogram<u64>,
    clamped: u64,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyRecorder {
    /// An empty recorder.
    pub fn new() -> Self {
        let hist = Histogram::new_with_bounds(1, HIGHEST_TRACKABLE_NS, SIGNIFICANT_FIGURES)
            .unwrap_or_else(|_| unreachable!("constant bounds are valid"));
        Self { hist, clamped: 0 }
    }

    /// Records one latency; 0 is recorded as 1 ns (the histogram's floor), values above
    /// [`HIGHEST_TRACKABLE_NS`] as that value (and counted as clamped).
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        if ns > HIGHEST_TRACKABLE_NS {
            self.clamped += 1;
        }
        self.hist.saturating_record(ns.max(1));
    }

    /// Adds all samples of `other`.
    pub fn merge(&mut self, other: &LatencyRecorder) {
        // Same bounds on both sides, so `add` cannot fail; saturate rather than panic anyway.
        if self.hist.add(&other.hist).is_err() {
            for v in other.hist.iter_recorded() {
                let _ = self
                    .hist
                    .record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        self.clamped += other.clamped;
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Number of samples whose bucket lies at or above `ns` (within the error bound of `ns`).
    pub fn count_at_or_above_ns(&self, ns: u64) -> u64 {
        let lowest = self.hist.lowest_equivalent(ns.max(1));
        self.hist
            .iter_recorded()
            .filter(|v| v.value_iterated_to() >= lowest)
            .map(|v| v.count_at_value())
            .sum()
    }

    /// Value at `quantile` (0..=1) in ns, `None` when empty.
    pub fn quantile_ns(&self, quantile: f64) -> Option<u64> {
        (!self.hist.is_empty()).then(|| self.hist.value_at_quantile(quantile))
    }

    /// Summary, `None` when no sample was recorded.
    pub fn summary(&self) -> Option<LatencySummary> {
        if self.hist.is_empty() {
            return None;
        }
        Some(LatencySummary {
            samples: self.hist.len(),
            min_ns: self.hist.min(),
            p50_ns: self.hist.value_at_quantile(0.50),
            p90_ns: self.hist.value_at_quantile(0.90),
            p99_ns: self.hist.value_at_quantile(0.99),
            p999_ns: self.hist.value_at_quantile(0.999),
            max_ns: self.hist.max(),
            mean_ns: self.hist.mean(),
            clamped_samples: self.clamped,
            histogram_significant_figures: SIGNIFICANT_FIGURES,
            quantile_relative_error_bound: 10f64.powi(-i32::from(SIGNIFICANT_FIGURES)),
        })
    }
}

/// Latency distribution of one run, in nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Number of latencies recorded.
    pub samples: u64,
    /// Smallest latency (ns), reported as the lowest value of its histogram bucket: at most
    /// the stated relative error (`quantile_relative_error_bound`) below the exact minimum.
    pub min_ns: u64,
    /// Median (ns).
    pub p50_ns: u64,
    /// 90th percentile (ns).
    pub p90_ns: u64,
    /// 99th percentile (ns).
    pub p99_ns: u64,
    /// 99.9th percentile (ns).
    pub p999_ns: u64,
    /// Largest latency (ns).
    pub max_ns: u64,
    /// Mean (ns).
    pub mean_ns: f64,
    /// Samples above the histogram's range, recorded as its highest value.
    pub clamped_samples: u64,
    /// HdrHistogram significant decimal digits.
    pub histogram_significant_figures: u8,
    /// Relative error bound of the quantiles above (10^-significant figures).
    pub quantile_relative_error_bound: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_has_no_summary() {
        assert!(LatencyRecorder::new().summary().is_none());
        assert!(LatencyRecorder::new().quantile_ns(0.5).is_none());
    }

    #[test]
    fn merge_adds_counts_and_clamps() {
        let mut a = LatencyRecorder::new();
        let mut b = LatencyRecorder::new();
        a.record_ns(100);
        b.record_ns(HIGHEST_TRACKABLE_NS * 2);
        b.record_ns(0);
        a.merge(&b);
        let s = a.summary().unwrap();
        assert_eq!(s.samples, 3);
        assert_eq!(s.clamped_samples, 1);
        assert_eq!(s.min_ns, 1);
        assert_eq!(s.p50_ns, 100);
        assert!(s.max_ns >= HIGHEST_TRACKABLE_NS);
        assert_eq!(s.histogram_significant_figures, 3);
    }
}

//! Statistics over benchmark samples, as a small library with invariants and citations.
//!
//! - [`Sample`]: at least two finite values (no NaN, no infinity); construction checks it
//!   (the invariant criterion's `Sample` keeps).
//! - [`Summary`]: median, min, max, mean, coefficient of variation, a percentile-bootstrap
//!   95% confidence interval of the median, and the outliers by the modified z-score rule of
//!   Iglewicz & Hoaglin (1993).
//! - [`Adaptive`]: the bounded adaptive repetition rule (more samples while the CV is high,
//!   up to a hard cap).
//! - [`scaling`]: single-thread score, peak, parallel efficiency and the knee of a
//!   throughput-vs-threads curve.
//! - [`within_noise`]: whether two summaries differ by less than their own spread, for
//!   `compare`.
//!
//! Values carry no unit here: callers keep the unit in their field names
//! (`bandwidth_bytes_per_s`, `latency_ns`).

use serde::{Deserialize, Serialize};

pub mod scaling;

/// Why a [`Sample`] could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SampleError {
    /// Fewer than two values: no spread can be computed from one.
    #[error("a sample needs at least 2 values, got {0}")]
    TooFew(usize),
    /// A value is NaN or infinite.
    #[error("value #{index} is not finite: {value}")]
    NotFinite {
        /// Position of the bad value.
        index: usize,
        /// The value itself.
        value: f64,
    },
}

/// At least two finite values, kept in measurement order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    values: Vec<f64>,
}

impl Sample {
    /// Checks the invariants: `values.len() >= 2`, every value finite.
    pub fn new(values: Vec<f64>) -> Result<Self, SampleError> {
        if values.len() < 2 {
            return Err(SampleError::TooFew(values.len()));
        }
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(SampleError::NotFinite { index, value });
        }
        Ok(Sample { values })
    }

    /// The values in measurement order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Number of values (>= 2).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Always false: a sample has at least two values.
    pub fn is_empty(&self) -> bool {
        false
    }

    fn sorted(&self) -> Vec<f64> {
        let mut s = self.values.clone();
        s.sort_by(f64::total_cmp);
        s
    }

    /// Smallest value.
    pub fn min(&self) -> f64 {
        self.values.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// Largest value.
    pub fn max(&self) -> f64 {
        self.values
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Arithmetic mean.
    pub fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }

    /// Median (mean of the two middle values for an even count).
    pub fn median(&self) -> f64 {
        median_sorted(&self.sorted())
    }

    /// Sample standard deviation (n - 1 in the denominator).
    pub fn std_dev(&self) -> f64 {
        let mean = self.mean();
        let ss: f64 = self.values.iter().map(|v| (v - mean) * (v - mean)).sum();
        (ss / (self.values.len() - 1) as f64).sqrt()
    }

    /// Coefficient of variation, std_dev / |mean|; `None` when the mean is 0 (a ratio that
    /// cannot be computed is absent, never infinite).
    pub fn cv(&self) -> Option<f64> {
        let mean = self.mean();
        if mean == 0.0 {
            None
        } else {
            Some(self.std_dev() / mean.abs())
        }
    }

    /// Median absolute deviation from the median (unscaled).
    pub fn mad(&self) -> f64 {
        let median = self.median();
        let mut dev: Vec<f64> = self.values.iter().map(|v| (v - median).abs()).collect();
        dev.sort_by(f64::total_cmp);
        median_sorted(&dev)
    }

    /// Indices of outliers by the modified z-score rule: `M_i = 0.6745 (x_i - median) / MAD`,
    /// an outlier when `|M_i| > 3.5`. Source: B. Iglewicz and D. C. Hoaglin, "How to Detect
    /// and Handle Outliers", ASQC Basic References in Quality Control, vol. 16, 1993
    /// (the rule hyperfine also cites). With MAD = 0 (more than half the values equal) no
    /// value is called an outlier.
    pub fn outliers(&self) -> Vec<usize> {
        let median = self.median();
        let mad = self.mad();
        if mad == 0.0 {
            return Vec::new();
        }
        self.values
            .iter()
            .enumerate()
            .filter(|(_, v)| (0.6745 * (*v - median) / mad).abs() > 3.5)
            .map(|(i, _)| i)
            .collect()
    }

    /// Percentile-bootstrap confidence interval of the median at `level` (e.g. 0.95), from
    /// `resamples` resamples drawn with a fixed-seed generator (so the same sample gives the
    /// same interval). Source: B. Efron and R. Tibshirani, "An Introduction to the
    /// Bootstrap", 1993, ch. 13 (percentile interval).
    pub fn bootstrap_median_ci(&self, level: f64, resamples: usize) -> (f64, f64) {
        let n = self.values.len();
        let mut rng = SplitMix64(0x9e37_79b9_7f4a_7c15 ^ n as u64);
        let mut medians = Vec::with_capacity(resamples.max(1));
        let mut buf = vec![0.0; n];
        for _ in 0..resamples.max(1) {
            for slot in buf.iter_mut() {
                let i = (rng.next() % n as u64) as usize;
                *slot = self.values.get(i).copied().unwrap_or(0.0);
            }
            buf.sort_by(f64::total_cmp);
            medians.push(median_sorted(&buf));
        }
        medians.sort_by(f64::total_cmp);
        let level = level.clamp(0.0, 1.0);
        let lo = percentile_sorted(&medians, (1.0 - level) / 2.0);
        let hi = percentile_sorted(&medians, 1.0 - (1.0 - level) / 2.0);
        (lo, hi)
    }

    /// All summary figures at once.
    pub fn summary(&self) -> Summary {
        let (ci_low, ci_high) = self.bootstrap_median_ci(0.95, 1000);
        Summary {
            n: self.len(),
            median: self.median(),
            min: self.min(),
            max: self.max(),
            mean: self.mean(),
            std_dev: self.std_dev(),
            cv: self.cv(),
            median_ci95_low: ci_low,
            median_ci95_high: ci_high,
            outlier_indices: self.outliers(),
        }
    }
}

/// Summary of one [`Sample`], in the sample's own unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n - 1).
    pub std_dev: f64,
    /// Coefficient of variation (std_dev / |mean|), absent when the mean is 0.
    pub cv: Option<f64>,
    /// Lower end of the percentile-bootstrap 95% interval of the median.
    pub median_ci95_low: f64,
    /// Upper end of the percentile-bootstrap 95% interval of the median.
    pub median_ci95_high: f64,
    /// Indices (measurement order) of outliers by the modified z-score > 3.5 rule
    /// (Iglewicz & Hoaglin 1993). Kept in the statistics, only flagged.
    pub outlier_indices: Vec<usize>,
}

/// Median of the finite values of `values` (mean of the two middle ones for an even count);
/// `None` when there is no finite value. For figures that are not a [`Sample`] (a single run's
/// value, or a list of per-run results that may hold one).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(median_sorted(&v))
}

fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let mid = n / 2;
    if n % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// Linear-interpolated percentile, `q` in [0, 1], of sorted values.
fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = pos.ceil() as usize;
            let frac = pos - lo as f64;
            sorted[lo] + (sorted[hi] - sorted[lo]) * frac
        }
    }
}

/// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a tiny deterministic generator for the bootstrap.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The bounded adaptive repetition rule: take at least `min_samples`; continue while the CV
/// of what was taken exceeds `target_cv`; never take more than `max_samples`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Adaptive {
    /// Samples always taken (>= 2).
    pub min_samples: usize,
    /// Hard cap.
    pub max_samples: usize,
    /// CV (fraction, e.g. 0.03 for 3%) below which no more samples are taken.
    pub target_cv: f64,
}

impl Adaptive {
    /// Whether another sample is wanted after `taken` values.
    pub fn wants_more(&self, taken: &[f64]) -> bool {
        let min = self.min_samples.max(2);
        let max = self.max_samples.max(min);
        if taken.len() < min {
            return true;
        }
        if taken.len() >= max {
            return false;
        }
        match Sample::new(taken.to_vec()).ok().and_then(|s| s.cv()) {
            Some(cv) => cv > self.target_cv,
            None => false,
        }
    }
}

/// Whether two measurements of the same quantity differ by less than their noise.
///
/// The rule: the difference is "within noise" when the 95% bootstrap intervals of the two
/// medians overlap, or when the relative difference of the medians, taken against the smaller
/// one, is smaller than the larger of the two CVs (the larger median is less than `1 + CV`
/// times the smaller). `compare` must not call such a difference a win or a loss.
///
/// Against the smaller median, not the larger: a difference over the larger is below 1 however
/// large the ratio, so a run with a CV near 100 % made a 17.8x gap "within noise" (c2c latency
/// 107 ns vs 1.90 us, 2026-12-03).
pub fn within_noise(a: &Summary, b: &Summary) -> bool {
    let overlap =
        a.median_ci95_low <= b.median_ci95_high && b.median_ci95_low <= a.median_ci95_high;
    if overlap {
        return true;
    }
    let diff = (a.median - b.median).abs();
    if diff == 0.0 {
        return true;
    }
    let smaller = a.median.abs().min(b.median.abs());
    if smaller == 0.0 {
        return false;
    }
    let noise = a.cv.unwrap_or(0.0).max(b.cv.unwrap_or(0.0));
    diff / smaller < noise
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_finite_values_or_none() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN, 7.0, f64::INFINITY]), Some(7.0));
        assert_eq!(median(&[f64::NAN]), None);
        assert_eq!(median(&[]), None);
    }
    use proptest::prelude::*;

    #[test]
    fn invariants_rejected() {
        assert_eq!(Sample::new(vec![1.0]), Err(SampleError::TooFew(1)));
        assert!(matches!(
            Sample::new(vec![1.0, f64::NAN]),
            Err(SampleError::NotFinite { index: 1, .. })
        ));
        assert!(Sample::new(vec![1.0, f64::INFINITY]).is_err());
    }

    #[test]
    fn known_values() {
        let s = Sample::new(vec![4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.median(), 2.5);
        assert_eq!(s.min(), 1.0);
        assert_eq!(s.max(), 4.0);
        assert_eq!(s.mean(), 2.5);
        // std dev of 1..4 with n-1: sqrt(5/3)
        assert!((s.std_dev() - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert!((s.cv().unwrap() - (5.0f64 / 3.0).sqrt() / 2.5).abs() < 1e-12);
        let zero = Sample::new(vec![-1.0, 1.0]).unwrap();
        assert_eq!(zero.cv(), None);
    }

    #[test]
    fn outlier_rule() {
        // median 10, MAD 0.5 -> the 30 has M = 0.6745*20/0.5 = 27 > 3.5
        let s = Sample::new(vec![10.0, 10.5, 9.5, 10.0, 30.0, 10.2, 9.8]).unwrap();
        assert_eq!(s.outliers(), vec![4]);
        let flat = Sample::new(vec![5.0, 5.0, 5.0, 9.0]).unwrap();
        assert!(flat.outliers().is_empty());
    }

    #[test]
    fn adaptive_rule() {
        let rule = Adaptive {
            min_samples: 3,
            max_samples: 6,
            target_cv: 0.05,
        };
        assert!(rule.wants_more(&[1.0, 1.0]));
        assert!(!rule.wants_more(&[1.0, 1.0, 1.0]));
        assert!(rule.wants_more(&[1.0, 2.0, 1.0]));
        assert!(!rule.wants_more(&[1.0, 2.0, 1.0, 2.0, 1.0, 2.0]));
    }

    #[test]
    fn noise_rule() {
        let a = Sample::new(vec![100.0, 101.0, 99.0, 100.5, 99.5])
            .unwrap()
            .summary();
        let b = Sample::new(vec![100.2, 100.8, 99.4, 100.1, 99.9])
            .unwrap()
            .summary();
        let c = Sample::new(vec![150.0, 151.0, 149.0, 150.5, 149.5])
            .unwrap()
            .summary();
        assert!(within_noise(&a, &b));
        assert!(!within_noise(&a, &c));
    }

    /// The breaker's case (2026-12-03): c2c latency 107 ns (CV 68 %) against 1.90 us (CV 99 %),
    /// 95% intervals 99..135 ns and 1776..9153 ns. The gap is 16.7 times the smaller median,
    /// far above either CV: a loss, not noise. Over the larger median it was 0.94 < 0.99.
    #[test]
    fn a_gap_many_times_the_smaller_median_is_not_noise_whatever_the_cv() {
        let summary = |median: f64, lo: f64, hi: f64, cv: f64| Summary {
            median,
            median_ci95_low: lo,
            median_ci95_high: hi,
            cv: Some(cv),
            ..Sample::new(vec![median, median]).unwrap().summary()
        };
        let a = summary(107.0, 99.4, 134.8, 0.68);
        let c = summary(1898.0, 1776.0, 9153.0, 0.99);
        assert!(!within_noise(&a, &c));
        assert!(!within_noise(&c, &a));
        // The CV rule still holds a small gap inside a wide spread: 5 % apart, CV 8 %,
        // intervals apart.
        let d = summary(100.0, 99.0, 101.0, 0.08);
        let e = summary(105.0, 104.0, 106.0, 0.02);
        assert!(within_noise(&d, &e) && within_noise(&e, &d));
        // 9 % apart (over the smaller) with a CV of 8 %: outside; over the larger (8.3 %) it
        // was inside.
        let f = summary(109.0, 108.0, 110.0, 0.02);
        assert!(!within_noise(&d, &f));
    }

    proptest! {
        #[test]
        fn summary_ordering(values in prop::collection::vec(-1e9f64..1e9, 2..60)) {
            let s = Sample::new(values).unwrap();
            let sum = s.summary();
            prop_assert!(sum.min <= sum.median && sum.median <= sum.max);
            prop_assert!(sum.min <= sum.mean && sum.mean <= sum.max);
            prop_assert!(sum.median_ci95_low <= sum.median_ci95_high);
            prop_assert!(sum.min <= sum.median_ci95_low && sum.median_ci95_high <= sum.max);
            prop_assert!(sum.std_dev >= 0.0);
            prop_assert!(sum.outlier_indices.iter().all(|&i| i < sum.n));
        }

        #[test]
        fn non_finite_never_accepted(mut values in prop::collection::vec(-1e9f64..1e9, 2..20), pos in 0usize..20) {
            let i = pos % values.len();
            values[i] = f64::NAN;
            prop_assert!(Sample::new(values).is_err());
        }

        #[test]
        fn adaptive_is_bounded(values in prop::collection::vec(0.0f64..1e6, 0..40), min in 2usize..8, extra in 0usize..8) {
            let rule = Adaptive { min_samples: min, max_samples: min + extra, target_cv: 0.01 };
            if values.len() >= min + extra { prop_assert!(!rule.wants_more(&values)); }
            if values.len() < min { prop_assert!(rule.wants_more(&values)); }
        }
    }
}

//! `service.point_select`'s critical rate (the highest open-loop rate whose p99 met the bound,
//! metric `critical_throughput_ops_per_s` of the `critical/pages=<mode>` points) read back from
//! a result file, and its THP-vs-base ratio: the page-size effect on latency-bounded
//! throughput, shown by `run`'s summary and by `compare`.

use hwsurvey_result::{MetricResult, TestResult};

/// The critical rates of both page modes in one run and their ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CriticalRatio {
    /// Median `critical_throughput_ops_per_s` of `critical/pages=base` (requests per second).
    pub base_ops_per_s: f64,
    /// The same of `critical/pages=thp`.
    pub thp_ops_per_s: f64,
    /// thp / base (> 1: THP sustains a higher rate under the bound).
    pub thp_over_base: f64,
}

/// Median of a metric: its summary's, else of its finite samples (`None` when none).
fn metric_median(m: &MetricResult) -> Option<f64> {
    match &m.summary {
        Some(s) => Some(s.median),
        None => hwsurvey_stats::median(&m.samples),
    }
}

/// The critical rate of `critical/pages=<mode>` in `tests` (`service.point_select` points of
/// one result file); Err says why there is none (not run, skipped with its reason, ...).
pub fn critical_rate(tests: &[TestResult], mode: &str) -> Result<f64, String> {
    let id = format!("critical/pages={mode}");
    let t = tests
        .iter()
        .find(|t| t.point.family == "service.point_select" && t.point.id == id)
        .ok_or_else(|| format!("{id} not run"))?;
    if t.outcome != hwsurvey_result::Outcome::Measured {
        return Err(format!(
            "{id} {}: {}",
            t.outcome,
            t.reason.as_deref().unwrap_or("no reason given")
        ));
    }
    t.metrics
        .iter()
        .find(|m| m.name == "critical_throughput_ops_per_s")
        .and_then(metric_median)
        .ok_or_else(|| format!("{id}: no critical_throughput_ops_per_s sample"))
}

/// THP-vs-base ratio of the critical rate in `tests`; Err names the page mode without a
/// critical rate and why.
pub fn critical_thp_base_ratio(tests: &[TestResult]) -> Result<CriticalRatio, String> {
    let base = critical_rate(tests, "base");
    let thp = critical_rate(tests, "thp");
    match (base, thp) {
        (Ok(b), Ok(t)) if b > 0.0 => Ok(CriticalRatio {
            base_ops_per_s: b,
            thp_ops_per_s: t,
            thp_over_base: t / b,
        }),
        (Ok(b), Ok(_)) => Err(format!("base critical rate is {b}/s")),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
        (Err(a), Err(b)) => Err(format!("{a}; {b}")),
    }
}

/// Why `tests` have no THP/base ratio, short, for a table cell under the critical rows (which
/// give each skip's reason in full): the page modes without a critical rate, or, when both
/// have one, what else stops the ratio (a base rate of 0/s).
pub fn short_reason_without_ratio(tests: &[TestResult]) -> String {
    let without: Vec<&str> = ["base", "thp"]
        .into_iter()
        .filter(|m| critical_rate(tests, m).is_err())
        .collect();
    if without.is_empty() {
        return match critical_thp_base_ratio(tests) {
            Ok(r) => format!("THP/base is {:.2}", r.thp_over_base),
            Err(why) => why,
        };
    }
    format!(
        "no critical rate with {} pages (see critical/pages=…)",
        without.join(" or ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsurvey_result::{Metric, PointOutcome};

    fn test(id: &str, outcome: PointOutcome) -> TestResult {
        let point: hwsurvey_result::Point = serde_json::from_value(serde_json::json!({
            "family": "service.point_select", "id": id, "threads": 2,
            "placement": "compact", "cpus": [0, 1], "params": {},
            "memory_bytes": 0, "estimated_s": 1.0
        }))
        .unwrap();
        TestResult::new(point, outcome, "t".into(), 1.0)
    }

    fn measured(samples: Vec<f64>) -> PointOutcome {
        PointOutcome::Measured(hwsurvey_result::Measurement {
            metrics: vec![Metric::throughput("critical_throughput_ops_per_s", samples)],
            pins: vec![],
            details: Default::default(),
        })
    }

    #[test]
    fn ratio_of_the_medians_or_why_not() {
        let tests = vec![
            test(
                "critical/pages=base",
                measured(vec![200_000.0, 210_000.0, 190_000.0]),
            ),
            test(
                "critical/pages=thp",
                measured(vec![250_000.0, 260_000.0, 240_000.0]),
            ),
        ];
        let r = critical_thp_base_ratio(&tests).unwrap();
        assert_eq!((r.base_ops_per_s, r.thp_ops_per_s), (200_000.0, 250_000.0));
        assert!((r.thp_over_base - 1.25).abs() < 1e-12);
        let skipped = vec![
            tests[0].clone(),
            test(
                "critical/pages=thp",
                PointOutcome::Skipped {
                    reason: "THP disabled (enabled = never)".into(),
                },
            ),
        ];
        assert_eq!(
            critical_thp_base_ratio(&skipped).unwrap_err(),
            "critical/pages=thp skipped: THP disabled (enabled = never)"
        );
        assert_eq!(
            critical_thp_base_ratio(&tests[..1]).unwrap_err(),
            "critical/pages=thp not run"
        );
        assert_eq!(
            short_reason_without_ratio(&skipped),
            "no critical rate with thp pages (see critical/pages=…)"
        );
        assert_eq!(
            short_reason_without_ratio(&[]),
            "no critical rate with base or thp pages (see critical/pages=…)"
        );
        // both rates there, but base is 0/s: the cell says so, never names no mode
        let zero = vec![
            test("critical/pages=base", measured(vec![0.0, 0.0, 0.0])),
            tests[1].clone(),
        ];
        assert_eq!(
            short_reason_without_ratio(&zero),
            "base critical rate is 0/s"
        );
    }
}

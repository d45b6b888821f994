//! What a family returns for one point: raw samples per metric (units in the metric name),
//! free-form details, or a skip/failure with the reason.

use serde::{Deserialize, Serialize};

use crate::placement::PinStatus;

/// Direction in which a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Throughput, bandwidth, IOPS.
    Higher,
    /// Latency, time.
    Lower,
}

/// Raw samples of one measured quantity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Name with the unit: `bandwidth_bytes_per_s`, `latency_ns`, `ops_per_s`, `iops`.
    pub name: String,
    /// Which way is better.
    pub better: Better,
    /// One value per timed sample, in measurement order, in the unit the name says.
    pub samples: Vec<f64>,
    /// Report the best sample as "peak" (only bandwidth, as STREAM reports best-of-N).
    pub report_peak: bool,
}

impl Metric {
    /// A bandwidth in bytes per second; the best sample is also reported as peak.
    pub fn bandwidth_bytes_per_s(samples: Vec<f64>) -> Metric {
        Metric {
            name: "bandwidth_bytes_per_s".into(),
            better: Better::Higher,
            samples,
            report_peak: true,
        }
    }

    /// A throughput (higher is better); `name` carries the unit (`ops_per_s`).
    pub fn throughput(name: impl Into<String>, samples: Vec<f64>) -> Metric {
        Metric {
            name: name.into(),
            better: Better::Higher,
            samples,
            report_peak: false,
        }
    }

    /// A latency or time (lower is better); `name` carries the unit (`latency_ns`).
    pub fn latency(name: impl Into<String>, samples: Vec<f64>) -> Metric {
        Metric {
            name: name.into(),
            better: Better::Lower,
            samples,
            report_peak: false,
        }
    }
}

/// A measured point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Measurement {
    /// One or more metrics; the first is the headline shown in summaries.
    pub metrics: Vec<Metric>,
    /// What each worker's pinning achieved (from the runner's `Timed::pins`).
    pub pins: Vec<PinStatus>,
    /// Facts about how it was measured, units in the keys: credited bytes per element,
    /// backing obtained (`"backing": "thp"`), calibrated repetitions, I/O engine, ...
    pub details: serde_json::Map<String, serde_json::Value>,
}

impl Measurement {
    /// Adds a detail.
    pub fn detail(mut self, key: &str, value: impl Serialize) -> Self {
        self.details.insert(
            key.to_string(),
            serde_json::to_value(value).unwrap_or(serde_json::Value::Null),
        );
        self
    }
}

/// The result of running one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PointOutcome {
    /// Measured: raw samples.
    Measured(Measurement),
    /// Not measured, and why (page mode unavailable at run time, cancelled, budget spent).
    Skipped {
        /// Why.
        reason: String,
    },
    /// Ran, but what the point searches for does not exist here (no rate met a latency
    /// bound): recorded as "skipped" with the reason and the details of every attempt, so the
    /// result file shows why.
    SkippedAfterTrying {
        /// Why, with the failing criterion and its numbers.
        reason: String,
        /// Every attempt (family-specific).
        details: serde_json::Map<String, serde_json::Value>,
    },
    /// Tried and failed (allocation failed, I/O error), and why.
    Failed {
        /// The error.
        error: String,
    },
}

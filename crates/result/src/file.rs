//! The result file: versioned, self-describing JSON, written atomically after every test,
//! and its loader. The format is documented in `docs/result-format.md`.

use std::path::{Path, PathBuf};

use hwsurvey_model::files::{FileError, FileProblem};

use crate::consistency::{shown_number, FieldProblem};
use hwsurvey_stats::{Sample, Summary};
use serde::{Deserialize, Serialize};

use hwsurvey_probe::run_env::{LoadSnapshot, RunEnv};

use crate::outcome::{Better, Metric, PointOutcome};
use crate::plan::{Plan, Point, SkippedPoint};

/// `schema` field of every result file.
pub const RESULT_SCHEMA: &str = "hwsurvey-result";
/// Version of the result format. Bump on any incompatible change.
pub const RESULT_SCHEMA_VERSION: u32 = 2;
/// Files larger than this are refused by the loader, bytes (64 MiB).
pub const MAX_RESULT_BYTES: u64 = 64 << 20;

/// State of the run when the file was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still running (a file left in this state means the process died: SIGKILL, crash).
    Running,
    /// Every planned point was attempted.
    Complete,
    /// Stopped by a signal (Ctrl-C/SIGINT, SIGTERM, SIGHUP); the tests listed finished.
    Interrupted,
}

impl std::fmt::Display for RunStatus {
    /// `running`, `complete`, `interrupted`, as in the file.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RunStatus::Running => "running (the process ended without finishing the file)",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
        })
    }
}

/// The tool that wrote the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// `hwsurvey` version (Cargo package version).
    pub version: String,
    /// Git revision at build time, or "unknown".
    pub git_revision: String,
    /// Target architecture of the binary.
    pub arch: String,
}

impl Tool {
    /// This build: the package version, [`crate::GIT_REVISION`] and the target architecture.
    pub fn this_build() -> Tool {
        Tool {
            version: env!("CARGO_PKG_VERSION").to_string(),
            git_revision: crate::GIT_REVISION.to_string(),
            arch: std::env::consts::ARCH.to_string(),
        }
    }
}

/// Which profile ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRef {
    /// Profile id.
    pub id: String,
    /// Profile revision.
    pub version: u32,
    /// Where it was loaded from.
    pub source: String,
    /// Engine rules used (sample time, repetitions, placement, memory fraction).
    pub run: crate::profile::RunSettings,
}

/// Statistics of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricResult {
    /// Name with unit (`bandwidth_bytes_per_s`).
    pub name: String,
    /// Which way is better.
    pub better: Better,
    /// Raw samples in measurement order, unit as in `name`.
    pub samples: Vec<f64>,
    /// Median, min, max, mean, CV, bootstrap CI, outliers; absent when fewer than two finite
    /// samples (then `summary_error` says why).
    pub summary: Option<Summary>,
    /// Why there is no summary.
    pub summary_error: Option<String>,
    /// Best sample, for bandwidth only (STREAM's best-of-N).
    pub peak: Option<f64>,
}

impl MetricResult {
    /// Computes statistics for a family's raw metric.
    pub fn from_metric(m: Metric) -> MetricResult {
        let (summary, summary_error) = match Sample::new(m.samples.clone()) {
            Ok(s) => (Some(s.summary()), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let peak = if m.report_peak {
            let best = match m.better {
                Better::Higher => m
                    .samples
                    .iter()
                    .copied()
                    .filter(|v| v.is_finite())
                    .reduce(f64::max),
                Better::Lower => m
                    .samples
                    .iter()
                    .copied()
                    .filter(|v| v.is_finite())
                    .reduce(f64::min),
            };
            best
        } else {
            None
        };
        MetricResult {
            name: m.name,
            better: m.better,
            samples: m.samples,
            summary,
            summary_error,
            peak,
        }
    }
}

/// What became of one planned point; written as `"measured"`, `"skipped"` or `"failed"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Metrics with raw samples were taken.
    Measured,
    /// Not measured, and why (`TestResult::reason`).
    Skipped,
    /// Tried and failed; the error is in `TestResult::reason`.
    Failed,
}

impl std::fmt::Display for Outcome {
    /// `measured`, `skipped`, `failed`, as in the file.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Outcome::Measured => "measured",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
        })
    }
}

/// One finished test (plan point).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// The plan point as planned.
    pub point: Point,
    /// Measured, skipped or failed.
    pub outcome: Outcome,
    /// Reason for skipped / error for failed.
    pub reason: Option<String>,
    /// Metrics with raw samples and statistics (measured only).
    pub metrics: Vec<MetricResult>,
    /// Pinning of each worker (measured only).
    pub pins: Vec<crate::placement::PinStatus>,
    /// Family details (credited bytes, backing obtained, ...).
    pub details: serde_json::Map<String, serde_json::Value>,
    /// UTC start, RFC 3339.
    pub started_at: String,
    /// Wall time, seconds.
    pub duration_s: f64,
}

impl TestResult {
    /// Builds the record of one point from its outcome.
    pub fn new(point: Point, outcome: PointOutcome, started_at: String, duration_s: f64) -> Self {
        let (outcome, reason, metrics, pins, details) = match outcome {
            PointOutcome::Measured(m) => (
                Outcome::Measured,
                None,
                m.metrics
                    .into_iter()
                    .map(MetricResult::from_metric)
                    .collect(),
                m.pins,
                m.details,
            ),
            PointOutcome::Skipped { reason } => (
                Outcome::Skipped,
                Some(reason),
                vec![],
                vec![],
                Default::default(),
            ),
            PointOutcome::SkippedAfterTrying { reason, details } => {
                (Outcome::Skipped, Some(reason), vec![], vec![], details)
            }
            PointOutcome::Failed { error } => (
                Outcome::Failed,
                Some(error),
                vec![],
                vec![],
                Default::default(),
            ),
        };
        TestResult {
            point,
            outcome,
            reason,
            metrics,
            pins,
            details,
            started_at,
            duration_s,
        }
    }
}

/// What `hwsurvey run --max-time` changed to fit a run into its time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeLimit {
    /// The `--max-time` given, seconds.
    pub max_time_s: f64,
    /// The full plan's estimate, seconds.
    pub estimated_full_s: f64,
    /// The estimate of the plan that ran, seconds.
    pub estimated_s: f64,
    /// The engine rules shortened, one line each (`samples_min 3 -> 2`); `profile.run` holds
    /// the values used.
    pub shortened: Vec<String>,
    /// Points dropped as a last resort (each is also in `skipped`, with the reason).
    pub dropped_points: usize,
}

impl TimeLimit {
    /// One line for reports: `--max-time 10 min: samples_min 3 -> 2, ...; 12 points dropped`.
    pub fn summary(&self) -> String {
        let mut parts = self.shortened.clone();
        if self.dropped_points > 0 {
            parts.push(format!(
                "{} point{} dropped",
                self.dropped_points,
                if self.dropped_points == 1 { "" } else { "s" }
            ));
        }
        format!(
            "--max-time {} s (full plan estimated {:.0} s): {}",
            self.max_time_s,
            self.estimated_full_s,
            parts.join(", ")
        )
    }
}

/// Estimated vs actual wall time of one family of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyTime {
    /// Family id.
    pub family: String,
    /// Points the plan gave it.
    pub points_planned: usize,
    /// Points that ran (measured, skipped after trying or failed).
    pub points_run: usize,
    /// The plan's estimate for the points that ran, seconds (sum of their `estimated_s`).
    pub estimated_s: f64,
    /// Wall time from the family's first point to the end of its last, seconds.
    pub actual_s: f64,
}

impl FamilyTime {
    /// `actual_s / estimated_s`; `None` when nothing was estimated.
    pub fn actual_over_estimate(&self) -> Option<f64> {
        (self.estimated_s > 0.0).then(|| self.actual_s / self.estimated_s)
    }
}

/// A whole result file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultFile {
    /// Always [`RESULT_SCHEMA`].
    pub schema: String,
    /// [`RESULT_SCHEMA_VERSION`] when written.
    pub schema_version: u32,
    /// Run state when written.
    pub status: RunStatus,
    /// Tool version and revision.
    pub tool: Tool,
    /// Profile and its engine rules.
    pub profile: ProfileRef,
    /// UTC start, RFC 3339.
    pub started_at: String,
    /// UTC end, RFC 3339 (absent while running).
    pub finished_at: Option<String>,
    /// The full probe document (`hwsurvey_probe::Machine`, its own `schema_version` inside).
    pub machine: serde_json::Value,
    /// Live facts and settings that affect numbers (governor, THP, SMT, numa_balancing, ...).
    pub environment: RunEnv,
    /// Load average and MemAvailable before the first test.
    pub load_before: LoadSnapshot,
    /// ... and after the last (absent while running).
    pub load_after: Option<LoadSnapshot>,
    /// The plan (points and planned skips).
    pub plan: Plan,
    /// Finished tests, in run order.
    pub tests: Vec<TestResult>,
    /// Points skipped by the plan (memory cap, unavailable here) and at run time by the
    /// engine (interrupted).
    pub skipped: Vec<SkippedPoint>,
    /// Estimated and actual wall time of each family that ran (or began to run), in run
    /// order, so that the plan's estimate can be checked. Empty in files written before it
    /// was kept.
    #[serde(default)]
    pub family_times: Vec<FamilyTime>,
    /// Set when `hwsurvey run --max-time` had to shorten the run: what it changed. Such a run
    /// is not comparable to full runs, and every report says so. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit: Option<TimeLimit>,
    /// Qualification findings evaluated by `hwsurvey run` and updated before every write
    /// (rules file reference, time, findings with evidence and fix): the document of
    /// `hwsurvey_qualify::stored::StoredFindings`, kept as JSON here because the qualify crate
    /// depends on this one. Optional: absent in files written before runs stored findings
    /// (readers then recompute them), and omitted when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qualification: Option<serde_json::Value>,
}

/// Errors writing or loading a result file; each renders as one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    /// I/O error.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
    /// Larger than [`MAX_RESULT_BYTES`] (by metadata, or by what a read delivered).
    #[error("{path}: {size}, larger than the {max_mib} MiB limit for a result file")]
    TooLarge {
        /// The file.
        path: String,
        /// Its size as known: `"1073741824 bytes"` (metadata) or `"more than 67108864 bytes"`
        /// (a read that did not end at the limit).
        size: String,
        /// The limit, MiB (2^20 bytes).
        max_mib: u64,
    },
    /// Not a regular file (FIFO, device, directory, socket): refused, a read could block or
    /// never end.
    #[error("{path}: is {kind}, not a regular file; a result file must be a regular file")]
    NotRegular {
        /// The file.
        path: String,
        /// What it is ("a FIFO (named pipe)", "a character device", ...).
        kind: &'static str,
    },
    /// Not JSON at all.
    #[error("{path}: not JSON ({detail})")]
    NotJson {
        /// The file.
        path: String,
        /// serde_json's message.
        detail: String,
    },
    /// JSON that ends early (a copy cut short).
    #[error("{path}: truncated JSON at line {line}, column {column}")]
    Truncated {
        /// The file.
        path: String,
        /// Line.
        line: usize,
        /// Column.
        column: usize,
    },
    /// JSON, but not a hwsurvey result file, or another schema version.
    #[error("{path}: {detail}")]
    WrongSchema {
        /// The file.
        path: String,
        /// What was found and expected.
        detail: String,
    },
    /// Parsed, but a value in it cannot have been measured (negative, not finite, absurdly
    /// large for its unit, a median outside [min, max], one test recorded twice); see
    /// [`ResultFile::validate`].
    #[error("{path}: {detail}")]
    Invalid {
        /// The file.
        path: String,
        /// Which test and metric, the bad value and what was expected.
        detail: String,
    },
}

/// Largest plausible value of a metric, by the unit at the end of its name, with the bound in
/// words: `_bytes_per_s` 1e15 (1 PB/s), other `_per_s` and `iops` 1e15 per second, `_ns` 1e12
/// (1000 s). About a thousand times what any machine delivers; `None` for other units.
pub fn plausible_max(metric: &str) -> Option<(f64, &'static str)> {
    if metric.ends_with("_bytes_per_s") || metric == "bytes_per_s" {
        Some((1e15, "1e15 bytes/s (1 PB/s)"))
    } else if metric.ends_with("_per_s") || metric == "iops" || metric.ends_with("_iops") {
        Some((1e15, "1e15 per second"))
    } else if metric.ends_with("_ns") || metric.contains("_ns_per_") {
        Some((1e12, "1e12 ns (1000 s)"))
    } else {
        None
    }
}

impl MetricResult {
    /// Checks the metric as a measurement: every sample and statistic finite, not negative and
    /// not above [`plausible_max`]; `min <= median <= max`; and the statistics those of the
    /// stored samples, recomputed ([`hwsurvey_stats::Sample`]): `n`, `min`, `max`, `median`,
    /// `mean`, `std_dev` and `cv` within a relative [`STATS_TOLERANCE`] (rounding by a
    /// writer or an editor passes; an edited statistic does not), the bootstrap interval inside
    /// [min, max], outlier indices inside the samples, and `peak` one of the samples.
    ///
    /// Err: the field, relative to the metric (`samples[2]`, `summary.cv`), and what is wrong,
    /// naming the value (no file or test: the caller adds them).
    pub fn validate(&self) -> Result<(), FieldProblem> {
        let name = &self.name;
        let bound = plausible_max(name);
        if bound.is_none() || name.len() > crate::consistency::MAX_LABEL_BYTES {
            return Err(FieldProblem::new(
                "name",
                format!(
                    "{} carries no unit hwsurvey writes (a name ends in _bytes_per_s, _per_s, \
                     iops, _ns or _ns_per_io)",
                    hwsurvey_model::text::quote(name)
                ),
            ));
        }
        if !self.samples.is_empty() && self.samples.iter().all(|v| *v == 0.0) {
            return Err(FieldProblem::new(
                "samples",
                format!(
                    "every one of the {} samples is 0: a measured {name} is never 0",
                    self.samples.len()
                ),
            ));
        }
        let check = |field: &str, v: f64| -> Result<(), FieldProblem> {
            let shown = shown_number(v);
            let problem = if !v.is_finite() {
                format!("{shown} is not a finite number")
            } else if v < 0.0 {
                format!("{shown} is negative, a {name} is never negative")
            } else {
                match bound {
                    Some((max, words)) if v > max => {
                        format!("{shown} is not plausible (above {words})")
                    }
                    _ => return Ok(()),
                }
            };
            Err(FieldProblem::new(field, problem))
        };
        for (i, &v) in self.samples.iter().enumerate() {
            check(&format!("samples[{i}]"), v)?;
        }
        if let Some(p) = self.peak {
            check("peak", p)?;
        }
        let Some(s) = &self.summary else {
            if let Ok(sample) = Sample::new(self.samples.clone()) {
                return Err(FieldProblem::new(
                    "summary",
                    format!(
                        "is absent, but the {} samples give one (median {})",
                        sample.len(),
                        shown_number(sample.median())
                    ),
                ));
            }
            return Ok(());
        };
        for (field, v) in [
            ("summary.median", s.median),
            ("summary.min", s.min),
            ("summary.max", s.max),
            ("summary.mean", s.mean),
            ("summary.median_ci95_low", s.median_ci95_low),
            ("summary.median_ci95_high", s.median_ci95_high),
        ] {
            check(field, v)?;
        }
        for (field, v) in [("summary.std_dev", Some(s.std_dev)), ("summary.cv", s.cv)] {
            if let Some(v) = v {
                if !v.is_finite() || v < 0.0 {
                    return Err(FieldProblem::new(
                        field,
                        format!("{} is not a finite number >= 0", shown_number(v)),
                    ));
                }
            }
        }
        if !(s.min <= s.median && s.median <= s.max) {
            return Err(FieldProblem::new(
                "summary.median",
                format!(
                    "{} is outside [min {}, max {}]",
                    shown_number(s.median),
                    shown_number(s.min),
                    shown_number(s.max)
                ),
            ));
        }
        if self.samples.is_empty() {
            return Err(FieldProblem::new(
                "summary.n",
                format!("{} statistics without samples: the metric holds none", s.n),
            ));
        }
        let sample = Sample::new(self.samples.clone()).map_err(|e| {
            FieldProblem::new(
                "summary",
                format!("statistics of samples that give none ({e})"),
            )
        })?;
        let n = sample.len();
        if s.n != n {
            return Err(FieldProblem::new(
                "summary.n",
                format!("{} is not the number of samples ({n})", s.n),
            ));
        }
        let of_samples = |field: &str, what: &str, stored: Option<f64>, real: Option<f64>| {
            let same = match (stored, real) {
                (Some(a), Some(b)) => {
                    (a - b).abs() <= STATS_TOLERANCE * a.abs().max(b.abs()) + f64::MIN_POSITIVE
                }
                (None, None) => true,
                _ => false,
            };
            if same {
                return Ok(());
            }
            let shown = |v: Option<f64>| v.map(shown_number).unwrap_or_else(|| "absent".into());
            Err(FieldProblem::new(
                field,
                format!(
                    "{} is not the {what} of the {n} samples ({}): the statistics do not match \
                     the samples",
                    shown(stored),
                    shown(real)
                ),
            ))
        };
        of_samples("summary.min", "min", Some(s.min), Some(sample.min()))?;
        of_samples("summary.max", "max", Some(s.max), Some(sample.max()))?;
        of_samples(
            "summary.median",
            "median",
            Some(s.median),
            Some(sample.median()),
        )?;
        of_samples("summary.mean", "mean", Some(s.mean), Some(sample.mean()))?;
        of_samples(
            "summary.std_dev",
            "standard deviation",
            Some(s.std_dev),
            Some(sample.std_dev()),
        )?;
        of_samples("summary.cv", "CV", s.cv, sample.cv())?;
        for (field, v) in [
            ("summary.median_ci95_low", s.median_ci95_low),
            ("summary.median_ci95_high", s.median_ci95_high),
        ] {
            if !(s.min <= v && v <= s.max) || s.median_ci95_low > s.median_ci95_high {
                return Err(FieldProblem::new(
                    field,
                    format!(
                        "{} is outside [min {}, max {}] or the interval is reversed",
                        shown_number(v),
                        shown_number(s.min),
                        shown_number(s.max)
                    ),
                ));
            }
        }
        if let Some(&i) = s.outlier_indices.iter().find(|&&i| i >= n) {
            return Err(FieldProblem::new(
                "summary.outlier_indices",
                format!("{i} is not the index of one of the {n} samples"),
            ));
        }
        if let Some(p) = self.peak {
            if !self.samples.contains(&p) {
                return Err(FieldProblem::new(
                    "peak",
                    format!("{} is not one of the samples", shown_number(p)),
                ));
            }
        }
        Ok(())
    }
}

/// Relative difference a stored statistic may have from the one recomputed from the samples:
/// 1e-6 (JSON numbers round-trip exactly; a value rounded to 7 significant digits still
/// passes).
pub const STATS_TOLERANCE: f64 = 1e-6;

impl ResultFile {
    /// Checks what a loader must not pass on to a report:
    ///
    /// - each test (family and id) recorded once;
    /// - every metric of every test valid ([`MetricResult::validate`]: statistics those of the
    ///   samples, plausible for the unit);
    /// - sizes, page sizes and strings plausible for the recorded machine
    ///   ([`crate::consistency::check_document`]).
    ///
    /// `path` names the file in the error, which is one line: the file, the JSON field path
    /// (with the test's family and id), the value shortened and what is wrong.
    pub fn validate(&self, path: &str) -> Result<(), ResultError> {
        let doc = serde_json::to_value(self).map_err(|e| ResultError::Invalid {
            path: path.into(),
            detail: format!("cannot be written as JSON: {e}"),
        })?;
        self.validate_document(path, &doc)
    }

    /// [`ResultFile::validate`] with the file's JSON document already at hand (the loader's).
    fn validate_document(&self, path: &str, doc: &serde_json::Value) -> Result<(), ResultError> {
        let invalid = |p: FieldProblem| {
            let test = p
                .field
                .strip_prefix("tests[")
                .and_then(|rest| rest.split_once(']'))
                .and_then(|(i, _)| i.parse::<usize>().ok())
                .and_then(|i| self.tests.get(i))
                .map(|t| {
                    format!(
                        " (test {} {})",
                        hwsurvey_model::text::quote(&t.point.family),
                        hwsurvey_model::text::quote(&t.point.id)
                    )
                })
                .unwrap_or_default();
            ResultError::Invalid {
                path: path.into(),
                detail: format!("at {}{test}: {}", p.field, p.problem),
            }
        };
        let mut seen = std::collections::BTreeSet::new();
        for (i, t) in self.tests.iter().enumerate() {
            let (family, id) = (&t.point.family, &t.point.id);
            if !seen.insert((family.as_str(), id.as_str())) {
                return Err(invalid(FieldProblem::new(
                    format!("tests[{i}]"),
                    "recorded twice, expected each test once",
                )));
            }
            for (j, m) in t.metrics.iter().enumerate() {
                m.validate()
                    .map_err(|e| invalid(e.under(&format!("tests[{i}].metrics[{j}]"))))?;
            }
        }
        for (i, ft) in self.family_times.iter().enumerate() {
            for (field, v) in [("estimated_s", ft.estimated_s), ("actual_s", ft.actual_s)] {
                if !v.is_finite() || !(0.0..=86_400.0 * 365.0).contains(&v) {
                    return Err(invalid(FieldProblem::new(
                        format!("family_times[{i}].{field}"),
                        format!(
                            "{} is not a time a run takes (expected 0 .. one year, seconds)",
                            crate::consistency::shown_number(v)
                        ),
                    )));
                }
            }
            if ft.points_run > ft.points_planned {
                return Err(invalid(FieldProblem::new(
                    format!("family_times[{i}].points_run"),
                    format!(
                        "{} points run of {} planned",
                        ft.points_run, ft.points_planned
                    ),
                )));
            }
        }
        crate::consistency::check_document(doc).map_err(invalid)?;
        Ok(())
    }

    /// Writes the file atomically ([`hwsurvey_model::files::write_atomic`]): a temporary file
    /// `<dir>/.<name>.tmp-<pid>-<n>`, fsync, rename over `path`, fsync of the directory. On
    /// any error (ENOSPC, EIO) the temporary file is removed and the last complete file stays.
    pub fn write_atomic(&self, path: &Path) -> Result<(), ResultError> {
        let io = |e: std::io::Error| ResultError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(io)?;
        let serialising = |e: serde_json::Error| ResultError::Io {
            path: path.display().to_string(),
            message: format!("serialising: {e}"),
        };
        let form = crate::plain::to_file_form(serde_json::to_value(self).map_err(serialising)?);
        let mut json = serde_json::to_vec_pretty(&form).map_err(serialising)?;
        json.push(b'\n');
        // temporary file, fsync, rename, directory fsync; on ENOSPC or EIO the temporary file
        // is removed and the last complete file stays
        hwsurvey_model::files::write_atomic(path, &json, true).map_err(|e| ResultError::Io {
            path: path.display().to_string(),
            message: match e {
                hwsurvey_model::files::OutputError::Io { what, error, .. } => {
                    format!("{what}: {error}")
                }
                other => other.to_string(),
            },
        })
    }
}

/// Loads a result file, checking size, JSON, `schema` and `schema_version`, then its values
/// ([`ResultFile::validate`]).
///
/// Only regular files are read (a FIFO would block, a device such as `/dev/zero` never ends):
/// anything else is refused with [`ResultError::NotRegular`]. The read
/// ([`hwsurvey_model::files::read_regular`]) goes through `Read::take(MAX_RESULT_BYTES + 1)`,
/// so the limit holds whatever the metadata says (a file growing while read, a `/proc` file of
/// size 0): more than [`MAX_RESULT_BYTES`] bytes is [`ResultError::TooLarge`].
pub fn load(path: &Path) -> Result<ResultFile, ResultError> {
    let bytes = hwsurvey_model::files::read_regular(path, "a result file", MAX_RESULT_BYTES)
        .map_err(from_file_error)?;
    parse(&path.display().to_string(), &bytes)
}

/// The [`ResultError`] of what [`hwsurvey_model::files::read_regular`] refused (same messages).
fn from_file_error(e: FileError) -> ResultError {
    let path = e.path.display().to_string();
    match e.problem {
        FileProblem::NotRegular { kind, .. } => ResultError::NotRegular { path, kind },
        FileProblem::TooLarge {
            size, max_bytes, ..
        } => ResultError::TooLarge {
            path,
            size: size.to_string(),
            max_mib: max_bytes >> 20,
        },
        FileProblem::Io(error) => ResultError::Io {
            path,
            message: error.to_string(),
        },
        problem @ FileProblem::NotUtf8 { .. } => ResultError::Io {
            path,
            message: problem.to_string(),
        },
    }
}

/// Parses result-file bytes and validates them ([`ResultFile::validate`]); `name` names the
/// source in errors.
pub fn parse(name: &str, bytes: &[u8]) -> Result<ResultFile, ResultError> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        if e.is_eof() {
            ResultError::Truncated {
                path: name.into(),
                line: e.line(),
                column: e.column(),
            }
        } else {
            ResultError::NotJson {
                path: name.into(),
                detail: e.to_string(),
            }
        }
    })?;
    let schema = value.get("schema").and_then(|v| v.as_str());
    if schema != Some(RESULT_SCHEMA) {
        return Err(ResultError::WrongSchema {
            path: name.into(),
            detail: format!(
                "not a hwsurvey result file: \"schema\" is {}, expected \"{RESULT_SCHEMA}\"",
                schema
                    .map(|s| format!("\"{s}\""))
                    .unwrap_or_else(|| "missing".into())
            ),
        });
    }
    let version = value.get("schema_version");
    let number = version.and_then(|v| v.as_u64());
    let value = match number {
        // version 1: the tagged form, as held in memory
        Some(1) => value,
        Some(2) => crate::plain::from_file_form(value).map_err(|detail| {
            ResultError::WrongSchema {
                path: name.into(),
                detail: format!("result schema version 2 but {detail}"),
            }
        })?,
        _ => {
            return Err(ResultError::WrongSchema {
                path: name.into(),
                detail: format!(
                    "result schema version {}, this hwsurvey reads versions 1 and {RESULT_SCHEMA_VERSION}",
                    version
                        .map(|v| hwsurvey_model::text::one_line(&v.to_string(), 40).into_owned())
                        .unwrap_or_else(|| "missing".into())
                ),
            })
        }
    };
    // serde_path_to_error names the field of a type error ("tests[3].point.threads"), which a
    // 100,000-line file needs.
    let file: ResultFile =
        serde_path_to_error::deserialize(&value).map_err(|e| ResultError::WrongSchema {
            path: name.into(),
            // serde quotes the bad value whole ("unknown variant `<1 MiB>`"): bounded and
            // escaped, so the error stays one short line
            detail: format!(
                "result schema version {} but at {}: {}",
                number.unwrap_or_default(),
                hwsurvey_model::text::one_line(&e.path().to_string(), 120),
                hwsurvey_model::text::one_line(&e.inner().to_string(), 200)
            ),
        })?;
    file.validate_document(name, &value)?;
    Ok(file)
}

/// UTC time as RFC 3339 (`2026-11-29T20:05:30Z`) from a system time.
pub fn rfc3339(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

/// Days since 1970-01-01 to (year, month, day): H. Hinnant's `civil_from_days`
/// (<https://howardhinnant.github.io/date_algorithms.html>).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_keeps_its_version_1_words() {
        for (o, w) in [
            (Outcome::Measured, "measured"),
            (Outcome::Skipped, "skipped"),
            (Outcome::Failed, "failed"),
        ] {
            assert_eq!(serde_json::to_value(o).unwrap(), serde_json::json!(w));
            assert_eq!(serde_json::from_value::<Outcome>(w.into()).unwrap(), o);
            assert_eq!(o.to_string(), w);
        }
        let e = serde_json::from_value::<Outcome>("measure".into()).unwrap_err();
        assert!(e.to_string().contains("unknown variant `measure`"), "{e}");
    }

    #[test]
    fn family_times_are_read_checked_and_optional() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../reports/examples/x86_64-standard.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        // a file written before family_times loads with none
        let old = parse("r.json", text.as_bytes()).unwrap();
        assert!(old.family_times.is_empty());
        let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        doc["family_times"] = serde_json::json!([{"family": "mem.bandwidth",
            "points_planned": 44, "points_run": 44, "estimated_s": 44.0, "actual_s": 47.5}]);
        let ok = parse("r.json", doc.to_string().as_bytes()).unwrap();
        assert_eq!(ok.family_times[0].actual_over_estimate(), Some(47.5 / 44.0));
        doc["family_times"][0]["actual_s"] = serde_json::json!(-3.0);
        let e = parse("r.json", doc.to_string().as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("family_times[0].actual_s: -3 is not a time a run takes"),
            "{e}"
        );
        doc["family_times"][0]["actual_s"] = serde_json::json!(1.0);
        doc["family_times"][0]["points_run"] = serde_json::json!(45);
        let e = parse("r.json", doc.to_string().as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("45 points run of 44 planned"), "{e}");
    }

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_421), (2025, 11, 29));
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_982_730);
        assert_eq!(rfc3339(t), "2026-11-29T20:05:30Z");
    }

    #[test]
    fn loader_errors_are_one_line() {
        // a type error deep in a large file names the field's path
        let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports/examples/aarch64-qemu-quick.json");
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(example).unwrap()).unwrap();
        v["tests"][3]["point"]["threads"] = serde_json::json!("two");
        let e = parse("x.json", &serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.json: result schema version 1 but at tests[3].point.threads: invalid type: string \"two\", expected usize"
        );
        v["schema_version"] = serde_json::json!("1");
        let e = parse("x.json", &serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.json: result schema version \"1\", this hwsurvey reads versions 1 and 2"
        );
        let e = parse("x.json", b"{\"schema\": \"hwsurvey-result\", ").unwrap_err();
        assert!(matches!(e, ResultError::Truncated { .. }), "{e}");
        let e = parse("x.json", b"hello").unwrap_err();
        assert!(e.to_string().starts_with("x.json: not JSON"), "{e}");
        let e = parse("x.json", b"{\"schema\": \"other\"}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.json: not a hwsurvey result file: \"schema\" is \"other\", expected \"hwsurvey-result\""
        );
        let e = parse(
            "x.json",
            b"{\"schema\": \"hwsurvey-result\", \"schema_version\": 99}",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.json: result schema version 99, this hwsurvey reads versions 1 and 2"
        );
        assert!(!e.to_string().contains('\n'));
    }

    #[test]
    fn loader_refuses_devices_and_fifos_with_one_line() {
        let e = load(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: is a character device, not a regular file; a result file must be a regular file"
        );
        let dir = tempfile::tempdir().unwrap();
        let e = load(dir.path()).unwrap_err();
        assert!(
            matches!(
                e,
                ResultError::NotRegular {
                    kind: "a directory",
                    ..
                }
            ),
            "{e}"
        );
        #[cfg(all(unix, feature = "sys"))]
        {
            let fifo = dir.path().join("pipe.json");
            nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
            // Would block forever if opened for reading.
            let e = load(&fifo).unwrap_err();
            assert!(
                matches!(
                    e,
                    ResultError::NotRegular {
                        kind: "a FIFO (named pipe)",
                        ..
                    }
                ),
                "{e}"
            );
            assert!(
                e.to_string().starts_with(&fifo.display().to_string()),
                "{e}"
            );
            assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn loader_limit_counts_bytes_read_not_metadata() {
        // A read that delivered LIMIT + 1 bytes (what `take` returns for an endless source)
        // is refused whatever the metadata said.
        let e = from_file_error(FileError {
            path: "x.json".into(),
            problem: FileProblem::TooLarge {
                size: hwsurvey_model::files::Size::MoreThan(MAX_RESULT_BYTES),
                max_bytes: MAX_RESULT_BYTES,
                what: "a result file",
            },
        });
        assert_eq!(
            e.to_string(),
            "x.json: more than 67108864 bytes, larger than the 64 MiB limit for a result file"
        );
        // A real file one byte over the limit (sparse, no disk used).
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.json");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_RESULT_BYTES + 1)
            .unwrap();
        let e = load(&big).unwrap_err();
        assert!(
            e.to_string()
                .ends_with(": 67108865 bytes, larger than the 64 MiB limit for a result file"),
            "{e}"
        );
    }

    /// `field: problem` of a metric's validation, for short asserts.
    fn problem(m: &MetricResult) -> String {
        m.validate()
            .map(|()| "ok".to_string())
            .unwrap_or_else(|p| format!("{}: {}", p.field, p.problem))
    }

    #[test]
    fn metric_validation_names_the_field_and_value() {
        let ok = MetricResult::from_metric(Metric::bandwidth_bytes_per_s(vec![1e9, 3e9, 2e9]));
        assert_eq!(problem(&ok), "ok");
        let neg = MetricResult::from_metric(Metric::latency("latency_ns", vec![80.0, -5.0]));
        assert_eq!(
            problem(&neg),
            "samples[1]: -5 is negative, a latency_ns is never negative"
        );
        let mut absurd = ok.clone();
        absurd.summary.as_mut().unwrap().median = 1e300;
        absurd.summary.as_mut().unwrap().max = 1e300;
        assert_eq!(
            problem(&absurd),
            "summary.median: 1e300 is not plausible (above 1e15 bytes/s (1 PB/s))"
        );
        let mut outside = ok.clone();
        outside.summary.as_mut().unwrap().median = 5e9;
        assert_eq!(
            problem(&outside),
            "summary.median: 5000000000 is outside [min 1000000000, max 3000000000]"
        );
        let mut nan = ok.clone();
        nan.summary.as_mut().unwrap().median = f64::NAN;
        assert_eq!(problem(&nan), "summary.median: NaN is not a finite number");
        let mut edited = ok.clone();
        edited.samples[0] = 1.5e9;
        assert_eq!(
            problem(&edited),
            "summary.min: 1000000000 is not the min of the 3 samples (1500000000): the statistics do not match the samples"
        );
        // the tester's edits: all samples 0, a negative CV, statistics without samples, a
        // metric name without a unit
        let zeros = MetricResult::from_metric(Metric::bandwidth_bytes_per_s(vec![0.0, 0.0]));
        assert_eq!(
            problem(&zeros),
            "samples: every one of the 2 samples is 0: a measured bandwidth_bytes_per_s is never 0"
        );
        let mut cv = ok.clone();
        cv.summary.as_mut().unwrap().cv = Some(-1.0);
        assert_eq!(problem(&cv), "summary.cv: -1 is not a finite number >= 0");
        let mut hollow = ok.clone();
        hollow.samples.clear();
        assert_eq!(
            problem(&hollow),
            "summary.n: 3 statistics without samples: the metric holds none"
        );
        let mut bogus = ok.clone();
        bogus.name = "bogus_metric".into();
        assert!(problem(&bogus).starts_with("name: \"bogus_metric\" carries no unit"));
        assert_eq!(plausible_max("iops").map(|b| b.0), Some(1e15));
        assert_eq!(plausible_max("cpu_ns_per_io").map(|b| b.0), Some(1e12));
        assert_eq!(plausible_max("round_trip_ns").map(|b| b.0), Some(1e12));
    }

    #[test]
    fn statistics_must_be_those_of_the_samples() {
        // the tester's CV of 1.18e21: finite and >= 0, so only the samples show it is false
        let ok = MetricResult::from_metric(Metric::bandwidth_bytes_per_s(vec![
            1.00e9, 1.02e9, 0.98e9, 1.01e9, 0.99e9,
        ]));
        let real_cv = ok.summary.as_ref().unwrap().cv.unwrap();
        let mut cv = ok.clone();
        cv.summary.as_mut().unwrap().cv = Some(1.1805916207174113e21);
        assert_eq!(
            problem(&cv),
            format!(
                "summary.cv: 1.1805916207174113e21 is not the CV of the 5 samples ({real_cv}): the statistics do not match the samples"
            )
        );
        // rounding to 7 significant digits, as a hand-written or re-rendered file has, passes
        let mut rounded = ok.clone();
        let s = rounded.summary.as_mut().unwrap();
        s.cv = Some(format!("{real_cv:.6e}").parse().unwrap());
        s.mean = format!("{:.6e}", s.mean).parse().unwrap();
        assert_eq!(problem(&rounded), "ok");
        // a median inside [min, max] but not the samples' median
        let mut median = ok.clone();
        median.summary.as_mut().unwrap().median = 1.015e9;
        assert_eq!(
            problem(&median),
            "summary.median: 1015000000 is not the median of the 5 samples (1000000000): the statistics do not match the samples"
        );
        let mut n = ok.clone();
        n.summary.as_mut().unwrap().n = 7;
        assert_eq!(problem(&n), "summary.n: 7 is not the number of samples (5)");
        let mut gone = ok.clone();
        gone.summary = None;
        assert_eq!(
            problem(&gone),
            "summary: is absent, but the 5 samples give one (median 1000000000)"
        );
        let mut peak = ok.clone();
        peak.peak = Some(5e9);
        assert_eq!(problem(&peak), "peak: 5000000000 is not one of the samples");
        let mut outlier = ok.clone();
        outlier.summary.as_mut().unwrap().outlier_indices = vec![9];
        assert_eq!(
            problem(&outlier),
            "summary.outlier_indices: 9 is not the index of one of the 5 samples"
        );
    }

    #[test]
    fn every_example_result_file_loads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/examples");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            if p.extension().is_some_and(|e| e == "json") && text.contains("\"hwsurvey-result\"") {
                load(&p).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
        assert_eq!(n, 3, "result files in {}", dir.display());
    }

    #[test]
    fn peak_only_for_bandwidth() {
        let bw = MetricResult::from_metric(Metric::bandwidth_bytes_per_s(vec![1.0, 3.0, 2.0]));
        assert_eq!(bw.peak, Some(3.0));
        assert_eq!(bw.summary.as_ref().map(|s| s.median), Some(2.0));
        let lat = MetricResult::from_metric(Metric::latency("latency_ns", vec![1.0, 3.0]));
        assert_eq!(lat.peak, None);
        let one = MetricResult::from_metric(Metric::latency("latency_ns", vec![1.0]));
        assert!(one.summary.is_none());
        assert!(one.summary_error.is_some());
    }
}

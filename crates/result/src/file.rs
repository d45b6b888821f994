//! The result file: versioned, self-describing JSON, written atomically after every test,
//! and its loader. The format is documented in `docs/result-format.md`.

use std::path::{Path, PathBuf};

use hwsurvey_stats::{Sample, Summary};
use serde::{Deserialize, Serialize};

use hwsurvey_machine::run_env::{LoadSnapshot, RunEnv};

use crate::outcome::{Better, Metric, PointOutcome};
use crate::plan::{Plan, Point, SkippedPoint};

/// `schema` field of every result file.
pub const RESULT_SCHEMA: &str = "hwsurvey-result";
/// Version of the result format. Bump on any incompatible change.
pub const RESULT_SCHEMA_VERSION: u32 = 2;
/// Files larger than this are refused by the loader, bytes (64 MiB).
pub const MAX_RESULT_BYTES: u64 = 64 << 20;

/// A result file holds at most one JSON object per this many bytes, and 65536 more: 64. A
/// JSON object costs about 600 bytes once parsed whatever its size on disk (`{"a":1}`: 8
/// bytes), and the files runs write hold one per 200 to 230 bytes (110 written compact), so
/// the loader refuses a denser file before it builds the document ([`ResultError::TooDense`]).
pub const MAX_BYTES_PER_OBJECT: usize = 64;

/// A result file holds at most one JSON value (number, string, array, object, ...) per this
/// many bytes, and 65536 more: 8. A value costs 32 to 64 bytes once parsed (`1,` is 2 bytes
/// on disk), and the files runs write hold one per 29 to 37 bytes.
pub const MAX_BYTES_PER_VALUE: usize = 8;

/// Loading a result file ([`crate::load`]) allocates at most this multiple of its size at the
/// peak: 24. The costliest shapes a file may take are the free-form `details` of a test
/// padded with small objects or numbers as densely as [`MAX_BYTES_PER_OBJECT`] and
/// [`MAX_BYTES_PER_VALUE`] allow; the files runs write cost about 4 times their size (the
/// 1.1 MB guest run). So one input of at most [`MAX_RESULT_BYTES`]
/// costs at most about 1.6 GB to load, and `tests/load_cost.rs` holds the factor.
pub const LOAD_COST_FACTOR: u64 = 24;

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
    /// FNV-1a 64 of the profile's whole settings text (16 hex digits; the TOML without
    /// comments, layout and description). `None` in files written before 2026-12-04. Kept for
    /// those files: `compare` decides with [`ProfileRef::point_settings`] where both files
    /// have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// Fingerprints of the settings that define the profile's points, part by part
    /// ([`PointSettings`]): one id and version with another fingerprint of a part both runs
    /// have is an edited copy, which `compare` refuses to line up. `None` in files written
    /// before 2026-12-08.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point_settings: Option<PointSettings>,
}

/// FNV-1a 64 fingerprints (16 hex digits) of what defines a profile's points, without how
/// each point is measured: the `[run]` sampling rules (`sample_min_s`,
/// `sample_min_clock_ticks`, `warmup_s`, `samples_min`, `samples_max`, `target_cv`, which
/// `run --max-time` shortens) and the obsolete `budget_s` keys are left out, as are the
/// description, comments and layout. Two runs of one profile id and version whose parts
/// agree measured the same points, however many samples each took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointSettings {
    /// The top-level keys and `[run]` without its sampling rules (placement, memory rules,
    /// oversubscription factor).
    pub run: String,
    /// Per enabled family section (`[families."mem.bandwidth"]`, its `params` included), by
    /// family id. A family only one of two runs has (a later build's profile added it) is a
    /// set of points only that run measured, not a different profile.
    pub families: std::collections::BTreeMap<String, String>,
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
    /// Energy of the point, from the counters read just before and just after it
    /// ([`RunEnergy::counters`]): joules and mean watts per domain, with the file read.
    /// Absent where the run had no counters (the run's [`ResultFile::energy`] says why, once),
    /// and in files written before energy was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<hwsurvey_machine::energy::PointEnergy>,
    /// What the hardware watch saw from just before to just after the point (EDAC and AER
    /// counts, links that retrained, throttle events, hardware-error lines of the kernel log;
    /// only what moved, [`hwsurvey_machine::watch::WatchDelta`]). Absent in files written
    /// before the watch, and where the run watched nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<hwsurvey_machine::watch::WatchDelta>,
}

/// The energy counters of a run, said once for the whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEnergy {
    /// The counters read before and after every point (RAPL zones or hwmon inputs; see
    /// `hwsurvey_machine::energy`); empty when there are none.
    pub counters: Vec<hwsurvey_machine::energy::EnergyCounter>,
    /// Why no counter is read (no powercap or hwmon energy in a VM, `energy_uj` root-only
    /// since Linux 5.10); `None` when `counters` are read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<hwsurvey_model::Unknown>,
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
            energy: None,
            watch: None,
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

/// The kernel's clocksource changed during a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClocksourceChange {
    /// The clocksource before (`current_clocksource` as last read), e.g. `tsc`.
    pub from: String,
    /// The clocksource after, e.g. `hpet`.
    pub to: String,
    /// `family id` of the point after which the change was first read: it came during that
    /// point or between it and the previous read.
    pub seen_after: String,
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
    /// The machine the run measured: the probe's whole document, typed. In memory and in
    /// its serde form it is the tagged [`hwsurvey_machine::Machine`] (every probed value
    /// `{"known": v}` or `{"unknown": reason}`); on disk a version 2 file holds the plain
    /// document ([`hwsurvey_machine::Machine::document`], written by
    /// [`ResultFile::write_atomic`]), a version 1 file the tagged one. Both are read by
    /// [`hwsurvey_machine::Machine::from_document`]; a value an older document lacks reads as
    /// unknown with the reason its field's `#[serde(default)]` gives ("not probed by the
    /// hwsurvey that wrote this document").
    #[serde(deserialize_with = "machine_document")]
    pub machine: hwsurvey_machine::Machine,
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
    /// Set when `hwsurvey run --max-time` had to shorten the run: what it changed. Every
    /// report says so; `compare` lines its points up with any run's of the profile (sample
    /// counts and lengths are how a point was measured, not what it is) and names the points
    /// it dropped. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit: Option<TimeLimit>,
    /// Changes of the kernel's clocksource seen during the run (read after every point, see
    /// `hwsurvey_machine::clocksource`): figures timed before and after read different clocks,
    /// so such a run is not comparable, and every report says so. Empty (and omitted) when the
    /// clocksource kept its counter (`tsc-early` to `tsc` is no change), and in files written
    /// before it was watched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clocksource_changes: Vec<ClocksourceChange>,
    /// The energy counters read around every point, or why there are none; absent in files
    /// written before energy was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<RunEnergy>,
    /// The hardware watch of the run, said once: what it reads before and after every point
    /// (or why a source is not read), the DIMMs and their slots, the measured clock at the
    /// start and the end, and the totals over the run ([`hwsurvey_machine::watch::RunWatch`]).
    /// Absent in files written before the watch; such files still load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<hwsurvey_machine::watch::RunWatch>,
    /// The rounds of `hwsurvey run --soak` ([`crate::watch::Soak`]); absent for a plain run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<crate::watch::Soak>,
    /// Qualification findings evaluated by `hwsurvey run` and updated before every write
    /// (rules file reference, time, findings with evidence and fix: [`crate::qualification`]).
    /// Optional: absent in files written before runs stored findings (readers then recompute
    /// them), and omitted when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qualification: Option<crate::qualification::StoredFindings>,
}

/// [`ResultFile::machine`] from its document of machine schema version 1 (tagged, the form in
/// memory and in result files of version 1) or 2 (plain values and an `"unknown"` map, in
/// result files of version 2), through [`hwsurvey_machine::Machine::from_document`].
///
/// # Errors
/// `from_document`'s one line (`machine document at cpu.online: invalid type: ...`), which the
/// loader puts after the field path `machine`.
fn machine_document<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<hwsurvey_machine::Machine, D::Error> {
    let doc = serde_json::Value::deserialize(d)?;
    hwsurvey_machine::Machine::from_document(doc).map_err(serde::de::Error::custom)
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
    /// More JSON objects or values than a result file holds for its size
    /// ([`MAX_BYTES_PER_OBJECT`], [`MAX_BYTES_PER_VALUE`]): refused before the document is
    /// built, as it would cost far more memory than its size says.
    #[error(
        "{path}: holds {count} JSON {what} in {bytes} bytes, more than {most} (one per {per} bytes, and 65536 more; a run's file holds one per {usual} bytes): refusing it, as loading takes {cost} bytes of memory for each"
    )]
    TooDense {
        /// The file.
        path: String,
        /// `"objects"` or `"values"`.
        what: &'static str,
        /// How many it holds (counted outside strings).
        count: usize,
        /// Its size, bytes.
        bytes: usize,
        /// The most it may hold.
        most: usize,
        /// [`MAX_BYTES_PER_OBJECT`] or [`MAX_BYTES_PER_VALUE`].
        per: usize,
        /// What a run's file holds: about 200 bytes an object, 30 a value.
        usual: usize,
        /// Memory one takes once parsed: about 600 bytes an object, 64 a value.
        cost: usize,
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

impl ResultFile {
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
        let mut json = hwsurvey_model::text::json::to_vec_pretty(&form).map_err(serialising)?;
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
mod tests;

//! Validation of a loaded result file: every metric's samples and statistics finite, plausible
//! and recomputable from the stored samples, and the file consistent with its own plan (see
//! [`ResultFile::validate`], [`MetricResult::validate`]).

use hwsurvey_stats::Sample;

use crate::consistency::{shown_number, FieldProblem};
use crate::file::{MetricResult, ResultError, ResultFile};

/// Largest plausible value of a metric, by the unit at the end of its name, with the bound in
/// words: `_bytes_per_s` 1e15 (1 PB/s), other `_per_s` and `iops` 1e15 per second, `_ns` 1e12
/// (1000 s), `_hz` 1e12 (1 THz, cpu.clock's clock). About a thousand times what any machine
/// delivers; `None` for other units.
pub fn plausible_max(metric: &str) -> Option<(f64, &'static str)> {
    if metric.ends_with("_bytes_per_s") || metric == "bytes_per_s" {
        Some((1e15, "1e15 bytes/s (1 PB/s)"))
    } else if metric.ends_with("_per_s") || metric == "iops" || metric.ends_with("_iops") {
        Some((1e15, "1e15 per second"))
    } else if metric.ends_with("_ns") || metric.contains("_ns_per_") {
        Some((1e12, "1e12 ns (1000 s)"))
    } else if metric.ends_with("_hz") {
        Some((1e12, "1e12 Hz (1 THz)"))
    } else {
        None
    }
}

/// Checks a point's energy: seconds, and each domain's joules and mean watts, finite and not
/// negative (a counter read backwards without its range gives no domain, never a negative
/// one); joules at most 1e9 (a megawatt for a quarter hour).
fn check_energy(e: &hwsurvey_machine::energy::PointEnergy) -> Result<(), FieldProblem> {
    let check = |field: String, v: f64| {
        if v.is_finite() && (0.0..=1e9).contains(&v) {
            Ok(())
        } else {
            Err(FieldProblem::new(
                field,
                format!(
                    "{} is not an energy, power or time a point has (expected 0 .. 1e9)",
                    shown_number(v)
                ),
            ))
        }
    };
    check("seconds".into(), e.seconds)?;
    for (k, d) in e.domains.iter().enumerate() {
        check(format!("domains[{k}].joules"), d.joules)?;
        if let Some(w) = d.mean_watts {
            check(format!("domains[{k}].mean_watts"), w)?;
        }
    }
    Ok(())
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
                     iops, _ns, _ns_per_io or _hz)",
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
    ///   ([`crate::consistency::check_document`]);
    /// - counts plausible, and the file not contradicting itself
    ///   ([`crate::counts::check_counts`]: points of 0 threads, pools larger than the memory);
    /// - every point possible on the file's own machine ([`crate::bounds::check_points`]:
    ///   threads within its online CPUs, CPUs within its possible ones, rates within what its
    ///   clock and memory can do).
    ///
    /// `path` names the file in the error, which is one line: the file, the JSON field path
    /// (with the test's family and id), the value shortened and what is wrong.
    pub fn validate(&self, path: &str) -> Result<(), ResultError> {
        let doc = serde_json::to_value(self).map_err(|e| ResultError::Invalid {
            path: path.into(),
            detail: format!("cannot be written as JSON: {e}"),
        })?;
        check_whole_document(path, u64::from(self.schema_version), &doc)?;
        self.validate_typed(path)
    }

    /// [`ResultFile::validate`] but for [`crate::consistency::check_document`], which the
    /// loader runs on the JSON document before it is consumed into the typed file.
    pub(crate) fn validate_typed(&self, path: &str) -> Result<(), ResultError> {
        let invalid = |p: FieldProblem| {
            let test = p
                .field
                .strip_prefix("tests[")
                .and_then(|rest| rest.split_once(']'))
                .and_then(|(i, _)| i.parse::<usize>().ok())
                .and_then(|i| self.tests.get(i))
                .map(|t| (t.point.family.as_str(), t.point.id.as_str()));
            invalid_at(path, u64::from(self.schema_version), p, test)
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
            if let Some(e) = &t.energy {
                check_energy(e).map_err(|p| invalid(p.under(&format!("tests[{i}].energy"))))?;
            }
        }
        // a change is two clocksource names of different counters, after a point
        for (i, c) in self.clocksource_changes.iter().enumerate() {
            for (field, v) in [("from", &c.from), ("to", &c.to)] {
                if !hwsurvey_machine::clocksource::is_name(v) {
                    return Err(invalid(FieldProblem::new(
                        format!("clocksource_changes[{i}].{field}"),
                        format!(
                            "{} is not a clocksource name (1 to 64 letters, digits, _ - .)",
                            hwsurvey_model::text::quote(v)
                        ),
                    )));
                }
            }
            if hwsurvey_machine::clocksource::same_counter(&c.from, &c.to) {
                return Err(invalid(FieldProblem::new(
                    format!("clocksource_changes[{i}]"),
                    format!(
                        "from {} to {} is no change of counter",
                        hwsurvey_model::text::quote(&c.from),
                        hwsurvey_model::text::quote(&c.to)
                    ),
                )));
            }
            if c.seen_after.trim().is_empty() || c.seen_after.len() > 512 {
                return Err(invalid(FieldProblem::new(
                    format!("clocksource_changes[{i}].seen_after"),
                    "expected the family and id of a point (1 to 512 bytes)",
                )));
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
        crate::counts::check_counts(self).map_err(invalid)?;
        crate::bounds::check_points(self).map_err(invalid)?;
        Ok(())
    }
}

/// The one-line error of problem `p` of file `path` (schema `version`), naming the test
/// (family and id) when the field is inside one.
fn invalid_at(
    path: &str,
    version: u64,
    p: FieldProblem,
    test: Option<(&str, &str)>,
) -> ResultError {
    let test = test
        .map(|(family, id)| {
            format!(
                " (test {} {})",
                hwsurvey_model::text::quote(family),
                hwsurvey_model::text::quote(id)
            )
        })
        .unwrap_or_default();
    ResultError::Invalid {
        path: path.into(),
        detail: format!(
            "at {}{test}: {}",
            field_on_disk(&p.field, version),
            p.problem
        ),
    }
}

/// [`crate::consistency::check_document`] of a whole file's JSON document `doc` (in-memory
/// form), its error naming the test from the document.
pub(crate) fn check_whole_document(
    path: &str,
    version: u64,
    doc: &serde_json::Value,
) -> Result<(), ResultError> {
    crate::consistency::check_document(doc).map_err(|p| {
        let point = p
            .field
            .strip_prefix("tests[")
            .and_then(|rest| rest.split_once(']'))
            .and_then(|(i, _)| i.parse::<usize>().ok())
            .and_then(|i| doc.get("tests")?.get(i)?.get("point"));
        let test =
            point.and_then(|pt| Some((pt.get("family")?.as_str()?, pt.get("id")?.as_str()?)));
        invalid_at(path, version, p, test)
    })
}

/// A field path of the in-memory (tagged) form as the file on disk spells it: a version 2 file
/// holds a plain value where memory holds `{"known": v}`, so `machine.memory.meminfo.known.
/// mem_total_bytes` is `machine.memory.meminfo.mem_total_bytes` there (and `a.known[2]` is
/// `a[2]`). Version 1 paths are returned as they are.
pub(crate) fn field_on_disk(field: &str, version: u64) -> String {
    if version < 2 {
        return field.to_string();
    }
    let mut out = field.to_string();
    loop {
        let next = out.replace(".known.", ".").replace(".known[", "[");
        let next = next.strip_suffix(".known").unwrap_or(&next).to_string();
        if next == out {
            return out;
        }
        out = next;
    }
}

#[cfg(test)]
mod field_tests {
    use super::field_on_disk;

    #[test]
    fn known_segments_are_not_in_a_version_2_path() {
        assert_eq!(
            field_on_disk("machine.memory.meminfo.known.mem_total_bytes", 2),
            "machine.memory.meminfo.mem_total_bytes"
        );
        assert_eq!(
            field_on_disk("environment.hostname.known", 2),
            "environment.hostname"
        );
        assert_eq!(
            field_on_disk("load_before.load_average.known[1]", 2),
            "load_before.load_average[1]"
        );
        assert_eq!(field_on_disk("a.known.b.known.c", 2), "a.b.c");
        assert_eq!(
            field_on_disk("environment.hostname.known", 1),
            "environment.hostname.known"
        );
        assert_eq!(
            field_on_disk("tests[3].point.known_x", 2),
            "tests[3].point.known_x"
        );
    }
}

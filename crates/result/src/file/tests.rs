use super::*;
use crate::load::*;
use crate::validate::*;
use hwsurvey_model::files::{FileError, FileProblem};
use std::path::Path;

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
        "/../../reports/examples/v1/x86_64-standard.json"
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
        .join("../../reports/examples/v1/aarch64-qemu-quick.json");
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
    // cpu.clock's clock: a metric compare and qualify must load
    assert_eq!(plausible_max("clock_hz").map(|b| b.0), Some(1e12));
    let mut clock = ok.clone();
    clock.name = "clock_hz".into();
    assert!(clock.validate().is_ok());
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
    // the shipped example (schema 2) and the files of schema 1 kept for the tests
    for (sub, want) in [("", 3), ("v1", 3)] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports/examples")
            .join(sub);
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            if p.extension().is_some_and(|e| e == "json") && text.contains("\"hwsurvey-result\"") {
                load(&p).unwrap_or_else(|e| panic!("{e}"));
                n += 1;
            }
        }
        assert_eq!(n, want, "result files in {}", dir.display());
    }
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

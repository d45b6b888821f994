//! The headline figures of one result file, picked by the typed plan point (family, threads,
//! landmarks, params), never by parsing point ids: each is the median of the measured point's
//! headline metric (`MetricResult::summary.median`).

use hwsurvey_result::{Better, Outcome, ResultFile, TestResult};
use serde::Serialize;

/// One headline figure kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FigureKind {
    /// Stable key (`stream.triad.all`), used in JSON and to match figures across hosts.
    pub key: &'static str,
    /// Words for people (`STREAM Triad, all threads`).
    pub label: &'static str,
    /// Unit of the value: `bytes_per_s`, `ops_per_s` or `ns`.
    pub unit: &'static str,
    /// Which way is better.
    #[serde(skip)]
    pub better: Better,
}

/// Every headline figure, in report order.
pub const FIGURES: [FigureKind; 8] = [
    FigureKind {
        key: "stream.triad.all",
        label: "STREAM Triad, all threads",
        unit: "bytes_per_s",
        better: Better::Higher,
    },
    FigureKind {
        key: "cpu.integer.1",
        label: "cpu.scaling integer, 1 thread",
        unit: "ops_per_s",
        better: Better::Higher,
    },
    FigureKind {
        key: "cpu.integer.all",
        label: "cpu.scaling integer, all threads",
        unit: "ops_per_s",
        better: Better::Higher,
    },
    FigureKind {
        key: "cpu.fp.1",
        label: "cpu.scaling floating point, 1 thread",
        unit: "ops_per_s",
        better: Better::Higher,
    },
    FigureKind {
        key: "cpu.fp.all",
        label: "cpu.scaling floating point, all threads",
        unit: "ops_per_s",
        better: Better::Higher,
    },
    FigureKind {
        key: "mem.latency.memory",
        label: "mem.latency full random, largest working set",
        unit: "ns",
        better: Better::Lower,
    },
    FigureKind {
        key: "point_select.closed_max",
        label: "service.point_select closed-loop max",
        unit: "ops_per_s",
        better: Better::Higher,
    },
    FigureKind {
        key: "raid.gen.all",
        label: "raid.parity gen (best path, widest stripe), all threads",
        unit: "bytes_per_s",
        better: Better::Higher,
    },
];

/// The figure kind of `key`.
pub fn kind(key: &str) -> Option<&'static FigureKind> {
    FIGURES.iter().find(|f| f.key == key)
}

/// `value` in its unit for people: `44.4 GB/s`, `12.3 Gop/s`, `131 ns`.
pub fn show(kind: &FigureKind, value: f64) -> String {
    let (v, p) = hwsurvey_model::units::decimal_prefixed(value);
    match kind.unit {
        "bytes_per_s" => format!("{v} {p}B/s"),
        "ops_per_s" => format!("{v} {p}op/s"),
        "ns" => format!("{} ns", hwsurvey_model::units::three_significant(value)),
        _ => format!("{v} {p}"),
    }
}

fn text<'a>(t: &'a TestResult, key: &str) -> Option<&'a str> {
    t.point.params.get(key)?.as_str()
}

fn number(t: &TestResult, key: &str) -> Option<u64> {
    t.point.params.get(key)?.as_u64()
}

/// Median of the metric `name` of a measured test.
fn median(t: &TestResult, name: &str) -> Option<f64> {
    if t.outcome != Outcome::Measured {
        return None;
    }
    t.metrics
        .iter()
        .find(|m| m.name == name)
        .and_then(|m| m.summary.as_ref())
        .map(|s| s.median)
        .filter(|v| v.is_finite())
}

/// The tests at "all threads" among `tests`: those on the `all` landmark when the plan
/// recorded landmarks, else those with the plan's usable CPUs as threads, else the highest
/// thread count present.
fn at_all_threads<'a>(file: &ResultFile, tests: Vec<&'a TestResult>) -> Vec<&'a TestResult> {
    let landmarked: Vec<&TestResult> = tests
        .iter()
        .copied()
        .filter(|t| t.point.landmarks.iter().any(|l| l == "all"))
        .collect();
    if !landmarked.is_empty() {
        return landmarked;
    }
    let usable: Vec<&TestResult> = tests
        .iter()
        .copied()
        .filter(|t| t.point.threads == file.plan.usable_cpus)
        .collect();
    if !usable.is_empty() {
        return usable;
    }
    let most = tests.iter().map(|t| t.point.threads).max();
    tests
        .into_iter()
        .filter(|t| Some(t.point.threads) == most)
        .collect()
}

/// The headline figures a result file holds, `(key, value)` in [`FIGURES`] order; a figure
/// whose point was not measured (skipped, failed, not in the profile) is absent.
pub fn headline_figures(file: &ResultFile) -> Vec<(&'static str, f64)> {
    let family = |name: &str| -> Vec<&TestResult> {
        file.tests
            .iter()
            .filter(|t| t.point.family == name && t.outcome == Outcome::Measured)
            .collect()
    };
    let mut out = Vec::new();
    // STREAM Triad at all threads
    let triad: Vec<&TestResult> = family("mem.bandwidth")
        .into_iter()
        .filter(|t| text(t, "test") == Some("stream") && text(t, "kernel") == Some("triad"))
        .collect();
    if let Some(v) = at_all_threads(file, triad)
        .iter()
        .filter_map(|t| median(t, "bandwidth_bytes_per_s"))
        .reduce(f64::max)
    {
        out.push(("stream.triad.all", v));
    }
    // cpu.scaling kernels at 1 and all threads
    for (kernel, one, all) in [
        ("integer", "cpu.integer.1", "cpu.integer.all"),
        ("floating_point", "cpu.fp.1", "cpu.fp.all"),
    ] {
        let tests: Vec<&TestResult> = family("cpu.scaling")
            .into_iter()
            .filter(|t| text(t, "kernel") == Some(kernel))
            .collect();
        if let Some(v) = tests
            .iter()
            .filter(|t| t.point.threads == 1)
            .find_map(|t| median(t, "ops_per_s"))
        {
            out.push((one, v));
        }
        if let Some(v) = at_all_threads(file, tests)
            .iter()
            .find_map(|t| median(t, "ops_per_s"))
        {
            out.push((all, v));
        }
    }
    // mem.latency: full random order on base pages at the memory working set of the plan, or
    // the largest measured working set up to it
    let chase: Vec<(u64, f64)> = family("mem.latency")
        .into_iter()
        .filter(|t| {
            text(t, "order") == Some("full_random")
                && t.point
                    .params
                    .get("page_mode")
                    .and_then(|m| m.get("kind"))
                    .and_then(|k| k.as_str())
                    == Some("base")
        })
        .filter_map(|t| Some((number(t, "working_set_bytes")?, median(t, "latency_ns")?)))
        .filter(|(ws, _)| *ws <= file.plan.memory_working_set_bytes)
        .collect();
    if let Some((_, v)) = chase.iter().max_by_key(|(ws, _)| *ws) {
        out.push(("mem.latency.memory", *v));
    }
    // service.point_select: the highest closed-loop throughput over clients and page modes
    if let Some(v) = family("service.point_select")
        .into_iter()
        .filter(|t| text(t, "test") == Some("closed"))
        .filter_map(|t| median(t, "throughput_ops_per_s"))
        .reduce(f64::max)
    {
        out.push(("point_select.closed_max", v));
    }
    // raid.parity gen, best path, widest stripe, all threads
    let gen: Vec<&TestResult> = family("raid.parity")
        .into_iter()
        .filter(|t| text(t, "op") == Some("gen") && text(t, "path") == Some("best"))
        .collect();
    let widest = gen.iter().filter_map(|t| number(t, "data_blocks")).max();
    let gen: Vec<&TestResult> = gen
        .into_iter()
        .filter(|t| number(t, "data_blocks") == widest)
        .collect();
    if let Some(v) = at_all_threads(file, gen)
        .iter()
        .find_map(|t| median(t, "bandwidth_bytes_per_s"))
    {
        out.push(("raid.gen.all", v));
    }
    out
}

//! The figures of the headline table, one function per row kind: each reads one machine's
//! result file (a point's family, thread count, `params` and metrics by name, the machine
//! document's probed values) and gives a [`Fig`], a measured value or why it is absent.

use hwsurvey_model::units::format_bytes_binary;
use hwsurvey_model::Unknown;
use hwsurvey_qualify::stored::BuiltinRules as _;
use hwsurvey_result::outcome::Better;
use hwsurvey_result::{MetricResult, Outcome, ResultFile, TestResult};
use hwsurvey_stats::scaling::{analyse, ScalingPoint};
use hwsurvey_stats::Summary;
use serde_json::Value;

use crate::format::human;
use crate::input::Input;
use crate::point_params::{
    C2cLatency, CpuScaling, MemBandwidth, MemLatency, PointSelect, RaidParity, StorageIops, View,
};

/// Why a probed value of the machine is unknown, in the probe's words (`{what} unknown:
/// REASON`, [`hwsurvey_model::Unknown`]'s `Display`); without a reason (the value absent from
/// the file, or known while a part of it the figure needs is not) `{what}: not in this result
/// file`.
pub(super) fn why_unknown(reason: Option<&Unknown>, what: &str) -> String {
    match reason {
        Some(u) => format!("{what} unknown: {u}"),
        None => format!("{what}: not in this result file"),
    }
}

/// The metric `name` of `t` with its statistics.
pub(super) fn metric<'a>(t: &'a TestResult, name: &str) -> Option<(&'a MetricResult, &'a Summary)> {
    let m = t.metrics.iter().find(|m| m.name == name)?;
    Some((m, m.summary.as_ref()?))
}

/// Why a family's figure is absent from `f`, from the points the figure is made of (`pick`
/// on a point's id and params): a point of them that was not measured (its outcome and
/// reason), a skip recorded for them at run time (interrupted, dropped by `--max-time`) or by
/// the plan, or the family not planned at all. Only the figure's own points give the reason:
/// after Ctrl-C, THP chases recorded "not run: interrupted" are not explained by a hugetlb
/// chase skipped for its empty pool.
pub(super) fn absent(
    f: &ResultFile,
    family: &str,
    what: &str,
    pick: impl Fn(&str, &Value) -> bool,
) -> String {
    if let Some(t) = f.tests.iter().find(|t| {
        t.point.family == family
            && t.outcome != Outcome::Measured
            && pick(&t.point.id, &t.point.params)
    }) {
        return format!(
            "{what}: {family} {}: {}",
            t.outcome,
            t.reason.as_deref().unwrap_or("no reason given")
        );
    }
    if let Some(s) = f
        .skipped
        .iter()
        .chain(f.plan.families.iter().flat_map(|p| p.skipped.iter()))
        // a skip without params is the whole family's (`*`, or `all`: no --storage-dir)
        .find(|s| {
            s.family == family && (s.id == "*" || s.params.is_null() || pick(&s.id, &s.params))
        })
    {
        let reason = s.reason.strip_prefix("not run: ").unwrap_or(&s.reason);
        return match s.reason.starts_with("not run: ") {
            true => format!("{what}: {family} not run: {reason}"),
            false => format!("{what}: {family} skipped: {reason}"),
        };
    }
    if !f.plan.families.iter().any(|p| p.family == family) {
        return format!("{what}: {family} not in this run's plan");
    }
    let planned = f
        .plan
        .families
        .iter()
        .filter(|p| p.family == family)
        .flat_map(|p| p.points.iter())
        .any(|p| pick(&p.id, &p.params));
    if planned {
        return format!("{what}: {family}: planned, not run ({})", f.status);
    }
    format!("{what}: no such point measured in this run")
}

/// [`absent`]'s `pick` for every point of the family.
pub(super) fn any_point(_: &str, _: &Value) -> bool {
    true
}

/// One machine's figure in one headline row.
#[derive(Debug, Clone)]
pub(super) enum Fig {
    /// A measured value: text for people, base-unit value, its statistics (for the noise
    /// mark), which direction is better.
    Val {
        text: String,
        value: f64,
        summary: Option<Summary>,
        better: Better,
    },
    /// Not in this result, and why.
    Absent(String),
}

/// A number for a headline cell: rates of operations without their unit (the row label has
/// it), times from 1 µs on in µs.
pub(super) fn short(value: f64, unit: &str) -> String {
    match unit {
        "ops_per_s" | "iops" => {
            let (v, p) = hwsurvey_model::units::decimal_prefixed(value);
            format!("{v}{p}")
        }
        "ns" if value >= 1000.0 => format!(
            "{} µs",
            hwsurvey_model::units::three_significant(value / 1000.0)
        ),
        u => human(value, u),
    }
}

pub(super) fn val(m: &MetricResult, s: &Summary, unit: &str) -> Fig {
    Fig::Val {
        text: short(s.median, unit),
        value: s.median,
        summary: Some(s.clone()),
        better: m.better,
    }
}

/// Measured points of `family` in `f` matching `pick`.
pub(super) fn points<'a>(
    f: &'a ResultFile,
    family: &'a str,
    pick: impl Fn(&TestResult) -> bool + 'a,
) -> impl Iterator<Item = &'a TestResult> + 'a {
    f.tests
        .iter()
        .filter(move |t| t.point.family == family && t.outcome == Outcome::Measured && pick(t))
}

/// `cpu.scaling` kernel `kernel`: (1-thread figure, peak figure "@threads", "efficiency, knee"
/// with the efficiency at all threads as its value, the peak's beside it when the curve falls
/// after it, "does not scale" when its peak is at 1 thread; [`crate::summary::efficiency_words`]).
pub(super) fn cpu_figs(f: &ResultFile, kernel: &str) -> [Fig; 3] {
    let pts: Vec<(&TestResult, &MetricResult, &Summary)> = points(f, CpuScaling::FAMILY, |t| {
        CpuScaling::of(t).is_some_and(|p| p.kernel == kernel)
    })
    .filter_map(|t| metric(t, "ops_per_s").map(|(m, s)| (t, m, s)))
    .collect();
    let why = || {
        Fig::Absent(absent(
            f,
            "cpu.scaling",
            &format!("{kernel} kernel"),
            |_, params| CpuScaling::read(params).is_some_and(|p| p.kernel == kernel),
        ))
    };
    let single = pts
        .iter()
        .find(|(t, _, _)| t.point.threads == 1)
        .map(|(_, m, s)| val(m, s, "ops_per_s"))
        .unwrap_or_else(why);
    let curve: Vec<ScalingPoint> = pts
        .iter()
        .map(|(t, _, s)| ScalingPoint {
            threads: t.point.threads,
            throughput: s.median,
        })
        .collect();
    let Some(a) = analyse(&curve) else {
        return [single, why(), why()];
    };
    let peak = pts
        .iter()
        .find(|(t, _, _)| t.point.threads == a.peak_threads)
        .map(|(_, m, s)| {
            let mut v = val(m, s, "ops_per_s");
            if let Fig::Val { text, .. } = &mut v {
                *text = format!("{text} @{}", a.peak_threads);
            }
            v
        })
        .unwrap_or_else(why);
    // the figure compared is the efficiency at all threads: at the peak, a curve that peaks
    // at 1 thread of 8 would be "100%", better than any machine that scales
    let eff = match (
        a.efficiency_at_all_threads.or(a.efficiency_at_peak),
        crate::summary::efficiency_words(&a),
    ) {
        (Some(e), Some(words)) if a.does_not_scale() => Fig::Val {
            text: words,
            value: e,
            summary: None,
            better: Better::Higher,
        },
        (Some(e), Some(words)) => Fig::Val {
            text: format!("{words}, knee {}", a.knee_threads),
            value: e,
            summary: None,
            better: Better::Higher,
        },
        _ => Fig::Absent(format!("{kernel} efficiency: no 1-thread point")),
    };
    [single, peak, eff]
}

/// STREAM Triad: the highest median over thread counts, and its share of the theoretical
/// peak of the populated memory channels (`memory.population.peak_bandwidth`).
pub(super) fn triad_figs(f: &ResultFile) -> [Fig; 2] {
    let best = points(f, MemBandwidth::FAMILY, |t| {
        MemBandwidth::of(t)
            .is_some_and(|p| p.test == "stream" && p.kernel.as_deref() == Some("triad"))
    })
    .filter_map(|t| metric(t, "bandwidth_bytes_per_s").map(|(m, s)| (t, m, s)))
    .max_by(|a, b| a.2.median.total_cmp(&b.2.median));
    let Some((t, m, s)) = best else {
        let why = absent(f, "mem.bandwidth", "STREAM Triad", |_, params| {
            MemBandwidth::read(params)
                .is_some_and(|p| p.test == "stream" && p.kernel.as_deref() == Some("triad"))
        });
        return [Fig::Absent(why.clone()), Fig::Absent(why)];
    };
    let mut peak = val(m, s, "bytes_per_s");
    if let Fig::Val { text, .. } = &mut peak {
        *text = format!("{text} @{}", t.point.threads);
    }
    let pop = &f.machine.memory.population;
    let theoretical = pop
        .known()
        .and_then(|p| p.peak_bandwidth.known())
        .map(|b| b.bandwidth_bytes_per_s as f64)
        .filter(|v| *v > 0.0);
    let share = match theoretical {
        Some(th) => Fig::Val {
            text: format!("{:.0}%", 100.0 * s.median / th),
            value: s.median / th,
            summary: None,
            better: Better::Higher,
        },
        None => Fig::Absent(why_unknown(pop.why_unknown(), "memory population")),
    };
    [peak, share]
}

/// Idle load-to-use latency (full random order) at the largest working set of page mode
/// `mode` (`base`, `thp`): the memory working set of the run.
pub(super) fn latency_fig(f: &ResultFile, mode: &str) -> Fig {
    let best = points(f, MemLatency::FAMILY, |_| true)
        .filter_map(|t| MemLatency::of(t).map(|p| (t, p)))
        .filter(|(_, p)| p.full_random() && p.page_mode.label() == mode)
        .filter_map(|(t, p)| metric(t, "latency_ns").map(|(m, s)| (p.working_set_bytes, m, s)))
        .max_by_key(|(ws, _, _)| *ws);
    match best {
        Some((ws, m, s)) => {
            let mut v = val(m, s, "ns");
            if let Fig::Val { text, .. } = &mut v {
                *text = format!("{text} @{}", format_bytes_binary(ws).replace(' ', ""));
            }
            v
        }
        None => Fig::Absent(absent(
            f,
            "mem.latency",
            &format!("{mode} pages"),
            |_, params| {
                MemLatency::read(params)
                    .is_some_and(|p| p.full_random() && p.page_mode.label() == mode)
            },
        )),
    }
}

/// Loaded latency at the highest bandwidth the load threads delivered.
pub(super) fn loaded_fig(f: &ResultFile) -> Fig {
    let best = points(f, "mem.loaded_latency", |_| true)
        .filter_map(|t| {
            let (_, bw) = metric(t, "bandwidth_bytes_per_s")?;
            metric(t, "latency_ns").map(|(m, s)| (bw.median, m, s))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((bw, m, s)) => {
            let mut v = val(m, s, "ns");
            if let Fig::Val { text, .. } = &mut v {
                *text = format!("{text} @{}", human(bw, "bytes_per_s"));
            }
            v
        }
        None => Fig::Absent(absent(f, "mem.loaded_latency", "loaded latency", any_point)),
    }
}

/// Topology class of a c2c pair (`params.pair.label`: `smt`, `package`, `cross-node`).
pub(super) fn c2c_class(t: &TestResult) -> Option<String> {
    C2cLatency::of(t).map(|p| p.pair.label)
}

pub(super) fn c2c_fig(f: &ResultFile, class: &str) -> Fig {
    points(f, "c2c.latency", |t| c2c_class(t).as_deref() == Some(class))
        .find_map(|t| metric(t, "round_trip_ns"))
        .map(|(m, s)| val(m, s, "ns"))
        .unwrap_or_else(|| {
            if points(f, "c2c.latency", |_| true).next().is_some() {
                Fig::Absent(format!("c2c: no CPU pair of class {class} on this machine"))
            } else {
                Fig::Absent(absent(f, "c2c.latency", "c2c", any_point))
            }
        })
}

/// Point-select: highest closed-loop throughput, with its client count.
pub(super) fn point_select_max(f: &ResultFile) -> Fig {
    points(f, PointSelect::FAMILY, |t| {
        PointSelect::of(t).is_some_and(|p| p.test == "closed")
    })
    .filter_map(|t| metric(t, "throughput_ops_per_s").map(|(m, s)| (t, m, s)))
    .max_by(|a, b| a.2.median.total_cmp(&b.2.median))
    .map(|(t, m, s)| {
        let mut v = val(m, s, "ops_per_s");
        if let Fig::Val { text, .. } = &mut v {
            let clients = PointSelect::of(t).and_then(|p| p.clients).unwrap_or(0);
            *text = format!("{text} @{clients}");
        }
        v
    })
    .unwrap_or_else(|| {
        Fig::Absent(absent(
            f,
            "service.point_select",
            "point-select",
            |_, params| PointSelect::read(params).is_some_and(|p| p.test == "closed"),
        ))
    })
}

pub(super) fn critical_figs(f: &ResultFile) -> [Fig; 2] {
    use crate::critical::{critical_rate, critical_thp_base_ratio, short_reason_without_ratio};
    let rate = match critical_rate(&f.tests, "base") {
        Ok(r) => Fig::Val {
            text: short(r, "ops_per_s"),
            value: r,
            summary: None,
            better: Better::Higher,
        },
        Err(why) => Fig::Absent(format!("critical rate: {why}")),
    };
    let ratio = match critical_thp_base_ratio(&f.tests) {
        Ok(r) => Fig::Val {
            text: format!("{:.2}", r.thp_over_base),
            value: r.thp_over_base,
            summary: None,
            better: Better::Higher,
        },
        Err(_) => Fig::Absent(format!(
            "critical THP/base: {}",
            short_reason_without_ratio(&f.tests)
        )),
    };
    [rate, ratio]
}

/// 4 KiB random-read IOPS: the best point over one target, the best over all targets of
/// the run (when more than one), and the CPU time per I/O of the one-target best.
pub(super) fn iops_figs(f: &ResultFile) -> [Fig; 3] {
    let randread = |t: &TestResult| StorageIops::of(t).is_some_and(|p| p.pattern == "randread_4k");
    let ntargets = |t: &TestResult| StorageIops::of(t).map_or(0, |p| p.targets.len());
    let best = |n: &dyn Fn(usize) -> bool| {
        points(f, "storage.iops", randread)
            .filter(|t| n(ntargets(t)))
            .filter_map(|t| metric(t, "iops").map(|(m, s)| (t, m, s)))
            .max_by(|a, b| a.2.median.total_cmp(&b.2.median))
    };
    let why = absent(f, "storage.iops", "4 KiB random read", |_, params| {
        StorageIops::read(params).is_some_and(|p| p.pattern == "randread_4k")
    });
    let one = best(&|n| n == 1);
    let most = points(f, "storage.iops", randread)
        .map(ntargets)
        .max()
        .unwrap_or(0);
    let fig = |b: Option<(&TestResult, &MetricResult, &Summary)>| match b {
        Some((_, m, s)) => val(m, s, "iops"),
        None => Fig::Absent(why.clone()),
    };
    let all = if most > 1 {
        fig(best(&|n| n == most))
    } else if one.is_some() {
        Fig::Absent("IOPS of all devices: the run had one storage target".into())
    } else {
        Fig::Absent(why.clone())
    };
    let cpu = match one {
        Some((t, _, _)) => match metric(t, "cpu_ns_per_io") {
            Some((m, s)) => val(m, s, "ns"),
            None => Fig::Absent("CPU per I/O: not recorded by this hwsurvey version".into()),
        },
        None => Fig::Absent(why.clone()),
    };
    [fig(one), all, cpu]
}

/// RAID-6 P+Q generation on one core (the `best` path at 1 thread), the widest stripe.
pub(super) fn raid_fig(f: &ResultFile) -> Fig {
    points(f, RaidParity::FAMILY, |t| t.point.threads == 1)
        .filter_map(|t| RaidParity::of(t).map(|p| (t, p)))
        .filter(|(_, p)| p.op == "gen" && p.path == "best")
        .filter_map(|(t, p)| metric(t, "bandwidth_bytes_per_s").map(|(m, s)| (p.data_blocks, m, s)))
        .max_by_key(|(d, _, _)| *d)
        .map(|(d, m, s)| {
            let mut v = val(m, s, "bytes_per_s");
            if let Fig::Val { text, .. } = &mut v {
                *text = format!("{text} ({d}+2)");
            }
            v
        })
        .unwrap_or_else(|| {
            Fig::Absent(absent(f, "raid.parity", "RAID-6 gen", |id, params| {
                hwsurvey_result::plan::split_rung(id).is_some_and(|r| r.threads == 1)
                    && RaidParity::read(params).is_some_and(|p| p.op == "gen" && p.path == "best")
            }))
        })
}

/// The findings of the built-in qualification rules for one result (stored at run time, or
/// recomputed for older files).
fn report_of(i: &Input) -> hwsurvey_qualify::Report {
    let rules = hwsurvey_qualify::RuleSet::builtin();
    let rules_ref = hwsurvey_qualify::stored::RulesRef::builtin();
    hwsurvey_qualify::stored::findings_of_result(&i.label, &i.file, &rules, &rules_ref)
}

/// Failed and warned findings about the machine (an unmet precondition of the profile, such
/// as an empty hugetlb pool, is no fault of the hardware: [`preconditions_fig`]).
pub(super) fn findings_fig(i: &Input) -> Fig {
    let r = report_of(i);
    let (fail, warn) = (
        r.count(hwsurvey_qualify::Verdict::Fail),
        r.count(hwsurvey_qualify::Verdict::Warn),
    );
    Fig::Val {
        text: format!("{fail} fail, {warn} warn"),
        value: (fail + warn) as f64,
        summary: None,
        better: Better::Lower,
    }
}

/// The profile's preconditions the run did not have (hugetlb pools empty, THP off, a busy
/// machine at start): their rule ids, or `none`; the value is their count.
pub(super) fn preconditions_fig(i: &Input) -> Fig {
    let r = report_of(i);
    let unmet: Vec<&str> = r
        .preconditions()
        .filter(|f| {
            matches!(
                f.verdict,
                hwsurvey_qualify::Verdict::Warn | hwsurvey_qualify::Verdict::Fail
            )
        })
        .map(|f| f.rule.as_str())
        .collect();
    Fig::Val {
        text: if unmet.is_empty() {
            "none".into()
        } else {
            unmet.join(", ")
        },
        value: unmet.len() as f64,
        summary: None,
        better: Better::Lower,
    }
}

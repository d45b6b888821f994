//! The first thing every `compare` output shows: each machine in one line, then the headline
//! table (one column per machine, one row per headline figure, each figure with its ratio to
//! the baseline and a noise mark), with every unknown and caveat written once as a numbered
//! footnote under the table instead of in its cells.
//!
//! Figures are read from the typed result data: a point's family, thread count and `params`
//! (`kernel`, `test`, `page_mode`, `pair`, `targets`, `op`, `path`, `data_blocks`), its metrics
//! by name, and the machine document's probed values; never from point ids. The noise mark is
//! [`hwsurvey_stats::within_noise`], the rule of every relative column of `compare`.

use hwsurvey_model::units::format_bytes_binary;
use hwsurvey_result::outcome::Better;
use hwsurvey_result::{MetricResult, Outcome, ResultFile, TestResult};
use hwsurvey_stats::scaling::{analyse, ScalingPoint};
use hwsurvey_stats::Summary;
use serde_json::Value;

use crate::format::human;
use crate::input::Input;
use crate::layout::{Cell, Row, Table};

/// Id of the one-line-per-machine table ([`machines_table`]).
pub const MACHINES_ID: &str = "glance";
/// Id of the headline table ([`headline_table`]).
pub const HEADLINE_ID: &str = "headline";

/// Column letter of machine `k` (`A`, `B`, ... `Z`, then `M27`, ...).
pub fn letter(k: usize) -> String {
    if k < 26 {
        ((b'A' + k as u8) as char).to_string()
    } else {
        format!("M{}", k + 1)
    }
}

/// Numbered footnotes, each text once: [`Footnotes::mark`] gives the number of a text,
/// adding it when new.
#[derive(Debug, Default)]
pub struct Footnotes {
    texts: Vec<String>,
}

impl Footnotes {
    /// The number (1-based) of `text`, added when not there yet.
    pub fn mark(&mut self, text: &str) -> usize {
        match self.texts.iter().position(|t| t == text) {
            Some(i) => i + 1,
            None => {
                self.texts.push(text.to_string());
                self.texts.len()
            }
        }
    }
    /// `[n] text` lines, in number order.
    pub fn lines(&self) -> Vec<String> {
        self.texts
            .iter()
            .enumerate()
            .map(|(i, t)| format!("[{}] {t}", i + 1))
            .collect()
    }
}

/// Why the figures of a run are not comparable with a full run on bare metal: quick profile,
/// time limit, emulated CPU (full-system emulator or a binary under qemu-user), a machine
/// already loaded at start (1-minute load average above half the usable CPUs). Empty when
/// nothing is recorded against it.
pub fn not_comparable(f: &ResultFile) -> Vec<String> {
    let mut why = Vec::new();
    if f.profile.id == "quick" {
        why.push("quick profile (small working sets, few samples)".to_string());
    }
    if f.time_limit.is_some() {
        why.push("time-limited run".into());
    }
    if f.status != hwsurvey_result::RunStatus::Complete {
        why.push(format!("run status {}", f.status));
    }
    let virt = known_ok(f.machine.pointer("/os/virtualization"));
    if virt.and_then(|v| v.get("platform")).and_then(Value::as_str) == Some("emulated") {
        why.push("full-system emulation: figures measure the emulator".into());
    }
    let bin = known_ok(f.machine.pointer("/os/binary_vs_kernel"));
    if bin.and_then(|b| b.get("native")).and_then(Value::as_bool) == Some(false) {
        why.push("binary emulated (qemu-user): figures measure the emulator".into());
    }
    if let Some([one, _, _]) = f.load_before.load_average.known() {
        let cpus = f.environment.cpus.len().max(1) as f64;
        if *one > 0.5 * cpus {
            why.push(format!(
                "machine busy at start (load average {one:.2} on {cpus} usable CPUs)"
            ));
        }
    }
    why
}

// ------------------------------------------------------------------ reading the result

/// `{"known": v}` -> Some(v); `{"unknown": ..}` or absent -> None.
fn known_ok(v: Option<&Value>) -> Option<&Value> {
    let v = v?;
    match (v.get("known"), v.get("unknown")) {
        (Some(k), _) => Some(k),
        (None, Some(_)) => None,
        (None, None) if v.is_null() => None,
        (None, None) => Some(v),
    }
}

/// Why a probed value is unknown, in the probe's words.
fn why_unknown(v: Option<&Value>, what: &str) -> String {
    let Some(u) = v.and_then(|v| v.get("unknown")) else {
        return format!("{what}: not in this result file");
    };
    if let Ok(known) = serde_json::from_value::<hwsurvey_model::Unknown>(u.clone()) {
        return format!("{what} unknown: {known}");
    }
    format!("{what} unknown")
}

fn param<'a>(t: &'a TestResult, key: &str) -> Option<&'a Value> {
    t.point.params.get(key)
}

fn param_str<'a>(t: &'a TestResult, key: &str) -> Option<&'a str> {
    param(t, key).and_then(Value::as_str)
}

/// The metric `name` of `t` with its statistics.
fn metric<'a>(t: &'a TestResult, name: &str) -> Option<(&'a MetricResult, &'a Summary)> {
    let m = t.metrics.iter().find(|m| m.name == name)?;
    Some((m, m.summary.as_ref()?))
}

/// Why a family's figure is absent from `f`: a point of the family that was not measured
/// (its outcome and reason), a skip recorded by the plan, or the family not planned at all.
fn absent(f: &ResultFile, family: &str, what: &str) -> String {
    let of_family = |t: &&TestResult| t.point.family == family;
    if let Some(t) = f
        .tests
        .iter()
        .filter(of_family)
        .find(|t| t.outcome != Outcome::Measured)
    {
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
        .find(|s| s.family == family)
    {
        return format!("{what}: {family} skipped: {}", s.reason);
    }
    if !f.plan.families.iter().any(|p| p.family == family) {
        return format!("{what}: {family} not in this run's plan");
    }
    format!("{what}: no such point measured in this run")
}

/// One machine's figure in one headline row.
#[derive(Debug, Clone)]
enum Fig {
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
fn short(value: f64, unit: &str) -> String {
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

fn val(m: &MetricResult, s: &Summary, unit: &str) -> Fig {
    Fig::Val {
        text: short(s.median, unit),
        value: s.median,
        summary: Some(s.clone()),
        better: m.better,
    }
}

/// Measured points of `family` in `f` matching `pick`.
fn points<'a>(
    f: &'a ResultFile,
    family: &'a str,
    pick: impl Fn(&TestResult) -> bool + 'a,
) -> impl Iterator<Item = &'a TestResult> + 'a {
    f.tests
        .iter()
        .filter(move |t| t.point.family == family && t.outcome == Outcome::Measured && pick(t))
}

/// `cpu.scaling` kernel `kernel`: (1-thread figure, all-thread figure, "efficiency, knee").
fn cpu_figs(f: &ResultFile, kernel: &str) -> [Fig; 3] {
    let pts: Vec<(&TestResult, &MetricResult, &Summary)> =
        points(f, "cpu.scaling", |t| param_str(t, "kernel") == Some(kernel))
            .filter_map(|t| metric(t, "ops_per_s").map(|(m, s)| (t, m, s)))
            .collect();
    let why = || Fig::Absent(absent(f, "cpu.scaling", &format!("{kernel} kernel")));
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
    let eff = match a.efficiency_at_peak {
        Some(e) => Fig::Val {
            text: format!("{:.0}%, knee {}", e * 100.0, a.knee_threads),
            value: e,
            summary: None,
            better: Better::Higher,
        },
        None => Fig::Absent(format!("{kernel} efficiency: no 1-thread point")),
    };
    [single, peak, eff]
}

/// STREAM Triad: the highest median over thread counts, and its share of the theoretical
/// peak of the populated memory channels (`memory.population.peak_bandwidth`).
fn triad_figs(f: &ResultFile) -> [Fig; 2] {
    let best = points(f, "mem.bandwidth", |t| {
        param_str(t, "test") == Some("stream") && param_str(t, "kernel") == Some("triad")
    })
    .filter_map(|t| metric(t, "bandwidth_bytes_per_s").map(|(m, s)| (t, m, s)))
    .max_by(|a, b| a.2.median.total_cmp(&b.2.median));
    let Some((t, m, s)) = best else {
        let why = absent(f, "mem.bandwidth", "STREAM Triad");
        return [Fig::Absent(why.clone()), Fig::Absent(why)];
    };
    let mut peak = val(m, s, "bytes_per_s");
    if let Fig::Val { text, .. } = &mut peak {
        *text = format!("{text} @{}", t.point.threads);
    }
    let pop = f.machine.pointer("/memory/population");
    let theoretical = known_ok(pop)
        .and_then(|p| known_ok(p.get("peak_bandwidth")))
        .and_then(|b| b.get("bandwidth_bytes_per_s"))
        .and_then(Value::as_f64)
        .filter(|v| *v > 0.0);
    let share = match theoretical {
        Some(th) => Fig::Val {
            text: format!("{:.0}%", 100.0 * s.median / th),
            value: s.median / th,
            summary: None,
            better: Better::Higher,
        },
        None => Fig::Absent(why_unknown(pop, "memory population")),
    };
    [peak, share]
}

/// Idle load-to-use latency (full random order) at the largest working set of page mode
/// `mode` (`base`, `thp`): the memory working set of the run.
fn latency_fig(f: &ResultFile, mode: &str) -> Fig {
    let best = points(f, "mem.latency", |t| {
        param_str(t, "order") == Some("full_random")
            && param(t, "page_mode")
                .and_then(|p| p.get("kind"))
                .and_then(Value::as_str)
                == Some(mode)
    })
    .filter_map(|t| {
        let ws = param(t, "working_set_bytes").and_then(Value::as_u64)?;
        metric(t, "latency_ns").map(|(m, s)| (ws, m, s))
    })
    .max_by_key(|(ws, _, _)| *ws);
    match best {
        Some((ws, m, s)) => {
            let mut v = val(m, s, "ns");
            if let Fig::Val { text, .. } = &mut v {
                *text = format!("{text} @{}", format_bytes_binary(ws).replace(' ', ""));
            }
            v
        }
        None => Fig::Absent(absent(f, "mem.latency", &format!("{mode} pages"))),
    }
}

/// Loaded latency at the highest bandwidth the load threads delivered.
fn loaded_fig(f: &ResultFile) -> Fig {
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
        None => Fig::Absent(absent(f, "mem.loaded_latency", "loaded latency")),
    }
}

/// Topology class of a c2c pair (`params.pair.label`: `smt`, `package`, `cross-node`).
fn c2c_class(t: &TestResult) -> Option<String> {
    param(t, "pair")?
        .get("label")
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn c2c_fig(f: &ResultFile, class: &str) -> Fig {
    points(f, "c2c.latency", |t| c2c_class(t).as_deref() == Some(class))
        .find_map(|t| metric(t, "round_trip_ns"))
        .map(|(m, s)| val(m, s, "ns"))
        .unwrap_or_else(|| {
            if points(f, "c2c.latency", |_| true).next().is_some() {
                Fig::Absent(format!("c2c: no CPU pair of class {class} on this machine"))
            } else {
                Fig::Absent(absent(f, "c2c.latency", "c2c"))
            }
        })
}

/// Point-select: highest closed-loop throughput, with its client count.
fn point_select_max(f: &ResultFile) -> Fig {
    points(f, "service.point_select", |t| {
        param_str(t, "test") == Some("closed")
    })
    .filter_map(|t| metric(t, "throughput_ops_per_s").map(|(m, s)| (t, m, s)))
    .max_by(|a, b| a.2.median.total_cmp(&b.2.median))
    .map(|(t, m, s)| {
        let mut v = val(m, s, "ops_per_s");
        if let Fig::Val { text, .. } = &mut v {
            let clients = param(t, "clients").and_then(Value::as_u64).unwrap_or(0);
            *text = format!("{text} @{clients}");
        }
        v
    })
    .unwrap_or_else(|| Fig::Absent(absent(f, "service.point_select", "point-select")))
}

fn critical_figs(f: &ResultFile) -> [Fig; 2] {
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
fn iops_figs(f: &ResultFile) -> [Fig; 3] {
    let randread = |t: &TestResult| param_str(t, "pattern") == Some("randread_4k");
    let ntargets = |t: &TestResult| {
        param(t, "targets")
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
    };
    let best = |n: &dyn Fn(usize) -> bool| {
        points(f, "storage.iops", randread)
            .filter(|t| n(ntargets(t)))
            .filter_map(|t| metric(t, "iops").map(|(m, s)| (t, m, s)))
            .max_by(|a, b| a.2.median.total_cmp(&b.2.median))
    };
    let why = absent(f, "storage.iops", "4 KiB random read");
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
fn raid_fig(f: &ResultFile) -> Fig {
    points(f, "raid.parity", |t| {
        t.point.threads == 1
            && param_str(t, "op") == Some("gen")
            && param_str(t, "path") == Some("best")
    })
    .filter_map(|t| {
        let d = param(t, "data_blocks").and_then(Value::as_u64)?;
        metric(t, "bandwidth_bytes_per_s").map(|(m, s)| (d, m, s))
    })
    .max_by_key(|(d, _, _)| *d)
    .map(|(d, m, s)| {
        let mut v = val(m, s, "bytes_per_s");
        if let Fig::Val { text, .. } = &mut v {
            *text = format!("{text} ({d}+2)");
        }
        v
    })
    .unwrap_or_else(|| Fig::Absent(absent(f, "raid.parity", "RAID-6 gen")))
}

/// Failed and warned findings of the built-in qualification rules.
fn findings_fig(i: &Input) -> Fig {
    let rules = hwsurvey_qualify::RuleSet::builtin();
    let rules_ref = hwsurvey_qualify::stored::RulesRef::builtin();
    match hwsurvey_qualify::stored::findings_of_result(&i.label, &i.file, &rules, &rules_ref) {
        Ok(r) => {
            let n = |v| r.findings.iter().filter(|f| f.verdict == v).count();
            let (fail, warn) = (
                n(hwsurvey_qualify::Verdict::Fail),
                n(hwsurvey_qualify::Verdict::Warn),
            );
            Fig::Val {
                text: format!("{fail} fail, {warn} warn"),
                value: (fail + warn) as f64,
                summary: None,
                better: Better::Lower,
            }
        }
        Err(why) => Fig::Absent(format!("findings: {why}")),
    }
}

// ------------------------------------------------------------------ the tables

/// One machine in one line: model, sockets x cores x threads, GHz, memory size and populated
/// channels, kernel, platform; unknowns as footnote marks.
fn machine_line(f: &ResultFile, notes: &mut Footnotes) -> String {
    let m = &f.machine;
    let mut unknown =
        |v: Option<&Value>, what: &str| format!("? [{}]", notes.mark(&why_unknown(v, what)));
    let id = m.pointer("/cpu/identity");
    let model = id
        .and_then(|i| i.get("model_name").or_else(|| i.get("sparc_type")))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| unknown(None, "CPU model"));
    let topo = ["packages", "cores", "threads"]
        .iter()
        .map(|k| {
            let v = m.pointer(&format!("/cpu/topology/{k}"));
            known_ok(v)
                .map(|v| v.to_string())
                .unwrap_or_else(|| unknown(v, k))
        })
        .collect::<Vec<_>>()
        .join(" x ");
    let ghz = m
        .pointer("/cpu/kinds")
        .and_then(Value::as_array)
        .and_then(|k| {
            k.iter()
                .filter_map(|k| k.get("max_freq_khz").and_then(Value::as_f64))
                .reduce(f64::max)
        })
        .map(|khz| format!("{:.2} GHz", khz / 1e6))
        .unwrap_or_else(|| {
            format!(
                "GHz ? [{}]",
                notes.mark(
                    "clock unknown: no cpufreq cpuinfo_max_freq (no cpufreq driver, e.g. in a VM)"
                )
            )
        });
    let mem = known_ok(m.pointer("/memory/meminfo"))
        .and_then(|i| i.get("mem_total_bytes"))
        .and_then(Value::as_u64)
        .map(format_bytes_binary)
        .unwrap_or_else(|| "memory ?".into());
    let pop = m.pointer("/memory/population");
    let channels = known_ok(pop)
        .and_then(|p| known_ok(p.get("peak_bandwidth")))
        .and_then(|b| b.get("populated_channels"))
        .and_then(Value::as_u64)
        .map(|c| format!("{c} channels"))
        .unwrap_or_else(|| {
            format!(
                "channels ? [{}]",
                notes.mark(&why_unknown(pop, "memory population"))
            )
        });
    let kernel = f
        .environment
        .kernel_release
        .known()
        .cloned()
        .unwrap_or_else(|| "kernel ?".into());
    let virt = m.pointer("/os/virtualization");
    let mut platform = match known_ok(virt)
        .and_then(|v| v.get("platform"))
        .and_then(Value::as_str)
    {
        Some("no_hypervisor_seen") => "native".to_string(),
        Some("virtual_machine") => "virtual machine".into(),
        Some("emulated") => "emulated".into(),
        Some("partition") => "logical partition".into(),
        Some(other) => other.to_string(),
        None => format!(
            "platform ? [{}]",
            notes.mark(&why_unknown(virt, "platform (os.virtualization)"))
        ),
    };
    if let Some(h) = known_ok(virt)
        .and_then(|v| v.get("hypervisor"))
        .and_then(Value::as_str)
    {
        platform += &format!(" ({h})");
    }
    let bin = known_ok(m.pointer("/os/binary_vs_kernel"));
    if bin.and_then(|b| b.get("native")).and_then(Value::as_bool) == Some(false) {
        platform += ", binary under qemu-user";
    }
    format!(
        "{model}, {topo}, {ghz}, {mem} {channels}, {} {kernel}, {platform}, {} v{}",
        f.environment.arch, f.profile.id, f.profile.version
    )
}

/// The two tables on top of every output, numbering their footnotes in one sequence:
/// [`machines_table`], then [`headline_table`].
pub fn top_tables(inputs: &[Input], base: usize, flags: &[String]) -> [Table; 2] {
    tables_on_top(inputs, base, flags, false)
}

/// [`top_tables`] for the closing summary of one run: the headline leaves out the rows of
/// families outside the run's plan (a run `--only cpu.scaling` shows the CPU rows and the
/// findings, not ten rows footnoted "not in this run's plan").
pub fn run_tables(input: &Input) -> [Table; 2] {
    tables_on_top(std::slice::from_ref(input), 0, &[], true)
}

fn tables_on_top(
    inputs: &[Input],
    base: usize,
    flags: &[String],
    planned_only: bool,
) -> [Table; 2] {
    let mut notes = Footnotes::default();
    let mut machines = machines_table(inputs, base, &mut notes);
    machines.notes = notes.lines();
    let first = notes.texts.len();
    let mut headline = headline_table(inputs, base, flags, planned_only, &mut notes);
    headline.notes = notes.lines().split_off(first);
    [machines, headline]
}

/// The machines table: one row per column letter, the column's label and the machine in one
/// line; unknowns are footnotes added to `notes`.
fn machines_table(inputs: &[Input], base: usize, notes: &mut Footnotes) -> Table {
    let rows = inputs
        .iter()
        .enumerate()
        .map(|(k, i)| Row {
            label: if k == base {
                format!("{} (baseline)", letter(k))
            } else {
                letter(k)
            },
            unit: None,
            x: None,
            cells: vec![Cell::text(format!(
                "{}: {}",
                i.label,
                machine_line(&i.file, notes)
            ))],
        })
        .collect();
    Table {
        id: MACHINES_ID.into(),
        title: "Machines at a glance".into(),
        row_header: "column".into(),
        columns: vec![
            "label: model, sockets x cores x threads, clock, memory, kernel, platform, profile"
                .into(),
        ],
        rows,
        notes: Vec::new(),
        plot: None,
    }
}

/// The headline table: one column per machine (letters of [`machines_table`]), one row per
/// headline figure. A cell is the figure, then in its note the ratio to the baseline and a
/// mark: `+` better, `-` worse, `~` within noise, `!` not comparable (one of the two runs is
/// quick, time-limited, emulated or started busy: never a win or a loss). A figure a result
/// does not have is a footnote mark; reasons, caveats and the flags of the comparison are
/// the table's notes, each once, numbered.
fn headline_table(
    inputs: &[Input],
    base: usize,
    flags: &[String],
    planned_only: bool,
    notes: &mut Footnotes,
) -> Table {
    // One machine has no baseline to be compared with: no ratio, no mark to explain.
    if inputs.len() > 1 {
        notes.mark(&format!(
        "each figure with its ratio to {} (the baseline): + better, - worse, ~ within noise (overlapping 95% bootstrap intervals of the medians, or a difference below the larger CV), ! not comparable (never a win or a loss); value = median of the samples",
        letter(base)
    ));
    }
    let mut columns = Vec::new();
    let mut comparable = Vec::new();
    for (k, i) in inputs.iter().enumerate() {
        let why = not_comparable(&i.file);
        comparable.push(why.is_empty());
        let mut head = letter(k);
        if !why.is_empty() {
            let n = notes.mark(&format!(
                "{}: not comparable: {}",
                letter(k),
                why.join("; ")
            ));
            head += &format!(" ! [{n}]");
        }
        columns.push(head);
    }
    for f in flags {
        notes.mark(f);
    }
    let files: Vec<&ResultFile> = inputs.iter().map(|i| &i.file).collect();
    let mut rows: Vec<(String, Vec<Fig>)> = Vec::new();
    for (kernel, name) in [("integer", "int"), ("floating_point", "fp")] {
        let figs: Vec<[Fig; 3]> = files.iter().map(|f| cpu_figs(f, kernel)).collect();
        for (j, label) in [
            "1 thread, ops/s",
            "all threads, ops/s @N",
            "efficiency, knee",
        ]
        .iter()
        .enumerate()
        {
            rows.push((
                format!("{name} {label}"),
                figs.iter().map(|f| f[j].clone()).collect(),
            ));
        }
    }
    let triad: Vec<[Fig; 2]> = files.iter().map(|f| triad_figs(f)).collect();
    rows.push((
        "STREAM Triad peak @N".into(),
        triad.iter().map(|t| t[0].clone()).collect(),
    ));
    rows.push((
        "Triad / theoretical".into(),
        triad.iter().map(|t| t[1].clone()).collect(),
    ));
    for mode in ["base", "thp"] {
        rows.push((
            format!("idle latency, {mode} @WS"),
            files.iter().map(|f| latency_fig(f, mode)).collect(),
        ));
    }
    rows.push((
        "loaded latency @peak BW".into(),
        files.iter().map(|f| loaded_fig(f)).collect(),
    ));
    let mut classes: Vec<String> = Vec::new();
    for f in &files {
        for t in points(f, "c2c.latency", |_| true) {
            if let Some(c) = c2c_class(t) {
                if !classes.contains(&c) {
                    classes.push(c);
                }
            }
        }
    }
    if classes.is_empty() {
        classes.push("any".into());
    }
    for c in &classes {
        rows.push((
            format!("c2c, {c}"),
            files.iter().map(|f| c2c_fig(f, c)).collect(),
        ));
    }
    rows.push((
        "point-select ops/s @clients".into(),
        files.iter().map(|f| point_select_max(f)).collect(),
    ));
    let crit: Vec<[Fig; 2]> = files.iter().map(|f| critical_figs(f)).collect();
    rows.push((
        "critical rate, ops/s".into(),
        crit.iter().map(|c| c[0].clone()).collect(),
    ));
    rows.push((
        "critical rate THP/base".into(),
        crit.iter().map(|c| c[1].clone()).collect(),
    ));
    let iops: Vec<[Fig; 3]> = files.iter().map(|f| iops_figs(f)).collect();
    for (j, label) in ["4k read IOPS, 1 device", "4k read IOPS, all", "CPU per I/O"]
        .iter()
        .enumerate()
    {
        rows.push((
            label.to_string(),
            iops.iter().map(|i| i[j].clone()).collect(),
        ));
    }
    rows.push((
        "RAID-6 gen, 1 core".into(),
        files.iter().map(|f| raid_fig(f)).collect(),
    ));
    rows.push(("findings".into(), inputs.iter().map(findings_fig).collect()));
    if planned_only {
        rows.retain(|(label, _)| {
            row_family(label).is_none_or(|family| {
                files
                    .iter()
                    .any(|f| f.plan.families.iter().any(|p| p.family == family))
            })
        });
    }
    let rows = rows
        .into_iter()
        .map(|(label, figs)| headline_row(label, &figs, base, &comparable, notes))
        .collect();
    Table {
        id: HEADLINE_ID.into(),
        title: "Headline".into(),
        row_header: "figure".into(),
        columns,
        rows,
        notes: Vec::new(),
        plot: None,
    }
}

/// The family a headline row's figures come from, by the row's label; `None` for the
/// findings, which every run has.
fn row_family(label: &str) -> Option<&'static str> {
    [
        ("int ", "cpu.scaling"),
        ("fp ", "cpu.scaling"),
        ("STREAM Triad", "mem.bandwidth"),
        ("Triad /", "mem.bandwidth"),
        ("idle latency", "mem.latency"),
        ("loaded latency", "mem.loaded_latency"),
        ("c2c", "c2c.latency"),
        ("point-select", "service.point_select"),
        ("critical rate", "service.point_select"),
        ("4k read IOPS", "storage.iops"),
        ("CPU per I/O", "storage.iops"),
        ("RAID-6", "raid.parity"),
    ]
    .iter()
    .find(|(prefix, _)| label.starts_with(prefix))
    .map(|(_, family)| *family)
}

fn headline_row(
    label: String,
    figs: &[Fig],
    base: usize,
    comparable: &[bool],
    notes: &mut Footnotes,
) -> Row {
    let unit = None;
    let cells = figs
        .iter()
        .enumerate()
        .map(|(k, fig)| match fig {
            Fig::Absent(why) => Cell::text(format!("— [{}]", notes.mark(why))),
            Fig::Val {
                text,
                value,
                summary,
                better,
            } => {
                let mut cell = Cell::text(text.clone());
                cell.value = Some(*value);
                cell.stats = summary.as_ref().map(crate::layout::CellStats::of);
                // counts of findings have no ratio
                if k != base && label != "findings" {
                    cell.note = ratio_note(
                        *value,
                        summary.as_ref(),
                        &figs[base],
                        *better,
                        comparable[k] && comparable[base],
                    );
                }
                cell
            }
        })
        .collect();
    Row {
        label,
        unit,
        x: None,
        cells,
    }
}

/// `1.23x +`: the ratio to the baseline figure and its mark; None without a baseline figure.
fn ratio_note(
    value: f64,
    summary: Option<&Summary>,
    base: &Fig,
    better: Better,
    comparable: bool,
) -> Option<String> {
    let Fig::Val {
        value: b,
        summary: bs,
        ..
    } = base
    else {
        return None;
    };
    if *b == 0.0 || !b.is_finite() || !value.is_finite() {
        return None;
    }
    let ratio = value / b;
    let mark = if !comparable {
        "!"
    } else {
        match (summary, bs) {
            (Some(s), Some(bs)) if hwsurvey_stats::within_noise(s, bs) => "~",
            _ if ratio == 1.0 => "~",
            _ => match (better, ratio > 1.0) {
                (Better::Higher, true) | (Better::Lower, false) => "+",
                _ => "-",
            },
        }
    };
    Some(format!("{ratio:.2}x {mark}"))
}

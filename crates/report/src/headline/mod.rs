//! The first thing every `compare` output shows: each machine in one line, then the headline
//! table (one column per machine, one row per headline figure, each figure with its ratio to
//! the baseline and a noise mark), with every unknown and caveat written once as a numbered
//! footnote under the table instead of in its cells.
//!
//! Figures are read from the typed result data: a point's family, thread count and `params`
//! (`kernel`, `test`, `page_mode`, `pair`, `targets`, `op`, `path`, `data_blocks`), its metrics
//! by name, and the machine document's probed values; never from point ids. The noise mark is
//! [`hwsurvey_stats::within_noise`], the rule of every relative column of `compare`.

use hwsurvey_machine::virt::Platform;
use hwsurvey_model::units::{format_bytes_binary, plural};
use hwsurvey_model::Unknown;
use hwsurvey_result::outcome::Better;
use hwsurvey_result::provenance;
use hwsurvey_result::ResultFile;
use hwsurvey_stats::Summary;

use crate::input::Input;
use crate::layout::{Cell, Row, Table};

mod figures;
use figures::{
    c2c_class, c2c_fig, cpu_figs, critical_figs, findings_fig, iops_figs, latency_fig, loaded_fig,
    point_select_max, points, preconditions_fig, raid_fig, triad_figs, why_unknown, Fig,
};

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

/// The headline's note on why column `letter` is not comparable: `B: not comparable:
/// full-system emulation: figures measure the emulator; ...` (`why` from [`not_comparable`]).
pub(crate) fn not_comparable_note(letter: &str, why: &[String]) -> String {
    format!("{letter}: not comparable: {}", why.join("; "))
}

/// Whether `note`, a headline note as printed (`[2] B: not comparable: ...`) or as made, is
/// one of [`not_comparable_note`]'s: the renderers print those before the figures they
/// qualify, not under the table (an emulated run's "664 MB/s" must not fill the first screen
/// with the reason below it).
pub(crate) fn is_not_comparable_note(note: &str) -> bool {
    let text = match note.strip_prefix('[').and_then(|r| r.split_once("] ")) {
        Some((n, text)) if n.chars().all(|c| c.is_ascii_digit()) => text,
        _ => note,
    };
    text.split_once(": not comparable: ")
        .is_some_and(|(column, _)| {
            !column.is_empty()
                && column
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        })
}

/// The start of the key to the headline's marks ([`headline_table`]'s first note).
const KEY_START: &str = "each figure with its ratio to ";

/// Whether `note` (as printed, `[4] each figure ...`, or as made) is the key to the headline's
/// marks `+ - ~ !`: the terminal prints it whole right under the headline.
pub(crate) fn is_key_note(note: &str) -> bool {
    let text = note.strip_prefix("note: ").unwrap_or(note);
    let text = match text.strip_prefix('[').and_then(|r| r.split_once("] ")) {
        Some((n, text)) if n.chars().all(|c| c.is_ascii_digit()) => text,
        _ => text,
    };
    text.starts_with(KEY_START)
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
        // durations in the unit people read (`p99 4.09 ms`, not `p99 4091903 ns`)
        let text = &crate::format::humanize_ns(text);
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

/// Why the figures of a run may measure an emulator rather than a machine, one line each:
/// [`hwsurvey_result::provenance::emulation`] (qualify's and fleet's verdicts read the same).
pub fn emulation(f: &ResultFile) -> Vec<String> {
    hwsurvey_result::provenance::emulation(f)
}

/// Why the figures of a run are not comparable with a full run on bare metal: quick profile,
/// emulated CPU (full-system emulator, a virtual machine whose probe could not
/// exclude emulation, or a binary under qemu-user), a memory
/// working set held below the profile's rule by a memory limit, a cgroup CPU quota below the
/// usable CPUs, a clocksource changed by the kernel during the run, a machine already loaded
/// at start (1-minute load average above half the usable CPUs). Empty when nothing is recorded
/// against it.
pub fn not_comparable(f: &ResultFile) -> Vec<String> {
    let mut why = Vec::new();
    if f.profile.id == "quick" {
        why.push("quick profile (small working sets, few samples)".to_string());
    }
    // a time-limited run (`run --max-time`) is not here: its samples were fewer or shorter,
    // which is how its points were measured, not what they are (crate::comparability)
    if f.status != hwsurvey_result::RunStatus::Complete {
        why.push(format!("run status {}", f.status));
    }
    why.extend(emulation(f));
    // the memory cap (a cgroup, ulimit -v, MemAvailable) held the working set below the
    // profile's rule: "past the caches" figures are not those of an uncapped machine
    let rule = f
        .profile
        .run
        .working_set_rule_bytes(f.environment.llc.known().map(|l| l.total_size_bytes));
    if f.plan.memory_working_set_bytes < rule {
        // the limit's name (`RLIMIT_AS`, `cgroup v1 memory.limit_in_bytes`); the plan's line
        // and the file's plan.memory_cap_source give its file and figures
        let cap = f
            .plan
            .memory_cap_source
            .as_deref()
            .map_or("an unknown limit", |s| s.split(" (").next().unwrap_or(s));
        why.push(format!(
            "memory working set {} below the profile's {} (capped by {cap})",
            format_bytes_binary(f.plan.memory_working_set_bytes),
            format_bytes_binary(rule),
        ));
    }
    if let Some(q) = f.environment.binding_cpu_quota() {
        // its file is on the plan's line, in probe and in qualify's cpu.quota finding
        why.push(format!(
            "CPU quota {} CPUs of {} usable: threads past it are throttled",
            hwsurvey_model::units::format_cpus(q.cpus()),
            f.environment.cpu_count(),
        ));
    }
    // one note for all changes: the first, the last clocksource, and how many
    if let (Some(first), Some(last)) = (f.clocksource_changes.first(), f.clocksource_changes.last())
    {
        let more = match f.clocksource_changes.len() {
            1 => String::new(),
            n => format!(", then {} more changes, last to {}", n - 1, last.to),
        };
        why.push(format!(
            "clocksource changed from {} to {} during the run (first read after {}{more}): \
             figures timed before and after read different clocks",
            first.from, first.to, first.seen_after
        ));
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

// ------------------------------------------------------------------ the tables

/// One machine in one line: model, sockets x cores per socket x threads per core (as lscpu
/// prints them), GHz, memory size and populated channels, kernel, platform. What is unknown
/// is said in words once (`clock unknown`, `channels unknown`), with a footnote mark that
/// says why. On an emulated platform (full-system emulation, or the binary under qemu-user) a
/// measured clock is written as the emulator's pace, never as the machine's clock.
fn machine_line(f: &ResultFile, notes: &mut Footnotes) -> String {
    let m = &f.machine;
    // every string taken from the file is bounded here, where the line is composed, so the
    // line stays under layout::MAX_CELL_CHARS and is never cut in the middle (the arm64
    // example's 218-character line read "1.94 GiB memor… [2] ... (218 bytes)" when the whole
    // cell was bounded to 200)
    let part = |s: &str| hwsurvey_model::text::one_line(s, MAX_PART_CHARS).into_owned();
    fn unknown(notes: &mut Footnotes, reason: Option<&Unknown>, what: &str, why: &str) -> String {
        format!("{what} unknown [{}]", notes.mark(&why_unknown(reason, why)))
    }
    let model = m
        .cpu
        .identity
        .model_name
        .as_deref()
        .map(part)
        .unwrap_or_else(|| unknown(notes, None, "CPU model", "CPU model"));
    let t = &m.cpu.topology;
    let counts = [
        ("packages", &t.packages),
        ("cores", &t.cores),
        ("threads", &t.threads),
    ];
    let topo = match counts.map(|(_, p)| p.known().map(|&n| u64::from(n))) {
        // totals where cores of different kinds or sockets of different sizes allow no
        // per-socket figure
        [Some(p), Some(c), Some(t)] => hwsurvey_model::units::sockets_cores_threads(p, c, t, " x "),
        _ => counts
            .iter()
            .map(|(k, p)| match p.known() {
                Some(n) => format!("{n} {k}"),
                None => unknown(notes, p.why_unknown(), k, k),
            })
            .collect::<Vec<_>>()
            .join(", "),
    };
    let virt = crate::machine::virtualization(f);
    let under_qemu_user = m.os.binary_vs_kernel.known().is_some_and(|b| !b.native);
    let platform_of = virt.ok().map(provenance::platform);
    // under emulation a measured clock is the emulator's pace, not a CPU's clock: never
    // written as a clock the machine runs at
    let emulated = platform_of == Some(Platform::Emulated) || under_qemu_user;
    let ghz = match crate::normalised::clock_ghz(f) {
        Ok((g, false)) => format!("{g:.2} GHz"),
        Ok((g, true)) if emulated => format!("{g:.2} GHz emulator pace (not a CPU clock)"),
        Ok((g, true)) => match crate::normalised::against_nominal(f, g) {
            Some(words) => format!("{g:.2} GHz measured [{}]", notes.mark(&words)),
            None => format!("{g:.2} GHz measured"),
        },
        Err(_) => format!(
            "clock unknown [{}]",
            notes.mark("no cpufreq cpuinfo_max_freq (no cpufreq driver, e.g. in a VM)")
        ),
    };
    let mem = m
        .memory
        .meminfo
        .known()
        .map(|i| format!("{} memory", format_bytes_binary(i.mem_total_bytes)))
        .unwrap_or_else(|| "memory size unknown".into());
    let pop = &m.memory.population;
    let channels = pop
        .known()
        .and_then(|p| p.peak_bandwidth.known())
        .map(|b| plural(u64::from(b.populated_channels), "channel"))
        .unwrap_or_else(|| unknown(notes, pop.why_unknown(), "channels", "memory population"));
    let kernel = f
        .environment
        .kernel_release
        .known()
        .map(|k| part(k))
        .unwrap_or_else(|| "kernel unknown".into());
    let mut platform = match virt {
        Ok(v) => provenance::platform_words(provenance::platform(v), provenance::Wording::Line)
            .to_string(),
        Err(why) => unknown(notes, why, "platform", "platform (os.virtualization)"),
    };
    if let Some(h) = virt.ok().and_then(|v| v.hypervisor.as_deref()) {
        platform += &format!(" ({})", part(h));
    }
    if under_qemu_user {
        platform += ", binary under qemu-user";
    }
    format!(
        "{model}, {topo}, {ghz}, {mem} ({channels}), {} {kernel}, {platform}, {} v{}",
        part(&f.environment.arch),
        part(&f.profile.id),
        f.profile.version
    )
}

/// Longest string taken from a result file into the machine line (CPU model, kernel release,
/// arch, platform, hypervisor, profile id), characters, before its length note: with the
/// column label (at most [`crate::layout::MAX_LABEL_CHARS`]) and the words and numbers hwsurvey
/// writes itself, a machine line stays under [`crate::layout::MAX_CELL_CHARS`].
const MAX_PART_CHARS: usize = 64;

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
            "label: model, sockets x cores per socket x threads per core, clock, memory, kernel, platform, profile"
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
/// quick, emulated or started busy: never a win or a loss). A figure a result
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
        "{KEY_START}{} (the baseline): + better, - worse, ~ within noise (overlapping 95% bootstrap intervals of the medians, or a difference below the larger CV), ! not comparable (never a win or a loss); value = median of the samples",
        letter(base)
    ));
    }
    let mut columns = Vec::new();
    let mut comparable = Vec::new();
    for (k, i) in inputs.iter().enumerate() {
        let why = not_comparable(&i.file);
        comparable.push(if !why.is_empty() && !emulation(&i.file).is_empty() {
            Comparable::Emulated
        } else if why.is_empty() {
            Comparable::Yes
        } else {
            Comparable::No
        });
        let mut head = letter(k);
        if !why.is_empty() {
            let n = notes.mark(&not_comparable_note(&letter(k), &why));
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
        for (j, label) in ["1 thread, ops/s", "peak, ops/s @N", "efficiency @all, knee"]
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
    rows.push((
        UNMET_PRECONDITIONS.into(),
        inputs.iter().map(preconditions_fig).collect(),
    ));
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
        .map(|(label, figs)| {
            // a figure of a family with a point the hardware watch marked (throttled, errors)
            // is no win or loss either
            let ok: Vec<Comparable> = files
                .iter()
                .zip(&comparable)
                .map(|(f, c)| match c {
                    Comparable::Yes
                        if row_family(&label).is_some_and(|fam| watch_marked(f, fam)) =>
                    {
                        Comparable::Marked
                    }
                    c => *c,
                })
                .collect();
            if ok != comparable {
                notes.mark(WATCH_MARKED_NOTE);
            }
            headline_row(label, &figs, base, &ok, notes)
        })
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

/// Whether a column's figures can be a win or a loss ([`not_comparable`]), and when not,
/// whether it is for emulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comparable {
    Yes,
    No,
    Emulated,
    /// A point of the row's family was measured while the hardware watch saw throttling,
    /// errors or a link retrain ([`watch_marked`]).
    Marked,
}

/// The footnote of a headline figure marked `!` for the hardware watch.
pub const WATCH_MARKED_NOTE: &str = "! also marks a figure of a family one of whose points was measured while the hardware watch saw throttling, hardware errors or a link retrain (its detail table marks the point)";

/// Whether a point of `family` in `f` carries a watch mark
/// (`hwsurvey_machine::watch::WatchDelta::marks`).
fn watch_marked(f: &ResultFile, family: &str) -> bool {
    f.tests
        .iter()
        .filter(|t| t.point.family == family)
        .any(|t| t.watch.as_ref().is_some_and(|w| !w.marks().is_empty()))
}

/// Label of the headline row of the profile's preconditions a run did not have.
pub const UNMET_PRECONDITIONS: &str = "unmet preconditions";

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

/// The unit of a headline row's values, by the row's label, in the names the family tables
/// use (`ops_per_s`, `bytes_per_s`, `ns`, `iops`, `fraction`, `ratio`, `count`): the CSV and
/// JSON outputs carry it beside each value. `None` for a label not listed.
pub fn row_unit(label: &str) -> Option<&'static str> {
    [
        ("int 1 thread", "ops_per_s"),
        ("int peak", "ops_per_s"),
        ("int efficiency", "fraction"),
        ("fp 1 thread", "ops_per_s"),
        ("fp peak", "ops_per_s"),
        ("fp efficiency", "fraction"),
        ("STREAM Triad", "bytes_per_s"),
        ("Triad /", "fraction"),
        ("idle latency", "ns"),
        ("loaded latency", "ns"),
        ("c2c", "ns"),
        ("point-select", "ops_per_s"),
        ("critical rate THP/base", "ratio"),
        ("critical rate", "ops_per_s"),
        ("4k read IOPS", "iops"),
        ("CPU per I/O", "ns"),
        ("RAID-6", "bytes_per_s"),
        ("findings", "count"),
        (UNMET_PRECONDITIONS, "count"),
    ]
    .iter()
    .find(|(prefix, _)| label.starts_with(prefix))
    .map(|(_, unit)| *unit)
}

/// One headline row. A figure of a column that is not comparable is marked `!` whether or not
/// the baseline has a figure to hold it against: `0.03x !`, or with no baseline figure
/// `emulated !` (`not comparable !` for another reason), never a plain figure beside real
/// ones.
fn headline_row(
    label: String,
    figs: &[Fig],
    base: usize,
    comparable: &[Comparable],
    notes: &mut Footnotes,
) -> Row {
    let unit = row_unit(&label).map(str::to_string);
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
                if k != base && label != "findings" && label != UNMET_PRECONDITIONS {
                    cell.note = ratio_note(
                        *value,
                        summary.as_ref(),
                        &figs[base],
                        *better,
                        comparable[k] == Comparable::Yes && comparable[base] == Comparable::Yes,
                    )
                    .or(match comparable[k] {
                        Comparable::Yes => None,
                        Comparable::Emulated => Some("emulated !".into()),
                        Comparable::No => Some("not comparable !".into()),
                        Comparable::Marked => Some("hardware watch !".into()),
                    });
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

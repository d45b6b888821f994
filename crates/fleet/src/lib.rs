//! A fleet of hosts from their result files: which hosts are alike, which one stands out, and
//! why.
//!
//! Shape: result files ([`collect`] a directory or a list, [`load_all`]) -> hosts (several
//! runs of one host pooled: median per figure, between-run spread, drift) -> groups by
//! hardware identity ([`facts::Identity`]) -> per group and headline figure
//! ([`figures::FIGURES`]) the median and MAD, a host flagged when it lies outside
//! median ± k x MAD *and* more than a minimum relative difference from the median -> for each
//! flagged host the probe differences from its group's majority ([`facts::host_facts`]) and
//! its failed or warned qualification findings -> [`Fleet`], rendered by [`render`].
//!
//! Pure functions over loaded files; nothing here measures or runs a workload. A file that
//! cannot be read is one failed entry with its reason (the loader's one-line error naming the
//! file), never a panic and never a reason to drop the other hosts.

pub mod facts;
pub mod figures;
pub mod render;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use hwsurvey_result::{Outcome, ResultFile, RunStatus};
use serde::Serialize;

use crate::facts::Identity;
use crate::figures::FigureKind;

/// Default k of the outlier rule (median ± k x MAD).
pub const DEFAULT_K: f64 = 3.0;
/// Default minimum relative difference from the group median for an outlier, percent.
pub const DEFAULT_MIN_DIFF_PCT: f64 = 5.0;
/// Default drift threshold: the total move of a figure over monotonic successive runs,
/// percent of the first run (the seeds saw run-to-run spreads up to 5 %).
pub const DEFAULT_DRIFT_PCT: f64 = 5.0;
/// Runs of one host needed before a monotonic move counts as drift.
pub const DRIFT_MIN_RUNS: usize = 3;
/// Hosts a group needs before its spread says anything (median and MAD of fewer are not
/// robust): smaller groups get no outliers, and the report says so.
pub const MIN_GROUP_HOSTS: usize = 3;

/// The rule's parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Options {
    /// k of median ± k x MAD.
    pub k: f64,
    /// Minimum difference from the group median, percent, for an outlier.
    pub min_diff_pct: f64,
    /// Drift threshold, percent ([`DEFAULT_DRIFT_PCT`]).
    pub drift_pct: f64,
    /// Rule ids that are preconditions of the profile (hugetlb pools reserved, THP available):
    /// their findings are listed but never make a host warn or fail, as in `hwsurvey qualify`.
    /// A stored finding with `"kind": "precondition"` counts too.
    #[serde(skip)]
    pub precondition_rules: BTreeSet<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            k: DEFAULT_K,
            min_diff_pct: DEFAULT_MIN_DIFF_PCT,
            drift_pct: DEFAULT_DRIFT_PCT,
            precondition_rules: BTreeSet::new(),
        }
    }
}

/// One result file to read, and the host its folder names.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// The file.
    pub path: PathBuf,
    /// `<host>` of `DIR/.../<host>/<file>.json` (the layout `reports/fleet/<run-id>/<host>/`),
    /// when the file sits in a sub-folder of the directory given; `None` for files given by
    /// name or directly in the directory.
    pub folder_host: Option<String>,
}

/// A command-line input that cannot be used at all (missing path, unreadable directory, a
/// directory without any `.json`): an input error, unlike a bad result file.
#[derive(Debug, Clone, PartialEq)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

/// Name of a host's failure marker: a text file that the fleet playbook (fleet/) writes into
/// `<run-id>/<host>/` when the host failed before or during its run (unreachable, no binary
/// for its architecture, the run refused or killed, disk full), holding the reason in one or a
/// few lines. [`load_all`] makes it a failed entry of that host with the reason.
pub const FAILURE_MARKER: &str = "hwsurvey-failed.txt";

/// Whether `path` is a failure marker ([`FAILURE_MARKER`]).
pub fn is_failure_marker(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == FAILURE_MARKER)
}

/// The result files of `inputs`: a file is taken as given; a directory is walked recursively
/// for `*.json` files and [`FAILURE_MARKER`] files (sorted by path; symbolic links to
/// directories are not followed).
///
/// Err: a path that does not exist, a directory that cannot be read, or no file at all.
pub fn collect(inputs: &[PathBuf]) -> Result<Vec<Source>, InputError> {
    let mut out = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input)
            .map_err(|e| InputError(format!("{}: {e}", input.display())))?;
        if meta.is_dir() {
            let mut files = Vec::new();
            walk(input, &mut files)?;
            if files.is_empty() {
                return Err(InputError(format!(
                    "{}: no .json result file (nor {FAILURE_MARKER}) in this directory or below",
                    input.display()
                )));
            }
            files.sort();
            for path in files {
                let folder_host = path
                    .parent()
                    .filter(|p| *p != input.as_path())
                    .and_then(|p| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned());
                out.push(Source { path, folder_host });
            }
        } else {
            out.push(Source {
                path: input.clone(),
                folder_host: None,
            });
        }
    }
    if out.is_empty() {
        return Err(InputError("no result file given".into()));
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| InputError(format!("{}: {e}", dir.display())))?;
    for entry in entries {
        let entry = entry.map_err(|e| InputError(format!("{}: {e}", dir.display())))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
        if kind.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") || is_failure_marker(&path) {
            out.push(path);
        }
    }
    Ok(())
}

/// A source and what loading it gave: the file, or the loader's one-line error.
pub type Loaded = (Source, Result<ResultFile, String>);

/// Loads every source ([`hwsurvey_result::load`]: size, JSON, schema and values checked),
/// on up to `available_parallelism` threads; the order of `sources` is kept. A failure marker
/// ([`FAILURE_MARKER`]) loads as `Err("<path>: host failed: <its text on one line>")`.
pub fn load_all(sources: Vec<Source>) -> Vec<Loaded> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(sources.len().max(1));
    let chunk = sources.len().div_ceil(threads).max(1);
    let mut results: Vec<Result<ResultFile, String>> = Vec::with_capacity(sources.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = sources
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|src| {
                            if is_failure_marker(&src.path) {
                                Err(marker_reason(&src.path))
                            } else {
                                hwsurvey_result::load(&src.path).map_err(|e| e.to_string())
                            }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            match h.join() {
                Ok(part) => results.extend(part),
                Err(_) => results.push(Err("loading panicked".into())),
            }
        }
    });
    sources.into_iter().zip(results).collect()
}

/// The failure a marker records: `<path>: host failed: <text>` (text on one line, at most 500
/// characters; `no reason recorded` when empty), or the error reading it.
fn marker_reason(path: &Path) -> String {
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let text = if text.is_empty() {
                "no reason recorded".into()
            } else {
                hwsurvey_model::text::one_line(&text, 500).into_owned()
            };
            format!("{}: host failed: {text}", path.display())
        }
        Err(e) => format!(
            "{}: host failed (its failure marker unreadable: {e})",
            path.display()
        ),
    }
}

/// Verdict of a host, as `hwsurvey qualify` words them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every run complete and readable; no failed or warned machine finding.
    Pass,
    /// A warned machine finding, or a test of a run failed.
    Warn,
    /// A file unreadable, a run not complete, or a failed machine finding.
    Fail,
}

impl Verdict {
    /// `pass`, `warn`, `fail`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
        }
    }
}

/// One run of a host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// The result file.
    pub path: String,
    /// UTC start, RFC 3339 (`started_at` of the file).
    pub started_at: String,
    /// Profile id and revision (`standard v3`).
    pub profile: String,
}

/// One headline figure of a host, pooled over its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostFigure {
    /// Figure key ([`figures::FIGURES`]).
    pub figure: &'static str,
    /// Median over the host's runs, in the figure's unit.
    pub value: f64,
    /// Runs that measured it.
    pub runs: usize,
    /// (max - min) / median of the runs' values, percent; `None` for one run.
    pub spread_pct: Option<f64>,
}

/// A figure of a host outside its group's spread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outlier {
    /// Figure key.
    pub figure: &'static str,
    /// The host's value, in the figure's unit.
    pub value: f64,
    /// The group's median.
    pub group_median: f64,
    /// The group's MAD (median absolute deviation from the median).
    pub group_mad: f64,
    /// (value - median) / median, percent (negative: below the median).
    pub diff_pct: f64,
    /// Whether the difference is the worse way (lower throughput, higher latency).
    pub worse: bool,
}

/// A probe difference from the group's majority.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cause {
    /// What differs (`THP`, `CPUs online`, `DIMMs`).
    pub fact: &'static str,
    /// The host's value.
    pub host: String,
    /// The value most hosts of the group have.
    pub group: String,
}

/// A qualification finding worth showing (failed or warned).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostFinding {
    /// Rule id.
    pub rule: String,
    /// `fail` or `warn`.
    pub verdict: String,
    /// The finding's one line.
    pub summary: String,
    /// A precondition of the profile (never changes the host's verdict).
    pub precondition: bool,
}

/// One host: its runs pooled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Host {
    /// Host name: the folder `<host>` of `reports/fleet/<run-id>/<host>/`, else the run's
    /// hostname (`environment.hostname`), else the file name.
    pub name: String,
    /// Group number (1-based, [`Fleet::groups`]); `None` when no run could be read.
    pub group: Option<usize>,
    /// pass / warn / fail.
    pub verdict: Verdict,
    /// The readable runs, oldest first.
    pub runs: Vec<Run>,
    /// Why the host failed, one line each (unreadable file naming it, a run not complete).
    pub failures: Vec<String>,
    /// Headline figures, pooled over the runs.
    pub figures: Vec<HostFigure>,
    /// Figures outside the group's spread.
    pub outliers: Vec<Outlier>,
    /// Figures that moved monotonically over successive runs by more than the drift
    /// threshold, one line each.
    pub drift: Vec<String>,
    /// Probe differences from the group's majority (for hosts with outliers or drift).
    pub causes: Vec<Cause>,
    /// Failed or warned qualification findings stored in the latest run.
    pub findings: Vec<HostFinding>,
    /// Facts of the latest run ([`facts::host_facts`]), for the causes.
    #[serde(skip)]
    pub facts: Vec<(&'static str, String)>,
    /// Identity of the latest run.
    #[serde(skip)]
    pub identity: Option<Identity>,
}

impl Host {
    /// Whether the host stood out (an outlier figure) or drifted.
    pub fn flagged(&self) -> bool {
        !self.outliers.is_empty() || !self.drift.is_empty()
    }
}

/// A group's statistics of one figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupFigure {
    /// Figure key.
    pub figure: &'static str,
    /// Hosts with the figure.
    pub hosts: usize,
    /// Median over those hosts.
    pub median: f64,
    /// Median absolute deviation from it.
    pub mad: f64,
}

/// Hosts of one hardware identity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// 1-based number (`G1`).
    pub id: usize,
    /// The identity.
    pub identity: Identity,
    /// `identity` in words.
    pub identity_text: String,
    /// Host names.
    pub hosts: Vec<String>,
    /// Median and MAD per figure (figures at least [`MIN_GROUP_HOSTS`] hosts have).
    pub figures: Vec<GroupFigure>,
    /// Why the group has no outlier rule, when it has too few hosts.
    pub note: Option<String>,
}

/// The whole analysis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    /// The rule's parameters.
    pub options: Options,
    /// Result files read (and not).
    pub files: usize,
    /// Groups, in order of their first host.
    pub groups: Vec<Group>,
    /// Hosts, by name.
    pub hosts: Vec<Host>,
}

impl Fleet {
    /// Exit status of `hwsurvey fleet`: 2 when a host failed, else 1 when a host stood out,
    /// drifted or warned, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.hosts.iter().any(|h| h.verdict == Verdict::Fail) {
            2
        } else if self
            .hosts
            .iter()
            .any(|h| h.flagged() || h.verdict == Verdict::Warn)
        {
            1
        } else {
            0
        }
    }
}

/// Host name of a loaded file: folder, else hostname, else file stem.
fn host_name(src: &Source, file: Option<&ResultFile>) -> String {
    if let Some(h) = &src.folder_host {
        return h.clone();
    }
    if let Some(h) = file.and_then(|f| f.environment.hostname.known()) {
        if !h.is_empty() {
            return h.clone();
        }
    }
    src.path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| src.path.display().to_string())
}

/// The failed and warned findings of a file's `qualification` document (the shape of
/// `hwsurvey_qualify::stored::StoredFindings`: `findings[]` with `rule`, `verdict`,
/// `summary`, optional `kind`); none when the file stores none.
fn findings_of(file: &ResultFile, opts: &Options) -> Vec<HostFinding> {
    let Some(list) = file
        .qualification
        .as_ref()
        .and_then(|q| q.get("findings"))
        .and_then(|f| f.as_array())
    else {
        return vec![];
    };
    list.iter()
        .filter_map(|f| {
            let verdict = f.get("verdict")?.as_str()?;
            if verdict != "fail" && verdict != "warn" {
                return None;
            }
            let rule = f.get("rule")?.as_str()?.to_string();
            let precondition = f.get("kind").and_then(|k| k.as_str()) == Some("precondition")
                || opts.precondition_rules.contains(&rule);
            Some(HostFinding {
                summary: hwsurvey_model::text::one_line(
                    f.get("summary").and_then(|s| s.as_str()).unwrap_or(""),
                    300,
                )
                .into_owned(),
                rule,
                verdict: verdict.to_string(),
                precondition,
            })
        })
        .collect()
}

/// One readable run while pooling.
struct RunData {
    run: Run,
    figures: Vec<(&'static str, f64)>,
    facts: Vec<(&'static str, String)>,
    identity: Option<Identity>,
    findings: Vec<HostFinding>,
    failed_tests: usize,
}

/// Median of finite values (`None` when there is none).
fn median(values: &[f64]) -> Option<f64> {
    hwsurvey_stats::median(values)
}

/// The fleet of `loaded` files under `opts`.
pub fn analyse(loaded: Vec<Loaded>, opts: &Options) -> Fleet {
    let files = loaded.len();
    // host name -> (runs, failures)
    let mut by_host: BTreeMap<String, (Vec<RunData>, Vec<String>)> = BTreeMap::new();
    for (src, result) in loaded {
        let name = host_name(&src, result.as_ref().ok());
        let entry = by_host.entry(name).or_default();
        let file = match result {
            Ok(f) => f,
            Err(e) => {
                entry.1.push(e);
                continue;
            }
        };
        let path = src.path.display().to_string();
        if file.status != RunStatus::Complete {
            entry
                .1
                .push(format!("{path}: the run is not complete ({})", file.status));
        }
        let (facts, identity) = match facts::machine_of(&file) {
            Ok(m) => (
                facts::host_facts(&file, &m),
                Some(facts::identity(&file, &m)),
            ),
            Err(e) => {
                entry.1.push(format!("{path}: {e}"));
                (vec![], None)
            }
        };
        entry.0.push(RunData {
            run: Run {
                path,
                started_at: file.started_at.clone(),
                profile: format!("{} v{}", file.profile.id, file.profile.version),
            },
            figures: figures::headline_figures(&file),
            facts,
            identity,
            findings: findings_of(&file, opts),
            failed_tests: file
                .tests
                .iter()
                .filter(|t| t.outcome == Outcome::Failed)
                .count(),
        });
    }
    let mut hosts: Vec<Host> = by_host
        .into_iter()
        .map(|(name, (runs, failures))| pool(name, runs, failures, opts))
        .collect();
    // groups by identity, in order of their first host
    let mut groups: Vec<Group> = Vec::new();
    for h in hosts.iter_mut() {
        let Some(id) = h.identity.clone() else {
            continue;
        };
        let n = match groups.iter().position(|g| g.identity == id) {
            Some(i) => i,
            None => {
                groups.push(Group {
                    id: groups.len() + 1,
                    identity_text: id.to_string(),
                    identity: id,
                    hosts: vec![],
                    figures: vec![],
                    note: None,
                });
                groups.len() - 1
            }
        };
        groups[n].hosts.push(h.name.clone());
        h.group = Some(n + 1);
    }
    for g in groups.iter_mut() {
        let members: Vec<&mut Host> = hosts.iter_mut().filter(|h| h.group == Some(g.id)).collect();
        judge_group(g, members, opts);
    }
    Fleet {
        options: opts.clone(),
        files,
        groups,
        hosts,
    }
}

/// Pools the runs of one host: per figure the median, spread and drift; facts, identity and
/// findings of the latest run; the verdict.
fn pool(name: String, mut runs: Vec<RunData>, failures: Vec<String>, opts: &Options) -> Host {
    runs.sort_by(|a, b| a.run.started_at.cmp(&b.run.started_at));
    let mut figures = Vec::new();
    let mut drift = Vec::new();
    for kind in figures::FIGURES.iter() {
        let values: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.figures.iter().find(|(k, _)| *k == kind.key).map(|f| f.1))
            .collect();
        let Some(value) = median(&values) else {
            continue;
        };
        let spread_pct = (values.len() >= 2 && value != 0.0).then(|| {
            let max = values.iter().copied().fold(f64::MIN, f64::max);
            let min = values.iter().copied().fold(f64::MAX, f64::min);
            (max - min) / value * 100.0
        });
        if let Some(line) = drift_of(kind, &values, opts.drift_pct) {
            drift.push(line);
        }
        figures.push(HostFigure {
            figure: kind.key,
            value,
            runs: values.len(),
            spread_pct,
        });
    }
    let latest = runs.last();
    let findings = latest.map(|r| r.findings.clone()).unwrap_or_default();
    let failed_tests: usize = runs.iter().map(|r| r.failed_tests).sum();
    let machine_finding = |v: &str| findings.iter().any(|f| !f.precondition && f.verdict == v);
    let verdict = if !failures.is_empty() || runs.is_empty() || machine_finding("fail") {
        Verdict::Fail
    } else if machine_finding("warn") || failed_tests > 0 {
        Verdict::Warn
    } else {
        Verdict::Pass
    };
    let mut failures = failures;
    if failed_tests > 0 {
        failures.push(format!(
            "{} failed (outcome \"failed\" in the result file)",
            hwsurvey_model::units::plural(failed_tests as u64, "test")
        ));
    }
    Host {
        name,
        group: None,
        verdict,
        failures,
        figures,
        outliers: vec![],
        drift,
        causes: vec![],
        findings,
        facts: latest.map(|r| r.facts.clone()).unwrap_or_default(),
        identity: latest.and_then(|r| r.identity.clone()),
        runs: runs.into_iter().map(|r| r.run).collect(),
    }
}

/// A drift line when the values (oldest first) move the same way at every step and by more
/// than `drift_pct` of the first in total, over at least [`DRIFT_MIN_RUNS`] runs.
pub fn drift_of(kind: &FigureKind, values: &[f64], drift_pct: f64) -> Option<String> {
    if values.len() < DRIFT_MIN_RUNS || values[0] == 0.0 {
        return None;
    }
    let steps: Vec<f64> = values.windows(2).map(|w| w[1] - w[0]).collect();
    let rising = steps.iter().all(|d| *d > 0.0);
    let falling = steps.iter().all(|d| *d < 0.0);
    if !rising && !falling {
        return None;
    }
    let first = values[0];
    let last = values[values.len() - 1];
    let total_pct = (last - first) / first * 100.0;
    (total_pct.abs() > drift_pct).then(|| {
        format!(
            "{} {} {:.1} % over {} successive runs ({} -> {}), more than the {} % drift threshold",
            kind.label,
            if rising { "rises" } else { "falls" },
            total_pct.abs(),
            values.len(),
            figures::show(kind, first),
            figures::show(kind, last),
            opts_pct(drift_pct)
        )
    })
}

/// A percentage option as given (`5`, `2.5`).
fn opts_pct(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// Median and MAD of every figure of a group, its outliers, and the causes of its flagged
/// hosts.
fn judge_group(g: &mut Group, mut members: Vec<&mut Host>, opts: &Options) {
    if members.len() < MIN_GROUP_HOSTS {
        g.note = Some(format!(
            "{}: too few to tell an outlier (the rule needs at least {MIN_GROUP_HOSTS} hosts of one identity)",
            hwsurvey_model::units::plural(members.len() as u64, "host")
        ));
    }
    for kind in figures::FIGURES.iter() {
        let values: Vec<f64> = members
            .iter()
            .filter_map(|h| h.figures.iter().find(|f| f.figure == kind.key))
            .map(|f| f.value)
            .collect();
        if values.len() < MIN_GROUP_HOSTS {
            continue;
        }
        let Some(med) = median(&values) else { continue };
        let deviations: Vec<f64> = values.iter().map(|v| (v - med).abs()).collect();
        let mad = median(&deviations).unwrap_or(0.0);
        g.figures.push(GroupFigure {
            figure: kind.key,
            hosts: values.len(),
            median: med,
            mad,
        });
        if med == 0.0 {
            continue;
        }
        for h in members.iter_mut() {
            let Some(f) = h.figures.iter().find(|f| f.figure == kind.key) else {
                continue;
            };
            let diff = f.value - med;
            let diff_pct = diff / med * 100.0;
            if diff.abs() > opts.k * mad && diff_pct.abs() > opts.min_diff_pct {
                let worse = match kind.better {
                    hwsurvey_result::Better::Higher => diff < 0.0,
                    hwsurvey_result::Better::Lower => diff > 0.0,
                };
                let o = Outlier {
                    figure: kind.key,
                    value: f.value,
                    group_median: med,
                    group_mad: mad,
                    diff_pct,
                    worse,
                };
                h.outliers.push(o);
            }
        }
    }
    // causes: each fact of a flagged host that differs from the group's majority value
    let all_facts: Vec<Vec<(&'static str, String)>> =
        members.iter().map(|h| h.facts.clone()).collect();
    for h in members.iter_mut() {
        if !h.flagged() {
            continue;
        }
        h.causes = causes(&h.facts, &all_facts);
    }
}

/// The facts of `host` that differ from the majority value of `group` (every member's facts,
/// the host's included). A fact the host does not know, or whose group has no majority
/// (no value held by more than half the hosts), is not named.
pub fn causes(
    host: &[(&'static str, String)],
    group: &[Vec<(&'static str, String)>],
) -> Vec<Cause> {
    let mut out = Vec::new();
    for (fact, value) in host {
        if value == "unknown" {
            continue;
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for member in group {
            if let Some((_, v)) = member.iter().find(|(f, _)| f == fact) {
                *counts.entry(v.as_str()).or_default() += 1;
            }
        }
        let Some((majority, n)) = counts.iter().max_by_key(|(_, n)| **n) else {
            continue;
        };
        if *n * 2 <= group.len() || *majority == "unknown" {
            continue;
        }
        if *majority != value.as_str() {
            out.push(Cause {
                fact,
                host: value.clone(),
                group: majority.to_string(),
            });
        }
    }
    out
}

/// Fleets built from the example result files of this repository (`reports/examples/`), for
/// tests and the benchmark: a copy renamed to another host, its samples scaled (statistics
/// recomputed, so the loader's checks pass), its THP mode or start time changed.
pub mod sample {
    use hwsurvey_model::Probed;
    use hwsurvey_result::{Metric, MetricResult, ResultFile};

    /// `reports/examples/<name>` of this source tree, loaded. Panics when absent (a test
    /// helper: the examples are part of the repository).
    pub fn example(name: &str) -> ResultFile {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports/examples/v1")
            .join(name);
        hwsurvey_result::load(&path).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `file` as run on host `name` (`environment.hostname`).
    pub fn with_host(mut file: ResultFile, name: &str) -> ResultFile {
        file.environment.hostname = Probed::Known(name.to_string());
        file
    }

    /// Every sample of every metric of the tests of `family` (all families: `None`) times
    /// `factor`, statistics and peak recomputed from the new samples.
    pub fn scale(mut file: ResultFile, family: Option<&str>, factor: f64) -> ResultFile {
        for t in file
            .tests
            .iter_mut()
            .filter(|t| family.is_none_or(|f| t.point.family == f))
        {
            for m in t.metrics.iter_mut() {
                let samples: Vec<f64> = m.samples.iter().map(|v| v * factor).collect();
                *m = MetricResult::from_metric(Metric {
                    name: m.name.clone(),
                    better: m.better,
                    samples,
                    report_peak: m.peak.is_some(),
                });
            }
        }
        file
    }

    /// THP set to `mode` (`never`) in both the run environment and the machine document.
    pub fn set_thp(mut file: ResultFile, mode: &str) -> ResultFile {
        file.environment.thp_enabled = Probed::Known(mode.to_string());
        if let Some(sel) = file
            .machine
            .pointer_mut("/pages/thp/enabled/known/selected")
        {
            *sel = serde_json::Value::String(mode.to_string());
        }
        file
    }

    /// Start time set to `rfc3339`.
    pub fn started_at(mut file: ResultFile, rfc3339: &str) -> ResultFile {
        file.started_at = rfc3339.to_string();
        file
    }
}

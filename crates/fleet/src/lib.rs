//! A fleet of hosts from their result files: which hosts are alike, which one stands out, and
//! why.
//!
//! Shape: result files ([`collect`] a directory or a list, [`load_all`]) -> hosts (several
//! runs of one host pooled: median per figure, between-run spread, drift) -> groups by
//! hardware identity ([`facts::Identity`]) -> per group and headline figure
//! ([`figures::FIGURES`]) the median and MAD, a host flagged when it lies outside
//! median ± k x MAD *and* more than a minimum relative difference from the median; a host
//! also stands out when its configuration ([`facts::is_configuration`]: CPUs online, DIMMs,
//! links, THP...) differs from the value more than half its group holds, whatever its
//! figures -> for each flagged host the probe differences from its group's majority
//! ([`facts::host_facts`]) and its failed or warned qualification findings -> each host's
//! verdict ([`decide`]: a host that stands out or drifts is never a pass) -> [`Fleet`],
//! rendered by [`render`].
//!
//! Pure functions over loaded files; nothing here measures or runs a workload. A file that
//! cannot be read is one failed entry with its reason (the loader's one-line error naming the
//! file), never a panic and never a reason to drop the other hosts.

pub mod facts;
pub mod figures;
pub mod input;
mod machines;
pub mod render;
mod types;

pub use input::{
    collect, is_failure_marker, is_fleet_report, is_input_name, load_all, Collected, InputError,
    Loaded, Source, FAILURE_MARKER, LOADING_BUDGET_BYTES,
};
pub use types::{
    Cause, Fleet, Group, GroupFigure, Host, HostFigure, HostFinding, Outlier, Run, Verdict,
};

use std::collections::{BTreeMap, BTreeSet};

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
/// Default of `--fail-pct`: a figure outlier worse than its group median by this many percent
/// or more fails its host ([`decide`]); a smaller one, or one the better way, warns. A host
/// 30 % slow on STREAM Triad fails.
pub const DEFAULT_FAIL_PCT: f64 = 20.0;
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
    /// An outlier figure this many percent or more worse than its group median fails its host
    /// ([`DEFAULT_FAIL_PCT`], [`decide`]).
    pub fail_pct: f64,
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
            fail_pct: DEFAULT_FAIL_PCT,
            precondition_rules: BTreeSet::new(),
        }
    }
}

/// Longest host name shown, characters (a longer folder or hostname shows its start, end
/// and length: [`hwsurvey_model::text::one_line`]).
pub const MAX_HOST_NAME_CHARS: usize = 128;

/// Host name of a loaded file: folder, else hostname, else file stem; as shown (control and
/// bidi characters escaped, at most [`MAX_HOST_NAME_CHARS`]), so that names that differ are
/// told apart in every output.
fn host_name(src: &Source, file: Option<&ResultFile>) -> String {
    let raw = match (
        &src.folder_host,
        file.and_then(|f| f.environment.hostname.known()),
    ) {
        (Some(h), _) => h.clone(),
        (None, Some(h)) if !h.is_empty() => h.clone(),
        _ => src
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| src.path.display().to_string()),
    };
    hwsurvey_model::text::one_line(&raw, MAX_HOST_NAME_CHARS).into_owned()
}

/// The failed and warned findings a file stores (its typed `qualification`,
/// [`hwsurvey_result::qualification::StoredFindings`]); none when the file stores none.
fn findings_of(file: &ResultFile, opts: &Options) -> Vec<HostFinding> {
    use hwsurvey_result::qualification::{RuleKind, Verdict};
    let Some(stored) = &file.qualification else {
        return vec![];
    };
    stored
        .findings
        .iter()
        .filter(|f| matches!(f.verdict, Verdict::Fail | Verdict::Warn))
        .map(|f| HostFinding {
            summary: hwsurvey_model::text::one_line(&f.summary, 300).into_owned(),
            rule: f.rule.clone(),
            verdict: f.verdict.word().to_string(),
            precondition: f.kind == RuleKind::Precondition
                || opts.precondition_rules.contains(&f.rule),
        })
        .collect()
}

/// Whether a file stores findings, and the rules about the machine it did not evaluate (in
/// its findings' order, each once; preconditions of the profile apart, as in `hwsurvey
/// qualify`).
fn not_evaluated_of(file: &ResultFile, opts: &Options) -> (bool, Vec<String>) {
    use hwsurvey_result::qualification::{RuleKind, Verdict};
    let Some(stored) = &file.qualification else {
        return (false, vec![]);
    };
    let mut ids: Vec<String> = Vec::new();
    for f in &stored.findings {
        let precondition =
            f.kind == RuleKind::Precondition || opts.precondition_rules.contains(&f.rule);
        if f.verdict == Verdict::NotEvaluated && !precondition && !ids.contains(&f.rule) {
            ids.push(f.rule.clone());
        }
    }
    (true, ids)
}

/// One readable run while pooling.
struct RunData {
    run: Run,
    figures: Vec<(&'static str, f64)>,
    facts: Vec<(&'static str, String)>,
    identity: Identity,
    host_id: hwsurvey_machine::os::host_id::HostId,
    findings: Vec<HostFinding>,
    failed_tests: usize,
    /// [`hwsurvey_result::provenance::emulation`].
    emulation: Vec<String>,
    /// [`hwsurvey_result::provenance::virtual_machine`].
    virtual_machine: Option<String>,
    /// [`hwsurvey_result::provenance::RunId`]: where and when it started.
    id: hwsurvey_result::provenance::RunId,
    /// [`not_evaluated_of`].
    findings_stored: bool,
    not_evaluated: Vec<String>,
}

/// Median of finite values (`None` when there is none).
fn median(values: &[f64]) -> Option<f64> {
    hwsurvey_stats::median(values)
}

/// What one file gives the fleet: its host's name, its failures (unreadable, not complete,
/// a machine document of the wrong shape) and, when readable, its run. The file itself is
/// not kept: a fleet holds its hosts' figures and facts, not their result files.
struct Digest {
    name: String,
    failures: Vec<String>,
    run: Option<RunData>,
}

/// [`Digest`] of one loaded file.
fn digest(src: &Source, result: Result<ResultFile, String>, opts: &Options) -> Digest {
    let name = host_name(src, result.as_ref().ok());
    let file = match result {
        Ok(f) => f,
        Err(e) => {
            return Digest {
                name,
                failures: vec![e],
                run: None,
            }
        }
    };
    let mut failures = Vec::new();
    let path = src.path.display().to_string();
    if file.status != RunStatus::Complete {
        failures.push(format!("{path}: the run is not complete ({})", file.status));
    }
    let (facts, identity, host_id) = (
        facts::host_facts(&file),
        facts::identity(&file),
        file.machine.os.host_id.clone(),
    );
    let (findings_stored, not_evaluated) = not_evaluated_of(&file, opts);
    let run = RunData {
        run: Run {
            path,
            started_at: file.started_at.clone(),
            profile: format!("{} v{}", file.profile.id, file.profile.version),
            hardware: file.watch_lines(),
        },
        figures: figures::headline_figures(&file),
        facts,
        identity,
        host_id,
        findings: findings_of(&file, opts),
        emulation: hwsurvey_result::provenance::emulation(&file),
        id: hwsurvey_result::provenance::RunId::of(&file),
        virtual_machine: hwsurvey_result::provenance::virtual_machine(&file),
        findings_stored,
        not_evaluated,
        failed_tests: file
            .tests
            .iter()
            .filter(|t| t.outcome == Outcome::Failed)
            .count(),
    };
    Digest {
        name,
        failures,
        run: Some(run),
    }
}

/// The fleet of `loaded` files under `opts`.
pub fn analyse(loaded: Vec<Loaded>, opts: &Options) -> Fleet {
    let digests = loaded
        .into_iter()
        .map(|(src, result)| digest(&src, result, opts))
        .collect();
    analyse_digests(digests, opts)
}

/// Loads `sources` as [`load_all`] does and analyses them as [`analyse`], each file given up
/// as soon as its figures and facts are taken: what the fleet holds grows with its hosts'
/// figures, not with their result files (the files loading at once are bounded by
/// [`input::LOADING_BUDGET_BYTES`]). What `hwsurvey fleet` runs.
pub fn load_and_analyse(sources: Vec<Source>, opts: &Options) -> Fleet {
    let digests = input::load_each_with(&sources, |src, loaded| digest(src, loaded, opts));
    analyse_digests(digests, opts)
}

/// The fleet of the files' [`Digest`]s.
fn analyse_digests(digests: Vec<Digest>, opts: &Options) -> Fleet {
    let files = digests.len();
    // host name -> (runs, failures)
    let mut by_host: BTreeMap<String, (Vec<RunData>, Vec<String>)> = BTreeMap::new();
    for d in digests {
        let entry = by_host.entry(d.name).or_default();
        entry.1.extend(d.failures);
        entry.0.extend(d.run);
    }
    let mut notes = copies_of_one_run(&by_host);
    // one host is one machine: the runs under one name are split by machine identity, the
    // machines after the first named so that every host name is unique
    let mut hosts: Vec<Host> = Vec::new();
    let mut taken: BTreeSet<String> = by_host.keys().cloned().collect();
    for (name, (runs, failures)) in by_host {
        let (machines, note) = machines::split(
            &name,
            runs,
            |r| machines::MachineKey {
                host_id: &r.host_id,
                identity: &r.identity,
            },
            &mut taken,
        );
        notes.extend(note);
        let mut failures = Some(failures);
        if machines.is_empty() {
            hosts.push(pool(
                name,
                vec![],
                failures.take().unwrap_or_default(),
                opts,
            ));
        }
        for (machine, runs) in machines {
            // the unreadable files of the name stay with its first machine
            hosts.push(pool(
                machine,
                runs,
                failures.take().unwrap_or_default(),
                opts,
            ));
        }
    }
    let mut groups = group_hosts(&mut hosts);
    for g in groups.iter_mut() {
        let members: Vec<&mut Host> = hosts.iter_mut().filter(|h| h.group == Some(g.id)).collect();
        judge_group(g, members, opts);
    }
    for h in hosts.iter_mut() {
        decide(h, opts);
    }
    Fleet {
        options: opts.clone(),
        files,
        notes,
        groups,
        hosts,
    }
}

/// One note for each run found under several host names (copies of one result file, edited
/// or not: the same [`hwsurvey_result::provenance::RunId`]): they are not separate
/// measurements, whatever their figures say.
fn copies_of_one_run(by_host: &BTreeMap<String, (Vec<RunData>, Vec<String>)>) -> Vec<String> {
    let runs: Vec<(&hwsurvey_result::provenance::RunId, &str)> = by_host
        .iter()
        .flat_map(|(name, (runs, _))| runs.iter().map(move |r| (&r.id, name.as_str())))
        .collect();
    let mut notes = Vec::new();
    let mut said: Vec<&hwsurvey_result::provenance::RunId> = Vec::new();
    for (id, _) in &runs {
        if said.contains(id) {
            continue;
        }
        said.push(id);
        let mut names: Vec<&str> = runs
            .iter()
            .filter(|(other, _)| other == id)
            .map(|(_, n)| *n)
            .collect();
        names.dedup();
        if names.len() > 1 {
            notes.push(format!(
                "{}: one run ({}) under {} host names: copies of one result file, not separate \
                 measurements",
                names.join(", "),
                id.words(),
                names.len()
            ));
        }
    }
    notes
}

/// Groups `hosts` (sorted by name) by hardware identity and sets each host's group number;
/// the groups are numbered in order of their first host. Hosts with every present CPU online
/// form groups of equal identities first; then a host with present CPUs offline joins the
/// first group its identity can be a part of ([`Identity::joins`]: its sockets and cores
/// count only its online CPUs), else a group of its own. Last, a group too small to be judged
/// ([`MIN_GROUP_HOSTS`]) whose identity has less memory, and differs only so, from a judged,
/// larger group joins it ([`Identity::differs_only_in_memory`]; of several, the one with the
/// least memory), so that a host with half its memory or a DIMM missing is compared with its
/// siblings.
fn group_hosts(hosts: &mut [Host]) -> Vec<Group> {
    // (identity, member indexes into `hosts`)
    let mut found: Vec<(Identity, Vec<usize>)> = Vec::new();
    for complete in [true, false] {
        for (i, h) in hosts.iter().enumerate() {
            let Some(id) = &h.identity else { continue };
            if (id.cpus_offline == 0) != complete {
                continue;
            }
            match found.iter_mut().find(|(g, _)| id.joins(g)) {
                Some((_, members)) => members.push(i),
                None => found.push((id.clone(), vec![i])),
            }
        }
    }
    // A group too small to be judged that differs from a judged, larger one only by its
    // memory joins it (Identity::differs_only_in_memory): the lemon with half its memory.
    let mut i = 0;
    while i < found.len() {
        let small = found[i].1.len();
        // of the judged, larger groups it is short of memory of, the one with the least
        // memory (the size it lacks least of), then the one with the most hosts
        let into = (small < MIN_GROUP_HOSTS)
            .then(|| {
                (0..found.len())
                    .filter(|&j| {
                        j != i
                            && found[j].1.len() >= MIN_GROUP_HOSTS
                            && found[j].1.len() > small
                            && found[i].0.differs_only_in_memory(&found[j].0)
                    })
                    .min_by_key(|&j| (found[j].0.memory_bytes, std::cmp::Reverse(found[j].1.len())))
            })
            .flatten();
        match into {
            Some(j) => {
                let (_, members) = found.remove(i);
                let j = if j > i { j - 1 } else { j };
                found[j].1.extend(members);
            }
            None => i += 1,
        }
    }
    found.sort_by_key(|(_, members)| members.iter().copied().min());
    found
        .into_iter()
        .enumerate()
        .map(|(n, (identity, mut members))| {
            members.sort_unstable();
            for &i in &members {
                hosts[i].group = Some(n + 1);
            }
            settle_memory_size(hosts, &members);
            Group {
                id: n + 1,
                identity_text: identity.to_string(),
                identity,
                hosts: members.iter().map(|&i| hosts[i].name.clone()).collect(),
                figures: vec![],
                note: None,
            }
        })
        .collect()
}

/// Gives the members of a group whose MemTotal is within [`facts::MEMORY_TOLERANCE`] of the
/// group's median the median's `memory size` fact: identical hosts differ by a few MiB of
/// firmware and kernel reservations, which would otherwise make one of them the odd one out
/// (48 MiB below 23.5 GiB printed as another size). Members further away keep their own.
fn settle_memory_size(hosts: &mut [Host], members: &[usize]) {
    let sizes: Vec<f64> = members
        .iter()
        .filter_map(|&i| hosts[i].identity.as_ref()?.memory_bytes)
        .map(|b| b as f64)
        .collect();
    let Some(median) = median(&sizes).map(|m| m as u64) else {
        return;
    };
    for &i in members {
        let bytes = hosts[i].identity.as_ref().and_then(|id| id.memory_bytes);
        if facts::same_memory(bytes, Some(median)) {
            if let Some(f) = hosts[i].facts.iter_mut().find(|(n, _)| *n == "memory size") {
                f.1 = facts::memory_size(median);
            }
        }
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
    // why each run was emulated, each reason once
    let mut emulation: Vec<String> = Vec::new();
    for line in runs.iter().flat_map(|r| &r.emulation) {
        if !emulation.contains(line) {
            emulation.push(line.clone());
        }
    }
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
        // the verdict is decided once the groups are judged: decide
        verdict: Verdict::Pass,
        why: vec![],
        emulation,
        virtual_machine: latest.and_then(|r| r.virtual_machine.clone()),
        not_evaluated: latest.map(|r| r.not_evaluated.clone()).unwrap_or_default(),
        findings_stored: latest.is_some_and(|r| r.findings_stored),
        failures,
        failed_tests,
        figures,
        outliers: vec![],
        drift,
        causes: vec![],
        findings,
        hardware: latest.map(|r| r.run.hardware.clone()).unwrap_or_default(),
        facts: latest.map(|r| r.facts.clone()).unwrap_or_default(),
        identity: latest.map(|r| r.identity.clone()),
        runs: runs.into_iter().map(|r| r.run).collect(),
    }
}

/// Decides `h`'s verdict once its group is judged, and says why ([`Host::why`], gravest
/// first). The rule, as docs/fleet.md and `hwsurvey fleet --help` state it:
/// - **fail**: a result file unreadable or a failure marker, a run not complete, a failed
///   machine finding, or a figure outlier the worse way by `--fail-pct` or more from its
///   group median;
/// - **warn**: a failed test, a warned machine finding, any other figure outlier (smaller, or
///   the better way: a host that stands out is never a pass), a configuration that stands out
///   from its group's majority, drift;
/// - **emulated**: nothing of the above, and a run measured an emulator: no hardware verdict
///   ([`hwsurvey_result::provenance::emulation`]). On such a host the figures' outliers and
///   drift, and its machine findings, are listed but never counted (they are the emulator's);
///   its configuration and its runs' failures are;
/// - **incomplete**: nothing of the above, and rules about the machine were not evaluated (on
///   a virtual machine: the rules it could not check there), or the run stored no findings;
/// - **pass**: every rule evaluated, nothing stood out, drifted, warned or failed.
///
/// Findings about preconditions of the profile never count, as in `hwsurvey qualify`.
pub fn decide(h: &mut Host, opts: &Options) {
    let emulated = !h.emulation.is_empty();
    let mut why: Vec<(Verdict, String)> = Vec::new();
    // the failed tests' line is the last of the failures; the others are the runs'
    let run_failures = h.failures.len() - usize::from(h.failed_tests > 0);
    if h.runs.is_empty() && run_failures == 0 {
        why.push((Verdict::Fail, "no readable run".into()));
    }
    if run_failures > 0 {
        why.push((
            Verdict::Fail,
            format!(
                "{} (unreadable file, failure marker or run not complete)",
                hwsurvey_model::units::plural(run_failures as u64, "failure")
            ),
        ));
    }
    if h.failed_tests > 0 {
        why.push((
            Verdict::Warn,
            format!(
                "{} failed",
                hwsurvey_model::units::plural(h.failed_tests as u64, "test")
            ),
        ));
    }
    if !emulated {
        for f in h.findings.iter().filter(|f| !f.precondition) {
            let (v, word) = if f.verdict == "fail" {
                (Verdict::Fail, "failed")
            } else {
                (Verdict::Warn, "warned")
            };
            why.push((v, format!("{} {word}", f.rule)));
        }
        for o in &h.outliers {
            let k = figures::kind(o.figure).unwrap_or(&figures::FIGURES[0]);
            if o.worse && o.diff_pct.abs() >= opts.fail_pct {
                why.push((
                    Verdict::Fail,
                    format!(
                        "{} {:+.1} % from the group median, worse by --fail-pct {} % or more",
                        k.label,
                        o.diff_pct,
                        opts_pct(opts.fail_pct)
                    ),
                ));
            } else {
                why.push((
                    Verdict::Warn,
                    format!(
                        "{} {:+.1} % from the group median ({} way)",
                        k.label,
                        o.diff_pct,
                        if o.worse { "the worse" } else { "the better" }
                    ),
                ));
            }
        }
        for d in &h.drift {
            // a drift line begins with its figure's label (drift_of)
            let figure = figures::FIGURES
                .iter()
                .find(|k| d.starts_with(k.label))
                .map_or("a figure", |k| k.label);
            why.push((Verdict::Warn, format!("drift of {figure}")));
        }
    }
    if h.stands_out_by_configuration() {
        let facts: Vec<&str> = h
            .causes
            .iter()
            .filter(|c| c.configuration)
            .map(|c| c.fact)
            .collect();
        why.push((
            Verdict::Warn,
            format!(
                "configuration differs from the group's majority ({})",
                facts.join(", ")
            ),
        ));
    }
    if why.is_empty() {
        if emulated {
            why.push((
                Verdict::Emulated,
                format!("{}: no hardware verdict", h.emulation.join("; ")),
            ));
        } else if !h.findings_stored && !h.runs.is_empty() {
            why.push((
                Verdict::Incomplete,
                "the run stored no qualification findings (run `hwsurvey qualify FILE` for them)"
                    .into(),
            ));
        } else if !h.not_evaluated.is_empty() {
            let rules = hwsurvey_model::units::plural(h.not_evaluated.len() as u64, "rule");
            let place = match &h.virtual_machine {
                Some(vm) => format!("this {vm} could not check {rules}"),
                None => format!("{rules} not evaluated"),
            };
            why.push((
                Verdict::Incomplete,
                format!("{place}: {}", h.not_evaluated.join(", ")),
            ));
        }
    }
    // gravest first, in the order found within one verdict
    why.sort_by_key(|w| std::cmp::Reverse(w.0));
    h.verdict = why.first().map_or(Verdict::Pass, |w| w.0);
    h.why = why.into_iter().map(|(_, line)| line).collect();
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
    // causes: each fact that differs from the group's majority value. A configuration
    // difference flags its host by itself (in a group large enough to have a majority worth
    // the name); the others are kept only for a host flagged by a figure or drift.
    let all_facts: Vec<Vec<(&'static str, String)>> =
        members.iter().map(|h| h.facts.clone()).collect();
    let judged = members.len() >= MIN_GROUP_HOSTS;
    for h in members.iter_mut() {
        let found = causes(&h.facts, &all_facts);
        let by_configuration = judged && found.iter().any(|c| c.configuration);
        if by_configuration || h.flagged() {
            h.causes = found;
        }
    }
}

/// The facts of `host` that differ from the majority value of `group` (every member's facts,
/// the host's included). A fact the host does not know, or whose group has no majority
/// (no value held by more than half the hosts), is not named. Each is marked
/// [`Cause::configuration`] unless it is one of [`facts::CONTEXT_ONLY_FACTS`].
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
                configuration: facts::is_configuration(fact),
            });
        }
    }
    out
}

//! The fleet's model: hosts with their pooled figures, outliers, causes and findings; groups
//! of one hardware identity with their medians; the whole [`Fleet`] that the renderers show.

use serde::Serialize;

use crate::facts::Identity;
use crate::Options;

/// Verdict of a host ([`crate::decide`] gives it by the rule documented there and in
/// docs/fleet.md), in rising order of gravity for the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every run complete and readable, every rule about the machine evaluated, nothing
    /// stood out, drifted, warned or failed.
    Pass,
    /// Nothing stood out, warned or failed, but rules about the machine were not evaluated
    /// (or the run stored no findings): not a pass.
    Incomplete,
    /// The host ran under emulation: no hardware verdict; its figures' outliers and drift
    /// are listed but never counted.
    Emulated,
    /// A figure outlier short of `--fail-pct` (or the better way), a configuration that
    /// stands out, drift, a warned machine finding, or a failed test.
    Warn,
    /// A file unreadable, a run not complete, a failed machine finding, or a figure worse
    /// than its group median by `--fail-pct` or more.
    Fail,
}

impl Verdict {
    /// `pass`, `incomplete`, `emulated`, `warn`, `fail`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Incomplete => "incomplete",
            Verdict::Emulated => "emulated",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
        }
    }

    /// Exit status of `hwsurvey fleet` when this is the gravest verdict of a host: 0 pass,
    /// 4 incomplete, 5 emulated, 1 warn, 2 fail (as `hwsurvey qualify`'s).
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Pass => 0,
            Verdict::Incomplete => 4,
            Verdict::Emulated => 5,
            Verdict::Warn => 1,
            Verdict::Fail => 2,
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
    /// What the hardware watch saw during the run, one line each
    /// ([`hwsurvey_result::ResultFile::watch_lines`]); empty when it saw nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hardware: Vec<String>,
}

/// One headline figure of a host, pooled over its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostFigure {
    /// Figure key ([`crate::figures::FIGURES`]).
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
    /// A configuration difference ([`crate::facts::is_configuration`]): it flags the host by
    /// itself, whatever its figures. The kernel release only explains a flagged host.
    pub configuration: bool,
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
    /// pass / incomplete / emulated / warn / fail ([`crate::decide`]).
    pub verdict: Verdict,
    /// Why the verdict is not a pass, one line each, gravest first (`STREAM Triad, all
    /// threads -30.0 % from the group median, beyond --fail-pct 20 %`); empty for a pass.
    pub why: Vec<String>,
    /// Why the host's figures measure an emulator ([`hwsurvey_result::provenance::emulation`]
    /// of its runs), one line each; empty when no run was emulated.
    pub emulation: Vec<String>,
    /// The virtual machine its latest run ran in (`virtual machine (KVM)`), if one.
    pub virtual_machine: Option<String>,
    /// Rules about the machine that its latest run's stored findings did not evaluate.
    pub not_evaluated: Vec<String>,
    /// Whether its latest run stored qualification findings at all.
    pub findings_stored: bool,
    /// The readable runs, oldest first.
    pub runs: Vec<Run>,
    /// Why the host failed, one line each (unreadable file naming it, a run not complete), and
    /// last the tests its runs recorded as failed, when any.
    pub failures: Vec<String>,
    /// Tests of its runs recorded as failed (outcome `failed`): they warn, the other failures
    /// fail the host.
    pub failed_tests: usize,
    /// Headline figures, pooled over the runs.
    pub figures: Vec<HostFigure>,
    /// Figures outside the group's spread.
    pub outliers: Vec<Outlier>,
    /// Figures that moved monotonically over successive runs by more than the drift
    /// threshold, one line each.
    pub drift: Vec<String>,
    /// Probe differences from the group's majority, for a flagged host (an outlier figure,
    /// drift, or a configuration difference, which flags it by itself).
    pub causes: Vec<Cause>,
    /// Failed or warned qualification findings stored in the latest run.
    pub findings: Vec<HostFinding>,
    /// What the hardware watch saw during the latest run, one line each
    /// ([`hwsurvey_result::ResultFile::watch_lines`]: `2,314 corrected errors on DIMM B2
    /// (mc0/dimm3) during mem.bandwidth`): a cause of its figures whatever its group holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hardware: Vec<String>,
    /// Facts of the latest run ([`crate::facts::host_facts`]), for the causes.
    #[serde(skip)]
    pub facts: Vec<(&'static str, String)>,
    /// Identity of the latest run.
    #[serde(skip)]
    pub identity: Option<Identity>,
}

impl Host {
    /// Whether the host stood out (an outlier figure, or a configuration different from its
    /// group's majority) or drifted.
    pub fn flagged(&self) -> bool {
        !self.outliers.is_empty() || !self.drift.is_empty() || self.stands_out_by_configuration()
    }

    /// Whether a configuration difference from its group's majority makes the host stand out
    /// ([`Cause::configuration`]).
    pub fn stands_out_by_configuration(&self) -> bool {
        self.causes.iter().any(|c| c.configuration)
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
    /// What the reader should know about the inputs, one line each: runs under one host name
    /// that are separate machines ([`crate::machines`]), and what [`crate::collect`] skipped
    /// (`skipped DIR/x: symlink`).
    pub notes: Vec<String>,
    /// Groups, in order of their first host.
    pub groups: Vec<Group>,
    /// Hosts, by name.
    pub hosts: Vec<Host>,
}

impl Fleet {
    /// Exit status of `hwsurvey fleet`, by the gravest host verdict ([`Verdict::exit_code`]):
    /// 2 when a host failed, else 1 when a host warned (stood out, drifted, a warned finding),
    /// else 5 when a host ran under emulation, else 4 when a host's verdict is incomplete,
    /// else 0 (every host passed; no host at all is no pass either: 4).
    pub fn exit_code(&self) -> u8 {
        self.hosts
            .iter()
            .map(|h| h.verdict)
            .max()
            .unwrap_or(Verdict::Incomplete)
            .exit_code()
    }
}

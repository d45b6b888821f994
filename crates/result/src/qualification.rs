//! The qualification a run stores in its result file ([`crate::ResultFile::qualification`]):
//! the rules file that was used ([`RulesRef`]), when the findings were evaluated, and every
//! [`Finding`] (rule id, [`Verdict`], summary, [`Evidence`], fix, [`RuleKind`]).
//!
//! The types live here, beside the file that holds them, so that a result file is loaded with
//! its findings typed (a wrong value is refused naming its field, as any other field is) and
//! every reader (qualify, compare's report, fleet) reads them through one type. The rules that
//! produce findings, and the constructors that give a finding the kind of its rule, are
//! `hwsurvey_qualify`'s (`RuleFinding`), which re-exports these types under its own paths.

use hwsurvey_model::text::fnv1a64;
use serde::{Deserialize, Serialize};

/// Verdict of one finding, in rising order of gravity for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The check ran and found nothing wrong.
    Pass,
    /// Worth knowing, nothing to fix (e.g. isolcpus set, hot-plug CPU slots).
    Info,
    /// The rule's input is unknown; the finding says why.
    NotEvaluated,
    /// Probably costs performance or stability.
    Warn,
    /// The machine is not what it should be.
    Fail,
}

impl Verdict {
    /// Lower-case word used in every format (`pass`, `not-evaluated`).
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Info => "info",
            Verdict::NotEvaluated => "not-evaluated",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
        }
    }
}

/// What a rule is about: the machine itself, or a precondition of the profile's measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// A fact about the hardware or its set-up (a CPU offline, a DIMM missing, a slow link):
    /// it decides `hwsurvey qualify`'s exit status.
    #[default]
    Machine,
    /// A precondition of the profile (hugetlb pools reserved, THP available, an idle machine at
    /// the start of a run): a stock machine may miss it without any hardware fault. It is
    /// reported apart and never changes the exit status, with `--strict` neither.
    Precondition,
}

/// One thing read to reach a verdict: where, and what it said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// The file, SMBIOS structure or result field (`/sys/devices/system/cpu/online`).
    pub source: String,
    /// What it held (`0-23`).
    pub value: String,
}

impl Evidence {
    /// Builds one piece of evidence.
    pub fn new(source: impl Into<String>, value: impl Into<String>) -> Self {
        Evidence {
            source: source.into(),
            value: value.into(),
        }
    }
}

/// One verdict of one rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Rule id (`cpu.online`).
    pub rule: String,
    /// The verdict.
    pub verdict: Verdict,
    /// One line saying what was found (or, for [`Verdict::NotEvaluated`], why not).
    pub summary: String,
    /// What was read.
    pub evidence: Vec<Evidence>,
    /// What a person would do about it (absent for pass and not-evaluated).
    pub fix: Option<String>,
    /// Whether the rule is about the machine or a precondition of the profile; files written
    /// before this field have none, and readers take it from the rule id
    /// (`hwsurvey_qualify::kind_of`).
    #[serde(default)]
    pub kind: RuleKind,
}

impl Finding {
    /// Adds evidence.
    pub fn with(mut self, source: impl Into<String>, value: impl Into<String>) -> Self {
        self.evidence.push(Evidence::new(source, value));
        self
    }
    /// Sets the fix.
    pub fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

/// Which rules file produced findings: where it was read and a hash of its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulesRef {
    /// `profiles/qualify.toml (built in)`, or the path given with `--rules`.
    pub source: String,
    /// FNV-1a 64-bit hash of the file's bytes, 16 lower-case hex digits: tells two rules files
    /// apart (not a security hash). The built-in set hashes
    /// `hwsurvey_qualify::stored::BUILTIN_RULES_TEXT`.
    pub fnv1a64: String,
}

impl RulesRef {
    /// The reference of a rules file read from `source` with contents `text`.
    pub fn of_text(source: impl Into<String>, text: &str) -> Self {
        RulesRef {
            source: source.into(),
            fnv1a64: format!("{:016x}", fnv1a64(text.as_bytes())),
        }
    }
}

impl std::fmt::Display for RulesRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, fnv1a64 {}", self.source, self.fnv1a64)
    }
}

/// The `qualification` field of a result file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredFindings {
    /// The rules file used.
    pub rules: RulesRef,
    /// When the findings were evaluated (UTC, RFC 3339): the last write of the file.
    pub evaluated_at: String,
    /// Every finding, rule by rule: rule id, verdict, summary, evidence, fix.
    pub findings: Vec<Finding>,
}

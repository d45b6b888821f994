//! Qualification verdicts: what is wrong with a machine, with the evidence and the fix.
//!
//! Shape: [`Facts`] (a flat view of the probe's `Machine`, a result file and a binary) ->
//! rules (each a pure function `fn(&Facts, &Params) -> Vec<Finding>`, listed in [`RULES`]) ->
//! a [`Report`] of [`Finding`]s -> renderers ([`render`]) and an exit code
//! ([`Report::exit_code`]).
//!
//! Thresholds come from a rules file (`profiles/qualify.toml` is the default set; see
//! [`config`]); a rule whose input is unknown says "not evaluated" and why, never "pass".

pub mod binary;
pub mod config;
pub mod facts;
pub mod machine;
pub mod render;
pub mod rules;
pub mod stored;

use serde::{Deserialize, Serialize};

pub use config::{ConfigError, RuleSet};
pub use facts::Facts;
pub use machine::from_machine;

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
}

impl Finding {
    /// A finding with no evidence or fix yet.
    pub fn new(rule: &str, verdict: Verdict, summary: impl Into<String>) -> Self {
        Finding {
            rule: rule.to_string(),
            verdict,
            summary: summary.into(),
            evidence: Vec::new(),
            fix: None,
        }
    }
    /// A rule that could not be evaluated, and why.
    pub fn not_evaluated(rule: &str, why: impl std::fmt::Display) -> Self {
        Finding::new(rule, Verdict::NotEvaluated, format!("not evaluated: {why}"))
    }
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

/// Value of one rule parameter (a threshold or expectation from the rules file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A number.
    Float(f64),
    /// A string.
    Str(String),
    /// A list of strings.
    List(Vec<String>),
}

/// What a parameter must be; checked when the rules file is read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// true / false.
    Bool,
    /// An integer in `min..=max`.
    Int {
        /// Smallest allowed.
        min: i64,
        /// Largest allowed.
        max: i64,
    },
    /// A number (integers accepted) in `min..=max`.
    Float {
        /// Smallest allowed.
        min: f64,
        /// Largest allowed.
        max: f64,
    },
    /// One of the listed words.
    Choice(&'static [&'static str]),
    /// A dotted version such as `4.18`.
    Version,
    /// The given word (`"target"`: take the value from the target descriptor) or a dotted
    /// version such as `4.18`.
    VersionOr(&'static str),
    /// A list whose items are each one of the listed words.
    ChoiceList(&'static [&'static str]),
}

/// One parameter of a rule, with its default.
#[derive(Debug, Clone, Copy)]
pub struct ParamDef {
    /// Key in the rules file.
    pub name: &'static str,
    /// Allowed values.
    pub kind: ParamKind,
    /// Default value, written in TOML syntax (`0.6`, `"performance"`, `["thp"]`).
    pub default: &'static str,
    /// What it means, with its unit.
    pub doc: &'static str,
}

/// Resolved parameters of one rule (defaults overlaid by the rules file).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params(pub std::collections::BTreeMap<String, ParamValue>);

impl Params {
    /// A number (integers widen).
    pub fn f64(&self, name: &str) -> Option<f64> {
        match self.0.get(name)? {
            ParamValue::Float(v) => Some(*v),
            ParamValue::Int(v) => Some(*v as f64),
            _ => None,
        }
    }
    /// An integer.
    pub fn i64(&self, name: &str) -> Option<i64> {
        match self.0.get(name)? {
            ParamValue::Int(v) => Some(*v),
            _ => None,
        }
    }
    /// A string.
    pub fn str(&self, name: &str) -> Option<&str> {
        match self.0.get(name)? {
            ParamValue::Str(v) => Some(v),
            _ => None,
        }
    }
    /// A list of strings (empty when absent).
    pub fn list(&self, name: &str) -> Vec<String> {
        match self.0.get(name) {
            Some(ParamValue::List(v)) => v.clone(),
            _ => Vec::new(),
        }
    }
}

/// A built-in rule.
#[derive(Debug, Clone, Copy)]
pub struct RuleDef {
    /// Stable id (`cpu.online`).
    pub id: &'static str,
    /// One line: what it checks.
    pub explanation: &'static str,
    /// Its parameters.
    pub params: &'static [ParamDef],
    /// The check: a pure function.
    pub check: fn(&Facts, &Params) -> Vec<Finding>,
}

/// Every built-in rule, in report order.
pub static RULES: &[RuleDef] = rules::ALL;

/// Looks a rule up by id.
pub fn rule(id: &str) -> Option<&'static RuleDef> {
    RULES.iter().find(|r| r.id == id)
}

/// All findings of one qualification run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// What was qualified (`/`, a snapshot folder, a result file).
    pub subject: String,
    /// Findings, rule by rule in [`RULES`] order.
    pub findings: Vec<Finding>,
    /// Where the findings come from, for a result file: stored at run time or recomputed now,
    /// with the rules file ([`stored::Origin::note`]); `None` for a live machine or snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl Report {
    /// The worst verdict, if any finding.
    pub fn worst(&self) -> Option<Verdict> {
        self.findings.iter().map(|f| f.verdict).max()
    }

    /// Process exit code: 0 when nothing is wrong, 1 when there are warnings only, 2 on any
    /// failure. With `strict`, a warning counts as a failure (2) and a rule that could not be
    /// evaluated as a warning (1).
    pub fn exit_code(&self, strict: bool) -> u8 {
        let mut code = 0;
        for f in &self.findings {
            let c = match (f.verdict, strict) {
                (Verdict::Fail, _) => 2,
                (Verdict::Warn, true) => 2,
                (Verdict::Warn, false) => 1,
                (Verdict::NotEvaluated, true) => 1,
                _ => 0,
            };
            code = code.max(c);
        }
        code
    }

    /// Number of findings with this verdict.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.findings
            .iter()
            .filter(|f| f.verdict == verdict)
            .count()
    }
}

/// Runs every enabled rule of `set` over `facts`.
pub fn qualify(subject: &str, facts: &Facts, set: &RuleSet) -> Report {
    let mut findings = Vec::new();
    for def in RULES {
        let Some(params) = set.params(def.id) else {
            continue; // disabled
        };
        let mut out = (def.check)(facts, &params);
        if out.is_empty() {
            out.push(Finding::new(def.id, Verdict::Pass, def.explanation));
        }
        findings.extend(out);
    }
    Report {
        subject: subject.to_string(),
        findings,
        origin: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        let mut r = Report {
            subject: "x".into(),
            findings: vec![Finding::new("a", Verdict::Pass, "ok")],
            origin: None,
        };
        assert_eq!(r.exit_code(false), 0);
        r.findings.push(Finding::not_evaluated("b", "no DMI"));
        assert_eq!(r.exit_code(false), 0);
        assert_eq!(r.exit_code(true), 1);
        r.findings.push(Finding::new("c", Verdict::Warn, "w"));
        assert_eq!(r.exit_code(false), 1);
        assert_eq!(r.exit_code(true), 2);
        r.findings.push(Finding::new("d", Verdict::Fail, "f"));
        assert_eq!(r.exit_code(false), 2);
    }

    #[test]
    fn rule_ids_unique_and_defaults_parse() {
        let mut ids: Vec<_> = RULES.iter().map(|r| r.id).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n);
        // Every default must satisfy its own kind.
        let set = RuleSet::builtin();
        for def in RULES {
            let p = set.params(def.id).unwrap();
            assert_eq!(p.0.len(), def.params.len(), "{}", def.id);
        }
    }
}

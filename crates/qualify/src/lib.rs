//! Qualification verdicts: what is wrong with a machine, with the evidence and the fix.
//!
//! Shape: [`Facts`] (a flat view of the probe's `Machine`, a result file and a binary) ->
//! rules (each a pure function `fn(&Facts, &Params) -> Vec<Finding>`, listed in [`RULES`]) ->
//! a [`Report`] of [`Finding`]s -> its verdict ([`verdict`]: pass, incomplete, warn, fail, or
//! none for an emulated machine) -> renderers ([`render`]) and an exit code
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
pub mod verdict;

use serde::{Deserialize, Serialize};

pub use config::{ConfigError, RuleSet};
pub use facts::Facts;
pub use hwsurvey_result::qualification::{Evidence, Finding, RuleKind, Verdict};
pub use machine::from_machine;
pub use verdict::{Overall, Platform};

/// The kind of the built-in rule `id` ([`RuleKind::Machine`] for an id no built-in rule has,
/// e.g. a finding stored by a newer hwsurvey).
pub fn kind_of(id: &str) -> RuleKind {
    rule(id).map(|d| d.kind).unwrap_or_default()
}

/// The findings of built-in rules: a [`Finding`] (the data a result file stores,
/// `hwsurvey_result::qualification`) made with the kind of its rule ([`kind_of`]). Bring it
/// into scope to call `Finding::new` and `Finding::not_evaluated`.
pub trait RuleFinding {
    /// A finding of rule `rule` with no evidence or fix yet.
    fn new(rule: &str, verdict: Verdict, summary: impl Into<String>) -> Self;
    /// A rule that could not be evaluated, and why.
    fn not_evaluated(rule: &str, why: impl std::fmt::Display) -> Self;
}

impl RuleFinding for Finding {
    fn new(rule: &str, verdict: Verdict, summary: impl Into<String>) -> Self {
        Finding {
            rule: rule.to_string(),
            verdict,
            summary: summary.into(),
            evidence: Vec::new(),
            fix: None,
            kind: kind_of(rule),
        }
    }
    fn not_evaluated(rule: &str, why: impl std::fmt::Display) -> Self {
        Finding::new(rule, Verdict::NotEvaluated, format!("not evaluated: {why}"))
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
    /// About the machine, or a precondition of the profile.
    pub kind: RuleKind,
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
    /// What the machine runs on ([`Platform`]): an emulated machine gets no hardware verdict,
    /// a virtual machine's verdict names the rules it could not check.
    #[serde(default)]
    pub platform: Platform,
}

impl Report {
    /// The worst verdict, if any finding.
    pub fn worst(&self) -> Option<Verdict> {
        self.findings.iter().map(|f| f.verdict).max()
    }

    /// Process exit code of the verdict ([`Report::overall`], [`Overall::exit_code`]): 0 pass,
    /// 1 warnings, 2 a failure, 4 incomplete (rules about the machine not evaluated, nothing
    /// warned or failed), 5 an emulated machine (no hardware verdict). With `strict`, a warning
    /// and an incomplete verdict count as failures (2). Only findings about the machine count:
    /// an unmet precondition of the profile ([`RuleKind::Precondition`]) never changes the code.
    pub fn exit_code(&self, strict: bool) -> u8 {
        self.overall().exit_code(strict)
    }

    /// Number of findings about the machine with this verdict (preconditions apart:
    /// [`Report::preconditions`]).
    pub fn count(&self, verdict: Verdict) -> usize {
        self.machine_findings()
            .filter(|f| f.verdict == verdict)
            .count()
    }

    /// Findings about the machine, in report order.
    pub fn machine_findings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.kind == RuleKind::Machine)
    }

    /// Findings about the profile's preconditions, in report order.
    pub fn preconditions(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.kind == RuleKind::Precondition)
    }

    /// Sets every finding's kind from its rule id ([`kind_of`]): findings read from a file
    /// written before findings carried a kind.
    pub fn kinds_from_rules(mut self) -> Self {
        for f in &mut self.findings {
            f.kind = kind_of(&f.rule);
        }
        self
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
        platform: facts.platform.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(findings: Vec<Finding>) -> Report {
        Report {
            subject: "x".into(),
            findings,
            origin: None,
            platform: Platform::default(),
        }
    }

    /// A rule not evaluated makes the verdict incomplete (exit 4), never a pass: before, a
    /// run with 7 rules not evaluated exited 0 like one with every rule evaluated.
    #[test]
    fn exit_codes() {
        let mut r = report(vec![Finding::new("a", Verdict::Pass, "ok")]);
        assert_eq!((r.overall(), r.exit_code(false)), (Overall::Pass, 0));
        r.findings.push(Finding::not_evaluated("b", "no DMI"));
        assert_eq!((r.overall(), r.exit_code(false)), (Overall::Incomplete, 4));
        assert_eq!(r.exit_code(true), 2);
        assert_eq!(r.not_evaluated(), ["b"]);
        assert_eq!(
            r.verdict_line(),
            "verdict: incomplete, not a pass: 1 rule not evaluated: b; none warned or failed"
        );
        r.findings.push(Finding::new("c", Verdict::Warn, "w"));
        assert_eq!((r.overall(), r.exit_code(false)), (Overall::Warn, 1));
        assert_eq!(r.exit_code(true), 2);
        r.findings.push(Finding::new("d", Verdict::Fail, "f"));
        assert_eq!((r.overall(), r.exit_code(false)), (Overall::Fail, 2));
        assert_eq!(
            r.verdict_line(),
            "verdict: fail: 1 failure; 1 warning; 1 rule not evaluated: b"
        );
        // a virtual machine's verdict names the rules it could not check
        r.platform.virtual_machine = Some("virtual machine (KVM)".into());
        assert_eq!(
            r.verdict_line(),
            "verdict: fail: 1 failure; 1 warning; this virtual machine (KVM) could not check 1 rule: b"
        );
        // an emulated machine gets no hardware verdict, whatever its findings
        r.platform.emulation = vec!["full-system emulation: figures measure the emulator".into()];
        assert_eq!((r.overall(), r.exit_code(false)), (Overall::Emulated, 5));
        assert_eq!(r.exit_code(true), 5);
        assert!(r
            .verdict_line()
            .starts_with("verdict: none (emulated): full-system emulation: figures measure the emulator; no hardware verdict"));
    }

    #[test]
    fn unmet_preconditions_never_change_the_exit_code() {
        assert_eq!(kind_of("pages.hugetlb"), RuleKind::Precondition);
        assert_eq!(kind_of("pages.thp"), RuleKind::Precondition);
        assert_eq!(kind_of("cpu.online"), RuleKind::Machine);
        assert_eq!(kind_of("no.such.rule"), RuleKind::Machine);
        let r = report(vec![
            Finding::new("cpu.online", Verdict::Pass, "ok"),
            Finding::new("pages.hugetlb", Verdict::Warn, "pools empty"),
            Finding::new("pages.thp", Verdict::Fail, "THP never"),
        ]);
        assert_eq!(r.exit_code(false), 0);
        assert_eq!(r.exit_code(true), 0);
        assert_eq!(r.count(Verdict::Warn), 0);
        assert_eq!(r.preconditions().count(), 2);
        // a finding stored without a kind (an older file) takes it from its rule id
        let old: Finding = serde_json::from_str(
            r#"{"rule":"pages.hugetlb","verdict":"warn","summary":"s","evidence":[],"fix":null}"#,
        )
        .unwrap();
        assert_eq!(old.kind, RuleKind::Machine);
        let r = report(vec![old]).kinds_from_rules();
        assert_eq!(r.findings[0].kind, RuleKind::Precondition);
        assert_eq!(r.exit_code(false), 0);
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

//! Findings stored in a result file at run time, and reading them back.
//!
//! `hwsurvey run` evaluates the rules on the probed machine plus the result so far and stores
//! a [`StoredFindings`] document (typed in the result crate, `hwsurvey_result::qualification`,
//! re-exported here) in the result file's `qualification` field before every write (so an
//! interrupted run keeps them). `hwsurvey qualify RESULT.json` and `compare`
//! show those ([`findings_of_result`]); a file written before runs stored findings has none,
//! and its findings are recomputed now, saying so ([`Origin`]).

use hwsurvey_model::Probed;
use hwsurvey_result::ResultFile;

pub use hwsurvey_result::qualification::{RulesRef, StoredFindings};

use crate::{from_machine, machine::result_facts, qualify, Facts, Report, RuleSet};

/// Text of `profiles/qualify.toml` built into hwsurvey: the default rule set
/// ([`RuleSet::builtin`], which a test holds equal to this file).
pub const BUILTIN_RULES_TEXT: &str = include_str!("../../../profiles/qualify.toml");

/// The reference of the built-in rules file: bring it into scope to call
/// `RulesRef::builtin()`.
pub trait BuiltinRules {
    /// The built-in default set (`profiles/qualify.toml` as built in,
    /// [`BUILTIN_RULES_TEXT`]).
    fn builtin() -> Self;
}

impl BuiltinRules for RulesRef {
    fn builtin() -> Self {
        RulesRef::of_text("profiles/qualify.toml (built in)", BUILTIN_RULES_TEXT)
    }
}

pub use hwsurvey_model::text::fnv1a64;

/// Where shown findings come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// Read from the result file, as `hwsurvey run` stored them.
    Stored {
        /// The rules file the run used.
        rules: RulesRef,
        /// When the run evaluated them.
        evaluated_at: String,
    },
    /// Evaluated now.
    Recomputed {
        /// The rules used now.
        rules: RulesRef,
        /// Why the stored findings are not shown.
        why: String,
    },
}

impl Origin {
    /// One line for people: `findings stored at run time (2026-11-29T20:34:10Z, rules
    /// profiles/qualify.toml (built in), fnv1a64 ...)` or `findings recomputed now with ...:
    /// WHY`.
    pub fn note(&self) -> String {
        match self {
            Origin::Stored {
                rules,
                evaluated_at,
            } => format!("findings stored at run time ({evaluated_at}, rules {rules})"),
            Origin::Recomputed { rules, why } => {
                format!("findings recomputed now with rules {rules}: {why}")
            }
        }
    }
}

/// Evaluates `rules` on a result file's machine ([`ResultFile::machine`], typed when the file
/// was loaded) and figures; the report's platform is the run's ([`crate::Platform::of_result`]).
pub fn recompute(label: &str, file: &ResultFile, rules: &RuleSet) -> Report {
    let mut facts = from_machine(&file.machine);
    facts.result = Probed::Known(result_facts(label, file));
    facts.platform = crate::Platform::of_result(file);
    qualify(label, &facts, rules)
}

/// The findings to show for a result file: the stored ones when it has them (the loader
/// read them typed, a wrong value refused naming its field), else recomputed with `rules`
/// (named by `rules_ref`) on its typed machine; the report's `origin` says which.
pub fn findings_of_result(
    label: &str,
    file: &ResultFile,
    rules: &RuleSet,
    rules_ref: &RulesRef,
) -> Report {
    if let Some(s) = &file.qualification {
        let origin = Origin::Stored {
            rules: s.rules.clone(),
            evaluated_at: s.evaluated_at.clone(),
        };
        return Report {
            subject: label.to_string(),
            findings: s.findings.clone(),
            origin: Some(origin.note()),
            platform: crate::Platform::of_result(file),
        }
        .kinds_from_rules();
    }
    let why = "the file stores no findings (written before hwsurvey run stored them)".to_string();
    let mut report = recompute(label, file, rules);
    report.origin = Some(
        Origin::Recomputed {
            rules: rules_ref.clone(),
            why,
        }
        .note(),
    );
    report
}

/// What `hwsurvey run` stores: `rules` evaluated on `machine_facts` (from the probe of the
/// machine the run is on, target included) plus the result file as it is now.
pub fn evaluate_for_run(
    label: &str,
    machine_facts: &Facts,
    file: &ResultFile,
    rules: &RuleSet,
    rules_ref: &RulesRef,
    evaluated_at: String,
) -> StoredFindings {
    let mut facts = machine_facts.clone();
    facts.result = Probed::Known(result_facts(label, file));
    StoredFindings {
        rules: rules_ref.clone(),
        evaluated_at,
        findings: qualify(label, &facts, rules).findings,
    }
}

/// The qualifier `hwsurvey run` puts in the engine's run request
/// ([`hwsurvey_result::Qualifier`]): `rules` evaluated ([`evaluate_for_run`]) on the facts of
/// the machine the run is on plus the result file as the engine writes it, stored in the
/// file's `qualification` field before every write. Plain data, owned by the caller.
#[derive(Debug, Clone)]
pub struct RunQualifier {
    /// Facts of the probed machine (the running binary's target included).
    pub facts: Facts,
    /// The rules.
    pub rules: RuleSet,
    /// Their source and hash, stored with the findings.
    pub rules_ref: RulesRef,
}

impl RunQualifier {
    /// The built-in rule set (`profiles/qualify.toml`) on `machine`, with the hugetlb pools the
    /// run's plan needs (`(page size bytes, pages)`, ascending page size; the workloads'
    /// `mem_latency::hugetlb_needs` of the plan) for the `pages.hugetlb` fix.
    pub fn builtin(machine: &hwsurvey_machine::Machine, hugetlb_needed: &[(u64, u64)]) -> Self {
        let mut facts = from_machine(machine);
        facts.pages.hugetlb_needed = Some(
            hugetlb_needed
                .iter()
                .map(|&(page_size_bytes, pages)| crate::facts::HugetlbNeed {
                    page_size_bytes,
                    pages,
                })
                .collect(),
        );
        RunQualifier {
            facts,
            rules: RuleSet::builtin(),
            rules_ref: RulesRef::builtin(),
        }
    }
}

impl hwsurvey_result::Qualifier for RunQualifier {
    fn qualification(
        &self,
        label: &str,
        file: &ResultFile,
        evaluated_at: String,
    ) -> Option<StoredFindings> {
        let stored = evaluate_for_run(
            label,
            &self.facts,
            file,
            &self.rules,
            &self.rules_ref,
            evaluated_at,
        );
        Some(stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_text_is_the_builtin_set() {
        let set = RuleSet::parse("profiles/qualify.toml", BUILTIN_RULES_TEXT).unwrap();
        assert_eq!(set, RuleSet::builtin());
        let r = RulesRef::builtin();
        assert_eq!(r.source, "profiles/qualify.toml (built in)");
        assert_eq!(r.fnv1a64.len(), 16);
        assert_ne!(
            RulesRef::of_text("x", &format!("{BUILTIN_RULES_TEXT}\n")).fnv1a64,
            r.fnv1a64
        );
    }
}

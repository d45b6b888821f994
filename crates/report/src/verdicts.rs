//! The qualification table: each result's machine (and its measured figures) judged rule by
//! rule, with the worst verdict and its one-line summary.

use hwsurvey_qualify::stored::BuiltinRules as _;

use crate::input::Input;
use crate::layout::{Cell, Row, Table};

/// Qualification findings of each result's machine (and its measured figures), rule by rule:
/// the worst verdict and its one-line summary.
pub(crate) fn qualify_table(inputs: &[Input], flags: &[String]) -> Table {
    let rules = hwsurvey_qualify::RuleSet::builtin();
    let rules_ref = hwsurvey_qualify::stored::RulesRef::builtin();
    // the findings `hwsurvey run` stored in the file; recomputed for older files
    let reports: Vec<hwsurvey_qualify::Report> = inputs
        .iter()
        .map(|i| {
            hwsurvey_qualify::stored::findings_of_result(&i.label, &i.file, &rules, &rules_ref)
        })
        .collect();
    let rows = hwsurvey_qualify::RULES
        .iter()
        .map(|def| Row {
            label: match def.kind {
                hwsurvey_qualify::RuleKind::Precondition => format!("{} (precondition)", def.id),
                hwsurvey_qualify::RuleKind::Machine => def.id.to_string(),
            },
            unit: None,
            x: None,
            cells: reports
                .iter()
                .map(|r| {
                    let found: Vec<&hwsurvey_qualify::Finding> =
                        r.findings.iter().filter(|f| f.rule == def.id).collect();
                    match found.iter().max_by_key(|f| f.verdict) {
                        // stored findings keep no list of the rules run: a rule newer
                        // than the file is missing as a disabled one is
                        None if r
                            .origin
                            .as_deref()
                            .is_some_and(|o| o.starts_with("findings stored")) =>
                        {
                            Cell::missing(
                                "no stored finding (rule disabled at run time, or newer \
                                 than the file)",
                            )
                        }
                        None => Cell::missing("rule disabled"),
                        Some(worst) => Cell {
                            text: worst.verdict.word().to_string(),
                            value: None,
                            note: Some(
                                found
                                    .iter()
                                    .map(|f| f.summary.trim_start_matches("not evaluated: "))
                                    .collect::<Vec<_>>()
                                    .join("; "),
                            ),
                            missing: None,
                            x: None,
                            stats: None,
                            unit: None,
                        },
                    }
                })
                .collect(),
        })
        .collect();
    let mut notes = flags.to_vec();
    notes.push("hwsurvey qualify's built-in rules over each result's machine document and figures; run `hwsurvey qualify RESULT.json` for evidence and fixes".into());
    notes.push("(precondition): a condition of the profile's measurements (hugetlb pools reserved, THP available, an idle machine), not a fault of the machine; it is counted apart in the headline and never changes qualify's exit code".into());
    for (i, r) in inputs.iter().zip(&reports) {
        if let hwsurvey_qualify::Report {
            origin: Some(origin),
            ..
        } = r
        {
            notes.push(format!("{}: {origin}", i.label));
        }
    }
    Table {
        id: "qualify".into(),
        title: "Qualification".into(),
        row_header: "rule".into(),
        columns: inputs.iter().map(|i| i.label.clone()).collect(),
        rows,
        notes,
        plot: None,
    }
}

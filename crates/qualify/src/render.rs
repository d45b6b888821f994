//! Renderers of a [`Report`]: pure functions report -> text.

use crate::{Finding, Report, Verdict};

/// The most characters of one summary, evidence value or fix shown in terminal and Markdown
/// output; longer ones show their start, end and length.
pub const SHOWN_CHARS: usize = 1000;

/// `s` bounded to [`SHOWN_CHARS`], control characters escaped (newlines too).
fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    hwsurvey_model::text::one_line(s, SHOWN_CHARS)
}

/// Output format of `hwsurvey qualify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned text for a terminal.
    Terminal,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// The [`Report`] as JSON.
    Json,
}

/// Renders `report` in `format`.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Terminal => terminal(report),
        Format::Markdown => markdown(report),
        Format::Json => json(report),
    }
}

/// JSON: the [`Report`] with its verdict beside the findings: `verdict` (`pass`, `incomplete`,
/// `warn`, `fail`, `emulated`: [`crate::Overall`]), `verdict_line` ([`Report::verdict_line`])
/// and `not_evaluated` (the rules about the machine that were not evaluated).
pub fn json(report: &Report) -> String {
    let error = |e: serde_json::Error| serde_json::json!({ "error": e.to_string() }).to_string();
    let mut v = match serde_json::to_value(report) {
        Ok(v) => v,
        Err(e) => return error(e) + "\n",
    };
    v["verdict"] = serde_json::json!(report.overall());
    v["verdict_line"] = serde_json::json!(report.verdict_line());
    v["not_evaluated"] = serde_json::json!(report.not_evaluated());
    hwsurvey_model::text::json::to_string_pretty(&v).unwrap_or_else(error) + "\n"
}

fn tally(report: &Report) -> String {
    [
        Verdict::Fail,
        Verdict::Warn,
        Verdict::NotEvaluated,
        Verdict::Info,
        Verdict::Pass,
    ]
    .iter()
    .map(|v| format!("{} {}", report.count(*v), v.word()))
    .collect::<Vec<_>>()
    .join(", ")
        + &precondition_tally(report)
}

/// `; preconditions of the profile: 1 not met, 1 met` (empty when no precondition rule ran).
fn precondition_tally(report: &Report) -> String {
    let all: Vec<&Finding> = report.preconditions().collect();
    if all.is_empty() {
        return String::new();
    }
    let unmet = all
        .iter()
        .filter(|f| matches!(f.verdict, Verdict::Warn | Verdict::Fail))
        .count();
    format!(
        "; preconditions of the profile: {unmet} not met, {} met or not evaluated",
        all.len() - unmet
    )
}

/// Heading of the preconditions' part of a report.
const PRECONDITIONS: &str =
    "Preconditions of the profile (not hardware faults; they never change the exit status):";

/// Terminal lines of `findings`, the rule column `width` wide.
fn terminal_block<'a>(findings: impl Iterator<Item = &'a Finding>, width: usize) -> String {
    let mut out = String::new();
    for f in findings {
        out += &format!(
            "{:<13} {:<width$}  {}\n",
            f.verdict.word().to_uppercase(),
            f.rule,
            shown(&f.summary)
        );
        let pad = " ".repeat(14 + width + 2);
        for e in &f.evidence {
            out += &format!("{pad}read {}: {}\n", shown(&e.source), shown(&e.value));
        }
        if let Some(fix) = &f.fix {
            out += &format!("{pad}fix: {}\n", shown(fix));
        }
    }
    out
}

/// Terminal text: the tally, where the findings come from, the verdict in one line
/// ([`Report::verdict_line`]), then one block per finding, worst first within the rule order.
pub fn terminal(report: &Report) -> String {
    let mut out = format!("qualify {}: {}\n", shown(&report.subject), tally(report));
    if let Some(origin) = &report.origin {
        out += &format!("{}\n", shown(origin));
    }
    out += &format!("{}\n", shown(&report.verdict_line()));
    out.push('\n');
    let width = report
        .findings
        .iter()
        .map(|f| f.rule.len())
        .max()
        .unwrap_or(0);
    out += &terminal_block(report.machine_findings(), width);
    if report.preconditions().next().is_some() {
        out += &format!("\n{PRECONDITIONS}\n");
        out += &terminal_block(report.preconditions(), width);
    }
    out
}

fn md_cell(text: &str) -> String {
    hwsurvey_model::text::markdown_cell(&shown(text))
}

/// Markdown: a summary line, the verdict in bold and one table row per finding.
pub fn markdown(report: &Report) -> String {
    let origin = report
        .origin
        .as_deref()
        .map(|o| format!("{}\n\n", md_cell(o)))
        .unwrap_or_default();
    let mut out = format!(
        "## Qualification of `{}`\n\n{}\n\n{origin}**{}**\n\n| verdict | rule | finding | evidence | fix |\n|---|---|---|---|---|\n",
        shown(&report.subject).replace('`', "'"),
        tally(report),
        md_cell(&report.verdict_line())
    );
    let rows = report
        .machine_findings()
        .map(|f| (f, ""))
        .chain(report.preconditions().map(|f| (f, " (precondition)")));
    for (f, kind) in rows {
        let evidence: Vec<String> = f
            .evidence
            .iter()
            .map(|e| format!("{}: {}", md_cell(&e.source), md_cell(&e.value)))
            .collect();
        out += &format!(
            "| {}{kind} | `{}` | {} | {} | {} |\n",
            f.verdict.word(),
            f.rule,
            md_cell(&f.summary),
            evidence.join("<br>"),
            f.fix.as_deref().map(md_cell).unwrap_or_default()
        );
    }
    out
}

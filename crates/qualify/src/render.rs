//! Renderers of a [`Report`]: pure functions report -> text.

use crate::{Report, Verdict};

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
        Format::Json => {
            serde_json::to_string_pretty(report)
                .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
                + "\n"
        }
    }
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
}

/// Terminal text: one block per finding, worst first within the rule order.
pub fn terminal(report: &Report) -> String {
    let mut out = format!("qualify {}: {}\n", shown(&report.subject), tally(report));
    if let Some(origin) = &report.origin {
        out += &format!("{}\n", shown(origin));
    }
    out.push('\n');
    let width = report
        .findings
        .iter()
        .map(|f| f.rule.len())
        .max()
        .unwrap_or(0);
    for f in &report.findings {
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

fn md_cell(text: &str) -> String {
    shown(text)
        .replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('\n', " ")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Markdown: a summary line and one table row per finding.
pub fn markdown(report: &Report) -> String {
    let origin = report
        .origin
        .as_deref()
        .map(|o| format!("{}\n\n", md_cell(o)))
        .unwrap_or_default();
    let mut out = format!(
        "## Qualification of `{}`\n\n{}\n\n{origin}| verdict | rule | finding | evidence | fix |\n|---|---|---|---|---|\n",
        shown(&report.subject).replace('`', "'"),
        tally(report)
    );
    for f in &report.findings {
        let evidence: Vec<String> = f
            .evidence
            .iter()
            .map(|e| format!("{}: {}", md_cell(&e.source), md_cell(&e.value)))
            .collect();
        out += &format!(
            "| {} | `{}` | {} | {} | {} |\n",
            f.verdict.word(),
            f.rule,
            md_cell(&f.summary),
            evidence.join("<br>"),
            f.fix.as_deref().map(md_cell).unwrap_or_default()
        );
    }
    out
}

//! Renderers of a [`Fleet`]: pure functions fleet -> text (terminal, Markdown, JSON, HTML).
//!
//! Every format states the rules with their parameters (outliers by figure, by configuration,
//! drift, the verdict), lists the groups with their identity and figure medians, then the
//! fleet table (one row per host: group, pass / incomplete / emulated / warn / fail, what it
//! stands out by: outlier figures with their % from the group median, configuration facts,
//! drift; causes), then the details of each host that did not pass, ending with its verdict
//! and why.
//!
//! Each format follows its escaping rule ([`hwsurvey_model::text`]'s `terminal`, `markdown`,
//! `json`, `html`) in the text rendered here, so a file written with `-o` is escaped as the
//! same report on a terminal.

use crate::figures::{self, FigureKind};
use crate::{Fleet, Host, Outlier};

/// Output format of `hwsurvey fleet`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Box tables for a terminal.
    Terminal,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// The [`Fleet`] as JSON.
    Json,
    /// One self-contained HTML page ([`html`]).
    Html,
}

/// Columns the terminal tables are fitted to when the output is no terminal (a pipe, a file,
/// a CI log): a fleet table read at 80 columns fits them, as compare's headline does.
pub const FLEET_COLUMNS: usize = 80;

/// Renders `fleet`; `width` fits terminal tables to that many columns (`None`: not a
/// terminal, [`FLEET_COLUMNS`]).
pub fn render(fleet: &Fleet, format: Format, width: Option<usize>) -> String {
    match format {
        Format::Terminal => terminal(fleet, width),
        Format::Markdown => markdown(fleet),
        Format::Html => html(fleet),
        Format::Json => json(fleet),
    }
}

/// JSON: the [`Fleet`] with the rules in words (`rules`: `outlier`, `configuration`, `drift`,
/// `verdict`), under the JSON rule ([`hwsurvey_model::text::json`]: control and bidi characters
/// as `\u` escapes). (Its first key stays `files`: [`crate::is_fleet_report`] knows a fleet
/// report by it.)
pub fn json(fleet: &Fleet) -> String {
    let error = |e: serde_json::Error| serde_json::json!({ "error": e.to_string() }).to_string();
    let mut v = match serde_json::to_value(fleet) {
        Ok(v) => v,
        Err(e) => return error(e) + "\n",
    };
    v["rules"] = serde_json::json!({
        "outlier": outlier_rule(fleet),
        "configuration": configuration_rule(),
        "drift": drift_rule(fleet),
        "verdict": verdict_rule(fleet),
    });
    hwsurvey_model::text::json::to_string_pretty(&v).unwrap_or_else(error) + "\n"
}

fn kind(key: &str) -> &'static FigureKind {
    figures::kind(key).unwrap_or(&figures::FIGURES[0])
}

fn pct(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// The rules in one line: `outlier rule: a host's figure outside the group median ± k x MAD
/// (k = 3) and more than 5 % from the median ...; configuration rule: ...; drift: ...`.
pub fn rule_line(fleet: &Fleet) -> String {
    format!(
        "{}; {}; {}; {}",
        outlier_rule(fleet),
        configuration_rule(),
        drift_rule(fleet),
        verdict_rule(fleet)
    )
}

/// The verdict rule with its parameter ([`crate::decide`]).
pub fn verdict_rule(fleet: &Fleet) -> String {
    format!(
        "verdict: fail for an unreadable file, a run not complete, a failed finding or a figure \
         worse than its group median by {} % or more (--fail-pct); warn for any other outlier, \
         a configuration that stands out, drift, a warned finding or a failed test; emulated \
         (no hardware verdict; its figures never count) for a run under emulation; incomplete \
         for rules not evaluated; pass only when every rule was evaluated and nothing stood out",
        pct(fleet.options.fail_pct)
    )
}

/// The figure rule with its parameters.
pub fn outlier_rule(fleet: &Fleet) -> String {
    let o = &fleet.options;
    format!(
        "outlier rule: a host's figure outside the group median ± k x MAD (k = {}) and more than {} % from the median (--k, --min-diff-pct)",
        pct(o.k),
        pct(o.min_diff_pct),
    )
}

/// The configuration rule, naming the facts ([`crate::facts::FACT_NAMES`],
/// [`crate::facts::is_configuration`]).
pub fn configuration_rule() -> String {
    let configuration: Vec<&str> = crate::facts::FACT_NAMES
        .into_iter()
        .filter(|f| crate::facts::is_configuration(f))
        .collect();
    format!(
        "configuration rule: a host whose configuration ({}; not the {}) differs from the value held by more than half of its group ({} or more hosts) stands out with that cause, whatever its figures",
        configuration.join(", "),
        crate::facts::CONTEXT_ONLY_FACTS.join(", "),
        crate::MIN_GROUP_HOSTS
    )
}

/// The drift rule with its parameter.
pub fn drift_rule(fleet: &Fleet) -> String {
    format!(
        "drift: a figure moving one way over {} or more successive runs by more than {} % in total",
        crate::DRIFT_MIN_RUNS,
        pct(fleet.options.drift_pct)
    )
}

/// `THP, CPUs online`: the configuration facts that make `h` stand out.
fn configuration_facts(h: &Host) -> String {
    h.causes
        .iter()
        .filter(|c| c.configuration)
        .map(|c| c.fact)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `STREAM Triad, all threads -30.0 % (31.1 GB/s vs 44.4 GB/s)`.
fn outlier_text(o: &Outlier) -> String {
    let k = kind(o.figure);
    format!(
        "{} {:+.1} % ({} vs group median {})",
        k.label,
        o.diff_pct,
        figures::show(k, o.value),
        figures::show(k, o.group_median)
    )
}

fn causes_text(h: &Host) -> String {
    let mut parts: Vec<String> = h
        .causes
        .iter()
        .map(|c| format!("{} {} (group: {})", c.fact, c.host, c.group))
        .collect();
    parts.extend(h.hardware.iter().map(|l| format!("hardware watch: {l}")));
    if h.flagged() && parts.is_empty() {
        parts.push("no probe difference from the group found".into());
    }
    parts.join("; ")
}

fn outliers_cell(h: &Host) -> String {
    let mut parts: Vec<String> = h.outliers.iter().map(outlier_text).collect();
    if h.stands_out_by_configuration() {
        parts.push(format!("configuration: {}", configuration_facts(h)));
    }
    parts.extend(h.drift.iter().map(|d| format!("drift: {d}")));
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

fn verdict_cell(h: &Host) -> String {
    let mut v = h.verdict.word().to_string();
    if !h.failures.is_empty() {
        v += &format!(
            " ({})",
            hwsurvey_model::units::plural(h.failures.len() as u64, "failure")
        );
    }
    v
}

/// `5 hosts from 5 result files in 1 group: 1 stood out or drifted, 1 failed; verdicts: 1
/// fail, 4 pass (exit 2)`.
fn summary_line(fleet: &Fleet) -> String {
    use crate::Verdict;
    let flagged = fleet.hosts.iter().filter(|h| h.flagged()).count();
    let count = |v: Verdict| fleet.hosts.iter().filter(|h| h.verdict == v).count();
    let verdicts: Vec<String> = [
        Verdict::Fail,
        Verdict::Warn,
        Verdict::Emulated,
        Verdict::Incomplete,
        Verdict::Pass,
    ]
    .into_iter()
    .filter(|v| count(*v) > 0)
    .map(|v| format!("{} {}", count(v), v.word()))
    .collect();
    format!(
        "{} from {} in {}: {} stood out or drifted, {} failed; verdicts: {} (exit {})",
        hwsurvey_model::units::plural(fleet.hosts.len() as u64, "host"),
        hwsurvey_model::units::plural(fleet.files as u64, "result file"),
        hwsurvey_model::units::plural(fleet.groups.len() as u64, "group"),
        flagged,
        count(Verdict::Fail),
        verdicts.join(", "),
        fleet.exit_code()
    )
}

/// The summary, the rule, and the fleet's notes (`note: ...`: machines under one name,
/// what was skipped).
fn header_lines(fleet: &Fleet) -> Vec<String> {
    let mut lines = vec![summary_line(fleet), rule_line(fleet)];
    lines.extend(fleet.notes.iter().map(|n| format!("note: {n}")));
    lines
}

fn table_rows(fleet: &Fleet) -> Vec<Vec<String>> {
    let mut rows = vec![vec![
        "host".to_string(),
        "group".into(),
        "verdict".into(),
        "runs".into(),
        "stands out by".into(),
        "causes".into(),
    ]];
    for h in &fleet.hosts {
        rows.push(vec![
            h.name.clone(),
            h.group
                .map(|g| format!("G{g}"))
                .unwrap_or_else(|| "-".into()),
            verdict_cell(h),
            h.runs.len().to_string(),
            outliers_cell(h),
            {
                let c = causes_text(h);
                if c.is_empty() {
                    "-".into()
                } else {
                    c
                }
            },
        ]);
    }
    rows
}

fn group_rows(g: &crate::Group) -> Vec<Vec<String>> {
    let mut rows = vec![vec![
        "figure".to_string(),
        "hosts".into(),
        "median".into(),
        "MAD".into(),
        "MAD % of median".into(),
    ]];
    for f in &g.figures {
        let k = kind(f.figure);
        rows.push(vec![
            k.label.to_string(),
            f.hosts.to_string(),
            figures::show(k, f.median),
            figures::show(k, f.mad),
            format!("{:.2} %", f.mad / f.median * 100.0),
        ]);
    }
    rows
}

/// Whether a host's findings are worth listing: it stood out, drifted, failed or warned.
fn loud(h: &Host) -> bool {
    h.flagged() || !h.failures.is_empty() || h.verdict >= crate::Verdict::Warn
}

/// Detail lines of a host that did not pass (indented), its verdict and why last; empty for
/// a host that passed.
fn details(h: &Host) -> Vec<String> {
    let mut out = Vec::new();
    for f in &h.failures {
        out.push(format!("  failed: {f}"));
    }
    for o in &h.outliers {
        out.push(format!(
            "  outlier: {} (the {} way; group MAD {})",
            outlier_text(o),
            if o.worse { "worse" } else { "better" },
            figures::show(kind(o.figure), o.group_mad)
        ));
    }
    if h.stands_out_by_configuration() {
        out.push(format!(
            "  stands out: its configuration differs from the group's majority ({})",
            configuration_facts(h)
        ));
    }
    for d in &h.drift {
        out.push(format!("  drift: {d}"));
    }
    for c in &h.causes {
        out.push(format!(
            "  cause: {} is {} (the group's majority: {})",
            c.fact, c.host, c.group
        ));
    }
    for l in &h.hardware {
        out.push(format!("  cause: hardware watch: {l}"));
    }
    if h.flagged() && h.causes.is_empty() && h.hardware.is_empty() {
        out.push("  cause: no probe difference from the group found".into());
    }
    if loud(h) {
        for f in &h.findings {
            out.push(format!(
                "  finding: {} {}: {}{}",
                f.verdict,
                f.rule,
                f.summary,
                if f.precondition {
                    " (precondition of the profile, never changes the verdict)"
                } else {
                    ""
                }
            ));
        }
    }
    if h.runs.len() > 1 {
        let spreads: Vec<String> = h
            .figures
            .iter()
            .filter_map(|f| {
                f.spread_pct
                    .map(|s| format!("{} {:.1} %", kind(f.figure).label, s))
            })
            .collect();
        out.push(format!(
            "  {} pooled (median per figure); between-run spread: {}",
            hwsurvey_model::units::plural(h.runs.len() as u64, "run"),
            spreads.join(", ")
        ));
    }
    if h.verdict != crate::Verdict::Pass {
        out.push(format!(
            "  verdict: {}: {}",
            h.verdict.word(),
            h.why.join("; ")
        ));
    }
    if !out.is_empty() {
        out.insert(0, format!("{}:", h.name));
    }
    out
}

/// The detail lines of every host that did not pass ([`details`]), in host order; hosts whose
/// block is their verdict alone, the same words (`verdict: incomplete: this virtual machine
/// (KVM) could not check 9 rules: ...`), share one block headed by their names
/// (`n1, n2, n3:`), where the first of them stands: a fleet of forty VMs says it once.
fn all_details(fleet: &Fleet) -> Vec<String> {
    let blocks: Vec<Vec<String>> = fleet.hosts.iter().map(details).collect();
    let verdict_only = |b: &Vec<String>| b.len() == 2 && b[1].starts_with("  verdict: ");
    let mut out = Vec::new();
    let mut done = vec![false; blocks.len()];
    for i in 0..blocks.len() {
        if done[i] {
            continue;
        }
        if !verdict_only(&blocks[i]) {
            out.extend(blocks[i].iter().cloned());
            continue;
        }
        let same: Vec<usize> = (i..blocks.len())
            .filter(|&j| !done[j] && verdict_only(&blocks[j]) && blocks[j][1] == blocks[i][1])
            .collect();
        let names: Vec<&str> = same.iter().map(|&j| fleet.hosts[j].name.as_str()).collect();
        for &j in &same {
            done[j] = true;
        }
        out.push(format!("{}:", names.join(", ")));
        out.push(blocks[i][1].clone());
    }
    out
}

/// A box table of `rows` (`rows[0]` the header) fitted to `width` by the compare report's
/// fitter ([`hwsurvey_report::terminal::boxed`]: the widest column narrowed first, no word
/// broken, groups of columns where even that is too wide). Ends with a newline.
fn boxed(mut rows: Vec<Vec<String>>, width: Option<usize>) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let header = rows.remove(0);
    hwsurvey_report::terminal::boxed(header, rows, width)
}

/// One line of prose wrapped at spaces to at most `width` columns, its leading spaces kept
/// and later lines indented 4 more ([`hwsurvey_report::cells::wrap_note`]); ends with a
/// newline.
fn prose(line: &str, width: usize) -> String {
    let text = line.trim_start();
    let lead = " ".repeat(line.len() - text.len());
    let wrapped = hwsurvey_report::cells::wrap_note(text, width.saturating_sub(lead.len()), 4);
    wrapped.lines().map(|l| format!("{lead}{l}\n")).collect()
}

/// Terminal: the summary, the fleet table and its rules, the groups and the details, every line fitted to `width`
/// columns, or to [`FLEET_COLUMNS`] when the output is no terminal (`None`): the same text on
/// a terminal, in a pipe and in a file. Tables by the compare report's fitter, prose wrapped
/// at spaces (a word longer than the width stays whole).
pub fn terminal(fleet: &Fleet, width: Option<usize>) -> String {
    let columns = width.unwrap_or(FLEET_COLUMNS);
    let width = Some(columns);
    let mut out = String::new();
    // the answer first: the summary, the notes and the fleet table, the rules (a paragraph)
    // under it as compare's key is under its headline, then each group's figures and the
    // details; the fleet table is on an 80x24 first screen
    out += &prose(&summary_line(fleet), columns);
    for n in &fleet.notes {
        out += &prose(&format!("note: {n}"), columns);
    }
    out += "\nFleet\n";
    out += &boxed(table_rows(fleet), width);
    out += &prose(&rule_line(fleet), columns);
    for g in &fleet.groups {
        out.push('\n');
        out += &prose(
            &format!(
                "Group G{} ({}): {}",
                g.id,
                hwsurvey_model::units::plural(g.hosts.len() as u64, "host"),
                g.identity_text
            ),
            columns,
        );
        if let Some(n) = &g.note {
            out += &prose(&format!("note: {n}"), columns);
        }
        if !g.figures.is_empty() {
            out += &boxed(group_rows(g), width);
        }
    }
    let details = all_details(fleet);
    if !details.is_empty() {
        out += "\nDetails\n";
        for l in details {
            out += &prose(&l, columns);
        }
    }
    // the terminal rule, to a file as on a terminal
    hwsurvey_model::text::terminal::document(&out).into_owned()
}

fn md_table(rows: Vec<Vec<String>>) -> String {
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        out += &format!(
            "| {} |\n",
            r.iter()
                .map(|c| hwsurvey_model::text::markdown_cell(c))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        if i == 0 {
            out += &format!("|{}\n", " --- |".repeat(r.len()));
        }
    }
    out
}

/// Markdown: the same parts as the terminal, as headings and pipe tables.
pub fn markdown(fleet: &Fleet) -> String {
    let mut out = String::from("# hwsurvey fleet\n\n");
    for l in header_lines(fleet) {
        out += &format!("{}\n\n", hwsurvey_model::text::markdown_cell(&l));
    }
    for g in &fleet.groups {
        out += &format!(
            "## Group G{} ({})\n\n{}\n\n",
            g.id,
            hwsurvey_model::units::plural(g.hosts.len() as u64, "host"),
            hwsurvey_model::text::markdown_cell(&g.identity_text)
        );
        if let Some(n) = &g.note {
            out += &format!("> {}\n\n", hwsurvey_model::text::markdown_cell(n));
        }
        if !g.figures.is_empty() {
            out += &md_table(group_rows(g));
            out.push('\n');
        }
    }
    out += "## Fleet\n\n";
    out += &md_table(table_rows(fleet));
    let details = all_details(fleet);
    if !details.is_empty() {
        out += "\n## Details\n\n";
        for l in details {
            match l.strip_prefix("  ") {
                Some(item) => out += &format!("- {}\n", hwsurvey_model::text::markdown_cell(item)),
                None => out += &format!("\n**{}**\n\n", hwsurvey_model::text::markdown_cell(&l)),
            }
        }
    }
    hwsurvey_model::text::markdown::document(&out).into_owned()
}

use hwsurvey_report::html::{html_cell, html_escape as esc, html_words};

/// The compare report's class of a verdict cell: `fail`, `warn` (also for emulated and
/// incomplete, which are no pass), `pass`.
fn verdict_class(v: crate::Verdict) -> &'static str {
    match v {
        crate::Verdict::Pass => "pass",
        crate::Verdict::Fail => "fail",
        _ => "warn",
    }
}

/// One HTML table: `rows[0]` is the header; each body cell laid out as the compare report's
/// ([`html_cell`]: breaks at spaces and after a long path's `/`, never inside a word);
/// `class_of(row, column, text)` gives each body cell's class (the report's `td.fail` / `td.warn` / `td.pass` / `td.num` ...).
fn html_table(
    table_class: &str,
    rows: &[Vec<String>],
    class_of: impl Fn(usize, usize, &str) -> String,
) -> String {
    let mut out = if table_class.is_empty() {
        "<table><thead><tr>".to_string()
    } else {
        format!("<table class=\"{table_class}\"><thead><tr>")
    };
    for h in rows.first().into_iter().flatten() {
        out += &format!("<th>{}</th>", html_words(h));
    }
    out += "</tr></thead><tbody>\n";
    for (r, row) in rows.iter().enumerate().skip(1) {
        out += "<tr>";
        for (c, cell) in row.iter().enumerate() {
            let class = class_of(r - 1, c, cell);
            if class.is_empty() {
                out += &format!("<td>{}</td>", html_cell(cell));
            } else {
                out += &format!("<td class=\"{class}\">{}</td>", html_cell(cell));
            }
        }
        out += "</tr>\n";
    }
    out += "</tbody></table>\n";
    out
}

/// HTML: one self-contained page (the compare report's style sheet, no script, no external
/// resource; every string from a result file escaped): the summary and the rule, the fleet
/// table (one row per host; the verdict cell styled `fail` / `warn` / `pass` as in the
/// compare report's findings, outliers the worse way in red), the findings of the flagged,
/// warned or failed hosts as a table styled by verdict, the details of each such host, then
/// each group's identity and figure medians.
pub fn html(fleet: &Fleet) -> String {
    let summary = summary_line(fleet);
    let rule = rule_line(fleet);
    let mut out = hwsurvey_report::html::page_start("hwsurvey fleet", "hwsurvey fleet");
    let alarm = fleet.exit_code() != 0;
    out += &format!(
        "<p class=\"{}\">{}</p>\n<p class=\"note\">{}</p>\n",
        if alarm { "flag" } else { "pass" },
        esc(&summary),
        esc(&rule)
    );
    for n in &fleet.notes {
        out += &format!("<p class=\"note\">note: {}</p>\n", esc(n));
    }
    out += "<section class=\"first\">\n<h2>Fleet</h2>\n";
    out += &html_table("glance", &table_rows(fleet), |r, c, _| {
        let h = &fleet.hosts[r];
        match c {
            2 => verdict_class(h.verdict).to_string(),
            4 if h.outliers.iter().any(|o| o.worse) || h.stands_out_by_configuration() => {
                "worse".into()
            }
            4 if h.flagged() => "better".into(),
            5 if h.flagged() => "flag".into(),
            _ => String::new(),
        }
    });
    out += "</section>\n";
    // findings of the hosts that are not quiet, styled by verdict
    let mut findings = vec![vec![
        "host".to_string(),
        "rule".into(),
        "verdict".into(),
        "finding".into(),
    ]];
    let mut verdicts = Vec::new();
    for h in fleet.hosts.iter().filter(|h| loud(h)) {
        for f in &h.failures {
            findings.push(vec![h.name.clone(), "run".into(), "fail".into(), f.clone()]);
            verdicts.push("fail");
        }
        for f in &h.findings {
            let mut summary = f.summary.clone();
            if f.precondition {
                summary += " (precondition of the profile, never changes the verdict)";
            }
            findings.push(vec![
                h.name.clone(),
                f.rule.clone(),
                f.verdict.clone(),
                summary,
            ]);
            verdicts.push(if f.verdict == "fail" { "fail" } else { "warn" });
        }
    }
    if findings.len() > 1 {
        out += "<section class=\"qualify\">\n<h2>Findings and failures</h2>\n";
        out += &html_table("", &findings, |r, c, _| {
            if c == 2 {
                verdicts[r].to_string()
            } else {
                String::new()
            }
        });
        out += "</section>\n";
    }
    // the findings are in the table above
    let details: Vec<String> = all_details(fleet)
        .into_iter()
        .filter(|l| !l.starts_with("  finding: "))
        .collect();
    if !details.is_empty() {
        out += "<section class=\"detail\">\n<h2>Details</h2>\n";
        let mut open = false;
        for l in details {
            match l.strip_prefix("  ") {
                Some(item) => {
                    let class = if item.starts_with("failed:")
                        || item.starts_with("finding: fail")
                        || item.starts_with("verdict: fail")
                    {
                        " class=\"worse\""
                    } else if item.starts_with("outlier:")
                        || item.starts_with("stands out:")
                        || item.starts_with("cause:")
                    {
                        " class=\"flag\""
                    } else {
                        ""
                    };
                    out += &format!("<li{class}>{}</li>\n", esc(item));
                }
                None => {
                    if open {
                        out += "</ul>\n";
                    }
                    out += &format!("<h3>{}</h3>\n<ul>\n", esc(l.trim_end_matches(':')));
                    open = true;
                }
            }
        }
        if open {
            out += "</ul>\n";
        }
        out += "</section>\n";
    }
    for g in &fleet.groups {
        out += &format!(
            "<section class=\"group\">\n<h2>Group G{} ({})</h2>\n<p>{}</p>\n",
            g.id,
            esc(&hwsurvey_model::units::plural(g.hosts.len() as u64, "host")),
            esc(&g.identity_text)
        );
        if let Some(n) = &g.note {
            out += &format!("<p class=\"note\">{}</p>\n", esc(n));
        }
        if !g.figures.is_empty() {
            out += &html_table("headline", &group_rows(g), |_, c, _| {
                if c == 0 {
                    String::new()
                } else {
                    "num".into()
                }
            });
        }
        out += "</section>\n";
    }
    out += "</body></html>\n";
    hwsurvey_model::text::html::document(&out).into_owned()
}

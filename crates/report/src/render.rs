//! Renderers: pure functions [`Comparison`] -> text. Each supplies syntax only.

use crate::layout::{Comparison, Table};

/// Output format of `hwsurvey compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Box tables (tabled).
    Terminal,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// CSV with a header and a unit column; values in base units.
    Csv,
    /// The layout model as JSON.
    Json,
    /// One self-contained HTML file, SVG inline, print stylesheet.
    Html,
}

/// Renders in `format`; `plots` are SVG documents (title, svg) placed in the HTML report.
pub fn render(c: &Comparison, format: Format, plots: &[(String, String)]) -> String {
    match format {
        Format::Terminal => terminal(c),
        Format::Markdown => markdown(c),
        Format::Csv => csv(c),
        Format::Json => serde_json::to_string_pretty(c).unwrap_or_default() + "\n",
        Format::Html => html(c, plots),
    }
}

fn header(t: &Table) -> Vec<String> {
    std::iter::once(t.row_header.clone())
        .chain(t.columns.iter().cloned())
        .collect()
}

fn body(t: &Table) -> Vec<Vec<String>> {
    t.rows
        .iter()
        .map(|r| {
            std::iter::once(r.label.clone())
                .chain(r.cells.iter().map(|c| c.display()))
                .collect()
        })
        .collect()
}

/// Shrinks `table` to at most `width` terminal columns when `width` is given: cells of the
/// widest column are wrapped first, at word boundaries where a word fits (tabled's
/// `Width::wrap` with the largest-column priority). `None` (output to a pipe or file) leaves
/// the table at its natural width. A table whose borders alone exceed `width` stays wider.
pub fn fit_table(table: &mut tabled::Table, width: Option<usize>) {
    if let Some(width) = width {
        if table.total_width() > width {
            table.with(
                tabled::settings::Width::wrap(width)
                    .keep_words(true)
                    .priority(tabled::settings::peaker::PriorityMax::right()),
            );
        }
    }
}

/// Terminal: one tabled box table per table, notes under it.
pub fn terminal(c: &Comparison) -> String {
    terminal_fitted(c, None)
}

/// [`terminal`] for a terminal `width` columns wide ([`fit_table`]); `None`: natural widths.
pub fn terminal_fitted(c: &Comparison, width: Option<usize>) -> String {
    let mut out = String::new();
    for t in &c.tables {
        let mut b = tabled::builder::Builder::default();
        b.push_record(header(t));
        for r in body(t) {
            b.push_record(r);
        }
        let mut table = b.build();
        table.with(tabled::settings::Style::sharp());
        fit_table(&mut table, width);
        out += &format!("{}\n{table}\n", t.title);
        for n in &t.notes {
            out += &format!("note: {n}\n");
        }
        out.push('\n');
    }
    out
}

fn md_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\n', " ")
}

/// Markdown: a heading and a pipe table per table.
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::from("# hwsurvey comparison\n\n");
    for f in &c.flags {
        out += &format!("> **{}**\n\n", md_escape(f));
    }
    for t in &c.tables {
        out += &format!("## {}\n\n", md_escape(&t.title));
        let h = header(t);
        out += &format!(
            "| {} |\n",
            h.iter()
                .map(|x| md_escape(x))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        out += &format!("|{}\n", "---|".repeat(h.len()));
        for r in body(t) {
            out += &format!(
                "| {} |\n",
                r.iter()
                    .map(|x| md_escape(x))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
        }
        for n in &t.notes {
            out += &format!("\n_{}_\n", md_escape(n));
        }
        out.push('\n');
    }
    out
}

/// One CSV field: quoted when it holds `,` `"` or a line break (RFC 4180); and, by OWASP's
/// rule against CSV injection, a text starting with `=`, `+`, `-`, `@`, tab or CR gets a
/// leading `'`, so a spreadsheet shows it as text instead of running it as a formula
/// (`=HYPERLINK(...)` in a label). A number (`-0.5`, `+3e9`) is left as it is.
pub fn csv_field(s: &str) -> String {
    let formula_like = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    let s = if formula_like && s.trim().parse::<f64>().is_err() {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// CSV: `table,row,unit,column,value,text,note,missing,n,min,max,cv,ci95_low,ci95_high`, one
/// line per flag of the comparison first (table `flags`, row = its number, the flag in `text`:
/// time-limited or incomplete runs, --force), then one line per cell; `value` in the row's base unit (`bytes_per_s`, `ns`), so machines read
/// numbers, people read `text`. For a measured median the last six fields are its statistics
/// ([`crate::CellStats`]: sample count, min, max, CV as a fraction, 95 % interval of the
/// median, same unit); empty for other cells.
pub fn csv(c: &Comparison) -> String {
    let mut out = String::from(
        "table,row,unit,column,value,text,note,missing,n,min,max,cv,ci95_low,ci95_high\n",
    );
    for (i, f) in c.flags.iter().enumerate() {
        let mut fields = vec![String::new(); 14];
        fields[0] = "flags".into();
        fields[1] = (i + 1).to_string();
        fields[5] = csv_field(f);
        out += &fields.join(",");
        out.push('\n');
    }
    for t in &c.tables {
        for r in &t.rows {
            for (col, cell) in t.columns.iter().zip(&r.cells) {
                let unit = if col.contains(" vs ") {
                    "ratio".to_string()
                } else {
                    r.unit.clone().unwrap_or_default()
                };
                let fields = [
                    t.id.clone(),
                    r.label.clone(),
                    unit,
                    col.clone(),
                    cell.value.map(|v| format!("{v}")).unwrap_or_default(),
                    cell.text.clone(),
                    cell.note.clone().unwrap_or_default(),
                    cell.missing.clone().unwrap_or_default(),
                ];
                let num = |v: Option<f64>| v.map(|v| format!("{v}")).unwrap_or_default();
                let st = cell.stats.as_ref();
                let stats = [
                    st.map(|s| s.n.to_string()).unwrap_or_default(),
                    num(st.map(|s| s.min)),
                    num(st.map(|s| s.max)),
                    num(st.and_then(|s| s.cv)),
                    num(st.map(|s| s.ci95_low)),
                    num(st.map(|s| s.ci95_high)),
                ];
                let fields = fields.into_iter().chain(stats);
                out += &fields.map(|f| csv_field(&f)).collect::<Vec<_>>().join(",");
                out.push('\n');
            }
        }
    }
    out
}

/// Escapes text for HTML element content and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const CSS: &str = "body{font-family:sans-serif;font-size:10pt;margin:1.5em;color:#111}\
h1{font-size:16pt}h2{font-size:13pt;margin-top:1.2em}\
table{border-collapse:collapse;margin:.5em 0;max-width:100%}th,td{border:1px solid #999;padding:2px 6px;text-align:left;vertical-align:top}td{overflow-wrap:anywhere}\
th{background:#eee}td.missing{color:#888;font-style:italic}td.num{text-align:right}\
.note{font-size:8.5pt;color:#444}.flag{color:#a00;font-weight:bold}\
.better{color:#060}.worse{color:#a00}.noise{color:#666}\
section.family{page-break-before:always;break-before:page}\
svg{max-width:100%;height:auto}figure,section.scaling{break-inside:avoid;page-break-inside:avoid}h2{break-after:avoid;page-break-after:avoid}\
@page{size:A4;margin:12mm}\
@media print{body{margin:0;font-size:9pt}section.family{page-break-before:always}table{page-break-inside:auto;width:calc(100% - 1px)}tr{page-break-inside:avoid}}";

/// HTML: one self-contained file; every string from a result file is escaped; plots are SVG
/// generated here (plotters), inlined.
pub fn html(c: &Comparison, plots: &[(String, String)]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hwsurvey comparison</title><style>{CSS}</style></head><body>\n<h1>hwsurvey comparison: {}</h1>\n",
        html_escape(&c.platforms.join(" | "))
    );
    for f in &c.flags {
        out += &format!("<p class=\"flag\">{}</p>\n", html_escape(f));
    }
    for t in &c.tables {
        // a family starts a page; its scaling tables follow on the same page
        let class = if t.id == "machine" {
            "machine"
        } else if t.id.starts_with("scaling:") {
            "scaling"
        } else {
            "family"
        };
        out += &format!(
            "<section class=\"{class}\"><h2>{}</h2>\n<table><thead><tr>",
            html_escape(&t.title)
        );
        for h in header(t) {
            out += &format!("<th>{}</th>", html_escape(&h));
        }
        out += "</tr></thead><tbody>\n";
        for r in &t.rows {
            out += &format!("<tr><th>{}</th>", html_escape(&r.label));
            for cell in &r.cells {
                let class = match (&cell.missing, cell.note.as_deref()) {
                    (Some(_), _) => "missing",
                    (None, Some(n)) if n.ends_with("better") => "num better",
                    (None, Some(n)) if n.ends_with("worse") => "num worse",
                    (None, Some("within noise")) => "num noise",
                    _ if cell.value.is_some() => "num",
                    _ => "",
                };
                out += &format!(
                    "<td class=\"{class}\">{}</td>",
                    html_escape(&cell.display())
                );
            }
            out += "</tr>\n";
        }
        out += "</tbody></table>\n";
        for n in &t.notes {
            out += &format!("<p class=\"note\">{}</p>\n", html_escape(n));
        }
        let prefix = format!("{}:", t.title);
        let own = |title: &str| title == t.title || title.starts_with(&prefix);
        // one heading per plot: the section's own for a table drawn as a plot, else a
        // figure caption (the SVG carries none)
        for (title, svg) in plots.iter().filter(|(title, _)| own(title)) {
            if *title == t.title {
                out += &format!("<figure>{svg}</figure>\n");
            } else {
                out += &format!(
                    "<figure><figcaption>{}</figcaption>{svg}</figure>\n",
                    html_escape(title)
                );
            }
        }
        out += "</section>\n";
    }
    out += "</body></html>\n";
    out
}

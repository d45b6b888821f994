//! Renderers: pure functions [`Comparison`] -> text. Each supplies syntax only.

use crate::layout::{Comparison, Table};

/// The HTML pieces shared with the fleet report ([`crate::html`]), under their paths here.
pub use crate::html::{html_cell, html_escape, html_words, CSS};

use crate::cells::{body, header, on_top};
/// The cells, marks and widths every people format shares ([`crate::cells`]), under their
/// paths here.
pub use crate::cells::{wrap_note, Marks, HEADLINE_COLUMNS, INLINE_REASON_CHARS};

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
        Format::Json => hwsurvey_model::text::json::to_string_pretty(c).unwrap_or_default() + "\n",
        Format::Html => html(c, plots),
    }
}

/// Terminal: one box table per table, notes under it ([`crate::terminal`]), at natural width
/// (a pipe or file).
pub fn terminal(c: &Comparison) -> String {
    let text = crate::terminal::screen(c, &crate::terminal::Screen::default());
    hwsurvey_model::text::terminal::document(&text).into_owned()
}

/// [`terminal`] for a terminal `width` columns wide, every table: see [`crate::terminal`].
pub fn terminal_fitted(c: &Comparison, width: Option<usize>) -> String {
    let text = crate::terminal::screen(
        c,
        &crate::terminal::Screen {
            width,
            details: true,
            ..Default::default()
        },
    );
    hwsurvey_model::text::terminal::document(&text).into_owned()
}

/// Markdown: a heading and a pipe table per table, under the Markdown rule
/// ([`hwsurvey_model::text::markdown`]).
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::from("# hwsurvey comparison\n\n");
    let mut marks = Marks::of(c);
    // the flags are footnotes of the headline when there is one, else a quote on top
    if !c
        .tables
        .iter()
        .any(|t| t.id == crate::headline::HEADLINE_ID)
    {
        for f in &c.flags {
            out += &format!("> **{}**\n\n", hwsurvey_model::text::markdown_cell(f));
            marks.printed(f);
        }
    }
    for t in &c.tables {
        out += &format!("## {}\n\n", hwsurvey_model::text::markdown_cell(&t.title));
        let h = header(t);
        out += &format!(
            "| {} |\n",
            h.iter()
                .map(|x| hwsurvey_model::text::markdown_cell(x))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        out += &format!("|{}\n", "---|".repeat(h.len()));
        for r in body(t, &mut marks) {
            out += &format!(
                "| {} |\n",
                r.iter()
                    .map(|x| hwsurvey_model::text::markdown_cell(x))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
        }
        for n in marks.notes_of(t) {
            out += &format!("\n_{}_\n", hwsurvey_model::text::markdown_cell(&n));
        }
        out.push('\n');
    }
    hwsurvey_model::text::markdown::document(&out).into_owned()
}

/// One CSV field under the CSV rule ([`hwsurvey_model::text::csv::field`]): control and bidi
/// characters escaped, quoted when it holds `,` `"` or a line break (RFC 4180); and, by
/// OWASP's rule against CSV injection, a text starting with `=`, `+`, `-` or `@` gets a
/// leading `'`, so a spreadsheet shows it as text instead of running it as a formula
/// (`=HYPERLINK(...)` in a label). A number (`-0.5`, `+3e9`) is left as it is.
pub fn csv_field(s: &str) -> String {
    hwsurvey_model::text::csv::field(s)
}

/// CSV: `table,row,unit,column,value,text,note,missing,n,min,max,cv,ci95_low,ci95_high`, one
/// line per flag of the comparison first (table `flags`, row = its number, the flag in `text`:
/// time-limited or incomplete runs, --force), then one line per cell, each table's notes
/// after its cells (row `note`, the `[n] ...` text its cells' marks point at); `value` in the row's base unit (`bytes_per_s`, `ns`), so machines read
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
                let unit = match &cell.unit {
                    Some(u) => u.clone(),
                    None if col.contains(" vs ") => "ratio".to_string(),
                    None => r.unit.clone().unwrap_or_default(),
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
        // the table's notes, which its "[n]" marks point at (why a run is not comparable,
        // why a figure is missing): row `note`, the note in `text`
        for n in &t.notes {
            let mut fields = vec![String::new(); 14];
            fields[0] = csv_field(&t.id);
            fields[1] = "note".into();
            fields[5] = csv_field(n);
            out += &fields.join(",");
            out.push('\n');
        }
    }
    hwsurvey_model::text::csv::document(&out).into_owned()
}

/// Page 1's lines before its tables: when the report was written and by which hwsurvey, each
/// run's dates, version and profile, and one verdict sentence per machine.
fn about_html(c: &Comparison) -> String {
    let mut out = String::new();
    let by = format!("hwsurvey {}", env!("CARGO_PKG_VERSION"));
    out += &match &c.written_at {
        Some(t) => format!(
            "<p class=\"about\">Report written {} UTC by {by}.</p>\n",
            html_escape(&t.replace('T', " ").replace('Z', ""))
        ),
        None => format!("<p class=\"about\">Report by {by}.</p>\n"),
    };
    if !c.runs.is_empty() {
        out += "<ul class=\"about\">";
        for r in &c.runs {
            out += &format!("<li>{}</li>", html_escape(r));
        }
        out += "</ul>\n";
    }
    if !c.verdicts.is_empty() {
        out += "<ul class=\"verdicts\">";
        for v in &c.verdicts {
            out += &format!("<li>{}</li>", html_escape(v));
        }
        out += "</ul>\n";
    }
    out
}

/// HTML class of a cell of table `t`: missing, number, the verdict of a relative figure, or
/// the verdict of a finding (`fail`, `warn`: they must not look like passes).
fn cell_class(t: &Table, cell: &crate::Cell) -> &'static str {
    if t.id == "qualify" {
        return match cell.text.as_str() {
            "fail" => "fail",
            "warn" => "warn",
            "pass" => "pass",
            _ if cell.missing.is_some() => "missing",
            _ => "",
        };
    }
    if t.id == crate::headline::HEADLINE_ID {
        return match cell.note.as_deref() {
            Some(n) if n.ends_with(" +") => "num better",
            Some(n) if n.ends_with(" -") => "num worse",
            Some(n) if n.ends_with(" ~") => "num noise",
            Some(n) if n.ends_with(" !") => "num nc",
            _ if cell.value.is_none() => "missing",
            _ => "num",
        };
    }
    match (&cell.missing, cell.note.as_deref()) {
        (Some(_), _) => "missing",
        (None, Some(n)) if n.ends_with("better") => "num better",
        (None, Some(n)) if n.ends_with("worse") => "num worse",
        (None, Some(crate::family::WITHIN_NOISE)) => "num noise",
        (None, Some(crate::family::NOT_COMPARABLE)) => "num nc",
        // a point the hardware watch marked (throttled, errors, a link retrained)
        (None, Some(n)) if n.ends_with("during this point") => "num nc",
        _ if cell.value.is_some() => "num",
        _ => "",
    }
}

/// Whether the printed report puts `t` after the first page and before the plots: the
/// machine details, the findings and the summaries (scaling, A/B).
fn before_plots(t: &Table) -> bool {
    [
        "machine",
        "qualify",
        crate::summary::SCALING_ID,
        crate::summary::AB_ID,
    ]
    .contains(&t.id.as_str())
}

/// Longest cell of a figure table, characters (figure and note): `4.60x (not comparable)`,
/// `3.35 GB/s @2, 101% (11% @16), knee 2` (the scaling summary). A table with a longer cell
/// holds sentences, wrapped at spaces.
const FIGURE_CELL_CHARS: usize = 60;

/// Whether `t` is a table of figures (family, scaling, summaries): its cells are short, a
/// figure and its note, printed one line a row where the page is wide enough. A table of
/// sentences (the TLB reach beside each knee: `knee 4 MiB x10.8 (also 64 KiB x1.7, ...)`)
/// is not: kept on one line, it ran off the printed page, its last column cut.
fn figures(t: &Table) -> bool {
    let chars = |c: &crate::Cell| {
        c.text.chars().count() + c.note.as_ref().map_or(0, |n| n.chars().count() + 3)
    };
    !on_top(t)
        && t.id != "machine"
        && t.id != "qualify"
        && t.rows
            .iter()
            .flat_map(|r| &r.cells)
            .all(|c| chars(c) <= FIGURE_CELL_CHARS)
}

/// A figure cell for HTML, escaped: the figure and its note in parentheses each kept on one
/// line (no-break spaces inside them), the line free to break only between the two, so a
/// table of many machines wraps a cell in two rather than running off the page, and one of
/// three stays a line a row: `29.5 GB/s (CV 4.2%)`, `0.15x (-85% worse)`, `— [33]`.
pub fn figure_html(shown: &str) -> String {
    let keep = |s: &str| html_escape(s).replace(' ', "&nbsp;");
    match shown.split_once(" (") {
        Some((figure, note)) => format!("{} ({}", keep(figure), keep(note)),
        None => keep(shown),
    }
}

/// Whether a row of the machine or qualification table says the same in every column, so
/// that the printed report writes it once in a cell spanning them all.
fn same_everywhere(t: &Table, r: &crate::Row) -> bool {
    (t.id == "qualify" || t.id == "machine")
        && r.cells.len() > 1
        && r.cells.iter().all(|c| c == &r.cells[0])
}

/// Most columns after the first of a figure table printed one line a row (three machines and
/// two ratio columns fit an A4 page so); a wider one may break a cell between its figure and
/// its note ([`figure_html`]).
pub const ONE_LINE_COLUMNS: usize = 5;

fn html_table(t: &Table, marks: &mut Marks, class: &str) -> String {
    let class = if figures(t) && t.columns.len() <= ONE_LINE_COLUMNS {
        format!("{class} oneline").trim().to_string()
    } else {
        class.to_string()
    };
    let mut out = format!(
        "<h2>{}</h2>\n<table class=\"{class}\"><thead><tr>",
        html_escape(&t.title)
    );
    for h in header(t) {
        out += &format!("<th>{}</th>", html_words(&h));
    }
    out += "</tr></thead><tbody>\n";
    for r in &t.rows {
        out += &format!("<tr><th>{}</th>", html_words(&r.label));
        if same_everywhere(t, r) {
            let cell = &r.cells[0];
            out += &format!(
                "<td class=\"{}\" colspan=\"{}\">{} <span class=\"note\">(all {})</span></td>",
                format!("{} all", cell_class(t, cell)).trim_start(),
                r.cells.len(),
                html_cell(&marks.cell(cell)),
                r.cells.len()
            );
            out += "</tr>\n";
            continue;
        }
        for cell in &r.cells {
            let shown = marks.cell(cell);
            let shown = if figures(t) {
                figure_html(&shown)
            } else {
                html_cell(&shown)
            };
            out += &format!("<td class=\"{}\">{shown}</td>", cell_class(t, cell));
        }
        out += "</tr>\n";
    }
    out += "</tbody></table>\n";
    for n in marks.notes_of(t) {
        out += &format!("<p class=\"note\">{}</p>\n", html_words(&n));
    }
    out
}

/// Whether scaling table `t` (one with a plot) holds nothing its family's table does not:
/// every value of a platform is the value of some row of the family table in the same
/// column, with no per-cell x (a load level's delivered bandwidth is new), and every
/// missing reason is one the family table gives too. The printed report shows such a
/// table as its plot only.
pub fn repeats_family_rows(c: &Comparison, t: &Table) -> bool {
    let Some(family) =
        t.id.strip_prefix("scaling:")
            .and_then(|rest| rest.split(':').next())
    else {
        return false;
    };
    if t.plot.is_none() {
        return false;
    }
    let Some(f) = c.tables.iter().find(|f| f.id == format!("family:{family}")) else {
        return false;
    };
    let n = c.platforms.len();
    t.rows.iter().all(|r| {
        r.cells.iter().take(n).enumerate().all(|(k, cell)| {
            if cell.x.is_some() {
                return false;
            }
            match (cell.value, &cell.missing) {
                (Some(v), _) => f.rows.iter().any(|fr| {
                    fr.unit == r.unit && fr.cells.get(k).and_then(|fc| fc.value) == Some(v)
                }),
                (None, Some(why)) => {
                    why.starts_with("not run")
                        || f.rows.iter().any(|fr| {
                            fr.cells.get(k).and_then(|fc| fc.missing.as_ref()) == Some(why)
                        })
                }
                (None, None) => false,
            }
        })
    })
}

/// HTML: one self-contained file; every string from a result file is escaped; plots are SVG
/// generated here (plotters), inlined. Order for print: the machines in one line each and the
/// headline with its footnotes (page 1), the findings, the machine details, the plots as small
/// multiples (figures of up to four panels a row, [`crate::plot::report_figures`]), then the
/// detail tables of each family, a scaling table that only repeats rows of its family table
/// left to its plot ([`repeats_family_rows`]).
pub fn html(c: &Comparison, plots: &[(String, String)]) -> String {
    let mut out = crate::html::page_start(
        "hwsurvey comparison",
        &format!(
            "hwsurvey comparison: {}",
            html_escape(&c.platforms.join(" | "))
        ),
    );
    let mut marks = Marks::of(c);
    if !c
        .tables
        .iter()
        .any(|t| t.id == crate::headline::HEADLINE_ID)
    {
        for f in &c.flags {
            out += &format!("<p class=\"flag\">{}</p>\n", html_escape(f));
            marks.printed(f);
        }
    }
    let top: Vec<&Table> = c.tables.iter().filter(|t| on_top(t)).collect();
    if !top.is_empty() {
        out += "<section class=\"first\">\n";
        out += &about_html(c);
        for t in top {
            let class = if t.id == crate::headline::HEADLINE_ID {
                "headline"
            } else {
                "glance"
            };
            out += &html_table(t, &mut marks, class);
        }
        out += "</section>\n";
    }
    for t in c.tables.iter().filter(|t| before_plots(t)) {
        // the summaries are figure tables: one line a row, as the detail tables
        let compact = if t.id == "machine" || t.id == "qualify" {
            ""
        } else {
            " detail"
        };
        out += &format!("<section class=\"{}{compact}\">\n", html_escape(&t.id));
        out += &html_table(t, &mut marks, "");
        out += "</section>\n";
    }
    if !plots.is_empty() {
        out += "<section class=\"plots\"><h2>Plots</h2>\n";
        // named once per view: "mem.latency latency vs working set" for its ten page modes
        let repeated: Vec<&Table> = c
            .tables
            .iter()
            .filter(|t| repeats_family_rows(c, t))
            .collect();
        let mut views: Vec<&str> = Vec::new();
        for t in &repeated {
            let view = t.title.split(" (").next().unwrap_or(&t.title);
            if !views.contains(&view) {
                views.push(view);
            }
        }
        out += "<div class=\"plots\">\n";
        for (title, svg) in plots {
            out += &format!(
                "<figure><figcaption>{}</figcaption>{svg}</figure>\n",
                html_escape(title)
            );
        }
        out += "</div>\n";
        if !repeated.is_empty() {
            out += &format!(
                "<p class=\"note\">The tables behind {} of these plots repeat rows of the family tables below and are not printed again (every other format has them): {}.</p>\n",
                repeated.len(),
                html_escape(&views.join("; "))
            );
        }
        out += "</section>\n";
    }
    // every missing reason of the detail tables is a footnote: one line per row
    marks.footnote_all();
    for t in c
        .tables
        .iter()
        .filter(|t| !on_top(t) && !before_plots(t))
        .filter(|t| !repeats_family_rows(c, t))
    {
        out += "<section class=\"detail\">\n";
        out += &html_table(t, &mut marks, "");
        out += "</section>\n";
    }
    out += "</body></html>\n";
    hwsurvey_model::text::html::document(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::figure_html;

    #[test]
    fn a_figure_cell_breaks_only_before_its_note() {
        assert_eq!(
            figure_html("29.5 GB/s (CV 4.2%)"),
            "29.5&nbsp;GB/s (CV&nbsp;4.2%)"
        );
        assert_eq!(figure_html("0.15x (-85% worse)"), "0.15x (-85%&nbsp;worse)");
        assert_eq!(figure_html("— [33]"), "—&nbsp;[33]");
        assert_eq!(
            figure_html("<b> (x & y)"),
            "&lt;b&gt; (x&nbsp;&amp;&nbsp;y)"
        );
    }
}

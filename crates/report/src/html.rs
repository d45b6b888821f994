//! The pieces every HTML page of hwsurvey shares (the comparison report, [`crate::render::html`],
//! and the fleet report, `hwsurvey_fleet::render::html`), so that both look alike and escape
//! alike: the style sheet ([`CSS`]), the one escaper ([`html_escape`]), text kept in whole words
//! ([`html_words`], [`html_cell`]) and the page's head ([`page_start`]). The terminal tables'
//! one fitter is [`crate::terminal::boxed`].

/// Escapes text for HTML: the one escaper of every HTML page ([`hwsurvey_model::text::html_escape`]:
/// markup characters as references, control and bidirectional characters written visibly).
pub use hwsurvey_model::text::html_escape;

/// Tokens (runs without a space) longer than this many characters get a break opportunity
/// after each `/` in an HTML cell ([`html_cell`]): a path, a test id. Shorter ones (`GB/s`,
/// `1/2/2`) stay whole.
const BREAK_TOKEN_CHARS: usize = 24;

/// Text for HTML, escaped ([`html_escape`]), its words whole: a word with a hyphen inside (a
/// host name, an option, `hugetlb-2MiB`), where a browser would break after the hyphen, in a
/// `span.w` (`white-space: nowrap`, [`CSS`]). For row and column headings and notes; table
/// cells add break opportunities in long paths ([`html_cell`]).
pub fn html_words(s: &str) -> String {
    s.split(' ').map(whole_word).collect::<Vec<_>>().join(" ")
}

/// `w` escaped, in a `span.w` when a hyphen inside it follows a letter or digit (where a
/// browser may break: `datacenter-frankfurt`, `hugetlb-2MiB`; not a sign: `-30.0 %`), or
/// when it is an option (`--destructive`, `-o`: Chromium printed `--` at a line's end and
/// `destructive` on the next).
fn whole_word(w: &str) -> String {
    let b = w.as_bytes();
    let inner_hyphen = b
        .windows(3)
        .any(|t| t[0].is_ascii_alphanumeric() && t[1] == b'-');
    let option = b.len() > 2 && b[0] == b'-' && (b[1] == b'-' || b[1].is_ascii_alphabetic());
    if inner_hyphen || option {
        format!("<span class=\"w\">{}</span>", html_escape(w))
    } else {
        html_escape(w)
    }
}

/// Text of an HTML table cell, laid out by the rule of the terminal's wrapping layer
/// ([`crate::wrap`]): breaks at spaces, a long path or test id also after a `/` (`<wbr>`),
/// never inside a word ([`html_words`]). The style sheet ([`CSS`]) lets a browser break a
/// word only when it alone is wider than the page (`overflow-wrap: break-word`, which unlike
/// `anywhere` never narrows a column below its longest word: fleet's findings table printed
/// a host name as `node2.rack12.d` / `atacenter-` / `frankfurt.exampl` / `e.com`).
pub fn html_cell(s: &str) -> String {
    s.split(' ')
        .map(|token| {
            if token.chars().count() > BREAK_TOKEN_CHARS && token.contains('/') {
                let parts: Vec<String> = token.split('/').map(whole_word).collect();
                parts.join("/<wbr>")
            } else {
                whole_word(token)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The style sheet of the HTML reports (inlined in each page): tables, verdict cells
/// (`td.fail`, `td.warn`, `td.pass`), better / worse figures, notes and print layout. Shared
/// with the fleet report (crates/fleet) so both look alike.
pub const CSS: &str = "body{font-family:sans-serif;font-size:9pt;margin:1.5em;color:#111}\
h1{font-size:14pt;margin:0 0 .3em}h2{font-size:11pt;margin:.8em 0 .2em}\
table{border-collapse:collapse;margin:.3em 0;max-width:100%}th,td{border:1px solid #999;padding:1px 4px;text-align:left;vertical-align:top}td{overflow-wrap:break-word}span.w{white-space:nowrap}\
th{background:#eee}td.missing{color:#888;font-style:italic}td.num{text-align:right}\
.note{font-size:7.5pt;color:#444;margin:.1em 0}.flag{color:#a00;font-weight:bold}\
.better{color:#060}.worse{color:#a00}.noise{color:#666}.nc{color:#777;font-style:italic}\
td.fail{background:#f8d0d0;color:#800;font-weight:bold}td.warn{background:#fbe9c0;color:#7a4a00;font-weight:bold}td.pass{color:#060}\
table.headline td{text-align:right;white-space:nowrap}table.headline{font-size:8.5pt}table.glance td{font-size:8pt}\
section.detail table{font-size:7.5pt}section.detail h2{font-size:9.5pt}section.detail td{padding:0 3px 1px}table.oneline td{white-space:nowrap}section.detail th{padding:0 3px}\
td.all .note{display:inline}\
div.plots{display:flex;flex-wrap:wrap;gap:6px 8px;align-items:flex-start}\
div.plots figure{margin:0;break-inside:avoid;page-break-inside:avoid}figcaption{font-size:8pt;font-weight:bold;color:#222}\
svg{max-width:100%;height:auto}h2{break-after:avoid;page-break-after:avoid}\
section.first{break-after:page;page-break-after:always}\
ul.about,ul.verdicts{margin:.2em 0;padding-left:1.4em}p.about,ul.about{font-size:8pt;color:#333;margin:.1em 0}ul.verdicts{font-size:9pt}\
@page{size:A4;margin:10mm 10mm 12mm;@bottom-center{content:\"page \" counter(page) \" of \" counter(pages);font-size:8pt;color:#444}}\
@media print{body{margin:0}table{page-break-inside:auto;width:calc(100% - 1px)}tr{page-break-inside:avoid}}";

/// The start of a self-contained page (no script, no external resource): the doctype, the
/// head with `title` and the inlined style sheet ([`CSS`]), and the first heading, `heading`
/// as given (the caller escapes what comes from a file).
pub fn page_start(title: &str, heading: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>{CSS}</style></head><body>\n<h1>{heading}</h1>\n"
    )
}

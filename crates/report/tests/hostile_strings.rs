//! Hostile strings in result files: a 1 MiB hostname with ESC, BEL, NUL and newlines, a
//! kernel string with a terminal escape, a CPU model with bidi and format characters, a label
//! that is a spreadsheet formula. Every format stays bounded, no format (terminal, Markdown,
//! CSV, JSON, HTML) carries a raw control, bidi or format character, every SVG plot is
//! well-formed XML, and the CSV neutralises formula cells (OWASP: a leading `'`).

use hwsurvey_model::Probed;
use hwsurvey_report::{compare, label_candidates, plot, render, Format, Input};
use hwsurvey_result::ResultFile;
use hwsurvey_testkit::report_sample::three;

/// 1 MiB of hostname: terminal control sequences, BEL, NUL, newlines, XML specials.
fn hostile_hostname() -> String {
    let unit = "evil\u{1b}[2J\u{7}\0<&>\n\u{202e}\u{fffe}\r\t";
    let mut s = String::new();
    while s.len() < (1 << 20) {
        s.push_str(unit);
    }
    s
}

fn hostile_files() -> Vec<ResultFile> {
    let mut files = three();
    files[0].environment.hostname = Probed::Known(hostile_hostname());
    files[1].environment.kernel_release = Probed::Known("6.1\u{1b}]0;pwned\u{7}".into());
    // a CPU model with bidi and format characters and a CR (compare -o x.json once
    // wrote them raw)
    files[2].machine.cpu.identity.model_name =
        Some("EPYC\u{202e}gpj.exe\u{2066}\r\u{200f}\u{feff}\u{85}x".into());
    files
}

fn inputs(files: Vec<ResultFile>, labels: &[&str]) -> Vec<Input> {
    files
        .into_iter()
        .enumerate()
        .map(|(k, file)| Input {
            label: labels
                .get(k)
                .map(|l| l.to_string())
                // the longest default label: every part (hostname, arch, kernel) escaped
                .unwrap_or_else(|| label_candidates(&file).pop().unwrap()),
            file,
        })
        .collect()
}

/// What each format writes for the three clean sample files, bytes.
fn clean_sizes() -> Vec<(Format, usize)> {
    let c = compare(&inputs(three(), &[]), None, false).unwrap();
    let plots = plot::all_plots(&c);
    [
        Format::Terminal,
        Format::Markdown,
        Format::Csv,
        Format::Json,
        Format::Html,
    ]
    .into_iter()
    .map(|f| (f, render(&c, f, &plots).len()))
    .collect()
}

fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| hwsurvey_model::text::is_unsafe(*c) && *c != '\n')
        .collect()
}

#[test]
fn a_megabyte_hostname_keeps_every_format_bounded_and_clean() {
    let c = compare(&inputs(hostile_files(), &[]), None, false).unwrap();
    let plots = plot::all_plots(&c);
    for (format, clean) in clean_sizes() {
        let text = render(&c, format, &plots);
        // the 1 MiB value shows as at most a few hundred characters per place it appears;
        // before, terminal compare wrote 629 MB for it
        assert!(
            text.len() < clean * 2 + 20_000,
            "{format:?}: {} bytes against {clean} for clean files",
            text.len()
        );
        // every format, JSON included (its rule writes them as \u escapes)
        assert!(
            raw_controls(&text).is_empty(),
            "{format:?}: raw control characters {:?}",
            raw_controls(&text)
        );
    }
    // the label says what it is: the start and end of the hostname, and its length
    assert!(
        c.platforms[0].starts_with("evil\\u{1b}[2J\\u{7}\\0<&>"),
        "{}",
        c.platforms[0]
    );
    let len = format!("({} bytes)", hostile_hostname().len());
    assert!(c.platforms[0].contains(&len), "{}", c.platforms[0]);
    assert!(
        c.platforms[1].ends_with("6.1\\u{1b}]0;pwned\\u{7}"),
        "{}",
        c.platforms[1]
    );
}

#[test]
fn every_svg_plot_is_well_formed_xml() {
    let c = compare(&inputs(hostile_files(), &[]), None, false).unwrap();
    let plots = plot::all_plots(&c);
    assert!(!plots.is_empty());
    for (title, svg) in plots.iter().chain(plot::plot_files(&c).iter()) {
        if let Err(e) = roxmltree::Document::parse(svg) {
            panic!("{title}: not XML: {e}");
        }
    }
    for (name, _) in plot::plot_files(&c) {
        assert!(name.len() < 255, "{name}");
    }
}

#[test]
fn csv_neutralises_formula_cells_but_not_numbers() {
    let labels = [
        "=HYPERLINK(\"http://x\",\"y\")",
        "+cmd|' /C calc'!A0",
        "@SUM(1)",
    ];
    let c = compare(&inputs(three(), &labels), None, false).unwrap();
    let csv = render(&c, Format::Csv, &[]);
    let mut formula_cells = 0;
    for line in csv.lines().skip(1) {
        for cell in split_csv(line) {
            if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
                assert!(
                    cell.parse::<f64>().is_ok(),
                    "a formula-like text cell reached the CSV: {cell:?} in {line}"
                );
            }
            if cell.starts_with("'=HYPERLINK") || cell.starts_with("'+cmd") {
                formula_cells += 1;
            }
        }
    }
    assert!(
        formula_cells > 10,
        "{formula_cells} neutralised label cells"
    );
    // negative numbers stay numbers
    assert_eq!(hwsurvey_report::render::csv_field("-0.5"), "-0.5");
    assert_eq!(
        hwsurvey_report::render::csv_field("-12% worse"),
        "'-12% worse"
    );
    assert_eq!(hwsurvey_report::render::csv_field("=1+2,3"), "\"'=1+2,3\"");
}

/// The fields of one CSV line (RFC 4180 quoting).
fn split_csv(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        match (ch, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[test]
fn label_errors_quote_a_bounded_value() {
    let big = "x".repeat(1 << 20);
    let e = compare(&inputs(three(), &[]), Some(&big), false).unwrap_err();
    let text = e.to_string();
    assert!(text.len() < 2000, "{} bytes", text.len());
    assert!(text.contains("(1048576 bytes)"), "{text}");
}

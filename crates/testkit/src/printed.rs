//! What a person reads on paper: an HTML report printed to PDF by the project's print script
//! (`scripts/html-to-pdf-png`: headless chromium, then poppler), its text read back with
//! `pdftotext -layout`, and the words of the page checked against the words printed.

use std::path::Path;

/// The commands [`print`] calls (through the script and itself).
pub const TOOLS: [&str; 5] = [
    "chromium",
    "pdftoppm",
    "pdfinfo",
    "pdftotext",
    "convert-im6.q16",
];

/// Prints `html` to `pdf` with `scripts/html-to-pdf-png` (its PNG pages beside it, named after
/// the PDF) and returns the PDF's text as `pdftotext -layout` lays it out; `None` when a
/// command of [`TOOLS`] is missing (a SKIPPED line printed by [`crate::tool`]).
///
/// Panics when the script or pdftotext fails.
pub fn print(html: &Path, pdf: &Path) -> Option<String> {
    if !TOOLS.iter().all(|t| crate::tool(t)) {
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/html-to-pdf-png");
    let pages = pdf.with_extension("");
    let out = std::process::Command::new(script)
        .arg(html)
        .arg(pdf)
        .arg(&pages)
        .output()
        .expect("run scripts/html-to-pdf-png");
    assert!(
        out.status.success(),
        "html-to-pdf-png {}: {}",
        html.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::process::Command::new("pdftotext")
        .arg("-layout")
        .arg(pdf)
        .arg("-")
        .output()
        .expect("run pdftotext");
    assert!(text.status.success(), "pdftotext {}", pdf.display());
    Some(String::from_utf8_lossy(&text.stdout).into_owned())
}

/// The words of an HTML page as a reader sees them: the text of `<body>` (SVG text
/// included), tags out (`<span>` and `<wbr>` joined to their neighbours, which they are part
/// of), the escapes hwsurvey writes (`&amp;` `&lt;` `&gt;` `&quot;` `&#39;` `&nbsp;`) read
/// back, split at white space and `/` (a path may break after a `/`, and pdftotext closes up
/// `1 / 2 / 2`).
pub fn html_words(html: &str) -> Vec<String> {
    let body = html.split_once("<body>").map_or(html, |(_, b)| b);
    let mut text = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('>') else {
            break;
        };
        let tag = &rest[open + 1..open + close];
        let name = tag.trim_start_matches('/');
        if !(name.starts_with("span") || name.starts_with("wbr")) {
            text.push(' ');
        }
        rest = &rest[open + close + 1..];
    }
    let text = text
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    words(&text)
}

/// `text` split at white space and `/`.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == '/')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// What printing lost or broke: `(lost, split)`, the words of `html` that are nowhere in
/// `printed` (a cell cut at the page's edge, a clipped axis title) and the words of `printed`
/// that are no word of `html` (a word broken across lines, `node2.rack12.d` / `atacenter-`),
/// page numbers (`page 2 of 11`) aside.
pub fn lost_or_split(html: &str, printed: &str) -> (Vec<String>, Vec<String>) {
    use std::collections::BTreeSet;
    let page: BTreeSet<String> = html_words(html).into_iter().collect();
    let paper: BTreeSet<String> = words(printed).into_iter().collect();
    let lost = page.difference(&paper).cloned().collect();
    let split = paper
        .difference(&page)
        .filter(|w| !(w.as_str() == "page" || w.as_str() == "of" || w.parse::<u32>().is_ok()))
        .cloned()
        .collect();
    (lost, split)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_split_or_lost_in_print_is_found() {
        let html = "<html><head><title>x</title></head><body><p>node2.rack12.datacenter-<span \
                    class=\"w\">frankfurt</span>.example.com at /sys/<wbr>firmware &amp; \
                    1&nbsp;GB/s</p><svg><text>x: load-to-use latency</text></svg></body></html>";
        let printed = "node2.rack12.datacenter-frankfurt.example.com at /sys/\nfirmware & 1 \
                       GB/s\nx: load-to-use late\npage 1 of 2";
        let (lost, split) = lost_or_split(html, printed);
        assert_eq!(lost, ["latency"]);
        assert_eq!(split, ["late"]);
        let broken = "node2.rack12.d\natacenter-frankfurt.example.com at";
        let (_, split) = lost_or_split(html, broken);
        assert_eq!(split, ["atacenter-frankfurt.example.com", "node2.rack12.d"]);
    }
}

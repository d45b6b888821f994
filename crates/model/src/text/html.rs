//! The HTML rule: values in element content and attribute values ([`escape`]) with `&`,
//! `<`, `>`, `"` and `'` as character references and every [`super::is_unsafe`] character
//! (ESC, BEL, NUL, CR, the C1 controls, the bidirectional and other format characters)
//! written visibly as its Rust escape (`\u{1b}`, `\0`, `\r`, `\u{202e}`), never raw; newlines
//! and tabs, white space in HTML, are kept. A whole page ([`document`]) carries no unsafe
//! character but newlines and tabs.

use std::borrow::Cow;

/// The one escaper of every HTML page hwsurvey writes (compare's and fleet's reports).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c => super::push_escaped(&mut out, c, false),
        }
    }
    out
}

/// An HTML page under the rule: any [`super::is_unsafe`] character left but newline and tab
/// escaped (borrowed when clean).
pub fn document(text: &str) -> Cow<'_, str> {
    super::escape_controls(text, "\n\t")
}

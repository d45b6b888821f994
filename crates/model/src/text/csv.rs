//! The CSV rule (RFC 4180, with OWASP's rule against CSV injection): in a field ([`field`])
//! every [`super::is_unsafe`] character but newline is written as its Rust escape (`\r`,
//! `\u{1b}`, `\u{202e}`); a text starting with `=`, `+`, `-` or `@` that is no number gets a
//! leading `'` (a spreadsheet shows it as text instead of running it as a formula); a field
//! holding `,`, `"` or a newline is quoted. A whole document ([`document`]) carries no unsafe
//! character but newlines.

use std::borrow::Cow;

/// One CSV field under the rule.
pub fn field(s: &str) -> String {
    let s = super::escape_controls(s, "\n");
    let formula_like = s.starts_with(['=', '+', '-', '@']);
    let s = if formula_like && s.trim().parse::<f64>().is_err() {
        format!("'{s}")
    } else {
        s.into_owned()
    };
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// A CSV document under the rule: any [`super::is_unsafe`] character left but newline escaped
/// (borrowed when clean).
pub fn document(text: &str) -> Cow<'_, str> {
    super::escape_controls(text, "\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn fields_are_quoted_neutralised_and_escaped() {
        assert_eq!(super::field("=1+2"), "'=1+2");
        assert_eq!(super::field("-0.5"), "-0.5");
        assert_eq!(super::field("a,b"), "\"a,b\"");
        assert_eq!(super::field("a\"b"), "\"a\"\"b\"");
        assert_eq!(super::field("a\nb"), "\"a\nb\"");
        assert_eq!(
            super::field("a\rb\u{1b}[2J\u{202e}"),
            "a\\rb\\u{1b}[2J\\u{202e}"
        );
        // a leading CR or tab is text now, not a formula's start
        assert_eq!(super::field("\t=x"), "\\t=x");
    }
}

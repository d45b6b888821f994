//! The Markdown rule: a value in a cell or a line ([`cell`]) has its [`super::is_unsafe`]
//! characters written as Rust escapes (`\u{1b}`, shown as text, `\r`, `\u{202e}`), line
//! breaks as spaces, then `\` and `|` escaped and `<`, `>` as HTML entities (no tag or
//! autolink takes effect); and a whole document ([`document`]) carries no unsafe character
//! but newlines, whatever a renderer put in it.

use std::borrow::Cow;

/// Text for one cell of a Markdown pipe table, or one line of a Markdown document.
pub fn cell(s: &str) -> String {
    super::escape_controls(s, "\n")
        .replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\n', " ")
}

/// A Markdown document under the rule: any [`super::is_unsafe`] character left but newline
/// escaped (borrowed when clean).
pub fn document(text: &str) -> Cow<'_, str> {
    super::escape_controls(text, "\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn cells_show_controls_and_bidi_as_text() {
        assert_eq!(
            super::cell("a|b<c>\\d\u{1b}[31m\u{7}\r\u{202e}x\ny"),
            "a\\|b&lt;c&gt;\\\\d\\\\u{1b}[31m\\\\u{7}\\\\r\\\\u{202e}x y"
        );
        assert_eq!(super::document("# t\n\u{1b}x\t"), "# t\n\\u{1b}x\\t");
    }
}

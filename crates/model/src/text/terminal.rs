//! The terminal rule: every [`super::is_unsafe`] character but newline and tab written as its
//! Rust escape (`\u{1b}`, `\r`, `\u{202e}`), visibly; for text read on a terminal, whether
//! printed there or written to a file (`compare --format terminal -o`, `fleet -o`).

use std::borrow::Cow;

/// `text` under the terminal rule (borrowed when clean).
pub fn document(text: &str) -> Cow<'_, str> {
    super::escape_controls(text, "\n\t")
}

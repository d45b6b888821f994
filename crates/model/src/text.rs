//! Strings from files (hostnames, kernel strings, cpuinfo models, labels, bad values) made safe
//! to show: bounded in length and with control characters escaped.
//!
//! A value read from a capture or a result file can be a megabyte long and hold ESC, BEL, NUL
//! or newlines. Shown raw, it drives the terminal (ESC sequences), breaks one-line error
//! messages into many lines, makes a table as wide as the value on every row, and makes XML
//! invalid (XML 1.0 allows no C0 control other than tab, LF and CR, and neither U+FFFE nor
//! U+FFFF). Everything here is pure: `&str` in, `String` or `Display` out.
//!
//! - [`quote`]: a bad value inside an error message, `"abc…xyz" (1048576 bytes)`, at most
//!   [`QUOTE_MAX_CHARS`] characters of it.
//! - [`one_line`]: a field shown in a table or a line of text, at most N characters, control
//!   characters escaped.
//! - [`escape_controls`]: control characters escaped, length kept (terminal output as a whole).
//!
//! One escaping rule per format, applied by every renderer of that format wherever it writes
//! (a file or a terminal): [`terminal`], [`markdown`], [`csv`], [`json`], [`html`].

use std::borrow::Cow;
use std::fmt;

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod terminal;

pub use html::escape as html_escape;
pub use markdown::cell as markdown_cell;

/// Characters of a bad value an error message quotes at most.
pub const QUOTE_MAX_CHARS: usize = 48;

/// Whether `c` must not reach a terminal or an XML document raw: the C0 controls, DEL, the C1
/// controls (Unicode category Cc); the bidirectional overrides, embeddings, isolates and marks
/// (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C: they reorder what is shown, "Trojan
/// Source") and the other format characters of category Cf that show nothing (zero-width
/// space and joiners U+200B–U+200D, word joiner and invisible operators U+2060–U+2064,
/// deprecated format controls U+206A–U+206F, the byte order mark U+FEFF, soft hyphen U+00AD,
/// Arabic number signs U+0600–U+0605, U+06DD, U+070F, U+08E2, Mongolian vowel separator
/// U+180E, interlinear annotation U+FFF9–U+FFFB, the tag characters U+E0001, U+E0020–U+E007F);
/// the line and paragraph separators U+2028/U+2029 (line breaks to some readers); and
/// U+FFFE / U+FFFF (not XML characters).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{0600}'..='\u{0605}'
                | '\u{061C}'
                | '\u{06DD}'
                | '\u{070F}'
                | '\u{08E2}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{FFFE}'
                | '\u{FFFF}'
                | '\u{E0001}'
                | '\u{E0020}'..='\u{E007F}'
        )
}

/// Pushes `c` as a Rust escape (`\n`, `\t`, `\r`, `\0`, `\u{1b}`) when [`is_unsafe`], else as
/// itself; inside quotes (`quoted`), `"` and `\` are escaped too.
pub(crate) fn push_escaped(out: &mut String, c: char, quoted: bool) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        '\0' => out.push_str("\\0"),
        '"' | '\\' if quoted => {
            out.push('\\');
            out.push(c);
        }
        c if is_unsafe(c) => out.extend(c.escape_unicode()),
        c => out.push(c),
    }
}

/// [`push_escaped`] of one character, as a string.
fn escaped(c: char, quoted: bool) -> String {
    let mut s = String::new();
    push_escaped(&mut s, c, quoted);
    s
}

/// `s` with every [`is_unsafe`] character written as its Rust escape (`\u{1b}`, `\n`, `\0`),
/// except the characters in `keep` (`"\n\t"` for multi-line terminal output). Borrowed when
/// nothing needed escaping.
pub fn escape_controls<'a>(s: &'a str, keep: &str) -> Cow<'a, str> {
    if !s.chars().any(|c| is_unsafe(c) && !keep.contains(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if keep.contains(c) {
            out.push(c);
        } else {
            push_escaped(&mut out, c, false);
        }
    }
    Cow::Owned(out)
}

/// A path for terminal output and one-line messages: its control characters escaped as
/// [`escape_controls`] does (a newline in a file name is `\n`, never a line break), and bytes
/// that are not UTF-8 as `\xNN`. Borrowed when it is clean UTF-8.
pub fn path(p: &std::path::Path) -> Cow<'_, str> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = p.as_os_str().as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(s) => escape_controls(s, ""),
        Err(_) => {
            let mut out = String::with_capacity(bytes.len() + 8);
            for chunk in bytes.utf8_chunks() {
                out.push_str(&escape_controls(chunk.valid(), ""));
                for b in chunk.invalid() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            Cow::Owned(out)
        }
    }
}

/// `s` for one line of a table or message: [`is_unsafe`] characters escaped (newlines too),
/// and when longer than `max_chars` characters (counted after escaping), its first and last
/// characters around `…` plus its length: `aaaa…zzzz (1048576 bytes)`. The result has at most
/// `max_chars` + 24 characters. Borrowed when `s` is short and clean.
pub fn one_line(s: &str, max_chars: usize) -> Cow<'_, str> {
    let escaped = escape_controls(s, "");
    if escaped.chars().count() <= max_chars {
        return escaped;
    }
    let head_n = max_chars.div_ceil(2);
    let tail_n = max_chars - head_n;
    let head: String = escaped.chars().take(head_n).collect();
    let mut tail: Vec<char> = escaped.chars().rev().take(tail_n).collect();
    tail.reverse();
    let tail: String = tail.into_iter().collect();
    Cow::Owned(format!("{head}…{tail} ({} bytes)", s.len()))
}

/// A bad value quoted in an error message, bounded: `"10 2x"`, or for a long one
/// `"0-1,0-1,0-1,0-1,0-1,0-1,…-1,0-1" (1048576 bytes)`. Control characters are escaped as
/// `{:?}` escapes them; quotes and backslashes inside are escaped too, so the quoted text
/// reads back. At most [`QUOTE_MAX_CHARS`] characters of the value are shown.
pub fn quote(s: &str) -> Quoted<'_> {
    Quoted(s)
}

/// The [`fmt::Display`] of [`quote`].
#[derive(Clone, Copy)]
pub struct Quoted<'a>(&'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        let total: usize = s.chars().map(|c| escaped(c, true).chars().count()).sum();
        if total <= QUOTE_MAX_CHARS {
            let mut all = String::with_capacity(s.len() + 2);
            s.chars().for_each(|c| push_escaped(&mut all, c, true));
            return write!(f, "\"{all}\"");
        }
        // head and tail, whole escapes only, each at most half the quota
        let half = QUOTE_MAX_CHARS / 2;
        let take = |chars: &mut dyn Iterator<Item = char>| {
            let mut parts = Vec::new();
            let mut len = 0;
            for c in chars {
                let e = escaped(c, true);
                len += e.chars().count();
                if len > half {
                    break;
                }
                parts.push(e);
            }
            parts
        };
        let head = take(&mut s.chars()).concat();
        let mut tail = take(&mut s.chars().rev());
        tail.reverse();
        write!(f, "\"{head}…{}\" ({} bytes)", tail.concat(), s.len())
    }
}

impl fmt::Debug for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `s` shortened to at most `max_bytes` bytes at a character boundary, with `…` and the full
/// length appended when cut; for text already free of control characters (serde's messages).
pub fn shorten(s: &str, max_bytes: usize) -> Cow<'_, str> {
    if s.len() <= max_bytes {
        return Cow::Borrowed(s);
    }
    let mut end = max_bytes;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}… ({} bytes)", &s[..end], s.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_quoted_as_debug_does() {
        assert_eq!(quote("10 2x").to_string(), "\"10 2x\"");
        assert_eq!(quote("a\u{1b}[2Jb").to_string(), "\"a\\u{1b}[2Jb\"");
        assert_eq!(quote("say \"hi\"").to_string(), "\"say \\\"hi\\\"\"");
        assert_eq!(quote("").to_string(), "\"\"");
    }

    #[test]
    fn long_values_show_head_tail_and_length() {
        let big = "0-1,".repeat(262_144);
        let q = quote(&big).to_string();
        assert_eq!(
            q,
            "\"0-1,0-1,0-1,0-1,0-1,0-1,…0-1,0-1,0-1,0-1,0-1,0-1,\" (1048576 bytes)"
        );
        // newlines in a megabyte value: one line, bounded
        let lines = "x\n".repeat(300_000);
        let q = quote(&lines).to_string();
        assert!(!q.contains('\n'), "{q}");
        assert!(q.chars().count() < QUOTE_MAX_CHARS + 30, "{q}");
        assert!(q.ends_with("(600000 bytes)"), "{q}");
    }

    #[test]
    fn paths_are_shown_on_one_line() {
        use std::os::unix::ffi::OsStrExt;
        let p = std::path::Path::new("/dev/disk/by-id/x\nhwsurvey: warning: fine\u{1b}[2J");
        assert_eq!(
            path(p),
            "/dev/disk/by-id/x\\nhwsurvey: warning: fine\\u{1b}[2J"
        );
        assert!(matches!(
            path(std::path::Path::new("/dev/sdb")),
            Cow::Borrowed(_)
        ));
        let raw = std::ffi::OsStr::from_bytes(b"/tmp/a\xff\nb");
        assert_eq!(path(std::path::Path::new(raw)), "/tmp/a\\xff\\nb");
    }

    #[test]
    fn one_line_escapes_and_bounds() {
        assert_eq!(one_line("db-01", 64), "db-01");
        assert!(matches!(one_line("db-01", 64), Cow::Borrowed(_)));
        assert_eq!(one_line("a\u{7}b\0c\nd", 64), "a\\u{7}b\\0c\\nd");
        assert_eq!(one_line("x\u{202E}y", 64), "x\\u{202e}y");
        let host = "h".repeat(1 << 20);
        let shown = one_line(&host, 64);
        assert_eq!(
            shown,
            format!("{}…{} (1048576 bytes)", "h".repeat(32), "h".repeat(32))
        );
        assert!(shown.chars().count() <= 64 + 24);
        // multi-byte characters are never cut
        assert_eq!(one_line("ééé", 2), "é…é (6 bytes)");
    }

    #[test]
    fn html_escape_writes_controls_and_bidi_visibly() {
        let s = "a<b>&\"'\u{1b}[31m\u{7}\0\r\u{202e}\u{2066}\u{85}x\ny\tz";
        assert_eq!(
            html_escape(s),
            "a&lt;b&gt;&amp;&quot;&#39;\\u{1b}[31m\\u{7}\\0\\r\\u{202e}\\u{2066}\\u{85}x\ny\tz"
        );
        assert!(!html_escape(s)
            .chars()
            .any(|c| is_unsafe(c) && c != '\n' && c != '\t'));
    }

    #[test]
    fn escape_controls_keeps_what_is_asked() {
        assert_eq!(escape_controls("a\nb\u{1b}c\td", "\n\t"), "a\nb\\u{1b}c\td");
        assert!(matches!(escape_controls("plain\n", "\n"), Cow::Borrowed(_)));
        assert_eq!(escape_controls("\u{fffe}", ""), "\\u{fffe}");
        assert_eq!(escape_controls("\u{85}", ""), "\\u{85}");
    }

    #[test]
    fn shorten_cuts_at_a_char_boundary() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("aéb", 2), "a… (4 bytes)");
    }
}

/// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3; Fowler, Noll, Vo):
/// tells two texts apart (rules files, profiles), not a security hash.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod fnv_tests {
    use super::fnv1a64;

    #[test]
    fn fnv1a64_reference_values() {
        // FNV-1a 64 test vectors (Fowler/Noll/Vo reference): "", "a", "foobar".
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }
}

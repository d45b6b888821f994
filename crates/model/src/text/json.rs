//! The JSON rule: serde_json's pretty form (two spaces), with every character that must not
//! reach a terminal or a reader raw ([`super::is_unsafe`]: the C0 and C1 controls, DEL, the
//! bidirectional and other format characters, U+2028/U+2029, U+FFFE/U+FFFF) written inside
//! strings, keys included, as `\uXXXX` escapes (UTF-16 units, as JSON spells them). serde_json
//! escapes the C0 controls itself but writes DEL, C1 and U+202E raw; this escapes them too.
//! Nothing is lost: a reader gets the same strings back. Every JSON hwsurvey writes (result
//! files, `compare --json`, `fleet --json`, `qualify --format json`, `probe --json`, a
//! snapshot's `machine.json`) goes through here, to a file or a terminal alike.

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};

/// A [`PrettyFormatter`] writing [`super::is_unsafe`] characters of strings as `\uXXXX`.
struct Escaping<'a>(PrettyFormatter<'a>);

impl Formatter for Escaping<'_> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if super::is_unsafe(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write!(writer, "\\u{unit:04x}")?;
                }
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    // the pretty layout keeps its indentation state: every structural call goes to it
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// `value` as pretty JSON bytes under the JSON rule (see the module docs).
///
/// # Errors
/// serde_json's: a map with keys that are not strings, a `Serialize` that fails.
pub fn to_vec_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128);
    let mut ser =
        serde_json::Serializer::with_formatter(&mut out, Escaping(PrettyFormatter::new()));
    value.serialize(&mut ser)?;
    Ok(out)
}

/// `value` as a pretty JSON string under the JSON rule (see the module docs).
///
/// # Errors
/// As [`to_vec_pretty`].
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let bytes = to_vec_pretty(value)?;
    // serde_json writes UTF-8 only, and the escapes are ASCII
    Ok(String::from_utf8(bytes).expect("serde_json writes UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_characters_are_escaped_and_read_back_the_same() {
        let host = "web\u{1b}]0;x\u{7}\r\u{202e}\u{2066}\u{7f}\u{85}\u{200f}\u{feff}\u{2028}é😀";
        let v = serde_json::json!({ "hostname": host, host: 1 });
        let text = to_string_pretty(&v).unwrap();
        assert!(
            !text
                .chars()
                .any(|c| super::super::is_unsafe(c) && c != '\n'),
            "{text:?}"
        );
        assert!(
            text.contains("\\u202e\\u2066\\u007f\\u0085\\u200f\\ufeff\\u2028é😀"),
            "{text}"
        );
        assert!(text.contains("\\u001b]0;x\\u0007\\r"), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        // the layout is serde_json's pretty one
        let plain = serde_json::json!({"a": [1, {"b": "c"}], "d": {}});
        assert_eq!(
            to_string_pretty(&plain).unwrap(),
            serde_json::to_string_pretty(&plain).unwrap()
        );
    }
}

//! [`ParseError`]: a kernel file's text that is not what the kernel writes there, for the
//! parsers of this crate. The readers (`hwsurvey_probe`) turn it into their `ProbeError`.

use hwsurvey_model::Unknown;

/// The text of a kernel file is not what the kernel writes there: the file, what was
/// expected and the offending text (`/proc/meminfo: expected "<key>: <number> kB", got
/// "MemTotal: lots kB"`, as procfs's `ProcError` and ripgrep's `ParseSizeError` keep the input).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{path}: expected {expected}, got {}",
    hwsurvey_model::text::quote(text)
)]
pub struct ParseError {
    /// The kernel path (`/proc/meminfo`), or what the text is (`dmidecode text`).
    pub path: String,
    /// What the kernel writes there.
    pub expected: String,
    /// The offending text, trimmed to 200 characters.
    pub text: String,
}

impl ParseError {
    /// A [`ParseError`], the text trimmed and cut to 200 characters.
    pub fn new(path: impl Into<String>, expected: impl Into<String>, text: &str) -> Self {
        let mut text = text.trim().to_string();
        if text.chars().count() > 200 {
            text = text.chars().take(200).collect::<String>() + "...";
        }
        ParseError {
            path: path.into(),
            expected: expected.into(),
            text,
        }
    }
}

impl From<ParseError> for Unknown {
    fn from(e: ParseError) -> Self {
        Unknown::Invalid {
            path: e.path,
            detail: format!(
                "expected {}, got {}",
                e.expected,
                hwsurvey_model::text::quote(&e.text)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_file_and_keeps_the_text_short() {
        let e = ParseError::new(
            "/proc/meminfo",
            "\"<key>: <number> kB\"",
            " MemTotal: lots kB\n",
        );
        assert_eq!(
            e.to_string(),
            "/proc/meminfo: expected \"<key>: <number> kB\", got \"MemTotal: lots kB\""
        );
        let long = ParseError::new("/x", "y", &"z".repeat(300));
        assert_eq!(long.text.chars().count(), 203);
        assert_eq!(
            Unknown::from(e).to_string(),
            Unknown::Invalid {
                path: "/proc/meminfo".into(),
                detail: "expected \"<key>: <number> kB\", got \"MemTotal: lots kB\"".into()
            }
            .to_string()
        );
    }
}

//! Rules files: which rules run and with which thresholds.
//!
//! Format (TOML; `profiles/qualify.toml` is the default set and documents every key):
//!
//! ```toml
//! [rules."memory.triad_share"]
//! enabled = true        # optional, default true
//! min_share = 0.6       # parameters of the rule, checked against its kind and range
//! ```
//!
//! Rules not named in the file run with their built-in defaults. An unknown rule id, an unknown
//! key, a value of the wrong type or out of range is a [`ConfigError`] naming the file, the line
//! and the key.

use std::collections::BTreeMap;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::{rule, ParamDef, ParamKind, ParamValue, Params, RULES};

/// A rules file that cannot be used. Displayed as `FILE:LINE: key KEY: MESSAGE`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {}{message}", key.as_ref().map(|k| format!("key {}: ", hwsurvey_model::text::quote(k))).unwrap_or_default())]
pub struct ConfigError {
    /// The rules file.
    pub file: String,
    /// 1-based line of the offending key or value.
    pub line: usize,
    /// Dotted key (`rules."cpu.governor".expect`), when the error is about one.
    pub key: Option<String>,
    /// What is wrong and what was expected.
    pub message: String,
}

/// Largest rules file [`read_rules_file`] reads, bytes (1 MiB; `profiles/qualify.toml` is a
/// few KiB).
pub const MAX_RULES_BYTES: u64 = 1 << 20;

/// Reads the text of a rules file (`qualify --rules FILE`): a regular file (symlinks followed)
/// of at most [`MAX_RULES_BYTES`], UTF-8; see [`hwsurvey_model::files::read_regular_text`].
/// Parse it with [`RuleSet::parse`].
///
/// # Errors
/// [`hwsurvey_model::files::FileError`] naming the path: unreadable, not a regular file (a
/// FIFO is refused without blocking, `/dev/zero` without reading), too large, not UTF-8.
pub fn read_rules_file(path: &std::path::Path) -> Result<String, hwsurvey_model::files::FileError> {
    hwsurvey_model::files::read_regular_text(path, "a rules file", MAX_RULES_BYTES)
}

/// Which rules run, with resolved parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSet {
    /// Per rule id: `None` when disabled.
    rules: BTreeMap<&'static str, Option<Params>>,
}

fn parse_default(def: &ParamDef) -> ParamValue {
    // Built-in defaults are checked by a unit test; a broken one is a programming error
    // caught there, so here it degrades to a string rather than panicking.
    let text = format!("v = {}", def.default);
    match DeTable::parse(&text) {
        Ok(table) => match table.get_ref().get("v") {
            Some(v) => {
                convert(v.get_ref(), def.kind).unwrap_or(ParamValue::Str(def.default.into()))
            }
            None => ParamValue::Str(def.default.into()),
        },
        Err(_) => ParamValue::Str(def.default.into()),
    }
}

impl RuleSet {
    /// Every built-in rule enabled with its default parameters.
    pub fn builtin() -> Self {
        let rules = RULES
            .iter()
            .map(|def| {
                let params = def
                    .params
                    .iter()
                    .map(|p| (p.name.to_string(), parse_default(p)))
                    .collect();
                (def.id, Some(Params(params)))
            })
            .collect();
        RuleSet { rules }
    }

    /// Parameters of a rule, or `None` when it is disabled or unknown.
    pub fn params(&self, id: &str) -> Option<Params> {
        self.rules.get(id).cloned().flatten()
    }

    /// Built-in defaults overlaid with the rules file `text` (named `file` in errors).
    pub fn parse(file: &str, text: &str) -> Result<Self, ConfigError> {
        let line_of = |span: std::ops::Range<usize>| -> usize {
            text.get(..span.start)
                .map(|s| s.matches('\n').count() + 1)
                .unwrap_or(1)
        };
        let err =
            |span: std::ops::Range<usize>, key: Option<String>, message: String| ConfigError {
                file: file.to_string(),
                line: line_of(span),
                key,
                message,
            };
        let doc = DeTable::parse(text).map_err(|e| ConfigError {
            file: file.to_string(),
            line: e.span().map(&line_of).unwrap_or(1),
            key: None,
            message: format!("not valid TOML: {}", e.message()),
        })?;
        let mut set = RuleSet::builtin();
        for (key, value) in doc.get_ref().iter() {
            if key.get_ref() != "rules" {
                return Err(err(
                    key.span(),
                    Some(key.get_ref().to_string()),
                    "unknown key; expected only the [rules.\"<id>\"] tables".into(),
                ));
            }
            let DeValue::Table(rules) = value.get_ref() else {
                return Err(err(
                    value.span(),
                    Some("rules".into()),
                    format!("expected a table, got {}", value.get_ref().type_str()),
                ));
            };
            for (id, body) in rules.iter() {
                set.apply_rule(id, body, &err)?;
            }
        }
        Ok(set)
    }

    fn apply_rule(
        &mut self,
        id: &Spanned<std::borrow::Cow<'_, str>>,
        body: &Spanned<DeValue<'_>>,
        err: &dyn Fn(std::ops::Range<usize>, Option<String>, String) -> ConfigError,
    ) -> Result<(), ConfigError> {
        let rule_key = format!("rules.{:?}", id.get_ref().as_ref());
        let Some(def) = rule(id.get_ref()) else {
            let known: Vec<&str> = RULES.iter().map(|r| r.id).collect();
            return Err(err(
                id.span(),
                Some(rule_key),
                format!("unknown rule id; known ids: {}", known.join(", ")),
            ));
        };
        let DeValue::Table(table) = body.get_ref() else {
            return Err(err(
                body.span(),
                Some(rule_key),
                format!("expected a table, got {}", body.get_ref().type_str()),
            ));
        };
        let mut params = self.params(def.id).unwrap_or_else(|| {
            Params(
                def.params
                    .iter()
                    .map(|p| (p.name.to_string(), parse_default(p)))
                    .collect(),
            )
        });
        let mut enabled = true;
        for (key, value) in table.iter() {
            let full_key = format!("{rule_key}.{}", key.get_ref());
            if key.get_ref() == "enabled" {
                match value.get_ref() {
                    DeValue::Boolean(b) => enabled = *b,
                    other => {
                        return Err(err(
                            value.span(),
                            Some(full_key),
                            format!("expected true or false, got {}", other.type_str()),
                        ))
                    }
                }
                continue;
            }
            let Some(p) = def.params.iter().find(|p| p.name == key.get_ref()) else {
                let known: Vec<&str> = def.params.iter().map(|p| p.name).collect();
                return Err(err(
                    key.span(),
                    Some(full_key),
                    format!(
                        "unknown key for rule {}; expected enabled{}",
                        def.id,
                        known.iter().map(|k| format!(", {k}")).collect::<String>()
                    ),
                ));
            };
            let v = convert(value.get_ref(), p.kind)
                .map_err(|message| err(value.span(), Some(full_key), message))?;
            params.0.insert(p.name.to_string(), v);
        }
        self.rules.insert(def.id, enabled.then_some(params));
        Ok(())
    }
}

fn describe(kind: ParamKind) -> String {
    match kind {
        ParamKind::Bool => "true or false".into(),
        ParamKind::Int { min, max } => format!("an integer from {min} to {max}"),
        ParamKind::Float { min, max } => format!("a number from {min} to {max}"),
        ParamKind::Choice(words) => format!("one of {}", quoted(words)),
        ParamKind::Version => "a version string such as \"4.18\"".into(),
        ParamKind::VersionOr(word) => {
            format!("\"{word}\" or a version string such as \"4.18\"")
        }
        ParamKind::ChoiceList(words) => format!("a list of {}", quoted(words)),
    }
}

fn quoted(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn int_of(v: &DeValue<'_>) -> Option<i64> {
    match v {
        DeValue::Integer(i) => i64::from_str_radix(&i.as_str().replace('_', ""), i.radix()).ok(),
        _ => None,
    }
}

fn float_of(v: &DeValue<'_>) -> Option<f64> {
    match v {
        DeValue::Float(f) => f.as_str().replace('_', "").parse().ok(),
        DeValue::Integer(_) => int_of(v).map(|i| i as f64),
        _ => None,
    }
}

/// Parses a dotted version (`4.18`, `5.10.0`) into its numbers.
pub fn parse_version(text: &str) -> Option<Vec<u64>> {
    let nums: Option<Vec<u64>> = text.split('.').map(|p| p.parse().ok()).collect();
    nums.filter(|n| !n.is_empty())
}

fn convert(v: &DeValue<'_>, kind: ParamKind) -> Result<ParamValue, String> {
    let wrong = || format!("expected {}, got {}", describe(kind), v.type_str());
    match kind {
        ParamKind::Bool => v.as_bool().map(ParamValue::Bool).ok_or_else(wrong),
        ParamKind::Int { min, max } => {
            let i = int_of(v).ok_or_else(wrong)?;
            if i < min || i > max {
                return Err(format!("{i} is out of range: expected {}", describe(kind)));
            }
            Ok(ParamValue::Int(i))
        }
        ParamKind::Float { min, max } => {
            let f = float_of(v).ok_or_else(wrong)?;
            if !f.is_finite() || f < min || f > max {
                return Err(format!("{f} is out of range: expected {}", describe(kind)));
            }
            Ok(ParamValue::Float(f))
        }
        ParamKind::Choice(words) => {
            let s = v.as_str().ok_or_else(wrong)?;
            if !words.contains(&s) {
                return Err(format!(
                    "{} is not {}",
                    hwsurvey_model::text::quote(s),
                    describe(kind)
                ));
            }
            Ok(ParamValue::Str(s.to_string()))
        }
        ParamKind::Version => {
            let s = v.as_str().ok_or_else(wrong)?;
            parse_version(s).ok_or_else(|| {
                format!(
                    "{} is not {}",
                    hwsurvey_model::text::quote(s),
                    describe(kind)
                )
            })?;
            Ok(ParamValue::Str(s.to_string()))
        }
        ParamKind::VersionOr(word) => {
            let s = v.as_str().ok_or_else(wrong)?;
            if s != word {
                parse_version(s).ok_or_else(|| {
                    format!(
                        "{} is not {}",
                        hwsurvey_model::text::quote(s),
                        describe(kind)
                    )
                })?;
            }
            Ok(ParamValue::Str(s.to_string()))
        }
        ParamKind::ChoiceList(words) => {
            let DeValue::Array(items) = v else {
                return Err(wrong());
            };
            let mut out = Vec::new();
            for item in items.iter() {
                let s = item.get_ref().as_str().ok_or_else(wrong)?;
                if !words.contains(&s) {
                    return Err(format!(
                        "{} is not one of {}",
                        hwsurvey_model::text::quote(s),
                        quoted(words)
                    ));
                }
                out.push(s.to_string());
            }
            Ok(ParamValue::List(out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_defaults_have_their_kinds() {
        for def in RULES {
            for p in def.params {
                let text = format!("v = {}", p.default);
                let t = DeTable::parse(&text).unwrap();
                let v = t.get_ref().get("v").unwrap();
                assert!(
                    convert(v.get_ref(), p.kind).is_ok(),
                    "{}.{} default {}",
                    def.id,
                    p.name,
                    p.default
                );
            }
        }
    }

    #[test]
    fn unknown_rule_id_names_file_line_key() {
        let text = "# rules\n\n[rules.\"cpu.gouvernor\"]\nexpect = \"performance\"\n";
        let e = RuleSet::parse("my.toml", text).unwrap_err();
        assert_eq!(e.file, "my.toml");
        assert_eq!(e.line, 3);
        assert_eq!(e.key.as_deref(), Some("rules.\"cpu.gouvernor\""));
        let shown = e.to_string();
        assert!(
            shown.starts_with("my.toml:3: key \"rules.\\\"cpu.gouvernor\\\"\": unknown rule id"),
            "{shown}"
        );
    }

    #[test]
    fn wrong_type_names_line_and_key() {
        let text = "[rules.\"memory.triad_share\"]\nenabled = true\nmin_share = \"lots\"\n";
        let e = RuleSet::parse("q.toml", text).unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(
            e.key.as_deref(),
            Some("rules.\"memory.triad_share\".min_share")
        );
        assert!(
            e.message
                .contains("expected a number from 0 to 1, got string"),
            "{}",
            e.message
        );
    }

    #[test]
    fn out_of_range_threshold() {
        let text = "[rules.\"memory.triad_share\"]\nmin_share = 1.5\n";
        let e = RuleSet::parse("q.toml", text).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("1.5 is out of range"), "{}", e.message);
        let text = "[rules.\"cpu.governor\"]\nexpect = \"turbo\"\n";
        let e = RuleSet::parse("q.toml", text).unwrap_err();
        assert!(
            e.message.contains("\"turbo\" is not one of"),
            "{}",
            e.message
        );
    }

    #[test]
    fn unknown_param_and_bad_enabled() {
        let e = RuleSet::parse("q.toml", "[rules.\"cpu.online\"]\nthreshold = 3\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("rules.\"cpu.online\".threshold"));
        assert_eq!(e.line, 2);
        let e = RuleSet::parse("q.toml", "[rules.\"cpu.online\"]\n\nenabled = 1\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("expected true or false, got integer"));
    }

    #[test]
    fn overrides_and_disables() {
        let text = "[rules.\"memory.triad_share\"]\nmin_share = 0.75\n[rules.\"cpu.smt\"]\nenabled = false\n";
        let set = RuleSet::parse("q.toml", text).unwrap();
        assert_eq!(
            set.params("memory.triad_share").unwrap().f64("min_share"),
            Some(0.75)
        );
        assert!(set.params("cpu.smt").is_none());
        assert!(set.params("cpu.online").is_some());
    }

    #[test]
    fn kernel_minimum_is_target_or_a_version() {
        let set = RuleSet::builtin();
        assert_eq!(
            set.params("os.kernel_min").unwrap().str("min_kernel"),
            Some("target")
        );
        let text = "[rules.\"os.kernel_min\"]\nmin_kernel = \"5.10\"\n";
        let set = RuleSet::parse("q.toml", text).unwrap();
        assert_eq!(
            set.params("os.kernel_min").unwrap().str("min_kernel"),
            Some("5.10")
        );
        let e = RuleSet::parse(
            "q.toml",
            "[rules.\"os.kernel_min\"]\nmin_kernel = \"newest\"\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 2);
        assert_eq!(
            e.message,
            "\"newest\" is not \"target\" or a version string such as \"4.18\""
        );
    }

    #[test]
    fn bad_toml_has_a_line() {
        let e = RuleSet::parse("q.toml", "[rules\nx = 1\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.starts_with("not valid TOML"));
    }

    #[test]
    fn default_rules_file_matches_builtin() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../profiles/qualify.toml");
        let text = std::fs::read_to_string(path).unwrap();
        let set = RuleSet::parse("profiles/qualify.toml", &text).unwrap();
        assert_eq!(set, RuleSet::builtin());
        // and it names every rule and every parameter, so it documents them all
        for def in RULES {
            assert!(
                text.contains(&format!("[rules.\"{}\"]", def.id)),
                "{}",
                def.id
            );
            for p in def.params {
                assert!(
                    text.contains(&format!("\n{} = {}", p.name, p.default)),
                    "{}.{}",
                    def.id,
                    p.name
                );
            }
        }
    }
}

//! Profiles: `profiles/*.toml`, the fixed, versioned rules a run follows.
//!
//! Layout (see `profiles/standard.toml`):
//!
//! ```toml
//! format_version = 1        # the file format this engine reads (PROFILE_FORMAT_VERSION)
//! id = "standard"
//! version = 1               # the profile's own revision; results carry it
//! description = "..."
//!
//! [run]                     # engine rules shared by every family (RunSettings)
//! placement = "compact"
//! sample_min_s = 0.2
//! ...
//!
//! [families."mem.bandwidth"]   # engine keys of one family (FamilySection)
//! enabled = true
//! [families."mem.bandwidth".params]   # the family's own typed keys (Section::params)
//! ...
//! ```
//!
//! Every table denies unknown keys. Errors name the file, the line and the key
//! ([`ProfileError`]), using the spans toml keeps.
//!
//! Every number and list has a stated range (the field docs of [`RunSettings`] and of each
//! family's `Params`), checked at load time by a [`Checker`]: lists are non-empty, without
//! duplicates and of at most [`MAX_LIST_ENTRIES`] entries, sizes > 0, min <= max pairs in
//! order, the id non-empty. A value out of range is an error naming the key, the range and the
//! value; nothing is silently replaced.
//!
//! What one profile may cost is bounded: the file at most [`MAX_PROFILE_BYTES`], each list at
//! most [`MAX_LIST_ENTRIES`] entries, and the plan built from it at most
//! [`MAX_PLAN_POINTS`] points (`crate::plan::build_plan` refuses more, naming the family),
//! so that neither `run --plan-only` nor a run holds more than a few MiB of plan.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::path::Path;

use hwsurvey_model::files::FileProblem;
use serde::de::{DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// The profile file format this engine reads.
pub const PROFILE_FORMAT_VERSION: u32 = 1;

/// The standard profile, built into the binary (`profiles/standard.toml`).
pub const STANDARD_TOML: &str = include_str!("../../../profiles/standard.toml");
/// The quick profile, built into the binary (`profiles/quick.toml`).
pub const QUICK_TOML: &str = include_str!("../../../profiles/quick.toml");

/// Largest profile file [`Profile::load`] reads, bytes (1 MiB; the built-in ones are a few
/// KiB).
pub const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// A profile error: always the file, and where known the line and the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}{}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default(), key.as_ref().map(|k| format!(": key `{k}`")).unwrap_or_default())]
pub struct ProfileError {
    /// The profile file (or `profiles/<name>.toml (built in)`).
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// Dotted key (`families."mem.bandwidth".params.block_sizes`), when known.
    pub key: Option<String>,
    /// What is wrong and what was expected.
    pub message: String,
}

pub use hwsurvey_result::profile::RunSettings;

/// Engine keys of one family: `[families."<id>"]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilySection {
    /// Whether the family runs at all.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Obsolete, seconds: profiles before issue 13 gave each family a time budget that
    /// dropped points. Accepted (range (0, 86400]) so that older profiles load; it changes
    /// nothing ([`Profile::obsolete_keys`]).
    #[serde(default)]
    pub budget_s: Option<f64>,
    /// The family's own keys, parsed by the family with [`Section::params`].
    #[serde(default)]
    pub params: toml::Table,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileDoc {
    format_version: u32,
    id: String,
    version: u32,
    description: String,
    run: RunSettings,
    #[serde(default)]
    families: BTreeMap<String, FamilySection>,
}

/// A loaded, checked profile.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Profile id (`standard`, `quick`).
    pub id: String,
    /// The profile's revision.
    pub version: u32,
    /// One-line description.
    pub description: String,
    /// Where it came from (path, or `profiles/<id>.toml (built in)`).
    pub source: String,
    /// Engine rules.
    pub run: RunSettings,
    /// Family sections in file order of ids (BTreeMap order).
    pub families: BTreeMap<String, Section>,
    /// Keys the profile gives that no longer change anything (`run.budget_s`,
    /// `families."<id>".budget_s`: time budgets that used to drop points), for a note.
    pub obsolete_keys: Vec<String>,
    /// [`settings_fingerprint`] of the text: two profiles with one id and version but other
    /// settings (an edited copy of `standard.toml`) have different fingerprints.
    pub fingerprint: String,
    /// [`point_settings`] of the text: the settings that define the points, part by part,
    /// without how many samples of what length measure each.
    pub point_settings: Option<hwsurvey_result::PointSettings>,
}

/// FNV-1a 64 (16 hex digits) of a profile's settings: the TOML document without its
/// `description`, written back in key order, so comments, blank lines, key order and the
/// description do not change it, and every setting does. Empty for text that is not TOML
/// (never the case for a parsed profile).
pub fn settings_fingerprint(text: &str) -> String {
    let Ok(mut doc) = text.parse::<toml::Table>() else {
        return String::new();
    };
    doc.remove("description");
    match toml::to_string(&doc) {
        Ok(canonical) => format!(
            "{:016x}",
            hwsurvey_model::text::fnv1a64(canonical.as_bytes())
        ),
        Err(_) => String::new(),
    }
}

/// The `[run]` keys that say how each point is measured, not what it is: sample lengths and
/// counts (what `run --max-time` shortens) and the adaptive sampling target.
pub const SAMPLING_KEYS: &[&str] = &[
    "sample_min_s",
    "sample_min_clock_ticks",
    "warmup_s",
    "samples_min",
    "samples_max",
    "target_cv",
];

/// [`hwsurvey_result::PointSettings`] of a profile's text: FNV-1a 64 of the top-level keys
/// and `[run]` without `description`, [`SAMPLING_KEYS`] and `budget_s`, and of each enabled
/// family section without `budget_s`, each written back in key order (comments, layout and
/// key order do not change them). `None` for text that is not TOML (never the case for a
/// parsed profile).
pub fn point_settings(text: &str) -> Option<hwsurvey_result::PointSettings> {
    let mut doc = text.parse::<toml::Table>().ok()?;
    doc.remove("description");
    let families = match doc.remove("families") {
        Some(toml::Value::Table(t)) => t,
        _ => toml::Table::new(),
    };
    if let Some(toml::Value::Table(run)) = doc.get_mut("run") {
        for k in SAMPLING_KEYS.iter().chain(&["budget_s"]) {
            run.remove(*k);
        }
    }
    let fp = |t: &toml::Table| {
        toml::to_string(t)
            .ok()
            .map(|c| format!("{:016x}", hwsurvey_model::text::fnv1a64(c.as_bytes())))
    };
    let mut out = std::collections::BTreeMap::new();
    for (id, section) in families {
        let toml::Value::Table(mut section) = section else {
            continue;
        };
        if section.get("enabled").and_then(toml::Value::as_bool) == Some(false) {
            continue;
        }
        section.remove("budget_s");
        section.remove("enabled");
        out.insert(id, fp(&section)?);
    }
    Some(hwsurvey_result::PointSettings {
        run: fp(&doc)?,
        families: out,
    })
}

impl Profile {
    /// One line about [`Profile::obsolete_keys`], or `None` when there are none.
    pub fn obsolete_note(&self) -> Option<String> {
        if self.obsolete_keys.is_empty() {
            return None;
        }
        Some(format!(
            "{}: {} no longer change anything: the profile defines the points and no budget \
             drops one (bound a run with --max-time)",
            self.source,
            self.obsolete_keys.join(", ")
        ))
    }
}

/// One family's section, with the source text kept so that [`Section::params`] errors can
/// name the line.
#[derive(Debug, Clone)]
pub struct Section {
    /// Family id.
    pub family: String,
    /// Engine keys.
    pub common: FamilySection,
    file: String,
    text: std::sync::Arc<str>,
}

impl Section {
    /// Deserializes the family's own keys (`[families."<id>".params]`) into `T`. Give `T`
    /// `#[serde(deny_unknown_fields)]` and put units in its field names. Errors name the file,
    /// line and key.
    pub fn params<T: DeserializeOwned>(&self) -> Result<T, ProfileError> {
        let path = ["families", self.family.as_str(), "params"];
        let de = toml::de::Deserializer::parse(&self.text)
            .map_err(|e| toml_error(&self.file, &self.text, e))?;
        let found = Nav::<T> {
            path: &path,
            _t: PhantomData,
        }
        .deserialize(de)
        .map_err(|e| toml_error(&self.file, &self.text, e))?;
        match found {
            Some(v) => Ok(v),
            None => toml::from_str::<T>("").map_err(|e| ProfileError {
                file: self.file.clone(),
                line: None,
                key: Some(format!("families.\"{}\".params", self.family)),
                message: format!("section missing: {}", e.message()),
            }),
        }
    }

    /// Range checks of this family's params table (`families."<id>".params`), with lines
    /// from the profile text.
    pub fn checker(&self) -> Checker<'_> {
        Checker::new(
            &self.file,
            &self.text,
            format!("families.\"{}\".params", self.family),
        )
    }

    /// [`Section::params`] followed by the params' own range checks ([`CheckedParams`]):
    /// what every family's `check_section` and `plan` read (through [`crate::family::DynFamily`]).
    pub fn checked_params<T: DeserializeOwned + CheckedParams>(&self) -> Result<T, ProfileError> {
        let p: T = self.params()?;
        p.check(&self.checker())?;
        Ok(p)
    }

    /// A section for tests of one family: `params_toml` is the body of its params table.
    pub fn for_test(family: &str, budget_s: f64, params_toml: &str) -> Section {
        let text = format!("[families.\"{family}\"]\nbudget_s = {budget_s}\n[families.\"{family}\".params]\n{params_toml}\n");
        let common = FamilySection {
            enabled: true,
            budget_s: Some(budget_s),
            params: toml::from_str(params_toml).unwrap_or_default(),
        };
        Section {
            family: family.to_string(),
            common,
            file: "<test>".into(),
            text: text.into(),
        }
    }
}

/// Hard cap of threads in one point (workers or clients), whatever the machine: 4096. A
/// profile's `oversubscription_factor` (1..=64) times the usable CPUs is cut to this, and
/// family thread parameters are bounded by it; the result loader refuses more
/// ([`hwsurvey_result::bounds::MAX_THREADS_PER_POINT`], the same number).
pub const MAX_THREADS_PER_POINT: usize = hwsurvey_result::bounds::MAX_THREADS_PER_POINT;

/// Most entries of one list of a profile (`block_sizes_bytes`, `queue_depths`, ...): 64 (the
/// standard profile's longest list has 9).
pub const MAX_LIST_ENTRIES: usize = 64;

/// Most points one plan may hold, run and skipped together: 10000 (the standard profile plans
/// 244 on 16 CPUs; a point takes about 3 KB of plan, and its samples about as much of the
/// result file).
pub const MAX_PLAN_POINTS: usize = 10_000;

/// Largest size a profile may name, bytes: 1 TiB (2^40).
pub const MAX_SIZE_BYTES: u64 = 1 << 40;

/// A family's params with stated ranges, checked at load time (a value out of range is an
/// error, never silently replaced).
pub trait CheckedParams {
    /// Checks every number and list against its documented range.
    fn check(&self, c: &Checker<'_>) -> Result<(), ProfileError>;
}

/// Range checks of one profile table (`[run]` or `[families."<id>".params]`): each failure is
/// a [`ProfileError`] naming the file, the line of `key = ...` inside that table (when the key
/// is written there as `key = value`), the dotted key, the allowed range and the value given.
#[derive(Debug, Clone)]
pub struct Checker<'a> {
    file: &'a str,
    text: &'a str,
    /// Dotted table name as written in its header, without brackets: `run`,
    /// `families."mem.bandwidth".params`.
    table: String,
}

impl<'a> Checker<'a> {
    /// Checks of table `table` (header text without brackets) of profile `text` read from `file`.
    pub fn new(file: &'a str, text: &'a str, table: impl Into<String>) -> Checker<'a> {
        Checker {
            file,
            text,
            table: table.into(),
        }
    }

    /// 1-based line of `key = ...` inside the table, when written that way.
    pub fn line_of(&self, key: &str) -> Option<usize> {
        let header = format!("[{}]", self.table);
        let mut inside = self.table.is_empty();
        for (i, raw) in self.text.lines().enumerate() {
            let l = raw.trim();
            if l.starts_with('[') {
                inside = l.split('#').next().map(str::trim) == Some(header.as_str());
                continue;
            }
            if !inside {
                continue;
            }
            if let Some(rest) = l.strip_prefix(key) {
                if rest.trim_start().starts_with('=') {
                    return Some(i + 1);
                }
            }
        }
        None
    }

    /// An error about `key` of this table.
    pub fn error(&self, key: &str, message: String) -> ProfileError {
        ProfileError {
            file: self.file.to_string(),
            line: self.line_of(key),
            key: Some(if self.table.is_empty() {
                key.to_string()
            } else {
                format!("{}.{key}", self.table)
            }),
            message,
        }
    }

    /// `lo <= value <= hi` (integers): the message reads `expected lo..=hi, got value`.
    pub fn int<T>(&self, key: &str, value: T, lo: T, hi: T, what: &str) -> Result<(), ProfileError>
    where
        T: PartialOrd + std::fmt::Display + Copy,
    {
        if value < lo || value > hi {
            return Err(self.error(
                key,
                format!("expected {lo}..={hi}{}, got {value}", note(what)),
            ));
        }
        Ok(())
    }

    /// A finite `value` in `(lo, hi]` (`lo_open`) or `[lo, hi]`.
    pub fn float(
        &self,
        key: &str,
        value: f64,
        lo: f64,
        lo_open: bool,
        hi: f64,
        what: &str,
    ) -> Result<(), ProfileError> {
        let above = if lo_open { value > lo } else { value >= lo };
        if !(value.is_finite() && above && value <= hi) {
            let open = if lo_open { '(' } else { '[' };
            return Err(self.error(
                key,
                format!(
                    "expected a number in {open}{lo}, {hi}]{}, got {value}",
                    note(what)
                ),
            ));
        }
        Ok(())
    }

    /// A non-empty list without repeated entries, of at most [`MAX_LIST_ENTRIES`] entries.
    pub fn list<T: PartialEq + Serialize>(
        &self,
        key: &str,
        items: &[T],
    ) -> Result<(), ProfileError> {
        if items.is_empty() {
            return Err(self.error(
                key,
                "expected a non-empty list without duplicates, got []".into(),
            ));
        }
        if items.len() > MAX_LIST_ENTRIES {
            return Err(self.error(
                key,
                format!(
                    "expected at most {MAX_LIST_ENTRIES} entries, got {}",
                    items.len()
                ),
            ));
        }
        for (i, a) in items.iter().enumerate() {
            if items[..i].contains(a) {
                return Err(self.error(
                    key,
                    format!(
                        "expected a non-empty list without duplicates, got {} twice",
                        serde_json::to_string(a).unwrap_or_else(|_| "an entry".into())
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A non-empty list without duplicates whose every entry is in `lo..=hi`.
    pub fn int_list<T>(
        &self,
        key: &str,
        items: &[T],
        lo: T,
        hi: T,
        what: &str,
    ) -> Result<(), ProfileError>
    where
        T: PartialOrd + PartialEq + std::fmt::Display + Serialize + Copy,
    {
        self.list(key, items)?;
        if let Some(bad) = items.iter().find(|&&v| v < lo || v > hi) {
            return Err(self.error(
                key,
                format!(
                    "expected every entry in {lo}..={hi}{}, got {bad}",
                    note(what)
                ),
            ));
        }
        Ok(())
    }

    /// `lo_value <= hi_value`; the error names `hi_key`.
    pub fn ordered<T: PartialOrd + std::fmt::Display>(
        &self,
        lo_key: &str,
        lo_value: T,
        hi_key: &str,
        hi_value: T,
    ) -> Result<(), ProfileError> {
        if lo_value > hi_value {
            return Err(self.error(
                hi_key,
                format!("expected {hi_key} >= {lo_key} ({lo_value}), got {hi_value}"),
            ));
        }
        Ok(())
    }
}

fn note(what: &str) -> String {
    if what.is_empty() {
        String::new()
    } else {
        format!(" ({what})")
    }
}

/// Walks a path of table keys and deserializes the value found there, ignoring the rest.
struct Nav<'p, T> {
    path: &'p [&'p str],
    _t: PhantomData<T>,
}

impl<'de, T: DeserializeOwned> DeserializeSeed<'de> for Nav<'_, T> {
    type Value = Option<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: DeserializeOwned> Visitor<'de> for Nav<'_, T> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a table")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<T>, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            match self.path.split_first() {
                Some((first, rest)) if key == *first => {
                    if rest.is_empty() {
                        found = Some(map.next_value::<T>()?);
                    } else {
                        found = map.next_value_seed(Nav::<T> {
                            path: rest,
                            _t: PhantomData,
                        })?;
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
}

/// Turns a toml error into a [`ProfileError`] with line and key: the line from the span, the
/// key from the error text (unknown / missing field) or from the `key =` on that line, under
/// the nearest `[table]` header above it.
fn toml_error(file: &str, text: &str, e: toml::de::Error) -> ProfileError {
    let message = e.message().trim().to_string();
    let Some(span) = e.span() else {
        return ProfileError {
            file: file.to_string(),
            line: None,
            key: None,
            message,
        };
    };
    let start = span.start.min(text.len());
    let line_no = text[..start].matches('\n').count() + 1;
    let line_start = text[..start].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line_end = text[start..]
        .find('\n')
        .map(|i| i + start)
        .unwrap_or(text.len());
    let line = &text[line_start..line_end];
    let header = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').to_string());
    let quoted = |m: &str| {
        let a = m.find('`')?;
        let b = m[a + 1..].find('`')? + a + 1;
        Some(m[a + 1..b].to_string())
    };
    let leaf = if message.starts_with("unknown field") || message.starts_with("missing field") {
        quoted(&message)
    } else {
        None
    }
    .or_else(|| {
        let (k, _) = line.split_once('=')?;
        Some(k.trim().to_string())
    });
    let key = match (header, leaf) {
        (Some(h), Some(l)) if !line.trim_start().starts_with('[') => Some(format!("{h}.{l}")),
        (Some(h), Some(l)) => Some(format!("{h}.{l}")),
        (Some(h), None) => Some(h),
        (None, l) => l,
    };
    ProfileError {
        file: file.to_string(),
        line: Some(line_no),
        key,
        message,
    }
}

impl Profile {
    /// Parses profile text. `file` names it in errors. Checks the format version, the
    /// settings and that every family section names a family in `known_families`; obsolete
    /// budget keys are range-checked and listed in [`Profile::obsolete_keys`]. Family params are checked by the caller
    /// (the workloads crate's `families::check_profile`, or [`crate::family::check_sections`]) since only families know their keys.
    pub fn parse(file: &str, text: &str, known_families: &[&str]) -> Result<Profile, ProfileError> {
        let doc: ProfileDoc = toml::from_str(text).map_err(|e| toml_error(file, text, e))?;
        let line_of = |needle: &str| {
            text.lines()
                .position(|l| l.trim_start().starts_with(needle))
                .map(|i| i + 1)
        };
        if doc.format_version != PROFILE_FORMAT_VERSION {
            return Err(ProfileError {
                file: file.into(),
                line: line_of("format_version"),
                key: Some("format_version".into()),
                message: format!(
                    "unsupported profile format version {}, this hwsurvey reads version {}",
                    doc.format_version, PROFILE_FORMAT_VERSION
                ),
            });
        }
        if doc.version == 0 {
            return Err(ProfileError {
                file: file.into(),
                line: line_of("version"),
                key: Some("version".into()),
                message: "profile version must be >= 1".into(),
            });
        }
        let top = Checker::new(file, text, "");
        if doc.id.trim().is_empty() || doc.id.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(top.error(
                "id",
                format!(
                    "expected a non-empty profile id without spaces, got {}",
                    hwsurvey_model::text::quote(&doc.id)
                ),
            ));
        }
        check_run(&Checker::new(file, text, "run"), &doc.run)?;
        let text: std::sync::Arc<str> = text.into();
        let mut families = BTreeMap::new();
        let mut obsolete = Vec::new();
        if doc.run.budget_s.is_some() {
            obsolete.push("run.budget_s".to_string());
        }
        for (id, common) in doc.families {
            let header = format!("[families.\"{id}\"]");
            if !known_families.contains(&id.as_str()) {
                return Err(ProfileError {
                    file: file.into(),
                    line: line_of(&header),
                    key: Some(format!("families.\"{id}\"")),
                    message: format!(
                        "unknown family \"{id}\", expected one of: {}",
                        known_families.join(", ")
                    ),
                });
            }
            if let Some(b) = common.budget_s {
                Checker::new(file, &text, format!("families.\"{id}\"")).float(
                    "budget_s",
                    b,
                    0.0,
                    true,
                    MAX_BUDGET_S,
                    "seconds",
                )?;
                obsolete.push(format!("families.\"{id}\".budget_s"));
            }
            families.insert(
                id.clone(),
                Section {
                    family: id,
                    common,
                    file: file.into(),
                    text: text.clone(),
                },
            );
        }
        Ok(Profile {
            id: doc.id,
            version: doc.version,
            description: doc.description,
            source: file.into(),
            run: doc.run,
            families,
            obsolete_keys: obsolete,
            fingerprint: settings_fingerprint(&text),
            point_settings: point_settings(&text),
        })
    }

    /// Loads `NAME` (a built-in profile: `standard`, `quick`) or a path to a TOML file: a
    /// regular file (symlinks followed) of at most [`MAX_PROFILE_BYTES`], see
    /// [`hwsurvey_model::files::read_regular_text`]; a FIFO, device or directory is a
    /// [`ProfileError`] naming it, never a blocked or endless read.
    pub fn load(name_or_path: &str, known_families: &[&str]) -> Result<Profile, ProfileError> {
        match name_or_path {
            "standard" => Profile::parse(
                "profiles/standard.toml (built in)",
                STANDARD_TOML,
                known_families,
            ),
            "quick" => Profile::parse("profiles/quick.toml (built in)", QUICK_TOML, known_families),
            path => {
                // a regular file only: a FIFO would block, /dev/zero never ends
                let text = hwsurvey_model::files::read_regular_text(
                    Path::new(path),
                    "a profile",
                    MAX_PROFILE_BYTES,
                )
                .map_err(|e| ProfileError {
                    file: path.into(),
                    line: None,
                    key: None,
                    message: match e.problem {
                        FileProblem::Io(_) => format!(
                            "{} (built-in profiles are \"standard\" and \"quick\")",
                            e.problem
                        ),
                        _ => e.problem.to_string(),
                    },
                })?;
                Profile::parse(path, &text, known_families)
            }
        }
    }
}

/// Longest budget a profile may give (the run or one family), seconds: one day.
pub const MAX_BUDGET_S: f64 = 86_400.0;

/// The stated ranges of `[run]` (see [`RunSettings`]); errors name the line inside `[run]`.
fn check_run(c: &Checker<'_>, r: &RunSettings) -> Result<(), ProfileError> {
    c.float("sample_min_s", r.sample_min_s, 0.0, true, 60.0, "seconds")?;
    c.int(
        "sample_min_clock_ticks",
        r.sample_min_clock_ticks,
        1,
        1_000_000,
        "",
    )?;
    c.float("warmup_s", r.warmup_s, 0.0, false, 60.0, "seconds")?;
    c.int("samples_min", r.samples_min, 2, 1000, "")?;
    c.int("samples_max", r.samples_max, 2, 1000, "")?;
    c.ordered("samples_min", r.samples_min, "samples_max", r.samples_max)?;
    c.float("target_cv", r.target_cv, 0.0, true, 1.0, "fraction")?;
    c.float(
        "memory_fraction",
        r.memory_fraction,
        0.0,
        true,
        1.0,
        "fraction",
    )?;
    c.float(
        "memory_llc_multiple",
        r.memory_llc_multiple,
        0.0,
        true,
        64.0,
        "",
    )?;
    c.int(
        "memory_min_working_set_bytes",
        r.memory_min_working_set_bytes,
        4096,
        MAX_SIZE_BYTES,
        "bytes",
    )?;
    if let Some(max) = r.memory_max_working_set_bytes {
        c.int(
            "memory_max_working_set_bytes",
            max,
            4096,
            MAX_SIZE_BYTES,
            "bytes",
        )?;
        c.ordered(
            "memory_min_working_set_bytes",
            r.memory_min_working_set_bytes,
            "memory_max_working_set_bytes",
            max,
        )?;
    }
    c.int(
        "oversubscription_factor",
        r.oversubscription_factor,
        1,
        64,
        "",
    )?;
    if let Some(b) = r.budget_s {
        c.float("budget_s", b, 0.0, true, MAX_BUDGET_S, "seconds")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;

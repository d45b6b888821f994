//! Target descriptors: one `targets/<name>.toml` per target hwsurvey is built for.
//!
//! A descriptor says how the target is built here (natively, with Debian's rustc-web and
//! `-Zbuild-std`, or only with a vendor toolchain), which linker and runner to use, what a
//! binary for it must look like (ELF class, byte order, `e_machine`, interpreter, static or the
//! newest glibc it may need, and for Elbrus the `e_flags` rules), and the base page sizes its
//! kernels use. Unknown keys are refused; errors name the file, the line and the key.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::ident::{Class, Endianness};
use crate::inspect::GlibcVersion;

/// How binaries for a target are produced on a Debian 12 build machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BuildMethod {
    /// rustup's stable toolchain on the build machine itself (x86_64).
    Native,
    /// Debian's `rustc-web`/`cargo-web`/`rust-web-src` with `-Zbuild-std` and Debian's cross gcc.
    DebianRustcWebBuildStd,
    /// Only a vendor toolchain can build it (e2k: MCST's rustc and lcc); not buildable here.
    Vendor,
}

impl fmt::Display for BuildMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BuildMethod::Native => "native",
            BuildMethod::DebianRustcWebBuildStd => "debian-rustc-web-build-std",
            BuildMethod::Vendor => "vendor",
        })
    }
}

/// What a binary may need from glibc: nothing (`"static"`), or symbol versions up to
/// `GLIBC_x.y` (`"2.17"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlibcRule {
    /// The binary must be static (or static-pie): it needs nothing at run time.
    Static,
    /// The binary may be dynamic, needing at most this `GLIBC_x.y`.
    AtMost(GlibcVersion),
}

impl<'de> Deserialize<'de> for GlibcRule {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text == "static" {
            return Ok(GlibcRule::Static);
        }
        GlibcVersion::parse_numbers(&text)
            .map(GlibcRule::AtMost)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "expected \"static\" or a glibc version such as \"2.17\", got {}",
                    hwsurvey_model::text::quote(&text)
                ))
            })
    }
}

impl fmt::Display for GlibcRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GlibcRule::Static => f.write_str("static"),
            GlibcRule::AtMost(v) => write!(f, "at most GLIBC_{v}"),
        }
    }
}

/// `[elf.e2k]`: rules on an Elbrus file's `e_flags` (see [`crate::e2k`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct E2kRules {
    /// Machine codes (`e_flags` bits 24-31) a binary may carry: 2..=7 = elbrus-v2..v7,
    /// 19..=25 = 8c, 1c+, 12c, 16c, 2c3, 48c, 8v7.
    pub machine_codes: Vec<u8>,
    /// `e_flags` bits that must be clear; 0x20 (`EF_E2K_PM`, protected mode) at least.
    pub must_be_clear: u32,
}

/// `[elf]`: what a binary built for the target must look like.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElfExpectation {
    /// `"ELF32"` or `"ELF64"`.
    pub class: Class,
    /// `"little"` or `"big"`.
    pub endianness: Endianness,
    /// `e_machine` number (62 x86_64, 183 aarch64, 43 SPARCV9, 175 EM_MCST_ELBRUS).
    pub machine: u16,
    /// Program interpreter of a dynamic build (checked only when the binary has one).
    pub interpreter: String,
    /// `"static"` or the newest `GLIBC_x.y` allowed.
    pub glibc: GlibcRule,
    /// Elbrus `e_flags` rules; only for `EM_MCST_ELBRUS` targets.
    pub e2k: Option<E2kRules>,
}

/// One `targets/<name>.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetDescriptor {
    /// Short name, equal to the file stem (`sparc64`).
    pub name: String,
    /// Rust target triple (`sparc64-unknown-linux-gnu`).
    pub triple: String,
    /// How it is built here.
    pub build: BuildMethod,
    /// The linker rustc calls (`sparc64-linux-gnu-gcc`; `lcc` for e2k).
    pub linker: String,
    /// The command that runs a binary of the target on the build machine (qemu-user), if any.
    pub runner: Option<String>,
    /// The vendor toolchain a user must supply; required when `build = "vendor"`.
    pub vendor_toolchain: Option<String>,
    /// A custom target spec JSON beside the descriptor, for rustc forks with this backend.
    pub target_spec_json: Option<String>,
    /// Base page sizes the target's Linux kernels use, in bytes (aarch64: 4, 16 or 64 KiB).
    pub base_page_sizes_bytes: Vec<u64>,
    /// Oldest Linux kernel release a binary for the target is supported on, as a dotted
    /// version (`"3.2"`, `"4.4"`); compared with `/proc/sys/kernel/osrelease` by the
    /// `os.kernel_min` qualification rule. Parsed by [`TargetDescriptor::min_kernel_numbers`].
    pub min_kernel: String,
    /// Where [`TargetDescriptor::min_kernel`] comes from: rustc's platform-support page
    /// entry for the triple, or for a vendor target the document used (one line).
    pub min_kernel_source: String,
    /// What its binaries look like.
    pub elf: ElfExpectation,
}

/// A descriptor that could not be read, parsed or validated. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The targets directory could not be listed.
    #[error("{path}: cannot read: {error}")]
    Io {
        /// The directory.
        path: PathBuf,
        /// The OS error (not a `source()`: the message already holds it, for one-line output).
        error: std::io::Error,
    },
    /// The descriptor file could not be read, is not a regular file or is larger than
    /// [`MAX_DESCRIPTOR_BYTES`]; names the path.
    #[error(transparent)]
    File(hwsurvey_model::files::FileError),
    /// TOML syntax error, unknown key, missing key or a value of the wrong kind.
    #[error("{path}:{line}:{column}: key `{key}`: {message}")]
    Parse {
        /// The descriptor file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Dotted key (`elf.machine`), or `?` when the error is not at a key.
        key: String,
        /// What was wrong and what was expected (one line).
        message: String,
    },
    /// Well-formed but inconsistent (a name that is not the file stem, a vendor target
    /// without `vendor_toolchain`, ...).
    #[error("{path}: key `{key}`: {message}")]
    Invalid {
        /// The descriptor file.
        path: PathBuf,
        /// Dotted key.
        key: String,
        /// What is wrong.
        message: String,
    },
}

/// Largest descriptor file [`TargetDescriptor::load`] reads, bytes (1 MiB; the real ones are
/// under 2 KiB).
pub const MAX_DESCRIPTOR_BYTES: u64 = 1 << 20;

/// The descriptors of `targets/` as they were when hwsurvey was built, so a binary copied to
/// another machine can still check `--target NAME`: `(name, text)`.
pub const BUILTIN: &[(&str, &str)] = &[
    ("aarch64", include_str!("../../../targets/aarch64.toml")),
    ("e2k", include_str!("../../../targets/e2k.toml")),
    ("sparc64", include_str!("../../../targets/sparc64.toml")),
    ("x86_64", include_str!("../../../targets/x86_64.toml")),
];

/// Where a `--target` argument was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DescriptorSource {
    /// A file on disk.
    File(PathBuf),
    /// The copy of `targets/<name>.toml` built into the binary.
    Builtin(&'static str),
}

impl fmt::Display for DescriptorSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DescriptorSource::File(p) => write!(f, "{}", p.display()),
            DescriptorSource::Builtin(name) => write!(f, "targets/{name}.toml (built in)"),
        }
    }
}

/// The dotted key at byte `offset` of a TOML text: the table header above it plus the key
/// before `=` on its line.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let before = text.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let line = text.get(line_start..line_end)?.trim();
    let table = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_owned());
    if line.starts_with('[') {
        return Some(
            line.trim_matches(|c| c == '[' || c == ']')
                .trim()
                .to_owned(),
        );
    }
    let key = line.split('=').next()?.trim();
    if key.is_empty() || key.starts_with('#') {
        return table;
    }
    Some(match table {
        Some(t) => format!("{t}.{key}"),
        None => key.to_owned(),
    })
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(offset, |i| offset - i - 1) + 1;
    (line, column)
}

impl TargetDescriptor {
    /// Parses the text of a descriptor; `path` is used in errors and for the file-stem check.
    ///
    /// # Errors
    /// [`TargetError::Parse`] (with line, column and key) for TOML errors, unknown keys, missing
    /// keys and wrong values; [`TargetError::Invalid`] for inconsistent descriptors.
    pub fn parse(text: &str, path: &Path) -> Result<TargetDescriptor, TargetError> {
        let desc: TargetDescriptor = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            let (line, column) = line_column(text, offset);
            let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
            let missing = message
                .strip_prefix("missing field `")
                .and_then(|rest| rest.split('`').next())
                .map(str::to_owned);
            let key = missing
                .or_else(|| key_at(text, offset))
                .unwrap_or_else(|| "?".to_owned());
            TargetError::Parse {
                path: path.to_owned(),
                line,
                column,
                key,
                message,
            }
        })?;
        desc.validate(path)?;
        Ok(desc)
    }

    fn validate(&self, path: &Path) -> Result<(), TargetError> {
        let invalid = |key: &str, message: String| TargetError::Invalid {
            path: path.to_owned(),
            key: key.to_owned(),
            message,
        };
        if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
            if stem != self.name {
                return Err(invalid(
                    "name",
                    format!(
                        "is {} but must equal the file name stem {stem:?} (rename the file to {}.toml or set name = {stem:?})",
                        hwsurvey_model::text::quote(&self.name),
                        hwsurvey_model::text::one_line(&self.name, 48)
                    ),
                ));
            }
        }
        if self.build == BuildMethod::Vendor && self.vendor_toolchain.is_none() {
            return Err(invalid(
                "vendor_toolchain",
                "required when build = \"vendor\"".to_owned(),
            ));
        }
        if self.base_page_sizes_bytes.is_empty()
            || self
                .base_page_sizes_bytes
                .iter()
                .any(|s| !s.is_power_of_two() || *s < 4096)
        {
            return Err(invalid(
                "base_page_sizes_bytes",
                format!(
                    "expected powers of two of at least 4096, got {:?}",
                    self.base_page_sizes_bytes
                ),
            ));
        }
        if self.min_kernel_numbers().is_none() {
            return Err(invalid(
                "min_kernel",
                format!(
                    "expected a dotted kernel version such as \"3.2\" or \"4.4\", got {}",
                    hwsurvey_model::text::quote(&self.min_kernel)
                ),
            ));
        }
        if self.min_kernel_source.trim().is_empty() {
            return Err(invalid(
                "min_kernel_source",
                "must say where min_kernel comes from (rustc platform support, vendor)".to_owned(),
            ));
        }
        let is_e2k = self.elf.machine == crate::Machine::MCST_ELBRUS.number();
        if is_e2k != self.elf.e2k.is_some() {
            return Err(invalid(
                "elf.e2k",
                "required for e_machine 175 (EM_MCST_ELBRUS) and only there".to_owned(),
            ));
        }
        if let Some(rules) = &self.elf.e2k {
            if rules.must_be_clear & crate::e2k::EF_E2K_PM == 0 {
                return Err(invalid(
                    "elf.e2k.must_be_clear",
                    format!(
                        "must include 0x20 (EF_E2K_PM, protected mode), got {:#x}",
                        rules.must_be_clear
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The numbers of [`TargetDescriptor::min_kernel`] (`"4.4"` -> `[4, 4]`), or `None` when it
    /// is not a dotted version of one to four decimal numbers.
    pub fn min_kernel_numbers(&self) -> Option<Vec<u64>> {
        let parts: Option<Vec<u64>> = self
            .min_kernel
            .split('.')
            .map(|p| {
                if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                    None
                } else {
                    p.parse().ok()
                }
            })
            .collect();
        parts.filter(|n| (1..=4).contains(&n.len()))
    }

    /// The built-in descriptor (a [`BUILTIN`] copy of `targets/<name>.toml`) whose binaries
    /// have this ELF class (32 or 64) and `e_machine`, with its source
    /// (`targets/sparc64.toml (built in)`); `None` when no target of hwsurvey matches.
    pub fn builtin_for_elf(
        class_bits: u8,
        machine: u16,
    ) -> Option<(TargetDescriptor, DescriptorSource)> {
        BUILTIN.iter().find_map(|(name, text)| {
            let shown = PathBuf::from(format!("targets/{name}.toml"));
            let desc = TargetDescriptor::parse(text, &shown).ok()?;
            let bits = match desc.elf.class {
                Class::Elf32 => 32,
                Class::Elf64 => 64,
            };
            (bits == class_bits && desc.elf.machine == machine)
                .then_some((desc, DescriptorSource::Builtin(name)))
        })
    }

    /// Reads (a regular file of at most [`MAX_DESCRIPTOR_BYTES`], see
    /// [`hwsurvey_model::files::read_regular_text`]) and parses one descriptor file.
    ///
    /// # Errors
    /// [`TargetError::File`] when unreadable, not a regular file (FIFO, device, directory),
    /// too large or not UTF-8, otherwise as [`TargetDescriptor::parse`].
    pub fn load(path: &Path) -> Result<TargetDescriptor, TargetError> {
        let text = hwsurvey_model::files::read_regular_text(
            path,
            "a target descriptor",
            MAX_DESCRIPTOR_BYTES,
        )
        .map_err(TargetError::File)?;
        TargetDescriptor::parse(&text, path)
    }

    /// Resolves a `--target` argument: a path (it contains `/` or ends in `.toml`) is loaded
    /// as is; a name `NAME` is `targets_dir/NAME.toml` when that file exists, otherwise the
    /// built-in copy ([`BUILTIN`]).
    ///
    /// # Errors
    /// As [`TargetDescriptor::load`]; [`TargetError::Invalid`] (key `name`) for an unknown name.
    pub fn resolve(
        arg: &str,
        targets_dir: &Path,
    ) -> Result<(TargetDescriptor, DescriptorSource), TargetError> {
        if arg.contains('/') || arg.ends_with(".toml") {
            let path = PathBuf::from(arg);
            return Ok((TargetDescriptor::load(&path)?, DescriptorSource::File(path)));
        }
        let path = targets_dir.join(format!("{arg}.toml"));
        if path.is_file() {
            return Ok((TargetDescriptor::load(&path)?, DescriptorSource::File(path)));
        }
        let Some((name, text)) = BUILTIN.iter().find(|(name, _)| *name == arg) else {
            let known: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            return Err(TargetError::Invalid {
                path,
                key: "name".to_owned(),
                message: format!(
                    "no such target {}; known: {}",
                    hwsurvey_model::text::quote(arg),
                    known.join(", ")
                ),
            });
        };
        let shown = PathBuf::from(format!("targets/{name}.toml"));
        Ok((
            TargetDescriptor::parse(text, &shown)?,
            DescriptorSource::Builtin(name),
        ))
    }

    /// Loads every `*.toml` in `dir`, sorted by file name.
    ///
    /// # Errors
    /// The first descriptor that fails, or [`TargetError::Io`] for the directory itself.
    pub fn load_dir(dir: &Path) -> Result<Vec<TargetDescriptor>, TargetError> {
        let io = |error| TargetError::Io {
            path: dir.to_owned(),
            error,
        };
        let mut paths = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            if path.extension().is_some_and(|e| e == "toml") {
                paths.push(path);
            }
        }
        paths.sort();
        paths.iter().map(|p| TargetDescriptor::load(p)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_at_names_table_and_key() {
        let text = "name = \"x\"\n[elf]\nclass = \"ELF64\"\nbogus = 1\n";
        let offset = text.find("bogus").unwrap();
        assert_eq!(key_at(text, offset).as_deref(), Some("elf.bogus"));
        assert_eq!(line_column(text, offset), (4, 1));
        assert_eq!(key_at(text, 0).as_deref(), Some("name"));
    }
}

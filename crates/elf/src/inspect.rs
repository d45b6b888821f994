//! [`inspect`]: ELF bytes in, [`ElfInfo`] out. [`inspect_file`] is the thin reader.
//!
//! Sources: System V ABI, "ELF Header" (`e_ident`, `e_machine`, `e_flags`) and "Program
//! Header" (`PT_INTERP`, `PT_DYNAMIC`); LSB Core 5.0, "Symbol Versioning"
//! (`SHT_GNU_verneed`, where the `GLIBC_x.y` names a file needs are recorded).

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use goblin::elf::header::{EI_CLASS, EI_DATA, EI_OSABI, ELFMAG, ET_DYN, SELFMAG};
use goblin::elf::program_header::PT_DYNAMIC;
use goblin::elf::Elf;

use crate::e2k::E2kFlags;
use crate::ident::{Class, Endianness};
use crate::machine::Machine;

/// Size of `e_ident`, the identification bytes every ELF file starts with.
const EI_NIDENT: usize = 16;
/// Size of the ELF header of a 32-bit file (`Elf32_Ehdr`), in bytes.
const EHDR32_SIZE_BYTES: usize = 52;
/// Size of the ELF header of a 64-bit file (`Elf64_Ehdr`), in bytes.
const EHDR64_SIZE_BYTES: usize = 64;

/// How a file gets its libraries at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linking {
    /// No `PT_INTERP` and no `PT_DYNAMIC`: a classic static executable.
    Static,
    /// No `PT_INTERP` and no `DT_NEEDED`, but a `PT_DYNAMIC` segment in an `ET_DYN` file: a
    /// static position-independent executable (what `+crt-static` gives on x86_64 and
    /// aarch64 glibc targets). Needs nothing from the system at run time.
    StaticPie,
    /// Has a `PT_INTERP` (program interpreter) or `DT_NEEDED` libraries.
    Dynamic,
}

impl Linking {
    /// Whether the file needs nothing from the system at run time (`Static` or `StaticPie`).
    pub fn is_static(self) -> bool {
        matches!(self, Linking::Static | Linking::StaticPie)
    }
}

impl fmt::Display for Linking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Linking::Static => "static",
            Linking::StaticPie => "static (static-pie)",
            Linking::Dynamic => "dynamic",
        })
    }
}

/// A glibc symbol version such as `GLIBC_2.34` or `GLIBC_2.2.5` (major.minor[.patch]).
/// Ordered numerically: 2.9 < 2.17 < 2.34.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GlibcVersion {
    /// Major version (2 for every glibc in use).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Patch level; 0 when the name has none (`GLIBC_2.34`).
    pub patch: u32,
}

impl GlibcVersion {
    /// Parses the part after `GLIBC_`: `2.34`, `2.2.5`. `None` for anything else
    /// (`GLIBC_PRIVATE`, `2`, `2.x`).
    pub fn parse_numbers(text: &str) -> Option<GlibcVersion> {
        let mut parts = text.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = match parts.next() {
            Some(p) => p.parse().ok()?,
            None => 0,
        };
        if parts.next().is_some() {
            return None;
        }
        Some(GlibcVersion {
            major,
            minor,
            patch,
        })
    }

    /// Parses a symbol version name `GLIBC_2.34`; `None` for other names.
    pub fn from_symbol_version(name: &str) -> Option<GlibcVersion> {
        GlibcVersion::parse_numbers(name.strip_prefix("GLIBC_")?)
    }
}

impl FromStr for GlibcVersion {
    type Err = String;

    /// `2.34` or `2.2.5`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        GlibcVersion::parse_numbers(text).ok_or_else(|| {
            format!(
                "expected a glibc version such as \"2.17\", got {}",
                hwsurvey_model::text::quote(text)
            )
        })
    }
}

impl fmt::Display for GlibcVersion {
    /// `2.34`, or `2.2.5` when there is a patch level.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)?;
        if self.patch != 0 {
            write!(f, ".{}", self.patch)?;
        }
        Ok(())
    }
}

/// What hwsurvey reads from an ELF file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfInfo {
    /// `e_ident[EI_CLASS]`.
    pub class: Class,
    /// `e_ident[EI_DATA]`.
    pub endianness: Endianness,
    /// `e_ident[EI_OSABI]` (0 = System V, 3 = GNU/Linux); see [`os_abi_name`].
    pub os_abi: u8,
    /// `e_type` (2 = `ET_EXEC`, 3 = `ET_DYN`).
    pub e_type: u16,
    /// `e_machine`.
    pub machine: Machine,
    /// `e_flags`, raw: its meaning depends on the machine (see [`ElfInfo::e2k_flags`]).
    pub e_flags: u32,
    /// The program interpreter named by `PT_INTERP`, if any.
    pub interpreter: Option<String>,
    /// Static, static-pie or dynamic.
    pub linking: Linking,
    /// `DT_NEEDED` entries, in file order.
    pub needed: Vec<String>,
    /// The newest `GLIBC_x.y` version named in `SHT_GNU_verneed`; `None` when the file needs
    /// no versioned glibc symbol (static files, or files without symbol versioning).
    pub newest_glibc: Option<GlibcVersion>,
}

impl ElfInfo {
    /// The decoded e2k `e_flags`, for `EM_MCST_ELBRUS` files only.
    pub fn e2k_flags(&self) -> Option<E2kFlags> {
        (self.machine == Machine::MCST_ELBRUS).then_some(E2kFlags {
            e_flags: self.e_flags,
        })
    }
}

/// Name of an `EI_OSABI` value.
pub fn os_abi_name(os_abi: u8) -> String {
    match os_abi {
        0 => "UNIX System V (0)".to_owned(),
        1 => "HP-UX (1)".to_owned(),
        2 => "NetBSD (2)".to_owned(),
        3 => "GNU/Linux (3)".to_owned(),
        6 => "Solaris (6)".to_owned(),
        9 => "FreeBSD (9)".to_owned(),
        12 => "OpenBSD (12)".to_owned(),
        64 => "ARM EABI (64)".to_owned(),
        97 => "ARM (97)".to_owned(),
        255 => "standalone (255)".to_owned(),
        other => format!("unknown OS ABI {other}"),
    }
}

fn e_type_name(e_type: u16) -> String {
    match e_type {
        0 => "NONE (0)".to_owned(),
        1 => "REL (1, relocatable object)".to_owned(),
        2 => "EXEC (2, executable)".to_owned(),
        3 => "DYN (3, position-independent executable or shared object)".to_owned(),
        4 => "CORE (4)".to_owned(),
        other => format!("unknown type {other}"),
    }
}

impl fmt::Display for ElfInfo {
    /// One `key: value` line per fact, as `hwsurvey elf` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "machine:      {}", self.machine)?;
        writeln!(f, "class:        {}", self.class)?;
        writeln!(f, "endianness:   {}", self.endianness)?;
        writeln!(f, "OS ABI:       {}", os_abi_name(self.os_abi))?;
        writeln!(f, "type:         {}", e_type_name(self.e_type))?;
        match &self.interpreter {
            Some(interp) => writeln!(f, "interpreter:  {interp}")?,
            None => writeln!(f, "interpreter:  none")?,
        }
        writeln!(f, "linking:      {}", self.linking)?;
        if self.needed.is_empty() {
            writeln!(f, "needed:       none")?;
        } else {
            writeln!(f, "needed:       {}", self.needed.join(", "))?;
        }
        match self.newest_glibc {
            Some(v) => writeln!(f, "newest glibc: GLIBC_{v}")?,
            None => writeln!(f, "newest glibc: none required")?,
        }
        write!(f, "e_flags:      {:#x}", self.e_flags)?;
        if let Some(e2k) = self.e2k_flags() {
            write!(f, "\ne2k:          {e2k}")?;
        }
        Ok(())
    }
}

/// Why bytes are not an ELF file hwsurvey can read. Each message is one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// Zero bytes.
    #[error("empty file, expected an ELF file (starting with 7f 45 4c 46)")]
    Empty,
    /// The first bytes are not `\x7fELF`.
    #[error("not an ELF file: expected magic 7f 45 4c 46, found {found}{hint}")]
    NotElf {
        /// The first (up to 4) bytes, in hex.
        found: String,
        /// What the bytes look like, when recognisable (` (a PNG image)`).
        hint: &'static str,
    },
    /// The file ends before the ELF header does.
    #[error("truncated ELF file: {len_bytes} bytes, but the {what} needs {needed_bytes}")]
    Truncated {
        /// File length in bytes.
        len_bytes: usize,
        /// What was cut off (`identification`, `ELF64 header`).
        what: &'static str,
        /// Bytes that part needs.
        needed_bytes: usize,
    },
    /// `e_ident[EI_CLASS]` or `e_ident[EI_DATA]` has a value the ELF specification does not define.
    #[error("bad ELF identification: {field} is {value}, expected 1 or 2")]
    BadIdent {
        /// `EI_CLASS` or `EI_DATA`.
        field: &'static str,
        /// The byte found.
        value: u8,
    },
    /// A program header's file range (`p_offset` + `p_filesz`) ends past the end of the file:
    /// the file was cut off.
    #[error("truncated ELF file: {len_bytes} bytes, but program header {index} ({kind}) covers bytes up to {end_bytes}")]
    SegmentOutsideFile {
        /// File length in bytes.
        len_bytes: usize,
        /// Index of the program header.
        index: usize,
        /// Its `p_type`, named.
        kind: String,
        /// `p_offset + p_filesz`.
        end_bytes: u64,
    },
    /// goblin refused the rest of the file (truncated or inconsistent tables).
    #[error("malformed ELF file: {0}")]
    Malformed(String),
}

/// An [`inspect_file`] failure, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    /// The file could not be read, is not a regular file (a FIFO, a device such as
    /// `/dev/zero`, a directory) or is larger than [`MAX_ELF_BYTES`]; names the path.
    #[error(transparent)]
    File(hwsurvey_model::files::FileError),
    /// The bytes are not a readable ELF file.
    #[error("{path}: {error}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        error: FormatError,
    },
}

fn magic_hint(bytes: &[u8]) -> &'static str {
    if bytes.starts_with(b"\x89PNG") {
        " (a PNG image)"
    } else if bytes.starts_with(b"#!") {
        " (a script)"
    } else if bytes.starts_with(b"MZ") {
        " (a PE/DOS executable)"
    } else if bytes.starts_with(b"\x1f\x8b") {
        " (gzip data)"
    } else if bytes.starts_with(&[0xcf, 0xfa, 0xed, 0xfe])
        || bytes.starts_with(&[0xfe, 0xed, 0xfa, 0xcf])
    {
        " (a Mach-O file)"
    } else {
        ""
    }
}

/// The identity fields of an ELF header, from [`parse_header`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElfHeader {
    /// `e_ident[EI_CLASS]`.
    pub class: Class,
    /// `e_ident[EI_DATA]`.
    pub endianness: Endianness,
    /// `e_ident[EI_OSABI]` (0 = System V, 3 = GNU/Linux).
    pub os_abi: u8,
    /// `e_machine`, named by the one table in [`crate::machine`].
    pub machine: Machine,
}

impl ElfHeader {
    /// 32 or 64, from the class.
    pub fn class_bits(&self) -> u8 {
        match self.class {
            Class::Elf32 => 32,
            Class::Elf64 => 64,
        }
    }
}

/// Reads only the ELF header (the first 52 bytes of an ELF32 file, 64 of an ELF64 file):
/// the one header reader of hwsurvey ([`inspect`] starts with it; the probe reads the running
/// binary's header with it). Never panics.
///
/// # Errors
/// [`FormatError`] when the bytes are empty, not ELF, shorter than the header, or carry an
/// unknown class or data encoding.
pub fn parse_header(bytes: &[u8]) -> Result<ElfHeader, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::Empty);
    }
    if bytes.len() < SELFMAG || &bytes[..SELFMAG] != ELFMAG {
        let found = bytes
            .iter()
            .take(SELFMAG)
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ");
        return Err(FormatError::NotElf {
            found,
            hint: magic_hint(bytes),
        });
    }
    let ident = bytes.get(..EI_NIDENT).ok_or(FormatError::Truncated {
        len_bytes: bytes.len(),
        what: "ELF identification (e_ident)",
        needed_bytes: EI_NIDENT,
    })?;
    let (class, header_size) = match ident.get(EI_CLASS).copied().unwrap_or(0) {
        1 => (Class::Elf32, EHDR32_SIZE_BYTES),
        2 => (Class::Elf64, EHDR64_SIZE_BYTES),
        value => {
            return Err(FormatError::BadIdent {
                field: "EI_CLASS",
                value,
            })
        }
    };
    let endianness = match ident.get(EI_DATA).copied().unwrap_or(0) {
        1 => Endianness::Little,
        2 => Endianness::Big,
        value => {
            return Err(FormatError::BadIdent {
                field: "EI_DATA",
                value,
            })
        }
    };
    if bytes.len() < header_size {
        return Err(FormatError::Truncated {
            len_bytes: bytes.len(),
            what: match class {
                Class::Elf32 => "ELF32 header",
                Class::Elf64 => "ELF64 header",
            },
            needed_bytes: header_size,
        });
    }
    let os_abi = ident.get(EI_OSABI).copied().unwrap_or(0);
    let header =
        Elf::parse_header(bytes).map_err(|e| FormatError::Malformed(one_line(&e.to_string())))?;
    Ok(ElfHeader {
        class,
        endianness,
        os_abi,
        machine: Machine(header.e_machine),
    })
}

/// Reads the facts of an ELF file from its bytes.
///
/// The identification and header are checked by [`parse_header`] before goblin parses the rest, so that
/// empty, short and non-ELF inputs get a precise message. Never panics.
///
/// # Errors
/// [`FormatError`] when the bytes are empty, not ELF, truncated, or inconsistent.
pub fn inspect(bytes: &[u8]) -> Result<ElfInfo, FormatError> {
    let ElfHeader {
        class,
        endianness,
        os_abi,
        ..
    } = parse_header(bytes)?;
    let elf = Elf::parse(bytes).map_err(|e| FormatError::Malformed(one_line(&e.to_string())))?;

    for (index, ph) in elf.program_headers.iter().enumerate() {
        let end = ph.p_offset.checked_add(ph.p_filesz);
        if end.is_none_or(|end| end > bytes.len() as u64) {
            return Err(FormatError::SegmentOutsideFile {
                len_bytes: bytes.len(),
                index,
                kind: goblin::elf::program_header::pt_to_str(ph.p_type).to_owned(),
                end_bytes: end.unwrap_or(u64::MAX),
            });
        }
    }
    let has_dynamic = elf.program_headers.iter().any(|ph| ph.p_type == PT_DYNAMIC);
    let interpreter = elf.interpreter.map(str::to_owned);
    let needed: Vec<String> = elf.libraries.iter().map(|s| (*s).to_owned()).collect();
    let linking = if interpreter.is_some() || !needed.is_empty() {
        Linking::Dynamic
    } else if has_dynamic && elf.header.e_type == ET_DYN {
        Linking::StaticPie
    } else {
        Linking::Static
    };
    let mut newest_glibc = None;
    if let Some(verneed) = &elf.verneed {
        for need_file in verneed.iter() {
            for need_ver in need_file.iter() {
                let version = elf
                    .dynstrtab
                    .get_at(need_ver.vna_name)
                    .and_then(GlibcVersion::from_symbol_version);
                if version > newest_glibc {
                    newest_glibc = version;
                }
            }
        }
    }
    Ok(ElfInfo {
        class,
        endianness,
        os_abi,
        e_type: elf.header.e_type,
        machine: Machine(elf.header.e_machine),
        e_flags: elf.header.e_flags,
        interpreter,
        linking,
        needed,
        newest_glibc,
    })
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Largest ELF file [`inspect_file`] reads, bytes (1 GiB): goblin parses the whole file.
pub const MAX_ELF_BYTES: u64 = 1 << 30;

/// Reads `path` (a regular file of at most [`MAX_ELF_BYTES`], see
/// [`hwsurvey_model::files::read_regular`]) and [`inspect`]s it.
///
/// # Errors
/// [`ElfError::File`] when the file cannot be read, is not a regular file (a FIFO is refused
/// without blocking, `/dev/zero` without reading) or is too large; [`ElfError::Format`] when
/// it is not a readable ELF file; both name the path.
pub fn inspect_file(path: &Path) -> Result<ElfInfo, ElfError> {
    let bytes = hwsurvey_model::files::read_regular(path, "an ELF file", MAX_ELF_BYTES)
        .map_err(ElfError::File)?;
    inspect(&bytes).map_err(|error| ElfError::Format {
        path: path.to_owned(),
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_versions_order_numerically() {
        let v = |s: &str| GlibcVersion::from_symbol_version(s).unwrap();
        assert!(v("GLIBC_2.9") < v("GLIBC_2.17"));
        assert!(v("GLIBC_2.2.5") < v("GLIBC_2.3"));
        assert!(v("GLIBC_2.34") > v("GLIBC_2.33"));
        assert_eq!(v("GLIBC_2.2.5").to_string(), "2.2.5");
        assert_eq!(GlibcVersion::from_symbol_version("GLIBC_PRIVATE"), None);
        assert_eq!(GlibcVersion::from_symbol_version("GCC_3.0"), None);
        assert_eq!(GlibcVersion::from_symbol_version("GLIBC_2.3.4.5"), None);
    }

    #[test]
    fn short_inputs_get_precise_errors() {
        assert_eq!(inspect(b""), Err(FormatError::Empty));
        assert_eq!(
            inspect(b"\x7fEL").unwrap_err().to_string(),
            "not an ELF file: expected magic 7f 45 4c 46, found 7f 45 4c"
        );
        assert_eq!(
            inspect(b"\x7fELF").unwrap_err().to_string(),
            "truncated ELF file: 4 bytes, but the ELF identification (e_ident) needs 16"
        );
        let mut ident = b"\x7fELF\x02\x01\x01".to_vec();
        ident.resize(40, 0);
        assert_eq!(
            inspect(&ident).unwrap_err().to_string(),
            "truncated ELF file: 40 bytes, but the ELF64 header needs 64"
        );
        ident[4] = 7;
        assert_eq!(
            inspect(&ident).unwrap_err().to_string(),
            "bad ELF identification: EI_CLASS is 7, expected 1 or 2"
        );
    }
}

//! The ELF identity of a binary (class, machine, endianness), read by the `hwsurvey_elf`
//! library (the same reader and the same one-line errors as `hwsurvey elf`).

use hwsurvey_elf::{inspect, inspect_file, Class, ElfError, ElfInfo, Endianness};

use crate::facts::BinaryFacts;

/// A file that is not an ELF binary we can read. Renders as one line,
/// `FILE: not an ELF file: expected magic 7f 45 4c 46, found 89 50 4e 47 (a PNG image)`,
/// worded as `hwsurvey elf` words it ([`hwsurvey_elf::FormatError`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct BinaryError {
    /// The file.
    pub path: String,
    /// What was wrong (`cannot read: ...`, `not an ELF file: ...`, `truncated ELF file: ...`).
    pub reason: String,
}

/// The identity qualify checks, from what `hwsurvey_elf` read.
pub fn binary_facts(path: &str, info: &ElfInfo) -> BinaryFacts {
    BinaryFacts {
        path: path.to_string(),
        class_bits: match info.class {
            Class::Elf32 => 32,
            Class::Elf64 => 64,
        },
        machine: info.machine.0,
        little_endian: info.endianness == Endianness::Little,
    }
}

/// Parses a whole ELF file's bytes with [`hwsurvey_elf::inspect`]. Pure.
///
/// # Errors
/// [`BinaryError`] naming `path` when the bytes are empty, not ELF, truncated or malformed.
pub fn parse_elf_header(path: &str, bytes: &[u8]) -> Result<BinaryFacts, BinaryError> {
    inspect(bytes)
        .map(|info| binary_facts(path, &info))
        .map_err(|e| BinaryError {
            path: path.to_string(),
            reason: e.to_string(),
        })
}

/// Reads the ELF file at `path` with [`hwsurvey_elf::inspect_file`].
///
/// # Errors
/// [`BinaryError`] naming the file when it cannot be read or is not a readable ELF file.
pub fn read_elf_header(path: &std::path::Path) -> Result<BinaryFacts, BinaryError> {
    let shown = path.display().to_string();
    inspect_file(path)
        .map(|info| binary_facts(&shown, &info))
        .map_err(|e| BinaryError {
            reason: match e {
                ElfError::File(e) => e.problem.to_string(),
                ElfError::Format { error, .. } => error.to_string(),
            },
            path: shown,
        })
}

/// The binary qualify checks against the kernel: `given` (`qualify --binary FILE`), else on
/// the live machine the running binary (`/proc/self/exe` through `std::env::current_exe`);
/// in a snapshot without `given`, unknown with the way to check one.
///
/// # Errors
/// [`BinaryError`] when `given` cannot be read or is not an ELF file (an input error: the
/// user named it). The running binary that cannot be read is an unknown fact, not an error.
pub fn binary_fact(
    given: Option<&std::path::Path>,
    live: bool,
) -> Result<hwsurvey_model::Probed<BinaryFacts>, BinaryError> {
    use hwsurvey_model::{Probed, Unknown};
    Ok(match (given, live) {
        (Some(path), _) => Probed::Known(read_elf_header(path)?),
        (None, true) => match std::env::current_exe() {
            Ok(exe) => match read_elf_header(&exe) {
                Ok(b) => Probed::Known(b),
                Err(e) => Probed::Unknown(Unknown::Other {
                    detail: e.to_string(),
                }),
            },
            Err(e) => Probed::Unknown(Unknown::Other {
                detail: format!("cannot locate the running binary: {e}"),
            }),
        },
        (None, false) => Probed::Unknown(Unknown::Other {
            detail: "a snapshot: pass --binary FILE to check a binary against its kernel".into(),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(class: u8, data: u8, machine: u16) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = class;
        h[5] = data;
        h[6] = 1;
        let m = if data == 1 {
            machine.to_le_bytes()
        } else {
            machine.to_be_bytes()
        };
        h[16] = if data == 1 { 2 } else { 0 };
        h[17] = if data == 1 { 0 } else { 2 };
        h[18..20].copy_from_slice(&m);
        if data == 1 {
            h[20] = 1
        } else {
            h[23] = 1
        }
        h
    }

    #[test]
    fn classes_and_machines() {
        let b = parse_elf_header("x", &header(1, 1, 3)).unwrap();
        assert_eq!((b.class_bits, b.machine, b.little_endian), (32, 3, true));
        let b = parse_elf_header("x", &header(2, 2, 43)).unwrap();
        assert_eq!((b.class_bits, b.machine, b.little_endian), (64, 43, false));
        let e = parse_elf_header("notes.txt", b"hello world").unwrap_err();
        assert_eq!(
            e.to_string(),
            "notes.txt: not an ELF file: expected magic 7f 45 4c 46, found 68 65 6c 6c"
        );
        // the same one-liner as `hwsurvey elf`, never goblin's "Invalid magic number"
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(
            parse_elf_header("img.png", png).unwrap_err().to_string(),
            "img.png: not an ELF file: expected magic 7f 45 4c 46, found 89 50 4e 47 (a PNG image)"
        );
        let e = parse_elf_header("short", &header(2, 1, 62)[..30]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "short: truncated ELF file: 30 bytes, but the ELF64 header needs 64"
        );
    }

    #[test]
    fn reads_this_test_binary() {
        let exe = std::env::current_exe().unwrap();
        let b = read_elf_header(&exe).unwrap();
        assert_eq!(b.class_bits as usize, 8 * std::mem::size_of::<usize>());
        assert_eq!(b.little_endian, cfg!(target_endian = "little"));
    }
}

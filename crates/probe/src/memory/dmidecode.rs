//! The reader of saved `dmidecode` text from a file the user named (`hwsurvey probe
//! --dmidecode FILE`): [`read_dmidecode_file`], bounded and refused when it is no text;
//! [`read_dmidecode_text_file`] also gives what the text says of its machine, which [`fit`]
//! holds against the machine probed. The parsers are `hwsurvey_machine::memory::dmidecode`
//! (the memory records), `hwsurvey_machine::dmidecode` (the records of every type) and
//! `hwsurvey_machine::firmware::from_dmidecode_text` (BIOS, system, board); the first two are
//! re-exported here.

pub mod fit;

use std::path::{Path, PathBuf};

use hwsurvey_model::files::{read_regular, FileError};

use super::{SmbiosMemory, SmbiosSource};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::dmidecode::records_of_types;
pub use hwsurvey_machine::memory::dmidecode::*;

/// Largest `dmidecode` text read from a file, bytes (16 MiB): a whole `dmidecode` of a large
/// server is a few hundred KiB.
pub const MAX_DMIDECODE_TEXT_BYTES: u64 = 16 << 20;

/// Why a `dmidecode` text file named by the user could not be used; one line, starting with
/// the file's path.
#[derive(Debug, thiserror::Error)]
pub enum DmidecodeFileError {
    /// Not readable: missing, a directory or a device, larger than
    /// [`MAX_DMIDECODE_TEXT_BYTES`], an I/O error.
    #[error(transparent)]
    File(#[from] FileError),
    /// Holds a NUL byte: binary data such as a raw DMI table (`dmidecode --dump-bin`,
    /// `/sys/firmware/dmi/tables/DMI`), not text.
    #[error(
        "{}: binary data (a NUL byte at offset {offset}), not the text `dmidecode` prints; \
         save it with `dmidecode -t memory > FILE` (or the whole `dmidecode` output)",
        path.display()
    )]
    Binary {
        /// The file as named.
        path: PathBuf,
        /// Offset of the first NUL byte.
        offset: usize,
    },
    /// Text, but not `dmidecode` output with Memory Device records.
    #[error("{}: {source}", path.display())]
    Text {
        /// The file as named.
        path: PathBuf,
        /// What the parser found.
        source: DmidecodeError,
    },
}

/// Reads and parses the `dmidecode` text saved in `path` (a regular file of at most
/// [`MAX_DMIDECODE_TEXT_BYTES`]). Bytes that are not UTF-8 (dmidecode passes a firmware
/// string's bytes through) become U+FFFD. The records' source names the file
/// ([`SmbiosSource::DmidecodeText::file`], the path as given).
///
/// # Errors
/// [`DmidecodeFileError`], one line naming `path`: unreadable or not a regular file, binary
/// data, empty, or no `DMI type 17` record.
pub fn read_dmidecode_file(path: &Path) -> Result<SmbiosMemory, DmidecodeFileError> {
    read_dmidecode_file_with_firmware(path).map(|(memory, _)| memory)
}

/// [`read_dmidecode_file`], and the BIOS, system and board of the same text
/// ([`hwsurvey_machine::firmware::from_dmidecode_text`]; `None` for `dmidecode -t memory` text).
///
/// # Errors
/// As [`read_dmidecode_file`].
pub fn read_dmidecode_file_with_firmware(
    path: &Path,
) -> Result<(SmbiosMemory, Option<hwsurvey_machine::firmware::DmiIds>), DmidecodeFileError> {
    read_dmidecode_text_file(path).map(|t| (t.memory, t.firmware))
}

/// A saved `dmidecode` text read from a file ([`read_dmidecode_text_file`]).
#[derive(Debug, Clone)]
pub struct DmidecodeText {
    /// Its SMBIOS memory records (Types 16, 17, 19, 20), their source naming the file.
    pub memory: SmbiosMemory,
    /// Its BIOS, system and board (Types 0, 1, 2); `None` for `dmidecode -t memory` text.
    pub firmware: Option<hwsurvey_machine::firmware::DmiIds>,
    /// What it says of the machine it was saved on, for [`fit::fit`].
    pub identity: fit::TextIdentity,
}

/// [`read_dmidecode_file_with_firmware`], and what the text says of its machine
/// ([`fit::TextIdentity::of_text`]).
///
/// # Errors
/// As [`read_dmidecode_file`].
pub fn read_dmidecode_text_file(path: &Path) -> Result<DmidecodeText, DmidecodeFileError> {
    let bytes = read_regular(path, "a dmidecode text", MAX_DMIDECODE_TEXT_BYTES)?;
    if let Some(offset) = bytes.iter().position(|b| *b == 0) {
        return Err(DmidecodeFileError::Binary {
            path: path.to_owned(),
            offset,
        });
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut memory = parse_dmidecode_text(&text).map_err(|source| DmidecodeFileError::Text {
        path: path.to_owned(),
        source,
    })?;
    if let SmbiosSource::DmidecodeText { file, .. } = &mut memory.source {
        *file = Some(path.display().to_string());
    }
    let firmware =
        hwsurvey_machine::firmware::from_dmidecode_text(&text, Some(&path.display().to_string()));
    let identity = fit::TextIdentity::of_text(&text, &memory);
    Ok(DmidecodeText {
        memory,
        firmware,
        identity,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_SLOTS: &str = "# dmidecode 3.2\nSMBIOS 3.2 present.\n\n\
        Handle 0x1100, DMI type 17, 84 bytes\nMemory Device\n\tArray Handle: 0x1000\n\
        \tSize: 8 GB\n\tLocator: A1\n\tType: DDR4\n\tSpeed: 3200 MT/s\n\tRank: 1\n\
        \tConfigured Memory Speed: 2400 MT/s\n";

    #[test]
    fn files_name_their_path_and_what_is_wrong() {
        let dir = std::env::temp_dir().join(format!("hwsurvey-dmidecode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.txt");
        std::fs::write(&good, TWO_SLOTS).unwrap();
        let m = read_dmidecode_file(&good).unwrap();
        assert_eq!(
            m.source,
            SmbiosSource::DmidecodeText {
                dmidecode_version: Some("3.2".into()),
                file: Some(good.display().to_string()),
            }
        );
        let cases: [(&str, &[u8], &str); 3] = [
            ("empty.txt", b" \n\n", "empty: expected `dmidecode` output"),
            (
                "dump.bin",
                b"_SM3_\x18\x00\x03",
                "binary data (a NUL byte at offset 6)",
            ),
            (
                "lscpu.txt",
                b"Architecture: x86_64\n",
                "found none in 1 lines (no \"Handle 0x..., DMI type N\" record at all",
            ),
        ];
        for (name, bytes, problem) in cases {
            let p = dir.join(name);
            std::fs::write(&p, bytes).unwrap();
            let e = read_dmidecode_file(&p).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{}: ", p.display())), "{e}");
            assert!(e.contains(problem), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = read_dmidecode_file(&dir).unwrap_err().to_string();
        assert!(e.contains("is a directory, not a regular file"), "{e}");
        let e = read_dmidecode_file(&dir.join("absent"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A `dmidecode` text file the user named (`--dmidecode FILE` of probe and qualify), read
/// ([`DmidecodeFile::read`]), held against the machine probed ([`DmidecodeFile::check`]) and
/// put in place of its records ([`DmidecodeFile::apply`]): the one merge both commands use.
pub struct DmidecodeFile {
    path: PathBuf,
    text: DmidecodeText,
}

/// What [`DmidecodeFile::check`] has to say when the text may be used.
#[derive(Debug, Default)]
pub struct DmidecodeCheck {
    /// Nothing could be compared (the text names no system, sockets or memory size): one
    /// line for stderr, naming the file and what was missing.
    pub unchecked: Option<String>,
    /// The text is another machine's and `--dmidecode-other-machine` said so: the line that
    /// must stand before the DIMMs and firmware shown.
    pub other_machine: Option<String>,
}

impl DmidecodeFile {
    /// Reads `file` ([`read_dmidecode_text_file`]).
    ///
    /// # Errors
    /// One line, `--dmidecode ` then the file and what is wrong with it: unreadable, not a
    /// regular file, binary, empty, or without `DMI type 17` Memory Device records.
    pub fn read(file: &Path) -> Result<DmidecodeFile, String> {
        read_dmidecode_text_file(file)
            .map(|text| DmidecodeFile {
                path: file.to_owned(),
                text,
            })
            .map_err(|e| format!("--dmidecode {e}"))
    }

    /// Holds the text against `machine` as probed, before [`DmidecodeFile::apply`]
    /// ([`fit::fit`]): with `other_machine` (`--dmidecode-other-machine`) a misfit becomes
    /// the note that says so.
    ///
    /// # Errors
    /// Each fact that disagrees (system identity, sockets, installed memory), naming the file,
    /// and the option that reads it anyway.
    pub fn check(
        &self,
        machine: &crate::Machine,
        other_machine: bool,
    ) -> Result<DmidecodeCheck, String> {
        let fit = fit::fit(&self.text.identity, machine);
        let unchecked = (fit.checked.is_empty() && fit.misfits.is_empty()).then(|| {
            format!(
                "--dmidecode {}: not checked against this machine ({})",
                self.path.display(),
                fit.unchecked.join("; ")
            )
        });
        match fit.check(&self.path) {
            Ok(_) => Ok(DmidecodeCheck {
                unchecked,
                other_machine: None,
            }),
            Err(e) if other_machine => Ok(DmidecodeCheck {
                unchecked,
                other_machine: Some(format!(
                    "the DIMMs and firmware below are another machine's \
                     (--dmidecode-other-machine): {e}"
                )),
            }),
            Err(e) => Err(format!(
                "--dmidecode {e}; add --dmidecode-other-machine to read it anyway, as that machine's"
            )),
        }
    }

    /// Puts the file's records in place of the machine's: the memory records always
    /// ([`super::Memory::set_smbios`]), the firmware strings where the text has them. Their
    /// sources name the file, and so do the summary's sections.
    pub fn apply(self, machine: &mut crate::Machine) {
        machine.memory.set_smbios(self.text.memory);
        if let Some(f) = self.text.firmware {
            machine.firmware = hwsurvey_model::Probed::Known(f);
        }
    }
}

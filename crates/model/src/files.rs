//! Files the user names: reading them ([`read_regular`]) and writing outputs ([`output`]).
//!
//! Reading a file the user named on the command line (an ELF file, a rules file, a profile, a
//! target descriptor, a result file): only regular files, and at most a stated number of bytes.
//!
//! A FIFO opened for reading blocks until a writer appears, and a character device such as
//! `/dev/zero` never ends; both are refused before the file is opened, by the file type that
//! [`std::fs::metadata`] reports (symlinks followed). With the `sys` feature the file is
//! opened with `O_NONBLOCK`, so a FIFO swapped in between the check and the open cannot block
//! either; the type of the opened file is checked again (`fstat`) in every build. The read
//! goes through `Read::take(max_bytes + 1)`, so the cap holds whatever the metadata says (a
//! file growing while read, a `/proc` file of size 0).

pub mod output;

pub use output::{
    check_output, check_output_reading, write_atomic, AtomicFile, OutputError, OutputLock,
    ScannedFolder,
};

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Why a user-named file was not read; renders as one line, `PATH: problem`.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct FileError {
    /// The file as the user named it.
    pub path: PathBuf,
    /// What was wrong.
    pub problem: FileProblem,
}

/// What was wrong with a user-named file (the message without the path, for errors that
/// carry the path themselves).
#[derive(Debug, thiserror::Error)]
pub enum FileProblem {
    /// The OS refused (no such file, permission denied, an I/O error while reading).
    #[error("cannot read: {0}")]
    Io(std::io::Error),
    /// Not a regular file: a read could block (FIFO, socket) or never end (a device).
    #[error("is {kind}, not a regular file; {what} must be a regular file")]
    NotRegular {
        /// What it is: `"a directory"`, `"a FIFO (named pipe)"`, `"a character device"`,
        /// `"a block device"`, `"a socket"`.
        kind: &'static str,
        /// What the file was to be (`"a rules file"`).
        what: &'static str,
    },
    /// Larger than the cap.
    #[error("{size}, larger than the {} limit for {what}", human_bytes(*max_bytes))]
    TooLarge {
        /// Its size as known.
        size: Size,
        /// The cap, bytes.
        max_bytes: u64,
        /// What the file was to be (`"an ELF file"`).
        what: &'static str,
    },
    /// Read as text, but not UTF-8.
    #[error("not UTF-8 text (invalid byte at offset {valid_up_to}); {what} is a text file")]
    NotUtf8 {
        /// Bytes before the first invalid sequence.
        valid_up_to: usize,
        /// What the file was to be (`"a profile"`).
        what: &'static str,
    },
}

/// Size of a file over the cap: from its metadata, or from a read that did not end there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// `st_size`, bytes.
    Exactly(u64),
    /// A read delivered more than this many bytes (the cap) and was stopped.
    MoreThan(u64),
}

impl fmt::Display for Size {
    /// `1073741825 bytes` or `more than 1073741824 bytes`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Exactly(n) => write!(f, "{n} bytes"),
            Size::MoreThan(n) => write!(f, "more than {n} bytes"),
        }
    }
}

/// A byte count as people write a cap: `1 GiB`, `64 MiB`, `4 KiB` when a whole number of
/// those binary units (2^30, 2^20, 2^10), else `N bytes`.
pub fn human_bytes(n: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n != 0 && n.trailing_zeros() >= shift {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} bytes")
}

/// What a file that is not a regular file is, for [`FileProblem::NotRegular`].
pub fn kind_of(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// Reads the regular file at `path` (symlinks followed), at most `max_bytes` bytes.
///
/// `what` names what the file is for, with its article (`"an ELF file"`), in the messages.
///
/// # Errors
/// [`FileError`] naming `path`: [`FileProblem::NotRegular`] for a directory, FIFO, device or
/// socket (checked before opening, so a FIFO never blocks); [`FileProblem::TooLarge`] when the
/// metadata or the read says more than `max_bytes`; [`FileProblem::Io`] when it cannot be
/// opened or read.
pub fn read_regular(path: &Path, what: &'static str, max_bytes: u64) -> Result<Vec<u8>, FileError> {
    let fail = |problem| FileError {
        path: path.to_owned(),
        problem,
    };
    let check = |meta: &std::fs::Metadata| {
        if !meta.is_file() {
            return Err(fail(FileProblem::NotRegular {
                kind: kind_of(meta.file_type()),
                what,
            }));
        }
        if meta.len() > max_bytes {
            return Err(fail(FileProblem::TooLarge {
                size: Size::Exactly(meta.len()),
                max_bytes,
                what,
            }));
        }
        Ok(())
    };
    check(&std::fs::metadata(path).map_err(|e| fail(FileProblem::Io(e)))?)?;
    let file = open_nonblocking(path).map_err(|e| fail(FileProblem::Io(e)))?;
    // the file opened is the file checked (it may have been replaced in between)
    let meta = file.metadata().map_err(|e| fail(FileProblem::Io(e)))?;
    check(&meta)?;
    let capacity = usize::try_from(meta.len()).unwrap_or(0);
    // a failed allocation is an error naming the size, not an abort: under `ulimit -v` 30 MiB
    // qualify's read of its own 16 MB binary ended the process ("memory allocation of ...
    // bytes failed", breaker finding 2026-12-04)
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(capacity.saturating_add(1))
        .map_err(|_| {
            fail(FileProblem::Io(std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!(
                    "cannot allocate {} bytes to read it (a memory limit: ulimit -v, a cgroup?)",
                    capacity.saturating_add(1)
                ),
            )))
        })?;
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| fail(FileProblem::Io(e)))?;
    check_read_size(bytes.len() as u64, max_bytes, what).map_err(fail)?;
    Ok(bytes)
}

/// [`read_regular`], then UTF-8 text.
///
/// # Errors
/// As [`read_regular`], and [`FileProblem::NotUtf8`].
pub fn read_regular_text(
    path: &Path,
    what: &'static str,
    max_bytes: u64,
) -> Result<String, FileError> {
    let bytes = read_regular(path, what, max_bytes)?;
    String::from_utf8(bytes).map_err(|e| FileError {
        path: path.to_owned(),
        problem: FileProblem::NotUtf8 {
            valid_up_to: e.utf8_error().valid_up_to(),
            what,
        },
    })
}

/// [`FileProblem::TooLarge`] when a read through `take(max_bytes + 1)` delivered more than
/// `max_bytes`.
fn check_read_size(read_bytes: u64, max_bytes: u64, what: &'static str) -> Result<(), FileProblem> {
    if read_bytes > max_bytes {
        return Err(FileProblem::TooLarge {
            size: Size::MoreThan(max_bytes),
            max_bytes,
            what,
        });
    }
    Ok(())
}

/// Opens for reading; with `O_NONBLOCK` under the `sys` feature (no effect on a regular file's
/// reads; a FIFO's open returns at once instead of waiting for a writer).
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(all(unix, feature = "sys"))]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(nix::libc::O_NONBLOCK);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_are_written_in_binary_units() {
        assert_eq!(human_bytes(1 << 30), "1 GiB");
        assert_eq!(human_bytes(64 << 20), "64 MiB");
        assert_eq!(human_bytes(4096), "4 KiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
        assert_eq!(human_bytes(0), "0 bytes");
    }

    #[test]
    fn regular_file_is_read_up_to_the_cap() {
        let dir = std::env::temp_dir().join(format!("hwsurvey-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("rules.toml");
        std::fs::write(&f, b"abcd").unwrap();
        assert_eq!(read_regular(&f, "a rules file", 4).unwrap(), b"abcd");
        assert_eq!(read_regular_text(&f, "a rules file", 5).unwrap(), "abcd");
        let e = read_regular(&f, "a rules file", 3).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: 4 bytes, larger than the 3 bytes limit for a rules file",
                f.display()
            )
        );
        std::fs::write(&f, b"ab\xffcd").unwrap();
        let e = read_regular_text(&f, "a profile", 10).unwrap_err();
        assert!(
            e.to_string()
                .ends_with(": not UTF-8 text (invalid byte at offset 2); a profile is a text file"),
            "{e}"
        );
        // a directory, named through a symlink: the link is followed, the target refused
        #[cfg(unix)]
        {
            let link = dir.join("link");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&dir, &link).unwrap();
            let e = read_regular(&link, "an ELF file", 10).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "{}: is a directory, not a regular file; an ELF file must be a regular file",
                    link.display()
                )
            );
        }
        let e = read_regular(&dir.join("absent"), "an ELF file", 10).unwrap_err();
        assert!(matches!(e.problem, FileProblem::Io(_)), "{e}");
        assert!(e.to_string().contains("absent: cannot read: "), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn devices_are_refused_before_reading() {
        for dev in ["/dev/zero", "/dev/null"] {
            let e = read_regular(Path::new(dev), "a target descriptor", 1 << 20).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("{dev}: is a character device, not a regular file; a target descriptor must be a regular file")
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("hwsurvey-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("rules.toml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            println!("SKIPPED: no mkfifo command");
            return;
        }
        // in a thread, so a regression (an open that waits for a writer) fails, not hangs
        let (tx, rx) = std::sync::mpsc::channel();
        let p = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_regular(&p, "a rules file", 1 << 20).map_err(|e| e.to_string()));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("reading a FIFO blocked");
        assert_eq!(
            got.unwrap_err(),
            format!(
                "{}: is a FIFO (named pipe), not a regular file; a rules file must be a regular file",
                fifo.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_read_past_the_cap_is_refused_whatever_the_metadata_said() {
        let e = check_read_size(11, 10, "an ELF file").unwrap_err();
        assert_eq!(
            e.to_string(),
            "more than 10 bytes, larger than the 10 bytes limit for an ELF file"
        );
        assert!(check_read_size(10, 10, "an ELF file").is_ok());
    }
}

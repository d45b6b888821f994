//! A captured machine opened by path, one way for every command that reads one (`probe`,
//! `snapshot`, `qualify`, `run --plan-only`, each through `--root`): a copy of `/` with
//! `proc/` and `sys/`, an extracted snapshot, the folder a snapshot was extracted into (its
//! one `hwsurvey-snapshot/` folder is used), or the archive itself (`.tar.gz`, `.tgz`,
//! `.tar.bz2`, `.tbz2`, `.tar`), unpacked here into a private temporary folder for as long as
//! the [`Capture`] lives.
//!
//! What an archive may do is bounded, so that a crafted one cannot reach outside its folder
//! nor fill the disk ([`unpack`]):
//! - sizes and counts: at most [`limits::TOTAL_BYTES`] decompressed and [`limits::ENTRIES`]
//!   entries (refused before anything is written); a file over [`limits::FILE_BYTES`] is
//!   skipped and reported ([`Capture::skipped`]);
//! - paths: every entry, file, folder or link alike, is created beneath the unpack folder,
//!   and no component of its path may be a symlink (`openat2(2)` with `RESOLVE_BENEATH |
//!   RESOLVE_NO_SYMLINKS`, or a walk of `openat(O_NOFOLLOW)` where the kernel lacks
//!   openat2): an archive holding `etc/x -> /etc` and then `etc/x/nologin/` is refused, and
//!   nothing is created outside; an entry naming `..` is refused too;
//! - device nodes and FIFOs are never created (a capture of /proc and /sys holds none that a
//!   probe reads).
//!
//! The unpack folder is removed when the [`Capture`] is dropped, on an error, and when a
//! terminating signal ends the process ([`cleanup`]).

pub mod cleanup;
pub mod limits;

mod beneath;
mod unpack;

use std::path::{Path, PathBuf};

pub use cleanup::{install_exit_on_signal, remove_registered, TempFolder};
pub use unpack::unpack;

use crate::SysRoot;
use hwsurvey_model::text::path as esc;

/// Why a captured machine could not be opened; one line naming the path as given (control
/// characters escaped), to which a command adds its option (`--root PATH: ...`).
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// Neither a folder nor a file.
    #[error("{}: no such folder or archive", esc(.path))]
    NotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// A file whose name ends in none of the archive endings.
    #[error(
        "{}: is a file, not a folder or a .tar.gz, .tgz, .tar.bz2 or .tar archive",
        esc(.path)
    )]
    NotAnArchive {
        /// The path as given.
        path: PathBuf,
    },
    /// The archive could not be opened or read (permission denied, EIO).
    #[error("{}: cannot read: {error}", esc(.path))]
    Io {
        /// The archive.
        path: PathBuf,
        /// The OS error.
        error: std::io::Error,
    },
    /// Not a tar stream, or a damaged one (bad header, bad compression, cut short).
    #[error("{}: {what}: {detail}", esc(.path))]
    Damaged {
        /// The archive.
        path: PathBuf,
        /// `"not a tar archive"` or `"damaged archive"`.
        what: &'static str,
        /// The decoder's words.
        detail: String,
    },
    /// More than [`limits::TOTAL_BYTES`] once decompressed.
    #[error(
        "{}: holds more than {} MiB once decompressed; a snapshot is a few MiB at most: refusing it",
        esc(.path),
        limits::TOTAL_BYTES >> 20
    )]
    TooLarge {
        /// The archive.
        path: PathBuf,
    },
    /// More than [`limits::ENTRIES`] entries.
    #[error(
        "{}: holds more than {} entries; a snapshot holds a few thousand: refusing it",
        esc(.path),
        limits::ENTRIES
    )]
    TooManyEntries {
        /// The archive.
        path: PathBuf,
    },
    /// The archive's entries differ between the first pass (headers) and the second.
    #[error("{}: changed while it was read ({entry})", esc(.path))]
    Changed {
        /// The archive.
        path: PathBuf,
        /// The entry where it differed, escaped.
        entry: String,
    },
    /// An entry whose path leads outside the unpack folder: through a symlink the archive
    /// made, or by `..`.
    #[error(
        "{}: entry {entry} leads outside the folder it is unpacked into ({how}); refusing the archive",
        esc(.path)
    )]
    Escapes {
        /// The archive.
        path: PathBuf,
        /// The entry, escaped.
        entry: String,
        /// `through the symlink hwsurvey-snapshot/etc/x` or `by ".."`.
        how: String,
    },
    /// An entry that could not be written (ENOSPC, a file where a folder is wanted).
    #[error("{}: cannot unpack {entry}: {error}", esc(.path))]
    Unpack {
        /// The archive.
        path: PathBuf,
        /// The entry, escaped.
        entry: String,
        /// The OS error.
        error: std::io::Error,
    },
    /// No temporary folder could be made (`$TMPDIR` missing, full, not writable).
    #[error("cannot create a temporary folder: {0}")]
    TempFolder(std::io::Error),
    /// Neither it nor its only folder holds `/proc/cpuinfo` or `/sys/devices/system/cpu`.
    #[error(
        "{} does not look like a Linux root or snapshot (no /proc/cpuinfo, no /sys/devices/system/cpu)",
        esc(.path)
    )]
    NotARoot {
        /// The path as given.
        path: PathBuf,
    },
}

/// A file of an archive that was not unpacked because it is larger than
/// [`limits::FILE_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedEntry {
    /// Its path in the archive, escaped for one line.
    pub name: String,
    /// Its size, bytes.
    pub size_bytes: u64,
}

/// A captured machine opened with [`open`]: the probes' door to the folder standing for `/`,
/// and the temporary folder an archive was unpacked into (removed when this is dropped).
pub struct Capture {
    _unpacked: Option<TempFolder>,
    /// What to call it: the folder probed, or for an archive the archive as given (its
    /// temporary folder means nothing to the user); control characters escaped.
    pub shown: String,
    /// The folder standing for `/` ([`SysRoot::root`]).
    pub root: SysRoot,
    /// The files of an archive left out for their size (empty for a folder).
    pub skipped: Vec<SkippedEntry>,
}

impl Capture {
    /// The live machine (`/`, shown as `/`).
    pub fn live() -> Capture {
        Capture {
            _unpacked: None,
            shown: "/".to_string(),
            root: SysRoot::live(),
            skipped: Vec::new(),
        }
    }
}

/// True when `dir` holds `/proc/cpuinfo` or `/sys/devices/system/cpu` (symlinks resolved
/// inside it, as the probes resolve them).
fn looks_like_root(dir: &Path) -> bool {
    let root = SysRoot::new(dir);
    root.exists("/proc/cpuinfo") || root.exists("/sys/devices/system/cpu")
}

/// `dir` when it looks like a root, else its only entry when that is a folder that does (the
/// `hwsurvey-snapshot/` of an extracted snapshot), else `None`.
fn root_folder(dir: &Path) -> Option<PathBuf> {
    if looks_like_root(dir) {
        return Some(dir.to_path_buf());
    }
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    // a real folder: a symlink (an archive may hold `x -> /`) would lead out of the capture
    let is_folder = |p: &Path| p.symlink_metadata().is_ok_and(|m| m.is_dir());
    match entries.as_slice() {
        [one] if is_folder(one) && looks_like_root(one) => Some(one.clone()),
        _ => None,
    }
}

/// The machine a command reads: `path` opened with [`open`], or the live machine without one
/// ([`Capture::live`]).
///
/// # Errors
/// Those of [`open`].
pub fn open_or_live(path: Option<&Path>) -> Result<Capture, CaptureError> {
    match path {
        Some(p) => open(p),
        None => Ok(Capture::live()),
    }
}

/// Opens a captured machine (see the module docs): a folder as it is, an archive unpacked
/// with [`unpack`].
///
/// # Errors
/// [`CaptureError::NotFound`]; an archive's errors ([`unpack`]); and
/// [`CaptureError::NotARoot`] when neither the folder nor its only folder holds
/// `/proc/cpuinfo` or `/sys/devices/system/cpu`.
pub fn open(path: &Path) -> Result<Capture, CaptureError> {
    let (unpacked, skipped, dir) = if path.is_file() {
        let (tmp, skipped) = unpack(path)?;
        let dir = tmp.path().to_path_buf();
        (Some(tmp), skipped, dir)
    } else if path.is_dir() {
        (None, Vec::new(), path.to_path_buf())
    } else {
        return Err(CaptureError::NotFound {
            path: path.to_path_buf(),
        });
    };
    let Some(dir) = root_folder(&dir) else {
        return Err(CaptureError::NotARoot {
            path: path.to_path_buf(),
        });
    };
    let shown = match &unpacked {
        Some(_) => esc(path).into_owned(),
        None => esc(&dir).into_owned(),
    };
    Ok(Capture {
        _unpacked: unpacked,
        shown,
        root: SysRoot::new(dir),
        skipped,
    })
}

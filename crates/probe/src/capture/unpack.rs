//! Unpacking a `--root` archive into a private temporary folder, within [`super::limits`] and
//! beneath the folder ([`super::beneath`]).

use std::cell::Cell;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use super::beneath::{Beneath, Refusal};
use super::{cleanup, limits, CaptureError, SkippedEntry, TempFolder};
use hwsurvey_model::text::path as esc;

/// A reader that fails once more than `left` bytes came through it, and says so in `hit`.
struct Bounded<R> {
    inner: R,
    left: u64,
    hit: Rc<Cell<bool>>,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            self.hit.set(true);
            return Err(std::io::Error::other("archive larger than the limit"));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

type Stream = tar::Archive<Bounded<Box<dyn Read>>>;

/// The decompressed tar stream of archive `path` (by its name's ending), bounded to
/// [`limits::TOTAL_BYTES`]; `hit` turns true when the bound stopped it.
fn tar_stream(path: &Path, hit: &Rc<Cell<bool>>) -> Result<Stream, CaptureError> {
    let name = path.to_string_lossy();
    let kind = if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        0
    } else if name.ends_with(".tar.bz2") || name.ends_with(".tbz2") {
        1
    } else if name.ends_with(".tar") {
        2
    } else {
        return Err(CaptureError::NotAnArchive {
            path: path.to_path_buf(),
        });
    };
    let file = std::fs::File::open(path).map_err(|error| CaptureError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let reader: Box<dyn Read> = match kind {
        0 => Box::new(flate2::read::GzDecoder::new(file)),
        1 => Box::new(bzip2::read::BzDecoder::new(file)),
        _ => Box::new(file),
    };
    Ok(tar::Archive::new(Bounded {
        inner: reader,
        left: limits::TOTAL_BYTES,
        hit: hit.clone(),
    }))
}

/// The error for a failure while reading archive `path`: the total bound when `hit`, else
/// `what` with the cause.
fn read_error(
    path: &Path,
    hit: &Cell<bool>,
    what: &'static str,
    e: std::io::Error,
) -> CaptureError {
    if hit.get() {
        CaptureError::TooLarge {
            path: path.to_path_buf(),
        }
    } else {
        CaptureError::Damaged {
            path: path.to_path_buf(),
            what,
            detail: e.to_string(),
        }
    }
}

/// The plain components of an entry's path: a leading `/` and `.` are dropped (as tar does);
/// `..` is refused, whatever follows it.
fn plain(archive: &Path, name: &Path) -> Result<Vec<OsString>, CaptureError> {
    let mut out = Vec::new();
    for c in name.components() {
        match c {
            Component::Normal(n) => out.push(n.to_os_string()),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                return Err(CaptureError::Escapes {
                    path: archive.to_path_buf(),
                    entry: esc(name).into_owned(),
                    how: "by \"..\"".into(),
                })
            }
        }
    }
    Ok(out)
}

/// An entry's size: the larger of what its header states and what it holds (a sparse file's).
fn size_of<R: Read>(entry: &tar::Entry<'_, R>) -> u64 {
    entry.size().max(entry.header().size().unwrap_or(0))
}

/// Unpacks archive `path` (`.tar.gz`, `.tgz`, `.tar.bz2`, `.tbz2` or `.tar`, by its name)
/// into a new [`TempFolder`], within [`limits`]:
///
/// 1. a first pass reads only the headers (each entry's data is still decompressed and
///    counted) and refuses an archive of more than [`limits::ENTRIES`] entries or
///    [`limits::TOTAL_BYTES`] decompressed, or with an entry naming `..`, before anything is
///    written; files larger than [`limits::FILE_BYTES`] are noted, to be skipped;
/// 2. the second pass makes each entry beneath the folder, no component of its path a
///    symlink ([`super::beneath`]): folders (0700, writable by us whatever the archive says:
///    a copy of `/` holds read-only folders under /proc and /sys, into which nothing could be
///    written, and which could not be removed), regular files (with their permission bits),
///    symlinks (their targets kept as they are: the probes resolve them inside the root) and
///    hard links to an entry made before. Device nodes and FIFOs are not made; nor is a hard
///    link whose target is missing. An entry reached through a symlink refuses the archive.
///
/// Returns the folder (removed when dropped, and by a terminating signal once
/// [`super::install_exit_on_signal`] runs, which [`TempFolder::new`] does) and the files
/// skipped for their size.
///
/// # Errors
/// [`CaptureError::NotAnArchive`], [`CaptureError::Io`], [`CaptureError::Damaged`],
/// [`CaptureError::TooLarge`], [`CaptureError::TooManyEntries`], [`CaptureError::Escapes`],
/// [`CaptureError::Changed`], [`CaptureError::Unpack`], [`CaptureError::TempFolder`]; the
/// folder is removed then.
pub fn unpack(path: &Path) -> Result<(TempFolder, Vec<SkippedEntry>), CaptureError> {
    let hit = Rc::new(Cell::new(false));
    // pass 1: headers only
    let mut skipped: Vec<(usize, SkippedEntry)> = Vec::new();
    {
        let mut archive = tar_stream(path, &hit)?;
        let entries = archive
            .entries()
            .map_err(|e| read_error(path, &hit, "not a tar archive", e))?;
        for (i, entry) in entries.enumerate() {
            let entry = entry.map_err(|e| read_error(path, &hit, "damaged archive", e))?;
            if i as u64 >= limits::ENTRIES {
                return Err(CaptureError::TooManyEntries {
                    path: path.to_path_buf(),
                });
            }
            let name = entry
                .path()
                .map_err(|e| read_error(path, &hit, "damaged archive", e))?;
            plain(path, &name)?;
            let size = size_of(&entry);
            if size > limits::FILE_BYTES && !entry.header().entry_type().is_dir() {
                skipped.push((
                    i,
                    SkippedEntry {
                        name: esc(&name).into_owned(),
                        size_bytes: size,
                    },
                ));
            }
        }
    }
    // pass 2: unpack
    let tmp = TempFolder::new().map_err(CaptureError::TempFolder)?;
    let beneath = Beneath::new(tmp.path()).map_err(CaptureError::TempFolder)?;
    let mut archive = tar_stream(path, &hit)?;
    let entries = archive
        .entries()
        .map_err(|e| read_error(path, &hit, "not a tar archive", e))?;
    let mut skip = skipped.iter().map(|(i, _)| *i).peekable();
    for (i, entry) in entries.enumerate() {
        let mut entry = entry.map_err(|e| read_error(path, &hit, "damaged archive", e))?;
        if skip.peek() == Some(&i) {
            skip.next();
            continue;
        }
        let name: PathBuf = entry
            .path()
            .map_err(|e| read_error(path, &hit, "damaged archive", e))?
            .into_owned();
        let shown = || esc(&name).into_owned();
        let kind = entry.header().entry_type();
        // the archive changed since the first pass
        if i as u64 >= limits::ENTRIES || (size_of(&entry) > limits::FILE_BYTES && !kind.is_dir()) {
            return Err(CaptureError::Changed {
                path: path.to_path_buf(),
                entry: shown(),
            });
        }
        let comps = plain(path, &name)?;
        if comps.is_empty() {
            // `./` or `/`: the folder itself
            continue;
        }
        // nothing is written while a signal's clean-up removes the folder
        let _writing = cleanup::writing();
        let made = if kind.is_dir() {
            beneath.dir(&comps)
        } else if kind.is_file() || kind.is_contiguous() || kind.is_gnu_sparse() {
            let mode = entry.header().mode().unwrap_or(0o644);
            beneath.file(&comps, mode, &mut entry)
        } else if kind.is_symlink() {
            match entry.link_name() {
                Ok(Some(target)) => beneath.symlink(&comps, &target),
                // a symlink without a target: nothing to make
                _ => continue,
            }
        } else if kind.is_hard_link() {
            let target = match entry.link_name() {
                Ok(Some(t)) => plain(path, &t)?,
                _ => continue,
            };
            match beneath.hard_link(&comps, &target) {
                // a link to something not made (a skipped file, a name outside): left out,
                // as the capture tools left out what they could not read
                Err(Refusal::Io(_)) => continue,
                other => other,
            }
        } else {
            // device nodes, FIFOs, and entry types a capture does not hold
            continue;
        };
        match made {
            Ok(()) => {}
            Err(_) if hit.get() => {
                return Err(CaptureError::TooLarge {
                    path: path.to_path_buf(),
                })
            }
            Err(Refusal::Symlink(via)) => {
                return Err(CaptureError::Escapes {
                    path: path.to_path_buf(),
                    entry: shown(),
                    how: format!("through the symlink {}", esc(&via)),
                })
            }
            Err(Refusal::Io(error)) => {
                return Err(CaptureError::Unpack {
                    path: path.to_path_buf(),
                    entry: shown(),
                    error,
                })
            }
        }
    }
    Ok((tmp, skipped.into_iter().map(|(_, s)| s).collect()))
}

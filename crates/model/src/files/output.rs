//! Writing a file the user named with `-o` (a result file, a report, a snapshot archive, a
//! plot): the one rule every command follows, and the one way files appear.
//!
//! **The rule** ([`check_output`], [`check_output_reading`]): an existing file is never
//! replaced without `--force`, and a file the command reads (an input) is never written at
//! all, even with `--force`: neither a file named as an input nor, inside a folder the
//! command scans (`fleet DIR`), any file under a name the scan reads (`DIR/web/a.json`),
//! whether it exists yet or not. "The same file" is judged twice: by canonical path
//! (symlinks resolved) and by device and inode (a hard link, or a path through a bind mount). With `--force` only a regular file
//! (or a symlink, which is itself replaced, not its target) is replaced, never a device, a
//! FIFO or a directory.
//!
//! **Appearing only complete** ([`AtomicFile`]): the bytes go to a temporary file in the
//! output's directory (`.<name>.tmp-<pid>-<n>`), which is fsynced and then published under
//! the name: by `link(2)` when nothing may be replaced (exclusive: fails if the name was
//! taken meanwhile), by `rename(2)` when replacing; then the directory is fsynced. A process
//! killed at any moment leaves the old file or the new one, never an empty or partial one;
//! on any error (ENOSPC, EIO) the temporary file is removed and the old file stays.
//!
//! **One writer** ([`OutputLock`], `sys` feature): an exclusive `flock(2)` on a sibling lock
//! file `.<name>.lock`, held while the command writes; a second command on the same output
//! is refused at once.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why an output file is refused or could not be written; one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Exists, and `--force` was not given.
    #[error("{}: exists; refusing to overwrite it (pass --force to replace it)", path.display())]
    Exists {
        /// The output as named.
        path: PathBuf,
    },
    /// The output is one of the command's inputs (same path, or same device and inode).
    #[error(
        "{}: is {how} the input {}; refusing to write over an input, even with --force",
        path.display(),
        input.display()
    )]
    IsInput {
        /// The output as named.
        path: PathBuf,
        /// The input it is.
        input: PathBuf,
        /// `"the same path as"` or `"the same file (a link) as"`.
        how: &'static str,
    },
    /// Inside a folder the command scans, under a name the scan reads as an input.
    #[error(
        "{}: is inside {}, which this command reads, under a name it reads as {what}; refusing to write there, even with --force (write it outside {} or under another name)",
        path.display(),
        dir.display(),
        dir.display()
    )]
    InScannedFolder {
        /// The output as named.
        path: PathBuf,
        /// The folder scanned, as named.
        dir: PathBuf,
        /// What a file of that name is read as (`"a result file"`).
        what: &'static str,
    },
    /// Exists and is not a regular file: `--force` replaces only regular files.
    #[error("{}: is {kind}, not a regular file; --force replaces only regular files", path.display())]
    NotRegular {
        /// The output as named.
        path: PathBuf,
        /// What it is ([`super::kind_of`]).
        kind: &'static str,
    },
    /// Another process holds the output's lock.
    #[error(
        "{}: another hwsurvey process is writing it (lock {} held); wait for it to finish or choose another output",
        path.display(),
        lock.display()
    )]
    Locked {
        /// The output as named.
        path: PathBuf,
        /// The lock file.
        lock: PathBuf,
    },
    /// The OS refused (ENOSPC, EIO, permission denied, no such directory).
    #[error("{}: {what}: {error}", path.display())]
    Io {
        /// The file concerned (the output, its temporary file or its lock).
        path: PathBuf,
        /// What was being done (`"cannot write"`).
        what: &'static str,
        /// The OS error.
        error: std::io::Error,
    },
}

fn io<'a>(path: &'a Path, what: &'static str) -> impl FnOnce(std::io::Error) -> OutputError + 'a {
    move |error| OutputError::Io {
        path: path.to_owned(),
        what,
        error,
    }
}

/// The directory a file named `path` lives in (`.` for a bare name).
fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A sibling of `path` named `.<name><suffix>`.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    dir_of(path).join(format!(".{name}{suffix}"))
}

/// `path` with symlinks resolved: the whole path when it exists, else its directory's
/// canonical path joined with its name (the path a new file would get).
fn canonical_or_planned(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    let dir = std::fs::canonicalize(dir_of(path)).ok()?;
    Some(dir.join(path.file_name()?))
}

/// `path` with symlinks resolved as far as it exists: its longest existing ancestor's
/// canonical path joined with the rest (the path a new file and its new folders would get).
fn canonical_planned(path: &Path) -> Option<PathBuf> {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let mut rest = Vec::new();
    let mut here = absolute.as_path();
    loop {
        if let Ok(c) = std::fs::canonicalize(here) {
            return Some(rest.iter().rev().fold(c, |p, n| p.join(n)));
        }
        rest.push(here.file_name()?.to_os_string());
        here = here.parent()?;
    }
}

/// A folder a command scans for its inputs (`hwsurvey fleet DIR`: every `*.json` and failure
/// marker below it, at any depth).
#[derive(Clone, Copy)]
pub struct ScannedFolder<'a> {
    /// The folder as named.
    pub dir: &'a Path,
    /// Whether the scan reads a file of this path (judged by its name).
    pub reads: fn(&Path) -> bool,
    /// What such a file is read as: `"a result file"`.
    pub what: &'static str,
}

impl std::fmt::Debug for ScannedFolder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScannedFolder")
            .field("dir", &self.dir)
            .field("what", &self.what)
            .finish()
    }
}

/// Whether `output` names the file `input`: same canonical path, or (both existing) the same
/// device and inode. `Some(how)` says which.
pub fn same_file(output: &Path, input: &Path) -> Option<&'static str> {
    if let (Some(o), Some(i)) = (canonical_or_planned(output), canonical_or_planned(input)) {
        if o == i {
            return Some("the same path as");
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(o), Ok(i)) = (std::fs::metadata(output), std::fs::metadata(input)) {
            if o.dev() == i.dev() && o.ino() == i.ino() {
                return Some("the same file (a link) as");
            }
        }
    }
    None
}

/// The rule for every output file, checked before any work: refuses an output that is one of
/// `inputs` (even with `force`), an existing output without `force`, and with `force` an
/// existing output that is not a regular file or a symlink.
///
/// # Errors
/// [`OutputError::IsInput`], [`OutputError::Exists`], [`OutputError::NotRegular`].
pub fn check_output(path: &Path, inputs: &[&Path], force: bool) -> Result<(), OutputError> {
    check_output_reading(path, inputs, &[], force)
}

/// [`check_output`] for a command that also scans `folders`: besides, an output inside one of
/// them (at any depth, symlinks resolved) under a name its scan reads is refused, even with
/// `force` and whether the file exists or not, since the next run would read it as an input.
///
/// # Errors
/// [`OutputError::IsInput`], [`OutputError::InScannedFolder`], [`OutputError::Exists`],
/// [`OutputError::NotRegular`].
pub fn check_output_reading(
    path: &Path,
    inputs: &[&Path],
    folders: &[ScannedFolder<'_>],
    force: bool,
) -> Result<(), OutputError> {
    let planned = canonical_planned(path);
    for f in folders {
        let inside = match (&planned, std::fs::canonicalize(f.dir)) {
            (Some(p), Ok(d)) => p.starts_with(&d) && *p != d,
            _ => false,
        };
        if inside && ((f.reads)(path) || planned.as_deref().is_some_and(f.reads)) {
            return Err(OutputError::InScannedFolder {
                path: path.to_owned(),
                dir: f.dir.to_owned(),
                what: f.what,
            });
        }
    }
    for input in inputs {
        if let Some(how) = same_file(path, input) {
            return Err(OutputError::IsInput {
                path: path.to_owned(),
                input: input.to_path_buf(),
                how,
            });
        }
    }
    if let Ok(md) = std::fs::symlink_metadata(path) {
        if !force {
            return Err(OutputError::Exists {
                path: path.to_owned(),
            });
        }
        let ft = md.file_type();
        if !(ft.is_file() || ft.is_symlink()) {
            return Err(OutputError::NotRegular {
                path: path.to_owned(),
                kind: super::kind_of(ft),
            });
        }
        // a symlink to a device or a directory: the link would be replaced, not the device;
        // still refused, the user named what the link points to
        if ft.is_symlink() {
            if let Ok(target) = std::fs::metadata(path) {
                if !target.is_file() {
                    return Err(OutputError::NotRegular {
                        path: path.to_owned(),
                        kind: super::kind_of(target.file_type()),
                    });
                }
            }
        }
    }
    Ok(())
}

/// Distinguishes temporary files of one process.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A file being written under a temporary name next to its final `path`; published complete
/// by [`AtomicFile::commit`], removed when dropped uncommitted (an error, a panic).
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<std::fs::File>,
}

impl AtomicFile {
    /// Creates the temporary file `.<name>.tmp-<pid>-<n>` in `path`'s directory (which must
    /// exist), exclusively.
    ///
    /// # Errors
    /// [`OutputError::Io`] naming the temporary file.
    pub fn create(path: &Path) -> Result<AtomicFile, OutputError> {
        let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = sibling(path, &format!(".tmp-{}-{n}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io(&tmp, "cannot create a temporary file"))?;
        Ok(AtomicFile {
            path: path.to_owned(),
            tmp,
            file: Some(file),
        })
    }

    /// The temporary file's path.
    pub fn temp_path(&self) -> &Path {
        &self.tmp
    }

    /// Fsyncs the data and publishes it under the final name: with `replace`, renamed over
    /// whatever is there; without, linked to the name only if it is free (exclusive; on a
    /// file system without hard links, checked and renamed). Then the directory is fsynced.
    /// The temporary file is gone afterwards, whatever the outcome.
    ///
    /// # Errors
    /// [`OutputError::Exists`] when not replacing and the name was taken; [`OutputError::Io`]
    /// when fsync, link or rename fail (ENOSPC, EIO).
    pub fn commit(mut self, replace: bool) -> Result<(), OutputError> {
        let file = self.file.take().expect("committed once");
        file.sync_all()
            .map_err(io(&self.path, "cannot write (fsync)"))?;
        drop(file);
        if replace {
            std::fs::rename(&self.tmp, &self.path).map_err(io(&self.path, "cannot replace"))?;
        } else {
            match std::fs::hard_link(&self.tmp, &self.path) {
                Ok(()) => {
                    let _ = std::fs::remove_file(&self.tmp);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(OutputError::Exists {
                        path: self.path.clone(),
                    });
                }
                // vfat, some FUSE file systems: no hard links
                Err(_) if std::fs::symlink_metadata(&self.path).is_err() => {
                    std::fs::rename(&self.tmp, &self.path)
                        .map_err(io(&self.path, "cannot create"))?;
                }
                Err(e) => return Err(io(&self.path, "cannot create")(e)),
            }
        }
        // the name is published; from here on nothing is left to remove
        self.tmp = PathBuf::new();
        sync_dir(&dir_of(&self.path));
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.as_mut().expect("not committed").write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().expect("not committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        self.file.take();
        if !self.tmp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Fsyncs a directory, so a rename or link in it survives a power cut. Best effort: some
/// file systems refuse fsync on a directory (EINVAL), which changes nothing for the data.
fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Writes `bytes` to `path` through an [`AtomicFile`]: the file appears complete or not at
/// all. With `replace`, an existing file is replaced; without, an existing file is an error
/// (checked again at the moment of publishing).
///
/// # Errors
/// As [`AtomicFile::create`], [`AtomicFile::commit`], and [`OutputError::Io`] for the write.
pub fn write_atomic(path: &Path, bytes: &[u8], replace: bool) -> Result<(), OutputError> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes).map_err(io(path, "cannot write"))?;
    f.commit(replace)
}

/// The exclusive lock on an output: an `flock(2)` on `.<name>.lock` beside it, held until
/// dropped; the lock file is removed then. Without the `sys` feature no lock is taken.
///
/// The lock is the `flock`, not the file: a lock file left by a run that was killed (SIGKILL,
/// power loss: `Drop` never ran) is held by nobody, so the next run takes it over at once,
/// says so ([`OutputLock::stale_lock`]) and removes it when done. A new lock file is created
/// under a temporary name, locked, given the writer's process id, and only then linked to
/// `.<name>.lock` (exclusively): a lock file found on disk and held by nobody is always a dead
/// writer's, never one a live writer is about to lock, and it names the run that left it
/// (an empty one comes from an older hwsurvey, or a file system without hard links).
#[derive(Debug)]
pub struct OutputLock {
    #[allow(dead_code)]
    path: PathBuf,
    #[cfg(all(unix, feature = "sys"))]
    lock: Option<(PathBuf, nix::fcntl::Flock<std::fs::File>)>,
    leftovers: Vec<PathBuf>,
    stale: Option<StaleLock>,
}

/// A lock file found on disk but held by no process: the leftover of a run that was killed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleLock {
    /// The lock file (`.<name>.lock`).
    pub path: PathBuf,
    /// What it held: the process id of the run that left it, or `None` when it was empty or
    /// held no number.
    pub pid: Option<u32>,
}

impl std::fmt::Display for StaleLock {
    /// `/d/.r.json.lock, left by process 1234 (killed: it held no lock)` or `..., empty (...)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pid {
            Some(pid) => write!(
                f,
                "{}, left by process {pid}, which was killed (no process held the lock)",
                self.path.display()
            ),
            None => write!(
                f,
                "{}, empty, left by a run that was killed (no process held the lock)",
                self.path.display()
            ),
        }
    }
}

impl OutputLock {
    /// Takes the lock of `path`'s output, without waiting. `path`'s directory must exist.
    /// A lock file held by no process (a killed run's) is taken over and reported by
    /// [`OutputLock::stale_lock`]; the lock file is never followed through a symlink.
    ///
    /// # Errors
    /// [`OutputError::Locked`] when another process holds it; [`OutputError::Io`] when the
    /// lock file cannot be created or opened (a symlink, a directory, no permission).
    pub fn acquire(path: &Path) -> Result<OutputLock, OutputError> {
        #[cfg(all(unix, feature = "sys"))]
        {
            use nix::fcntl::{Flock, FlockArg};
            use std::io::{Read, Seek};
            use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
            let lock_path = sibling(path, ".lock");
            let open_existing = || {
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(libc_o_nofollow())
                    .open(&lock_path)
            };
            let lock_now =
                |file: std::fs::File| match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                    Ok(l) => Ok(l),
                    Err((_, nix::errno::Errno::EWOULDBLOCK)) => Err(OutputError::Locked {
                        path: path.to_owned(),
                        lock: lock_path.clone(),
                    }),
                    Err((_, e)) => Err(io(&lock_path, "cannot lock")(std::io::Error::from(e))),
                };
            // the lock file still has the name (not unlinked by its holder meanwhile)
            let still_named = |locked: &Flock<std::fs::File>| {
                let held = locked.metadata().ok();
                let now = std::fs::symlink_metadata(&lock_path).ok();
                matches!((held, now), (Some(h), Some(n)) if h.dev() == n.dev() && h.ino() == n.ino())
            };
            let pid_line = format!("{}\n", std::process::id());
            for _ in 0..100 {
                // 1. A lock file on disk: a live writer's (locked), or a killed one's. A new
                //    one gets its name only locked and holding its writer's process id (2.),
                //    so one found unlocked was left by a writer that died.
                match open_existing() {
                    Ok(file) => {
                        let mut locked = lock_now(file)?;
                        if !still_named(&locked) {
                            continue;
                        }
                        let mut text = String::new();
                        let _ = (&*locked).take(64).read_to_string(&mut text);
                        let stale = StaleLock {
                            path: lock_path.clone(),
                            pid: text.trim().parse().ok(),
                        };
                        let _ = locked.set_len(0);
                        let _ = locked.rewind();
                        let _ = locked.write_all(pid_line.as_bytes());
                        return Ok(OutputLock {
                            path: path.to_owned(),
                            lock: Some((lock_path, locked)),
                            leftovers: remove_leftovers(path),
                            stale: Some(stale),
                        });
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io(&lock_path, "cannot open the lock file")(e)),
                }
                // 2. None: a new one, locked and holding our process id under a temporary
                //    name (`.<name>.tmp-<pid>-<n>.lock`, a leftover the next holder removes if
                //    we die here), then linked to the lock's name only if that is free.
                let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
                let fresh = sibling(path, &format!(".tmp-{}-{n}.lock", std::process::id()));
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .custom_flags(libc_o_nofollow())
                    .open(&fresh)
                    .map_err(io(&lock_path, "cannot create the lock file"))?;
                let mut locked = match lock_now(file) {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = std::fs::remove_file(&fresh);
                        return Err(e);
                    }
                };
                let _ = locked.write_all(pid_line.as_bytes());
                let linked = std::fs::hard_link(&fresh, &lock_path);
                let _ = std::fs::remove_file(&fresh);
                match linked {
                    Ok(()) => {}
                    // taken meanwhile (1. finds it locked), or our temporary name removed
                    // by the holder's clean-up: look again
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotFound
                        ) =>
                    {
                        continue
                    }
                    // vfat, some FUSE file systems: no hard links; the name is created
                    // exclusively, then locked (a writer that finds it in between takes it
                    // for a killed one's: the only case it can, and only there)
                    Err(_) => {
                        drop(locked);
                        let file = match std::fs::OpenOptions::new()
                            .read(true)
                            .write(true)
                            .create_new(true)
                            .custom_flags(libc_o_nofollow())
                            .open(&lock_path)
                        {
                            Ok(f) => f,
                            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                            Err(e) => return Err(io(&lock_path, "cannot create the lock file")(e)),
                        };
                        locked = lock_now(file)?;
                        let _ = locked.write_all(pid_line.as_bytes());
                    }
                }
                if !still_named(&locked) {
                    continue;
                }
                return Ok(OutputLock {
                    path: path.to_owned(),
                    lock: Some((lock_path, locked)),
                    leftovers: remove_leftovers(path),
                    stale: None,
                });
            }
            Err(OutputError::Locked {
                path: path.to_owned(),
                lock: lock_path,
            })
        }
        #[cfg(not(all(unix, feature = "sys")))]
        Ok(OutputLock {
            path: path.to_owned(),
            leftovers: Vec::new(),
            stale: None,
        })
    }

    /// Temporary files of an earlier writer of this output that died before publishing
    /// (`.<name>.tmp-<pid>-<n>`), removed when the lock was taken: under the lock no live
    /// writer of this output can own them. For the command to name in its output.
    pub fn removed_leftovers(&self) -> &[PathBuf] {
        &self.leftovers
    }

    /// The lock file of a killed run, found held by nobody and taken over (it is removed when
    /// this lock is dropped). For the command to name in its output.
    pub fn stale_lock(&self) -> Option<&StaleLock> {
        self.stale.as_ref()
    }
}

/// `O_NOFOLLOW`: a lock file that is a symlink is refused (ELOOP), never followed.
#[cfg(all(unix, feature = "sys"))]
fn libc_o_nofollow() -> i32 {
    nix::fcntl::OFlag::O_NOFOLLOW.bits()
}

/// Removes `path`'s siblings named `.<name>.tmp-*` (partial writes, and new lock files
/// `.<name>.tmp-<pid>-<n>.lock` of a writer killed before it linked one) and returns their
/// paths; a file another process holds an `flock` on is left alone.
#[cfg(all(unix, feature = "sys"))]
fn remove_leftovers(path: &Path) -> Vec<PathBuf> {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    let prefix = format!(".{name}.tmp-");
    let mut removed = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir_of(path)) {
        for e in entries.flatten() {
            let is_ours = e.file_name().to_string_lossy().starts_with(&prefix)
                && e.file_type().is_ok_and(|t| t.is_file());
            // a new lock file another writer is about to link (locked from its start):
            // not a leftover
            let in_use = || {
                std::fs::File::open(e.path())
                    .ok()
                    .map(|f| {
                        nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock)
                            .is_err()
                    })
                    .unwrap_or(false)
            };
            if is_ours && !in_use() && std::fs::remove_file(e.path()).is_ok() {
                removed.push(e.path());
            }
        }
    }
    removed.sort();
    removed
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        #[cfg(all(unix, feature = "sys"))]
        if let Some((lock_path, locked)) = self.lock.take() {
            // removed while still held: a waiting process then finds a new file (or ours
            // unlinked, which it detects), never a lock it shares with a third
            let _ = std::fs::remove_file(&lock_path);
            drop(locked);
        }
    }
}

#[cfg(test)]
mod tests;

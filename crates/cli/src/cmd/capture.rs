//! `--root DIR|ARCHIVE`, one way for every command that reads a captured machine (`probe`,
//! `snapshot`, `qualify`, `run --plan-only`): a copy of `/` with `proc/` and `sys/`, an
//! extracted snapshot, the folder a snapshot was extracted into (its one `hwsurvey-snapshot/`
//! folder is used), or the archive itself (`.tar.gz`, `.tgz`, `.tar.bz2`, `.tbz2`, `.tar`;
//! unpacked into a temporary folder for the command's lifetime, within [`limits`], removed on
//! every exit path, SIGINT, SIGTERM and SIGHUP included).

use std::path::{Path, PathBuf};

use anyhow::Context;
use hwsurvey_model::text::path as esc;
use hwsurvey_probe::SysRoot;

/// A captured machine opened from `--root`: the probes' door to the folder standing for `/`,
/// and the temporary folder an archive was unpacked into (removed when this is dropped).
pub struct Capture {
    _unpacked: Option<TempFolder>,
    /// What to call it: the folder probed, or for an archive the archive as given (its
    /// temporary folder means nothing to the user).
    pub shown: String,
    /// The folder standing for `/` ([`SysRoot::root`]).
    pub root: SysRoot,
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

/// Bounds of unpacking a `--root` archive. A snapshot holds small text files (the largest of
/// the fixtures' captures: 16k entries, 365 KB in all, 134 KB in one file): anything far
/// beyond is not a capture of a machine's /proc and /sys.
pub mod limits {
    /// A file larger than this (4 MiB) is skipped, and named in a warning.
    pub const FILE_BYTES: u64 = 4 << 20;
    /// At most this much of the archive is read once decompressed (64 MiB: headers, data,
    /// and the data of skipped files); more refuses the archive.
    pub const TOTAL_BYTES: u64 = 64 << 20;
    /// At most this many entries (files, folders, links); more refuses the archive.
    pub const ENTRIES: u64 = 50_000;
}

/// A reader that fails once more than `left` bytes came through it, and says so in `hit`.
struct Bounded<R> {
    inner: R,
    left: u64,
    hit: std::rc::Rc<std::cell::Cell<bool>>,
}

impl<R: std::io::Read> std::io::Read for Bounded<R> {
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

/// The decompressed tar stream of archive `path` (by its name's ending), bounded to
/// [`limits::TOTAL_BYTES`]; `hit` turns true when the bound stopped it.
fn tar_stream(
    path: &Path,
    hit: &std::rc::Rc<std::cell::Cell<bool>>,
) -> anyhow::Result<tar::Archive<Bounded<Box<dyn std::io::Read>>>> {
    let name = path.to_string_lossy();
    let file = std::fs::File::open(path).with_context(|| format!("--root {}", esc(path)))?;
    let reader: Box<dyn std::io::Read> = if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else if name.ends_with(".tar.bz2") || name.ends_with(".tbz2") {
        Box::new(bzip2::read::BzDecoder::new(file))
    } else if name.ends_with(".tar") {
        Box::new(file)
    } else {
        anyhow::bail!(
            "--root {}: is a file, not a folder or a .tar.gz, .tgz, .tar.bz2 or .tar archive",
            esc(path)
        );
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
    hit: &std::rc::Rc<std::cell::Cell<bool>>,
    what: &str,
    e: std::io::Error,
) -> anyhow::Error {
    if hit.get() {
        anyhow::anyhow!(
            "--root {}: holds more than {} MiB once decompressed; a snapshot is a few MiB at most: refusing it",
            esc(path),
            limits::TOTAL_BYTES >> 20
        )
    } else {
        anyhow::anyhow!("--root {}: {what}: {e}", esc(path))
    }
}

/// Temporary folders to remove when a signal ends the command ([`TempFolder`]); taken by
/// the unpacking thread for each entry it writes, so the removal never races a write.
static ON_SIGNAL: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Removes the folders registered in [`ON_SIGNAL`]; run by the signal thread before
/// it exits (it keeps the lock: nothing is written into them afterwards).
fn remove_registered() {
    let guard = ON_SIGNAL.lock().unwrap_or_else(|e| e.into_inner());
    for dir in guard.iter() {
        // a file being created meanwhile can make one pass fail with ENOTEMPTY
        for _ in 0..3 {
            if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
                break;
            }
        }
    }
    std::mem::forget(guard);
}

/// Makes SIGINT, SIGTERM and SIGHUP end the command (exit 128 + N) after removing the
/// folders registered in [`ON_SIGNAL`]. Under a build without signal handling the signal kills
/// the process.
fn install_signal_cleanup() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        hwsurvey_engine::signals::on_forced_exit(remove_registered);
        hwsurvey_engine::signals::install_exit_on_signal();
    });
}

/// Forgets `dir` registered in [`ON_SIGNAL`] (it is about to be removed).
fn keep_on_signal(dir: &Path) {
    ON_SIGNAL
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|d| d != dir);
}

/// A temporary folder that is removed when dropped and when a signal ends the command.
pub struct TempFolder(tempfile::TempDir);

impl TempFolder {
    /// A fresh private (0700) folder in the temporary directory (`$TMPDIR`, else `/tmp`).
    ///
    /// # Errors
    /// When it cannot be created.
    pub fn new() -> anyhow::Result<TempFolder> {
        install_signal_cleanup();
        // created and registered under the lock: a signal in between waits for both
        let mut registered = ON_SIGNAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().context("cannot create a temporary folder")?;
        registered.push(dir.path().to_path_buf());
        Ok(TempFolder(dir))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        keep_on_signal(self.0.path());
    }
}

/// Unpacks archive `path` into a temporary folder, within [`limits`]: a first pass reads
/// only the headers and refuses an archive of more than [`limits::ENTRIES`] entries or
/// [`limits::TOTAL_BYTES`] decompressed, before anything is written; files larger than
/// [`limits::FILE_BYTES`] are skipped and named in a warning. The folder is removed when the
/// returned [`TempFolder`] is dropped, on an error, and when SIGINT, SIGTERM or SIGHUP end
/// the command (exit 128 + N). Folders are made writable by us whatever mode the archive gives
/// them (a copy of `/` holds read-only folders under /proc and /sys: unpacked with their mode,
/// nothing could be written into them, and the temporary folder could not be removed). Links
/// and special files that cannot be made (a hard link to a file outside, a device node without
/// privileges) are skipped, as the capture tools skipped what they could not read; any other
/// entry that cannot be written is an error.
fn unpack(path: &Path) -> anyhow::Result<TempFolder> {
    let hit = std::rc::Rc::new(std::cell::Cell::new(false));
    // pass 1: headers only (the data of each entry is skipped, still decompressed and counted)
    let mut skipped: Vec<(usize, String, u64)> = Vec::new();
    {
        let mut archive = tar_stream(path, &hit)?;
        let entries = archive
            .entries()
            .map_err(|e| read_error(path, &hit, "not a tar archive", e))?;
        for (i, entry) in entries.enumerate() {
            let entry = entry.map_err(|e| read_error(path, &hit, "damaged archive", e))?;
            if i as u64 >= limits::ENTRIES {
                anyhow::bail!(
                    "--root {}: holds more than {} entries; a snapshot holds a few thousand: refusing it",
                    esc(path),
                    limits::ENTRIES
                );
            }
            let size = entry.size().max(entry.header().size().unwrap_or(0));
            if size > limits::FILE_BYTES && !entry.header().entry_type().is_dir() {
                let name = entry
                    .path()
                    .map(|p| esc(&p).into_owned())
                    .unwrap_or_default();
                skipped.push((i, name, size));
            }
        }
    }
    if !skipped.is_empty() {
        let names: Vec<String> = skipped
            .iter()
            .take(5)
            .map(|(_, n, size)| format!("{n} ({:.1} MiB)", *size as f64 / (1u64 << 20) as f64))
            .collect();
        let more = skipped.len().saturating_sub(names.len());
        errln!(
            "hwsurvey: warning: --root {}: skipped {} file{} larger than {} MiB (a snapshot holds small text files): {}{}",
            esc(path),
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" },
            limits::FILE_BYTES >> 20,
            names.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        );
    }
    // pass 2: unpack
    let tmp = TempFolder::new()?;
    let mut archive = tar_stream(path, &hit)?;
    let entries = archive
        .entries()
        .map_err(|e| read_error(path, &hit, "not a tar archive", e))?;
    let mut skip = skipped.iter().map(|(i, _, _)| *i).peekable();
    for (i, entry) in entries.enumerate() {
        let mut entry = entry.map_err(|e| read_error(path, &hit, "damaged archive", e))?;
        if skip.peek() == Some(&i) {
            skip.next();
            continue;
        }
        let name = entry
            .path()
            .map(|p| p.to_path_buf())
            .with_context(|| format!("--root {}: damaged archive", esc(path)))?;
        // the archive changed since the first pass
        let size = entry.size().max(entry.header().size().unwrap_or(0));
        anyhow::ensure!(
            (i as u64) < limits::ENTRIES
                && (size <= limits::FILE_BYTES || entry.header().entry_type().is_dir()),
            "--root {}: changed while it was read ({})",
            esc(path),
            esc(&name)
        );
        // nothing is written while a signal's cleanup removes the folder
        let _writing = ON_SIGNAL.lock().unwrap_or_else(|e| e.into_inner());
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            // only plain relative paths (unpack_in refuses the others the same way)
            let plain = name.components().all(|c| {
                matches!(
                    c,
                    std::path::Component::Normal(_) | std::path::Component::CurDir
                )
            });
            if plain {
                let dir = tmp.path().join(&name);
                std::fs::create_dir_all(&dir).with_context(|| {
                    format!("--root {}: cannot unpack {}", esc(path), esc(&name))
                })?;
            }
            continue;
        }
        let unpacked = entry.unpack_in(tmp.path());
        let optional = kind.is_symlink()
            || kind.is_hard_link()
            || kind.is_character_special()
            || kind.is_block_special()
            || kind.is_fifo();
        if let Err(e) = unpacked {
            if hit.get() {
                return Err(read_error(path, &hit, "", e));
            }
            if !optional {
                anyhow::bail!("--root {}: cannot unpack {}: {e}", esc(path), esc(&name));
            }
        }
    }
    Ok(tmp)
}

/// The machine a command reads: `--root PATH` opened with [`open`], or the live machine
/// (`/`, shown as `/`) without one.
///
/// # Errors
/// Those of [`open`].
pub fn open_or_live(path: Option<&Path>) -> anyhow::Result<Capture> {
    match path {
        Some(p) => open(p),
        None => Ok(Capture {
            _unpacked: None,
            shown: "/".to_string(),
            root: SysRoot::live(),
        }),
    }
}

/// Opens `--root PATH` (see the module docs).
///
/// # Errors
/// One line naming `PATH`: it does not exist; it is a file that is no tar archive (or a
/// damaged one); or it holds neither `/proc/cpuinfo` nor `/sys/devices/system/cpu`, itself or
/// in its only folder.
pub fn open(path: &Path) -> anyhow::Result<Capture> {
    let (unpacked, dir) = if path.is_file() {
        let tmp = unpack(path)?;
        let dir = tmp.path().to_path_buf();
        (Some(tmp), dir)
    } else {
        anyhow::ensure!(
            path.is_dir(),
            "--root {}: no such folder or archive",
            esc(path)
        );
        (None, path.to_path_buf())
    };
    let Some(dir) = root_folder(&dir) else {
        anyhow::bail!(
            "{} does not look like a Linux root or snapshot (no /proc/cpuinfo, no /sys/devices/system/cpu)",
            esc(path)
        );
    };
    let shown = match &unpacked {
        Some(_) => esc(path).to_string(),
        None => esc(&dir).into_owned(),
    };
    Ok(Capture {
        _unpacked: unpacked,
        shown,
        root: SysRoot::new(dir),
    })
}

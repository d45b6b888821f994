//! `--root DIR|ARCHIVE`, one way for every command that reads a captured machine (`probe`,
//! `snapshot`, `qualify`, `run --plan-only`): a copy of `/` with `proc/` and `sys/`, an
//! extracted snapshot, the folder a snapshot was extracted into (its one `hwsurvey-snapshot/`
//! folder is used), or the archive itself (`.tar.gz`, `.tgz`, `.tar.bz2`, `.tbz2`, `.tar`;
//! unpacked into a temporary folder for the command's lifetime).

use std::path::{Path, PathBuf};

use anyhow::Context;
use hwsurvey_probe::SysRoot;

/// A captured machine opened from `--root`: the probes' door to the folder standing for `/`,
/// and the temporary folder an archive was unpacked into (removed when this is dropped).
pub struct Capture {
    _unpacked: Option<tempfile::TempDir>,
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

/// Unpacks archive `path` into a temporary folder. Folders are made writable by us whatever
/// mode the archive gives them (a copy of `/` holds read-only folders under /proc and /sys:
/// unpacked with their mode, nothing could be written into them, and the temporary folder
/// could not be removed). Links and special files that cannot be made (a hard link to a file
/// outside, a device node without privileges) are skipped, as the capture tools skipped what
/// they could not read; any other entry that cannot be written is an error.
fn unpack(path: &Path) -> anyhow::Result<tempfile::TempDir> {
    let name = path.to_string_lossy();
    let file = std::fs::File::open(path).with_context(|| format!("--root {}", path.display()))?;
    let reader: Box<dyn std::io::Read> = if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else if name.ends_with(".tar.bz2") || name.ends_with(".tbz2") {
        Box::new(bzip2::read::BzDecoder::new(file))
    } else if name.ends_with(".tar") {
        Box::new(file)
    } else {
        anyhow::bail!(
            "--root {}: is a file, not a folder or a .tar.gz, .tgz, .tar.bz2 or .tar archive",
            path.display()
        );
    };
    let tmp = tempfile::tempdir().context("cannot create a temporary folder")?;
    let mut archive = tar::Archive::new(reader);
    let entries = archive
        .entries()
        .with_context(|| format!("--root {}: not a tar archive", path.display()))?;
    for entry in entries {
        let mut entry =
            entry.with_context(|| format!("--root {}: damaged archive", path.display()))?;
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            // only plain relative paths (unpack_in refuses the others the same way)
            let name = entry
                .path()
                .with_context(|| format!("--root {}: damaged archive", path.display()))?;
            let plain = name.components().all(|c| {
                matches!(
                    c,
                    std::path::Component::Normal(_) | std::path::Component::CurDir
                )
            });
            if plain {
                let dir = tmp.path().join(&name);
                std::fs::create_dir_all(&dir).with_context(|| {
                    format!(
                        "--root {}: cannot unpack {}",
                        path.display(),
                        name.display()
                    )
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
            if !optional {
                let name = entry
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                anyhow::bail!("--root {}: cannot unpack {name}: {e}", path.display());
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
            path.display()
        );
        (None, path.to_path_buf())
    };
    let Some(dir) = root_folder(&dir) else {
        anyhow::bail!(
            "{} does not look like a Linux root or snapshot (no /proc/cpuinfo, no /sys/devices/system/cpu)",
            path.display()
        );
    };
    let shown = match &unpacked {
        Some(_) => path.display().to_string(),
        None => dir.display().to_string(),
    };
    Ok(Capture {
        _unpacked: unpacked,
        shown,
        root: SysRoot::new(dir),
    })
}

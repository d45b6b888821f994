//! Test files: checked directory, created, preconditioned (written fully once), removed on
//! every exit path.
//!
//! A [`TestFile`] removes its file when dropped (normal end, error, panic unwinding, or the
//! runner stopping on the engine's SIGINT flag); every live test file is also listed in a
//! process-wide registry, and the first one registers [`remove_live_test_files`] with the
//! engine's forced-exit cleanups (`hwsurvey_engine::signals::on_forced_exit`), which a second
//! stop signal runs before the process exits.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use hwsurvey_probe::{process, SysRoot};

use super::StorageError;

/// Prefix of every test file name: `.hwsurvey-storage-<pid>-<n>.tmp`.
pub const FILE_PREFIX: &str = ".hwsurvey-storage-";

static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static SEQ: AtomicU64 = AtomicU64::new(0);

fn register(p: &Path) {
    // a forced exit (second Ctrl-C) removes what the guards could not
    hwsurvey_engine::signals::on_forced_exit(|| {
        remove_live_test_files();
    });
    live().push(p.to_path_buf());
}

/// The list of this process's test files, also after a panic while it was held (a poisoned
/// lock): the files must still be removed on the signal and panic paths.
fn live() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn unregister(p: &Path) {
    live().retain(|x| x != p);
}

/// Removes every test file this process still has (for a signal or panic path); returns how
/// many were removed.
pub fn remove_live_test_files() -> usize {
    let paths: Vec<PathBuf> = std::mem::take(&mut *live());
    paths
        .iter()
        .filter(|p| std::fs::remove_file(p).is_ok())
        .count()
}

/// Paths of the test files this process has now.
pub fn live_test_files() -> Vec<PathBuf> {
    live().clone()
}

/// The pid in a test file name `.hwsurvey-storage-<pid>-<n>.tmp`, if the name has that form.
pub fn test_file_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(FILE_PREFIX)?.strip_suffix(".tmp")?;
    let (pid, n) = rest.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Test files that an earlier hwsurvey process left in `dir` when it was killed before its
/// guards ran (a second Ctrl-C, SIGKILL): only names of the exact form
/// `.hwsurvey-storage-<pid>-<n>.tmp` whose process no longer exists (no `/proc/<pid>`), and only
/// regular files. Each with the pid of the process that made it.
pub fn stale_test_files(dir: &Path) -> Vec<(PathBuf, u32)> {
    let mut found = Vec::new();
    let root = SysRoot::live();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = test_file_pid(&name) else {
            continue;
        };
        let alive = pid == std::process::id() || process::exists(&root, pid);
        let is_file = e.file_type().map(|t| t.is_file()).unwrap_or(false);
        if !alive && is_file {
            found.push((e.path(), pid));
        }
    }
    found.sort();
    found
}

/// Removes the [`stale_test_files`] of `dir`. Returns the paths removed; the caller names them
/// to the user (a run never removes a file without saying so).
pub fn sweep_stale(dir: &Path) -> Vec<PathBuf> {
    stale_test_files(dir)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| std::fs::remove_file(p).is_ok())
        .collect()
}

/// A file that this process created and will remove when dropped.
#[derive(Debug)]
pub struct CreatedFile {
    path: PathBuf,
}

impl CreatedFile {
    /// Creates `dir/.hwsurvey-storage-<pid>-<n>.tmp` (never an existing file) and registers it.
    ///
    /// Errors: [`StorageError::DirMissing`], [`StorageError::NotADirectory`],
    /// [`StorageError::NotWritable`] mapped from the create error.
    pub fn create_in(dir: &Path, needed_bytes: u64) -> Result<(CreatedFile, File), StorageError> {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{FILE_PREFIX}{}-{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                register(&path);
                Ok((CreatedFile { path }, f))
            }
            Err(e) => Err(map_dir_error(dir, e, needed_bytes)),
        }
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for CreatedFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        unregister(&self.path);
    }
}

/// Maps the error of creating a `needed_bytes` test file in `dir` (or of stat-ing `dir`) to
/// what the user must hear: ENOENT, ENOTDIR, ENOSPC/EDQUOT, anything else as not writable.
pub fn map_dir_error(dir: &Path, e: io::Error, needed_bytes: u64) -> StorageError {
    let dir_s = dir.display().to_string();
    match e.raw_os_error() {
        Some(2) => StorageError::DirMissing { dir: dir_s },
        Some(20) => StorageError::NotADirectory { dir: dir_s },
        Some(28) | Some(122) => StorageError::NoSpace {
            path: dir_s,
            needed_bytes,
            available_bytes: None,
        },
        _ => StorageError::NotWritable {
            dir: dir_s,
            detail: e.to_string(),
        },
    }
}

/// Something a test file can be written through at an offset (a seam so the ENOSPC mapping is
/// testable without filling a filesystem).
pub trait PositionalWrite {
    /// Writes `buf` at byte `offset`; returns bytes written.
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize>;
}

impl PositionalWrite for File {
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::write_at(self, buf, offset)
    }
}

/// Writes `size_bytes` of `pattern` (repeated) from offset 0: the precondition that makes every
/// later read hit allocated blocks. `size_bytes` must be a multiple of `pattern.len()`.
///
/// Errors: [`StorageError::NoSpace`] on ENOSPC or EDQUOT, [`StorageError::Interrupted`] when
/// `stop` is set, [`StorageError::Io`] otherwise; each names `path`.
pub fn precondition(
    w: &impl PositionalWrite,
    path: &Path,
    size_bytes: u64,
    pattern: &[u8],
    stop: &AtomicBool,
) -> Result<(), StorageError> {
    let mut off = 0u64;
    while off < size_bytes {
        if stop.load(Ordering::Relaxed) {
            return Err(StorageError::Interrupted);
        }
        let n = (size_bytes - off).min(pattern.len() as u64) as usize;
        let chunk = pattern.get(..n).unwrap_or(pattern);
        match w.write_at(chunk, off) {
            Ok(0) => {
                return Err(StorageError::NoSpace {
                    path: path.display().to_string(),
                    needed_bytes: size_bytes,
                    available_bytes: None,
                })
            }
            Ok(k) => off += k as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.raw_os_error(), Some(28) | Some(122)) => {
                return Err(StorageError::NoSpace {
                    path: path.display().to_string(),
                    needed_bytes: size_bytes,
                    available_bytes: None,
                })
            }
            Err(e) => {
                return Err(StorageError::Io {
                    path: path.display().to_string(),
                    op: "precondition write",
                    detail: e.to_string(),
                })
            }
        }
    }
    Ok(())
}

/// A preconditioned test file opened with O_DIRECT, removed on drop.
#[derive(Debug)]
pub struct TestFile {
    /// Opened read-write with O_DIRECT.
    pub file: File,
    /// Size in bytes.
    pub size_bytes: u64,
    created: CreatedFile,
}

impl TestFile {
    /// The path.
    pub fn path(&self) -> &Path {
        self.created.path()
    }
}

/// Filesystem facts of a storage directory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DirFacts {
    /// The directory.
    pub dir: String,
    /// Filesystem type from /proc/self/mountinfo of the mount holding it (`ext4`, `xfs`), if found.
    pub fs_type: Option<String>,
    /// Device (major, minor) of the filesystem (`st_dev`).
    pub dev: (u32, u32),
    /// Bytes available to this user (statvfs f_bavail × f_frsize).
    pub available_bytes: Option<u64>,
}

/// Page-cache-only filesystems: O_DIRECT there (where accepted at all) measures memory.
pub const PAGE_CACHE_FS: &[&str] = &["tmpfs", "ramfs", "devtmpfs", "hugetlbfs", "proc", "sysfs"];

/// Checks `dir` before anything is created there: exists, is a directory, is not a page-cache
/// filesystem. Writability, O_DIRECT support and space are checked by creating the file.
///
/// Errors: [`StorageError::DirMissing`], [`StorageError::NotADirectory`],
/// [`StorageError::NoDirectIo`] (tmpfs and friends).
#[cfg(feature = "sys")]
pub fn check_dir(dir: &Path) -> Result<DirFacts, StorageError> {
    use std::os::unix::fs::MetadataExt;
    let dir_s = dir.display().to_string();
    let md = std::fs::metadata(dir).map_err(|e| map_dir_error(dir, e, 0))?;
    if !md.is_dir() {
        return Err(StorageError::NotADirectory { dir: dir_s });
    }
    let dev = hwsurvey_probe::block::decode_dev(md.dev());
    let fs_type = hwsurvey_probe::mounts::fs_type_of_device(&SysRoot::live(), dev);
    if let Some(fs) = &fs_type {
        if PAGE_CACHE_FS.contains(&fs.as_str()) {
            return Err(StorageError::NoDirectIo {
                dir: dir_s,
                fs_type: fs.clone(),
                detail: "a memory-backed filesystem: there is no device under it and O_DIRECT \
                         would measure the page cache"
                    .into(),
            });
        }
    }
    // fsblkcnt_t / c_ulong differ in width between targets: the casts are needed on some.
    #[allow(clippy::unnecessary_cast)]
    let available_bytes = nix::sys::statvfs::statvfs(dir)
        .ok()
        .map(|s| (s.blocks_available() as u64).saturating_mul(s.fragment_size() as u64));
    Ok(DirFacts {
        dir: dir_s,
        fs_type,
        dev,
        available_bytes,
    })
}

/// Checks the `--storage-dir` list before a run: every directory as [`check_dir`], writable
/// (an empty test file is created there and removed at once: a read-only mount or a directory
/// of another user is refused now, not point by point during the run), no directory named
/// twice (compared after `canonicalize`), and no two on one filesystem device (`st_dev`),
/// since the family's "all targets together" point would drive one device twice.
///
/// Returns each directory's facts, in order. Errors: the first of [`check_dir`]'s errors,
/// [`StorageError::NotWritable`] (or NoSpace), [`StorageError::DuplicateDir`],
/// [`StorageError::SameDevice`].
#[cfg(feature = "sys")]
pub fn check_storage_dirs(dirs: &[std::path::PathBuf]) -> Result<Vec<DirFacts>, StorageError> {
    let mut seen: Vec<(std::path::PathBuf, DirFacts)> = Vec::new();
    for dir in dirs {
        let facts = check_dir(dir)?;
        // An empty probe file, opened again with O_DIRECT (a filesystem without direct I/O is
        // refused now, not point by point), removed when dropped.
        let (probe, _plain) = CreatedFile::create_in(dir, 0)?;
        open_direct(probe.path(), &facts)?;
        drop(probe);
        let canonical = std::fs::canonicalize(dir).map_err(|e| map_dir_error(dir, e, 0))?;
        for (prev_canonical, prev) in &seen {
            if *prev_canonical == canonical {
                return Err(StorageError::DuplicateDir {
                    first: prev.dir.clone(),
                    second: facts.dir.clone(),
                    canonical: canonical.display().to_string(),
                });
            }
            if prev.dev == facts.dev {
                return Err(StorageError::SameDevice {
                    first: prev.dir.clone(),
                    second: facts.dir.clone(),
                    major: facts.dev.0,
                    minor: facts.dev.1,
                });
            }
        }
        seen.push((canonical, facts));
    }
    Ok(seen.into_iter().map(|(_, f)| f).collect())
}

/// Opens `path` (a test file in `facts.dir`) read-write with O_DIRECT.
///
/// Errors: [`StorageError::NoDirectIo`] on EINVAL (the filesystem has no direct I/O),
/// [`StorageError::Io`] otherwise.
#[cfg(feature = "sys")]
fn open_direct(path: &Path, facts: &DirFacts) -> Result<File, StorageError> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(nix::fcntl::OFlag::O_DIRECT.bits())
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(22) => StorageError::NoDirectIo {
                dir: facts.dir.clone(),
                fs_type: facts.fs_type.clone().unwrap_or_else(|| "unknown".into()),
                detail:
                    "open with O_DIRECT gave EINVAL: the filesystem does not support direct I/O"
                        .into(),
            },
            _ => StorageError::Io {
                path: path.display().to_string(),
                op: "open O_DIRECT",
                detail: e.to_string(),
            },
        })
}

/// Space a test file leaves free on its file system, bytes (64 MiB): a run never fills the
/// file system it was pointed at.
pub const FREE_RESERVE_BYTES: u64 = 64 << 20;

/// Creates, opens with O_DIRECT and preconditions a test file of `size_bytes` in `dir`.
///
/// Errors: as [`check_dir`] and [`precondition`]; [`StorageError::NoSpace`] before writing when
/// statvfs shows less than `size_bytes` + 64 MiB available; [`StorageError::NoDirectIo`] when the
/// filesystem rejects O_DIRECT (EINVAL). The file is removed on every error path.
#[cfg(feature = "sys")]
pub fn create_test_file(
    dir: &Path,
    size_bytes: u64,
    stop: &AtomicBool,
) -> Result<TestFile, StorageError> {
    let facts = check_dir(dir)?;
    if let Some(avail) = facts.available_bytes {
        if avail < size_bytes.saturating_add(FREE_RESERVE_BYTES) {
            return Err(StorageError::NoSpace {
                path: facts.dir,
                needed_bytes: size_bytes,
                available_bytes: Some(avail),
            });
        }
    }
    // Created without O_DIRECT first: some kernels create the inode before rejecting O_DIRECT,
    // which would leave a file no guard knows about. (Leftovers of killed runs are removed,
    // and named, by the run's start: crates/cli `run`.)
    let (created, _plain) = CreatedFile::create_in(dir, size_bytes)?;
    let file = open_direct(created.path(), &facts)?;
    let mut pattern = super::AlignedBuf::new(1 << 20);
    crate::raid6::fill_pseudo_random(pattern.as_mut_slice(), 0x5eed);
    super::sample::stamp(pattern.as_mut_slice());
    let size_bytes = size_bytes / (1 << 20) * (1 << 20);
    precondition(&file, created.path(), size_bytes, pattern.as_slice(), stop)?;
    file.sync_all().map_err(|e| StorageError::Io {
        path: created.path().display().to_string(),
        op: "fsync",
        detail: e.to_string(),
    })?;
    Ok(TestFile {
        file,
        size_bytes,
        created,
    })
}

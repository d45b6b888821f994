//! [`SysRoot`]: the one door through which every probe reads /proc and /sys.
//!
//! A `SysRoot` is a directory standing for `/` (the live machine by default, or an extracted
//! snapshot given with `--root`). Paths are given as absolute kernel paths (`/proc/cpuinfo`)
//! and resolved under the root as if it were `/` (symlinks followed inside it: an absolute
//! target is re-rooted, `..` stops at the root, loops are an error; see [`SysRoot::resolve`]).
//! Every successful read and every directory listing is recorded, with the target path of any
//! symlink followed, so `hwsurvey snapshot` can capture exactly the files the probes read.

use std::collections::{BTreeSet, HashMap};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
#[cfg(feature = "sys")]
use std::sync::Arc;
use std::sync::Mutex;

use hwsurvey_model::Unknown;

/// What went wrong reading or parsing one kernel file. Always names the path (as seen under
/// the root, e.g. `/sys/devices/system/cpu/online`) and, for bad contents, the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// The file or directory does not exist.
    #[error("{path}: missing")]
    Missing {
        /// Kernel path.
        path: String,
    },
    /// Reading needs privileges we do not have.
    #[error("{path}: permission denied")]
    PermissionDenied {
        /// Kernel path.
        path: String,
    },
    /// Another I/O error.
    #[error("{path}: {message}")]
    Io {
        /// Kernel path.
        path: String,
        /// The OS error.
        message: String,
    },
    /// The contents are not what the kernel writes there.
    #[error(
        "{path}: expected {expected}, got {}",
        hwsurvey_model::text::quote(text)
    )]
    Invalid {
        /// Kernel path.
        path: String,
        /// What the kernel writes there.
        expected: String,
        /// The offending text (trimmed to 200 characters).
        text: String,
    },
}

impl ProbeError {
    /// Builds an [`ProbeError::Invalid`], trimming the text to 200 characters.
    pub fn invalid(path: impl Into<String>, expected: impl Into<String>, text: &str) -> Self {
        let mut text = text.trim().to_string();
        if text.chars().count() > 200 {
            text = text.chars().take(200).collect::<String>() + "...";
        }
        ProbeError::Invalid {
            path: path.into(),
            expected: expected.into(),
            text,
        }
    }

    /// The kernel path this error is about.
    pub fn path(&self) -> &str {
        match self {
            ProbeError::Missing { path }
            | ProbeError::PermissionDenied { path }
            | ProbeError::Io { path, .. }
            | ProbeError::Invalid { path, .. } => path,
        }
    }

    /// True when the file simply is not there.
    pub fn is_missing(&self) -> bool {
        matches!(self, ProbeError::Missing { .. })
    }
}

/// A parser's refusal of a file's text ([`hwsurvey_machine::ParseError`]) as
/// [`ProbeError::Invalid`].
impl From<hwsurvey_machine::ParseError> for ProbeError {
    fn from(e: hwsurvey_machine::ParseError) -> Self {
        ProbeError::Invalid {
            path: e.path,
            expected: e.expected,
            text: e.text,
        }
    }
}

impl From<ProbeError> for Unknown {
    fn from(e: ProbeError) -> Self {
        match e {
            ProbeError::Missing { path } => Unknown::Missing { path },
            ProbeError::PermissionDenied { path } => Unknown::PermissionDenied { path },
            ProbeError::Io { path, message } => Unknown::Invalid {
                path,
                detail: message,
            },
            ProbeError::Invalid {
                path,
                expected,
                text,
            } => Unknown::Invalid {
                path,
                detail: format!(
                    "expected {expected}, got {}",
                    hwsurvey_model::text::quote(&text)
                ),
            },
        }
    }
}

/// A directory standing for `/`, through which all probes read.
#[derive(Debug)]
pub struct SysRoot {
    root: PathBuf,
    accessed: Mutex<BTreeSet<String>>,
    /// Directories already resolved, keyed by their kernel path as given without the leading
    /// `/` (`sys/devices/system/cpu/cpu5/cache`), so that the many reads under one directory
    /// walk its components once (see [`SysRoot::resolve`]).
    dirs: Mutex<HashMap<String, Walked>>,
    /// Handles (`O_PATH`) of the resolved directories used last, most recent last, at most
    /// [`DIR_HANDLES`]: a file of a capture is looked up and opened relative to its directory's
    /// handle, so the kernel walks one component instead of the whole host path twice (lstat,
    /// open). Not for the live machine (see `dir_fd`).
    #[cfg(feature = "sys")]
    dir_fds: Mutex<Vec<(String, Arc<std::os::fd::OwnedFd>)>>,
}

/// Most directory handles a [`SysRoot`] keeps open (probes read a directory's files together,
/// so a few suffice; the bound keeps a probe of thousands of CPUs far from the fd limit).
#[cfg(feature = "sys")]
pub const DIR_HANDLES: usize = 8;

/// What a walk learned of a file with `lstat`: its `st_mode` and `st_size`.
#[derive(Debug, Clone, Copy)]
struct Meta {
    mode: u32,
    len: u64,
}

/// `S_IFMT`, `S_IFLNK` and `S_IFREG` of `st_mode` (POSIX, `<sys/stat.h>`).
const S_IFMT: u32 = 0o170000;
const S_IFLNK: u32 = 0o120000;
const S_IFREG: u32 = 0o100000;

impl Meta {
    fn of(meta: &std::fs::Metadata) -> Meta {
        use std::os::unix::fs::MetadataExt;
        Meta {
            mode: meta.mode(),
            len: meta.len(),
        }
    }
    fn is_symlink(self) -> bool {
        self.mode & S_IFMT == S_IFLNK
    }
    fn is_file(self) -> bool {
        self.mode & S_IFMT == S_IFREG
    }
}

/// Where the walk of a directory's components ended (one entry of [`SysRoot`]'s cache).
/// Resolved paths are kept as components joined by `/`, without the leading `/`.
#[derive(Debug, Clone)]
enum Walked {
    /// Every component exists: the resolved path and the symlinks followed on the way
    /// (counted against [`MAX_LINK_HOPS`] for the rest of the path).
    Found { done: String, hops: usize },
    /// A component is missing: the resolved path so far with the rest appended as given; a path
    /// below it resolves to this plus its own remaining components.
    Missing(String),
}

/// State of one component walk: resolved path so far (as in [`Walked`]) and symlinks followed.
struct Walk {
    done: String,
    hops: usize,
    /// False when a component was missing (the rest of the path was appended as given).
    complete: bool,
    /// The `lstat` of the resolved path when its last step was looking it up (not a symlink),
    /// so a read needs no second `stat`.
    last_meta: Option<Meta>,
}

/// Appends component `name` to resolved path `done`.
fn push_component(done: &mut String, name: &str) {
    if !done.is_empty() {
        done.push('/');
    }
    done.push_str(name);
}

/// Drops the last component of resolved path `done` (nothing at the root).
fn pop_component(done: &mut String) {
    match done.rfind('/') {
        Some(i) => done.truncate(i),
        None => done.clear(),
    }
}

/// `path` without its leading `/` when it is plain: absolute, no empty, `.` or `..`
/// component and no trailing `/` (then its text is the cache key of its directories).
fn plain_path(path: &str) -> Option<&str> {
    let rel = path.strip_prefix('/')?;
    let plain = !rel.is_empty()
        && !rel.ends_with('/')
        && !rel.contains("//")
        // most kernel paths hold no dot at all; those that do are checked component-wise
        && (!rel.contains('.') || rel.split('/').all(|c| c != "." && c != ".."));
    plain.then_some(rel)
}

/// Largest file a probe reads whole (the biggest real ones, /proc/cpuinfo on 8192-CPU
/// machines and DMI tables, stay well below). Larger is a corrupt capture.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Most symlinks followed resolving one path (Linux's `MAXSYMLINKS` is 40); more is a loop.
pub const MAX_LINK_HOPS: usize = 40;

/// The non-empty `/`-separated components of a path.
fn split_components(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

impl SysRoot {
    /// The live machine (`/`).
    pub fn live() -> Self {
        Self::new("/")
    }

    /// A captured snapshot extracted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        SysRoot {
            root: root.into(),
            accessed: Mutex::new(BTreeSet::new()),
            dirs: Mutex::new(HashMap::new()),
            #[cfg(feature = "sys")]
            dir_fds: Mutex::new(Vec::new()),
        }
    }

    /// The directory standing for `/`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True when this is the live machine.
    pub fn is_live(&self) -> bool {
        self.root == Path::new("/")
    }

    /// The host path of kernel path `path` (`/proc/cpuinfo` -> `<root>/proc/cpuinfo`), joined
    /// without following symlinks (see [`SysRoot::resolve`] for the path that is read).
    pub fn host_path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// Resolves kernel path `path` inside the root, component by component, as the kernel would
    /// if the root were `/` (a chroot): a symlink with an absolute target is re-rooted under the
    /// root, `..` never climbs above the root, and at most [`MAX_LINK_HOPS`] symlinks are
    /// followed (more is a loop: [`ProbeError::Io`] "too many levels of symbolic links").
    /// When `follow_last` is false a final symlink is not followed (for `read_link`).
    ///
    /// Returns the resolved kernel path (`/usr/lib/os-release` for `/etc/os-release`); a
    /// component that does not exist ends the walk, the rest is appended as given (so opening
    /// it reports it missing).
    ///
    /// Each directory on the way is walked once per `SysRoot` and remembered, with the symlinks
    /// followed in it (they still count against [`MAX_LINK_HOPS`]), so reading the hundreds of
    /// files under `/sys/devices/system/cpu/cpuN/` costs one lookup per file. Paths with `.`
    /// or `..` components are walked whole, as are a loop's (its error is not remembered).
    pub fn resolve(&self, path: &str, follow_last: bool) -> Result<String, ProbeError> {
        let walk = self.resolve_walk(path, follow_last)?;
        Ok(format!("/{}", walk.done))
    }

    /// [`SysRoot::resolve`], keeping the walk's last `lstat`.
    fn resolve_walk(&self, path: &str, follow_last: bool) -> Result<Walk, ProbeError> {
        let Some(rel) = plain_path(path) else {
            return self.walk(path, String::new(), path, 0, follow_last);
        };
        let (parent, last) = rel.rsplit_once('/').unwrap_or(("", rel));
        match self.resolve_dir(path, parent)? {
            Walked::Found { done, hops } => self.walk(path, done, last, hops, follow_last),
            Walked::Missing(mut done) => {
                push_component(&mut done, last);
                Ok(Walk {
                    done,
                    hops: 0,
                    complete: false,
                    last_meta: None,
                })
            }
        }
    }

    /// The walk of directory `dir` (a plain path without its leading `/`, see [`plain_path`];
    /// empty for the root), from the cache or by walking its last component from its parent's
    /// (itself resolved the same way). `path` is the path being resolved, for errors.
    fn resolve_dir(&self, path: &str, dir: &str) -> Result<Walked, ProbeError> {
        if dir.is_empty() {
            return Ok(Walked::Found {
                done: String::new(),
                hops: 0,
            });
        }
        if let Some(hit) = self.dirs.lock().ok().and_then(|m| m.get(dir).cloned()) {
            return Ok(hit);
        }
        let (parent, last) = dir.rsplit_once('/').unwrap_or(("", dir));
        let walked = match self.resolve_dir(path, parent)? {
            Walked::Found { done, hops } => {
                let w = self.walk(path, done, last, hops, true)?;
                if w.complete {
                    Walked::Found {
                        done: w.done,
                        hops: w.hops,
                    }
                } else {
                    Walked::Missing(w.done)
                }
            }
            Walked::Missing(mut done) => {
                push_component(&mut done, last);
                Walked::Missing(done)
            }
        };
        if let Ok(mut m) = self.dirs.lock() {
            m.insert(dir.to_string(), walked.clone());
        }
        Ok(walked)
    }

    /// Walks the components of `rest` (in order) from the resolved path `done`, `hops` symlinks
    /// already followed: the kernel's walk confined to the root (see [`SysRoot::resolve`]).
    fn walk(
        &self,
        path: &str,
        mut done: String,
        rest: &str,
        mut hops: usize,
        follow_last: bool,
    ) -> Result<Walk, ProbeError> {
        let mut todo: Vec<String> = split_components(rest);
        todo.reverse();
        let mut last_meta = None;
        while let Some(name) = todo.pop() {
            last_meta = None;
            match name.as_str() {
                "." => continue,
                ".." => {
                    pop_component(&mut done);
                    continue;
                }
                _ => {}
            }
            let parent_len = done.len();
            push_component(&mut done, &name);
            if todo.is_empty() && !follow_last {
                break;
            }
            let meta = match self.lstat_in(&done[..parent_len], &name) {
                Ok(m) => m,
                Err(_) => {
                    // Missing (or unreadable): the rest cannot be walked; opening reports it.
                    while let Some(rest) = todo.pop() {
                        push_component(&mut done, &rest);
                    }
                    return Ok(Walk {
                        done,
                        hops,
                        complete: false,
                        last_meta: None,
                    });
                }
            };
            if !meta.is_symlink() {
                last_meta = Some(meta);
                continue;
            }
            hops += 1;
            if hops > MAX_LINK_HOPS {
                return Err(ProbeError::Io {
                    path: path.to_string(),
                    message: format!(
                        "too many levels of symbolic links (more than {MAX_LINK_HOPS}, a loop)"
                    ),
                });
            }
            let target =
                std::fs::read_link(self.root.join(&done)).map_err(|e| Self::io_error(path, e))?;
            let target = target.to_string_lossy().into_owned();
            pop_component(&mut done);
            if target.starts_with('/') {
                done.clear();
            }
            todo.extend(split_components(&target).into_iter().rev());
        }
        Ok(Walk {
            done,
            hops,
            complete: true,
            last_meta,
        })
    }

    /// `lstat` of `name` in the resolved directory `parent` (as in [`Walked`]): relative to the
    /// directory's handle where one can be had, else by the whole host path.
    fn lstat_in(&self, parent: &str, name: &str) -> std::io::Result<Meta> {
        #[cfg(feature = "sys")]
        if let Some(fd) = self.dir_fd(parent) {
            use nix::fcntl::AtFlags;
            return nix::sys::stat::fstatat(&*fd, name, AtFlags::AT_SYMLINK_NOFOLLOW)
                .map(|st| Meta {
                    mode: st.st_mode,
                    len: st.st_size as u64,
                })
                .map_err(std::io::Error::from);
        }
        let mut host = self.root.join(parent);
        host.push(name);
        host.symlink_metadata().map(|m| Meta::of(&m))
    }

    /// Opens regular file `name` of the resolved directory `parent` for reading: relative to the
    /// directory's handle where one can be had (never following a final symlink: the walk found
    /// none), else by the whole host path.
    fn open_in(&self, parent: &str, name: &str) -> std::io::Result<std::fs::File> {
        #[cfg(feature = "sys")]
        if let Some(fd) = self.dir_fd(parent) {
            use nix::fcntl::OFlag;
            let flags = OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW | OFlag::O_NOCTTY;
            return nix::fcntl::openat(&*fd, name, flags, nix::sys::stat::Mode::empty())
                .map(std::fs::File::from)
                .map_err(std::io::Error::from);
        }
        let mut host = self.root.join(parent);
        host.push(name);
        std::fs::File::open(host)
    }

    /// The handle of resolved directory `dir` (the `dir_fds` field of [`SysRoot`]), opened `O_PATH` on a
    /// miss; `None` when it cannot be opened (the callers then use the whole path, which
    /// reports the error).
    ///
    /// Never for the live machine: it is read by whole paths, as every other program reads it,
    /// so that what the kernel (or an emulator) makes of each path holds. qemu-user with `-L`
    /// resolves `/` itself to its library prefix, and its emulated /proc files exist only for
    /// whole paths: read through handles, a live probe under qemu-aarch64 found
    /// `/etc/os-release` "too many levels of symbolic links" (seen in a fresh Debian root).
    #[cfg(feature = "sys")]
    fn dir_fd(&self, dir: &str) -> Option<Arc<std::os::fd::OwnedFd>> {
        use nix::fcntl::OFlag;
        if self.is_live() {
            return None;
        }
        let mut fds = self.dir_fds.lock().ok()?;
        if let Some(i) = fds.iter().position(|(d, _)| d == dir) {
            let entry = fds.remove(i);
            let fd = entry.1.clone();
            fds.push(entry);
            return Some(fd);
        }
        // `dir` was resolved: none of its components is a symlink, so O_NOFOLLOW only guards
        // against a tree changed under us.
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
        let fd =
            nix::fcntl::open(&self.root.join(dir), flags, nix::sys::stat::Mode::empty()).ok()?;
        let fd = Arc::new(fd);
        if fds.len() >= DIR_HANDLES {
            fds.remove(0);
        }
        fds.push((dir.to_string(), fd.clone()));
        Some(fd)
    }

    /// The host path read for kernel path `path` after [`SysRoot::resolve`], and that resolved
    /// kernel path (on the live root the OS would resolve the same way).
    fn open_path(&self, path: &str, follow_last: bool) -> Result<(PathBuf, String), ProbeError> {
        let resolved = self.resolve(path, follow_last)?;
        Ok((self.host_path(&resolved), resolved))
    }

    /// Records `path` and, when a symlink was followed, the resolved kernel path too (so a
    /// snapshot holds the link's target, e.g. `/usr/lib/os-release` for `/etc/os-release`).
    fn record_resolved(&self, path: &str, resolved: &str) {
        self.record(path);
        if resolved != path.trim_end_matches('/') && resolved != path {
            self.record(resolved);
        }
    }

    fn record(&self, path: &str) {
        if let Ok(mut set) = self.accessed.lock() {
            set.insert(path.to_string());
        }
    }

    /// Kernel paths of every file read and directory listed so far, sorted.
    pub fn accessed(&self) -> Vec<String> {
        self.accessed
            .lock()
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn io_error(path: &str, e: std::io::Error) -> ProbeError {
        match e.kind() {
            ErrorKind::NotFound => ProbeError::Missing {
                path: path.to_string(),
            },
            ErrorKind::PermissionDenied => ProbeError::PermissionDenied {
                path: path.to_string(),
            },
            _ => ProbeError::Io {
                path: path.to_string(),
                message: e.to_string(),
            },
        }
    }

    /// Reads a whole file as bytes (at most [`MAX_FILE_BYTES`]).
    pub fn read_bytes(&self, path: &str) -> Result<Vec<u8>, ProbeError> {
        use std::io::Read;
        let walk = self.resolve_walk(path, true)?;
        let resolved = format!("/{}", walk.done);
        // /proc and /sys files are regular files; a FIFO (which would block the open) or a
        // device node planted in a snapshot tree is refused before it is opened. The walk's
        // lstat of the last component serves when it was not a link.
        let meta = match walk.last_meta {
            Some(meta) => meta,
            None => std::fs::metadata(self.host_path(&resolved))
                .map(|m| Meta::of(&m))
                .map_err(|e| Self::io_error(path, e))?,
        };
        if !meta.is_file() {
            // the walk's lstat (or the stat of a link's target) said so; its kind by name
            let message = match std::fs::metadata(self.host_path(&resolved)) {
                Ok(m) => format!(
                    "is {}, not a regular file",
                    hwsurvey_model::files::kind_of(m.file_type())
                ),
                Err(_) => "is not a regular file".to_string(),
            };
            return Err(ProbeError::Io {
                path: path.to_string(),
                message,
            });
        }
        let (parent, name) = walk.done.rsplit_once('/').unwrap_or(("", &walk.done));
        let mut file = self
            .open_in(parent, name)
            .map_err(|e| Self::io_error(path, e))?;
        let size_bytes = meta.len;
        let mut buf = Vec::with_capacity(size_bytes.min(MAX_FILE_BYTES) as usize + 1);
        // In a snapshot the files are plain files whose size is their contents: reading that
        // many bytes is the whole file, without a second read to see the end. (Live /proc
        // files say 0 and /sys attributes 4096 whatever they hold: those are read to the end.)
        if !self.is_live() && size_bytes > 0 && size_bytes <= MAX_FILE_BYTES {
            (&mut file)
                .take(size_bytes)
                .read_to_end(&mut buf)
                .map_err(|e| Self::io_error(path, e))?;
        }
        if buf.len() as u64 != size_bytes || buf.is_empty() {
            (&mut file)
                .take(MAX_FILE_BYTES + 1 - buf.len() as u64)
                .read_to_end(&mut buf)
                .map_err(|e| Self::io_error(path, e))?;
        }
        if buf.len() as u64 > MAX_FILE_BYTES {
            return Err(ProbeError::Io {
                path: path.to_string(),
                message: format!("larger than {MAX_FILE_BYTES} bytes"),
            });
        }
        self.record_resolved(path, &resolved);
        Ok(buf)
    }

    /// Reads a whole file as text. Invalid UTF-8 is an [`ProbeError::Invalid`].
    pub fn read(&self, path: &str) -> Result<String, ProbeError> {
        let bytes = self.read_bytes(path)?;
        String::from_utf8(bytes).map_err(|e| {
            ProbeError::invalid(path, "UTF-8 text", &String::from_utf8_lossy(e.as_bytes()))
        })
    }

    /// Reads a one-line sysfs value, trimmed of white space and of the NUL bytes some capture
    /// tools (hwloc's gather script) leave at the end.
    pub fn read_value(&self, path: &str) -> Result<String, ProbeError> {
        Ok(self
            .read(path)?
            .trim_matches(|c: char| c == '\0' || c.is_whitespace())
            .to_string())
    }

    /// Reads and parses a one-line sysfs value with `FromStr`; a bad value names the path and text.
    pub fn read_parsed<T: std::str::FromStr>(
        &self,
        path: &str,
        expected: &str,
    ) -> Result<T, ProbeError> {
        let text = self.read_value(path)?;
        text.parse()
            .map_err(|_| ProbeError::invalid(path, expected, &text))
    }

    /// Like [`SysRoot::read`], but a missing file is `Ok(None)`.
    pub fn read_optional(&self, path: &str) -> Result<Option<String>, ProbeError> {
        match self.read(path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.is_missing() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Names of the entries of a directory, sorted (a missing directory is an error).
    pub fn list_dir(&self, path: &str) -> Result<Vec<String>, ProbeError> {
        let (host, resolved) = self.open_path(path, true)?;
        let entries = std::fs::read_dir(&host).map_err(|e| Self::io_error(path, e))?;
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        self.record_resolved(path, &resolved);
        Ok(names)
    }

    /// Whether a path exists under the root (a dangling symlink does not).
    pub fn exists(&self, path: &str) -> bool {
        self.open_path(path, true)
            .map(|(host, _)| host.exists())
            .unwrap_or(false)
    }

    /// Where a symlink points (e.g. `/sys/class/block/nvme0n1` -> `../../devices/...`).
    pub fn read_link(&self, path: &str) -> Result<PathBuf, ProbeError> {
        let (host, resolved) = self.open_path(path, false)?;
        let target = std::fs::read_link(host).map_err(|e| Self::io_error(path, e))?;
        self.record_resolved(path, &resolved);
        Ok(target)
    }
}

#[cfg(test)]
mod tests;

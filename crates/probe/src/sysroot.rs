//! [`SysRoot`]: the one door through which every probe reads /proc and /sys.
//!
//! A `SysRoot` is a directory standing for `/` (the live machine by default, or an extracted
//! snapshot given with `--root`). Paths are given as absolute kernel paths (`/proc/cpuinfo`)
//! and resolved under the root. Every successful read and every directory listing is recorded,
//! so `hwsurvey snapshot` can capture exactly the files the probes read.

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
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
    #[error("{path}: expected {expected}, got {text:?}")]
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
                detail: format!("expected {expected}, got {text:?}"),
            },
        }
    }
}

/// A directory standing for `/`, through which all probes read.
#[derive(Debug)]
pub struct SysRoot {
    root: PathBuf,
    accessed: Mutex<BTreeSet<String>>,
}

/// Largest file a probe reads whole (the biggest real ones, /proc/cpuinfo on 8192-CPU
/// machines and DMI tables, stay well below). Larger is a corrupt capture.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

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

    /// The host path of kernel path `path` (`/proc/cpuinfo` -> `<root>/proc/cpuinfo`).
    pub fn host_path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
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
        let host = self.host_path(path);
        let file = std::fs::File::open(&host).map_err(|e| Self::io_error(path, e))?;
        let mut buf = Vec::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut buf)
            .map_err(|e| Self::io_error(path, e))?;
        if buf.len() as u64 > MAX_FILE_BYTES {
            return Err(ProbeError::Io {
                path: path.to_string(),
                message: format!("larger than {MAX_FILE_BYTES} bytes"),
            });
        }
        self.record(path);
        Ok(buf)
    }

    /// Reads a whole file as text. Invalid UTF-8 is an [`ProbeError::Invalid`].
    pub fn read(&self, path: &str) -> Result<String, ProbeError> {
        let bytes = self.read_bytes(path)?;
        String::from_utf8(bytes).map_err(|e| {
            ProbeError::invalid(path, "UTF-8 text", &String::from_utf8_lossy(e.as_bytes()))
        })
    }

    /// Reads a one-line sysfs value, trimmed.
    pub fn read_value(&self, path: &str) -> Result<String, ProbeError> {
        Ok(self.read(path)?.trim().to_string())
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
        let host = self.host_path(path);
        let entries = std::fs::read_dir(&host).map_err(|e| Self::io_error(path, e))?;
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        self.record(path);
        Ok(names)
    }

    /// Whether a path exists under the root (a dangling symlink does not).
    pub fn exists(&self, path: &str) -> bool {
        self.host_path(path).exists()
    }

    /// Where a symlink points (e.g. `/sys/class/block/nvme0n1` -> `../../devices/...`).
    pub fn read_link(&self, path: &str) -> Result<PathBuf, ProbeError> {
        let target =
            std::fs::read_link(self.host_path(path)).map_err(|e| Self::io_error(path, e))?;
        self.record(path);
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_under_root_and_records() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sys/devices/system/cpu")).unwrap();
        std::fs::write(dir.path().join("sys/devices/system/cpu/online"), "0-3\n").unwrap();
        let root = SysRoot::new(dir.path());
        assert_eq!(
            root.read_value("/sys/devices/system/cpu/online").unwrap(),
            "0-3"
        );
        assert_eq!(
            root.read_parsed::<u32>("/sys/devices/system/cpu/online", "a number"),
            Err(ProbeError::invalid(
                "/sys/devices/system/cpu/online",
                "a number",
                "0-3"
            ))
        );
        assert!(root.read("/proc/cpuinfo").unwrap_err().is_missing());
        assert_eq!(root.read_optional("/proc/cpuinfo").unwrap(), None);
        assert_eq!(root.accessed(), vec!["/sys/devices/system/cpu/online"]);
    }
}

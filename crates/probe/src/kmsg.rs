//! The kernel log, read from `/dev/kmsg` under a root (Documentation/ABI/testing/dev-kmsg):
//! every record still in the ring buffer ([`read_all`]: the RAID-6 family reads the kernel's
//! boot-time benchmark), or the records logged since it was opened ([`Follower`]: the
//! hardware watch reads the hardware-error lines of each point).
//!
//! On the live machine `/dev/kmsg` is the character device (1, 11), opened non-blocking: each
//! `read` returns one record, `EAGAIN` when none is left, `EPIPE` when records were
//! overwritten before they were read (counted, and reading goes on). Under another root (a
//! test's tree) it is a regular file whose appended lines are the new records; a FIFO or a
//! device node planted in a capture is refused, as [`SysRoot`] refuses them. Opening needs
//! `CAP_SYSLOG` where `kernel.dmesg_restrict` is 1 (Debian's default): the error says so.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use crate::{ProbeError, SysRoot};

// The line classification of the hardware watch, under its path here.
pub use hwsurvey_machine::watch::kmsg::*;

/// The kernel log device.
pub const KMSG: &str = "/dev/kmsg";
/// Whether unprivileged users may read the kernel log (0) or not (1).
pub const DMESG_RESTRICT: &str = "/proc/sys/kernel/dmesg_restrict";
/// Largest record the kernel hands out (`CONSOLE_EXT_LOG_MAX`, 8 KiB), bytes.
const RECORD_BYTES: usize = 8192;
/// Most bytes one [`read_all`] or one [`Follower::events`] reads (a storm of messages must not
/// hold a run up or fill its memory): 4 MiB, about 30000 records.
pub const MAX_READ_BYTES: usize = 4 << 20;

/// Opens `/dev/kmsg` under `root`, non-blocking.
fn open(root: &SysRoot) -> Result<File, ProbeError> {
    use std::os::unix::fs::FileTypeExt as _;
    let host = root.host_path(KMSG);
    let meta = std::fs::metadata(&host).map_err(|e| io_error(root, e))?;
    let ok = if root.is_live() {
        meta.file_type().is_char_device()
    } else {
        meta.is_file()
    };
    if !ok {
        return Err(ProbeError::Io {
            path: KMSG.into(),
            message: format!(
                "is {}, not {}",
                hwsurvey_model::files::kind_of(meta.file_type()),
                if root.is_live() {
                    "the kernel's log device"
                } else {
                    "a regular file (a tree standing for /)"
                }
            ),
        });
    }
    open_nonblocking(&host).map_err(|e| io_error(root, e))
}

#[cfg(feature = "sys")]
fn open_nonblocking(path: &std::path::Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
}

#[cfg(not(feature = "sys"))]
fn open_nonblocking(_: &std::path::Path) -> std::io::Result<File> {
    Err(std::io::Error::other(
        "this build has no non-blocking open (built without the `sys` feature)",
    ))
}

/// The error of opening or reading `/dev/kmsg`, naming `kernel.dmesg_restrict` where it
/// forbids the read.
fn io_error(root: &SysRoot, e: std::io::Error) -> ProbeError {
    match e.kind() {
        std::io::ErrorKind::NotFound => ProbeError::Missing { path: KMSG.into() },
        std::io::ErrorKind::PermissionDenied => {
            let restrict = root
                .read_value(DMESG_RESTRICT)
                .map(|v| format!(" (kernel.dmesg_restrict = {v}: root only)"))
                .unwrap_or_default();
            ProbeError::PermissionDenied {
                path: format!("{KMSG}{restrict}"),
            }
        }
        _ => ProbeError::Io {
            path: KMSG.into(),
            message: e.to_string(),
        },
    }
}

/// What one pass over the new records gave.
#[derive(Debug, Default)]
struct Pass {
    /// Bytes read.
    bytes: usize,
    /// Records overwritten before they were read (`EPIPE`).
    lost: u64,
}

/// Reads records from `file` until none is left (or [`MAX_READ_BYTES`]), handing each line
/// to `each`.
fn drain(file: &mut File, mut each: impl FnMut(&str)) -> Result<Pass, std::io::Error> {
    let mut pass = Pass::default();
    let mut buf = vec![0u8; RECORD_BYTES];
    let mut partial = String::new();
    while pass.bytes < MAX_READ_BYTES {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                pass.bytes += n;
                partial.push_str(&String::from_utf8_lossy(buf.get(..n).unwrap_or(&[])));
                // a device read is one whole record; a regular file's ends where it was cut
                while let Some(end) = partial.find('\n') {
                    each(&partial[..end]);
                    partial.drain(..=end);
                }
            }
            Err(e) if e.raw_os_error() == Some(32) => pass.lost += 1,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    if !partial.is_empty() {
        each(&partial);
    }
    Ok(pass)
}

/// Every record still in the kernel's ring buffer, one line each with its header
/// (`6,312,276695,-;raid6: ...`), at most [`MAX_READ_BYTES`].
///
/// # Errors
/// `/dev/kmsg` missing, not readable (`kernel.dmesg_restrict`), or not the log device.
pub fn read_all(root: &SysRoot) -> Result<String, ProbeError> {
    let mut file = open(root)?;
    let mut text = String::new();
    drain(&mut file, |line| {
        text.push_str(line);
        text.push('\n');
    })
    .map_err(|e| io_error(root, e))?;
    Ok(text)
}

/// The kernel log from the moment it was opened: [`Follower::events`] returns the
/// hardware-error lines logged since the previous call.
#[derive(Debug)]
pub struct Follower {
    file: File,
    lost: u64,
}

/// The hardware-error lines of one [`Follower::events`] call.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct NewEvents {
    /// The first `max` events, in order.
    pub events: Vec<LogEvent>,
    /// Events beyond those.
    pub more: u64,
    /// Records overwritten in the ring buffer before they were read: lines that may have
    /// been hardware errors, unseen.
    pub lost: u64,
    /// Bytes read.
    pub bytes: usize,
}

impl Follower {
    /// Opens `/dev/kmsg` under `root` and skips what is already logged (`SEEK_END`: after the
    /// last record).
    ///
    /// # Errors
    /// As [`read_all`].
    pub fn open(root: &SysRoot) -> Result<Follower, ProbeError> {
        let mut file = open(root)?;
        file.seek(SeekFrom::End(0)).map_err(|e| io_error(root, e))?;
        Ok(Follower { file, lost: 0 })
    }

    /// The hardware-error lines logged since the last call ([`classify`]), the first `max`
    /// of them kept.
    ///
    /// # Errors
    /// A read error other than `EAGAIN` and `EPIPE`, naming `/dev/kmsg`.
    pub fn events(&mut self, max: usize) -> Result<NewEvents, ProbeError> {
        let mut out = NewEvents::default();
        let pass = drain(&mut self.file, |line| {
            if let Some(e) = record_text(line).and_then(classify) {
                if out.events.len() < max {
                    out.events.push(e);
                } else {
                    out.more += 1;
                }
            }
        })
        .map_err(|e| ProbeError::Io {
            path: KMSG.into(),
            message: e.to_string(),
        })?;
        self.lost += pass.lost;
        out.lost = pass.lost;
        out.bytes = pass.bytes;
        Ok(out)
    }

    /// Records lost since it was opened.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

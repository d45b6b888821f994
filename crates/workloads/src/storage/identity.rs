//! A raw device is resolved once, before the run, and every later open is checked against
//! that: the name the user gave (`--storage-device L`) may be a symbolic link or a node that
//! someone replaces while the run goes on (issue 32: `ln -sfn /dev/loopY L` mid-run made the
//! later tests write loopY, never named in the warning).
//!
//! [`keep`] records the device's [`DeviceIdentity`] for the path (device number `st_rdev`,
//! size, serial, the kernel's `diskseq`, which changes when a loop device is bound to another
//! file or a medium is swapped); [`open_for_writing`] opens the path, then compares what the
//! opened descriptor is (`fstat`, its size, its sysfs serial and diskseq) with what was kept, so
//! nothing that changed between the check and the open is written. A change refuses this open
//! and every later raw-device open of the run ([`changed`]).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use hwsurvey_probe::{block, SysRoot};
use serde::{Deserialize, Serialize};

use hwsurvey_probe::block::decode_dev;

/// What a raw device is: the facts compared at every open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceIdentity {
    /// (major, minor): `st_rdev` of the node.
    pub dev: (u32, u32),
    /// Kernel name (`loop3`, `sdb`), from /sys/dev/block/MAJ:MIN.
    pub kernel_name: Option<String>,
    /// Size in bytes (/sys/dev/block/MAJ:MIN/size x 512).
    pub size_bytes: Option<u64>,
    /// Serial (`device/serial`, or `serial` for virtio), trimmed; `None` where the device has
    /// none (loop devices).
    pub serial: Option<String>,
    /// The kernel's disk sequence number (`diskseq`, Linux 5.15+): new for every loop binding
    /// and every medium change; `None` on older kernels.
    pub diskseq: Option<u64>,
}

impl DeviceIdentity {
    /// The identity of block device `dev` read from sysfs under `root`.
    pub fn of_dev(root: &SysRoot, dev: (u32, u32)) -> DeviceIdentity {
        let dir = block::device_dir(root, dev.0, dev.1);
        let read = |name: &str| {
            dir.as_ref()
                .and_then(|d| block::attribute(root, &format!("{d}/{name}")))
        };
        DeviceIdentity {
            dev,
            kernel_name: dir
                .as_ref()
                .and_then(|d| d.rsplit('/').next().map(str::to_string)),
            size_bytes: read("size")
                .and_then(|s| s.parse::<u64>().ok())
                .map(|sectors| sectors.saturating_mul(512)),
            serial: read("device/serial").or_else(|| read("serial")),
            diskseq: read("diskseq").and_then(|s| s.parse().ok()),
        }
    }

    /// The identity of the block device node `path` now (stat follows links).
    ///
    /// Errors: the stat's error, or "not a block device".
    pub fn of_path(path: &Path) -> Result<DeviceIdentity, String> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let md = std::fs::metadata(path).map_err(|e| e.to_string())?;
        if !md.file_type().is_block_device() {
            return Err("not a block device".into());
        }
        Ok(DeviceIdentity::of_dev(
            &SysRoot::live(),
            decode_dev(md.rdev()),
        ))
    }

    /// `7:3 (loop3)`.
    fn shown(&self) -> String {
        format!(
            "{}:{} ({})",
            self.dev.0,
            self.dev.1,
            self.kernel_name.as_deref().unwrap_or("no kernel name")
        )
    }
}

/// What differs between the identity kept before the run and the one seen now, in words
/// (`it is now 7:3 (loop3), was 7:2 (loop2)`); `None` when it is the same device. Facts
/// unknown on either side are not compared.
pub fn difference(kept: &DeviceIdentity, now: &DeviceIdentity) -> Option<String> {
    if kept.dev != now.dev {
        return Some(format!("it is now {}, was {}", now.shown(), kept.shown()));
    }
    let mut d = Vec::new();
    if let (Some(a), Some(b)) = (kept.size_bytes, now.size_bytes) {
        if a != b {
            d.push(format!("its size is now {b} bytes, was {a}"));
        }
    }
    if kept.serial != now.serial {
        let s = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
        d.push(format!(
            "its serial is now {}, was {}",
            s(&now.serial),
            s(&kept.serial)
        ));
    }
    if let (Some(a), Some(b)) = (kept.diskseq, now.diskseq) {
        if a != b {
            d.push(format!(
                "its diskseq is now {b}, was {a} (a loop device bound again, or a new medium)"
            ));
        }
    }
    (!d.is_empty()).then(|| format!("{} {}", kept.shown(), d.join(", ")))
}

/// The identities kept for this run, by the path the user gave.
static KEPT: Mutex<Vec<(PathBuf, DeviceIdentity)>> = Mutex::new(Vec::new());
/// The first change seen in this run: every later raw-device open is refused.
static CHANGED: Mutex<Option<String>> = Mutex::new(None);

fn kept_list() -> std::sync::MutexGuard<'static, Vec<(PathBuf, DeviceIdentity)>> {
    KEPT.lock().unwrap_or_else(|p| p.into_inner())
}

/// Keeps the identity of `path` for this run (before the run, after its checks passed); the
/// identity already kept for it when there is one. Returns it.
///
/// Errors: as [`DeviceIdentity::of_path`].
pub fn keep(path: &Path) -> Result<DeviceIdentity, String> {
    if let Some(k) = kept(path) {
        return Ok(k);
    }
    let id = DeviceIdentity::of_path(path)?;
    kept_list().push((path.to_path_buf(), id.clone()));
    Ok(id)
}

/// The identity kept for `path`, if any.
pub fn kept(path: &Path) -> Option<DeviceIdentity> {
    kept_list()
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, id)| id.clone())
}

/// The change that stopped raw-device writes in this run, if one was seen.
pub fn changed() -> Option<String> {
    CHANGED.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

#[cfg(feature = "sys")]
fn record_change(what: &str) {
    let mut c = CHANGED.lock().unwrap_or_else(|p| p.into_inner());
    if c.is_none() {
        *c = Some(what.to_string());
    }
}

/// The error of a device that is not what was kept: recorded, so every later open refuses too.
#[cfg(feature = "sys")]
fn refuse_changed(path: &Path, detail: String) -> super::StorageError {
    let what = format!("{}: {detail}", hwsurvey_model::text::path(path));
    record_change(&what);
    super::StorageError::DeviceChanged {
        device: hwsurvey_model::text::path(path).into_owned(),
        detail,
    }
}

/// Opens raw device `path` for writing after every check passed, and checks that what was
/// opened is the device kept for `path` before the run ([`keep`]; kept now when the run kept
/// none): the path is stat-ed and [`super::device::check_device_with`]-ed again (every byte of
/// the span about to be written read: blank or hwsurvey's, unless confirmed), opened with
/// `O_RDWR | O_DIRECT | O_EXCL`, and the descriptor's `fstat`, size and sysfs identity compared
/// with the kept one. The span used is [`super::sample::written_span`] (min(`span_bytes`,
/// device size), whole MiB), preconditioned by writing it once with blocks that carry
/// hwsurvey's marker. Returns the name shown, the file and the span in bytes.
///
/// Errors: [`super::StorageError::DeviceChanged`] when a device changed in this run (this one
/// now, or an earlier one), [`super::StorageError::DeviceRefused`] for the checks and a failed
/// open, [`super::StorageError::Io`] and the precondition's errors.
#[cfg(feature = "sys")]
pub fn open_for_writing(
    path: &Path,
    span_bytes: u64,
    options: &super::device::WriteOptions,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<(String, std::fs::File, u64), super::StorageError> {
    use super::StorageError;
    use std::io::{Seek, SeekFrom};
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let name = hwsurvey_model::text::path(path).into_owned();
    // the span read before writing is the span written
    let options = &super::device::WriteOptions {
        span_bytes,
        ..options.clone()
    };
    if let Some(earlier) = changed() {
        return Err(StorageError::DeviceChanged {
            device: name,
            detail: format!("an earlier device changed during this run ({earlier})"),
        });
    }
    // a device no check kept before the run (the family driven without the command line's
    // check) is checked and kept now
    let (kept, checked) = match kept(path) {
        Some(k) => (k, false),
        None => {
            super::device::refuse(path, options)?;
            let k = keep(path).map_err(|e| StorageError::DeviceRefused {
                device: name.clone(),
                reasons: format!("cannot be looked at: {e}"),
            })?;
            (k, true)
        }
    };
    match DeviceIdentity::of_path(path) {
        Ok(now) => {
            if let Some(d) = difference(&kept, &now) {
                return Err(refuse_changed(path, d));
            }
        }
        Err(e) => {
            return Err(refuse_changed(
                path,
                format!("cannot be looked at now: {e}"),
            ))
        }
    }
    if !checked {
        super::device::refuse(path, options)?;
    }
    // O_EXCL on a block device: exclusive open, fails with EBUSY if anything mounts or holds it.
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags((nix::fcntl::OFlag::O_DIRECT | nix::fcntl::OFlag::O_EXCL).bits())
        .open(path)
        .map_err(|e| StorageError::DeviceRefused {
            device: name.clone(),
            reasons: format!("exclusive O_DIRECT open failed: {e}"),
        })?;
    let io = |op: &'static str| {
        let name = name.clone();
        move |e: std::io::Error| StorageError::Io {
            path: name,
            op,
            detail: e.to_string(),
        }
    };
    // What was opened, not what the name leads to now: the same device as kept, or nothing.
    let md = f.metadata().map_err(io("fstat"))?;
    let size = f.seek(SeekFrom::End(0)).map_err(io("seek end"))?;
    if !std::os::unix::fs::FileTypeExt::is_block_device(&md.file_type()) {
        return Err(refuse_changed(
            path,
            "the opened file is no block device".into(),
        ));
    }
    let mut opened = DeviceIdentity::of_dev(&SysRoot::live(), decode_dev(md.rdev()));
    opened.size_bytes = Some(size);
    if let Some(d) = difference(&kept, &opened) {
        return Err(refuse_changed(path, d));
    }
    // From here on the device holds our data: a later point of this run does not scan it again
    // (the precondition's pattern is not a signature, but it is not worth a false refusal).
    super::device::mark_written(kept.dev);
    let span = super::sample::written_span(span_bytes, size);
    let mut pattern = super::AlignedBuf::new(1 << 20);
    crate::raid6::fill_pseudo_random(pattern.as_mut_slice(), 0xde5);
    super::sample::stamp(pattern.as_mut_slice());
    super::target::precondition(&f, path, span, pattern.as_slice(), stop)?;
    Ok((name, f, span))
}

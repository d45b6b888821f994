//! Whether a raw block device may be written: it is written only when it is proven free.
//! Nothing may sit on it or under it: no partitions, no signature that util-linux recognises
//! (file system, RAID member, LVM PV, swap, crypto, partition table; through libblkid or its
//! commands, see [`super::blkid`], failing closed), not mounted in any mount namespace, not
//! held by another driver (LVM, MD, dm-crypt), no other block device built on it and nothing
//! else using the devices it is built on ([`super::stack`]: loop devices over it with any
//! offset, matched by the kernel's device and inode numbers, device mapper, MD, bcache, zram
//! writeback, mounted btrfs members, through partitions of those), not in use as swap, and not
//! opened exclusively by anyone (an `O_EXCL` open, with which the kernel itself refuses a
//! device in use). The span a run writes must be blank or hwsurvey's own, every byte of it read
//! ([`sample::check_data`]). Where any of this cannot be read, the device is refused
//! ([`Refusal::Undecided`], [`Refusal::SignatureUnchecked`], [`Refusal::DataUnchecked`]), with
//! the way to proceed.
//!
//! Pure parts take text and return typed values: [`parse_mountinfo`] (/proc/self/mountinfo,
//! proc(5) "mountinfo" fields), [`parse_swaps`] (/proc/swaps), [`decode_dev`] (glibc's
//! major/minor encoding of `dev_t`), [`refusals`] (the decision); the parsers are the
//! probe's ([`hwsurvey_probe::mounts`], [`hwsurvey_probe::block`]). [`inspect`] is the thin
//! reader over /sys/dev/block/MAJ:MIN (`holders/`, partition subdirectories with a `partition`
//! file and a `dev` file, read through [`hwsurvey_probe::block`]), the machine's block stack
//! ([`hwsurvey_probe::block::block_stack`], loop devices asked with `LOOP_GET_STATUS64`), the
//! signature scan and the data read; [`check_device_with`] adds the mount tables of every
//! mount namespace ([`hwsurvey_probe::mounts::read_every_namespace`]); [`describe`] reads
//! what a warning names (size, model, serial).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;

use hwsurvey_probe::{block, mounts, SysRoot};
use serde::{Deserialize, Serialize};

use super::blkid::{self, Found};
use super::{sample, stack};

pub use hwsurvey_probe::mounts::{parse_mountinfo, parse_swaps, MountEntry, MountinfoError};

pub use hwsurvey_probe::block::decode_dev;

/// What is known about a device for the decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceFacts {
    /// The path the user gave.
    pub path: String,
    /// Whether it is a block device node.
    pub is_block_device: bool,
    /// (major, minor).
    pub dev: Option<(u32, u32)>,
    /// Partitions of it (kernel names, `sdb1`) with their (major, minor).
    pub partitions: Vec<(String, (u32, u32))>,
    /// Entries of /sys/dev/block/MAJ:MIN/holders (`dm-0`, `md127`).
    pub holders: Vec<String>,
    /// Every signature found ([`blkid::scan`]).
    pub signatures: Vec<Found>,
    /// The checker that scanned it (`libblkid 2.38.1`, `wipefs (/usr/sbin/wipefs)`), or why no
    /// checker could: then the device is refused.
    pub signature_check: Result<String, String>,
    /// The kernel refused an exclusive open (`O_EXCL`): the error, e.g. "Device or resource
    /// busy". `None` when it succeeded or was not tried.
    pub exclusive_open_error: Option<String>,
    /// The path could not be looked at (`stat` failed): the error, e.g. "No such file or
    /// directory (os error 2)". Then nothing else about it is known.
    #[serde(default)]
    pub stat_error: Option<String>,
    /// Size of the block device, bytes (`/sys/dev/block/MAJ:MIN/size`, 512-byte sectors);
    /// `None` when unknown or not a block device.
    #[serde(default)]
    pub size_bytes: Option<u64>,
    /// Kernel name of the device (`loop0`, `sdb`), from the block stack.
    #[serde(default)]
    pub kernel_name: Option<String>,
    /// How the machine's block devices sit on one another
    /// ([`hwsurvey_probe::block::block_stack`]), for [`stack::stack_uses`].
    #[serde(default)]
    pub stack: block::BlockStack,
    /// Serial (`device/serial`, or `serial` for virtio), trimmed.
    #[serde(default)]
    pub serial: Option<String>,
    /// What a block device without any signature holds: every byte of the span a run
    /// writes, and blocks sampled beyond it ([`sample::check_data`]), or why they could not
    /// be read; `None` when not read (a signature was found, not a block device, written by
    /// this run).
    #[serde(default)]
    pub data: Option<Result<sample::DataCheck, String>>,
}

impl Default for DeviceFacts {
    fn default() -> Self {
        DeviceFacts {
            path: String::new(),
            is_block_device: false,
            dev: None,
            partitions: vec![],
            holders: vec![],
            signatures: vec![],
            signature_check: Ok("not scanned".into()),
            exclusive_open_error: None,
            stat_error: None,
            size_bytes: None,
            kernel_name: None,
            stack: block::BlockStack::default(),
            serial: None,
            data: None,
        }
    }
}

/// Why a device is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Refusal {
    /// `--destructive` was not given.
    NotDestructive,
    /// Not a block device node.
    NotABlockDevice,
    /// The path cannot be looked at (`stat` failed: missing, or no permission).
    NoSuchPath {
        /// The error.
        detail: String,
    },
    /// A block device of 0 bytes: no medium (an empty card reader, an unbound loop device).
    Empty,
    /// It has partitions.
    HasPartitions {
        /// Their kernel names.
        partitions: Vec<String>,
    },
    /// A filesystem, volume or partition-table signature was found.
    HasSignature {
        /// What and where.
        signatures: Vec<Found>,
        /// Which checker found them.
        checker: String,
    },
    /// No checker could scan it for signatures: refused, never written blind.
    SignatureUnchecked {
        /// Why.
        detail: String,
    },
    /// The kernel refused an exclusive open: something has it open exclusively (a mount, a
    /// RAID or device-mapper member, swap, another program).
    InUse {
        /// The open's error.
        detail: String,
    },
    /// It (or one of its partitions) is mounted.
    Mounted {
        /// Mount point.
        mount_point: String,
    },
    /// Another driver holds it (device mapper, MD).
    Held {
        /// Holder names.
        holders: Vec<String>,
    },
    /// Other block devices are built on it (a loop device over it, with or without an
    /// offset; device mapper, MD, bcache, a zram writing back to it, a mounted btrfs it is a
    /// member of; what is built on those), each named with how ([`stack::stack_uses`]).
    Stacked {
        /// What sits on it.
        users: Vec<String>,
    },
    /// It is built on another block device that something else uses too (mounted, swap, or
    /// another device built on it): writing it writes that.
    SharesLower {
        /// Each lower device and its other users.
        uses: Vec<String>,
    },
    /// No signature, but the span a run writes (every byte read), or a block sampled beyond
    /// it, holds data that is neither blank nor hwsurvey's (a plain dm-crypt volume, LUKS with
    /// a detached header, a wiped signature over a file system's data): refused unless
    /// confirmed by name (`--confirm-device`).
    HoldsData {
        /// What the read found.
        check: sample::DataCheck,
        /// How to confirm it ([`sample::how_to_confirm`]).
        how: String,
    },
    /// Its blocks could not be read for the data check.
    DataUnchecked {
        /// The error.
        detail: String,
    },
    /// Whether something sits on it cannot be decided: a loop device the kernel could not be
    /// asked about, a mount namespace whose table cannot be read. Refused, with the way to
    /// proceed; `--confirm-device` naming the device passes it.
    Undecided {
        /// What could not be read, and why.
        what: String,
        /// What the user can do so that it can be read.
        fix: String,
        /// The `--confirm-device` options that name the device
        /// ([`sample::confirm_options`]), when it has a serial or a size.
        confirm: Option<String>,
    },
    /// It is an active swap area.
    Swap,
    /// Its facts could not be read.
    Unreadable {
        /// The error.
        detail: String,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotDestructive => f.write_str("writing a raw device needs --destructive"),
            Refusal::NotABlockDevice => f.write_str("not a block device"),
            Refusal::NoSuchPath { detail } => write!(f, "cannot be looked at: {detail}"),
            Refusal::Empty => f.write_str(
                "a block device of 0 bytes (no medium, or a loop device with no file bound)",
            ),
            Refusal::HasPartitions { partitions } => {
                write!(f, "has partitions: {}", partitions.join(", "))
            }
            Refusal::HasSignature {
                signatures,
                checker,
            } => {
                let s: Vec<String> = signatures.iter().map(|s| s.to_string()).collect();
                write!(
                    f,
                    "holds a signature: {} (found by {checker})",
                    s.join(", ")
                )
            }
            Refusal::SignatureUnchecked { detail } => {
                write!(f, "cannot be checked for signatures: {detail}")
            }
            Refusal::InUse { detail } => {
                write!(f, "in use (the kernel refused an exclusive open: {detail})")
            }
            Refusal::Mounted { mount_point } => write!(f, "mounted at {mount_point}"),
            Refusal::Held { holders } => write!(f, "held by {}", holders.join(", ")),
            Refusal::Stacked { users } => {
                let what = if users.len() == 1 {
                    "another block device sits on it"
                } else {
                    "other block devices sit on it"
                };
                write!(f, "{what}: {}", users.join(" and "))
            }
            Refusal::SharesLower { uses } => f.write_str(&uses.join(" and ")),
            Refusal::HoldsData { check, how } => write!(
                f,
                "no signature, but it holds data ({check}): an encrypted volume (plain \
                 dm-crypt, LUKS with a detached header) or a file system whose signature was \
                 wiped looks like this; {how}"
            ),
            Refusal::DataUnchecked { detail } => {
                write!(f, "its blocks cannot be read for data: {detail}")
            }
            Refusal::Undecided { what, fix, confirm } => {
                write!(
                    f,
                    "cannot tell whether anything sits on it: {what}; to proceed, {fix}"
                )?;
                match confirm {
                    Some(c) => write!(f, ", or, knowing that nothing uses it, add {c}"),
                    None => Ok(()),
                }
            }
            Refusal::Swap => f.write_str("in use as swap"),
            Refusal::Unreadable { detail } => write!(f, "cannot be inspected: {detail}"),
        }
    }
}

/// Every reason to refuse writing the device; empty means it may be used.
pub fn refusals(
    facts: &DeviceFacts,
    destructive: bool,
    mounts: &[MountEntry],
    swaps: &[String],
) -> Vec<Refusal> {
    let mut r = Vec::new();
    if !destructive {
        r.push(Refusal::NotDestructive);
    }
    if let Some(detail) = &facts.stat_error {
        // nothing else is known of a path that is not there
        r.push(Refusal::NoSuchPath {
            detail: detail.clone(),
        });
        return r;
    }
    if !facts.is_block_device {
        r.push(Refusal::NotABlockDevice);
    }
    if facts.is_block_device && facts.size_bytes == Some(0) {
        r.push(Refusal::Empty);
    }
    if !facts.partitions.is_empty() {
        r.push(Refusal::HasPartitions {
            partitions: facts.partitions.iter().map(|p| p.0.clone()).collect(),
        });
    }
    match &facts.signature_check {
        Ok(checker) if !facts.signatures.is_empty() => r.push(Refusal::HasSignature {
            signatures: facts.signatures.clone(),
            checker: checker.clone(),
        }),
        Ok(_) => {}
        // a path that is no block device is refused for that; why libblkid could not read a
        // directory or /dev/null is noise beside it
        Err(_) if !facts.is_block_device => {}
        Err(detail) => r.push(Refusal::SignatureUnchecked {
            detail: detail.clone(),
        }),
    }
    if let Some(detail) = &facts.exclusive_open_error {
        r.push(Refusal::InUse {
            detail: detail.clone(),
        });
    }
    let mut devs: Vec<(u32, u32)> = facts.partitions.iter().map(|p| p.1).collect();
    devs.extend(facts.dev);
    let part_names: Vec<String> = facts
        .partitions
        .iter()
        .map(|p| format!("/dev/{}", p.0))
        .collect();
    for m in mounts {
        let by_dev = devs.contains(&(m.major, m.minor));
        let by_source = m.source == facts.path || part_names.contains(&m.source);
        if by_dev || by_source {
            r.push(Refusal::Mounted {
                mount_point: m.shown(),
            });
        }
    }
    let uses = match &facts.kernel_name {
        Some(name) => stack::stack_uses(&facts.stack, name, mounts, swaps),
        None => vec![],
    };
    let (above, below): (Vec<_>, Vec<_>) = uses.into_iter().partition(|u| u.above);
    if !above.is_empty() {
        r.push(Refusal::Stacked {
            users: above.into_iter().map(|u| u.text).collect(),
        });
    }
    if !below.is_empty() {
        r.push(Refusal::SharesLower {
            uses: below.into_iter().map(|u| u.text).collect(),
        });
    }
    // holders the stack does not name already (facts read without a stack)
    let holders: Vec<String> = facts
        .holders
        .iter()
        .filter(|h| {
            !facts.stack.edges.iter().any(|e| {
                &e.upper == *h
                    && Some(&e.lower) == facts.kernel_name.as_ref()
                    && e.link == block::StackLink::Holder
            })
        })
        .cloned()
        .collect();
    if !holders.is_empty() {
        r.push(Refusal::Held { holders });
    }
    if swaps
        .iter()
        .any(|s| *s == facts.path || part_names.contains(s))
    {
        r.push(Refusal::Swap);
    }
    // what could not be decided: a loop device the kernel could not be asked about
    if facts.is_block_device && !facts.stack.undecided.is_empty() {
        r.push(Refusal::Undecided {
            what: facts.stack.undecided.join("; "),
            fix: "run hwsurvey as root on the host, where every loop device's /dev node can be \
                  opened, or detach a loop device that is not needed (losetup -d /dev/loopN)"
                .into(),
            confirm: sample::confirm_options(facts.serial.as_deref(), facts.size_bytes),
        });
    }
    // the weakest reason last: data without a signature, which the user may confirm
    if facts.is_block_device && facts.signatures.is_empty() {
        match &facts.data {
            Some(Ok(c)) if c.holds_data() => r.push(Refusal::HoldsData {
                check: c.clone(),
                how: sample::how_to_confirm(facts.serial.as_deref(), facts.size_bytes),
            }),
            Some(Err(detail)) => r.push(Refusal::DataUnchecked {
                detail: detail.clone(),
            }),
            _ => {}
        }
    }
    r
}

/// The refusal of a device whose mounts cannot all be read ([`mounts::NamespaceError`]),
/// with the way to proceed for each cause.
pub fn namespace_refusal(
    e: &mounts::NamespaceError,
    serial: Option<&str>,
    size_bytes: Option<u64>,
) -> Refusal {
    use mounts::NamespaceError as E;
    let fix = match e {
        E::Unreadable { .. } | E::HiddenProcesses { .. } => {
            "run hwsurvey as root, which can read every process's mount namespace".to_string()
        }
        E::NotInitialPidNamespace { .. } => {
            "run hwsurvey on the host, outside any container, where every process is seen"
                .to_string()
        }
        E::KeptNamespace { at, .. } => {
            let path = at.split(" (in ").next().unwrap_or(at);
            format!(
                "see its mounts with nsenter --mount={path} findmnt, and unmount the \
                 namespace file (umount {path}) if it is not needed"
            )
        }
    };
    Refusal::Undecided {
        what: format!("the mounts of every mount namespace cannot be read: {e}"),
        fix,
        confirm: sample::confirm_options(serial, size_bytes),
    }
}

/// Devices (major, minor) this process has written: their data is ours (the precondition's
/// pattern), so a later point of the same run does not scan them for signatures again.
static WRITTEN: Mutex<BTreeSet<(u32, u32)>> = Mutex::new(BTreeSet::new());

/// Records that this process is about to write device `dev` (after every check passed).
pub fn mark_written(dev: (u32, u32)) {
    if let Ok(mut w) = WRITTEN.lock() {
        w.insert(dev);
    }
}

fn written_by_us(dev: Option<(u32, u32)>) -> bool {
    dev.is_some_and(|d| WRITTEN.lock().is_ok_and(|w| w.contains(&d)))
}

/// [`inspect_span`] reading the whole device for data.
pub fn inspect(path: &Path, root: &SysRoot) -> DeviceFacts {
    inspect_span(path, root, u64::MAX)
}

/// Reads the facts of `path` from the live system: node type and number (stat), partitions and
/// holders of /sys/dev/block/MAJ:MIN under `root` (the probe's [`block`] readers), the block
/// stack (every loop device asked what it is over, [`block::LiveBacking`]), every signature
/// ([`blkid::scan`], read only) and, on a block device without any, every byte of the first
/// `span_bytes` (whole MiB, at most the device: the span a run writes) and blocks sampled
/// beyond ([`sample::check_data`], read only, past the page cache). Signatures and data are
/// not read again on a device this process already wrote ([`mark_written`]). The exclusive
/// open is tried by [`check_device`], not here.
pub fn inspect_span(path: &Path, root: &SysRoot, span_bytes: u64) -> DeviceFacts {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let mut facts = DeviceFacts {
        path: path.display().to_string(),
        ..Default::default()
    };
    let md = match std::fs::metadata(path) {
        Ok(md) => md,
        Err(e) => {
            facts.stat_error = Some(e.to_string());
            return facts;
        }
    };
    facts.is_block_device = md.file_type().is_block_device();
    if facts.is_block_device {
        let dev = decode_dev(md.rdev());
        facts.dev = Some(dev);
        if let Some(dir) = block::device_dir(root, dev.0, dev.1) {
            facts.holders = block::holders(root, &dir);
            facts.partitions = block::partitions(root, &dir);
            facts.size_bytes = block::attribute(root, &format!("{dir}/size"))
                .and_then(|s| s.parse::<u64>().ok())
                .map(|sectors| sectors.saturating_mul(512));
            facts.serial = block::attribute(root, &format!("{dir}/device/serial"))
                .or_else(|| block::attribute(root, &format!("{dir}/serial")));
        }
        facts.stack = block::block_stack(root, &block::LiveBacking);
        facts.kernel_name = facts.stack.name_of(dev).map(str::to_string);
    }
    if written_by_us(facts.dev) {
        facts.signature_check = Ok("not scanned: written by this run".into());
        return facts;
    }
    match blkid::scan(path) {
        Ok(scan) => {
            facts.signatures = scan.found;
            facts.signature_check = Ok(scan.checker);
        }
        Err(e) => facts.signature_check = Err(e),
    }
    if facts.is_block_device && facts.signatures.is_empty() {
        if let Some(size) = facts.size_bytes.filter(|&b| b > 0) {
            facts.data = Some(sample::check_data(path, size, span_bytes));
        }
    }
    facts
}

/// Tries an exclusive read-only open (`O_RDONLY | O_EXCL`) of a block device: on Linux this
/// claims the device like a mount does, and fails with EBUSY while anything else holds it
/// (mounted, an MD or device-mapper member, active swap, another exclusive opener). The claim
/// ends when the file closes. Returns the error text, `None` when it succeeded.
#[cfg(feature = "sys")]
pub fn exclusive_open_error(path: &Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_EXCL.bits())
        .open(path)
        .err()
        .map(|e| e.to_string())
}

/// What the user allowed for raw devices: `--destructive` and the `--confirm-device` values,
/// and the span the run writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    /// `--destructive`.
    pub destructive: bool,
    /// `--confirm-device SERIAL|SIZE` values: a device without signature that holds data, or
    /// one whose users cannot all be read, is written only when one names it
    /// ([`sample::confirmed_by`]).
    pub confirm: Vec<String>,
    /// Bytes a run writes on each device from byte 0 (the plan's largest storage.iops
    /// `file_size_bytes`; 0 when it writes none): every byte of it, at most the device, is
    /// read before the device is accepted. The default, `u64::MAX`, reads the whole device.
    pub span_bytes: u64,
}

impl Default for WriteOptions {
    /// Not destructive, nothing confirmed, the whole device read.
    fn default() -> Self {
        WriteOptions {
            destructive: false,
            confirm: vec![],
            span_bytes: u64::MAX,
        }
    }
}

/// Inspects `path` and decides ([`check_device_with`], the whole device read for data).
/// Returns the refusals (empty: may be written).
pub fn check_device(path: &Path, destructive: bool) -> Vec<Refusal> {
    check_device_with(
        path,
        &WriteOptions {
            destructive,
            ..Default::default()
        },
    )
}

/// Inspects `path` ([`inspect_span`] over `options.span_bytes`) and decides, reading the mount
/// tables of every mount namespace ([`mounts::read_every_namespace`]; when they cannot all be
/// read, this process's own serves the other reasons and the device is refused as
/// [`Refusal::Undecided`]) and /proc/swaps, and (with the `sys` feature) trying an exclusive
/// open of a block device. [`Refusal::HoldsData`] and [`Refusal::Undecided`] are dropped when
/// a `--confirm-device` value names the device (its serial or its size in bytes). Returns the
/// refusals (empty: may be written).
pub fn check_device_with(path: &Path, options: &WriteOptions) -> Vec<Refusal> {
    let root = SysRoot::live();
    #[allow(unused_mut)]
    let mut facts = inspect_span(path, &root, options.span_bytes);
    #[cfg(feature = "sys")]
    if facts.is_block_device {
        facts.exclusive_open_error = exclusive_open_error(path);
    }
    // every namespace's mounts for a block device; a path that is none is refused for that
    let every = facts
        .is_block_device
        .then(|| mounts::read_every_namespace(&root));
    let (mounts, unread) = match every {
        Some(Ok(m)) => (m, None),
        every => match mounts::read_mountinfo(&root) {
            Ok(own) => (own, every.and_then(Result::err)),
            Err(detail) => return vec![Refusal::Unreadable { detail }],
        },
    };
    let swaps = mounts::read_swaps(&root);
    let confirmed =
        sample::confirmed_by(&options.confirm, facts.serial.as_deref(), facts.size_bytes);
    let mut r = refusals(&facts, options.destructive, &mounts, &swaps);
    if let Some(e) = unread {
        // before the data, the weakest reason
        let at = r
            .iter()
            .position(|x| matches!(x, Refusal::HoldsData { .. } | Refusal::DataUnchecked { .. }))
            .unwrap_or(r.len());
        r.insert(
            at,
            namespace_refusal(&e, facts.serial.as_deref(), facts.size_bytes),
        );
    }
    r.into_iter()
        .filter(|r| {
            !(confirmed && matches!(r, Refusal::HoldsData { .. } | Refusal::Undecided { .. }))
        })
        .collect()
}

/// [`check_device_with`] as an error: [`super::StorageError::DeviceRefused`] with every
/// reason on one line, the path escaped for the terminal.
pub fn refuse(path: &Path, options: &WriteOptions) -> Result<(), super::StorageError> {
    let refused = check_device_with(path, options);
    if refused.is_empty() {
        return Ok(());
    }
    // one line whatever a name in it holds (a backing file's path, a dm name, a mount point)
    let reasons: Vec<String> = refused
        .iter()
        .map(|r| hwsurvey_model::text::escape_controls(&r.to_string(), "").into_owned())
        .collect();
    Err(super::StorageError::DeviceRefused {
        device: hwsurvey_model::text::path(path).into_owned(),
        reasons: reasons.join("; "),
    })
}

/// What a warning names about a device that is about to be overwritten.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceDescription {
    /// The path the user gave, escaped for the terminal ([`hwsurvey_model::text::path`]).
    pub path: String,
    /// Kernel name (`sdb`, `nvme1n1`, `loop3`), from /sys/dev/block/MAJ:MIN.
    pub kernel_name: Option<String>,
    /// Size in bytes: /sys/block/NAME/size (512-byte sectors) x 512.
    pub size_bytes: Option<u64>,
    /// /sys/block/NAME/device/model, trimmed.
    pub model: Option<String>,
    /// /sys/block/NAME/device/serial or /sys/block/NAME/serial (virtio), trimmed.
    pub serial: Option<String>,
    /// Names in /dev/disk/by-id that point at it (`nvme-Samsung_SSD_980_S64DNX0R123456`).
    pub by_id: Vec<String>,
    /// For a loop device: /sys/block/NAME/loop/backing_file.
    pub backing_file: Option<String>,
}

impl std::fmt::Display for DeviceDescription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // every field escaped: a path, model or serial with a newline or ESC stays one line
        let esc = |s: &str| hwsurvey_model::text::escape_controls(s, "").into_owned();
        let unknown = |v: &Option<String>| v.as_deref().map_or_else(|| "unknown".into(), esc);
        write!(
            f,
            "{} ({}, {}, model {}, serial {}",
            esc(&self.path),
            esc(self.kernel_name.as_deref().unwrap_or("no kernel name")),
            self.size_bytes
                .map(|b| format!(
                    "{} bytes = {}",
                    b,
                    hwsurvey_model::units::format_bytes_binary(b)
                ))
                .unwrap_or_else(|| "size unknown".into()),
            unknown(&self.model),
            unknown(&self.serial),
        )?;
        if let Some(first) = self.by_id.first() {
            write!(f, ", /dev/disk/by-id/{}", esc(first))?;
        }
        if let Some(b) = &self.backing_file {
            write!(f, ", loop over {}", esc(b))?;
        }
        f.write_str(")")
    }
}

/// Reads [`DeviceDescription`] of `path` from the live system (sysfs under `root` through the
/// probe's [`block`] readers, links under `/dev/disk/by-id`). Facts that cannot be read stay
/// `None`.
pub fn describe(path: &Path, root: &SysRoot) -> DeviceDescription {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let mut d = DeviceDescription {
        path: hwsurvey_model::text::path(path).into_owned(),
        ..Default::default()
    };
    let Ok(md) = std::fs::metadata(path) else {
        return d;
    };
    if !md.file_type().is_block_device() {
        return d;
    }
    let (ma, mi) = decode_dev(md.rdev());
    let Some(real) = block::device_dir(root, ma, mi) else {
        return d;
    };
    let read = |name: &str| block::attribute(root, &format!("{real}/{name}"));
    d.size_bytes = read("size")
        .and_then(|s| s.parse::<u64>().ok())
        .map(|sectors| sectors.saturating_mul(512));
    d.model = read("device/model");
    d.serial = read("device/serial").or_else(|| read("serial"));
    d.backing_file = read("loop/backing_file");
    d.kernel_name = real.rsplit('/').next().map(str::to_string);
    if let Ok(rd) = std::fs::read_dir("/dev/disk/by-id") {
        let mut ids: Vec<String> = rd
            .flatten()
            .filter(|e| {
                std::fs::metadata(e.path()).is_ok_and(|m| {
                    m.file_type().is_block_device() && decode_dev(m.rdev()) == (ma, mi)
                })
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        ids.sort();
        d.by_id = ids;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_t_encoding() {
        // makedev(254, 0) and makedev(259, 65536+3) as glibc builds them.
        assert_eq!(decode_dev(0xfe00), (254, 0));
        fn makedev(ma: u64, mi: u64) -> u64 {
            ((ma & 0xfff) << 8) | ((ma & !0xfff) << 32) | (mi & 0xff) | ((mi & !0xff) << 12)
        }
        assert_eq!(decode_dev(makedev(259, 65539)), (259, 65539));
        assert_eq!(decode_dev(makedev(8, 17)), (8, 17));
    }
}

//! Pure parsers of what the kernel says about who uses a block device, for the storage
//! family's proof that a raw device is free (the readers are `hwsurvey_probe::block` and
//! `hwsurvey_probe::mounts`):
//!
//! - [`parse_loop_info64`]: the `struct loop_info64` that `ioctl(LOOP_GET_STATUS64)` fills for a
//!   loop device (include/uapi/linux/loop.h): the backing file's device and inode numbers as
//!   the kernel holds them, whatever its path has become since (deleted, a removed `mknod`
//!   node, a name the sysfs text cannot carry);
//! - [`parse_ns_link`]: the target of a `/proc/PID/task/TID/ns/mnt` link, `mnt:[4026531841]`
//!   (namespaces(7)), the mount namespace's inode number;
//! - [`parse_task_stat`]: the state and flags of `/proc/PID/task/TID/stat` (proc(5) fields 3 and
//!   9), which tell a task that is exiting (it has no namespaces left) from one whose files
//!   cannot be read.

use serde::{Deserialize, Serialize};

/// Bytes of `struct loop_info64` (linux/loop.h: five `__u64`, four `__u32`, 64 + 64 + 32 name
/// and key bytes, two `__u64`).
pub const LOOP_INFO64_BYTES: usize = 232;

/// `LOOP_GET_STATUS64` (linux/loop.h, 0x4C05): the ioctl that fills a `struct loop_info64`.
pub const LOOP_GET_STATUS64: u32 = 0x4C05;

/// The fields of `struct loop_info64` the stack walk needs. The kernel fills the three
/// numbers from `vfs_getattr` of the file it holds open (drivers/block/loop.c,
/// `loop_get_status`), encoded as `huge_encode_dev` does, which is glibc's `makedev` encoding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopInfo64 {
    /// `lo_device`: `st_dev` of the backing file (the file system it is on).
    pub device: u64,
    /// `lo_inode`: `st_ino` of the backing file.
    pub inode: u64,
    /// `lo_rdevice`: `st_rdev` of the backing file: the block device's number when the loop
    /// is over a block device node, 0 for a regular file.
    pub rdevice: u64,
    /// `lo_offset`, bytes.
    pub offset_bytes: u64,
    /// `lo_sizelimit`, bytes; 0 when unlimited.
    pub size_limit_bytes: u64,
    /// `lo_number`: the loop device's index (N of loopN).
    pub number: u32,
    /// `lo_flags` (LO_FLAGS_READ_ONLY 1, AUTOCLEAR 4, PARTSCAN 8, DIRECT_IO 16).
    pub flags: u32,
    /// `lo_file_name`: the first 63 bytes of the backing path as given at set-up (NUL
    /// trimmed); for display only, never for matching.
    pub file_name: String,
}

/// Parses the bytes of a `struct loop_info64` in the machine's own byte order (as the ioctl
/// returns it). `None` when fewer than [`LOOP_INFO64_BYTES`] bytes are given.
pub fn parse_loop_info64(bytes: &[u8]) -> Option<LoopInfo64> {
    if bytes.len() < LOOP_INFO64_BYTES {
        return None;
    }
    let u64_at = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&bytes[at..at + 8]);
        u64::from_ne_bytes(b)
    };
    let u32_at = |at: usize| {
        let mut b = [0u8; 4];
        b.copy_from_slice(&bytes[at..at + 4]);
        u32::from_ne_bytes(b)
    };
    let name = &bytes[56..120];
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    Some(LoopInfo64 {
        device: u64_at(0),
        inode: u64_at(8),
        rdevice: u64_at(16),
        offset_bytes: u64_at(24),
        size_limit_bytes: u64_at(32),
        number: u32_at(40),
        flags: u32_at(52),
        file_name: String::from_utf8_lossy(&name[..end]).into_owned(),
    })
}

/// The inode number in a namespace link's target: `mnt:[4026531841]` -> 4026531841 for
/// `kind` `mnt`. `None` for another kind or another shape.
pub fn parse_ns_link(text: &str, kind: &str) -> Option<u64> {
    text.trim()
        .strip_prefix(kind)?
        .strip_prefix(":[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The inode number of the initial PID namespace (include/linux/proc_ns.h
/// `PROC_PID_INIT_INO`, 0xEFFFFFFC, fixed since Linux 3.8): a process whose
/// `/proc/self/ns/pid` is `pid:[4026531836]` sees every process of the machine in /proc.
pub const PROC_PID_INIT_INO: u64 = 0xEFFF_FFFC;

/// `PF_EXITING` (include/linux/sched.h): the task is exiting; its namespaces are released
/// before it becomes a zombie.
pub const PF_EXITING: u64 = 0x4;

/// What `/proc/PID/task/TID/stat` says of a task's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskStat {
    /// Field 3, `state`: `R`, `S`, `D`, `Z` (zombie), `X` (dead), ...
    pub state: char,
    /// Field 9, `flags` (the kernel's `PF_*`).
    pub flags: u64,
}

impl TaskStat {
    /// Whether the task is exiting or gone (zombie, dead, `PF_EXITING`): its namespace links
    /// and mount table can no longer be read, and it holds no mount namespace.
    pub fn is_exiting(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x') || self.flags & PF_EXITING != 0
    }
}

/// Parses fields 3 and 9 of a `stat` line, `pid (comm) state ppid pgrp session tty_nr tpgid
/// flags ...`; the command name may hold spaces and parentheses, so the fields are counted
/// after the last `)`. `None` when the line is not of that shape.
pub fn parse_task_stat(text: &str) -> Option<TaskStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let flags = fields.nth(5)?.parse().ok()?;
    Some(TaskStat { state, flags })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes `LOOP_GET_STATUS64` returned for /dev/loop3 over `/var/tmp/b.img` from byte
    /// 1 MiB, laid out field by field.
    fn loop_info_bytes() -> Vec<u8> {
        let mut b = Vec::new();
        for v in [2049u64, 131_075, 0, 1 << 20, 0] {
            b.extend(v.to_ne_bytes());
        }
        for v in [3u32, 0, 0, 8 | 4] {
            b.extend(v.to_ne_bytes());
        }
        let mut name = [0u8; 64];
        name[..14].copy_from_slice(b"/var/tmp/b.img");
        b.extend(name);
        b.extend([0u8; 64 + 32 + 16]);
        b
    }

    #[test]
    fn loop_info64_fields_by_offset() {
        let b = loop_info_bytes();
        assert_eq!(b.len(), LOOP_INFO64_BYTES);
        let i = parse_loop_info64(&b).unwrap();
        assert_eq!(
            i,
            LoopInfo64 {
                device: 2049,
                inode: 131_075,
                rdevice: 0,
                offset_bytes: 1 << 20,
                size_limit_bytes: 0,
                number: 3,
                flags: 12,
                file_name: "/var/tmp/b.img".into(),
            }
        );
        assert_eq!(parse_loop_info64(&b[..231]), None);
    }

    #[test]
    fn namespace_links_and_task_states() {
        assert_eq!(
            parse_ns_link("mnt:[4026531841]", "mnt"),
            Some(4_026_531_841)
        );
        assert_eq!(
            parse_ns_link("pid:[4026531836]\n", "pid"),
            Some(PROC_PID_INIT_INO)
        );
        assert_eq!(parse_ns_link("pid:[4026531836]", "mnt"), None);
        assert_eq!(parse_ns_link("mnt:[x]", "mnt"), None);
        // a command name with spaces and a parenthesis; flags 0x400140 (a kworker), 0x404044
        // (PF_EXITING set)
        let s = parse_task_stat("42 (a) b) S 1 42 42 0 -1 4194624 90 0 0 0").unwrap();
        assert_eq!(
            s,
            TaskStat {
                state: 'S',
                flags: 4_194_624
            }
        );
        assert!(!s.is_exiting());
        assert!(parse_task_stat("7 (x) R 1 7 7 0 -1 4210756 0")
            .unwrap()
            .is_exiting());
        assert!(parse_task_stat("7 (x) Z 1 7 7 0 -1 0 0")
            .unwrap()
            .is_exiting());
        assert_eq!(parse_task_stat("7 x R"), None);
        assert_eq!(parse_task_stat("7 (x) R 1 2"), None);
    }
}

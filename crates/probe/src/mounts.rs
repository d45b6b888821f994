//! `/proc/self/mountinfo` (proc(5) "mountinfo" fields) and `/proc/swaps`: pure parsers
//! ([`parse_mountinfo`], [`parse_swaps`]) and readers under a [`SysRoot`]
//! ([`read_mountinfo`], [`read_swaps`]). The storage family reads through them which
//! filesystem a test directory is on and whether a raw device is mounted or in use as swap.

use serde::{Deserialize, Serialize};

use crate::SysRoot;

/// The mount table of the calling process.
pub const MOUNTINFO_PATH: &str = "/proc/self/mountinfo";

/// The active swap areas.
pub const SWAPS_PATH: &str = "/proc/swaps";

/// One line of /proc/self/mountinfo (the fields this check needs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountEntry {
    /// Device major number (field 3, `MAJ:MIN`).
    pub major: u32,
    /// Device minor number.
    pub minor: u32,
    /// Mount point (field 5, octal escapes such as `\040` decoded).
    pub mount_point: String,
    /// Filesystem type (first field after the ` - ` separator).
    pub fs_type: String,
    /// Mount source (`/dev/vda`, `tmpfs`, ...).
    pub source: String,
}

/// A mountinfo line that is not in the kernel's format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("/proc/self/mountinfo line {line_no}: expected `ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - FSTYPE SOURCE SUPEROPTS`, got {line:?}")]
pub struct MountinfoError {
    /// 1-based line number.
    pub line_no: usize,
    /// The line.
    pub line: String,
}

/// Decodes mountinfo's and swaps' octal escapes (`\\040` space, `\\011` tab, `\\012` newline,
/// `\\134` backslash); other text is kept as is.
pub fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses /proc/self/mountinfo text.
///
/// Errors: [`MountinfoError`] naming the first line that lacks the fields or the ` - ` separator.
pub fn parse_mountinfo(text: &str) -> Result<Vec<MountEntry>, MountinfoError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = || MountinfoError {
            line_no: i + 1,
            line: line.to_string(),
        };
        let fields: Vec<&str> = line.split(' ').collect();
        let sep = fields.iter().position(|f| *f == "-").ok_or_else(bad)?;
        if sep < 6 || fields.len() < sep + 3 {
            return Err(bad());
        }
        let (maj, min) = fields[2].split_once(':').ok_or_else(bad)?;
        out.push(MountEntry {
            major: maj.parse().map_err(|_| bad())?,
            minor: min.parse().map_err(|_| bad())?,
            mount_point: unescape(fields[4]),
            fs_type: fields[sep + 1].to_string(),
            source: unescape(fields[sep + 2]),
        });
    }
    Ok(out)
}

/// Device paths of active swap areas in /proc/swaps (header line skipped).
pub fn parse_swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(unescape)
        .collect()
}

/// Reads and parses [`MOUNTINFO_PATH`] under `root`.
///
/// Errors: the file cannot be read (`"/proc/self/mountinfo: permission denied"`) or a line is
/// not in the kernel's format ([`MountinfoError`]'s text), as a sentence for a refusal.
pub fn read_mountinfo(root: &SysRoot) -> Result<Vec<MountEntry>, String> {
    let text = root.read(MOUNTINFO_PATH).map_err(|e| e.to_string())?;
    parse_mountinfo(&text).map_err(|e| e.to_string())
}

/// The filesystem type mounted from device (`major`, `minor`), the last such mount of
/// [`MOUNTINFO_PATH`] under `root` (the one on top); `None` when it cannot be read or no mount
/// has that device.
pub fn fs_type_of_device(root: &SysRoot, dev: (u32, u32)) -> Option<String> {
    read_mountinfo(root)
        .ok()?
        .into_iter()
        .rev()
        .find(|e| (e.major, e.minor) == dev)
        .map(|e| e.fs_type)
}

/// Device paths of the active swap areas in [`SWAPS_PATH`] under `root`; empty when it cannot
/// be read (no swap support).
pub fn read_swaps(root: &SysRoot) -> Vec<String> {
    root.read(SWAPS_PATH)
        .map(|t| parse_swaps(&t))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escape_and_error() {
        let m = parse_mountinfo(
            "36 35 8:17 / /mnt/my\\040disk rw,noatime master:1 - ext4 /dev/sdb1 rw\n",
        )
        .unwrap();
        assert_eq!(m[0].mount_point, "/mnt/my disk");
        assert_eq!((m[0].major, m[0].minor), (8, 17));
        assert_eq!(m[0].source, "/dev/sdb1");
        let e = parse_mountinfo("36 35 8:17 / /mnt rw\n").unwrap_err();
        assert_eq!(e.line_no, 1);
    }
}

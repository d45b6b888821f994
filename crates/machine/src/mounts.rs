//! `/proc/self/mountinfo` (proc(5), "mountinfo") and `/proc/swaps`, parsed: [`parse_mountinfo`]
//! and [`parse_swaps`]. The one reader of each file is `hwsurvey_probe::mounts`. The storage
//! family asks through them which filesystem a test directory is on and whether a raw device is
//! mounted or in use as swap; the cgroup readers find the cgroup hierarchies' mount points
//! ([`crate::os::cgroup::CgroupMount::of_mounts`]).

use serde::{Deserialize, Serialize};

/// The mount table of the calling process.
pub const MOUNTINFO_PATH: &str = "/proc/self/mountinfo";

/// The active swap areas.
pub const SWAPS_PATH: &str = "/proc/swaps";

/// One line of /proc/self/mountinfo (the fields hwsurvey reads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountEntry {
    /// The mount's ID (field 1): unique over every mount namespace of the machine while the
    /// mount exists.
    #[serde(default)]
    pub mount_id: u64,
    /// Device major number (field 3, `MAJ:MIN`).
    pub major: u32,
    /// Device minor number.
    pub minor: u32,
    /// The root of the mount within its file system (field 4, decoded): `/`, a bind mount's
    /// folder, or for a namespace file bind-mounted (`nsfs`) the namespace, `mnt:[4026532174]`.
    #[serde(default)]
    pub root: String,
    /// Mount point (field 5, octal escapes such as `\040` decoded).
    pub mount_point: String,
    /// Filesystem type (first field after the ` - ` separator).
    pub fs_type: String,
    /// Mount source (`/dev/vda`, `tmpfs`, ...).
    pub source: String,
    /// The file system's own options (the last field: `rw,hidepid=invisible`).
    #[serde(default)]
    pub super_options: String,
    /// The mount namespace the mount was read from when it is not this process's own
    /// (`hwsurvey_probe::mounts::read_every_namespace`): `mount namespace mnt:[4026532174] of
    /// pid 4242 (sleep)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl MountEntry {
    /// The mount point as a reader is told it: `/mnt`, or `/mnt (in mount namespace
    /// mnt:[4026532174] of pid 4242 (sleep))` for another namespace's mount.
    pub fn shown(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} (in {ns})", self.mount_point),
            None => self.mount_point.clone(),
        }
    }
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

/// Parses /proc/self/mountinfo text, every line: the kernel writes each in the format of
/// [`MountinfoError`]. Blank lines are skipped.
///
/// # Errors
/// [`MountinfoError`] naming the first line that lacks the fields, the ` - ` separator or a
/// numeric mount ID and `MAJ:MIN` device number: the whole table is refused (a mount a check
/// must see could be the damaged line), never read in part.
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
            mount_id: fields[0].parse().map_err(|_| bad())?,
            major: maj.parse().map_err(|_| bad())?,
            minor: min.parse().map_err(|_| bad())?,
            root: unescape(fields[3]),
            mount_point: unescape(fields[4]),
            fs_type: fields[sep + 1].to_string(),
            source: unescape(fields[sep + 2]),
            super_options: fields.get(sep + 3).map(|o| unescape(o)).unwrap_or_default(),
            namespace: None,
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
        assert_eq!(m[0].root, "/");
        assert_eq!(m[0].super_options, "rw");
        let e = parse_mountinfo("36 35 8:17 / /mnt rw\n").unwrap_err();
        assert_eq!(e.line_no, 1);
    }

    /// A damaged line anywhere refuses the table, naming the line (the cgroup readers used a
    /// second parser that skipped it).
    #[test]
    fn a_bad_line_after_good_ones_is_named() {
        let good = "25 30 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        let e = parse_mountinfo(&format!("{good}{good}garbage line\n")).unwrap_err();
        assert_eq!((e.line_no, e.line.as_str()), (3, "garbage line"));
        assert!(e
            .to_string()
            .starts_with("/proc/self/mountinfo line 3: expected `ID PARENT"));
        let m = parse_mountinfo(&format!("{good}\n{good}")).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].super_options, "rw,nsdelegate");
    }

    #[test]
    fn swaps_skip_the_header() {
        let text = "Filename\tType\tSize\tUsed\tPriority\n/dev/vda3 partition 1 0 -2\n\
                    /swap\\040file file 2 0 -3\n";
        assert_eq!(parse_swaps(text), ["/dev/vda3", "/swap file"]);
    }
}

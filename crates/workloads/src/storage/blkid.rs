//! Every signature util-linux recognises on a device: file systems, RAID members (MD, DDF,
//! Intel, ...), LVM physical volumes, swap, LUKS and other crypto, partition tables.
//!
//! Three checkers, the first available wins, and none is a list of magic numbers of our own:
//! 1. libblkid, linked in (`cfg(hwsurvey_libblkid)`, set by crates/workloads/build.rs when the
//!    `libblkid` feature is on and the target's `libblkid.a` exists): a low-level probe with
//!    superblock and partition-table chains enabled, bad checksums accepted
//!    (`BLKID_SUBLKS_BADCSUM`), every signature listed by `blkid_do_probe` as wipefs does.
//! 2. util-linux's `wipefs --no-act --json --output TYPE,OFFSET,USAGE DEVICE` (read only; lists
//!    every signature, libblkid underneath).
//! 3. `blkid -p -o export DEVICE` (exit 0: found, 2: nothing, 8: several, ambivalent).
//!
//! When none can answer, [`scan`] returns an error: the caller refuses the device (fail closed).
//! Pure parts: [`parse_wipefs_json`], [`parse_blkid_export`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One signature found on a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Found {
    /// libblkid's TYPE or PTTYPE: `ext4`, `squashfs`, `LVM2_member`, `linux_raid_member`,
    /// `swap`, `crypto_LUKS`, `dos`, `gpt`, ...
    pub type_name: String,
    /// libblkid's USAGE (`filesystem`, `raid`, `crypto`, `other`), or `partition table`.
    pub usage: Option<String>,
    /// Byte offset of the magic from the start of the device, when reported.
    pub offset_bytes: Option<u64>,
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.type_name)?;
        if let Some(u) = &self.usage {
            write!(f, " ({u})")?;
        }
        if let Some(o) = self.offset_bytes {
            write!(f, " at byte {o}")?;
        }
        Ok(())
    }
}

/// What a scan found and which checker found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scan {
    /// `libblkid 2.38.1`, `wipefs (/usr/sbin/wipefs)`, `blkid -p (/usr/sbin/blkid)`.
    pub checker: String,
    /// Every signature; empty: the device is blank as far as util-linux can tell.
    pub found: Vec<Found>,
}

/// The checker this build uses first: `libblkid <version>` when linked, otherwise the
/// command it falls back to, or a sentence saying that none is available.
pub fn checker() -> String {
    #[cfg(hwsurvey_libblkid)]
    {
        format!("libblkid {}", ffi::version())
    }
    #[cfg(not(hwsurvey_libblkid))]
    {
        match (find_command("wipefs"), find_command("blkid")) {
            (Some(w), _) => format!("wipefs ({}), libblkid not linked", w.display()),
            (None, Some(b)) => format!("blkid -p ({}), libblkid not linked", b.display()),
            (None, None) => NO_CHECKER.to_string(),
        }
    }
}

/// Why a build without libblkid and without util-linux's commands refuses every raw device.
pub const NO_CHECKER: &str = "no signature check available: libblkid is not linked into this \
     build and neither wipefs nor blkid (util-linux) is installed";

/// Scans `path` (a block device or an image file) for every signature.
///
/// Errors: a one-line reason when no checker could answer (device unreadable, no libblkid and
/// no util-linux command, a command that failed); the caller must then refuse the device.
pub fn scan(path: &Path) -> Result<Scan, String> {
    #[cfg(hwsurvey_libblkid)]
    {
        ffi::scan(path)
    }
    #[cfg(not(hwsurvey_libblkid))]
    {
        scan_with_commands(path)
    }
}

/// The fallback of builds without libblkid, public so that tests hold it where libblkid is
/// linked too: wipefs, then `blkid -p`, else an error.
pub fn scan_with_commands(path: &Path) -> Result<Scan, String> {
    scan_with_commands_in(path, &search_dirs())
}

/// [`scan_with_commands`] looking for the commands only in `dirs` (tests: an empty directory
/// shows that a system without util-linux refuses).
pub fn scan_with_commands_in(path: &Path, dirs: &[PathBuf]) -> Result<Scan, String> {
    let find = |name: &str| dirs.iter().map(|d| d.join(name)).find(|p| p.is_file());
    let mut tried = Vec::new();
    if let Some(w) = find("wipefs") {
        let out = std::process::Command::new(&w)
            .args(["--no-act", "--json", "--output", "TYPE,OFFSET,USAGE"])
            .arg(path)
            .output();
        match out {
            Ok(o) if o.status.success() => {
                match parse_wipefs_json(&String::from_utf8_lossy(&o.stdout)) {
                    Ok(found) => {
                        return Ok(Scan {
                            checker: format!("wipefs ({})", w.display()),
                            found,
                        })
                    }
                    Err(e) => tried.push(format!("{}: {e}", w.display())),
                }
            }
            Ok(o) => tried.push(format!(
                "{}: {} ({})",
                w.display(),
                o.status,
                first_line(&String::from_utf8_lossy(&o.stderr))
            )),
            Err(e) => tried.push(format!("{}: {e}", w.display())),
        }
    }
    if let Some(b) = find("blkid") {
        let out = std::process::Command::new(&b)
            .args(["-p", "-o", "export"])
            .arg(path)
            .output();
        let checker = format!("blkid -p ({})", b.display());
        match out {
            Ok(o) => match o.status.code() {
                Some(0) => {
                    return Ok(Scan {
                        checker,
                        found: parse_blkid_export(&String::from_utf8_lossy(&o.stdout)),
                    })
                }
                Some(2) => {
                    return Ok(Scan {
                        checker,
                        found: vec![],
                    })
                }
                Some(8) => {
                    return Ok(Scan {
                        checker,
                        found: vec![Found {
                            type_name: "several signatures (ambivalent probe)".into(),
                            usage: None,
                            offset_bytes: None,
                        }],
                    })
                }
                _ => tried.push(format!(
                    "{}: {} ({})",
                    b.display(),
                    o.status,
                    first_line(&String::from_utf8_lossy(&o.stderr))
                )),
            },
            Err(e) => tried.push(format!("{}: {e}", b.display())),
        }
    }
    if tried.is_empty() {
        Err(NO_CHECKER.into())
    } else {
        Err(format!("signature check failed: {}", tried.join("; ")))
    }
}

fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("").trim();
    let mut out: String = l.chars().take(120).collect();
    if l.chars().count() > 120 {
        out.push('…');
    }
    out
}

/// `name` on PATH or in /usr/sbin, /sbin, /usr/bin, /bin (util-linux's tools are in sbin,
/// often not on a user's PATH).
pub fn find_command(name: &str) -> Option<PathBuf> {
    search_dirs()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn search_dirs() -> Vec<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .collect()
}

#[derive(Deserialize)]
struct WipefsOut {
    signatures: Vec<WipefsSig>,
}

#[derive(Deserialize)]
struct WipefsSig {
    #[serde(rename = "type")]
    type_name: Option<String>,
    offset: Option<String>,
    usage: Option<String>,
}

/// Parses `wipefs --json --output TYPE,OFFSET,USAGE` (`{"signatures": [{"type": "ext4",
/// "offset": "0x438", "usage": "filesystem"}]}`; offsets are hex).
///
/// Errors: text that is not that JSON, naming the serde error.
pub fn parse_wipefs_json(text: &str) -> Result<Vec<Found>, String> {
    let out: WipefsOut =
        serde_json::from_str(text).map_err(|e| format!("unexpected wipefs --json output: {e}"))?;
    Ok(out
        .signatures
        .into_iter()
        .map(|s| Found {
            type_name: s.type_name.unwrap_or_else(|| "unknown".into()),
            usage: s.usage.filter(|u| !u.is_empty()),
            offset_bytes: s.offset.and_then(|o| {
                let o = o.trim();
                match o.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16).ok(),
                    None => o.parse().ok(),
                }
            }),
        })
        .collect())
}

/// Parses `blkid -p -o export` (`KEY=value` lines): one [`Found`] for TYPE (with USAGE and
/// SBMAGIC_OFFSET) and one for PTTYPE (with PTMAGIC_OFFSET), each when present.
pub fn parse_blkid_export(text: &str) -> Vec<Found> {
    let get = |k: &str| {
        text.lines()
            .filter_map(|l| l.split_once('='))
            .find(|(key, _)| *key == k)
            .map(|(_, v)| v.to_string())
    };
    let mut found = Vec::new();
    if let Some(t) = get("TYPE") {
        found.push(Found {
            type_name: t,
            usage: get("USAGE"),
            offset_bytes: get("SBMAGIC_OFFSET").and_then(|o| o.parse().ok()),
        });
    }
    if let Some(t) = get("PTTYPE") {
        found.push(Found {
            type_name: t,
            usage: Some("partition table".into()),
            offset_bytes: get("PTMAGIC_OFFSET").and_then(|o| o.parse().ok()),
        });
    }
    found
}

#[cfg(hwsurvey_libblkid)]
mod ffi {
    //! The few libblkid calls the scan needs (util-linux blkid.h, stable since 2.15).
    use std::ffi::{c_char, c_int, c_void, CStr, CString};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    use super::{Found, Scan};

    type BlkidProbe = *mut c_void;

    const BLKID_SUBLKS_TYPE: c_int = 1 << 5;
    const BLKID_SUBLKS_USAGE: c_int = 1 << 7;
    const BLKID_SUBLKS_MAGIC: c_int = 1 << 9;
    const BLKID_SUBLKS_BADCSUM: c_int = 1 << 10;
    const BLKID_PARTS_MAGIC: c_int = 1 << 3;

    extern "C" {
        fn blkid_get_library_version(ver: *mut *const c_char, date: *mut *const c_char) -> c_int;
        fn blkid_new_probe_from_filename(filename: *const c_char) -> BlkidProbe;
        fn blkid_free_probe(pr: BlkidProbe);
        fn blkid_probe_enable_superblocks(pr: BlkidProbe, enable: c_int) -> c_int;
        fn blkid_probe_set_superblocks_flags(pr: BlkidProbe, flags: c_int) -> c_int;
        fn blkid_probe_enable_partitions(pr: BlkidProbe, enable: c_int) -> c_int;
        fn blkid_probe_set_partitions_flags(pr: BlkidProbe, flags: c_int) -> c_int;
        fn blkid_do_probe(pr: BlkidProbe) -> c_int;
        fn blkid_probe_lookup_value(
            pr: BlkidProbe,
            name: *const c_char,
            data: *mut *const c_char,
            len: *mut usize,
        ) -> c_int;
    }

    /// libblkid's version string (`2.38.1`).
    pub fn version() -> String {
        let mut v: *const c_char = std::ptr::null();
        let mut d: *const c_char = std::ptr::null();
        // SAFETY: both out-pointers are valid; libblkid stores pointers to static strings.
        unsafe { blkid_get_library_version(&mut v, &mut d) };
        if v.is_null() {
            return "unknown version".into();
        }
        // SAFETY: a NUL-terminated static string of libblkid.
        unsafe { CStr::from_ptr(v) }.to_string_lossy().into_owned()
    }

    /// Frees the probe on every path.
    struct Probe(BlkidProbe);

    impl Drop for Probe {
        fn drop(&mut self) {
            // SAFETY: a probe from blkid_new_probe_from_filename, freed once.
            unsafe { blkid_free_probe(self.0) }
        }
    }

    impl Probe {
        fn value(&self, name: &CStr) -> Option<String> {
            let mut data: *const c_char = std::ptr::null();
            let mut len = 0usize;
            // SAFETY: valid probe and out-pointers; data points into the probe's values,
            // NUL-terminated, alive until the next probe step (copied at once).
            let rc =
                unsafe { blkid_probe_lookup_value(self.0, name.as_ptr(), &mut data, &mut len) };
            if rc != 0 || data.is_null() {
                return None;
            }
            // SAFETY: as above.
            Some(
                unsafe { CStr::from_ptr(data) }
                    .to_string_lossy()
                    .into_owned(),
            )
        }
    }

    pub fn scan(path: &Path) -> Result<Scan, String> {
        let checker = format!("libblkid {}", version());
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| format!("{}: path holds a NUL byte", path.display()))?;
        // SAFETY: a valid C string; NULL is checked.
        let raw = unsafe { blkid_new_probe_from_filename(c.as_ptr()) };
        if raw.is_null() {
            return Err(format!(
                "{checker}: cannot open for probing: {}",
                std::io::Error::last_os_error()
            ));
        }
        let pr = Probe(raw);
        // SAFETY: a valid probe; the flag values are blkid.h's.
        unsafe {
            blkid_probe_enable_superblocks(pr.0, 1);
            blkid_probe_set_superblocks_flags(
                pr.0,
                BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE | BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_BADCSUM,
            );
            blkid_probe_enable_partitions(pr.0, 1);
            blkid_probe_set_partitions_flags(pr.0, BLKID_PARTS_MAGIC);
        }
        let mut found = Vec::new();
        // Each step finds the next signature of any chain (1: no more, negative: error).
        for _ in 0..256 {
            // SAFETY: a valid probe.
            let rc = unsafe { blkid_do_probe(pr.0) };
            if rc == 1 {
                return Ok(Scan { checker, found });
            }
            if rc < 0 {
                return Err(format!(
                    "{checker}: probe of {} failed: {}",
                    path.display(),
                    std::io::Error::last_os_error()
                ));
            }
            if let Some(t) = pr.value(c"TYPE") {
                found.push(Found {
                    type_name: t,
                    usage: pr.value(c"USAGE"),
                    offset_bytes: pr.value(c"SBMAGIC_OFFSET").and_then(|o| o.parse().ok()),
                });
            } else if let Some(t) = pr.value(c"PTTYPE") {
                found.push(Found {
                    type_name: t,
                    usage: Some("partition table".into()),
                    offset_bytes: pr.value(c"PTMAGIC_OFFSET").and_then(|o| o.parse().ok()),
                });
            } else {
                found.push(Found {
                    type_name: "unnamed signature".into(),
                    usage: None,
                    offset_bytes: None,
                });
            }
        }
        Err(format!(
            "{checker}: more than 256 signatures on {}",
            path.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wipefs_json_and_blkid_export_parse() {
        let w = r#"{
   "signatures": [
      {"type": "ext4", "offset": "0x438", "usage": "filesystem"},
      {"type": "dos", "offset": "0x1fe", "usage": "partition table"}
   ]
}"#;
        let f = parse_wipefs_json(w).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].type_name, "ext4");
        assert_eq!(f[0].offset_bytes, Some(1080));
        assert_eq!(f[1].offset_bytes, Some(510));
        assert_eq!(f[0].to_string(), "ext4 (filesystem) at byte 1080");
        assert_eq!(
            parse_wipefs_json("{\"signatures\": [\n\n]}\n").unwrap(),
            vec![]
        );
        assert!(parse_wipefs_json("wipefs: error").is_err());
        let b = parse_blkid_export(
            "DEVNAME=x.img\nUUID=fd5a\nTYPE=squashfs\nUSAGE=filesystem\nSBMAGIC_OFFSET=0\n",
        );
        assert_eq!(
            b,
            vec![Found {
                type_name: "squashfs".into(),
                usage: Some("filesystem".into()),
                offset_bytes: Some(0)
            }]
        );
        assert_eq!(
            parse_blkid_export("PTTYPE=gpt\nPTMAGIC_OFFSET=512\n")[0].to_string(),
            "gpt (partition table) at byte 512"
        );
    }
}

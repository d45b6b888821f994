//! Whether a device without any signature holds data: blocks sampled over the whole device.
//! A plain dm-crypt volume or a LUKS volume with a detached header has no signature at all, yet
//! it is full of data (issue 32); such a device is refused unless the user confirms it by name
//! (`--confirm-device SERIAL|SIZE`, [`confirmed_by`]).
//!
//! Pure parts: [`sample_offsets`] (where), [`is_blank`] (what counts as blank),
//! [`DataSample::from_blocks`]; [`sample`] reads the blocks (`pread`, read only).

use serde::{Deserialize, Serialize};

/// Bytes per sampled block.
pub const BLOCK_BYTES: u64 = 4096;
/// Blocks sampled evenly over the device, besides the first and last MiB read whole.
pub const SPREAD_BLOCKS: u64 = 256;

/// Byte offsets of the blocks to sample on a device of `size_bytes`: every block of the first
/// and of the last MiB (where volumes keep their headers and backup headers), and
/// [`SPREAD_BLOCKS`] blocks evenly spaced between; sorted, without duplicates, each block
/// wholly inside the device.
pub fn sample_offsets(size_bytes: u64) -> Vec<u64> {
    let blocks = size_bytes / BLOCK_BYTES;
    if blocks == 0 {
        return vec![];
    }
    let edge = (1 << 20) / BLOCK_BYTES;
    let mut out: Vec<u64> = (0..edge.min(blocks)).collect();
    out.extend(blocks.saturating_sub(edge)..blocks);
    out.extend((0..SPREAD_BLOCKS).map(|i| i * blocks / SPREAD_BLOCKS));
    out.sort_unstable();
    out.dedup();
    out.into_iter().map(|b| b * BLOCK_BYTES).collect()
}

/// Whether a block is blank: every byte 0x00 (never written, discarded, zeroed) or every byte
/// 0xFF (erased flash).
pub fn is_blank(block: &[u8]) -> bool {
    match block.first() {
        None => true,
        Some(&b) => (b == 0 || b == 0xff) && block.iter().all(|&x| x == b),
    }
}

/// What the sample found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataSample {
    /// Blocks read.
    pub blocks: usize,
    /// Blocks that were not blank ([`is_blank`]).
    pub not_blank: usize,
    /// Byte offset of the first block that was not blank.
    pub first_at: Option<u64>,
}

impl DataSample {
    /// The sample of `(offset, block)` pairs.
    pub fn from_blocks<'a>(blocks: impl IntoIterator<Item = (u64, &'a [u8])>) -> DataSample {
        let mut s = DataSample {
            blocks: 0,
            not_blank: 0,
            first_at: None,
        };
        for (off, b) in blocks {
            s.blocks += 1;
            if !is_blank(b) {
                s.not_blank += 1;
                s.first_at = Some(s.first_at.map_or(off, |f| f.min(off)));
            }
        }
        s
    }
}

/// Reads the [`sample_offsets`] blocks of `path` (`size_bytes` long).
///
/// Errors: the open or read error, with the offset.
pub fn sample(path: &std::path::Path, size_bytes: u64) -> Result<DataSample, String> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; BLOCK_BYTES as usize];
    let mut s = DataSample::from_blocks(std::iter::empty());
    for off in sample_offsets(size_bytes) {
        f.read_exact_at(&mut buf, off)
            .map_err(|e| format!("reading {BLOCK_BYTES} bytes at byte {off}: {e}"))?;
        let one = DataSample::from_blocks([(off, &buf[..])]);
        s.blocks += 1;
        s.not_blank += one.not_blank;
        if s.first_at.is_none() {
            s.first_at = one.first_at;
        }
    }
    Ok(s)
}

/// Whether `confirm` (the `--confirm-device` values) names the device: a value equal to its
/// serial, or to its size in bytes as a decimal number.
pub fn confirmed_by(confirm: &[String], serial: Option<&str>, size_bytes: Option<u64>) -> bool {
    confirm.iter().any(|c| {
        let c = c.trim();
        serial.is_some_and(|s| !s.is_empty() && s == c)
            || size_bytes.is_some_and(|b| b.to_string() == c)
    })
}

/// How the user confirms a device: `--confirm-device S123 (its serial)` or
/// `--confirm-device 335544320 (its size in bytes)`.
pub fn how_to_confirm(serial: Option<&str>, size_bytes: Option<u64>) -> String {
    let mut ways = Vec::new();
    if let Some(s) = serial.filter(|s| !s.is_empty()) {
        ways.push(format!(
            "--confirm-device {} (its serial)",
            hwsurvey_model::text::one_line(s, 64)
        ));
    }
    if let Some(b) = size_bytes {
        ways.push(format!("--confirm-device {b} (its size in bytes)"));
    }
    if ways.is_empty() {
        return "it has neither a serial nor a known size to confirm it by".into();
    }
    format!("to overwrite it anyway, add {}", ways.join(" or "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_cover_both_ends_and_the_middle() {
        let o = sample_offsets(64 << 20);
        assert_eq!(o[0], 0);
        assert_eq!(*o.last().unwrap(), (64 << 20) - 4096);
        assert!(o.contains(&(32 << 20)), "the middle");
        assert!(o.windows(2).all(|w| w[0] < w[1]));
        // 256 of the first MiB, 256 of the last, 256 spread (a few shared with the ends)
        assert!(o.len() > 700 && o.len() <= 768, "{}", o.len());
        assert!(sample_offsets(4095).is_empty());
        assert_eq!(sample_offsets(8192), [0, 4096]);
    }

    #[test]
    fn blank_is_all_zero_or_all_ff() {
        assert!(is_blank(&[0; 4096]));
        assert!(is_blank(&[0xff; 4096]));
        let mut b = [0u8; 4096];
        b[4095] = 1;
        assert!(!is_blank(&b));
        let mut f = [0xffu8; 4096];
        f[0] = 0;
        assert!(!is_blank(&f));
        let s = DataSample::from_blocks([
            (0, &[0u8; 8][..]),
            (8192, &[1u8; 8][..]),
            (4096, &[2u8; 8][..]),
        ]);
        assert_eq!(
            s,
            DataSample {
                blocks: 3,
                not_blank: 2,
                first_at: Some(4096)
            }
        );
    }

    #[test]
    fn a_device_is_confirmed_by_serial_or_exact_size() {
        let c = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(confirmed_by(
            &c(&["S64DNX0R123456"]),
            Some("S64DNX0R123456"),
            Some(1 << 30)
        ));
        assert!(confirmed_by(&c(&["1073741824"]), None, Some(1 << 30)));
        assert!(!confirmed_by(
            &c(&["1GiB", "1073741825"]),
            None,
            Some(1 << 30)
        ));
        assert!(!confirmed_by(&c(&[""]), Some(""), None));
        assert!(!confirmed_by(&[], Some("S1"), Some(1)));
        assert_eq!(
            how_to_confirm(Some("S1"), Some(4096)),
            "to overwrite it anyway, add --confirm-device S1 (its serial) or --confirm-device \
             4096 (its size in bytes)"
        );
    }
}

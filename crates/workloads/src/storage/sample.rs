//! Whether a device without any signature holds data where a run would write. A plain dm-crypt
//! volume or a LUKS volume with a detached header has no signature at all, yet it is full of
//! data (issue 32); such a device is refused unless the user confirms it by name
//! (`--confirm-device SERIAL|SIZE`, [`confirmed_by`]).
//!
//! What is read ([`check_data`]): every byte of the span the run will write, from byte 0
//! ([`written_span`]: the profile's `file_size_bytes`, at most the device, whole MiB), past the
//! page cache (`O_DIRECT`, else `posix_fadvise(POSIX_FADV_DONTNEED)` first), and, beyond that
//! span, the first and last MiB and [`SPREAD_BLOCKS`] blocks spread over the device. Each
//! 4 KiB block is blank (all 0x00 or all 0xFF), hwsurvey's own (it starts with [`MARKER`],
//! which every block the storage family writes carries: a device an earlier run wrote is
//! accepted again), or data (issue 46: 256 samples 8 MiB apart missed random data at 2-7 MiB
//! of a 2 GiB device, which a run then overwrote).
//!
//! Pure parts: [`sample_offsets`] (where), [`classify`] (what a block is), [`BlockCount`],
//! [`written_span`], [`stamp`]; [`check_data`] reads.

use serde::{Deserialize, Serialize};

/// Bytes per block classified.
pub const BLOCK_BYTES: u64 = 4096;
/// Blocks sampled evenly over the device beyond the span, besides the first and last MiB.
pub const SPREAD_BLOCKS: u64 = 256;

/// hwsurvey's marker: the first 32 bytes of every 4 KiB block the storage family writes to a
/// raw device or a test file ([`stamp`]). A block that starts with it is hwsurvey's own
/// scratch data, not the user's.
pub const MARKER: [u8; 32] = *b"hwsurvey:storage.iops:scratch:v1";

/// Writes [`MARKER`] at the start of every whole 4 KiB block of `buf` (a write buffer, filled
/// with pseudo-random bytes first): every block the run writes is then known as its own.
pub fn stamp(buf: &mut [u8]) {
    for block in buf.chunks_exact_mut(BLOCK_BYTES as usize) {
        block[..MARKER.len()].copy_from_slice(&MARKER);
    }
}

/// The span of a device a run writes, bytes from byte 0: `span_bytes` (the profile's
/// `file_size_bytes`), at most the device's `size_bytes`, in whole MiB (what
/// [`super::identity::open_for_writing`] preconditions and the I/O offsets stay in).
pub fn written_span(span_bytes: u64, size_bytes: u64) -> u64 {
    span_bytes.min(size_bytes) / (1 << 20) * (1 << 20)
}

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
    // compared a block at a time (memcmp): the span's blocks are many
    static ZEROS: [u8; BLOCK_BYTES as usize] = [0; BLOCK_BYTES as usize];
    static ONES: [u8; BLOCK_BYTES as usize] = [0xff; BLOCK_BYTES as usize];
    let all = |blank: &[u8]| {
        block
            .chunks(BLOCK_BYTES as usize)
            .all(|c| c == &blank[..c.len()])
    };
    all(&ZEROS) || all(&ONES)
}

/// What a block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// [`is_blank`].
    Blank,
    /// It starts with [`MARKER`]: written by hwsurvey.
    Ours,
    /// Anything else: someone's data.
    Data,
}

/// What `block` holds.
pub fn classify(block: &[u8]) -> BlockKind {
    if block.starts_with(&MARKER) {
        BlockKind::Ours
    } else if is_blank(block) {
        BlockKind::Blank
    } else {
        BlockKind::Data
    }
}

/// Blocks read and what they held.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockCount {
    /// Blocks read.
    pub blocks: u64,
    /// Blocks that carry [`MARKER`].
    pub ours: u64,
    /// Blocks neither blank nor hwsurvey's ([`BlockKind::Data`]).
    pub data: u64,
    /// Byte offset of the first data block.
    pub first_data_at: Option<u64>,
}

impl BlockCount {
    /// Counts `block`, read at byte `offset`.
    pub fn add(&mut self, offset: u64, block: &[u8]) {
        self.blocks += 1;
        match classify(block) {
            BlockKind::Blank => {}
            BlockKind::Ours => self.ours += 1,
            BlockKind::Data => {
                self.data += 1;
                self.first_data_at = Some(self.first_data_at.map_or(offset, |f| f.min(offset)));
            }
        }
    }

    /// The count of `(offset, block)` pairs.
    pub fn from_blocks<'a>(blocks: impl IntoIterator<Item = (u64, &'a [u8])>) -> BlockCount {
        let mut c = BlockCount::default();
        for (off, b) in blocks {
            c.add(off, b);
        }
        c
    }
}

/// Every byte of the span read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpanRead {
    /// Bytes read, from byte 0 ([`written_span`]).
    pub span_bytes: u64,
    /// Its 4 KiB blocks.
    pub count: BlockCount,
    /// Wall time of the read, ns.
    pub elapsed_ns: u64,
    /// Read with `O_DIRECT` (`false`: buffered, after `POSIX_FADV_DONTNEED`).
    pub direct: bool,
}

/// What [`check_data`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataCheck {
    /// The span the run writes, read whole.
    pub span: SpanRead,
    /// The blocks sampled beyond it ([`sample_offsets`] from the span's end on).
    pub beyond: BlockCount,
}

impl DataCheck {
    /// Whether any block read holds data.
    pub fn holds_data(&self) -> bool {
        self.span.count.data > 0 || self.beyond.data > 0
    }
}

impl std::fmt::Display for DataCheck {
    /// `1280 of the 2048 4096-byte blocks of the 8388608 bytes a run writes (from byte 0) are
    /// neither blank nor hwsurvey's, the first at byte 2097152 (every byte read in 0.01 s, 839
    /// MB/s); 3 of 510 blocks sampled beyond them hold data, the first at byte 67108864`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.span;
        let mut parts = Vec::new();
        if s.span_bytes > 0 {
            let elapsed_s = s.elapsed_ns as f64 / 1e9;
            let rate = if s.elapsed_ns > 0 {
                format!(
                    ", {}",
                    hwsurvey_model::units::format_rate_decimal(s.span_bytes as f64 / elapsed_s)
                )
            } else {
                String::new()
            };
            let first = s
                .count
                .first_data_at
                .map_or(String::new(), |b| format!(", the first at byte {b}"));
            parts.push(format!(
                "{} of the {} {BLOCK_BYTES}-byte blocks of the {} bytes a run writes (from byte \
                 0) are neither blank nor hwsurvey's{first} (every byte read in {:.2} s{rate})",
                s.count.data, s.count.blocks, s.span_bytes, elapsed_s
            ));
        }
        if self.beyond.blocks > 0 && (self.beyond.data > 0 || s.span_bytes == 0) {
            let first = self
                .beyond
                .first_data_at
                .map_or(String::new(), |b| format!(", the first at byte {b}"));
            parts.push(format!(
                "{} of {} blocks sampled {} hold data{first}",
                self.beyond.data,
                self.beyond.blocks,
                if s.span_bytes > 0 {
                    "beyond them"
                } else {
                    "over it"
                }
            ));
        }
        f.write_str(&parts.join("; "))
    }
}

/// Opens `path` to read what is on the device, not what the page cache holds: `O_DIRECT`
/// where the device takes it, else a buffered open after `POSIX_FADV_DONTNEED` of the whole
/// file. Returns the file and whether it is direct.
fn open_uncached(path: &std::path::Path) -> Result<(std::fs::File, bool), String> {
    #[cfg(feature = "sys")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_DIRECT.bits())
            .open(path)
        {
            Ok(f) => return Ok((f, true)),
            Err(e) if e.raw_os_error() == Some(nix::libc::EINVAL) => {}
            Err(e) => return Err(format!("open with O_DIRECT: {e}")),
        }
    }
    let f = std::fs::File::open(path).map_err(|e| format!("open: {e}"))?;
    #[cfg(feature = "sys")]
    {
        nix::fcntl::posix_fadvise(
            &f,
            0,
            0,
            nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
        )
        .map_err(|e| format!("posix_fadvise(POSIX_FADV_DONTNEED): {e}"))?;
    }
    Ok((f, false))
}

/// Bytes read at once over the span.
const CHUNK_BYTES: usize = 4 << 20;

/// Reads every byte of the first [`written_span`]`(span_bytes, size_bytes)` bytes of `path`
/// (a block device of `size_bytes`) and the [`sample_offsets`] blocks beyond them, past the
/// page cache, and counts what each 4 KiB block holds. Read only.
///
/// Errors: the open or a read's error, with the byte offset.
pub fn check_data(
    path: &std::path::Path,
    size_bytes: u64,
    span_bytes: u64,
) -> Result<DataCheck, String> {
    use std::os::unix::fs::FileExt;
    let (f, direct) = open_uncached(path)?;
    let span = written_span(span_bytes, size_bytes);
    let block = BLOCK_BYTES as usize;
    let mut buf = super::AlignedBuf::new(CHUNK_BYTES);
    let mut check = DataCheck {
        span: SpanRead {
            span_bytes: span,
            direct,
            ..Default::default()
        },
        beyond: BlockCount::default(),
    };
    let t0 = std::time::Instant::now();
    let mut off = 0u64;
    while off < span {
        let n = (span - off).min(CHUNK_BYTES as u64) as usize;
        let chunk = &mut buf.as_mut_slice()[..n];
        f.read_exact_at(chunk, off)
            .map_err(|e| format!("reading {n} bytes at byte {off}: {e}"))?;
        for (i, b) in chunk.chunks_exact(block).enumerate() {
            check.span.count.add(off + (i * block) as u64, b);
        }
        off += n as u64;
    }
    check.span.elapsed_ns = t0.elapsed().as_nanos().min(u64::MAX as u128) as u64;
    for at in sample_offsets(size_bytes)
        .into_iter()
        .filter(|&o| o >= span)
    {
        let b = &mut buf.as_mut_slice()[..block];
        f.read_exact_at(b, at)
            .map_err(|e| format!("reading {BLOCK_BYTES} bytes at byte {at}: {e}"))?;
        check.beyond.add(at, b);
    }
    Ok(check)
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

/// The `--confirm-device` options that name a device: `--confirm-device S123 (its serial)
/// or --confirm-device 335544320 (its size in bytes)`; `None` when it has neither.
pub fn confirm_options(serial: Option<&str>, size_bytes: Option<u64>) -> Option<String> {
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
    (!ways.is_empty()).then(|| ways.join(" or "))
}

/// How the user confirms a device: `to overwrite it anyway, add --confirm-device S123 (its
/// serial) or --confirm-device 335544320 (its size in bytes)`.
pub fn how_to_confirm(serial: Option<&str>, size_bytes: Option<u64>) -> String {
    match confirm_options(serial, size_bytes) {
        Some(o) => format!("to overwrite it anyway, add {o}"),
        None => "it has neither a serial nor a known size to confirm it by".into(),
    }
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
        let s = BlockCount::from_blocks([
            (0, &[0u8; 8][..]),
            (8192, &[1u8; 8][..]),
            (4096, &[2u8; 8][..]),
        ]);
        assert_eq!(
            s,
            BlockCount {
                blocks: 3,
                ours: 0,
                data: 2,
                first_data_at: Some(4096)
            }
        );
    }

    /// Every block of a write buffer carries the marker after [`stamp`], and is hwsurvey's;
    /// the marker anywhere but at a block's start, or cut short, is data.
    #[test]
    fn stamped_blocks_are_ours_and_nothing_else_is() {
        let mut buf = vec![0x5au8; 3 * 4096 + 100];
        stamp(&mut buf);
        for b in buf.chunks_exact(4096) {
            assert_eq!(classify(b), BlockKind::Ours);
        }
        // the partial block at the end is not stamped
        assert_eq!(&buf[3 * 4096..3 * 4096 + 4], &[0x5a; 4]);
        let mut late = [0u8; 4096];
        late[8..40].copy_from_slice(&MARKER);
        assert_eq!(classify(&late), BlockKind::Data);
        let mut cut = [0u8; 4096];
        cut[..31].copy_from_slice(&MARKER[..31]);
        assert_eq!(classify(&cut), BlockKind::Data);
        assert_eq!(classify(&[0xff; 4096]), BlockKind::Blank);
        let c = BlockCount::from_blocks(buf.chunks_exact(4096).map(|b| (0, b)));
        assert_eq!((c.blocks, c.ours, c.data), (3, 3, 0));
    }

    #[test]
    fn the_span_is_whole_mib_within_the_device() {
        assert_eq!(written_span(8 << 20, 2 << 30), 8 << 20);
        assert_eq!(written_span(64 << 20, (10 << 20) + 4096), 10 << 20);
        assert_eq!(written_span(u64::MAX, 3 << 20), 3 << 20);
        assert_eq!(written_span(8 << 20, 4096), 0);
    }

    /// What a refusal says of the data it found, and what the read cost.
    #[test]
    fn a_data_check_names_counts_offsets_and_cost() {
        let c = DataCheck {
            span: SpanRead {
                span_bytes: 8 << 20,
                count: BlockCount {
                    blocks: 2048,
                    ours: 0,
                    data: 1280,
                    first_data_at: Some(2 << 20),
                },
                elapsed_ns: 10_000_000,
                direct: true,
            },
            beyond: BlockCount {
                blocks: 510,
                ours: 2,
                data: 3,
                first_data_at: Some(64 << 20),
            },
        };
        assert!(c.holds_data());
        assert_eq!(
            c.to_string(),
            "1280 of the 2048 4096-byte blocks of the 8388608 bytes a run writes (from byte 0) \
             are neither blank nor hwsurvey's, the first at byte 2097152 (every byte read in \
             0.01 s, 839 MB/s); 3 of 510 blocks sampled beyond them hold data, the first at \
             byte 67108864"
        );
        let clean = DataCheck {
            span: SpanRead {
                span_bytes: 8 << 20,
                count: BlockCount {
                    blocks: 2048,
                    ours: 2048,
                    ..Default::default()
                },
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(!clean.holds_data());
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

//! Storage I/O measurement for `storage.iops`: 4 KiB random read/write and 1 MiB sequential
//! read/write with O_DIRECT on test files hwsurvey creates (or, with `--destructive`, a checked
//! empty raw device), swept over threads × queue depth.
//!
//! Per point: IOPS, bandwidth (bytes/s; MB = 10^6 where shown), latency p50/p99/p99.9 from an
//! HDR histogram of every I/O (ns, 3 significant digits), and process CPU time per I/O from
//! getrusage(RUSAGE_SELF) user+system, so a CPU-bound point is visible as CPU time per I/O close
//! to `threads / IOPS`. I/O goes through io_uring when the kernel allows it (one ring of depth QD
//! per worker thread) and otherwise through pread/pwrite worker threads (threads × QD of them,
//! one I/O in flight each); the engine used is recorded.
//!
//! Pure parts (signature-tool output, mountinfo, decisions, percentiles) build everywhere; the live parts
//! need the `sys` feature (O_DIRECT, statvfs, getrusage).

pub mod blkid;
pub mod context;
pub mod device;
#[cfg(feature = "sys")]
pub mod engine;
pub mod identity;
pub mod run_devices;
pub mod sample;
pub mod stack;
pub mod target;

use serde::{Deserialize, Serialize};

/// Errors of storage measurement, each naming the directory, file or device.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    /// The directory does not exist.
    #[error("storage directory {dir}: does not exist")]
    DirMissing {
        /// The directory.
        dir: String,
    },
    /// The path (or a component of it) is not a directory.
    #[error("storage directory {dir}: not a directory")]
    NotADirectory {
        /// The path.
        dir: String,
    },
    /// A file cannot be created there.
    #[error("storage directory {dir}: cannot create a test file: {detail}")]
    NotWritable {
        /// The directory.
        dir: String,
        /// The system's error.
        detail: String,
    },
    /// O_DIRECT is not supported, or would measure the page cache.
    #[error("storage directory {dir} ({fs_type}): no direct I/O: {detail}; name a directory on a disk-backed filesystem")]
    NoDirectIo {
        /// The directory.
        dir: String,
        /// Filesystem type.
        fs_type: String,
        /// Why.
        detail: String,
    },
    /// Not enough space for the test file.
    #[error("{path}: no space left for a {needed_bytes}-byte test file (available: {}{})", available_bytes.map_or("unknown".to_string(), |b| format!("{b} bytes")), if available_bytes.is_some_and(|b| b >= *needed_bytes) { format!(", of which {} bytes are kept free", target::FREE_RESERVE_BYTES) } else { String::new() })]
    NoSpace {
        /// Directory or file.
        path: String,
        /// Bytes the test file needs.
        needed_bytes: u64,
        /// Bytes available, when known.
        available_bytes: Option<u64>,
    },
    /// A raw device was refused.
    #[error("storage device {device}: refused: {reasons}")]
    DeviceRefused {
        /// The device path.
        device: String,
        /// Every reason, joined.
        reasons: String,
    },
    /// The device is no longer the one checked before the run (a symlink or node replaced,
    /// a loop device bound again): this and every later raw-device open of the run refused.
    #[error("storage device {device}: changed during the run: {detail}; refused: no raw device is written after that")]
    DeviceChanged {
        /// The device path, escaped for the terminal.
        device: String,
        /// What changed.
        detail: String,
    },
    /// An I/O error while measuring.
    #[error("{path}: {op}: {detail}")]
    Io {
        /// File or device.
        path: String,
        /// What was being done.
        op: &'static str,
        /// The system's error.
        detail: String,
    },
    /// The same directory was named twice (after resolving symlinks and `..`).
    #[error("--storage-dir {second}: the same directory as --storage-dir {first} ({canonical}); name each directory once")]
    DuplicateDir {
        /// The first name given.
        first: String,
        /// The second name given.
        second: String,
        /// The directory both resolve to.
        canonical: String,
    },
    /// Two directories are on one filesystem device: "all targets together" would drive one
    /// device twice and report it as two.
    #[error("--storage-dir {second}: on the same device ({major}:{minor}) as --storage-dir {first}; name one directory per device")]
    SameDevice {
        /// The first directory.
        first: String,
        /// The second directory.
        second: String,
        /// Device major number (`st_dev`).
        major: u32,
        /// Device minor number.
        minor: u32,
    },
    /// The run was stopped (Ctrl-C, SIGTERM or SIGHUP).
    #[error("interrupted")]
    Interrupted,
    /// Built without the `sys` feature (no O_DIRECT, statvfs, getrusage).
    #[error("storage measurement needs the `sys` feature (libc access), absent from this build")]
    Unsupported,
}

/// An I/O pattern of the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// 4 KiB reads at uniformly random 4 KiB-aligned offsets.
    RandRead4k,
    /// 4 KiB writes at uniformly random 4 KiB-aligned offsets.
    RandWrite4k,
    /// 1 MiB sequential reads (each worker its own region, wrapping).
    SeqRead1m,
    /// 1 MiB sequential writes (each worker its own region, wrapping).
    SeqWrite1m,
}

impl Pattern {
    /// All four, in profile order.
    pub const ALL: [Pattern; 4] = [
        Pattern::RandRead4k,
        Pattern::RandWrite4k,
        Pattern::SeqRead1m,
        Pattern::SeqWrite1m,
    ];

    /// Stable name: `randread_4k`, `randwrite_4k`, `seqread_1m`, `seqwrite_1m`.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::RandRead4k => "randread_4k",
            Pattern::RandWrite4k => "randwrite_4k",
            Pattern::SeqRead1m => "seqread_1m",
            Pattern::SeqWrite1m => "seqwrite_1m",
        }
    }

    /// Parses [`Pattern::name`].
    pub fn from_name(s: &str) -> Option<Pattern> {
        Self::ALL.into_iter().find(|p| p.name() == s)
    }

    /// Bytes per I/O: 4096 or 1048576.
    pub fn block_bytes(self) -> usize {
        match self {
            Pattern::RandRead4k | Pattern::RandWrite4k => 4096,
            Pattern::SeqRead1m | Pattern::SeqWrite1m => 1 << 20,
        }
    }

    /// Whether it writes.
    pub fn is_write(self) -> bool {
        matches!(self, Pattern::RandWrite4k | Pattern::SeqWrite1m)
    }

    /// Whether offsets are random.
    pub fn is_random(self) -> bool {
        matches!(self, Pattern::RandRead4k | Pattern::RandWrite4k)
    }
}

/// Which I/O interface ran a point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "engine", rename_all = "snake_case")]
pub enum IoEngine {
    /// io_uring: one ring per worker thread with `queue_depth` I/Os in flight.
    IoUring {
        /// The ring's setup flags (`coop_taskrun`, `single_issuer`, `defer_taskrun`; empty:
        /// none). Absent in result files written before they were recorded.
        #[serde(default)]
        setup_flags: Vec<String>,
    },
    /// pread/pwrite: threads × queue depth synchronous workers.
    PreadPwrite {
        /// Why io_uring was not used (kernel refused, not built for this architecture, asked).
        why_not_io_uring: String,
    },
}

impl IoEngine {
    /// `io_uring` or `pread_pwrite`.
    pub fn name(&self) -> &'static str {
        match self {
            IoEngine::IoUring { .. } => "io_uring",
            IoEngine::PreadPwrite { .. } => "pread_pwrite",
        }
    }
}

/// What one point measured, over all its targets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IoPointResult {
    /// Pattern.
    pub pattern: Pattern,
    /// Engine used.
    pub engine: IoEngine,
    /// Worker threads per target.
    pub threads_per_target: usize,
    /// I/Os in flight per worker thread.
    pub queue_depth: usize,
    /// Targets driven at once.
    pub targets: usize,
    /// Completed I/Os.
    pub ios: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Wall time of the timed phase, ns.
    pub elapsed_ns: u64,
    /// I/Os per second.
    pub iops: f64,
    /// Bytes per second.
    pub bandwidth_bytes_per_s: f64,
    /// Median completion latency, ns.
    pub latency_p50_ns: u64,
    /// 99th percentile latency, ns.
    pub latency_p99_ns: u64,
    /// 99.9th percentile latency, ns.
    pub latency_p999_ns: u64,
    /// Largest latency, ns.
    pub latency_max_ns: u64,
    /// Process CPU time (user + system, getrusage RUSAGE_SELF) per I/O, ns; `None` when
    /// unavailable or when the process clock did not advance over the point (never 0).
    pub cpu_ns_per_io: Option<f64>,
    /// Process CPU time over wall time (1.0 = one CPU busy); `None` when unavailable.
    pub cpu_busy_cpus: Option<f64>,
}

/// A heap buffer aligned for O_DIRECT (4096 bytes, enough for 512 and 4096-byte logical blocks).
pub struct AlignedBuf {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only reads.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Alignment in bytes.
    pub const ALIGN: usize = 4096;

    /// A zeroed buffer of `len` bytes (`len` > 0). Aborts on allocation failure like `Vec`.
    pub fn new(len: usize) -> Self {
        let len = len.max(1);
        let layout = std::alloc::Layout::from_size_align(len, Self::ALIGN)
            .unwrap_or_else(|_| std::alloc::Layout::new::<u8>());
        // SAFETY: layout has non-zero size.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr =
            std::ptr::NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, len }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is a live allocation of len initialised (zeroed) bytes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// Raw pointer for io_uring submissions.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if let Ok(layout) = std::alloc::Layout::from_size_align(self.len, Self::ALIGN) {
            // SAFETY: allocated in `new` with this layout.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) };
        }
    }
}

/// Offsets for one worker: uniformly random block-aligned offsets, or sequential within the
/// worker's own region `[start, end)`, wrapping.
#[derive(Debug, Clone)]
pub struct OffsetGen {
    random: bool,
    block: u64,
    start: u64,
    blocks: u64,
    next: u64,
    state: u64,
}

impl OffsetGen {
    /// Worker `w` of `workers` on a target of `size_bytes`.
    pub fn new(pattern: Pattern, size_bytes: u64, w: usize, workers: usize, seed: u64) -> Self {
        let block = pattern.block_bytes() as u64;
        let total_blocks = (size_bytes / block).max(1);
        let (start, blocks) = if pattern.is_random() {
            (0, total_blocks)
        } else {
            let per = (total_blocks / workers.max(1) as u64).max(1);
            ((w as u64 * per).min(total_blocks - 1) * block, per)
        };
        OffsetGen {
            random: pattern.is_random(),
            block,
            start,
            blocks,
            next: 0,
            state: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
        }
    }

    /// The next offset in bytes.
    pub fn next_offset(&mut self) -> u64 {
        let idx = if self.random {
            self.state ^= self.state >> 12;
            self.state ^= self.state << 25;
            self.state ^= self.state >> 27;
            let r = self.state.wrapping_mul(0x2545_f491_4f6c_dd1d);
            ((r as u128 * self.blocks as u128) >> 64) as u64
        } else {
            let i = self.next;
            self.next = (self.next + 1) % self.blocks;
            i
        };
        self.start + idx * self.block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_stay_aligned_and_inside() {
        let size = 10 * 4096 + 100;
        let mut g = OffsetGen::new(Pattern::RandRead4k, size, 0, 1, 7);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let o = g.next_offset();
            assert_eq!(o % 4096, 0);
            assert!(o + 4096 <= size);
            seen.insert(o);
        }
        assert_eq!(seen.len(), 10, "uniform over all 10 blocks");
        // Sequential: worker 1 of 2 over 8 MiB owns blocks 4..8 and wraps.
        let mut s = OffsetGen::new(Pattern::SeqRead1m, 8 << 20, 1, 2, 0);
        let offs: Vec<u64> = (0..5).map(|_| s.next_offset() >> 20).collect();
        assert_eq!(offs, [4, 5, 6, 7, 4]);
    }

    #[test]
    fn aligned_buffer_is_aligned() {
        let mut b = AlignedBuf::new(4096 * 3);
        assert_eq!(b.as_mut_ptr() as usize % 4096, 0);
        assert!(b.as_slice().iter().all(|&x| x == 0));
    }

    #[test]
    fn io_engine_records_ring_flags_and_reads_older_files() {
        let e = IoEngine::IoUring {
            setup_flags: vec!["coop_taskrun".into(), "defer_taskrun".into()],
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"engine": "io_uring", "setup_flags": ["coop_taskrun", "defer_taskrun"]})
        );
        // result files written before the flags were recorded
        let old: IoEngine = serde_json::from_str(r#"{"engine":"io_uring"}"#).unwrap();
        assert_eq!(
            old,
            IoEngine::IoUring {
                setup_flags: vec![]
            }
        );
        assert_eq!(old.name(), "io_uring");
    }

    #[cfg(all(feature = "sys", any(target_arch = "x86_64", target_arch = "aarch64")))]
    #[test]
    fn ring_flags_are_one_of_the_tried_sets() {
        // Whatever this kernel accepts (all three on Linux >= 6.1, none under qemu-user, where
        // io_uring_setup is ENOSYS and the engine falls back to pread/pwrite).
        if let Ok(flags) = engine::io_uring_usable() {
            let tried: [&[&str]; 3] = [
                &["coop_taskrun", "single_issuer", "defer_taskrun"],
                &["coop_taskrun"],
                &[],
            ];
            assert!(tried.iter().any(|t| t.iter().eq(flags.iter())), "{flags:?}");
        }
    }
}

//! Buffers with a requested page mode, and what backing was actually obtained.
//!
//! With the `sys` feature: anonymous `mmap`, then `madvise(MADV_HUGEPAGE)` for THP,
//! `madvise(MADV_NOHUGEPAGE)` for base pages, or `MAP_HUGETLB | log2(size) << MAP_HUGE_SHIFT`
//! for hugetlbfs pages. The backing is read back from `/proc/self/smaps` (`KernelPageSize`,
//! `AnonHugePages` of the mapping) after the owner has touched the memory. Without `sys`
//! (e2k), base pages come from the global allocator and other modes are unavailable.
//!
//! Memory is zero-filled and page-aligned; it is not touched here, so the first write comes
//! from whichever thread uses it (first-touch NUMA placement).

use serde::{Deserialize, Serialize};

/// Requested page mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum PageMode {
    /// Base pages: THP refused with `MADV_NOHUGEPAGE`.
    Base,
    /// Transparent huge pages requested with `MADV_HUGEPAGE`.
    Thp,
    /// hugetlbfs pages of this size from the pool (`MAP_HUGETLB`).
    HugeTlb {
        /// Huge page size, bytes.
        page_size_bytes: u64,
    },
    /// Whatever the kernel's default is (no madvise).
    Default,
}

/// Why a buffer could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// The page mode is not available here (empty pool: ENOMEM; under qemu-user: EINVAL;
    /// std-only build). A plan point should be recorded as skipped with this reason.
    #[error("{mode:?} pages unavailable: {reason}")]
    Unavailable {
        /// The mode asked for.
        mode: PageMode,
        /// Why (errno text).
        reason: String,
    },
    /// Zero length or an allocation failure of base pages.
    #[error("cannot allocate {len_bytes} bytes: {reason}")]
    Failed {
        /// Requested size.
        len_bytes: usize,
        /// Why.
        reason: String,
    },
}

/// What backs a buffer, from `/proc/self/smaps`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backing {
    /// `KernelPageSize` of the mapping, bytes (2 MiB etc. for hugetlbfs).
    pub kernel_page_size_bytes: u64,
    /// `AnonHugePages` of the mapping, bytes (THP-backed part).
    pub anon_huge_bytes: u64,
    /// `Rss` of the mapping, bytes.
    pub rss_bytes: u64,
}

/// A zero-filled, page-aligned buffer.
pub struct PageBuffer {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    mode: PageMode,
    #[allow(dead_code)]
    mapped: bool,
}

// SAFETY: PageBuffer owns its memory exclusively, like a Box<[u8]>.
unsafe impl Send for PageBuffer {}
// SAFETY: shared access is only through &self methods returning shared slices.
unsafe impl Sync for PageBuffer {}

const ALIGN: usize = 4096;

impl PageBuffer {
    /// Allocates `len_bytes` (rounded up to the huge page size for hugetlbfs) with `mode`.
    pub fn new(len_bytes: usize, mode: PageMode) -> Result<PageBuffer, AllocError> {
        if len_bytes == 0 {
            return Err(AllocError::Failed {
                len_bytes,
                reason: "zero length".into(),
            });
        }
        Self::new_impl(len_bytes, mode)
    }

    #[cfg(feature = "sys")]
    fn new_impl(len_bytes: usize, mode: PageMode) -> Result<PageBuffer, AllocError> {
        use nix::sys::mman::{madvise, mmap_anonymous, MapFlags, MmapAdvise, ProtFlags};
        use std::num::NonZeroUsize;
        let mut len = len_bytes;
        let mut flags = MapFlags::MAP_PRIVATE;
        if let PageMode::HugeTlb { page_size_bytes } = mode {
            let ps = page_size_bytes.max(1) as usize;
            len = len.div_ceil(ps) * ps;
            let log2 = page_size_bytes.trailing_zeros();
            match MapFlags::map_hugetlb_with_size_log2(log2) {
                Some(f) => flags |= f,
                None => {
                    return Err(AllocError::Unavailable {
                        mode,
                        reason: format!(
                            "page size {page_size_bytes} is not a power of two >= 64 KiB"
                        ),
                    })
                }
            }
        }
        let Some(nz) = NonZeroUsize::new(len) else {
            return Err(AllocError::Failed {
                len_bytes,
                reason: "zero length".into(),
            });
        };
        // SAFETY: a fresh anonymous private mapping, no address hint.
        let ptr = unsafe {
            mmap_anonymous(
                None,
                nz,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                flags,
            )
        };
        let ptr = match ptr {
            Ok(p) => p,
            Err(e) => {
                return Err(if matches!(mode, PageMode::HugeTlb { .. }) {
                    AllocError::Unavailable {
                        mode,
                        reason: format!(
                            "mmap(MAP_HUGETLB): {e} (ENOMEM: pool empty; EINVAL: size unsupported or emulated)"
                        ),
                    }
                } else {
                    AllocError::Failed {
                        len_bytes,
                        reason: format!("mmap: {e}"),
                    }
                })
            }
        };
        let advice = match mode {
            PageMode::Thp => Some(MmapAdvise::MADV_HUGEPAGE),
            PageMode::Base => Some(MmapAdvise::MADV_NOHUGEPAGE),
            _ => None,
        };
        let buf = PageBuffer {
            ptr: ptr.cast(),
            len,
            mode,
            mapped: true,
        };
        if let Some(advice) = advice {
            // SAFETY: the range is exactly the mapping created above.
            if let Err(e) = unsafe { madvise(ptr, len, advice) } {
                if mode == PageMode::Thp {
                    return Err(AllocError::Unavailable {
                        mode,
                        reason: format!("madvise(MADV_HUGEPAGE): {e}"),
                    });
                }
            }
        }
        Ok(buf)
    }

    #[cfg(not(feature = "sys"))]
    fn new_impl(len_bytes: usize, mode: PageMode) -> Result<PageBuffer, AllocError> {
        if !matches!(mode, PageMode::Base | PageMode::Default) {
            return Err(AllocError::Unavailable {
                mode,
                reason: "built without the `sys` feature: no mmap/madvise".into(),
            });
        }
        let layout = std::alloc::Layout::from_size_align(len_bytes, ALIGN).map_err(|e| {
            AllocError::Failed {
                len_bytes,
                reason: e.to_string(),
            }
        })?;
        // SAFETY: non-zero size checked by the caller.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = std::ptr::NonNull::new(p).ok_or(AllocError::Failed {
            len_bytes,
            reason: "out of memory".into(),
        })?;
        Ok(PageBuffer {
            ptr,
            len: len_bytes,
            mode,
            mapped: false,
        })
    }

    /// Length, bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never empty (zero length is refused).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The mode asked for.
    pub fn mode(&self) -> PageMode {
        self.mode
    }

    /// The bytes.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes, zero-initialised, exclusively owned.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The buffer as `f64`s (page alignment satisfies f64's; zero bytes are 0.0).
    pub fn as_f64_mut(&mut self) -> &mut [f64] {
        // SAFETY: aligned to 4096 >= align_of::<f64>(); every bit pattern is a valid f64.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast::<f64>(), self.len / 8) }
    }

    /// The buffer as `u64`s.
    pub fn as_u64_mut(&mut self) -> &mut [u64] {
        // SAFETY: aligned to 4096 >= align_of::<u64>(); every bit pattern is a valid u64.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast::<u64>(), self.len / 8) }
    }

    /// The buffer as `usize`s (for pointer chases by index).
    pub fn as_usize_mut(&mut self) -> &mut [usize] {
        let n = self.len / std::mem::size_of::<usize>();
        // SAFETY: aligned to 4096 >= align_of::<usize>(); every bit pattern is a valid usize.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast::<usize>(), n) }
    }

    /// Reads this mapping's backing from `/proc/self/smaps` (call after touching it).
    /// `None` when smaps is unreadable or the mapping is not found (std-only build).
    pub fn backing(&self) -> Option<Backing> {
        let text = std::fs::read_to_string("/proc/self/smaps").ok()?;
        parse_smaps_backing(&text, self.ptr.as_ptr() as usize)
    }
}

impl Drop for PageBuffer {
    fn drop(&mut self) {
        #[cfg(feature = "sys")]
        if self.mapped {
            // SAFETY: unmapping exactly the mapping we created.
            let _ = unsafe { nix::sys::mman::munmap(self.ptr.cast(), self.len) };
            return;
        }
        if let Ok(layout) = std::alloc::Layout::from_size_align(self.len, ALIGN) {
            // SAFETY: allocated with this layout in new_impl (std path).
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) }
        }
    }
}

/// Finds the smaps entry whose range starts at or contains `addr` and returns its backing.
/// smaps sizes are in kB (KiB).
pub fn parse_smaps_backing(text: &str, addr: usize) -> Option<Backing> {
    let mut in_entry = false;
    let mut b = Backing {
        kernel_page_size_bytes: 0,
        anon_huge_bytes: 0,
        rss_bytes: 0,
    };
    let kib = |rest: &str| -> u64 {
        rest.split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    };
    for line in text.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((lo, hi)) = first.split_once('-') {
            if let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                if in_entry {
                    return Some(b);
                }
                in_entry = lo <= addr && addr < hi;
                continue;
            }
        }
        if !in_entry {
            continue;
        }
        if let Some(r) = line.strip_prefix("KernelPageSize:") {
            b.kernel_page_size_bytes = kib(r);
        } else if let Some(r) = line.strip_prefix("AnonHugePages:") {
            b.anon_huge_bytes = kib(r);
        } else if let Some(r) = line.strip_prefix("Rss:") {
            b.rss_bytes = kib(r);
        }
    }
    if in_entry {
        Some(b)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smaps_entry() {
        let text = "7f0000000000-7f0000400000 rw-p 00000000 00:00 0 \nSize:               4096 kB\nKernelPageSize:        4 kB\nRss:                4096 kB\nAnonHugePages:      2048 kB\n7f0000400000-7f0000600000 rw-p 00000000 00:00 0 \nKernelPageSize:     2048 kB\n";
        let b = parse_smaps_backing(text, 0x7f0000001000).unwrap();
        assert_eq!(b.kernel_page_size_bytes, 4096);
        assert_eq!(b.anon_huge_bytes, 2 << 20);
        assert_eq!(b.rss_bytes, 4 << 20);
        let h = parse_smaps_backing(text, 0x7f0000400000).unwrap();
        assert_eq!(h.kernel_page_size_bytes, 2 << 20);
        assert!(parse_smaps_backing(text, 0x1000).is_none());
    }

    #[test]
    fn base_buffer_is_zeroed_and_backed() {
        let mut b = PageBuffer::new(1 << 20, PageMode::Base).unwrap();
        assert!(b.as_f64_mut().iter().all(|v| *v == 0.0));
        b.as_u64_mut().iter_mut().for_each(|v| *v = 1);
        #[cfg(feature = "sys")]
        {
            let backing = b.backing().expect("our mapping is in smaps");
            assert_eq!(backing.anon_huge_bytes, 0, "MADV_NOHUGEPAGE honoured");
            assert!(backing.rss_bytes >= 1 << 20);
        }
    }
}

//! Page-mode allocation for workloads, and verification of the backing actually obtained.
//!
//! A workload asks for a [`PageMode`] (base pages, transparent huge pages by `madvise`, or a
//! hugetlbfs page size) and gets a [`PageBuffer`] or an [`AllocError`] saying why that mode cannot
//! be had here (empty hugetlb pool: `ENOMEM`; `MAP_HUGETLB` under qemu-user: `EINVAL`; THP
//! disabled). After the owning thread has touched the buffer, [`PageBuffer::verify`] reads
//! `/proc/self/smaps` (through the probe's [`hwsurvey_probe::smaps`] reader) and reports the page sizes and huge-page coverage of the mapping
//! ([`Backing`]): asking is not getting.
//!
//! With the `sys` feature (nix) the buffer is an anonymous `mmap`; without it (e2k, which nix
//! does not know) it is a plain heap allocation, only [`PageMode::Base`] is offered, and the
//! backing is [`Verification::Unverified`] with the reason.
//!
//! Sizes are bytes; smaps' "kB" fields are KiB (1024 bytes), converted by the probe's
//! [`parse_smaps`]. The THP policy and PMD size come from the probe's [`hwsurvey_probe::thp`].

use std::fmt;

use hwsurvey_probe::{thp, SysRoot};
use serde::{Deserialize, Serialize};

/// Fallback alignment for THP buffers when `hpage_pmd_size` cannot be read: 2 MiB, the PMD size of
/// x86_64 and of 4 KiB-page aarch64 kernels.
pub const DEFAULT_THP_ALIGN_BYTES: usize = 2 << 20;

pub use hwsurvey_result::page_mode::PageMode;

/// Why a buffer could not be allocated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// The page mode cannot be had on this system; the workload records the point as skipped.
    #[error("page mode {mode} unavailable: {reason}")]
    Unavailable {
        /// The mode asked for.
        mode: PageMode,
        /// Human-readable reason naming the cause (errno, setting, build feature).
        reason: String,
    },
    /// The request itself is unusable (zero length, size overflow).
    #[error("cannot allocate {len_bytes} bytes with page mode {mode}: {reason}")]
    Invalid {
        /// The mode asked for.
        mode: PageMode,
        /// The length asked for, in bytes.
        len_bytes: usize,
        /// What was wrong.
        reason: String,
    },
    /// The allocation failed for a reason other than the page mode (e.g. out of memory with base pages).
    #[error("allocating {len_bytes} bytes with page mode {mode} failed: {reason}")]
    Failed {
        /// The mode asked for.
        mode: PageMode,
        /// The length asked for, in bytes.
        len_bytes: usize,
        /// The errno or allocator message.
        reason: String,
    },
}

pub use hwsurvey_probe::smaps::{parse_smaps, SmapsError, SmapsMapping};

/// What backs a buffer, as read from `/proc/self/smaps` after first touch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Backing {
    /// The smaps entry of the mapping holding the buffer.
    pub mapping: SmapsMapping,
    /// Bytes of the buffer's mapping backed by huge pages (THP `AnonHugePages`, or hugetlb).
    pub huge_backed_bytes: u64,
    /// `huge_backed_bytes` / mapping size, 0.0 ..= 1.0.
    pub huge_fraction: f64,
}

/// Outcome of checking the backing of a buffer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Verification {
    /// smaps was read and the mapping found.
    Verified(Backing),
    /// The backing could not be checked; the reason says why (no `sys` feature, smaps unreadable).
    Unverified {
        /// Why.
        reason: String,
    },
}

impl Verification {
    /// Whether the mapping is verified to be backed entirely (>= `min_fraction`) by pages of the
    /// requested mode. `Base`: no huge-backed bytes. `Thp`: huge fraction >= `min_fraction`.
    /// `HugeTlb`: kernel page size equals the requested size. `Default`: any verified backing.
    pub fn matches(&self, mode: PageMode, min_fraction: f64) -> bool {
        let Verification::Verified(b) = self else {
            return false;
        };
        match mode {
            PageMode::Base => b.huge_backed_bytes == 0,
            PageMode::Default => true,
            PageMode::Thp => b.huge_fraction >= min_fraction,
            PageMode::HugeTlb { page_size_bytes } => {
                b.mapping.kernel_page_size_bytes == Some(page_size_bytes)
            }
        }
    }
}

/// Builds the [`Backing`] for the mapping containing `addr` from parsed smaps.
/// `None` when no mapping contains `addr`.
pub fn backing_at(maps: &[SmapsMapping], addr: u64) -> Option<Backing> {
    let m = maps.iter().find(|m| m.contains(addr))?;
    let huge = m.anon_huge_pages_bytes.unwrap_or(0) + m.hugetlb_bytes.unwrap_or(0);
    let size = m.size_bytes();
    let huge_fraction = if size == 0 {
        0.0
    } else {
        (huge as f64 / size as f64).min(1.0)
    };
    Some(Backing {
        mapping: m.clone(),
        huge_backed_bytes: huge,
        huge_fraction,
    })
}

/// A zero-filled buffer with a page mode. Its memory is not touched at allocation (except by the
/// std fallback, which zeroes it): the first touch decides the NUMA node and, for THP, whether
/// huge pages are used, so the owning thread should write it first ([`PageBuffer::as_words_mut`]).
pub struct PageBuffer {
    mode: PageMode,
    len_bytes: usize,
    inner: Inner,
}

enum Inner {
    #[cfg(feature = "sys")]
    Mmap {
        /// Start of the whole mapping (for munmap).
        map: std::ptr::NonNull<std::ffi::c_void>,
        map_len: usize,
        /// Start of the usable, aligned region.
        data: std::ptr::NonNull<usize>,
    },
    #[cfg(not(feature = "sys"))]
    Heap(Vec<usize>),
}

// The buffer owns its mapping exclusively; the raw pointers are not shared.
unsafe impl Send for PageBuffer {}
unsafe impl Sync for PageBuffer {}

impl fmt::Debug for PageBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PageBuffer")
            .field("mode", &self.mode)
            .field("len_bytes", &self.len_bytes)
            .field("addr", &format_args!("{:#x}", self.addr()))
            .finish()
    }
}

/// 8-byte plain values that any bit pattern makes valid (the views of a [`PageBuffer`]).
trait EightByteValue: Copy {}
impl EightByteValue for f64 {}
impl EightByteValue for u64 {}

impl PageBuffer {
    /// Allocates at least `len_bytes` (rounded up to whole `usize` words) with `mode`.
    ///
    /// Errors: [`AllocError::Unavailable`] when the mode cannot be had (`ENOMEM`/`EINVAL` from
    /// `MAP_HUGETLB`, `madvise` refused, no `sys` feature), [`AllocError::Invalid`] for a zero
    /// length or a huge page size that is not a power of two, [`AllocError::Failed`] otherwise.
    pub fn allocate(mode: PageMode, len_bytes: usize) -> Result<Self, AllocError> {
        if len_bytes == 0 {
            return Err(AllocError::Invalid {
                mode,
                len_bytes,
                reason: "zero length".into(),
            });
        }
        let word = std::mem::size_of::<usize>();
        let len_bytes = len_bytes.div_ceil(word) * word;
        #[cfg(feature = "sys")]
        {
            sys::allocate(mode, len_bytes)
        }
        #[cfg(not(feature = "sys"))]
        {
            match mode {
                PageMode::Base | PageMode::Default => Ok(PageBuffer {
                    mode,
                    len_bytes,
                    inner: Inner::Heap(vec![0usize; len_bytes / word]),
                }),
                _ => Err(AllocError::Unavailable {
                    mode,
                    reason: "built without the `sys` feature (no mmap/madvise)".into(),
                }),
            }
        }
    }

    /// The page mode asked for.
    pub fn mode(&self) -> PageMode {
        self.mode
    }

    /// Usable length in bytes (a multiple of the word size).
    pub fn len_bytes(&self) -> usize {
        self.len_bytes
    }

    /// Address of the first usable byte.
    pub fn addr(&self) -> usize {
        match &self.inner {
            #[cfg(feature = "sys")]
            Inner::Mmap { data, .. } => data.as_ptr() as usize,
            #[cfg(not(feature = "sys"))]
            Inner::Heap(v) => v.as_ptr() as usize,
        }
    }

    /// The buffer as machine words.
    pub fn as_words(&self) -> &[usize] {
        let n = self.len_bytes / std::mem::size_of::<usize>();
        match &self.inner {
            // SAFETY: `data` points to `map_len >= len_bytes` bytes of readable, zero-initialised
            // anonymous memory owned by `self`, aligned to a page.
            #[cfg(feature = "sys")]
            Inner::Mmap { data, .. } => unsafe { std::slice::from_raw_parts(data.as_ptr(), n) },
            #[cfg(not(feature = "sys"))]
            Inner::Heap(v) => &v[..n],
        }
    }

    /// The buffer as mutable machine words.
    pub fn as_words_mut(&mut self) -> &mut [usize] {
        let n = self.len_bytes / std::mem::size_of::<usize>();
        match &mut self.inner {
            // SAFETY: as in `as_words`, and `&mut self` gives exclusive access.
            #[cfg(feature = "sys")]
            Inner::Mmap { data, .. } => unsafe { std::slice::from_raw_parts_mut(data.as_ptr(), n) },
            #[cfg(not(feature = "sys"))]
            Inner::Heap(v) => &mut v[..n],
        }
    }

    /// The buffer as `f64` values (`len_bytes / 8` of them).
    pub fn as_f64_mut(&mut self) -> &mut [f64] {
        self.as_words_of_mut::<f64>()
    }

    /// The buffer as `u64` values (`len_bytes / 8` of them).
    pub fn as_u64_mut(&mut self) -> &mut [u64] {
        self.as_words_of_mut::<u64>()
    }

    /// The buffer as 8-byte values of `T` (`f64` or `u64`: any bit pattern is a valid value).
    /// Panics when the buffer is not 8-byte aligned.
    fn as_words_of_mut<T: EightByteValue>(&mut self) -> &mut [T] {
        let n = self.len_bytes / std::mem::size_of::<T>();
        let ptr = self.as_words_mut().as_mut_ptr() as *mut T;
        // SAFETY: the region is `len_bytes` long, word-aligned (>= 8 on 64-bit; on 32-bit targets
        // the mmap region is page-aligned and the heap fallback is checked here), any bit pattern
        // is a valid `T` (the trait is implemented only for f64 and u64), and `&mut self` gives
        // exclusive access.
        assert!(
            ptr.align_offset(std::mem::align_of::<T>()) == 0,
            "buffer not 8-byte aligned"
        );
        unsafe { std::slice::from_raw_parts_mut(ptr, n) }
    }

    /// Reads `/proc/self/smaps` and reports the backing of this buffer's mapping. Call after the
    /// buffer has been touched: untouched pages are not backed by anything.
    pub fn verify(&self) -> Verification {
        #[cfg(feature = "sys")]
        {
            verify_addr(self.addr() as u64, hwsurvey_probe::smaps::SELF_SMAPS_PATH)
        }
        #[cfg(not(feature = "sys"))]
        {
            Verification::Unverified {
                reason: "built without the `sys` feature: heap allocation, smaps not consulted"
                    .into(),
            }
        }
    }
}

/// Reads smaps at `path` (through the probe's reader) and returns the backing of the mapping
/// holding `addr`.
#[cfg_attr(not(feature = "sys"), allow(dead_code))]
fn verify_addr(addr: u64, path: &str) -> Verification {
    match hwsurvey_probe::smaps::read_smaps(&SysRoot::live(), path) {
        Ok(maps) => match backing_at(&maps, addr) {
            Some(b) => Verification::Verified(b),
            None => Verification::Unverified {
                reason: format!("{path}: no mapping contains {addr:#x}"),
            },
        },
        Err(reason) => Verification::Unverified { reason },
    }
}

impl Drop for PageBuffer {
    fn drop(&mut self) {
        match &self.inner {
            #[cfg(feature = "sys")]
            Inner::Mmap { map, map_len, .. } => {
                // SAFETY: `map`/`map_len` are exactly what mmap returned and nothing borrows the
                // buffer any more (we are in drop).
                let _ = unsafe { nix::sys::mman::munmap(*map, *map_len) };
            }
            #[cfg(not(feature = "sys"))]
            Inner::Heap(_) => {}
        }
    }
}

/// The PMD (THP) size in bytes, from `/sys/kernel/mm/transparent_hugepage/hpage_pmd_size`
/// through the probe's reader, falling back to [`DEFAULT_THP_ALIGN_BYTES`].
pub fn thp_align_bytes() -> usize {
    thp::read_pmd_size_bytes(&SysRoot::live())
        .ok()
        .and_then(|v| usize::try_from(v).ok())
        .unwrap_or(DEFAULT_THP_ALIGN_BYTES)
}

/// The THP policy from `/sys/kernel/mm/transparent_hugepage/enabled` (`always`, `madvise`,
/// `never`), through the probe's reader, or the reason it cannot be read. THP by madvise is
/// unavailable when it is `never`.
pub fn thp_enabled() -> Result<String, String> {
    thp::read_enabled(&SysRoot::live())
        .map(|c| c.selected)
        .map_err(|e| e.to_string())
}

#[cfg(feature = "sys")]
mod sys {
    use std::num::NonZeroUsize;
    use std::ptr::NonNull;

    use nix::errno::Errno;
    use nix::sys::mman::{madvise, mmap_anonymous, munmap, MapFlags, MmapAdvise, ProtFlags};

    use super::{thp_align_bytes, thp_enabled, AllocError, Inner, PageBuffer, PageMode};

    pub(super) fn allocate(mode: PageMode, len_bytes: usize) -> Result<PageBuffer, AllocError> {
        let failed = |reason: String| AllocError::Failed {
            mode,
            len_bytes,
            reason,
        };
        let unavailable = |reason: String| AllocError::Unavailable { mode, reason };
        let prot = ProtFlags::PROT_READ | ProtFlags::PROT_WRITE;
        let base_flags = MapFlags::MAP_PRIVATE | MapFlags::MAP_ANONYMOUS;
        match mode {
            PageMode::Base | PageMode::Default | PageMode::Thp => {
                let align = if mode == PageMode::Thp {
                    if let Ok(policy) = thp_enabled() {
                        if policy == "never" {
                            return Err(unavailable(
                                "THP disabled (/sys/kernel/mm/transparent_hugepage/enabled = never)".into(),
                            ));
                        }
                    }
                    thp_align_bytes()
                } else {
                    0
                };
                let map_len = len_bytes
                    .checked_add(align)
                    .and_then(NonZeroUsize::new)
                    .ok_or_else(|| AllocError::Invalid {
                        mode,
                        len_bytes,
                        reason: "size overflows".into(),
                    })?;
                // SAFETY: anonymous private mapping at a kernel-chosen address; no existing memory
                // is affected.
                let map = unsafe { mmap_anonymous(None, map_len, prot, base_flags) }
                    .map_err(|e| failed(format!("mmap: {e}")))?;
                let start = map.as_ptr() as usize;
                let data_addr = if align > 0 {
                    start.next_multiple_of(align)
                } else {
                    start
                };
                let data = NonNull::new(data_addr as *mut usize)
                    .ok_or_else(|| failed("mmap returned null".into()))?;
                let advice = match mode {
                    PageMode::Thp => Some(MmapAdvise::MADV_HUGEPAGE),
                    PageMode::Base => Some(MmapAdvise::MADV_NOHUGEPAGE),
                    _ => None,
                };
                // SAFETY: the range lies inside the mapping just created.
                let adv = match advice {
                    Some(a) => unsafe { madvise(data.cast(), len_bytes, a) },
                    None => Ok(()),
                };
                if let Err(e) = adv {
                    if mode == PageMode::Thp {
                        // SAFETY: unmapping exactly what was mapped above.
                        let _ = unsafe { munmap(map, map_len.get()) };
                        return Err(unavailable(format!(
                            "madvise(MADV_HUGEPAGE): {e} (kernel without THP?)"
                        )));
                    }
                    // MADV_NOHUGEPAGE refused means no THP in this kernel: base pages anyway.
                }
                Ok(PageBuffer {
                    mode,
                    len_bytes,
                    inner: Inner::Mmap {
                        map,
                        map_len: map_len.get(),
                        data,
                    },
                })
            }
            PageMode::HugeTlb { page_size_bytes } => {
                if !page_size_bytes.is_power_of_two() || page_size_bytes < 4096 {
                    return Err(AllocError::Invalid {
                        mode,
                        len_bytes,
                        reason: format!(
                            "huge page size {page_size_bytes} is not a power of two >= 4096"
                        ),
                    });
                }
                let page = usize::try_from(page_size_bytes)
                    .map_err(|_| unavailable("huge page size exceeds the address space".into()))?;
                let map_len = len_bytes
                    .checked_next_multiple_of(page)
                    .and_then(NonZeroUsize::new)
                    .ok_or_else(|| AllocError::Invalid {
                        mode,
                        len_bytes,
                        reason: "size overflows".into(),
                    })?;
                let log2 = page_size_bytes.trailing_zeros();
                let flags = MapFlags::map_hugetlb_with_size_log2(log2).ok_or_else(|| {
                    unavailable(format!("huge page size 2^{log2} not expressible"))
                })?;
                // SAFETY: as above.
                let map = unsafe { mmap_anonymous(None, map_len, prot, base_flags | flags) }.map_err(|e| match e {
                    Errno::ENOMEM => unavailable(format!(
                        "mmap(MAP_HUGETLB, {}): ENOMEM (hugetlb pool empty or too small for {} bytes)",
                        hwsurvey_result::page_mode::binary_size(page_size_bytes),
                        map_len
                    )),
                    Errno::EINVAL => unavailable(format!(
                        "mmap(MAP_HUGETLB, {}): EINVAL (size not supported by the kernel, or emulated by qemu-user)",
                        hwsurvey_result::page_mode::binary_size(page_size_bytes)
                    )),
                    other => unavailable(format!("mmap(MAP_HUGETLB): {other}")),
                })?;
                let data = map.cast::<usize>();
                Ok(PageBuffer {
                    mode,
                    len_bytes,
                    inner: Inner::Mmap {
                        map,
                        map_len: map_len.get(),
                        data,
                    },
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use hwsurvey_testkit::SMAPS_EXCERPT as SMAPS;

    #[test]
    fn backing_fraction_and_match() {
        let maps = parse_smaps(SMAPS, "smaps text").unwrap();
        let thp = backing_at(&maps, 0x7f2a40001000).unwrap();
        assert_eq!(thp.huge_backed_bytes, 6 << 20);
        assert!((thp.huge_fraction - 0.75).abs() < 1e-12);
        let v = Verification::Verified(thp);
        assert!(v.matches(PageMode::Thp, 0.5));
        assert!(!v.matches(PageMode::Thp, 0.9));
        assert!(!v.matches(PageMode::Base, 0.0));
        let huge = Verification::Verified(backing_at(&maps, 0x7f2a80000000).unwrap());
        assert!(huge.matches(
            PageMode::HugeTlb {
                page_size_bytes: 2 << 20
            },
            1.0
        ));
        assert!(!huge.matches(
            PageMode::HugeTlb {
                page_size_bytes: 1 << 30
            },
            1.0
        ));
        assert!(backing_at(&maps, 0x1000).is_none());
    }

    #[test]
    fn labels_and_selector() {
        assert_eq!(
            PageMode::HugeTlb {
                page_size_bytes: 2 << 20
            }
            .label(),
            "hugetlb-2MiB"
        );
        assert_eq!(
            PageMode::HugeTlb {
                page_size_bytes: 64 << 10
            }
            .label(),
            "hugetlb-64KiB"
        );
        assert_eq!(
            PageMode::HugeTlb {
                page_size_bytes: 1 << 30
            }
            .label(),
            "hugetlb-1GiB"
        );
        // the THP policy is read with the probe's bracketed-choice parser
        let selected = |t: &str| hwsurvey_probe::pages::parse_choice(t).map(|c| c.selected);
        assert_eq!(
            selected("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(selected("always madvise never"), None);
    }

    #[test]
    fn zero_length_is_invalid() {
        assert!(matches!(
            PageBuffer::allocate(PageMode::Base, 0),
            Err(AllocError::Invalid { .. })
        ));
    }
}

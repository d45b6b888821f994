//! mem.latency kernels: the chase orders are single cycles over every line, page-local orders stay
//! inside their windows, the chase returns to its start after whole trips, and page-mode
//! allocation reports what it got.

use hwsurvey_engine::pages::{AllocError, PageBuffer, PageMode, Verification};
use hwsurvey_workloads::families::mem_latency::{
    chase, lay_out, lines_for, order_to_successors, page_local_order, sattolo_cycle, stride_words,
    successors, ChaseOrder, SplitMix64, LINE_BYTES,
};
use proptest::prelude::*;

/// Follows `next` from 0 and returns how many steps it takes to come back, or None if it
/// revisits another element first or leaves the range.
fn cycle_length(next: &[usize]) -> Option<usize> {
    let mut seen = vec![false; next.len()];
    let mut p = 0usize;
    for step in 1..=next.len() {
        if seen[p] {
            return None;
        }
        seen[p] = true;
        p = *next.get(p)?;
        if p == 0 {
            return Some(step);
        }
    }
    None
}

proptest! {
    // 64 cases: enough to hit odd sizes and windows, and quick under qemu-user (256 took 90 s).
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn sattolo_is_one_cycle_over_all(n in 1usize..3000, seed in any::<u64>()) {
        let next = sattolo_cycle(n, &mut SplitMix64::new(seed));
        prop_assert_eq!(cycle_length(&next), Some(n));
    }

    #[test]
    fn page_local_is_one_cycle_and_stays_in_windows(n in 1usize..3000, window in 1usize..200, seed in any::<u64>()) {
        let order = page_local_order(n, window, &mut SplitMix64::new(seed));
        // a permutation of 0..n
        let mut sorted = order.clone();
        sorted.sort_unstable();
        prop_assert_eq!(sorted, (0..n).collect::<Vec<_>>());
        // consecutive chunks of `window` visits (the last window may be short, and is visited
        // at a random position) each lie inside one window and cover it
        let mut k = 0;
        while k < order.len() {
            let w = order[k] / window;
            let len = window.min(n - w * window);
            let chunk = &order[k..k + len];
            prop_assert!(chunk.iter().all(|&e| e / window == w), "chunk leaves window {}: {:?}", w, chunk);
            k += len;
        }
        prop_assert_eq!(cycle_length(&order_to_successors(&order)), Some(n));
    }

    #[test]
    fn chase_returns_to_start_after_whole_trips(lines in 1usize..2000, trips in 1u64..4, seed in any::<u64>()) {
        let next = successors(ChaseOrder::FullRandom, lines, seed);
        let mut words = vec![0usize; lines * stride_words()];
        let start = lay_out(&mut words, &next).unwrap();
        prop_assert_eq!(chase(&words, start, lines as u64 * trips), start);
    }
}

#[test]
fn chase_visits_lines_in_successor_order() {
    let next = successors(ChaseOrder::PageLocal { window_bytes: 4096 }, 256, 7);
    let mut words = vec![0usize; 256 * stride_words()];
    let start = lay_out(&mut words, &next).unwrap();
    // one step from line 0 lands on next[0]; 256 steps close the cycle; 255 do not
    assert_eq!(chase(&words, start, 1), next[0] * stride_words());
    assert_eq!(chase(&words, start, 256), start);
    assert_ne!(chase(&words, start, 255), start);
    // every line of the first page-window is followed inside its window except the window's last
    let window_lines = 4096 / LINE_BYTES;
    let leaving = (0..256)
        .filter(|&i| next[i] / window_lines != i / window_lines)
        .count();
    assert_eq!(leaving, 256 / window_lines, "exactly one exit per window");
}

#[test]
fn base_pages_are_verified_and_not_huge() {
    let len = 4 << 20;
    let mut buf = PageBuffer::allocate(PageMode::Base, len).unwrap();
    assert!(buf.len_bytes() >= len);
    let next = successors(ChaseOrder::FullRandom, lines_for(len), 1);
    let start = lay_out(buf.as_words_mut(), &next).unwrap();
    assert_eq!(chase(buf.as_words(), start, next.len() as u64), start);
    match buf.verify() {
        Verification::Verified(b) => {
            assert_eq!(
                b.huge_backed_bytes, 0,
                "MADV_NOHUGEPAGE mapping got huge pages: {b:?}"
            );
            let page = b
                .mapping
                .kernel_page_size_bytes
                .expect("KernelPageSize in smaps");
            assert!(
                page == 4096 || page == 8192 || page == 16384 || page == 65536,
                "{page}"
            );
            assert!(b.mapping.contains(buf.addr() as u64));
        }
        // qemu-user does not map guest addresses 1:1 in the host's smaps; std-only builds do not read it
        Verification::Unverified { reason } => println!("unverified: {reason}"),
    }
}

#[test]
fn thp_is_aligned_and_reports_its_coverage() {
    let len = 8 << 20;
    match PageBuffer::allocate(PageMode::Thp, len) {
        Ok(mut buf) => {
            assert_eq!(buf.addr() % hwsurvey_engine::pages::thp_align_bytes(), 0);
            buf.as_words_mut()
                .iter_mut()
                .enumerate()
                .for_each(|(i, w)| *w = i);
            assert_eq!(buf.as_words()[12345], 12345);
            if let Verification::Verified(b) = buf.verify() {
                assert!((0.0..=1.0).contains(&b.huge_fraction));
                assert_eq!(
                    b.huge_backed_bytes,
                    b.mapping.anon_huge_pages_bytes.unwrap_or(0)
                );
                println!("THP coverage {:.2}", b.huge_fraction);
            }
        }
        Err(AllocError::Unavailable { reason, .. }) => println!("THP unavailable: {reason}"),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn hugetlb_with_empty_pool_is_unavailable_not_an_error() {
    // Sizes the kernel advertises; a pool with no free pages must give Unavailable with a reason.
    let Ok(rd) = std::fs::read_dir("/sys/kernel/mm/hugepages") else {
        println!("SKIPPED: no /sys/kernel/mm/hugepages");
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(kib) = name
            .strip_prefix("hugepages-")
            .and_then(|s| s.strip_suffix("kB"))
        else {
            continue;
        };
        let size = kib.parse::<u64>().unwrap() * 1024;
        let free: u64 = std::fs::read_to_string(e.path().join("free_hugepages"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let r = PageBuffer::allocate(
            PageMode::HugeTlb {
                page_size_bytes: size,
            },
            size as usize,
        );
        if free == 0 {
            match r {
                Err(AllocError::Unavailable { reason, .. }) => {
                    assert!(
                        reason.contains("ENOMEM")
                            || reason.contains("EINVAL")
                            || reason.contains("sys"),
                        "{reason}"
                    )
                }
                other => panic!("{name}: empty pool gave {other:?}"),
            }
        } else if let Ok(mut buf) = r {
            buf.as_words_mut()[0] = 1;
            if let Verification::Verified(b) = buf.verify() {
                assert_eq!(b.mapping.kernel_page_size_bytes, Some(size));
            }
        }
    }
}

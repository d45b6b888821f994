//! RAID-6 correctness: every generation path against the independent bytewise reference, and
//! recovery of every pair of lost blocks, byte for byte, for pseudo-random stripes. The paths
//! this CPU cannot run are named with `SKIPPED:`; under qemu-user (aarch64, sparc64) the
//! portable and NEON paths run.

use hwsurvey_workloads::families::load_profile;
use hwsurvey_workloads::families::raid_parity::Params;
use hwsurvey_workloads::raid6::{
    fill_pseudo_random, gen_syndrome, recover, reference, select_fastest, Algorithm, LostPair,
    Raid6Error, SELECTION_MAX_CHUNK_BYTES, SELECTION_ROUNDS,
};
use proptest::prelude::*;

fn stripe(n: usize, len: usize, seed: u64) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut b = vec![0u8; len];
            fill_pseudo_random(&mut b, seed.wrapping_mul(1000).wrapping_add(i as u64 + 1));
            b
        })
        .collect()
}

fn gen(alg: Algorithm, data: &[Vec<u8>]) -> (Vec<u8>, Vec<u8>) {
    let view: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
    let len = data[0].len();
    // Start P/Q from garbage so a path that forgets a byte is caught.
    let mut p = vec![0xa5u8; len];
    let mut q = vec![0x5au8; len];
    gen_syndrome(alg, &view, &mut p, &mut q).unwrap();
    (p, q)
}

/// The geometries the family uses: every `data_blocks` and `chunk_bytes` of raid.parity in the
/// built-in profiles.
fn profile_geometries() -> (Vec<usize>, Vec<usize>) {
    let mut disks = Vec::new();
    let mut chunks = Vec::new();
    for name in ["standard", "quick"] {
        let profile = load_profile(name).unwrap_or_else(|e| panic!("{e}"));
        let Some(section) = profile.families.get("raid.parity") else {
            continue;
        };
        let params: Params = section.checked_params().unwrap();
        disks.extend(params.data_blocks);
        chunks.push(params.chunk_bytes);
    }
    disks.sort_unstable();
    disks.dedup();
    chunks.sort_unstable();
    chunks.dedup();
    assert!(
        !disks.is_empty() && !chunks.is_empty(),
        "no raid.parity geometry in the profiles"
    );
    (disks, chunks)
}

/// Every path of this build; the ones this CPU cannot run are named once with the reason.
fn paths_or_skip(test: &str) -> Vec<Algorithm> {
    for alg in Algorithm::ALL {
        if !alg.is_available() {
            println!(
                "SKIPPED: {test}: path {} (needs CPU features {:?} on its architecture) does not run here",
                alg.name(),
                alg.cpu_features()
            );
        }
    }
    Algorithm::available()
}

#[test]
fn runnable_paths_follow_the_cpu_flags() {
    let avail = Algorithm::available();
    assert_eq!(avail.first(), Some(&Algorithm::Int64x4));
    #[cfg(target_arch = "x86_64")]
    {
        // The flags line of /proc/cpuinfo (the kernel's view) against std's detection.
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        if let Some(flags) = cpuinfo.lines().find(|l| l.starts_with("flags")) {
            let flags: Vec<&str> = flags.split_whitespace().collect();
            for alg in Algorithm::ALL {
                if alg == Algorithm::Neonx4 {
                    assert!(!avail.contains(&alg));
                    continue;
                }
                let has = alg.cpu_features().iter().all(|f| flags.contains(f));
                assert_eq!(avail.contains(&alg), has, "{} vs /proc/cpuinfo", alg.name());
            }
        } else {
            println!("SKIPPED: no flags line in /proc/cpuinfo to check detection against");
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for alg in [
        Algorithm::Avx2x4,
        Algorithm::GfniAvx2x4,
        Algorithm::Avx512x4,
        Algorithm::GfniAvx512x4,
    ] {
        assert!(!avail.contains(&alg), "{}", alg.name());
    }
    #[cfg(not(target_arch = "aarch64"))]
    assert!(!avail.contains(&Algorithm::Neonx4));
    #[cfg(target_arch = "aarch64")]
    assert!(
        avail.contains(&Algorithm::Neonx4),
        "NEON is aarch64's base ISA"
    );
}

#[test]
fn every_path_matches_reference_for_the_profile_geometries() {
    let (disks, chunks) = profile_geometries();
    // The profiles' chunk sizes, and lengths that exercise each vector body (128, 256 bytes
    // per step), the SWAR body (32) and the byte tail; 2 and 255 data blocks at the extremes.
    let mut lens: Vec<usize> = vec![1, 31, 32, 200, 256 + 128 + 32 + 5, 4096 + 77];
    lens.extend(&chunks);
    let mut counts = disks.clone();
    counts.extend([2, 255]);
    let paths = paths_or_skip("gen against the reference");
    for &n in &counts {
        for &len in &lens {
            if n == 255 && len > 4096 + 77 {
                continue;
            }
            let data = stripe(n, len, (n * 7919 + len) as u64);
            let view: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
            let (rp, rq) = reference::syndromes(&view);
            for &alg in &paths {
                let (p, q) = gen(alg, &data);
                assert!(p == rp, "{} P differs, n={n} len={len}", alg.name());
                assert!(q == rq, "{} Q differs, n={n} len={len}", alg.name());
            }
        }
    }
}

#[test]
fn two_data_recovery_every_pair_every_path_at_the_profile_geometries() {
    // Every pair of lost data blocks of every profile geometry, at every profile chunk size,
    // rebuilt by every path and compared with the stripe's data and the reference solution.
    let (disks, chunks) = profile_geometries();
    let paths = paths_or_skip("two-data recovery");
    for &n in &disks {
        for &len in &chunks {
            let data = stripe(n, len, (n + len) as u64);
            let view: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
            let (p, q) = reference::syndromes(&view);
            for &alg in &paths {
                for a in 0..n {
                    for b in a + 1..n {
                        let mut broken: Vec<Vec<u8>> = data.clone();
                        broken.push(p.clone());
                        broken.push(q.clone());
                        broken[a].fill(0xee);
                        broken[b].fill(0x11);
                        let mut refs: Vec<&mut [u8]> =
                            broken.iter_mut().map(|v| v.as_mut_slice()).collect();
                        let kind = recover(alg, &mut refs, a, b).unwrap();
                        assert_eq!(kind, LostPair::TwoData);
                        assert!(
                            broken[a] == data[a] && broken[b] == data[b],
                            "{} n={n} len={len} lost ({a},{b}) not rebuilt",
                            alg.name()
                        );
                    }
                }
            }
            // The independent solution agrees on a few pairs (it is slow).
            for (a, b) in [(0, 1), (0, n - 1), (n - 2, n - 1)] {
                let (ra, rb) = reference::recover_two_data(&view, &p, &q, a, b);
                assert!(ra == data[a] && rb == data[b], "reference n={n} ({a},{b})");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Any geometry, length and pair: gen and two-data recovery of every runnable path agree
    /// with the reference, bytes outside the lost blocks untouched.
    #[test]
    fn any_stripe_any_pair_matches_reference(
        n in 2usize..=40,
        len in 0usize..1200,
        seed in any::<u64>(),
        pair in (0usize..40, 0usize..40),
    ) {
        let (a, b) = (pair.0 % n, pair.1 % n);
        prop_assume!(a != b);
        let data = stripe(n, len.max(1), seed);
        let view: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
        let (rp, rq) = reference::syndromes(&view);
        let (lo, hi) = (a.min(b), a.max(b));
        let (ra, rb) = reference::recover_two_data(&view, &rp, &rq, lo, hi);
        for alg in Algorithm::available() {
            let (p, q) = gen(alg, &data);
            prop_assert!(p == rp && q == rq, "{} gen n={} len={}", alg.name(), n, len);
            let mut broken: Vec<Vec<u8>> = data.clone();
            broken.push(p);
            broken.push(q);
            broken[a].fill(0x77);
            broken[b].fill(0x99);
            let mut refs: Vec<&mut [u8]> = broken.iter_mut().map(|v| v.as_mut_slice()).collect();
            recover(alg, &mut refs, a, b).unwrap();
            prop_assert!(broken[lo] == ra && broken[hi] == rb, "{} recover ({},{})", alg.name(), a, b);
            prop_assert!(broken[n] == rp && broken[n + 1] == rq);
        }
    }
}

#[test]
fn selection_times_every_runnable_path_and_picks_the_fastest() {
    let s = select_fastest(8, 4096).unwrap();
    let timed: Vec<Algorithm> = s.measured.iter().map(|f| f.algorithm).collect();
    assert_eq!(timed, Algorithm::available());
    assert!(s.measured.iter().all(|f| f.gen_bytes_per_s > 0.0));
    let top = s
        .measured
        .iter()
        .max_by(|a, b| a.gen_bytes_per_s.total_cmp(&b.gen_bytes_per_s))
        .unwrap();
    assert_eq!(s.best, top.algorithm);
    assert_eq!(
        (s.data_blocks, s.chunk_bytes, s.rounds),
        (8, 4096, SELECTION_ROUNDS)
    );
    // Cached: the second call returns the same choice without timing again.
    assert_eq!(select_fastest(8, 4096).unwrap(), s);
    // Chunks longer than the cap are timed at the cap.
    assert_eq!(
        select_fastest(4, 1 << 20).unwrap().chunk_bytes,
        SELECTION_MAX_CHUNK_BYTES
    );
    assert_eq!(
        select_fastest(1, 4096),
        Err(Raid6Error::DataBlockCount { data_blocks: 1 })
    );
    println!(
        "selection 8+2 x 4 KiB: {}",
        s.measured
            .iter()
            .map(|f| format!("{} {:.0} MB/s", f.algorithm.name(), f.gen_bytes_per_s / 1e6))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

#[test]
fn known_values_single_bytes() {
    // With D_i = 1 in position i only, Q = g^i: Q byte is 2^i mod 0x11d (2^8 = 0x1d).
    for i in [0usize, 1, 7, 8, 9, 17] {
        let mut data = vec![vec![0u8; 1]; 18];
        data[i][0] = 1;
        let (p, q) = gen(Algorithm::Int64x4, &data);
        let want = [1u8, 2, 0x80, 0x1d, 0x3a, 0x98 /* 2^17 */];
        let idx = [0usize, 1, 7, 8, 9, 17]
            .iter()
            .position(|&x| x == i)
            .unwrap();
        assert_eq!(p[0], 1);
        assert_eq!(q[0], want[idx], "g^{i}");
    }
}

#[test]
fn recover_every_pair_every_path() {
    for &n in &[4usize, 8, 18] {
        let len = 4096 + 40;
        let data = stripe(n, len, n as u64);
        for alg in Algorithm::available() {
            let (p, q) = gen(alg, &data);
            let mut full: Vec<Vec<u8>> = data.clone();
            full.push(p);
            full.push(q);
            for a in 0..n + 2 {
                for b in a + 1..n + 2 {
                    let mut broken = full.clone();
                    broken[a].fill(0xee);
                    broken[b]
                        .iter_mut()
                        .enumerate()
                        .for_each(|(k, x)| *x = k as u8);
                    let mut refs: Vec<&mut [u8]> =
                        broken.iter_mut().map(|v| v.as_mut_slice()).collect();
                    let kind = recover(alg, &mut refs, b, a).unwrap();
                    let want_kind = match (a < n, b < n, b == n) {
                        (true, true, _) => LostPair::TwoData,
                        (true, false, true) => LostPair::DataAndP,
                        (true, false, false) => LostPair::DataAndQ,
                        _ => LostPair::PAndQ,
                    };
                    assert_eq!(kind, want_kind, "n={n} lost ({a},{b})");
                    assert!(
                        broken == full,
                        "{} n={n} lost ({a},{b}) not rebuilt",
                        alg.name()
                    );
                }
            }
        }
    }
}

#[test]
fn fast_recovery_agrees_with_reference_recovery() {
    let n = 8;
    let data = stripe(n, 1000, 99);
    let view: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
    let (p, q) = reference::syndromes(&view);
    for (a, b) in [(0usize, 1usize), (2, 7), (5, 6)] {
        let (ra, rb) = reference::recover_two_data(&view, &p, &q, a, b);
        assert_eq!(ra, data[a]);
        assert_eq!(rb, data[b]);
    }
}

#[test]
fn bad_shapes_are_typed_errors() {
    let a = vec![0u8; 64];
    let short = vec![0u8; 63];
    let mut p = vec![0u8; 64];
    let mut q = vec![0u8; 64];
    assert_eq!(
        gen_syndrome(Algorithm::Int64x4, &[&a], &mut p, &mut q),
        Err(Raid6Error::DataBlockCount { data_blocks: 1 })
    );
    assert_eq!(
        gen_syndrome(Algorithm::Int64x4, &[&a, &short, &a], &mut p, &mut q),
        Err(Raid6Error::LengthMismatch {
            block: 1,
            expected_bytes: 64,
            got_bytes: 63
        })
    );
    let mut blocks = vec![vec![0u8; 8]; 6];
    let mut refs: Vec<&mut [u8]> = blocks.iter_mut().map(|v| v.as_mut_slice()).collect();
    assert!(matches!(
        recover(Algorithm::Int64x4, &mut refs, 2, 2),
        Err(Raid6Error::BadLostPair { .. })
    ));
    assert!(matches!(
        recover(Algorithm::Int64x4, &mut refs, 1, 6),
        Err(Raid6Error::BadLostPair {
            b: 6,
            blocks: 6,
            ..
        })
    ));
    for alg in Algorithm::ALL {
        if !alg.is_available() {
            assert_eq!(
                gen_syndrome(alg, &[&a, &a], &mut p, &mut q),
                Err(Raid6Error::Unavailable { name: alg.name() })
            );
        }
    }
}

#[test]
fn aligned_blocks_start_on_a_cache_line_and_keep_it_when_cloned() {
    use hwsurvey_workloads::raid6::AlignedBlock;
    for len in [0usize, 1, 63, 64, 65, 4096, 65536] {
        let mut b = AlignedBlock::zeroed(len);
        assert_eq!(b.len(), len);
        assert!(b.iter().all(|&x| x == 0));
        assert_eq!(b.as_ptr() as usize % AlignedBlock::ALIGN, 0, "len {len}");
        fill_pseudo_random(&mut b, len as u64);
        let c = b.clone();
        assert_eq!(
            c.as_ptr() as usize % AlignedBlock::ALIGN,
            0,
            "clone, len {len}"
        );
        assert_eq!(&c[..], &b[..]);
    }
    // Every path gives the reference P and Q on aligned blocks too (the other tests use
    // Vec's alignment).
    let data: Vec<AlignedBlock> = (0..8)
        .map(|i| {
            let mut b = AlignedBlock::zeroed(65536);
            fill_pseudo_random(&mut b, i + 1);
            b
        })
        .collect();
    let view: Vec<&[u8]> = data.iter().map(|d| &d[..]).collect();
    let (rp, rq) = reference::syndromes(&view);
    for alg in Algorithm::available() {
        let mut p = AlignedBlock::zeroed(65536);
        let mut q = AlignedBlock::zeroed(65536);
        gen_syndrome(alg, &view, &mut p, &mut q).unwrap();
        assert!(p[..] == rp[..] && q[..] == rq[..], "{}", alg.name());
    }
}

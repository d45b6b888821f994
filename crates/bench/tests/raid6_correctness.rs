//! RAID-6 correctness: every generation path against the independent bytewise reference, and
//! recovery of every pair of lost blocks, byte for byte, for pseudo-random stripes.

use hwsurvey_bench::raid6::{
    fill_pseudo_random, gen_syndrome, recover, reference, Algorithm, LostPair, Raid6Error,
};

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

#[test]
fn runnable_paths_include_portable_and_detected_simd() {
    let avail = Algorithm::available();
    assert_eq!(avail.first(), Some(&Algorithm::Int64x4));
    #[cfg(target_arch = "x86_64")]
    assert_eq!(
        avail.contains(&Algorithm::Avx2x4),
        std::is_x86_feature_detected!("avx2")
    );
    #[cfg(not(target_arch = "x86_64"))]
    assert!(!avail.contains(&Algorithm::Avx2x4));
    #[cfg(not(target_arch = "aarch64"))]
    assert!(!avail.contains(&Algorithm::Neonx4));
}

#[test]
fn every_path_matches_reference_for_the_profile_geometries() {
    // 4+2, 8+2, 18+2 with lengths that exercise the vector body, the SWAR body and the byte tail.
    for &n in &[2usize, 4, 8, 18] {
        for &len in &[1usize, 31, 32, 200, 4096 + 77, 65536] {
            let data = stripe(n, len, (n * 7919 + len) as u64);
            let view: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
            let (rp, rq) = reference::syndromes(&view);
            for alg in Algorithm::available() {
                let (p, q) = gen(alg, &data);
                assert!(p == rp, "{} P differs, n={n} len={len}", alg.name());
                assert!(q == rq, "{} Q differs, n={n} len={len}", alg.name());
            }
        }
    }
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

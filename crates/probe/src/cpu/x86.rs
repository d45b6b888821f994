//! x86 cpuid on the live machine, behind a seam: [`decode`] reads from any
//! [`raw_cpuid::CpuIdReader`], so a captured register dump ([`CpuidDump`]) of a named CPU is a
//! test; [`probe_live`] uses the real instruction. Only compiled with raw-cpuid on x86/x86_64;
//! elsewhere every function says "not on this platform".
//!
//! Leaves used: 0 (vendor), 1 (family/model/stepping), 4 / 0x8000_001D (deterministic cache
//! parameters: level, type, ways, line size, sets, threads sharing), 2 (Intel TLB descriptors),
//! 0x8000_0005/6 (AMD L1/L2 TLBs), 7 EDX bit 15 (hybrid part), 0x1A EAX[31:24] (core type of
//! the CPU the instruction runs on: 0x20 Atom/E-core, 0x40 Core/P-core; Intel SDM vol. 2A,
//! "CPUID—Hybrid Information Enumeration Leaf"), 0x15 (TSC / crystal ratio) and 0x16 (base and
//! maximum MHz) for the nominal clock ([`super::nominal`]).

use std::collections::BTreeMap;

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
use hwsurvey_model::Unknown;
use hwsurvey_model::{CpuId, Probed};

/// A recorded cpuid register dump: (leaf, subleaf) -> (eax, ebx, ecx, edx). Leaves not in the
/// map read as zeros, as unsupported leaves do on real CPUs.
#[derive(Debug, Clone, Default)]
pub struct CpuidDump(pub BTreeMap<(u32, u32), [u32; 4]>);

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod imp {
    use super::*;
    use raw_cpuid::{CpuId as RawCpuId, CpuIdReader, CpuIdResult};

    impl CpuIdReader for CpuidDump {
        fn cpuid2(&self, eax: u32, ecx: u32) -> CpuIdResult {
            let r = self
                .0
                .get(&(eax, ecx))
                .or_else(|| {
                    self.0
                        .get(&(eax, 0))
                        .filter(|_| !matches!(eax, 4 | 7 | 0xb | 0x1f | 0x8000_001d))
                })
                .copied()
                .unwrap_or([0; 4]);
            CpuIdResult {
                eax: r[0],
                ebx: r[1],
                ecx: r[2],
                edx: r[3],
            }
        }
    }

    /// Leaf 0x18 sub-leaves read (at most this many; the SDM's parts list under 10).
    const MAX_LEAF18_SUBLEAVES: u32 = 64;

    /// Decodes what a cpuid reader returns.
    pub fn decode<R: CpuIdReader>(reader: R) -> CpuidInfo {
        let leaf7 = reader.cpuid2(7, 0);
        let max_basic = reader.cpuid2(0, 0).eax;
        let max_ext = reader.cpuid2(0x8000_0000, 0).eax;
        // leaf 0x18: (sub-leaf, EBX, ECX, EDX) of sub-leaves 0..=EAX of sub-leaf 0
        let leaf18 = (max_basic >= 0x18).then(|| {
            let n = reader.cpuid2(0x18, 0).eax.min(MAX_LEAF18_SUBLEAVES);
            (0..=n)
                .map(|s| {
                    let r = reader.cpuid2(0x18, s);
                    (s, r.ebx, r.ecx, r.edx)
                })
                .collect::<Vec<_>>()
        });
        // AMD 0x8000_0005 EAX/EBX, 0x8000_0006 EAX/EBX, 0x8000_0019 EAX/EBX (zero when absent)
        let ext = |leaf: u32| {
            if max_ext >= leaf && max_ext < 0x8000_0100 {
                let r = reader.cpuid2(leaf, 0);
                (r.eax, r.ebx)
            } else {
                (0, 0)
            }
        };
        let amd_leaves = Some([ext(0x8000_0005), ext(0x8000_0006), ext(0x8000_0019)]);
        // leaf 2 (one reading: AL, the number of readings, is 1 on every part since the P6)
        let leaf2: Vec<[u32; 4]> = if max_basic >= 2 {
            let r = reader.cpuid2(2, 0);
            vec![[r.eax, r.ebx, r.ecx, r.edx]]
        } else {
            Vec::new()
        };
        // leaves 0x15 and 0x16: the TSC's rate and the base / maximum clock, 0 where unknown
        let leaf15 = (max_basic >= 0x15).then(|| reader.cpuid2(0x15, 0));
        let leaf16 = (max_basic >= 0x16).then(|| reader.cpuid2(0x16, 0));
        let mhz = |v: u32| Some(v & 0xffff).filter(|m| *m > 0);
        let tsc_hz = leaf15.and_then(|r| {
            (r.eax != 0 && r.ebx != 0 && r.ecx != 0)
                .then(|| r.ecx as u64 * r.ebx as u64 / r.eax as u64)
        });
        let cpuid = RawCpuId::with_cpuid_reader(reader);
        let mut info = CpuidInfo {
            base_mhz: leaf16.and_then(|r| mhz(r.eax)),
            max_mhz: leaf16.and_then(|r| mhz(r.ebx)),
            tsc_hz,
            vendor: cpuid.get_vendor_info().map(|v| v.as_str().to_string()),
            brand: cpuid
                .get_processor_brand_string()
                .map(|b| b.as_str().trim().to_string())
                .filter(|b| !b.is_empty()),
            hybrid: leaf7.edx & (1 << 15) != 0,
            ..CpuidInfo::default()
        };
        if let Some(f) = cpuid.get_feature_info() {
            info.family = Some(f.family_id() as u32);
            info.model = Some(f.model_id() as u32);
            info.stepping = Some(f.stepping_id() as u32);
        }
        if let Some(params) = cpuid.get_cache_parameters() {
            for p in params.take(16) {
                let cache_type = match p.cache_type() {
                    raw_cpuid::CacheType::Data => "data",
                    raw_cpuid::CacheType::Instruction => "instruction",
                    raw_cpuid::CacheType::Unified => "unified",
                    _ => continue,
                };
                let size = (p.associativity() as u64)
                    .saturating_mul(p.physical_line_partitions() as u64)
                    .saturating_mul(p.coherency_line_size() as u64)
                    .saturating_mul(p.sets() as u64);
                info.caches.push(CpuidCache {
                    level: p.level(),
                    cache_type: cache_type.to_string(),
                    size_bytes: size,
                    line_size_bytes: p.coherency_line_size() as u32,
                    ways: p.associativity() as u32,
                    sets: p.sets() as u32,
                    max_threads_sharing: p.max_cores_for_cache() as u32,
                });
            }
        }
        info.tlb = decode_tlb(&cpuid, &leaf2, leaf18.as_ref(), amd_leaves.as_ref());
        if let Some(ci) = cpuid.get_cache_info() {
            for d in ci {
                if matches!(
                    d.typ,
                    raw_cpuid::CacheInfoType::TLB
                        | raw_cpuid::CacheInfoType::DTLB
                        | raw_cpuid::CacheInfoType::STLB
                ) {
                    info.tlbs.push(d.desc().to_string());
                }
            }
        }
        if let Some(l1) = cpuid.get_l1_cache_and_tlb_info() {
            if l1.dtlb_4k_size() > 0 {
                info.tlbs.push(format!(
                    "L1 DTLB 4K: {} entries, {}; L1 ITLB 4K: {} entries, {}; L1 DTLB 2M/4M: {} entries; L1 ITLB 2M/4M: {} entries",
                    l1.dtlb_4k_size(),
                    l1.dtlb_4k_associativity(),
                    l1.itlb_4k_size(),
                    l1.itlb_4k_associativity(),
                    l1.dtlb_2m_4m_size(),
                    l1.itlb_2m_4m_size()
                ));
            }
        }
        if let Some(l2) = cpuid.get_l2_l3_cache_and_tlb_info() {
            if l2.dtlb_4k_size() > 0 {
                info.tlbs.push(format!(
                    "L2 DTLB 4K: {} entries, {}; L2 ITLB 4K: {} entries; L2 DTLB 2M/4M: {} entries",
                    l2.dtlb_4k_size(),
                    l2.dtlb_4k_associativity(),
                    l2.itlb_4k_size(),
                    l2.dtlb_2m_4m_size()
                ));
            }
        }
        info
    }

    /// The descriptor bytes of one leaf 2 reading (Intel SDM vol. 2A, CPUID leaf 2): every
    /// byte of a register whose bit 31 is clear, but AL (the repeat count); null bytes left
    /// out. raw-cpuid 11's iterator stops at the first byte missing from its own table (it
    /// lost the Xeon Gold 6252's STLB descriptor 0xC3), so the bytes are read here.
    pub fn leaf2_bytes(regs: [u32; 4]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, r) in regs.iter().enumerate() {
            if r & (1 << 31) != 0 {
                continue;
            }
            for (b, byte) in r.to_le_bytes().into_iter().enumerate() {
                if (i, b) != (0, 0) && byte != 0 {
                    out.push(byte);
                }
            }
        }
        out
    }

    /// The TLB geometry: leaf 2 descriptors (Intel), leaf 0x18 sub-leaves (Intel, where
    /// descriptor 0xFE or the leaf is there), and on AMD and Hygon 0x8000_0005/6/19. The AMD
    /// registers are decoded from their bits ([`super::super::tlb::amd_12bit`]): raw-cpuid 11
    /// reads the 12-bit 1 GiB entry counts of 0x8000_0019 into a u8.
    fn decode_tlb<R: CpuIdReader>(
        cpuid: &RawCpuId<R>,
        leaf2: &[[u32; 4]],
        leaf18: Option<&Vec<(u32, u32, u32, u32)>>,
        amd: Option<&[(u32, u32); 3]>,
    ) -> Vec<super::super::tlb::Tlb> {
        use super::super::tlb::{amd_12bit, amd_l1, leaf18_subleaf, leaf2_descriptor};
        let mut out = Vec::new();
        for byte in leaf2.iter().copied().flat_map(leaf2_bytes) {
            out.extend(leaf2_descriptor(byte));
        }
        for &(s, ebx, ecx, edx) in leaf18.into_iter().flatten() {
            out.extend(leaf18_subleaf(s, ebx, ecx, edx));
        }
        let vendor = cpuid.get_vendor_info();
        let is_amd = vendor
            .as_ref()
            .is_some_and(|v| matches!(v.as_str(), "AuthenticAMD" | "HygonGenuine"));
        if let (true, Some([l1, l2, g1])) = (is_amd, amd) {
            const K4: u64 = 4 << 10;
            const M2: u64 = 2 << 20;
            const G1: u64 = 1 << 30;
            out.extend(amd_l1(l1.0, l1.1));
            out.extend(amd_12bit(2, K4, l2.1, "cpuid 0x80000006 EBX"));
            out.extend(amd_12bit(2, M2, l2.0, "cpuid 0x80000006 EAX"));
            out.extend(amd_12bit(1, G1, g1.0, "cpuid 0x80000019 EAX"));
            out.extend(amd_12bit(2, G1, g1.1, "cpuid 0x80000019 EBX"));
        }
        out
    }

    /// Decodes the live CPU.
    pub fn probe_live() -> Probed<CpuidInfo> {
        let mut info = decode(raw_cpuid::CpuIdReaderNative);
        info.core_types = live_hybrid_core_types()
            .into_iter()
            .map(|(cpu, t)| (cpu, t.to_string()))
            .collect();
        Probed::Known(info)
    }

    /// Leaf 0x1A core type of the CPU the reader runs on: `Some("P-core ...")`/`Some("E-core ...")`.
    pub fn hybrid_core_type<R: CpuIdReader>(reader: &R) -> Option<&'static str> {
        if reader.cpuid2(0, 0).eax < 0x1a || reader.cpuid2(7, 0).edx & (1 << 15) == 0 {
            return None;
        }
        match reader.cpuid2(0x1a, 0).eax >> 24 {
            0x40 => Some("P-core (performance)"),
            0x20 => Some("E-core (efficiency)"),
            _ => None,
        }
    }

    /// Runs leaf 0x1A on every allowed CPU (a helper thread pinned to each in turn) on a
    /// hybrid part. Empty when the part is not hybrid or pinning is not available.
    pub fn live_hybrid_core_types() -> BTreeMap<CpuId, &'static str> {
        if hybrid_core_type(&raw_cpuid::CpuIdReaderNative).is_none() {
            return BTreeMap::new();
        }
        pinned_types()
    }

    #[cfg(feature = "sys")]
    fn pinned_types() -> BTreeMap<CpuId, &'static str> {
        use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
        use nix::unistd::Pid;
        std::thread::spawn(|| {
            let mut out = BTreeMap::new();
            let Ok(allowed) = sched_getaffinity(Pid::from_raw(0)) else {
                return out;
            };
            for cpu in 0..CpuSet::count() {
                if !allowed.is_set(cpu).unwrap_or(false) {
                    continue;
                }
                let mut one = CpuSet::new();
                if one.set(cpu).is_err() || sched_setaffinity(Pid::from_raw(0), &one).is_err() {
                    continue;
                }
                if let Some(t) = hybrid_core_type(&raw_cpuid::CpuIdReaderNative) {
                    out.insert(cpu as CpuId, t);
                }
            }
            out
        })
        .join()
        .unwrap_or_default()
    }

    #[cfg(not(feature = "sys"))]
    fn pinned_types() -> BTreeMap<CpuId, &'static str> {
        BTreeMap::new()
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub use imp::{decode, hybrid_core_type, live_hybrid_core_types, probe_live};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::cpu::x86::*;

/// Not x86: cpuid does not exist.
#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
pub fn probe_live() -> Probed<CpuidInfo> {
    Probed::Unknown(Unknown::NotOnThisPlatform {
        detail: format!(
            "cpuid is an x86 instruction; this is {}",
            std::env::consts::ARCH
        ),
    })
}

/// Not x86: no hybrid leaf.
#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
pub fn live_hybrid_core_types() -> BTreeMap<CpuId, &'static str> {
    BTreeMap::new()
}

#[cfg(all(test, any(target_arch = "x86", target_arch = "x86_64")))]
mod tests {
    use super::*;

    /// Registers of an i7-1370P P-core (leaf 0 max 0x20, leaf 7 EDX hybrid bit, leaf 0x1A
    /// core type 0x40) and of one of its E-cores (0x20).
    #[test]
    fn hybrid_leaf_from_a_dump() {
        let mut p = CpuidDump::default();
        p.0.insert((0, 0), [0x20, 0x756e_6547, 0x6c65_746e, 0x4965_6e69]);
        p.0.insert((7, 0), [0, 0, 0, 1 << 15]);
        p.0.insert((0x1a, 0), [0x4000_0001, 0, 0, 0]);
        assert_eq!(hybrid_core_type(&p), Some("P-core (performance)"));
        let mut e = p.clone();
        e.0.insert((0x1a, 0), [0x2000_0001, 0, 0, 0]);
        assert_eq!(hybrid_core_type(&e), Some("E-core (efficiency)"));
        let info = decode(e);
        assert!(info.hybrid);
        assert_eq!(info.vendor.as_deref(), Some("GenuineIntel"));
        // Not hybrid: no core types.
        let mut plain = p.clone();
        plain.0.insert((7, 0), [0, 0, 0, 0]);
        assert_eq!(hybrid_core_type(&plain), None);
    }

    /// Leaf 4 subleaf 0 of a 48 KiB, 12-way, 64-byte-line L1d (64 sets).
    #[test]
    fn cache_leaf_from_a_dump() {
        let mut d = CpuidDump::default();
        d.0.insert((0, 0), [0x20, 0x756e_6547, 0x6c65_746e, 0x4965_6e69]);
        // EAX: type 1 (data), level 1 (bits 7:5), sharing 1 (bits 25:14 = 1 -> 2 threads)
        d.0.insert((4, 0), [1 | (1 << 5) | (1 << 14), (11 << 22) | 63, 63, 0]);
        let info = decode(d);
        assert_eq!(info.caches.len(), 1);
        let c = &info.caches[0];
        assert_eq!(
            (c.level, c.size_bytes, c.ways, c.line_size_bytes),
            (1, 48 * 1024, 12, 64)
        );
        assert_eq!(c.max_threads_sharing, 2);
    }

    use crate::cpu::tlb::{load_reach_bytes, Tlb, TlbKind};

    const K4: u64 = 4 << 10;
    const M2: u64 = 2 << 20;
    const G1: u64 = 1 << 30;

    fn dump(regs: &[((u32, u32), [u32; 4])]) -> CpuidDump {
        CpuidDump(regs.iter().copied().collect())
    }

    fn find(t: &[Tlb], level: u8, kind: TlbKind, page: u64) -> Vec<(u32, String)> {
        t.iter()
            .filter(|x| x.level == level && x.kind == kind && x.page_sizes_bytes.contains(&page))
            .map(|x| (x.entries, x.associativity.clone()))
            .collect()
    }

    /// Xeon Gold 6252 (Cascade Lake), the registers of raw-cpuid's `xeon_gold_6252.rs` dump:
    /// leaf 2 descriptors 0x63 0x03 0x76 0xff 0xb5 0xf0 0xc3, no leaf 0x18 (max leaf 0x16).
    #[test]
    fn tlb_of_a_xeon_gold_6252_from_leaf_2() {
        let d = dump(&[
            ((0, 0), [0x16, 0x756e_6547, 0x6c65_746e, 0x4965_6e69]),
            ((2, 0), [0x7603_6301, 0x00f0_b5ff, 0, 0x00c3_0000]),
            ((0x8000_0000, 0), [0x8000_0008, 0, 0, 0]),
            ((0x8000_0006, 0), [0, 0, 0x0100_6040, 0]),
        ]);
        let t = decode(d).tlb;
        assert_eq!(t.len(), 7, "{t:#?}");
        assert_eq!(find(&t, 1, TlbKind::Data, K4), vec![(64, "4-way".into())]);
        assert_eq!(find(&t, 1, TlbKind::Data, M2), vec![(32, "4-way".into())]);
        assert_eq!(find(&t, 1, TlbKind::Data, G1), vec![(4, "4-way".into())]);
        assert_eq!(
            find(&t, 1, TlbKind::Instruction, K4),
            vec![(64, "8-way".into())]
        );
        assert_eq!(
            find(&t, 2, TlbKind::Unified, K4),
            vec![(1536, "6-way".into())]
        );
        // reach: 256 KiB (L1 DTLB), 6 MiB (STLB) with 4 KiB pages; 64 MiB / 3 GiB with 2 MiB
        assert_eq!(load_reach_bytes(&t, 1, K4), Some(256 << 10));
        assert_eq!(load_reach_bytes(&t, 2, K4), Some(6 << 20));
        assert_eq!(load_reach_bytes(&t, 1, M2), Some(64 << 20));
        assert_eq!(load_reach_bytes(&t, 2, M2), Some(3 << 30));
        assert_eq!(t[0].source, "cpuid leaf 2 descriptor 0x63");
    }

    /// Leaves 0x15 and 0x16 of raw-cpuid's dumps: the Xeon Gold 6252 (2.10 GHz base, 3.7 GHz
    /// turbo) leaves leaf 0x15's crystal 0 (no TSC figure, not guessed); the i7-12700K names
    /// a 38.4 MHz crystal x 188 / 2 = 3609.6 MHz TSC, base 3600 and maximum 5000 MHz.
    #[test]
    fn nominal_clock_leaves_of_a_xeon_gold_6252_and_an_i7_12700k() {
        let xeon = decode(dump(&[
            ((0, 0), [0x16, 0x756e_6547, 0x6c65_746e, 0x4965_6e69]),
            ((0x15, 0), [0x2, 0xa8, 0, 0]),
            ((0x16, 0), [0x834, 0xe74, 0x64, 0]),
        ]));
        assert_eq!(
            (xeon.base_mhz, xeon.max_mhz, xeon.tsc_hz),
            (Some(2100), Some(3700), None)
        );
        let alder = decode(dump(&[
            ((0, 0), [0x20, 0x756e_6547, 0x6c65_746e, 0x4965_6e69]),
            ((0x15, 0), [0x2, 0xbc, 0x0249_f000, 0]),
            ((0x16, 0), [0xe10, 0x1388, 0x64, 0]),
        ]));
        assert_eq!(
            (alder.base_mhz, alder.max_mhz, alder.tsc_hz),
            (Some(3600), Some(5000), Some(3_609_600_000))
        );
        // max leaf below 0x15 (the Ryzen 3600X's 0x10): neither is read
        let ryzen = decode(dump(&[(
            (0, 0),
            [0x10, 0x6874_7541, 0x444d_4163, 0x6974_6e65],
        )]));
        assert_eq!((ryzen.base_mhz, ryzen.tsc_hz), (None, None));
    }

    /// Core i7-12700K (Alder Lake, P-core), raw-cpuid's `i7_12700k.rs` dump: leaf 2 says 0xFE
    /// (TLBs in leaf 0x18), sub-leaves 1..8: ITLB 256 x 4K and 32 x 2M/4M, store-only 16 (all
    /// sizes), load-only 64 x 4K, 32 x 2M/4M and 8 x 1G, STLB 1024 x 4K/2M/4M and 1024 x 4K/1G.
    #[test]
    fn tlb_of_an_alder_lake_from_leaf_0x18() {
        let d = dump(&[
            ((0, 0), [0x20, 0x756e_6547, 0x6c65_746e, 0x4965_6e69]),
            ((2, 0), [0x00fe_ff01, 0x0000_00f0, 0, 0]),
            ((0x18, 0), [8, 0, 0, 0]),
            ((0x18, 1), [0, 0x0008_0001, 0x20, 0x4022]),
            ((0x18, 2), [0, 0x0008_0006, 0x04, 0x4022]),
            ((0x18, 3), [0, 0x0010_000f, 0x01, 0x4125]),
            ((0x18, 4), [0, 0x0004_0001, 0x10, 0x4024]),
            ((0x18, 5), [0, 0x0004_0006, 0x08, 0x4024]),
            ((0x18, 6), [0, 0x0008_0008, 0x01, 0x4124]),
            ((0x18, 7), [0, 0x0008_0007, 0x80, 0x4043]),
            ((0x18, 8), [0, 0x0008_0009, 0x80, 0x4043]),
            ((0x8000_0000, 0), [0x8000_0008, 0, 0, 0]),
        ]);
        let t = decode(d).tlb;
        assert_eq!(t.len(), 8, "{t:#?}");
        assert_eq!(
            find(&t, 1, TlbKind::Instruction, K4),
            vec![(256, "8-way".into())]
        );
        assert_eq!(
            find(&t, 1, TlbKind::StoreOnly, G1),
            vec![(16, "fully associative".into())]
        );
        assert_eq!(
            find(&t, 1, TlbKind::LoadOnly, K4),
            vec![(64, "4-way".into())]
        );
        assert_eq!(
            find(&t, 1, TlbKind::LoadOnly, G1),
            vec![(8, "fully associative".into())]
        );
        assert_eq!(
            find(&t, 2, TlbKind::Unified, K4),
            vec![(1024, "8-way".into()), (1024, "8-way".into())]
        );
        // loads: L1 64 x 4 KiB = 256 KiB (the store-only TLB is not counted); the STLB's two
        // structures hold 2048 4 KiB entries (8 MiB), 1024 2 MiB (2 GiB) and 1024 1 GiB
        assert_eq!(load_reach_bytes(&t, 1, K4), Some(256 << 10));
        assert_eq!(load_reach_bytes(&t, 2, K4), Some(8 << 20));
        assert_eq!(load_reach_bytes(&t, 2, M2), Some(2 << 30));
        assert_eq!(load_reach_bytes(&t, 2, G1), Some(1 << 40));
        assert_eq!(t[0].source, "cpuid leaf 0x18 sub-leaf 1");
    }

    /// Ryzen 5 3600X (Zen 2, Matisse), raw-cpuid's `ryzen_matisse.rs` dump: 0x8000_0005 L1
    /// DTLB/ITLB 64 x 4K and 64 x 2M fully associative, 0x8000_0006 L2 DTLB 2048 x 4K 8-way
    /// and 2048 x 2M 4-way, ITLB 1024 8-way, 0x8000_0019 L1 64 x 1G fully, no L2 1G.
    #[test]
    fn tlb_of_a_ryzen_3600x_from_the_amd_leaves() {
        let d = dump(&[
            ((0, 0), [0x10, 0x6874_7541, 0x444d_4163, 0x6974_6e65]),
            (
                (0x8000_0000, 0),
                [0x8000_0020, 0x6874_7541, 0x444d_4163, 0x6974_6e65],
            ),
            (
                (0x8000_0005, 0),
                [0xff40_ff40, 0xff40_ff40, 0x2008_0140, 0x2008_0140],
            ),
            (
                (0x8000_0006, 0),
                [0x4800_6400, 0x6800_6400, 0x0200_6140, 0x0100_9140],
            ),
            ((0x8000_0019, 0), [0xf040_f040, 0, 0, 0]),
        ]);
        let t = decode(d).tlb;
        assert_eq!(t.len(), 10, "{t:#?}");
        let full = || "fully associative".to_string();
        assert_eq!(find(&t, 1, TlbKind::Data, K4), vec![(64, full())]);
        assert_eq!(find(&t, 1, TlbKind::Data, M2), vec![(64, full())]);
        assert_eq!(find(&t, 1, TlbKind::Data, G1), vec![(64, full())]);
        assert_eq!(find(&t, 2, TlbKind::Data, K4), vec![(2048, "8-way".into())]);
        assert_eq!(find(&t, 2, TlbKind::Data, M2), vec![(2048, "4-way".into())]);
        assert_eq!(
            find(&t, 2, TlbKind::Instruction, K4),
            vec![(1024, "8-way".into())]
        );
        assert!(find(&t, 2, TlbKind::Data, G1).is_empty());
        assert_eq!(load_reach_bytes(&t, 1, K4), Some(256 << 10));
        assert_eq!(load_reach_bytes(&t, 2, K4), Some(8 << 20));
        assert_eq!(load_reach_bytes(&t, 2, M2), Some(4 << 30));
        assert_eq!(load_reach_bytes(&t, 1, G1), Some(64 << 30));
        assert_eq!(load_reach_bytes(&t, 2, G1), None);
    }
}

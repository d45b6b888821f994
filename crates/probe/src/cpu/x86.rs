//! x86 cpuid on the live machine, behind a seam: [`decode`] reads from any
//! [`raw_cpuid::CpuIdReader`], so a captured register dump ([`CpuidDump`]) of a named CPU is a
//! test; [`probe_live`] uses the real instruction. Only compiled with raw-cpuid on x86/x86_64;
//! elsewhere every function says "not on this platform".
//!
//! Leaves used: 0 (vendor), 1 (family/model/stepping), 4 / 0x8000_001D (deterministic cache
//! parameters: level, type, ways, line size, sets, threads sharing), 2 (Intel TLB descriptors),
//! 0x8000_0005/6 (AMD L1/L2 TLBs), 7 EDX bit 15 (hybrid part), 0x1A EAX[31:24] (core type of
//! the CPU the instruction runs on: 0x20 Atom/E-core, 0x40 Core/P-core; Intel SDM vol. 2A,
//! "CPUID—Hybrid Information Enumeration Leaf").

use std::collections::BTreeMap;

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
use hwsurvey_model::Unknown;
use hwsurvey_model::{CpuId, Probed};
use serde::{Deserialize, Serialize};

/// What cpuid says about the CPU the probe ran on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuidInfo {
    /// Leaf 0 vendor string (`GenuineIntel`, `AuthenticAMD`).
    pub vendor: Option<String>,
    /// Leaves 0x8000_0002-4 brand string.
    pub brand: Option<String>,
    /// Display family (base + extended).
    pub family: Option<u32>,
    /// Display model (base + extended).
    pub model: Option<u32>,
    /// Stepping.
    pub stepping: Option<u32>,
    /// Leaf 7 EDX bit 15: a hybrid part (P-cores and E-cores).
    pub hybrid: bool,
    /// Caches from the deterministic cache parameter leaf.
    pub caches: Vec<CpuidCache>,
    /// TLBs, as described by the CPU (Intel leaf 2 descriptors, AMD 0x8000_0005/6).
    pub tlbs: Vec<String>,
    /// Leaf 0x1A core type per OS CPU on a hybrid part (empty otherwise).
    pub core_types: BTreeMap<CpuId, String>,
}

/// One cache as cpuid leaf 4 / 0x8000_001D describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuidCache {
    /// Level.
    pub level: u8,
    /// `data`, `instruction`, `unified`.
    pub cache_type: String,
    /// ways x partitions x line size x sets, bytes.
    pub size_bytes: u64,
    /// Line size, bytes.
    pub line_size_bytes: u32,
    /// Ways of associativity.
    pub ways: u32,
    /// Sets.
    pub sets: u32,
    /// Maximum logical processors sharing this cache (EAX[25:14] + 1).
    pub max_threads_sharing: u32,
}

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

    /// Decodes what a cpuid reader returns.
    pub fn decode<R: CpuIdReader>(reader: R) -> CpuidInfo {
        let leaf7 = reader.cpuid2(7, 0);
        let cpuid = RawCpuId::with_cpuid_reader(reader);
        let mut info = CpuidInfo {
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
}

//! What x86 cpuid says about the CPU the probe ran on ([`CpuidInfo`]). The decoder and the live
//! reader are `hwsurvey_probe::cpu::x86` (`decode` reads from any `raw_cpuid::CpuIdReader`, so a
//! captured register dump of a named CPU is a test; `probe_live` uses the real instruction).
//!
//! Leaves used: 0 (vendor), 1 (family/model/stepping), 4 / 0x8000_001D (deterministic cache
//! parameters: level, type, ways, line size, sets, threads sharing), 2 (Intel TLB descriptors),
//! 0x8000_0005/6 (AMD L1/L2 TLBs), 7 EDX bit 15 (hybrid part), 0x1A EAX[31:24] (core type of
//! the CPU the instruction runs on: 0x20 Atom/E-core, 0x40 Core/P-core; Intel SDM vol. 2A,
//! "CPUID—Hybrid Information Enumeration Leaf"), 0x15 (TSC / crystal ratio) and 0x16 (base and
//! maximum MHz) for the nominal clock ([`super::nominal`]).

use hwsurvey_model::{CpuId, Probed, Unknown};

use super::tlb::Tlb;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// TLBs, as described by the CPU (Intel leaf 2 descriptors, AMD 0x8000_0005/6), as text.
    pub tlbs: Vec<String>,
    /// TLB geometry ([`super::tlb`]): Intel leaf 2 descriptors and leaf 0x18, AMD
    /// 0x8000_0005/6/19. Absent in documents written before it existed (read as empty).
    #[serde(default)]
    pub tlb: Vec<Tlb>,
    /// Leaf 0x1A core type per OS CPU on a hybrid part (empty otherwise).
    pub core_types: BTreeMap<CpuId, String>,
    /// Leaf 0x16 EAX: the processor base frequency, MHz (Intel Skylake and later); `None`
    /// where the leaf is absent or reads 0 (most hypervisors). Absent in older documents.
    #[serde(default)]
    pub base_mhz: Option<u32>,
    /// Leaf 0x16 EBX: the maximum frequency, MHz; `None` as [`CpuidInfo::base_mhz`].
    #[serde(default)]
    pub max_mhz: Option<u32>,
    /// Leaf 0x15: the TSC's rate, crystal Hz (ECX) x EBX / EAX, Hz; `None` where the leaf is
    /// absent or leaves the crystal or the ratio 0 (the SDM's per-model crystal table is
    /// not guessed).
    #[serde(default)]
    pub tsc_hz: Option<u64>,
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

/// The machine's TLBs: cpuid's on x86 (unknown with cpuid's reason when cpuid is, or when it
/// describes none: a hypervisor may hide leaf 2 and 0x8000_0005/6), unknown with
/// [`super::tlb::unknown_reason`] on every other architecture.
pub fn tlbs(arch: super::cpuinfo::Arch, cpuid: &Probed<CpuidInfo>) -> Probed<Vec<Tlb>> {
    use super::cpuinfo::Arch;
    if !matches!(arch, Arch::X86_64 | Arch::X86) {
        return Probed::Unknown(Unknown::NotOnThisPlatform {
            detail: super::tlb::unknown_reason(arch.as_str()),
        });
    }
    match cpuid {
        Probed::Known(c) if !c.tlb.is_empty() => Probed::Known(c.tlb.clone()),
        Probed::Known(_) => Probed::Unknown(Unknown::Other {
            detail: "cpuid describes no TLB (no leaf 2 TLB descriptor, no leaf 0x18, no \
                     0x80000005/6 TLB fields: a hypervisor may hide them)"
                .into(),
        }),
        Probed::Unknown(u) => Probed::Unknown(u.clone()),
    }
}

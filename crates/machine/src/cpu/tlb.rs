//! TLB geometry: each TLB's level, kind, page sizes and entries, and the reach they give
//! (entries x page size), from x86 cpuid (decoded in [`super::x86`]):
//!
//! - Intel leaf 2 one-byte descriptors ([`leaf2_descriptor`]: Intel SDM vol. 2A, CPUID, Table
//!   3-12 "Encoding of CPUID Leaf 2 Descriptors"); descriptor 0xFE sends to leaf 0x18;
//! - Intel leaf 0x18, deterministic address translation parameters: one sub-leaf per TLB
//!   structure (EBX page sizes and ways, ECX sets, EDX type, level, full associativity);
//! - AMD 0x8000_0005 (L1 TLBs, 4 KiB and 2 MiB), 0x8000_0006 (L2 TLBs, 4 KiB and 2 MiB) and
//!   0x8000_0019 (L1 and L2 TLBs of 1 GiB pages): AMD APM vol. 3, appendix E.4. AMD's 2M/4M
//!   fields count 2 MiB entries (a 4 MiB page takes two), so only 2 MiB is listed.
//!
//! arm64 has no interface that gives TLB geometry to user space: no system register readable
//! at EL0 describes it, and the kernel publishes none in sysfs (the TLB sizes are in each
//! core's technical reference manual only). sparc64 and e2k likewise: unknown, with the reason.

use hwsurvey_model::{Probed, Unknown};
use serde::{Deserialize, Serialize};

/// KiB, MiB, GiB in bytes.
const K: u64 = 1 << 10;
const M: u64 = 1 << 20;
const G: u64 = 1 << 30;

/// What a TLB translates for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TlbKind {
    /// Data loads and stores.
    Data,
    /// Instruction fetch.
    Instruction,
    /// Both (Intel's shared second-level TLB, STLB).
    Unified,
    /// Data loads only (Intel leaf 0x18 type 4).
    LoadOnly,
    /// Data stores only (Intel leaf 0x18 type 5).
    StoreOnly,
}

impl TlbKind {
    /// Whether a data load (a latency chase) goes through this TLB.
    pub fn serves_loads(self) -> bool {
        matches!(self, TlbKind::Data | TlbKind::Unified | TlbKind::LoadOnly)
    }

    /// Short word for people: `data`, `instruction`, `unified`, `load`, `store`.
    pub fn word(self) -> &'static str {
        match self {
            TlbKind::Data => "data",
            TlbKind::Instruction => "instruction",
            TlbKind::Unified => "unified",
            TlbKind::LoadOnly => "load",
            TlbKind::StoreOnly => "store",
        }
    }
}

/// One TLB structure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tlb {
    /// Level: 1 (first-level DTLB/ITLB, Intel's DTLB0/uTLB) or 2 (STLB, DTLB1, AMD L2).
    pub level: u8,
    /// What it translates for.
    pub kind: TlbKind,
    /// Page sizes it holds, bytes (4096, 2097152, 4194304, 1073741824).
    pub page_sizes_bytes: Vec<u64>,
    /// Entries.
    pub entries: u32,
    /// `N-way`, `fully associative`, or `ways not given`.
    pub associativity: String,
    /// Where it came from: `cpuid leaf 2 descriptor 0xc3`, `cpuid leaf 0x18 sub-leaf 7`,
    /// `cpuid 0x80000006 EBX`.
    pub source: String,
}

impl Tlb {
    /// Entries x `page` bytes when this TLB holds pages of that size.
    pub fn reach_bytes(&self, page: u64) -> Option<u64> {
        self.page_sizes_bytes
            .contains(&page)
            .then(|| u64::from(self.entries).saturating_mul(page))
    }
}

/// The reach of the TLBs at `level` that serve data loads, for pages of `page` bytes: the
/// sum over those structures (leaf 0x18 lists a level's entries in several sub-leaves, and a
/// load-only beside a data TLB would count twice: load-only and store-only structures are
/// counted, data structures too, but never a store-only one). `None` when none holds that
/// page size.
pub fn load_reach_bytes(tlbs: &[Tlb], level: u8, page: u64) -> Option<u64> {
    let v: Vec<u64> = tlbs
        .iter()
        .filter(|t| t.level == level && t.kind.serves_loads())
        .filter_map(|t| t.reach_bytes(page))
        .collect();
    (!v.is_empty()).then(|| v.iter().sum())
}

/// One row of the leaf 2 TLB descriptor table: (level, kind, page sizes, entries, ways;
/// 0 ways = fully associative, `u32::MAX` = not given).
type Row = (u8, TlbKind, &'static [u64], u32, u32);

const FULL: u32 = 0;
const NOT_GIVEN: u32 = u32::MAX;

/// The TLB structures a leaf 2 descriptor byte stands for (Intel SDM vol. 2A, Table 3-12);
/// empty for cache, prefetch and null descriptors and for bytes the table does not list.
/// "DTLB0" and "uTLB" are first-level, "DTLB1" and "STLB" second-level.
pub fn leaf2_descriptor(byte: u8) -> Vec<Tlb> {
    use TlbKind::{Data as D, Instruction as I, Unified as U};
    let rows: &[Row] = match byte {
        0x01 => &[(1, I, &[4 * K], 32, 4)],
        0x02 => &[(1, I, &[4 * M], 2, FULL)],
        0x03 => &[(1, D, &[4 * K], 64, 4)],
        0x04 => &[(1, D, &[4 * M], 8, 4)],
        0x05 => &[(2, D, &[4 * M], 32, 4)],
        0x0B => &[(1, I, &[4 * M], 4, 4)],
        0x4F => &[(1, I, &[4 * K], 32, NOT_GIVEN)],
        0x50 => &[(1, I, &[4 * K, 2 * M, 4 * M], 64, NOT_GIVEN)],
        0x51 => &[(1, I, &[4 * K, 2 * M, 4 * M], 128, NOT_GIVEN)],
        0x52 => &[(1, I, &[4 * K, 2 * M, 4 * M], 256, NOT_GIVEN)],
        0x55 => &[(1, I, &[2 * M, 4 * M], 7, FULL)],
        0x56 => &[(1, D, &[4 * M], 16, 4)],
        0x57 => &[(1, D, &[4 * K], 16, 4)],
        0x59 => &[(1, D, &[4 * K], 16, FULL)],
        0x5A => &[(1, D, &[2 * M, 4 * M], 32, 4)],
        0x5B => &[(1, D, &[4 * K, 4 * M], 64, NOT_GIVEN)],
        0x5C => &[(1, D, &[4 * K, 4 * M], 128, NOT_GIVEN)],
        0x5D => &[(1, D, &[4 * K, 4 * M], 256, NOT_GIVEN)],
        0x61 => &[(1, I, &[4 * K], 48, FULL)],
        0x63 => &[(1, D, &[2 * M, 4 * M], 32, 4), (1, D, &[G], 4, 4)],
        0x64 => &[(1, D, &[4 * K], 512, 4)],
        0x6A => &[(1, D, &[4 * K], 64, 8)],
        0x6B => &[(1, D, &[4 * K], 256, 8)],
        0x6C => &[(1, D, &[2 * M, 4 * M], 128, 8)],
        0x6D => &[(1, D, &[G], 16, FULL)],
        0x76 => &[(1, I, &[2 * M, 4 * M], 8, FULL)],
        0xA0 => &[(1, D, &[4 * K], 32, FULL)],
        0xB0 => &[(1, I, &[4 * K], 128, 4)],
        0xB1 => &[(1, I, &[2 * M], 8, 4)],
        0xB2 => &[(1, I, &[4 * K], 64, 4)],
        0xB3 => &[(1, D, &[4 * K], 128, 4)],
        0xB4 => &[(2, D, &[4 * K], 256, 4)],
        0xB5 => &[(1, I, &[4 * K], 64, 8)],
        0xB6 => &[(1, I, &[4 * K], 128, 8)],
        0xBA => &[(2, D, &[4 * K], 64, 4)],
        0xC0 => &[(1, D, &[4 * K, 4 * M], 8, 4)],
        0xC1 => &[(2, U, &[4 * K, 2 * M], 1024, 8)],
        0xC2 => &[(1, D, &[4 * K, 2 * M], 16, 4)],
        0xC3 => &[(2, U, &[4 * K, 2 * M], 1536, 6), (2, U, &[G], 16, 4)],
        0xC4 => &[(1, D, &[2 * M, 4 * M], 32, 4)],
        0xCA => &[(2, U, &[4 * K], 512, 4)],
        _ => &[],
    };
    rows.iter()
        .map(|&(level, kind, sizes, entries, ways)| Tlb {
            level,
            kind,
            page_sizes_bytes: sizes.to_vec(),
            entries,
            associativity: ways_word(ways),
            source: format!("cpuid leaf 2 descriptor {byte:#04x}"),
        })
        .collect()
}

fn ways_word(ways: u32) -> String {
    match ways {
        FULL => "fully associative".into(),
        NOT_GIVEN => "ways not given".into(),
        n => format!("{n}-way"),
    }
}

/// The TLB of one leaf 0x18 sub-leaf (EBX, ECX, EDX as the SDM gives them): `None` for an
/// invalid sub-leaf (EDX[4:0] = 0) or one without entries.
pub fn leaf18_subleaf(subleaf: u32, ebx: u32, ecx: u32, edx: u32) -> Option<Tlb> {
    let kind = match edx & 0x1f {
        1 => TlbKind::Data,
        2 => TlbKind::Instruction,
        3 => TlbKind::Unified,
        4 => TlbKind::LoadOnly,
        5 => TlbKind::StoreOnly,
        _ => return None,
    };
    let level = ((edx >> 5) & 0x7) as u8;
    let fully = edx & (1 << 8) != 0;
    let ways = ebx >> 16;
    let entries = ways.checked_mul(ecx)?;
    if entries == 0 {
        return None;
    }
    let page_sizes_bytes = [(0, 4 * K), (1, 2 * M), (2, 4 * M), (3, G)]
        .iter()
        .filter(|(bit, _)| ebx & (1 << bit) != 0)
        .map(|&(_, size)| size)
        .collect();
    Some(Tlb {
        level,
        kind,
        page_sizes_bytes,
        entries,
        associativity: if fully {
            ways_word(FULL)
        } else {
            ways_word(ways)
        },
        source: format!("cpuid leaf 0x18 sub-leaf {subleaf}"),
    })
}

/// AMD's 4-bit associativity code of 0x8000_0006 and 0x8000_0019 (APM vol. 3, E.4.6):
/// `None` for disabled (0) and reserved codes.
fn amd_l2_ways(code: u32) -> Option<String> {
    let ways = match code {
        0x1 => 1,
        0x2 => 2,
        0x3 => 3,
        0x4 => 4,
        0x5 => 6,
        0x6 => 8,
        0x8 => 16,
        0xA => 32,
        0xB => 48,
        0xC => 64,
        0xD => 96,
        0xE => 128,
        0xF => FULL,
        _ => return None,
    };
    Some(ways_word(ways))
}

/// AMD's 8-bit L1 associativity of 0x8000_0005: 0xFF fully associative, else N-way; `None`
/// for 0 (reserved).
fn amd_l1_ways(code: u32) -> Option<String> {
    match code {
        0 => None,
        0xFF => Some(ways_word(FULL)),
        n => Some(ways_word(n)),
    }
}

fn amd(
    level: u8,
    kind: TlbKind,
    page: u64,
    entries: u32,
    assoc: Option<String>,
    source: String,
) -> Option<Tlb> {
    (entries > 0).then(|| Tlb {
        level,
        kind,
        page_sizes_bytes: vec![page],
        entries,
        associativity: assoc.unwrap_or_else(|| "ways not given".into()),
        source,
    })
}

/// The TLBs of AMD 0x8000_0005 EAX (2 MiB) and EBX (4 KiB): data in bits 31:16 (ways
/// 31:24, entries 23:16), instruction in 15:0.
pub fn amd_l1(eax: u32, ebx: u32) -> Vec<Tlb> {
    let mut out = Vec::new();
    for (reg, name, page) in [(ebx, "EBX", 4 * K), (eax, "EAX", 2 * M)] {
        for (kind, shift) in [(TlbKind::Data, 16), (TlbKind::Instruction, 0)] {
            let half = reg >> shift;
            out.extend(amd(
                1,
                kind,
                page,
                half & 0xff,
                amd_l1_ways((half >> 8) & 0xff),
                format!("cpuid 0x80000005 {name}"),
            ));
        }
    }
    out
}

/// The TLBs of a 0x8000_0006 / 0x8000_0019 register: data in bits 31:16 (ways 31:28,
/// entries 27:16), instruction in 15:0 (ways 15:12, entries 11:0).
pub fn amd_12bit(level: u8, page: u64, reg: u32, source: &str) -> Vec<Tlb> {
    let mut out = Vec::new();
    for (kind, shift) in [(TlbKind::Data, 16), (TlbKind::Instruction, 0)] {
        let half = reg >> shift;
        out.extend(amd(
            level,
            kind,
            page,
            half & 0xfff,
            amd_l2_ways((half >> 12) & 0xf),
            source.to_string(),
        ));
    }
    out
}

/// What a machine document written before the TLB geometry existed reads as.
pub fn not_recorded() -> Probed<Vec<Tlb>> {
    Probed::Unknown(Unknown::Other {
        detail: "not recorded (the document predates the TLB geometry)".into(),
    })
}

/// Why the TLB geometry is unknown on an architecture without cpuid.
pub fn unknown_reason(arch: &str) -> String {
    match arch {
        "aarch64" | "arm" => "arm64 does not expose TLB geometry: no system register readable at EL0 describes the TLBs, and the kernel publishes none in sysfs (the sizes are in each core's technical reference manual)".into(),
        other => format!("{other} has no interface that gives TLB geometry to user space or sysfs"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Skylake-SP / Cascade Lake's STLB, descriptor 0xC3: 1536 4 KiB entries reach 6 MiB
    /// (the seed story's figure), 16 1 GiB entries 16 GiB.
    #[test]
    fn descriptor_c3_is_skylakes_stlb() {
        let t = leaf2_descriptor(0xC3);
        assert_eq!(t.len(), 2);
        assert_eq!(load_reach_bytes(&t, 2, 4 * K), Some(6 * M));
        assert_eq!(load_reach_bytes(&t, 2, 2 * M), Some(3 * G));
        assert_eq!(load_reach_bytes(&t, 2, G), Some(16 * G));
        assert_eq!(t[0].associativity, "6-way");
        assert!(leaf2_descriptor(0xFF).is_empty() && leaf2_descriptor(0xF0).is_empty());
    }

    /// AMD codes: 0x6 is 8-way, 0x5 6-way, 0xF fully associative, 0 disabled.
    #[test]
    fn amd_associativity_codes() {
        assert_eq!(amd_l2_ways(6).as_deref(), Some("8-way"));
        assert_eq!(amd_l2_ways(5).as_deref(), Some("6-way"));
        assert_eq!(amd_l2_ways(0xF).as_deref(), Some("fully associative"));
        assert_eq!(amd_l2_ways(0), None);
        assert_eq!(amd_l1_ways(0xFF).as_deref(), Some("fully associative"));
    }
}

//! aarch64 Main ID Register (MIDR_EL1) decoding: implementer and part number to a core name.
//!
//! Sources: the `CPU implementer` / `CPU part` lines of /proc/cpuinfo (or
//! `/sys/devices/system/cpu/cpuN/regs/identification/midr_el1`), Arm's Technical Reference
//! Manuals (MIDR_EL1 field "PartNum"), and the vendor tables util-linux carries in
//! `sys-utils/lscpu-arm.c`.

use serde::{Deserialize, Serialize};

/// The identifying fields of one CPU's MIDR_EL1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Midr {
    /// Bits 31:24, e.g. 0x41 Arm, 0x48 HiSilicon.
    pub implementer: u32,
    /// Bits 23:20.
    pub variant: u32,
    /// Bits 15:4, e.g. 0xd0c Neoverse N1.
    pub part: u32,
    /// Bits 3:0.
    pub revision: u32,
}

impl Midr {
    /// Decodes a raw MIDR_EL1 value (as in `regs/identification/midr_el1`, e.g. `0x411fd461`).
    pub fn from_raw(raw: u64) -> Midr {
        Midr {
            implementer: ((raw >> 24) & 0xff) as u32,
            variant: ((raw >> 20) & 0xf) as u32,
            part: ((raw >> 4) & 0xfff) as u32,
            revision: (raw & 0xf) as u32,
        }
    }

    /// `r<variant>p<revision>`, Arm's way of writing a core revision.
    pub fn revision_string(&self) -> String {
        format!("r{}p{}", self.variant, self.revision)
    }

    /// The core's name, e.g. "ARM Cortex-A710", "HiSilicon Kunpeng 920 (TaiShan v110)", or
    /// `None` for a part this table does not know.
    pub fn name(&self) -> Option<String> {
        let vendor = implementer_name(self.implementer)?;
        let part = part_name(self.implementer, self.part)?;
        Some(format!("{vendor} {part}"))
    }

    /// A name for people: [`Midr::name`], or the raw implementer and part when unknown.
    pub fn display_name(&self) -> String {
        self.name().unwrap_or_else(|| {
            format!(
                "{} part 0x{:03x}",
                implementer_name(self.implementer)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("implementer 0x{:02x}", self.implementer)),
                self.part
            )
        })
    }
}

/// The vendor behind an implementer code.
pub fn implementer_name(implementer: u32) -> Option<&'static str> {
    Some(match implementer {
        0x41 => "ARM",
        0x42 => "Broadcom",
        0x43 => "Cavium",
        0x46 => "Fujitsu",
        0x48 => "HiSilicon",
        0x4e => "NVIDIA",
        0x50 => "APM",
        0x51 => "Qualcomm",
        0x61 => "Apple",
        0x6d => "Microsoft",
        0xc0 => "Ampere",
        _ => return None,
    })
}

/// The core behind an (implementer, part) pair. Where a core is best known by the server
/// part built from it, that part is named in parentheses.
pub fn part_name(implementer: u32, part: u32) -> Option<&'static str> {
    Some(match (implementer, part) {
        (0x41, 0xd03) => "Cortex-A53",
        (0x41, 0xd04) => "Cortex-A35",
        (0x41, 0xd05) => "Cortex-A55",
        (0x41, 0xd07) => "Cortex-A57",
        (0x41, 0xd08) => "Cortex-A72 (AWS Graviton)",
        (0x41, 0xd09) => "Cortex-A73",
        (0x41, 0xd0a) => "Cortex-A75",
        (0x41, 0xd0b) => "Cortex-A76",
        (0x41, 0xd0c) => "Neoverse-N1 (Ampere Altra, AWS Graviton2)",
        (0x41, 0xd0d) => "Cortex-A77",
        (0x41, 0xd40) => "Neoverse-V1 (AWS Graviton3)",
        (0x41, 0xd41) => "Cortex-A78",
        (0x41, 0xd44) => "Cortex-X1",
        (0x41, 0xd46) => "Cortex-A510",
        (0x41, 0xd47) => "Cortex-A710",
        (0x41, 0xd48) => "Cortex-X2",
        (0x41, 0xd49) => "Neoverse-N2",
        (0x41, 0xd4a) => "Neoverse-E1",
        (0x41, 0xd4b) => "Cortex-A78C",
        (0x41, 0xd4d) => "Cortex-A715",
        (0x41, 0xd4e) => "Cortex-X3",
        (0x41, 0xd4f) => "Neoverse-V2 (AWS Graviton4, NVIDIA Grace)",
        (0x41, 0xd80) => "Cortex-A520",
        (0x41, 0xd81) => "Cortex-A720",
        (0x41, 0xd82) => "Cortex-X4",
        (0x41, 0xd84) => "Neoverse-V3",
        (0x41, 0xd8e) => "Neoverse-N3",
        (0x42, 0x516) => "ThunderX2 (Vulcan)",
        (0x43, 0x0a1) => "ThunderX 88XX",
        (0x43, 0x0a2) => "ThunderX 81XX",
        (0x43, 0x0a3) => "ThunderX 83XX",
        (0x43, 0x0af) => "ThunderX2 99xx",
        (0x43, 0x0b8) => "ThunderX3 T110",
        (0x46, 0x001) => "A64FX",
        (0x48, 0xd01) => "Kunpeng 920 (TaiShan v110)",
        (0x48, 0xd02) => "Kunpeng 930 (TaiShan v120)",
        (0x4e, 0x004) => "Carmel",
        (0x50, 0x000) => "X-Gene",
        (0x51, 0xc00) => "Falkor",
        (0x51, 0x800) => "Kryo 2xx Gold",
        (0x51, 0x801) => "Kryo 2xx Silver",
        (0xc0, 0xac3) => "Ampere-1",
        (0xc0, 0xac4) => "Ampere-1a",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_fixture_parts() {
        let m = |i, p| Midr {
            implementer: i,
            variant: 0,
            part: p,
            revision: 0,
        };
        assert_eq!(
            m(0x48, 0xd01).name().unwrap(),
            "HiSilicon Kunpeng 920 (TaiShan v110)"
        );
        assert_eq!(m(0x43, 0x0af).name().unwrap(), "Cavium ThunderX2 99xx");
        assert_eq!(m(0x46, 0x001).name().unwrap(), "Fujitsu A64FX");
        assert!(m(0x41, 0xd0c).name().unwrap().contains("Neoverse-N1"));
        assert!(m(0x41, 0xd49).name().unwrap().contains("Neoverse-N2"));
        assert!(m(0x41, 0xd40).name().unwrap().contains("Neoverse-V1"));
        assert!(m(0x41, 0xd4f).name().unwrap().contains("Neoverse-V2"));
        assert_eq!(m(0x41, 0xd03).name().unwrap(), "ARM Cortex-A53");
        assert_eq!(m(0x41, 0xd09).name().unwrap(), "ARM Cortex-A73");
        assert_eq!(m(0x41, 0xd46).name().unwrap(), "ARM Cortex-A510");
        assert_eq!(m(0x41, 0xd47).name().unwrap(), "ARM Cortex-A710");
        assert_eq!(m(0x41, 0xd4d).name().unwrap(), "ARM Cortex-A715");
        assert_eq!(m(0x41, 0xd4e).name().unwrap(), "ARM Cortex-X3");
        assert_eq!(m(0x99, 0x123).name(), None);
        assert_eq!(m(0x99, 0x123).display_name(), "implementer 0x99 part 0x123");
        let raw = Midr::from_raw(0x411f_d461);
        assert_eq!(
            (raw.implementer, raw.variant, raw.part, raw.revision),
            (0x41, 1, 0xd46, 1)
        );
    }
}

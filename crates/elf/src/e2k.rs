//! Elbrus (e2k, `EM_MCST_ELBRUS` = 175) `e_flags`: bits 24-31 hold the machine code the file
//! was compiled for, the low bits hold flags.
//!
//! Source: MCST's binutils `include/elf/e2k.h` (`EF_E2K_*`, `E_E2K_MACH_*`), the same values
//! the `object` crate exports. Codes 2..=7 are `-march=elbrus-v2`..`v7`; 19..=25 are the
//! `-mtune` codes of named processors.

use std::fmt;

/// Mask of the machine code in `e_flags` (bits 24-31).
pub const MACHINE_CODE_SHIFT: u32 = 24;
/// `EF_E2K_IPD`: instruction prefetch depth, a 2-bit field (bits 0-1).
pub const EF_E2K_IPD: u32 = 0x3;
/// `EF_E2K_X86APP`: x86 application (binary compiler).
pub const EF_E2K_X86APP: u32 = 0x4;
/// `EF_E2K_4MB_PAGES`: code built for 4 MB pages.
pub const EF_E2K_4MB_PAGES: u32 = 0x8;
/// `EF_E2K_INCOMPAT`: incompatible with other Elbrus generations.
pub const EF_E2K_INCOMPAT: u32 = 0x10;
/// `EF_E2K_PM`: protected mode (128-bit descriptors as pointers); such a file does not run as
/// an ordinary 64-bit Linux process.
pub const EF_E2K_PM: u32 = 0x20;
/// `EF_E2K_PACK_SEGMENTS`: packed segments.
pub const EF_E2K_PACK_SEGMENTS: u32 = 0x40;

/// The machine code of an e2k `e_flags` (bits 24-31).
pub fn machine_code(e_flags: u32) -> u8 {
    (e_flags >> MACHINE_CODE_SHIFT) as u8
}

/// The compiler option a machine code stands for (`elbrus-v4`, `elbrus-8c`, ...), or `None`
/// for a code MCST has not assigned.
pub fn machine_code_name(code: u8) -> Option<&'static str> {
    Some(match code {
        0 => "generic (legacy)",
        1 => "elbrus-v1 (legacy)",
        2 => "elbrus-v2",
        3 => "elbrus-v3",
        4 => "elbrus-v4",
        5 => "elbrus-v5",
        6 => "elbrus-v6",
        7 => "elbrus-v7",
        19 => "elbrus-8c",
        20 => "elbrus-1c+",
        21 => "elbrus-12c",
        22 => "elbrus-16c",
        23 => "elbrus-2c3",
        24 => "elbrus-48c",
        25 => "elbrus-8v7",
        _ => return None,
    })
}

/// The decoded `e_flags` of an e2k file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct E2kFlags {
    /// The raw `e_flags` word.
    pub e_flags: u32,
}

impl E2kFlags {
    /// Machine code, bits 24-31.
    pub fn machine_code(self) -> u8 {
        machine_code(self.e_flags)
    }

    /// Whether the protected-mode bit (`EF_E2K_PM`, 0x20) is set.
    pub fn protected_mode(self) -> bool {
        self.e_flags & EF_E2K_PM != 0
    }

    /// The names of the flags set in bits 0-23.
    pub fn flag_names(self) -> Vec<String> {
        let mut names = Vec::new();
        let ipd = self.e_flags & EF_E2K_IPD;
        if ipd != 0 {
            names.push(format!("EF_E2K_IPD={ipd}"));
        }
        for (bit, name) in [
            (EF_E2K_X86APP, "EF_E2K_X86APP"),
            (EF_E2K_4MB_PAGES, "EF_E2K_4MB_PAGES"),
            (EF_E2K_INCOMPAT, "EF_E2K_INCOMPAT"),
            (EF_E2K_PM, "EF_E2K_PM (protected mode)"),
            (EF_E2K_PACK_SEGMENTS, "EF_E2K_PACK_SEGMENTS"),
        ] {
            if self.e_flags & bit != 0 {
                names.push(name.to_owned());
            }
        }
        let unknown = self.e_flags & 0x00ff_ff80;
        if unknown != 0 {
            names.push(format!("unknown bits {unknown:#x}"));
        }
        names
    }
}

impl fmt::Display for E2kFlags {
    /// `machine code 4 (elbrus-v4), flags: none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = self.machine_code();
        match machine_code_name(code) {
            Some(name) => write!(f, "machine code {code} ({name})")?,
            None => write!(f, "machine code {code} (unassigned)")?,
        }
        let flags = self.flag_names();
        if flags.is_empty() {
            write!(f, ", flags: none")
        } else {
            write!(f, ", flags: {}", flags.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_elbrus_v4_without_flags() {
        let flags = E2kFlags {
            e_flags: 0x0400_0000,
        };
        assert_eq!(flags.machine_code(), 4);
        assert!(!flags.protected_mode());
        assert_eq!(flags.to_string(), "machine code 4 (elbrus-v4), flags: none");
    }

    #[test]
    fn decodes_16c_with_protected_mode() {
        let flags = E2kFlags {
            e_flags: 0x1600_0020,
        };
        assert_eq!(flags.machine_code(), 22);
        assert!(flags.protected_mode());
        assert_eq!(
            flags.to_string(),
            "machine code 22 (elbrus-16c), flags: EF_E2K_PM (protected mode)"
        );
    }

    #[test]
    fn names_unassigned_codes_and_bits() {
        let flags = E2kFlags {
            e_flags: 0x0a00_0101,
        };
        assert_eq!(
            flags.to_string(),
            "machine code 10 (unassigned), flags: EF_E2K_IPD=1, unknown bits 0x100"
        );
    }
}

//! Names of ELF `e_machine` values (System V ABI, "ELF Header", `e_machine`; numbers as
//! registered in the ELF psABI registry and listed in glibc's `elf.h`).

use std::fmt;

/// An `e_machine` value with the name hwsurvey prints for it.
///
/// Known names: `i386` (3), `SPARC` (2), `arm` (40), `SPARC32PLUS` (18), `PowerPC` (20),
/// `PowerPC64` (21), `S390` (22), `SPARCV9` (43), `x86_64` (62), `aarch64` (183),
/// `RISC-V` (243), `LoongArch` (258), `EM_MCST_ELBRUS` (175). Any other number displays as
/// `unknown machine N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Machine(pub u16);

impl Machine {
    /// `EM_386`: Intel 80386 (32-bit x86).
    pub const I386: Machine = Machine(3);
    /// `EM_ARM`: 32-bit Arm.
    pub const ARM: Machine = Machine(40);
    /// `EM_SPARCV9`: 64-bit SPARC (sparc64).
    pub const SPARCV9: Machine = Machine(43);
    /// `EM_X86_64`: AMD64 / Intel 64.
    pub const X86_64: Machine = Machine(62);
    /// `EM_MCST_ELBRUS`: MCST Elbrus (e2k).
    pub const MCST_ELBRUS: Machine = Machine(175);
    /// `EM_AARCH64`: 64-bit Arm.
    pub const AARCH64: Machine = Machine(183);

    /// The `e_machine` number.
    pub fn number(self) -> u16 {
        self.0
    }

    /// The name hwsurvey prints, or `None` when the number is not one it knows.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            2 => "SPARC",
            3 => "i386",
            8 => "MIPS",
            18 => "SPARC32PLUS",
            20 => "PowerPC",
            21 => "PowerPC64",
            22 => "S390",
            40 => "arm",
            43 => "SPARCV9",
            62 => "x86_64",
            175 => "EM_MCST_ELBRUS",
            183 => "aarch64",
            243 => "RISC-V",
            258 => "LoongArch",
            _ => return None,
        })
    }
}

impl fmt::Display for Machine {
    /// `x86_64 (62)`, or `unknown machine N` for a number without a name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.0),
            None => write!(f, "unknown machine {}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_required_machines_with_their_numbers() {
        assert_eq!(Machine(62).to_string(), "x86_64 (62)");
        assert_eq!(Machine(183).to_string(), "aarch64 (183)");
        assert_eq!(Machine(43).to_string(), "SPARCV9 (43)");
        assert_eq!(Machine(175).to_string(), "EM_MCST_ELBRUS (175)");
        assert_eq!(Machine(3).to_string(), "i386 (3)");
        assert_eq!(Machine(40).to_string(), "arm (40)");
    }

    #[test]
    fn unknown_numbers_are_said_to_be_unknown() {
        assert_eq!(Machine(4242).to_string(), "unknown machine 4242");
        assert_eq!(Machine(0).to_string(), "unknown machine 0");
        assert_eq!(Machine(4242).name(), None);
    }
}

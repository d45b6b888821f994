//! Names of ELF `e_machine` values (System V ABI, "ELF Header", `e_machine`; numbers as
//! registered in the ELF psABI registry and listed in glibc's `elf.h`).

use std::fmt;

use crate::ident::Endianness;
use crate::ident::Endianness::{Big, Little};

/// An `e_machine` value with the name hwsurvey prints for it.
///
/// Names come from the one table, [`MACHINES`]. Any other number displays as
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

    /// The name hwsurvey prints (the `name` of its row in [`MACHINES`]), or `None` when the
    /// number is not one it knows.
    pub fn name(self) -> Option<&'static str> {
        self.info().map(|m| m.name)
    }

    /// The first row of [`MACHINES`] for this number (PowerPC64 has a big- and a
    /// little-endian row; both carry the same name and bits).
    pub fn info(self) -> Option<&'static MachineInfo> {
        MACHINES.iter().find(|m| m.e_machine == self.0)
    }
}

/// One row of the ELF machine table: an `e_machine` value, its ELF class and byte order as
/// Linux runs it, the kernel machines (`uname -m`) that run it natively, and the 32-bit (or
/// other-ABI) `e_machine` values a kernel of that machine also runs (compat mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachineInfo {
    /// The `e_machine` number (`EM_X86_64` = 62).
    pub e_machine: u16,
    /// The name hwsurvey prints everywhere (`x86_64`, `SPARCV9`).
    pub name: &'static str,
    /// The ELF class of a native binary: 32 or 64.
    pub bits: u8,
    /// Byte order of a native binary on Linux.
    pub endianness: Endianness,
    /// `uname -m` values of kernels that run it natively; a trailing `*` matches a prefix
    /// (`armv*`: armv7l, armv6l).
    pub kernel_machines: &'static [&'static str],
    /// `e_machine` values of 32-bit (ELF32) binaries such a kernel runs in compat mode
    /// (i386 and x32 on x86_64, arm on aarch64, SPARC and SPARC32PLUS on sparc64, ...).
    pub compat_e_machines: &'static [u16],
}

impl MachineInfo {
    /// The row whose `kernel_machines` contain a `uname -m` value (`x86_64`, `armv7l`).
    pub fn for_kernel(kernel_machine: &str) -> Option<&'static MachineInfo> {
        MACHINES.iter().find(|m| {
            m.kernel_machines.iter().any(|k| match k.strip_suffix('*') {
                Some(prefix) => kernel_machine.starts_with(prefix),
                None => *k == kernel_machine,
            })
        })
    }

    /// True when a binary of this class and `e_machine` is this row's native binary.
    pub fn is_native(&self, class_bits: u8, e_machine: u16) -> bool {
        class_bits == self.bits && e_machine == self.e_machine
    }

    /// True when a kernel of this row runs a binary of this class and `e_machine` in compat
    /// mode: a 64-bit kernel, a 32-bit binary, an `e_machine` in `compat_e_machines`.
    pub fn runs_in_compat(&self, class_bits: u8, e_machine: u16) -> bool {
        self.bits == 64 && class_bits == 32 && self.compat_e_machines.contains(&e_machine)
    }
}

/// The one ELF machine table of hwsurvey (numbers from glibc's `elf.h`; compat from the
/// kernel's `CONFIG_COMPAT` / `CONFIG_X86_X32_ABI` support per architecture).
pub const MACHINES: &[MachineInfo] = &[
    row(62, "x86_64", 64, Little, &["x86_64", "amd64"], &[3, 62]),
    row(
        3,
        "i386",
        32,
        Little,
        &["i386", "i486", "i586", "i686"],
        &[],
    ),
    row(183, "aarch64", 64, Little, &["aarch64", "arm64"], &[40]),
    row(40, "arm", 32, Little, &["armv*"], &[]),
    row(43, "SPARCV9", 64, Big, &["sparc64"], &[2, 18]),
    row(2, "SPARC", 32, Big, &["sparc"], &[]),
    row(18, "SPARC32PLUS", 32, Big, &[], &[]),
    row(175, "EM_MCST_ELBRUS", 64, Little, &["e2k"], &[175]),
    row(21, "PowerPC64", 64, Big, &["ppc64"], &[20]),
    row(21, "PowerPC64", 64, Little, &["ppc64le"], &[]),
    row(20, "PowerPC", 32, Big, &["ppc"], &[]),
    row(22, "S390", 64, Big, &["s390x"], &[22]),
    row(243, "RISC-V", 64, Little, &["riscv64"], &[]),
    row(258, "LoongArch", 64, Little, &["loongarch64"], &[]),
    row(8, "MIPS", 32, Big, &["mips"], &[]),
];

const fn row(
    e_machine: u16,
    name: &'static str,
    bits: u8,
    endianness: Endianness,
    kernel_machines: &'static [&'static str],
    compat_e_machines: &'static [u16],
) -> MachineInfo {
    MachineInfo {
        e_machine,
        name,
        bits,
        endianness,
        kernel_machines,
        compat_e_machines,
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
    fn table_holds_the_elf_h_numbers() {
        // glibc elf.h: EM_SPARC 2, EM_386 3, EM_SPARC32PLUS 18, EM_PPC 20, EM_PPC64 21,
        // EM_S390 22, EM_ARM 40, EM_SPARCV9 43, EM_X86_64 62, EM_MCST_ELBRUS 175,
        // EM_AARCH64 183, EM_RISCV 243, EM_LOONGARCH 258.
        let k = |m| MachineInfo::for_kernel(m).map(|i| (i.e_machine, i.bits, i.endianness));
        assert_eq!(k("x86_64"), Some((62, 64, Endianness::Little)));
        assert_eq!(k("aarch64"), Some((183, 64, Endianness::Little)));
        assert_eq!(k("sparc64"), Some((43, 64, Endianness::Big)));
        assert_eq!(k("e2k"), Some((175, 64, Endianness::Little)));
        assert_eq!(k("i686"), Some((3, 32, Endianness::Little)));
        assert_eq!(k("armv7l"), Some((40, 32, Endianness::Little)));
        assert_eq!(k("sparc"), Some((2, 32, Endianness::Big)));
        assert_eq!(k("ppc64"), Some((21, 64, Endianness::Big)));
        assert_eq!(k("ppc64le"), Some((21, 64, Endianness::Little)));
        assert_eq!(k("s390x"), Some((22, 64, Endianness::Big)));
        assert_eq!(k("riscv64"), Some((243, 64, Endianness::Little)));
        assert_eq!(k("loongarch64"), Some((258, 64, Endianness::Little)));
        assert_eq!(k("vax"), None);
        assert_eq!(Machine(18).name(), Some("SPARC32PLUS"));
        assert_eq!(Machine(20).name(), Some("PowerPC"));
        assert_eq!(Machine(2).name(), Some("SPARC"));
    }

    #[test]
    fn compat_is_32_bit_on_a_64_bit_kernel_of_the_family() {
        let x86 = MachineInfo::for_kernel("x86_64").unwrap();
        assert!(x86.is_native(64, 62));
        assert!(x86.runs_in_compat(32, 3)); // i386
        assert!(x86.runs_in_compat(32, 62)); // x32
        assert!(!x86.runs_in_compat(64, 3));
        assert!(!x86.runs_in_compat(32, 40));
        let sparc = MachineInfo::for_kernel("sparc64").unwrap();
        assert!(sparc.runs_in_compat(32, 2) && sparc.runs_in_compat(32, 18));
        assert!(MachineInfo::for_kernel("aarch64")
            .unwrap()
            .runs_in_compat(32, 40));
        assert!(MachineInfo::for_kernel("e2k")
            .unwrap()
            .runs_in_compat(32, 175));
        // a 32-bit kernel has no compat mode
        assert!(!MachineInfo::for_kernel("i686")
            .unwrap()
            .runs_in_compat(32, 3));
        // every row's kernel machines lead back to a row with its number and bits
        for m in MACHINES {
            for k in m.kernel_machines {
                let back = MachineInfo::for_kernel(&k.replace('*', "7l")).unwrap();
                assert_eq!((back.e_machine, back.bits), (m.e_machine, m.bits), "{k}");
            }
        }
    }

    #[test]
    fn unknown_numbers_are_said_to_be_unknown() {
        assert_eq!(Machine(4242).to_string(), "unknown machine 4242");
        assert_eq!(Machine(0).to_string(), "unknown machine 0");
        assert_eq!(Machine(4242).name(), None);
    }
}

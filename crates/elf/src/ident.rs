//! The identification bytes every ELF file starts with (`e_ident`): its class and byte order
//! (System V ABI, "ELF Identification"). Shared by the header reader ([`crate::inspect`]) and
//! the machine table ([`crate::machine`]).

use std::fmt;

/// ELF class (`e_ident[EI_CLASS]`): the width of addresses and of the file's own structures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Class {
    /// `ELFCLASS32` (1).
    #[serde(rename = "ELF32")]
    Elf32,
    /// `ELFCLASS64` (2).
    #[serde(rename = "ELF64")]
    Elf64,
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Class::Elf32 => "ELF32",
            Class::Elf64 => "ELF64",
        })
    }
}

/// Byte order (`e_ident[EI_DATA]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Endianness {
    /// `ELFDATA2LSB` (1): little-endian (x86_64, aarch64 as run on Linux, e2k).
    Little,
    /// `ELFDATA2MSB` (2): big-endian (sparc64).
    Big,
}

impl fmt::Display for Endianness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Endianness::Little => "little-endian",
            Endianness::Big => "big-endian",
        })
    }
}

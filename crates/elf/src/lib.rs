//! ELF inspection (with goblin) and target descriptors (`targets/*.toml`).
//!
//! Three pure steps, no hidden I/O:
//! - [`inspect`] takes the bytes of a file and returns an [`ElfInfo`]: ELF class, byte order,
//!   OS ABI, `e_machine` (named by [`Machine`]), `e_flags` (decoded for Elbrus by [`e2k`]),
//!   program interpreter, static or dynamic linking, `DT_NEEDED` entries and the newest
//!   `GLIBC_x.y` symbol version the file needs (from `SHT_GNU_verneed`).
//!   Sources: System V ABI "ELF header" and "Program header" chapters; LSB Core
//!   "Symbol Versioning"; MCST's `e_flags` layout as encoded in binutils / the `object` crate.
//! - [`TargetDescriptor::parse`] reads one `targets/<name>.toml` (serde, unknown keys refused,
//!   errors name the file, line and key).
//! - [`check`] compares the two and lists every [`Mismatch`].
//!
//! Bad input never panics: every failure is an [`ElfError`] or a [`TargetError`] naming the file.

pub mod check;
pub mod e2k;
pub mod ident;
pub mod inspect;
pub mod machine;
pub mod target;

pub use check::{check, Mismatch};
pub use ident::{Class, Endianness};
pub use inspect::{
    inspect, inspect_file, parse_header, ElfError, ElfHeader, ElfInfo, FormatError, GlibcVersion,
    Linking,
};
pub use machine::{Machine, MachineInfo, MACHINES};
pub use target::{
    BuildMethod, DescriptorSource, E2kRules, ElfExpectation, GlibcRule, TargetDescriptor,
    TargetError,
};

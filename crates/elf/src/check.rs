//! [`check`]: an [`ElfInfo`] against a [`TargetDescriptor`], every mismatch listed.

use std::fmt;

use crate::inspect::ElfInfo;
use crate::machine::Machine;
use crate::target::{GlibcRule, TargetDescriptor};

/// One way a file differs from what its target requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// What differs (`machine`, `class`, `linking`, `e_flags`, ...).
    pub field: &'static str,
    /// What the descriptor requires.
    pub expected: String,
    /// What the file has.
    pub found: String,
}

impl fmt::Display for Mismatch {
    /// `machine: expected aarch64 (183), found x86_64 (62)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: expected {}, found {}",
            self.field, self.expected, self.found
        )
    }
}

/// Lists every way `info` differs from `target.elf`; empty when the file fits.
///
/// Checked: class, byte order, `e_machine`; static-ness or the newest `GLIBC_x.y`; the
/// interpreter (only when the file has one and the descriptor allows dynamic binaries, its
/// `glibc` being a version, not `"static"`); for e2k, the `e_flags` machine code and the bits
/// that must be clear. `e_flags` is not required to be 0 on other machines (static sparc64
/// binaries carry 0x200, the UltraSPARC1 extensions).
pub fn check(info: &ElfInfo, target: &TargetDescriptor) -> Vec<Mismatch> {
    let elf = &target.elf;
    let mut out = Vec::new();
    let mut differ = |field, expected: String, found: String| {
        out.push(Mismatch {
            field,
            expected,
            found,
        })
    };
    if info.class != elf.class {
        differ("class", elf.class.to_string(), info.class.to_string());
    }
    if info.endianness != elf.endianness {
        differ(
            "endianness",
            elf.endianness.to_string(),
            info.endianness.to_string(),
        );
    }
    if info.machine.number() != elf.machine {
        differ(
            "machine",
            Machine(elf.machine).to_string(),
            info.machine.to_string(),
        );
    }
    match elf.glibc {
        GlibcRule::Static => {
            if !info.linking.is_static() {
                let mut found = info.linking.to_string();
                if let Some(interp) = &info.interpreter {
                    found.push_str(&format!(" (interpreter {interp})"));
                }
                differ("linking", "static".to_owned(), found);
            }
        }
        GlibcRule::AtMost(max) => {
            if let Some(newest) = info.newest_glibc {
                if newest > max {
                    differ(
                        "glibc",
                        format!("at most GLIBC_{max}"),
                        format!("GLIBC_{newest}"),
                    );
                }
            }
        }
    }
    // The descriptor's interpreter is that of a dynamic build: compared only when the
    // descriptor allows dynamic binaries. Against a static rule a dynamic file is reported
    // once, as `linking` (its interpreter is named there), never also as `interpreter`.
    if let (GlibcRule::AtMost(_), Some(interp)) = (&elf.glibc, &info.interpreter) {
        if *interp != elf.interpreter {
            differ("interpreter", elf.interpreter.clone(), interp.clone());
        }
    }
    if let (Some(rules), Some(flags)) = (&elf.e2k, info.e2k_flags()) {
        let code = flags.machine_code();
        if !rules.machine_codes.contains(&code) {
            differ(
                "e_flags machine code",
                format!("one of {:?}", rules.machine_codes),
                flags.to_string(),
            );
        }
        let set = info.e_flags & rules.must_be_clear;
        if set != 0 {
            differ(
                "e_flags",
                format!(
                    "bits {:#x} clear (0x20 = protected mode)",
                    rules.must_be_clear
                ),
                format!("{:#x} set ({flags})", set),
            );
        }
    }
    out
}

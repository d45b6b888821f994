//! lscpu's "CPU op-mode(s)", "Address sizes" and "Byte Order" (util-linux `lscpu`), each from
//! the kernel's own words where it writes them, with where it came from. Pure: the probe
//! passes in the texts it read.
//!
//! - op-modes: x86 `flags` holding `lm` (long mode: 32-bit and 64-bit, as lscpu), s390x
//!   `features` holding `zarch`, sparc64 (SPARC V9 runs 32-bit V8 code) and ppc64 always both;
//!   aarch64 64-bit, with 32-bit (AArch32 at EL0) only where the live probe asked the kernel
//!   (`personality(PER_LINUX32)`, as lscpu does): a capture does not say.
//! - address sizes: x86 `/proc/cpuinfo` `address sizes : 46 bits physical, 48 bits virtual`;
//!   no other architecture writes them there (lscpu prints none either).
//! - byte order: `/sys/kernel/cpu_byteorder` (`little` or `big`), else the architecture's only
//!   order (x86, e2k, riscv64, loongarch64 little; sparc64, s390x big), else the kernel's
//!   machine name where it tells a bi-endian architecture's order (`aarch64` / `aarch64_be`,
//!   `ppc64le` / `ppc64`).

use hwsurvey_model::{Probed, Unknown};
use serde::{Deserialize, Serialize};

use super::cpuinfo::Arch;

/// The CPU's operating modes, as lscpu's "CPU op-mode(s)".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpModes {
    /// Runs 32-bit code: `Some(true)`, `Some(false)`, or `None` when the source cannot say
    /// (AArch32 at EL0 in a capture of an arm64 machine).
    pub bit32: Option<bool>,
    /// Runs 64-bit code.
    pub bit64: bool,
    /// Which file or rule said it.
    pub source: String,
}

impl OpModes {
    /// `32-bit, 64-bit`, `64-bit`, or `64-bit (32-bit unknown)`, as lscpu words them.
    pub fn words(&self) -> String {
        match (self.bit32, self.bit64) {
            (Some(true), true) => "32-bit, 64-bit".into(),
            (Some(true), false) => "32-bit".into(),
            (_, true) if self.bit32.is_none() => "64-bit (32-bit unknown)".into(),
            (_, true) => "64-bit".into(),
            (_, false) => "none known".into(),
        }
    }
}

/// Physical and virtual address widths, bits (x86 `/proc/cpuinfo` `address sizes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddressSizes {
    /// Physical address bits.
    pub physical_bits: u32,
    /// Virtual address bits.
    pub virtual_bits: u32,
}

/// Byte order of the CPU as the kernel runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByteOrder {
    /// Little endian (`false`: big endian).
    pub little_endian: bool,
    /// Which file or rule said it.
    pub source: String,
}

impl ByteOrder {
    /// `Little Endian` or `Big Endian`, as lscpu words it.
    pub fn words(&self) -> &'static str {
        if self.little_endian {
            "Little Endian"
        } else {
            "Big Endian"
        }
    }
}

/// `address sizes : 46 bits physical, 48 bits virtual` (one x86 `/proc/cpuinfo` line's
/// value); `None` for any other text.
pub fn parse_address_sizes(value: &str) -> Option<AddressSizes> {
    let (phys, virt) = value.split_once(',')?;
    let bits = |s: &str, what: &str| -> Option<u32> {
        let rest = s.trim().strip_suffix(what)?.trim();
        rest.strip_suffix("bits")?.trim().parse().ok()
    };
    Some(AddressSizes {
        physical_bits: bits(phys, "physical")?,
        virtual_bits: bits(virt, "virtual")?,
    })
}

/// The op-modes of a machine of `arch` whose `/proc/cpuinfo` feature list (x86 `flags`, s390x
/// `features`) is `flags`; `aarch32_el0`: what the live probe learned of AArch32 at EL0
/// (`None` in a capture).
pub fn op_modes(arch: Arch, flags: &[String], aarch32_el0: Option<bool>) -> Probed<OpModes> {
    let has = |f: &str| flags.iter().any(|x| x == f);
    let modes = |bit32: Option<bool>, bit64: bool, source: &str| {
        Probed::Known(OpModes {
            bit32,
            bit64,
            source: source.into(),
        })
    };
    match arch {
        Arch::X86_64 | Arch::X86 if flags.is_empty() => Probed::Unknown(Unknown::Other {
            detail: "no x86 flags line in /proc/cpuinfo".into(),
        }),
        Arch::X86_64 | Arch::X86 => modes(
            Some(true),
            has("lm"),
            if has("lm") {
                "/proc/cpuinfo flags: lm (long mode)"
            } else {
                "/proc/cpuinfo flags: no lm (no long mode)"
            },
        ),
        Arch::S390x if flags.is_empty() => Probed::Unknown(Unknown::Other {
            detail: "no s390x features line in /proc/cpuinfo".into(),
        }),
        Arch::S390x => modes(
            Some(true),
            has("zarch"),
            "/proc/cpuinfo features: zarch (z/Architecture)",
        ),
        Arch::Sparc64 => modes(Some(true), true, "sparc64: SPARC V9 runs 32-bit V8 code"),
        Arch::Ppc64 => modes(Some(true), true, "ppc64: 32-bit and 64-bit modes"),
        Arch::Aarch64 => match aarch32_el0 {
            Some(b) => modes(
                Some(b),
                true,
                "aarch64; AArch32 at EL0 from personality(PER_LINUX32), as lscpu",
            ),
            None => modes(
                None,
                true,
                "aarch64; AArch32 at EL0 is asked of the live kernel only \
                 (personality(PER_LINUX32), as lscpu): a capture does not say",
            ),
        },
        Arch::E2k | Arch::Riscv64 | Arch::Loongarch64 | Arch::Ia64 => modes(
            None,
            true,
            "64-bit architecture; its 32-bit mode is not probed",
        ),
        Arch::Arm => modes(Some(true), false, "32-bit arm kernel"),
        Arch::Unknown => Probed::Unknown(Unknown::Other {
            detail: "architecture unknown".into(),
        }),
    }
}

/// The address sizes of a machine of `arch` from its `/proc/cpuinfo` `address sizes` value
/// (`None`: not there).
pub fn address_sizes(arch: Arch, cpuinfo_value: Option<&str>) -> Probed<AddressSizes> {
    match (arch, cpuinfo_value) {
        (Arch::X86_64 | Arch::X86, Some(v)) => match parse_address_sizes(v) {
            Some(a) => Probed::Known(a),
            None => Probed::Unknown(Unknown::Invalid {
                path: "/proc/cpuinfo".into(),
                detail: format!(
                    "address sizes: expected \"N bits physical, M bits virtual\", got {}",
                    hwsurvey_model::text::quote(v)
                ),
            }),
        },
        (Arch::X86_64 | Arch::X86, None) => Probed::Unknown(Unknown::Other {
            detail: "no address sizes line in /proc/cpuinfo".into(),
        }),
        _ => Probed::Unknown(Unknown::NotOnThisPlatform {
            detail: format!(
                "/proc/cpuinfo gives address sizes on x86 only; this is {}",
                arch.as_str()
            ),
        }),
    }
}

/// The byte order from `/sys/kernel/cpu_byteorder`'s text (`None`: not there), else `arch`'s
/// only order, else the kernel's machine name `machine` (`uname -m`, where known).
pub fn byte_order(
    arch: Arch,
    cpu_byteorder: Option<&str>,
    machine: Option<&str>,
) -> Probed<ByteOrder> {
    let order = |little: bool, source: String| {
        Probed::Known(ByteOrder {
            little_endian: little,
            source,
        })
    };
    match cpu_byteorder.map(str::trim) {
        Some("little") => return order(true, "/sys/kernel/cpu_byteorder".into()),
        Some("big") => return order(false, "/sys/kernel/cpu_byteorder".into()),
        Some(other) => {
            return Probed::Unknown(Unknown::Invalid {
                path: "/sys/kernel/cpu_byteorder".into(),
                detail: format!(
                    "expected little or big, got {}",
                    hwsurvey_model::text::quote(other)
                ),
            })
        }
        None => {}
    }
    match arch {
        Arch::X86_64 | Arch::X86 | Arch::E2k | Arch::Riscv64 | Arch::Loongarch64 | Arch::Ia64 => {
            order(true, format!("{}: little endian only", arch.as_str()))
        }
        Arch::Sparc64 | Arch::S390x => order(false, format!("{}: big endian only", arch.as_str())),
        Arch::Aarch64 | Arch::Ppc64 | Arch::Arm | Arch::Unknown => {
            let m = machine.map(str::trim).unwrap_or("");
            let little = match m {
                "aarch64" | "arm64" | "ppc64le" | "powerpc64le" => Some(true),
                "aarch64_be" | "ppc64" | "powerpc64" => Some(false),
                m if m.starts_with("armv") && m.ends_with('b') => Some(false),
                m if m.starts_with("armv") && m.ends_with('l') => Some(true),
                _ => None,
            };
            match little {
                Some(l) => order(l, format!("kernel machine {m:?}")),
                None => Probed::Unknown(Unknown::Other {
                    detail: format!(
                        "{} runs either byte order: no /sys/kernel/cpu_byteorder (an older kernel) \
                         and no kernel machine name to tell",
                        arch.as_str()
                    ),
                }),
            }
        }
    }
}

/// Documents written before these fields read as unknown.
pub fn not_recorded<T>() -> Probed<T> {
    Probed::Unknown(Unknown::Other {
        detail: "not recorded by the hwsurvey that wrote this document".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_sizes_parse_and_refuse() {
        assert_eq!(
            parse_address_sizes("46 bits physical, 48 bits virtual"),
            Some(AddressSizes {
                physical_bits: 46,
                virtual_bits: 48
            })
        );
        assert_eq!(parse_address_sizes("46 bits physical"), None);
        assert!(matches!(
            address_sizes(Arch::X86_64, Some("46 bits, 48")),
            Probed::Unknown(Unknown::Invalid { .. })
        ));
        assert!(matches!(
            address_sizes(Arch::Aarch64, None),
            Probed::Unknown(Unknown::NotOnThisPlatform { .. })
        ));
    }

    #[test]
    fn op_modes_as_lscpu_words_them() {
        let lm = vec!["fpu".to_string(), "lm".to_string()];
        assert_eq!(
            op_modes(Arch::X86_64, &lm, None).known().unwrap().words(),
            "32-bit, 64-bit"
        );
        assert_eq!(
            op_modes(Arch::X86, &["fpu".to_string()], None)
                .known()
                .unwrap()
                .words(),
            "32-bit"
        );
        // ThunderX2: AArch64 only (lscpu: 64-bit); Altra: AArch32 at EL0 too
        assert_eq!(
            op_modes(Arch::Aarch64, &[], Some(false))
                .known()
                .unwrap()
                .words(),
            "64-bit"
        );
        assert_eq!(
            op_modes(Arch::Aarch64, &[], Some(true))
                .known()
                .unwrap()
                .words(),
            "32-bit, 64-bit"
        );
        assert_eq!(
            op_modes(Arch::Aarch64, &[], None).known().unwrap().words(),
            "64-bit (32-bit unknown)"
        );
        assert_eq!(
            op_modes(Arch::Sparc64, &[], None).known().unwrap().words(),
            "32-bit, 64-bit"
        );
    }

    #[test]
    fn byte_order_from_the_kernel_then_the_architecture() {
        let b = byte_order(Arch::Aarch64, Some("little\n"), None);
        assert_eq!(b.known().unwrap().words(), "Little Endian");
        let b = byte_order(Arch::Sparc64, None, None);
        assert_eq!(b.known().unwrap().words(), "Big Endian");
        let b = byte_order(Arch::Ppc64, None, Some("ppc64le"));
        assert_eq!(b.known().unwrap().words(), "Little Endian");
        assert!(byte_order(Arch::Aarch64, None, None).known().is_none());
        assert!(matches!(
            byte_order(Arch::X86_64, Some("middle"), None),
            Probed::Unknown(Unknown::Invalid { .. })
        ));
    }
}

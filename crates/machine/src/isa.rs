//! The instruction-set features that decide benchmark results, named as porting engineers
//! name them, from the first CPU's `/proc/cpuinfo` feature list (x86 `flags`, aarch64
//! `Features`, sparc64 `cpucaps`: the `flags` of the CPU identity the probe keeps).
//!
//! The kernel's flag names are Linux's (`arch/x86/include/asm/cpufeatures.h`,
//! `arch/arm64/kernel/cpuinfo.c` `hwcap_str`, `arch/sparc/kernel/setup_64.c` `hwcaps`). A
//! feature is listed as present only when its flag is there; the groups a reader compares
//! machines by (AVX-512, AMX, SVE) are also named when absent, so "no AVX-512" is said, not
//! left to be inferred from a missing word.

use crate::cpu::cpuinfo::Arch;

/// One group of features: its name, and `(flag, short name)` of its members; a group with one
/// member is written by the group's name alone.
struct Group {
    name: &'static str,
    members: &'static [(&'static str, &'static str)],
    /// Said as "no NAME" when no member is present.
    say_absent: bool,
}

const X86: &[Group] = &[
    Group {
        name: "SSE4.2",
        members: &[("sse4_2", "")],
        say_absent: false,
    },
    Group {
        name: "AVX",
        members: &[("avx", "")],
        say_absent: false,
    },
    Group {
        name: "AVX2",
        members: &[("avx2", "")],
        say_absent: true,
    },
    Group {
        name: "FMA",
        members: &[("fma", "")],
        say_absent: false,
    },
    Group {
        name: "AVX-512",
        members: &[
            ("avx512f", "F"),
            ("avx512cd", "CD"),
            ("avx512bw", "BW"),
            ("avx512dq", "DQ"),
            ("avx512vl", "VL"),
            ("avx512ifma", "IFMA"),
            ("avx512vbmi", "VBMI"),
            ("avx512_vbmi2", "VBMI2"),
            ("avx512_vnni", "VNNI"),
            ("avx512_bitalg", "BITALG"),
            ("avx512_vpopcntdq", "VPOPCNTDQ"),
            ("avx512_bf16", "BF16"),
            ("avx512_fp16", "FP16"),
        ],
        say_absent: true,
    },
    Group {
        name: "AVX-VNNI",
        members: &[("avx_vnni", "")],
        say_absent: false,
    },
    Group {
        name: "AMX",
        members: &[
            ("amx_tile", "TILE"),
            ("amx_bf16", "BF16"),
            ("amx_int8", "INT8"),
        ],
        say_absent: true,
    },
    Group {
        name: "GFNI",
        members: &[("gfni", "")],
        say_absent: false,
    },
    Group {
        name: "VAES",
        members: &[("vaes", "")],
        say_absent: false,
    },
    Group {
        name: "VPCLMULQDQ",
        members: &[("vpclmulqdq", "")],
        say_absent: false,
    },
    Group {
        name: "AES-NI",
        members: &[("aes", "")],
        say_absent: false,
    },
    Group {
        name: "SHA",
        members: &[("sha_ni", "")],
        say_absent: false,
    },
];

const AARCH64: &[Group] = &[
    Group {
        name: "NEON",
        members: &[("asimd", "")],
        say_absent: true,
    },
    Group {
        name: "DotProd",
        members: &[("asimddp", "")],
        say_absent: false,
    },
    Group {
        name: "FP16",
        members: &[("asimdhp", "")],
        say_absent: false,
    },
    Group {
        name: "BF16",
        members: &[("bf16", "")],
        say_absent: false,
    },
    Group {
        name: "I8MM",
        members: &[("i8mm", "")],
        say_absent: false,
    },
    Group {
        name: "SVE",
        members: &[("sve", "")],
        say_absent: true,
    },
    Group {
        name: "SVE2",
        members: &[("sve2", "")],
        say_absent: false,
    },
    Group {
        name: "SME",
        members: &[("sme", "")],
        say_absent: false,
    },
    Group {
        name: "LSE atomics",
        members: &[("atomics", "")],
        say_absent: true,
    },
    Group {
        name: "CRC32",
        members: &[("crc32", "")],
        say_absent: false,
    },
    Group {
        name: "AES",
        members: &[("aes", "")],
        say_absent: false,
    },
    Group {
        name: "PMULL",
        members: &[("pmull", "")],
        say_absent: false,
    },
    Group {
        name: "SHA2",
        members: &[("sha2", "")],
        say_absent: false,
    },
    Group {
        name: "SHA512",
        members: &[("sha512", "")],
        say_absent: false,
    },
];

const SPARC64: &[Group] = &[
    Group {
        name: "VIS",
        members: &[("vis", "")],
        say_absent: true,
    },
    Group {
        name: "VIS2",
        members: &[("vis2", "")],
        say_absent: false,
    },
    Group {
        name: "VIS3",
        members: &[("vis3", "")],
        say_absent: false,
    },
    Group {
        name: "crypto",
        members: &[("crypto", "")],
        say_absent: false,
    },
    Group {
        name: "fmaf",
        members: &[("fmaf", "")],
        say_absent: false,
    },
];

/// The features of `flags` that decide results on `arch`, in reading order; `None` where
/// the architecture has no list here (e2k, ppc64, s390x, 32-bit kernels) or the feature list
/// is empty (cpuinfo unreadable).
///
/// x86_64 `["AVX2", "FMA", "AVX-512 (F CD BW DQ VL)", "no AMX"]`-style words: a group with
/// several members lists the present ones in parentheses.
pub fn decisive_features(arch: Arch, flags: &[String]) -> Option<Vec<String>> {
    let groups = match arch {
        Arch::X86_64 | Arch::X86 => X86,
        Arch::Aarch64 => AARCH64,
        Arch::Sparc64 => SPARC64,
        _ => return None,
    };
    if flags.is_empty() {
        return None;
    }
    let has = |f: &str| flags.iter().any(|x| x == f);
    let mut out = Vec::new();
    for g in groups {
        let present: Vec<&str> = g
            .members
            .iter()
            .filter(|(flag, _)| has(flag))
            .map(|(_, short)| *short)
            .collect();
        if present.is_empty() {
            if g.say_absent {
                out.push(format!("no {}", g.name));
            }
        } else if g.members.len() == 1 {
            out.push(g.name.to_string());
        } else {
            out.push(format!("{} ({})", g.name, present.join(" ")));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn x86_groups_name_present_members_and_absent_groups() {
        let f =
            flags("fpu sse4_2 avx avx2 fma avx512f avx512cd avx512bw avx512dq avx512vl gfni aes");
        assert_eq!(
            decisive_features(Arch::X86_64, &f).unwrap(),
            [
                "SSE4.2",
                "AVX",
                "AVX2",
                "FMA",
                "AVX-512 (F CD BW DQ VL)",
                "no AMX",
                "GFNI",
                "AES-NI"
            ]
        );
        assert_eq!(decisive_features(Arch::E2k, &f), None);
        assert_eq!(decisive_features(Arch::X86_64, &[]), None);
    }
}

//! Pure parsers of `/proc/cpuinfo` in each architecture's own format, and the architecture
//! detection that picks the format.
//!
//! Formats (all `key : value` lines; the key may contain spaces, and blank lines separate
//! records on the architectures that print one record per CPU):
//! - x86: one record per CPU with `processor`, `vendor_id`, `cpu family`, `model`,
//!   `model name`, `stepping`, `flags`, `physical id`, `core id`.
//! - aarch64: one record per CPU with `processor`, `CPU implementer`, `CPU variant`,
//!   `CPU part`, `CPU revision` (the MIDR_EL1 fields, see [`super::midr`]).
//! - sparc64: one record for the machine: `cpu`, `type` (`sun4v`, `e90s` on MCST R-series),
//!   `ncpus probed`, `ncpus active`, per-CPU `CpuN ClkTck` / `CpuN MHz`; no `processor` lines.
//!   CPUs are never counted from it (the kernel's sets are the truth).
//! - e2k: x86-like records (`vendor_id: Elbrus-MCST`, `model name: E16C`, no flags), then
//!   `cacheN : level=1 type=Data scope=Private size=64K line_size=32 associativity=4` once
//!   after the last CPU.
//! - ppc64: records with `processor`, `cpu` (`POWER7 (architected)`), `clock`; a trailer
//!   with `timebase`, `platform`, `model`.
//! - s390x: `vendor_id: IBM/S390`, `# processors`, `processor N: version = ..., machine = 2817`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::midr::Midr;
use hwsurvey_model::CpuId;

/// The instruction-set architecture of the probed machine (not of this binary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    /// 64-bit x86.
    X86_64,
    /// 32-bit x86 kernel.
    X86,
    /// 64-bit Arm.
    Aarch64,
    /// 32-bit Arm kernel.
    Arm,
    /// SPARC v9 (sun4u, sun4v, MCST R-series).
    Sparc64,
    /// MCST Elbrus (E2K).
    E2k,
    /// 64-bit POWER.
    Ppc64,
    /// IBM Z.
    S390x,
    /// 64-bit RISC-V.
    Riscv64,
    /// Intel Itanium (IA-64).
    Ia64,
    /// 64-bit LoongArch.
    Loongarch64,
    /// Not recognised.
    Unknown,
}

impl Arch {
    /// The kernel's `uname -m` spelling of this architecture (`x86_64`, `aarch64`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::X86 => "i686",
            Arch::Aarch64 => "aarch64",
            Arch::Arm => "arm",
            Arch::Sparc64 => "sparc64",
            Arch::E2k => "e2k",
            Arch::Ppc64 => "ppc64",
            Arch::S390x => "s390x",
            Arch::Riscv64 => "riscv64",
            Arch::Ia64 => "ia64",
            Arch::Loongarch64 => "loongarch64",
            Arch::Unknown => "unknown",
        }
    }

    /// Parses a `uname -m` / `/proc/sys/kernel/arch` string.
    pub fn from_machine(machine: &str) -> Arch {
        match machine.trim() {
            "x86_64" | "amd64" => Arch::X86_64,
            "i386" | "i486" | "i586" | "i686" | "x86" => Arch::X86,
            "aarch64" | "arm64" => Arch::Aarch64,
            m if m.starts_with("armv") || m == "arm" => Arch::Arm,
            "sparc64" | "sparc" => Arch::Sparc64,
            "e2k" | "e2k64" | "elbrus" => Arch::E2k,
            "ppc64" | "ppc64le" | "powerpc64" | "ppc" => Arch::Ppc64,
            "s390x" | "s390" => Arch::S390x,
            "riscv64" => Arch::Riscv64,
            "ia64" => Arch::Ia64,
            "loongarch64" | "loongarch" => Arch::Loongarch64,
            _ => Arch::Unknown,
        }
    }
}

/// One `cacheN:` line of an e2k /proc/cpuinfo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct E2kCacheLine {
    /// Cache level (1, 2, 3).
    pub level: u8,
    /// `Data`, `Instruction` or `Unified`.
    pub cache_type: String,
    /// `Private` (one per core) or `Shared` (one per chip).
    pub scope: Option<String>,
    /// Size of one instance in bytes (`size=64K`: K = KiB).
    pub size_bytes: Option<u64>,
    /// Line size in bytes.
    pub line_size_bytes: Option<u32>,
    /// Ways of associativity.
    pub ways: Option<u32>,
}

/// What one record (one CPU, on the architectures that print one per CPU) says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuinfoCpu {
    /// The `processor` number (an OS CPU number), if printed.
    pub processor: Option<CpuId>,
    /// aarch64 MIDR fields, if printed.
    pub midr: Option<Midr>,
    /// `cpu MHz` (x86, e2k) or `CpuN MHz` (MCST sparc64).
    pub mhz: Option<f64>,
    /// x86 `physical id`.
    pub physical_id: Option<u32>,
    /// x86 `core id`.
    pub core_id: Option<u32>,
    /// x86 `microcode`, the revision as written (`0x8001227`).
    #[serde(default)]
    pub microcode: Option<String>,
}

/// Everything parsed from one /proc/cpuinfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cpuinfo {
    /// The architecture the format says, if recognised, and the evidence.
    pub arch: Option<(Arch, String)>,
    /// `vendor_id` (x86, e2k, s390x, MCST sparc64) or the aarch64 implementer's name.
    pub vendor: Option<String>,
    /// `model name` (x86, e2k, MCST sparc64), `cpu` (sparc64, ppc64).
    pub model_name: Option<String>,
    /// x86/e2k `cpu family`.
    pub family: Option<u32>,
    /// x86/e2k `model`.
    pub model: Option<u32>,
    /// x86 `stepping`.
    pub stepping: Option<u32>,
    /// x86 `flags` / aarch64 `Features` / sparc64 `cpucaps` of the first CPU.
    pub flags: Vec<String>,
    /// x86 `address sizes` of the first CPU, as written (`46 bits physical, 48 bits
    /// virtual`; [`super::modes::parse_address_sizes`]).
    #[serde(default)]
    pub address_sizes: Option<String>,
    /// sparc64 `type` (`sun4v`, `sun4u`, `e90s`).
    pub sparc_type: Option<String>,
    /// sparc64 `ncpus probed`.
    pub ncpus_probed: Option<u32>,
    /// sparc64 `ncpus active`.
    pub ncpus_active: Option<u32>,
    /// ppc64 `platform` / `model`, s390x `machine = NNNN`.
    pub machine_model: Option<String>,
    /// One entry per record that names a processor (empty on sparc64).
    pub cpus: Vec<CpuinfoCpu>,
    /// e2k trailing cache lines.
    pub e2k_caches: Vec<E2kCacheLine>,
    /// x86 and e2k `bogomips` of the first CPU (on x86 the kernel derives it from the TSC:
    /// tsc_khz / 500, [`super::nominal`]).
    #[serde(default)]
    pub bogomips: Option<f64>,
    /// sparc64 `Cpu0ClkTck` (hexadecimal Hz: the tick register's rate), of the first CPU
    /// printing one.
    #[serde(default)]
    pub clock_tick_hz: Option<u64>,
    /// Lines that were not `key : value` and not blank (kept for diagnostics; s390x
    /// `processor N:` lines are parsed, not listed here).
    pub unparsed_lines: usize,
}

fn split_kv(line: &str) -> Option<(&str, &str)> {
    let (k, v) = line.split_once(':')?;
    Some((k.trim(), v.trim()))
}

fn parse_num(text: &str) -> Option<u32> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u32::from_str_radix(hex, 16).ok()
    } else {
        t.parse().ok()
    }
}

/// Parses a cache size as `/proc/cpuinfo` (e2k, s390) and sysfs `cache/indexN/size` write it:
/// `64K`, `32768K`, `2M`, `8192` (bytes), into bytes; K/M/G are binary. (dmidecode's `8 GB` is
/// [`crate::memory::dmidecode::parse_dmidecode_size_bytes`].)
pub fn parse_cache_size_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mult) = match t.char_indices().last()? {
        (i, 'K' | 'k') => (&t[..i], 1u64 << 10),
        (i, 'M' | 'm') => (&t[..i], 1 << 20),
        (i, 'G' | 'g') => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// Parses one e2k `cacheN : level=.. type=.. ...` value.
pub fn parse_e2k_cache_line(value: &str) -> Option<E2kCacheLine> {
    let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
    for part in value.split_whitespace() {
        let (k, v) = part.split_once('=')?;
        fields.insert(k, v);
    }
    let level: u8 = fields.get("level")?.parse().ok()?;
    Some(E2kCacheLine {
        level,
        cache_type: fields.get("type")?.to_string(),
        scope: fields.get("scope").map(|s| s.to_string()),
        size_bytes: fields.get("size").and_then(|s| parse_cache_size_bytes(s)),
        line_size_bytes: fields.get("line_size").and_then(|s| s.parse().ok()),
        ways: fields.get("associativity").and_then(|s| s.parse().ok()),
    })
}

/// Guesses the architecture from the format of a /proc/cpuinfo text, with the evidence.
pub fn detect_arch(text: &str) -> Option<(Arch, String)> {
    let mut keys: BTreeMap<String, String> = BTreeMap::new();
    for line in text.lines() {
        if let Some((k, v)) = split_kv(line) {
            keys.entry(k.to_string()).or_insert_with(|| v.to_string());
        }
    }
    let get = |k: &str| keys.get(k).map(String::as_str);
    // s390 writes the same `cacheN : level=..` lines as e2k: its vendor_id decides first.
    if get("vendor_id").is_some_and(|v| v.contains("S390")) || keys.contains_key("# processors") {
        return Some((
            Arch::S390x,
            "/proc/cpuinfo: s390 format (vendor_id IBM/S390)".into(),
        ));
    }
    if get("vendor_id") == Some("Elbrus-MCST") || keys.keys().any(|k| is_e2k_cache_key(k)) {
        return Some((
            Arch::E2k,
            "/proc/cpuinfo: e2k format (vendor_id Elbrus-MCST or cacheN: level= lines)".into(),
        ));
    }
    if keys.contains_key("ncpus probed")
        || get("type").is_some_and(|t| t.starts_with("sun4") || t == "e90s")
    {
        return Some((
            Arch::Sparc64,
            "/proc/cpuinfo: sparc64 format (ncpus probed / type sun4*|e90s)".into(),
        ));
    }
    if keys.contains_key("CPU implementer") {
        let arch = match get("CPU architecture") {
            Some(a) if a.trim().parse::<u32>().map(|n| n < 8).unwrap_or(false) => Arch::Arm,
            _ => Arch::Aarch64,
        };
        return Some((
            arch,
            "/proc/cpuinfo: Arm format (CPU implementer / CPU part)".into(),
        ));
    }
    if get("arch").is_some_and(|a| a.starts_with("IA-64"))
        || get("family").is_some_and(|f| f.starts_with("Itanium"))
    {
        return Some((
            Arch::Ia64,
            "/proc/cpuinfo: IA-64 format (arch IA-64 / family Itanium)".into(),
        ));
    }
    if get("CPU Family").is_some_and(|f| f.starts_with("Loongson"))
        || get("ISA").is_some_and(|i| i.contains("loongarch"))
    {
        return Some((
            Arch::Loongarch64,
            "/proc/cpuinfo: LoongArch format (CPU Family Loongson / ISA loongarch)".into(),
        ));
    }
    if keys.contains_key("timebase")
        || get("cpu").is_some_and(|c| c.starts_with("POWER") || c.starts_with("PPC"))
    {
        return Some((
            Arch::Ppc64,
            "/proc/cpuinfo: POWER format (cpu POWERn / timebase)".into(),
        ));
    }
    if get("isa").is_some_and(|i| i.starts_with("rv64")) {
        return Some((
            Arch::Riscv64,
            "/proc/cpuinfo: RISC-V format (isa rv64...)".into(),
        ));
    }
    if keys.contains_key("vendor_id") && keys.contains_key("flags") {
        // A 32-bit kernel writes fdiv_bug/f00f_bug/coma_bug lines (arch/x86/kernel/cpu/proc.c,
        // CONFIG_X86_32) whatever the CPU can do: i686 on a CPU with lm is a 32-bit kernel.
        let kernel32 = keys.contains_key("fdiv_bug") || keys.contains_key("f00f_bug");
        let lm = get("flags").is_some_and(|f| f.split_whitespace().any(|w| w == "lm"));
        let arch = if lm && !kernel32 {
            Arch::X86_64
        } else {
            Arch::X86
        };
        return Some((
            arch,
            format!(
                "/proc/cpuinfo: x86 format (vendor_id, flags{}{})",
                if lm { " with lm" } else { " without lm" },
                if kernel32 {
                    "; fdiv_bug lines: a 32-bit kernel"
                } else {
                    ""
                }
            ),
        ));
    }
    None
}

fn is_e2k_cache_key(k: &str) -> bool {
    k.strip_prefix("cache")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Parses /proc/cpuinfo in whichever format it is in. Never fails: unknown lines are
/// counted in [`Cpuinfo::unparsed_lines`] and fields that are not there stay `None`.
pub fn parse_cpuinfo(text: &str) -> Cpuinfo {
    let mut out = Cpuinfo {
        arch: detect_arch(text),
        ..Cpuinfo::default()
    };
    let mut current: Option<CpuinfoCpu> = None;
    let mut midr_parts: [Option<u32>; 4] = [None; 4];
    let mut first_flags_done = false;
    let mut sparc_mhz: BTreeMap<u32, f64> = BTreeMap::new();

    let flush = |cur: &mut Option<CpuinfoCpu>, parts: &mut [Option<u32>; 4], out: &mut Cpuinfo| {
        if let Some(mut c) = cur.take() {
            if let [Some(i), v, Some(p), r] = *parts {
                c.midr = Some(Midr {
                    implementer: i,
                    variant: v.unwrap_or(0),
                    part: p,
                    revision: r.unwrap_or(0),
                });
            }
            out.cpus.push(c);
        }
        *parts = [None; 4];
    };

    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        // s390x: "processor 1: version = 00,  identification = 279F25,  machine = 2817"
        if let Some(rest) = line.strip_prefix("processor ") {
            if let Some((num, tail)) = rest.split_once(':') {
                if let Ok(n) = num.trim().parse::<u32>() {
                    out.cpus.push(CpuinfoCpu {
                        processor: Some(n),
                        ..CpuinfoCpu::default()
                    });
                    if out.machine_model.is_none() {
                        out.machine_model = tail
                            .split(',')
                            .filter_map(|f| f.split_once('='))
                            .find(|(k, _)| k.trim() == "machine")
                            .map(|(_, v)| v.trim().to_string());
                    }
                    continue;
                }
            }
        }
        let Some((key, value)) = split_kv(line) else {
            out.unparsed_lines += 1;
            continue;
        };
        match key {
            "processor" => {
                flush(&mut current, &mut midr_parts, &mut out);
                current = Some(CpuinfoCpu {
                    processor: value.parse().ok(),
                    ..CpuinfoCpu::default()
                });
            }
            "vendor_id" => {
                out.vendor.get_or_insert_with(|| value.to_string());
            }
            "model name" => {
                out.model_name.get_or_insert_with(|| value.to_string());
            }
            "cpu" => {
                // sparc64 and ppc64 name the CPU with `cpu`.
                out.model_name.get_or_insert_with(|| value.to_string());
            }
            "cpu family" => {
                out.family = out.family.or(parse_num(value));
            }
            "model" => {
                if out.model.is_none() {
                    out.model = parse_num(value);
                }
                if out.model.is_none() && out.machine_model.is_none() {
                    out.machine_model = Some(value.to_string());
                }
            }
            "platform" => {
                out.machine_model.get_or_insert_with(|| value.to_string());
            }
            "stepping" => out.stepping = out.stepping.or(parse_num(value)),
            "flags" | "Features" | "cpucaps" | "features" => {
                if !first_flags_done {
                    out.flags = value
                        .split(|c: char| c.is_whitespace() || c == ',')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect();
                    first_flags_done = true;
                }
            }
            "type" => {
                out.sparc_type.get_or_insert_with(|| value.to_string());
            }
            "address sizes" => {
                out.address_sizes.get_or_insert_with(|| value.to_string());
            }
            "ncpus probed" => out.ncpus_probed = parse_num(value),
            "ncpus active" => out.ncpus_active = parse_num(value),
            "bogomips" => {
                if out.bogomips.is_none() {
                    out.bogomips = value.parse().ok();
                }
            }
            "cpu MHz" => {
                if let Some(c) = current.as_mut() {
                    c.mhz = value.parse().ok();
                }
            }
            "physical id" => {
                if let Some(c) = current.as_mut() {
                    c.physical_id = parse_num(value);
                }
            }
            "core id" => {
                if let Some(c) = current.as_mut() {
                    c.core_id = parse_num(value);
                }
            }
            "microcode" => {
                if let Some(c) = current.as_mut() {
                    c.microcode = Some(value.to_string());
                }
            }
            "CPU implementer" => midr_parts[0] = parse_num(value),
            "CPU variant" => midr_parts[1] = parse_num(value),
            "CPU part" => midr_parts[2] = parse_num(value),
            "CPU revision" => midr_parts[3] = parse_num(value),
            k if is_e2k_cache_key(k) => {
                if let Some(c) = parse_e2k_cache_line(value) {
                    out.e2k_caches.push(c);
                }
            }
            k if k.starts_with("Cpu") && k.ends_with("ClkTck") => {
                // UltraSPARC: "Cpu0ClkTck : 000000003b9aca00"
                if out.clock_tick_hz.is_none() {
                    out.clock_tick_hz =
                        u64::from_str_radix(value.trim_start_matches("0x"), 16).ok();
                }
            }
            k => {
                // MCST sparc64: "Cpu3 MHz : 2000.40"
                if let Some(n) = k
                    .strip_prefix("Cpu")
                    .and_then(|r| r.strip_suffix(" MHz"))
                    .and_then(|n| n.parse::<u32>().ok())
                {
                    if let Ok(mhz) = value.parse::<f64>() {
                        sparc_mhz.insert(n, mhz);
                    }
                }
            }
        }
    }
    flush(&mut current, &mut midr_parts, &mut out);
    if out.cpus.is_empty() && !sparc_mhz.is_empty() {
        // Per-CPU clocks of an MCST sparc64; these are not CPU counts (see module docs).
        out.cpus = sparc_mhz
            .into_iter()
            .map(|(n, mhz)| CpuinfoCpu {
                processor: Some(n),
                mhz: Some(mhz),
                ..CpuinfoCpu::default()
            })
            .collect();
    }
    if out.vendor.is_none() {
        if let Some(m) = out.cpus.iter().find_map(|c| c.midr) {
            out.vendor = super::midr::implementer_name(m.implementer).map(str::to_string);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e2k_cache_line() {
        let c = parse_e2k_cache_line(
            "level=3 type=Unified scope=Shared size=32768K line_size=64 associativity=16",
        )
        .unwrap();
        assert_eq!(c.level, 3);
        assert_eq!(c.size_bytes, Some(32 << 20));
        assert_eq!(c.ways, Some(16));
        assert_eq!(c.scope.as_deref(), Some("Shared"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_cache_size_bytes("8192K"), Some(8 << 20));
        assert_eq!(parse_cache_size_bytes("3145728"), Some(3 << 20));
        assert_eq!(parse_cache_size_bytes("K"), None);
        assert_eq!(parse_cache_size_bytes(""), None);
        assert_eq!(parse_cache_size_bytes("99999999999999999999G"), None);
    }

    #[test]
    fn arch_machine_names() {
        assert_eq!(Arch::from_machine("aarch64\n"), Arch::Aarch64);
        assert_eq!(Arch::from_machine("e2k"), Arch::E2k);
        assert_eq!(Arch::from_machine("weird"), Arch::Unknown);
    }
}

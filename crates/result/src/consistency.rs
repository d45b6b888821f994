//! What a loaded result file must hold beyond its types: sizes a machine can have, page sizes
//! its architecture has, strings of bounded length ([`check_document`]), and the wording of a
//! bad value in a one-line error ([`shown_number`], [`shown_value`]).
//!
//! The statistics of each metric (median, CV, ... against the stored samples) are checked by
//! [`crate::MetricResult::validate`]; both are run by [`crate::load`] through
//! [`crate::ResultFile::validate`], so `compare`, `qualify` and `report` get them from the one
//! loader. A problem is a [`FieldProblem`]: the JSON field path (`tests[3].point.params.
//! working_set_bytes`) and what is wrong, naming the value shortened
//! ([`hwsurvey_model::text::quote`]).

use std::fmt;

use hwsurvey_model::text::quote;
use serde_json::Value;

/// Largest plausible size of anything a result file records in a `*_bytes` field (working
/// set, buffer, file, cache, memory), bytes: 2^50 (1 PiB), far beyond the memory of any
/// machine a run measures (the largest single systems hold tens of TiB). The block devices of
/// the probe document (`machine.io`) are not bounded by it.
pub const MAX_SIZE_BYTES: u64 = 1 << 50;

/// A memory-resident size (working set, buffer, RSS, memory cap, cache) may exceed the
/// recorded machine's `MemTotal` by at most this factor (a wide margin: the plan never
/// allocates more than a fraction of `MemAvailable`, so a larger value was not measured).
pub const MEMORY_MARGIN: u64 = 8;

/// Fields (by name, the last key that is not `known`) whose value lives in memory, so is
/// bounded by [`MEMORY_MARGIN`] x the machine's `MemTotal`.
const MEMORY_RESIDENT: &[&str] = &[
    "memory_bytes",
    "working_set_bytes",
    "chase_working_set_bytes",
    "load_buffer_bytes",
    "table_bytes",
    "index_bytes",
    "rss_bytes",
    "hugetlb_bytes",
    "anon_huge_pages_bytes",
    "huge_backed_bytes",
    "memory_working_set_bytes",
    "memory_cap_bytes",
    "mem_available_bytes",
    "llc_total_bytes",
    "instance_size_bytes",
    "total_size_bytes",
];

/// Longest hostname, bytes: 64, the kernel's `__NEW_UTS_LEN` (include/uapi/linux/utsname.h;
/// `HOST_NAME_MAX` in glibc), which `/proc/sys/kernel/hostname` cannot exceed.
pub const MAX_HOSTNAME_BYTES: usize = 64;
/// Longest kernel string (uname release, version, machine), bytes: 64, `__NEW_UTS_LEN` as for
/// the hostname (`struct new_utsname` fields).
pub const MAX_KERNEL_STRING_BYTES: usize = 64;
/// Longest label (family, test id, metric name, profile id, object key), bytes.
pub const MAX_LABEL_BYTES: usize = 256;
/// Longest of any other string (reasons, paths, the kernel command line, cpuinfo flags),
/// bytes: 64 KiB, 16 times the largest `COMMAND_LINE_SIZE` of the architectures hwsurvey
/// builds for (4096).
pub const MAX_STRING_BYTES: usize = 64 << 10;

/// Fields holding labels, bounded by [`MAX_LABEL_BYTES`].
const LABELS: &[&str] = &["family", "id", "name", "profile_id", "label", "metric"];

/// One thing wrong in a result file: the JSON field path and what is wrong with its value
/// (which the problem names, shortened). Displays as `at <field>: <problem>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    /// JSON path of the field: `tests[3].metrics[0].summary.cv`.
    pub field: String,
    /// What is wrong, naming the value: `1.18e21 is not the CV of the 5 samples (0.0141)`.
    pub problem: String,
}

impl FieldProblem {
    /// A problem at `field`.
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> FieldProblem {
        FieldProblem {
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// The same problem with `prefix` put before its field: `tests[3].metrics[0]` + `.`
    /// + `summary.cv`.
    pub fn under(mut self, prefix: &str) -> FieldProblem {
        self.field = if self.field.is_empty() {
            prefix.to_string()
        } else if self.field.starts_with('[') {
            format!("{prefix}{}", self.field)
        } else {
            format!("{prefix}.{}", self.field)
        };
        self
    }
}

impl fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at {}: {}", self.field, self.problem)
    }
}

/// A number for an error message, short whatever its size: `-3.5`, `2097152`, `1.18e21`,
/// `1e300` (exponent form from 1e15 up and below 1e-4), `NaN`, `inf`.
pub fn shown_number(v: f64) -> String {
    if v.is_finite() && v != 0.0 && (v.abs() >= 1e15 || v.abs() < 1e-4) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A JSON value for an error message: integers as written, other numbers by
/// [`shown_number`], strings and anything else quoted and shortened
/// ([`hwsurvey_model::text::quote`]).
pub fn shown_value(v: &Value) -> String {
    match v {
        Value::Number(n) if n.is_u64() || n.is_i64() => n.to_string(),
        Value::Number(n) => shown_number(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => quote(s).to_string(),
        other => quote(&other.to_string()).to_string(),
    }
}

/// Architecture families whose page sizes are known here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArchPages {
    X86_64,
    X86_32,
    Aarch64,
    Sparc64,
    /// Another or no recorded architecture: a power of two from 4 KiB to 16 GiB.
    Other,
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

impl ArchPages {
    fn of(arch: &str) -> ArchPages {
        match arch {
            "x86_64" | "amd64" | "X86_64" => ArchPages::X86_64,
            "i386" | "i486" | "i586" | "i686" | "x86" => ArchPages::X86_32,
            "aarch64" | "arm64" | "AArch64" => ArchPages::Aarch64,
            "sparc64" | "sparcv9" | "SPARCV9" => ArchPages::Sparc64,
            _ => ArchPages::Other,
        }
    }

    /// Base page sizes (`PAGE_SIZE` choices), bytes.
    fn base(self) -> &'static [u64] {
        match self {
            // arch/x86/include/asm/page_types.h: PAGE_SHIFT 12
            ArchPages::X86_64 | ArchPages::X86_32 => &[4 * KIB],
            // arch/arm64/Kconfig: ARM64_4K_PAGES, ARM64_16K_PAGES, ARM64_64K_PAGES
            ArchPages::Aarch64 => &[4 * KIB, 16 * KIB, 64 * KIB],
            // arch/sparc/include/asm/page_64.h: PAGE_SHIFT 13
            ArchPages::Sparc64 => &[8 * KIB],
            ArchPages::Other => &[],
        }
    }

    /// hugetlb page sizes the kernel accepts, bytes.
    fn huge(self) -> &'static [u64] {
        match self {
            // arch/x86/mm/hugetlbpage.c arch_hugetlb_valid_size: PMD_SIZE, and PUD_SIZE with
            // X86_FEATURE_GBPAGES
            ArchPages::X86_64 => &[2 * MIB, GIB],
            // 32-bit: PMD_SIZE is 4 MiB without PAE, 2 MiB with it
            ArchPages::X86_32 => &[2 * MIB, 4 * MIB],
            // arch/arm64/mm/hugetlbpage.c, "HugeTLB Support Matrix" and
            // arch_hugetlb_valid_size: CONT_PTE, PMD, CONT_PMD, PUD of each granule:
            // 4K: 64K 2M 32M 1G; 16K: 2M 32M 1G; 64K: 2M 512M 16G
            ArchPages::Aarch64 => &[64 * KIB, 2 * MIB, 32 * MIB, 512 * MIB, GIB, 16 * GIB],
            // arch/sparc/mm/hugetlbpage.c setup_hugepagesz, shifts of
            // arch/sparc/include/asm/page_64.h: HPAGE_64K_SHIFT 16, HPAGE_SHIFT 23,
            // HPAGE_256MB_SHIFT 28, HPAGE_2GB_SHIFT 31, HPAGE_16GB_SHIFT 34
            ArchPages::Sparc64 => &[64 * KIB, 8 * MIB, 256 * MIB, 2 * GIB, 16 * GIB],
            ArchPages::Other => &[],
        }
    }

    /// Page sizes the MMU maps with (`MMUPageSize` in smaps) beyond base and hugetlb sizes:
    /// on sparc64 the TTE sizes of arch/sparc/include/asm/pgtable_64.h (`_PAGE_SZ512K_4V`,
    /// `_PAGE_SZ4MB_4V` (`REAL_HPAGE_SIZE`, half an 8 MiB huge page), `_PAGE_SZ32MB_4V`).
    fn mmu_extra(self) -> &'static [u64] {
        match self {
            ArchPages::Sparc64 => &[512 * KIB, 4 * MIB, 32 * MIB],
            _ => &[],
        }
    }
}

/// Which page sizes a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PageKind {
    /// `base_page_size_bytes`.
    Base,
    /// A hugetlb pool or page mode (`page_size_bytes`, `default_hugepage_size_bytes`,
    /// `pmd_size_bytes`).
    Huge,
    /// A mapping's page (`kernel_page_size_bytes`, `mmu_page_size_bytes`): base or huge.
    Mapping,
    /// A transparent huge page size (`thp.sizes[].size_bytes`): a power of two from 8 KiB to
    /// the largest huge page size.
    Thp,
}

/// The page sizes allowed for the recorded architectures, and the words saying so.
struct PageRule {
    archs: Vec<ArchPages>,
}

impl PageRule {
    fn allows(&self, kind: PageKind, v: u64) -> bool {
        let pow2_in = |lo: u64, hi: u64| v.is_power_of_two() && (lo..=hi).contains(&v);
        self.archs.iter().any(|&a| {
            if a == ArchPages::Other {
                return pow2_in(4 * KIB, 16 * GIB);
            }
            match kind {
                PageKind::Base => a.base().contains(&v),
                PageKind::Huge => a.huge().contains(&v),
                PageKind::Mapping => {
                    a.base().contains(&v) || a.huge().contains(&v) || a.mmu_extra().contains(&v)
                }
                PageKind::Thp => {
                    pow2_in(8 * KIB, a.huge().iter().copied().max().unwrap_or(16 * GIB))
                }
            }
        })
    }

    fn words(&self, kind: PageKind) -> String {
        let sizes = |list: &[u64]| {
            list.iter()
                .map(|&s| crate::page_mode::binary_size(s))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let what = match kind {
            PageKind::Base => "a base page size",
            PageKind::Huge => "a huge page size",
            PageKind::Mapping => "a page size",
            PageKind::Thp => "a transparent huge page size",
        };
        let each: Vec<String> = self
            .archs
            .iter()
            .map(|&a| {
                let name = match a {
                    ArchPages::X86_64 => "x86_64",
                    ArchPages::X86_32 => "i686",
                    ArchPages::Aarch64 => "aarch64",
                    ArchPages::Sparc64 => "sparc64",
                    ArchPages::Other => return "a power of two from 4KiB to 16GiB".to_string(),
                };
                let list = match kind {
                    PageKind::Base => sizes(a.base()),
                    PageKind::Huge => sizes(a.huge()),
                    PageKind::Mapping => {
                        let mut all: Vec<u64> = [a.base(), a.huge(), a.mmu_extra()].concat();
                        all.sort_unstable();
                        sizes(&all)
                    }
                    PageKind::Thp => format!(
                        "a power of two from 8KiB to {}",
                        crate::page_mode::binary_size(
                            a.huge().iter().copied().max().unwrap_or(16 * GIB)
                        )
                    ),
                };
                format!("{name}: {list}")
            })
            .collect();
        format!(
            "not {what} of the recorded architecture ({})",
            each.join("; ")
        )
    }
}

/// The architectures a file records: `environment.arch`, `tool.arch`, `machine.cpu.arch` and
/// the kernel's machine (`machine.os.kernel.machine`, `machine.os.binary_vs_kernel.
/// kernel_machine`). Under qemu-user they differ (a sparc64 binary on an x86_64 kernel reports
/// the kernel's huge page sizes and its own base page size), so a size of any of them is
/// accepted. The machine document may be in either form: tagged (`.../known/...`, in memory
/// and in version 1 files) or plain (version 2 files, which the loader checks before the
/// typed machine is read from them).
fn recorded_archs(doc: &Value) -> Vec<ArchPages> {
    let mut out = Vec::new();
    for ptr in [
        "/environment/arch",
        "/tool/arch",
        "/machine/cpu/arch",
        "/machine/cpu/arch/known",
        "/machine/os/kernel/machine/known",
        "/machine/os/kernel/machine",
        "/machine/os/binary_vs_kernel/known/kernel_machine",
        "/machine/os/binary_vs_kernel/kernel_machine",
    ] {
        if let Some(a) = doc.pointer(ptr).and_then(Value::as_str) {
            let a = ArchPages::of(a);
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    if out.is_empty() {
        out.push(ArchPages::Other);
    }
    out
}

/// Bounds of one walk over a document.
struct Walk {
    pages: PageRule,
    /// `MemTotal` of the recorded machine, bytes, when known.
    mem_total_bytes: Option<u64>,
}

/// Checks a whole result document (as JSON) for values no run records:
///
/// - every `*_bytes` number is a whole number from 0 to [`MAX_SIZE_BYTES`] (block devices of
///   `machine.io` excepted), and a memory-resident one (working set, buffer, RSS, memory cap,
///   cache) at most [`MEMORY_MARGIN`] x the machine's `MemTotal`
///   (`machine.memory.meminfo.known.mem_total_bytes`) when that is known;
/// - page sizes (`base_page_size_bytes`, hugetlb `page_size_bytes`,
///   `default_hugepage_size_bytes`, `pmd_size_bytes`, a mapping's `kernel_page_size_bytes` and
///   `mmu_page_size_bytes`, THP `sizes[].size_bytes`) are sizes of the recorded architecture
///   (x86_64, aarch64, sparc64, i686 from the kernel sources named in the code; another
///   architecture: a power of two from 4 KiB to 16 GiB);
/// - strings and object keys are at most [`MAX_HOSTNAME_BYTES`] (`hostname`),
///   [`MAX_KERNEL_STRING_BYTES`] (`kernel_release`, `kernel_machine`, `machine.os.kernel.*`),
///   [`MAX_LABEL_BYTES`] (family, id, name, keys) or [`MAX_STRING_BYTES`] (others) long.
///
/// The machine document may be tagged (in memory and in version 1 files) or plain (a version
/// 2 file as the loader reads it, before the typed machine is built from it: its `unknown`
/// map of reasons is walked like any other member); a field's name is the same in both, as
/// is its path once [`crate::validate`] writes it as the file on disk spells it.
///
/// Err: the first problem found, in document order.
pub fn check_document(doc: &Value) -> Result<(), FieldProblem> {
    let walk = Walk {
        pages: PageRule {
            archs: recorded_archs(doc),
        },
        // the machine document tagged (in memory, version 1) or plain (version 2 on disk)
        mem_total_bytes: [
            "/machine/memory/meminfo/known/mem_total_bytes",
            "/machine/memory/meminfo/mem_total_bytes",
        ]
        .iter()
        .find_map(|p| doc.pointer(p).and_then(Value::as_u64))
        .filter(|&m| m > 0),
    };
    let mut path = Vec::new();
    walk.value(doc, &mut path)
}

/// One step of a JSON path.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

fn path_text(path: &[Step]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                // keys are bounded before they are pushed
                s.push_str(k);
            }
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

impl Walk {
    fn value<'a>(&self, v: &'a Value, path: &mut Vec<Step<'a>>) -> Result<(), FieldProblem> {
        match v {
            Value::Object(map) => {
                for (k, x) in map {
                    if k.len() > MAX_LABEL_BYTES {
                        return Err(FieldProblem::new(
                            path_text(path),
                            format!(
                                "holds the key {}, longer than the {MAX_LABEL_BYTES} bytes of a label",
                                quote(k)
                            ),
                        ));
                    }
                    path.push(Step::Key(k));
                    let r = self.value(x, path);
                    path.pop();
                    r?;
                }
                Ok(())
            }
            Value::Array(list) => {
                for (i, x) in list.iter().enumerate() {
                    path.push(Step::Index(i));
                    let r = self.value(x, path);
                    path.pop();
                    r?;
                }
                Ok(())
            }
            Value::String(s) => self.string(s, path),
            Value::Number(_) => self.number(v, path),
            Value::Bool(_) | Value::Null => Ok(()),
        }
    }

    /// The field's name: the last key that is not a `known` wrapper (`Probed<T>`), and the key
    /// before it.
    fn names<'a>(path: &[Step<'a>]) -> (Option<&'a str>, Option<&'a str>) {
        let mut keys = path.iter().rev().filter_map(|s| match s {
            Step::Key(k) if *k != "known" => Some(*k),
            _ => None,
        });
        (keys.next(), keys.next())
    }

    fn string(&self, s: &str, path: &[Step]) -> Result<(), FieldProblem> {
        let (name, parent) = Self::names(path);
        let (max, what) = match (name, parent) {
            (Some("hostname"), _) => (MAX_HOSTNAME_BYTES, "a hostname (__NEW_UTS_LEN)"),
            (Some("kernel_release" | "kernel_machine"), _)
            | (Some("release" | "version" | "machine"), Some("kernel")) => (
                MAX_KERNEL_STRING_BYTES,
                "a kernel string (__NEW_UTS_LEN of uname)",
            ),
            (Some(n), _) if LABELS.contains(&n) => (MAX_LABEL_BYTES, "a label"),
            _ => (MAX_STRING_BYTES, "a string in a result file"),
        };
        if s.len() > max {
            return Err(FieldProblem::new(
                path_text(path),
                format!("{} is longer than the {max} bytes of {what}", quote(s)),
            ));
        }
        Ok(())
    }

    fn number(&self, v: &Value, path: &[Step]) -> Result<(), FieldProblem> {
        let (Some(name), parent) = Self::names(path) else {
            return Ok(());
        };
        if !name.ends_with("_bytes") {
            return Ok(());
        }
        let in_io = matches!(
            path.first().zip(path.get(1)),
            Some((Step::Key("machine"), Step::Key("io")))
        );
        let bad = |problem: String| Err(FieldProblem::new(path_text(path), problem));
        let shown = shown_value(v);
        let f = v.as_f64().unwrap_or(f64::NAN);
        if !(f >= 0.0 && f.fract() == 0.0) {
            return bad(format!(
                "{shown} is not a size in bytes (a whole number >= 0)"
            ));
        }
        if in_io {
            return Ok(());
        }
        let Some(n) = v.as_u64().filter(|&n| n <= MAX_SIZE_BYTES) else {
            return bad(format!(
                "{shown} bytes is not plausible (above 2^50 bytes, 1 PiB)"
            ));
        };
        if let Some(total) = self.mem_total_bytes {
            if MEMORY_RESIDENT.contains(&name) && n > total.saturating_mul(MEMORY_MARGIN) {
                return bad(format!(
                    "{n} bytes is not plausible on the recorded machine: more than \
                     {MEMORY_MARGIN} x its MemTotal ({total} bytes, \
                     machine.memory.meminfo.known.mem_total_bytes)"
                ));
            }
        }
        let kind = match (name, parent) {
            ("base_page_size_bytes", _) => Some(PageKind::Base),
            ("page_size_bytes" | "default_hugepage_size_bytes" | "pmd_size_bytes", _) => {
                Some(PageKind::Huge)
            }
            ("kernel_page_size_bytes" | "mmu_page_size_bytes", _) => Some(PageKind::Mapping),
            ("size_bytes", Some("sizes")) => Some(PageKind::Thp),
            _ => None,
        };
        if let Some(kind) = kind {
            if !self.pages.allows(kind, n) {
                return bad(format!("{n} is {}", self.pages.words(kind)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short() {
        assert_eq!(shown_number(-3.5), "-3.5");
        assert_eq!(shown_number(1.18e21), "1.18e21");
        assert_eq!(shown_number(1e300), "1e300");
        assert_eq!(shown_number(0.0), "0");
        assert_eq!(
            shown_value(&serde_json::json!(u64::MAX)),
            "18446744073709551615"
        );
        assert_eq!(shown_value(&serde_json::json!("a\u{1b}b")), "\"a\\u{1b}b\"");
    }

    #[test]
    fn page_sizes_by_architecture() {
        let rule = |a: &str| PageRule {
            archs: vec![ArchPages::of(a)],
        };
        let x86 = rule("x86_64");
        assert!(x86.allows(PageKind::Huge, 2 * MIB));
        assert!(x86.allows(PageKind::Huge, GIB));
        assert!(!x86.allows(PageKind::Huge, 32 * MIB));
        assert!(!x86.allows(PageKind::Huge, u64::MAX));
        assert!(!x86.allows(PageKind::Base, 64 * KIB));
        let arm = rule("aarch64");
        for s in [64 * KIB, 2 * MIB, 32 * MIB, 512 * MIB, GIB, 16 * GIB] {
            assert!(arm.allows(PageKind::Huge, s), "{s}");
        }
        assert!(arm.allows(PageKind::Base, 16 * KIB));
        assert!(!arm.allows(PageKind::Huge, 4 * MIB));
        let sparc = rule("sparc64");
        assert!(sparc.allows(PageKind::Base, 8 * KIB));
        assert!(!sparc.allows(PageKind::Base, 4 * KIB));
        assert!(sparc.allows(PageKind::Huge, 8 * MIB));
        assert!(sparc.allows(PageKind::Mapping, 4 * MIB));
        assert!(!sparc.allows(PageKind::Huge, 2 * MIB));
        assert_eq!(
            x86.words(PageKind::Huge),
            "not a huge page size of the recorded architecture (x86_64: 2MiB, 1GiB)"
        );
        let other = rule("riscv64");
        assert!(other.allows(PageKind::Huge, 2 * MIB));
        assert!(!other.allows(PageKind::Huge, 3 * MIB));
    }
}

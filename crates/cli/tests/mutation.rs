//! The mutation campaign of issue 16, as a test: from a fixed seed, thousands of mutated
//! inputs of three kinds, each run in-process through the library entry points the commands
//! use, with the failing input saved so that a failure is reproducible.
//!
//! - **captures**: real /proc + /sys captures of `../shared/fixtures` (extracted once), with
//!   1-3 of the files the probe reads truncated, byte-flipped, given huge numbers, negative
//!   ids, control characters, a 1 MiB line, a huge CPU list (`0-1048575`), deleted, replaced
//!   by a self-loop or escaping symlink or a folder, or a folder turned into a symlink loop.
//!   Runs `probe_machine`, the `hwsurvey probe` summary, `qualify` on the probed facts and its
//!   renderers.
//! - **results**: `reports/examples/*.json` and the report crate's sample files, with JSON
//!   values replaced (huge, negative, fractional or non-finite-looking numbers; 1 MiB strings
//!   with ESC, BEL, NUL; formula labels; keys removed) or the text cut or flipped. Runs
//!   `hwsurvey_result::load`, `compare` against the clean file, every renderer and plot, and
//!   `qualify` of the file (stored and recomputed findings).
//! - **elf**: real binaries (`/usr/bin/true`, the aarch64 and sparc64 C libraries of the cross
//!   toolchains, the header of the `hwsurvey` binary) with header and program-header fields
//!   set to edge values, cut or flipped. Runs `parse_header`, `inspect`, qualify's ELF reader,
//!   the target checks and the `binary.arch` rule.
//!
//! Each input must give: no panic (caught), no hang (each input runs in its own thread with a
//! deadline), bounded output (against the clean input's), no raw control character in text
//! meant for a terminal, a document or a spreadsheet, one-line bounded errors, and none of the
//! "silent wrong" classes of issue 16 (a CPU set beyond `possible` or beyond the kernel's
//! maximum, a page size the architecture cannot have, more free huge pages than pages, a pool
//! beyond the machine's memory, a CV that its samples contradict, an impossible huge-page size
//! or working set in a loaded result file, a binary passed for a machine its kernel cannot run).
//!
//! Environment:
//! - `HWSURVEY_MUTATION_SEED` (default 0x16_2026): the campaign's seed (decimal or 0x hex);
//! - `HWSURVEY_MUTATION_CASES` (default 2000): inputs per run, 30% captures, 20% result files,
//!   50% ELF files (scripts/cross-test sets it low: emulation runs 10-50x slower);
//! - `HWSURVEY_MUTATION_ONLY=N`: run only input N of each kind (to reproduce one failure);
//! - `HWSURVEY_MUTATION_DEADLINE_S` (default 60): the time one input may take.
//!
//! A failure saves its input under `<target>/mutation-failures/<kind>-<N>/` (the mutated
//! capture tree, result file or ELF file, and `mutation.txt` saying what was done) and its
//! message names the seed, the index and that folder.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hwsurvey_model::text::is_unsafe;
use hwsurvey_model::{CpuSet, Probed};
use hwsurvey_probe::cpu::{Arch, MAX_CPUS};
use hwsurvey_probe::{probe_machine, Machine, SysRoot};
use hwsurvey_qualify::{from_machine, qualify, RuleSet, Verdict};

// ---------------------------------------------------------------------------------------
// Campaign plumbing: seed, counts, a splitmix64 generator, one thread per input.

const DEFAULT_SEED: u64 = 0x16_2026;
/// Inputs per run, all kinds together: 30% captures, 20% result files, 50% ELF files.
const DEFAULT_CASES: usize = 2000;
const MIB: usize = 1 << 20;

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
    .or_else(|| panic!("{name}={v:?}: expected a number"))
}

fn seed() -> u64 {
    env_u64("HWSURVEY_MUTATION_SEED").unwrap_or(DEFAULT_SEED)
}

/// The indices of the inputs this run makes for one kind: `percent` of the campaign's count
/// (captures and result files cost 10-50 ms each in a debug build, an ELF header far less).
fn cases(percent: usize) -> Vec<usize> {
    if let Some(only) = env_u64("HWSURVEY_MUTATION_ONLY") {
        return vec![only as usize];
    }
    let n = env_u64("HWSURVEY_MUTATION_CASES").map_or(DEFAULT_CASES, |n| n as usize);
    (0..(n * percent).div_ceil(100)).collect()
}

fn deadline() -> Duration {
    Duration::from_secs(env_u64("HWSURVEY_MUTATION_DEADLINE_S").unwrap_or(60))
}

/// splitmix64 (Steele, Lea, Flood 2014): small, fast, and every input is reproducible from
/// (seed, kind, index) alone.
struct Rng(u64);

impl Rng {
    fn for_case(seed: u64, kind: &str, index: usize) -> Rng {
        let mut h = seed ^ 0x9e37_79b9_7f4a_7c15;
        for b in kind.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        let mut r = Rng(h ^ (index as u64).wrapping_mul(0xd1b5_4a32_d192_ed03));
        r.next();
        r
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// `<target>/mutation-failures` (target/ natively, target/cross/ for the qemu suites).
fn failures_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("mutation-failures")
}

/// Runs `work` in its own thread, catching a panic and bounding its time. `Err` says what
/// went wrong (a panic's message, the deadline, or the checks' findings).
fn bounded<F>(work: F) -> Result<Duration, String>
where
    F: FnOnce() -> Result<(), String> + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            let r = match r {
                Ok(r) => r,
                Err(payload) => Err(format!(
                    "PANIC: {}",
                    payload
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "(no message)".into())
                )),
            };
            let _ = tx.send(r);
        })
        .expect("spawn a worker thread");
    match rx.recv_timeout(deadline()) {
        Ok(r) => r.map(|()| start.elapsed()),
        Err(_) => Err(format!(
            "HANG: no answer within {} s (HWSURVEY_MUTATION_DEADLINE_S)",
            deadline().as_secs()
        )),
    }
}

/// Saves what `save` writes into `<target>/mutation-failures/<kind>-<index>/` and returns the
/// failure's message, naming the seed, the index, the folder and every finding.
fn fail(kind: &str, index: usize, what: &str, findings: &str, save: impl FnOnce(&Path)) -> String {
    let dir = failures_dir().join(format!("{kind}-{index}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the failure folder");
    std::fs::write(
        dir.join("mutation.txt"),
        format!(
            "kind {kind}, seed {:#x}, index {index}\n{what}\n\nfindings:\n{findings}\n",
            seed()
        ),
    )
    .expect("write mutation.txt");
    save(&dir);
    format!(
        "{kind} input {index} (HWSURVEY_MUTATION_SEED={:#x} HWSURVEY_MUTATION_ONLY={index}; \
         input saved in {}):\n  {what}\n  {}",
        seed(),
        dir.display(),
        findings.replace('\n', "\n  ")
    )
}

/// Panics listing the failed inputs (the first 20 in full), if any.
fn report(kind: &str, total: usize, failures: &[String]) {
    if failures.is_empty() {
        return;
    }
    let shown: Vec<&String> = failures.iter().take(20).collect();
    panic!(
        "mutation campaign: {} of {total} {kind} inputs failed (seed {:#x}):\n{}",
        failures.len(),
        seed(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Characters that must not reach a terminal, a Markdown/CSV/HTML document or an SVG raw
/// (newlines and tabs are layout).
fn raw_controls(text: &str) -> Vec<char> {
    let mut seen: Vec<char> = text
        .chars()
        .filter(|c| is_unsafe(*c) && *c != '\n' && *c != '\t')
        .collect();
    seen.sort();
    seen.dedup();
    seen
}

/// An error message is one line, bounded and free of control characters.
fn check_error_line(what: &str, message: &str, out: &mut Vec<String>) {
    if message.contains('\n') {
        out.push(format!(
            "{what}: error of several lines: {:?}",
            cut(message)
        ));
    }
    if message.len() > 1200 {
        out.push(format!(
            "{what}: error of {} bytes: {:?}",
            message.len(),
            cut(message)
        ));
    }
    let raw = raw_controls(message);
    if !raw.is_empty() {
        out.push(format!("{what}: raw control characters {raw:?} in error"));
    }
}

fn cut(s: &str) -> String {
    hwsurvey_model::text::one_line(s, 300).into_owned()
}

fn summary_text(m: &Machine) -> String {
    // what `hwsurvey probe` prints (crates/cli/src/cmd/probe.rs, render_summary)
    let mut out = hwsurvey_probe::summary::topology_summary(m);
    for section in [
        hwsurvey_probe::memory::summary(&m.memory),
        hwsurvey_probe::io::summary(&m.io),
        hwsurvey_probe::os::summary(&m.os),
    ] {
        out.push('\n');
        out.push_str(&section);
        out.push('\n');
    }
    out.push_str(&hwsurvey_probe::summary::unknowns_summary(m));
    out
}

fn qualify_texts(report: &hwsurvey_qualify::Report) -> Vec<(&'static str, String)> {
    use hwsurvey_qualify::render::{render, Format};
    vec![
        ("qualify terminal", render(report, Format::Terminal)),
        ("qualify markdown", render(report, Format::Markdown)),
        ("qualify json", render(report, Format::Json)),
    ]
}

/// Bounded output: at most twice the clean input's plus `slack` bytes.
fn check_bounded(what: &str, len: usize, clean: usize, slack: usize, out: &mut Vec<String>) {
    if len > 2 * clean + slack {
        out.push(format!(
            "{what}: {len} bytes of output, against {clean} for the clean input"
        ));
    }
}

// ---------------------------------------------------------------------------------------
// Kind 1: captures of /proc and /sys.

/// Captures with archives (tree roots), chosen for variety: x86 with THP/mTHP/hugetlb, x86
/// with SMBIOS Type 17 blobs, hybrid x86, sparc64 with offline CPUs, big.LITTLE arm64,
/// ppc64 with a memory-less node, s390x with offline books.
const CAPTURES: &[&str] = &[
    "x86_64-firecracker-guest-epyc-2vcpu-thp-mthp",
    "x86_64-intel-2s-2numa-dmi-type17-raw",
    "x86_64-intel-raptorlake-hybrid-pe-cores",
    "sparc64-ultrasparc-t1-offline",
    "aarch64-biglittle-a510-a710-a715-x3",
    "ppc64-power7-64cpu-memoryless-node",
    "s390x-z196-lpar-offline-books",
];

struct Capture {
    name: &'static str,
    _dir: tempfile::TempDir,
    root: PathBuf,
    /// Kernel paths of the regular files the clean probe read.
    files: Vec<String>,
    /// Kernel paths of folders holding them.
    dirs: Vec<String>,
    clean_json: usize,
    clean_summary: usize,
    clean_qualify: Vec<usize>,
}

fn load_capture(fixtures: &Path, name: &'static str) -> Option<Capture> {
    let folder = fixtures.join(name);
    let archive = std::fs::read_dir(&folder)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".tar.gz") || n.ends_with(".tar.bz2")
        })?;
    let (dir, root) = hwsurvey_testkit::extract(&archive);
    let sys = SysRoot::new(&root);
    let m = probe_machine(&sys);
    let files: Vec<String> = sys
        .accessed()
        .into_iter()
        .filter(|p| {
            std::fs::symlink_metadata(sys.host_path(p)).is_ok_and(|md| md.file_type().is_file())
        })
        .collect();
    let dirs: BTreeSet<String> = files
        .iter()
        .filter_map(|p| p.rsplit_once('/').map(|(d, _)| d.to_string()))
        .filter(|d| d.matches('/').count() >= 2)
        .collect();
    let report = qualify("capture", &from_machine(&m), &RuleSet::builtin());
    Some(Capture {
        name,
        _dir: dir,
        clean_json: serde_json::to_string(&m).unwrap().len(),
        clean_summary: summary_text(&m).len(),
        clean_qualify: qualify_texts(&report)
            .iter()
            .map(|(_, t)| t.len())
            .collect(),
        root,
        files,
        dirs: dirs.into_iter().collect(),
    })
}

/// What one mutation did to a capture, to undo it.
enum Undo {
    /// Restore this file's bytes (whatever is at the path now is removed first).
    File(PathBuf, Vec<u8>),
    /// Move the folder back from where it was put aside.
    Dir { path: PathBuf, aside: PathBuf },
}

fn remove_any(p: &Path) {
    match std::fs::symlink_metadata(p) {
        Ok(md) if md.is_dir() => std::fs::remove_dir_all(p).unwrap(),
        Ok(_) => std::fs::remove_file(p).unwrap(),
        Err(_) => {}
    }
}

fn undo(u: Undo) {
    match u {
        Undo::File(p, bytes) => {
            remove_any(&p);
            std::fs::write(&p, bytes).unwrap();
        }
        Undo::Dir { path, aside } => {
            remove_any(&path);
            std::fs::rename(&aside, &path).unwrap();
        }
    }
}

/// Replaces one run of decimal digits of `text` (picked at random) by `by`; appends it when
/// there is none.
fn replace_number(rng: &mut Rng, text: &[u8], by: &str) -> Vec<u8> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i].is_ascii_digit() {
            let start = i;
            while i < text.len() && text[i].is_ascii_digit() {
                i += 1;
            }
            runs.push((start, i));
        } else {
            i += 1;
        }
    }
    if runs.is_empty() {
        let mut v = text.to_vec();
        v.extend_from_slice(by.as_bytes());
        return v;
    }
    let (a, b) = *rng.pick(&runs);
    let mut v = text[..a].to_vec();
    v.extend_from_slice(by.as_bytes());
    v.extend_from_slice(&text[b..]);
    v
}

const HUGE_NUMBERS: &[&str] = &[
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "4294967295",
    "4294967296",
    "99999999999999999999999999999",
    "1e300",
    "0",
];

const NEGATIVE_IDS: &[&str] = &["-1", "-2", "-9223372036854775808", "-4294967296", "-0"];

const CONTROLS: &[&str] = &[
    "\u{1b}[2J",
    "\u{7}",
    "\0",
    "\r",
    "\u{202e}",
    "\u{1b}]0;pwned\u{7}",
    "\u{fffe}",
    "\n\n",
];

fn huge_lists() -> Vec<String> {
    let mut v: Vec<String> = [
        "0-1048575",
        "0-4294967295",
        "0-18446744073709551615",
        "0-8191",
        "8191",
        "8192",
        "3-1",
        "0-3:2/4",
        "0--1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // 1 MiB of overlapping ranges (each within the kernel's maximum)
    v.push("0-8191,".repeat(150_000));
    // a mask with 8192 bits set, then one with 2^20 bits
    v.push(vec!["ffffffff"; 256].join(","));
    v.push(vec!["ffffffff"; 32768].join(","));
    // 32768 single CPUs
    v.push(
        (0..32768)
            .map(|i| (2 * i).to_string())
            .collect::<Vec<_>>()
            .join(","),
    );
    v
}

/// A 1 MiB line: the file's own first token repeated, or letters with control characters.
fn mib_line(rng: &mut Rng, text: &[u8]) -> Vec<u8> {
    let unit: Vec<u8> = match rng.below(3) {
        0 => {
            let t = String::from_utf8_lossy(text);
            let tok = t.split_whitespace().next().unwrap_or("x").to_string();
            format!("{tok},").into_bytes()
        }
        1 => b"A".to_vec(),
        _ => "evil\u{1b}[2J\u{7}\0<&>\u{202e}".as_bytes().to_vec(),
    };
    let mut v = Vec::with_capacity(MIB + 64);
    while v.len() < MIB {
        v.extend_from_slice(&unit);
    }
    if rng.chance(50) {
        v.push(b'\n');
    }
    v
}

/// Applies one mutation to the file at kernel path `path`; returns the words for it.
fn mutate_file(rng: &mut Rng, root: &Path, path: &str, undos: &mut Vec<Undo>) -> String {
    let host = root.join(path.trim_start_matches('/'));
    let original = std::fs::read(&host).unwrap_or_default();
    undos.push(Undo::File(host.clone(), original.clone()));
    let write = |bytes: &[u8]| {
        remove_any(&host);
        std::fs::write(&host, bytes).unwrap();
    };
    match rng.below(14) {
        0 => {
            let at = if original.is_empty() {
                0
            } else {
                rng.below(original.len())
            };
            write(&original[..at]);
            format!("{path}: truncated to {at} of {} bytes", original.len())
        }
        1 => {
            let mut v = original.clone();
            if v.is_empty() {
                v.push(0xff);
            }
            let n = 1 + rng.below(8);
            for _ in 0..n {
                let at = rng.below(v.len());
                v[at] ^= 1 << rng.below(8);
            }
            write(&v);
            format!("{path}: {n} bits flipped")
        }
        2 => {
            let mut v = original.clone();
            if v.is_empty() {
                v.push(0);
            }
            let n = 1 + rng.below(4);
            for _ in 0..n {
                let at = rng.below(v.len());
                v[at] = rng.next() as u8;
            }
            write(&v);
            format!("{path}: {n} random bytes")
        }
        3 | 4 => {
            let by = *rng.pick(HUGE_NUMBERS);
            write(&replace_number(rng, &original, by));
            format!("{path}: a number replaced by {by}")
        }
        5 => {
            let by = *rng.pick(NEGATIVE_IDS);
            write(&replace_number(rng, &original, by));
            format!("{path}: a number replaced by {by}")
        }
        6 => {
            let c = *rng.pick(CONTROLS);
            let mut v = original.clone();
            let at = if v.is_empty() { 0 } else { rng.below(v.len()) };
            v.splice(at..at, c.bytes());
            write(&v);
            format!("{path}: {c:?} inserted at byte {at}")
        }
        7 => {
            let v = mib_line(rng, &original);
            write(&v);
            format!(
                "{path}: a 1 MiB line ({:?}...)",
                cut(&String::from_utf8_lossy(&v[..40]))
            )
        }
        8 => {
            let lists = huge_lists();
            let l = rng.pick(&lists);
            write(format!("{l}\n").as_bytes());
            format!("{path}: the list {:?}", cut(l))
        }
        9 => {
            remove_any(&host);
            format!("{path}: deleted")
        }
        10 => {
            remove_any(&host);
            let name = host.file_name().unwrap().to_owned();
            std::os::unix::fs::symlink(&name, &host).unwrap();
            format!("{path}: a symlink to itself")
        }
        11 => {
            remove_any(&host);
            let target = *rng.pick(&[
                "/dev/zero",
                "../../../../../../../../../../dev/zero",
                "/proc/self/mem",
                "../../../../../../../../../../etc/passwd",
                "/nonexistent",
            ]);
            std::os::unix::fs::symlink(target, &host).unwrap();
            format!("{path}: a symlink to {target}")
        }
        12 => {
            remove_any(&host);
            std::fs::create_dir(&host).unwrap();
            format!("{path}: a folder")
        }
        _ => {
            write(b"");
            format!("{path}: emptied")
        }
    }
}

/// Turns the folder at kernel path `dir` into a symlink loop (itself, or a pair).
fn loop_dir(rng: &mut Rng, root: &Path, dir: &str, undos: &mut Vec<Undo>) -> String {
    let host = root.join(dir.trim_start_matches('/'));
    let aside = host.with_extension("mutation-aside");
    std::fs::rename(&host, &aside).unwrap();
    undos.push(Undo::Dir {
        path: host.clone(),
        aside,
    });
    let name = host.file_name().unwrap().to_owned();
    if rng.chance(50) {
        std::os::unix::fs::symlink(&name, &host).unwrap();
        format!("{dir}: a symlink to itself")
    } else {
        // dir -> dir.loop -> dir
        let other = host.with_extension("mutation-loop");
        std::os::unix::fs::symlink(other.file_name().unwrap(), &host).unwrap();
        remove_any(&other);
        std::os::unix::fs::symlink(&name, &other).unwrap();
        undos.push(Undo::File(other.clone(), Vec::new()));
        format!("{dir}: a symlink loop through {}", other.display())
    }
}

/// Copies a tree, keeping symlinks as symlinks (loops included).
fn copy_tree(from: &Path, to: &Path) {
    let Ok(md) = std::fs::symlink_metadata(from) else {
        return;
    };
    if md.file_type().is_symlink() {
        if let Ok(t) = std::fs::read_link(from) {
            let _ = std::os::unix::fs::symlink(t, to);
        }
    } else if md.is_dir() {
        let _ = std::fs::create_dir_all(to);
        if let Ok(rd) = std::fs::read_dir(from) {
            for e in rd.flatten() {
                copy_tree(&e.path(), &to.join(e.file_name()));
            }
        }
    } else if md.is_file() {
        let _ = std::fs::copy(from, to);
    }
}

/// The base page sizes Linux has on `arch` (None: not known here, any power of two).
fn page_sizes_of(arch: Arch) -> Option<&'static [u64]> {
    Some(match arch {
        Arch::X86_64 | Arch::X86 | Arch::S390x | Arch::E2k => &[4096],
        Arch::Sparc64 => &[8192],
        Arch::Aarch64 => &[4096, 16384, 65536],
        Arch::Ppc64 => &[4096, 65536],
        Arch::Ia64 => &[4096, 8192, 16384, 65536],
        Arch::Loongarch64 => &[4096, 16384, 65536],
        Arch::Riscv64 | Arch::Arm => &[4096],
        Arch::Unknown => return None,
    })
}

/// The "silent wrong" classes of issue 16 on a probed machine: a value the probe states as a
/// fact that no kernel can have reported.
fn machine_facts_problems(m: &Machine, out: &mut Vec<String>) {
    let c = &m.cpu;
    let max = |s: &CpuSet| s.last().map(|v| v as u64);
    let sets = [
        ("possible", &c.possible),
        ("present", &c.present),
        ("online", &c.online),
        ("offline", &c.offline),
        ("present_offline", &c.present_offline),
        ("allowed status", &c.allowed.status_cpus),
        ("allowed cgroup", &c.allowed.cgroup_cpus),
    ];
    for (name, set) in sets {
        if let Probed::Known(s) = set {
            if max(s).is_some_and(|v| v >= MAX_CPUS as u64) {
                out.push(format!(
                    "cpu.{name} holds CPU {} (beyond the kernel maximum {MAX_CPUS})",
                    max(s).unwrap()
                ));
            }
        }
    }
    if let Probed::Known(possible) = &c.possible {
        for (name, set) in &sets[1..5] {
            if let Probed::Known(s) = set {
                if !s.is_subset(possible) {
                    out.push(format!(
                        "cpu.{name} {} is not within possible {}",
                        cut(&s.to_list_string()),
                        cut(&possible.to_list_string())
                    ));
                }
            }
        }
        if let Probed::Known(t) = &c.topology.threads {
            if *t as usize > possible.len() {
                out.push(format!(
                    "{t} online threads on a machine of {} possible CPUs",
                    possible.len()
                ));
            }
        }
        for k in &c.kinds {
            if !k.cpus.is_subset(possible) {
                out.push(format!("core kind {:?} holds CPUs beyond possible", k.name));
            }
        }
        for n in &m.numa.nodes {
            if let Probed::Known(s) = &n.cpus {
                if !s.is_subset(possible) {
                    out.push(format!("NUMA node {} holds CPUs beyond possible", n.node));
                }
            }
        }
        for cache in &c.caches {
            if cache.instances as usize > possible.len().max(1) {
                out.push(format!(
                    "L{} has {} instances on {} possible CPUs",
                    cache.level,
                    cache.instances,
                    possible.len()
                ));
            }
        }
    }
    for cache in &c.caches {
        if !(1..=5).contains(&cache.level) {
            out.push(format!("a cache of level {}", cache.level));
        }
        if let Probed::Known(s) = &cache.size_bytes {
            if *s == 0 || *s > 4 << 30 {
                out.push(format!("L{} instance of {s} bytes", cache.level));
            }
        }
    }
    if let (Probed::Known(cores), Probed::Known(threads)) = (&c.topology.cores, &c.topology.threads)
    {
        if cores > threads {
            out.push(format!("{cores} cores for {threads} threads"));
        }
    }
    for id in &c.topology.package_ids {
        if *id < 0 {
            out.push(format!("package id {id} counted as a package"));
        }
    }
    if c.kinds.len() > 1 {
        let mut all = CpuSet::new();
        for k in &c.kinds {
            if !all.intersection(&k.cpus).is_empty() {
                out.push(format!("core kind {:?} overlaps another kind", k.name));
            }
            all = all.union(&k.cpus);
        }
    }
    // pages
    let p = &m.pages;
    if let Probed::Known(size) = &p.base_page_size_bytes {
        if let Some(allowed) = page_sizes_of(c.arch) {
            if !allowed.contains(size) {
                out.push(format!(
                    "base page size {size} on {} (from {})",
                    c.arch.as_str(),
                    p.base_page_size_source
                ));
            }
        } else if !size.is_power_of_two() || *size < 4096 {
            out.push(format!("base page size {size}"));
        }
    }
    let mem_total = m.memory.meminfo.known().map(|mi| mi.mem_total_bytes);
    // 4 PiB: the largest physical address space of any architecture here (x86 5-level paging)
    let memory_bound = mem_total.unwrap_or(4 << 50);
    for pool in &p.hugetlb {
        let s = &pool.system;
        if !s.page_size_bytes.is_power_of_two() {
            out.push(format!("a huge page size of {} bytes", s.page_size_bytes));
        }
        if let (Probed::Known(free), Probed::Known(total)) = (&s.free_pages, &s.total_pages) {
            if free > total {
                out.push(format!(
                    "{free} free of {total} huge pages of {} bytes",
                    s.page_size_bytes
                ));
            }
        }
        if let Probed::Known(b) = &s.total_bytes {
            if *b > memory_bound {
                out.push(format!(
                    "a hugetlb pool of {b} bytes (MemTotal {mem_total:?})"
                ));
            }
        }
    }
}

#[test]
fn mutated_captures() {
    let Some(fixtures) = hwsurvey_testkit::fixtures() else {
        return;
    };
    let start = Instant::now();
    let captures: Vec<Arc<Capture>> = CAPTURES
        .iter()
        .filter_map(|name| load_capture(&fixtures, name).map(Arc::new))
        .collect();
    assert_eq!(captures.len(), CAPTURES.len(), "every capture extracts");
    println!(
        "captures: {} extracted and probed clean in {:.1} s",
        captures.len(),
        start.elapsed().as_secs_f64()
    );
    let rules = Arc::new(RuleSet::builtin());
    let seed = seed();
    let cases = cases(30);
    let mut slowest = (Duration::ZERO, 0);
    let mut failures = Vec::new();
    for &index in &cases {
        let mut rng = Rng::for_case(seed, "capture", index);
        let cap = captures[rng.below(captures.len())].clone();
        let mut undos = Vec::new();
        let mut what = vec![format!("capture {}", cap.name)];
        if rng.chance(8) {
            let d = rng.pick(&cap.dirs).clone();
            what.push(loop_dir(&mut rng, &cap.root, &d, &mut undos));
        } else {
            let n = 1 + rng.below(3);
            let mut chosen = BTreeSet::new();
            for _ in 0..n {
                let f = rng.pick(&cap.files).clone();
                if chosen.insert(f.clone()) {
                    what.push(mutate_file(&mut rng, &cap.root, &f, &mut undos));
                }
            }
        }
        let what = what.join("; ");
        let work = {
            let cap = cap.clone();
            let rules = rules.clone();
            move || check_capture(&cap, &rules)
        };
        match bounded(work) {
            Ok(took) => {
                if took > slowest.0 {
                    slowest = (took, index);
                }
            }
            Err(findings) => failures.push(fail("capture", index, &what, &findings, |dir| {
                copy_tree(&cap.root, &dir.join("root"))
            })),
        }
        for u in undos.into_iter().rev() {
            undo(u);
        }
    }
    println!(
        "captures: {} mutated inputs (seed {seed:#x}) in {:.1} s; slowest input {} took {:.2} s",
        cases.len(),
        start.elapsed().as_secs_f64(),
        slowest.1,
        slowest.0.as_secs_f64()
    );
    report("capture", cases.len(), &failures);
}

fn check_capture(cap: &Capture, rules: &RuleSet) -> Result<(), String> {
    let sys = SysRoot::new(&cap.root);
    let m = probe_machine(&sys);
    let mut out = Vec::new();
    let json = serde_json::to_string(&m).map_err(|e| format!("machine JSON: {e}"))?;
    // a mutation adds at most a few MiB (three 1 MiB lines)
    check_bounded(
        "probe --json",
        json.len(),
        cap.clean_json,
        8 * MIB,
        &mut out,
    );
    let summary = summary_text(&m);
    check_bounded(
        "probe summary",
        summary.len(),
        cap.clean_summary,
        64 << 10,
        &mut out,
    );
    let raw = raw_controls(&summary);
    if !raw.is_empty() {
        out.push(format!("probe summary: raw control characters {raw:?}"));
    }
    for u in hwsurvey_probe::summary::unknowns(&m) {
        check_error_line("probe problem", &u, &mut out);
    }
    machine_facts_problems(&m, &mut out);
    // qualify on the probed facts
    let facts = from_machine(&m);
    let report = qualify("capture", &facts, rules);
    for ((name, text), clean) in qualify_texts(&report).iter().zip(&cap.clean_qualify) {
        check_bounded(name, text.len(), *clean, 64 << 10, &mut out);
        if *name != "qualify json" {
            let raw = raw_controls(text);
            if !raw.is_empty() {
                out.push(format!("{name}: raw control characters {raw:?}"));
            }
        }
    }
    // cpu.online passes only on known online and present sets (a refused `0-1048575` once
    // left it passing)
    let passed = |rule: &str| {
        report
            .findings
            .iter()
            .any(|f| f.rule == rule && f.verdict == Verdict::Pass)
    };
    if passed("cpu.online") && (m.cpu.online.known().is_none() || m.cpu.present.known().is_none()) {
        out.push("qualify passes cpu.online with the online or present set unknown".into());
    }
    // pages.hugetlb passes only on pools whose counts are known
    if passed("pages.hugetlb")
        && m.pages
            .hugetlb
            .iter()
            .any(|p| p.system.total_pages.known().is_none())
        && m.pages
            .hugetlb
            .iter()
            .all(|p| p.system.total_pages.known().is_none_or(|n| *n == 0))
    {
        out.push("qualify passes pages.hugetlb with no pool known to hold pages".into());
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(out.join("\n"))
    }
}

// ---------------------------------------------------------------------------------------
// Kind 2: result files.

struct Source {
    name: String,
    value: serde_json::Value,
    clean: hwsurvey_result::ResultFile,
    /// JSON pointers of every node, and of the nodes the issue's classes live in.
    nodes: Vec<String>,
    hot: Vec<String>,
    /// Output sizes for the clean file: compare formats (terminal, markdown, csv, json,
    /// html), plots, then qualify (stored findings) terminal, markdown, json.
    clean_sizes: Vec<usize>,
}

const HOT_KEYS: &[&str] = &[
    "cv",
    "median",
    "min",
    "max",
    "mean",
    "std_dev",
    "samples",
    "peak",
    "page_size_bytes",
    "working_set_bytes",
    "chase_working_set_bytes",
    "memory_bytes",
    "hostname",
    "kernel_release",
    "mem_total_bytes",
    "outlier_indices",
    "median_ci95_low",
    "median_ci95_high",
    "threads",
    "cpus",
    "page_mode",
];

fn pointers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, c) in m {
                pointers(
                    c,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        serde_json::Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                pointers(c, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

fn compare_texts(
    clean: &hwsurvey_result::ResultFile,
    file: hwsurvey_result::ResultFile,
    plots: bool,
) -> Result<Vec<(String, String)>, String> {
    use hwsurvey_report::{compare, default_label, plot, render, Format, Input};
    let label = default_label(&file);
    let inputs = vec![
        Input {
            label: "clean".into(),
            file: clean.clone(),
        },
        Input {
            label: if label == "clean" { "x".into() } else { label },
            file,
        },
    ];
    let c = compare(&inputs, None, true).map_err(|e| e.to_string())?;
    let svgs = if plots {
        plot::all_plots(&c)
    } else {
        Vec::new()
    };
    let mut out: Vec<(String, String)> = [
        ("terminal", Format::Terminal),
        ("markdown", Format::Markdown),
        ("csv", Format::Csv),
        ("json", Format::Json),
        ("html", Format::Html),
    ]
    .into_iter()
    .map(|(n, f)| (format!("compare {n}"), render(&c, f, &svgs)))
    .collect();
    out.push((
        "plots".into(),
        svgs.iter().map(|(t, s)| format!("{t}\n{s}")).collect(),
    ));
    for (name, svg) in &svgs {
        out.push((format!("svg {name}"), svg.clone()));
    }
    Ok(out)
}

fn stored_qualify(
    file: &hwsurvey_result::ResultFile,
) -> Result<Vec<(&'static str, String)>, String> {
    use hwsurvey_qualify::stored::{findings_of_result, RulesRef};
    let report = findings_of_result("r.json", file, &RuleSet::builtin(), &RulesRef::builtin())
        .map_err(|e| e.to_string())?;
    Ok(qualify_texts(&report))
}

fn load_sources() -> Vec<Arc<Source>> {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/examples/v1");
    let mut texts: Vec<(String, Vec<u8>)> = [
        "x86_64-standard.json",
        "aarch64-qemu-quick.json",
        "sparc64-qemu-quick.json",
    ]
    .iter()
    .map(|n| {
        let p = examples.join(n);
        (
            n.to_string(),
            std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
        )
    })
    .collect();
    for (i, f) in hwsurvey_report::sample::three().into_iter().enumerate() {
        texts.push((
            format!("sample-{i}.json"),
            serde_json::to_vec_pretty(&f).unwrap(),
        ));
    }
    texts
        .into_iter()
        .map(|(name, bytes)| {
            let clean = hwsurvey_result::parse(&name, &bytes)
                .unwrap_or_else(|e| panic!("clean {name} must load: {e}"));
            let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            let mut nodes = Vec::new();
            pointers(&value, String::new(), &mut nodes);
            let hot = nodes
                .iter()
                .filter(|p| {
                    let mut parts = p.rsplit('/');
                    let last = parts.next().unwrap_or("");
                    let parent = parts.next().unwrap_or("");
                    HOT_KEYS.contains(&last) || HOT_KEYS.contains(&parent)
                })
                .cloned()
                .collect();
            let mut clean_sizes: Vec<usize> = compare_texts(&clean, clean.clone(), true)
                .unwrap_or_else(|e| panic!("clean {name} compares: {e}"))
                .iter()
                .take(6)
                .map(|(_, t)| t.len())
                .collect();
            clean_sizes.extend(
                stored_qualify(&clean)
                    .unwrap_or_else(|e| panic!("clean {name} qualifies: {e}"))
                    .iter()
                    .map(|(_, t)| t.len()),
            );
            Arc::new(Source {
                name,
                value,
                clean,
                nodes,
                hot,
                clean_sizes,
            })
        })
        .collect()
}

fn hostile_string(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => {
            let unit = "evil\u{1b}[2J\u{7}\0<&>\n\u{202e}\u{fffe}\r\t";
            unit.repeat(MIB / unit.len() + 1)
        }
        1 => String::new(),
        2 => "=HYPERLINK(\"http://x\",\"y\")".into(),
        3 => "0-1048575".into(),
        4 => "\u{1b}]0;pwned\u{7}".into(),
        5 => "x".repeat(70_000),
        6 => "-1".into(),
        _ => "hugetlb-18446744073709551615".into(),
    }
}

fn hostile_number(rng: &mut Rng) -> serde_json::Value {
    use serde_json::json;
    match rng.below(12) {
        0 => json!(1.18e21),
        1 => json!(-1),
        2 => json!(0),
        3 => json!(1e308),
        4 => json!(u64::MAX),
        5 => json!(i64::MIN),
        6 => json!(0.5),
        7 => json!(4294967296u64),
        8 => json!(9007199254740993u64),
        9 => json!(-1e-300),
        10 => json!(1048575),
        _ => json!(2.0),
    }
}

/// Applies one mutation at a random node of `v`; returns the words for it.
fn mutate_value(rng: &mut Rng, src: &Source, v: &mut serde_json::Value) -> String {
    use serde_json::Value;
    let ptr = if rng.chance(40) && !src.hot.is_empty() {
        rng.pick(&src.hot).clone()
    } else {
        rng.pick(&src.nodes).clone()
    };
    let Some(node) = v.pointer_mut(&ptr) else {
        return format!("{ptr}: gone (an earlier mutation removed it)");
    };
    let op = rng.below(10);
    let before = cut(&node.to_string());
    let what = match (op, &*node) {
        (0, _) => {
            // remove from the parent
            let (parent, key) = ptr.rsplit_once('/').unwrap_or(("", ""));
            match v.pointer_mut(parent) {
                Some(Value::Object(m)) => {
                    m.remove(&key.replace("~1", "/").replace("~0", "~"));
                }
                Some(Value::Array(a)) => {
                    if let Ok(i) = key.parse::<usize>() {
                        if i < a.len() {
                            a.remove(i);
                        }
                    }
                }
                _ => {}
            }
            return format!("{ptr}: removed");
        }
        (1, _) => {
            *node = Value::Null;
            "null".to_string()
        }
        (_, Value::Number(_)) | (2, _) => {
            *node = hostile_number(rng);
            node.to_string()
        }
        (_, Value::String(_)) | (3, _) => {
            let s = hostile_string(rng);
            let w = cut(&s);
            *node = Value::String(s);
            w
        }
        (_, Value::Bool(b)) => {
            *node = Value::Bool(!b);
            node.to_string()
        }
        (_, Value::Array(a)) if !a.is_empty() && rng.chance(50) => {
            let first = a[0].clone();
            if let Value::Array(a) = node {
                a.push(first);
            }
            "its first element repeated".to_string()
        }
        (_, Value::Array(_)) => {
            *node = Value::Array(Vec::new());
            "[]".to_string()
        }
        (_, Value::Object(_)) => {
            if let Value::Object(m) = node {
                m.insert("unknown_key".into(), hostile_number(rng));
            }
            "an unknown key added".to_string()
        }
        _ => {
            *node = hostile_number(rng);
            node.to_string()
        }
    };
    format!("{ptr}: {before} -> {what}")
}

/// The "silent wrong" classes of issue 16 in a loaded result file.
fn result_facts_problems(f: &hwsurvey_result::ResultFile, out: &mut Vec<String>) {
    let mem_total = f
        .machine
        .pointer("/memory/meminfo/known/mem_total_bytes")
        .and_then(|v| v.as_u64());
    for t in &f.tests {
        let id = format!("{} {}", t.point.family, t.point.id);
        for m in &t.metrics {
            let Some(s) = &m.summary else { continue };
            if !(s.min <= s.median && s.median <= s.max) {
                out.push(format!("{id} {}: median outside [min, max]", m.name));
            }
            if let (Some(cv), Ok(sample)) = (s.cv, hwsurvey_stats::Sample::new(m.samples.clone())) {
                if let Some(real) = sample.cv() {
                    if (cv - real).abs() > 1e-6 * real.abs().max(1e-3) {
                        out.push(format!(
                            "{id} {}: CV {cv} loaded, the samples give {real}",
                            m.name
                        ));
                    }
                }
            }
        }
        let mut sizes = Vec::new();
        collect_bytes(&t.point.params, "", &mut sizes);
        sizes.push(("memory_bytes".into(), t.point.memory_bytes as f64));
        for (key, b) in sizes {
            if b > (1u64 << 50) as f64 {
                out.push(format!("{id}: {key} {b} bytes (above 1 PiB)"));
            }
            if key.contains("working_set") || key == "memory_bytes" {
                if let Some(mem) = mem_total {
                    if b > 8.0 * mem as f64 {
                        out.push(format!("{id}: {key} {b} bytes on a machine of {mem}"));
                    }
                }
            }
            if key.ends_with("page_size_bytes")
                && !(b >= 4096.0 && b <= (16u64 << 30) as f64 && (b as u64).is_power_of_two())
            {
                out.push(format!("{id}: a page size of {b} bytes"));
            }
        }
    }
    let mut long = Vec::new();
    long_strings(&serde_json::to_value(f).unwrap(), "", &mut long);
    for (at, len) in long {
        out.push(format!("a string of {len} bytes loaded at {at}"));
    }
}

fn collect_bytes(v: &serde_json::Value, at: &str, out: &mut Vec<(String, f64)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, c) in m {
                if let (true, Some(n)) = (k.ends_with("_bytes"), c.as_f64()) {
                    out.push((format!("{at}{k}"), n));
                }
                collect_bytes(c, &format!("{at}{k}."), out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|c| collect_bytes(c, at, out)),
        _ => {}
    }
}

fn long_strings(v: &serde_json::Value, at: &str, out: &mut Vec<(String, usize)>) {
    match v {
        serde_json::Value::String(s) if s.len() > 64 << 10 => out.push((at.into(), s.len())),
        serde_json::Value::Object(m) => {
            for (k, c) in m {
                long_strings(c, &format!("{at}/{k}"), out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                long_strings(c, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn mutated_result_files() {
    let start = Instant::now();
    let sources = load_sources();
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let seed = seed();
    let cases = cases(20);
    let mut failures = Vec::new();
    let loaded = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for &index in &cases {
        let mut rng = Rng::for_case(seed, "result", index);
        let src = sources[rng.below(sources.len())].clone();
        let mut what = vec![format!("from {}", src.name)];
        let bytes = if rng.chance(12) {
            let mut bytes = serde_json::to_vec_pretty(&src.value).unwrap();
            if rng.chance(50) {
                let at = rng.below(bytes.len());
                bytes.truncate(at);
                what.push(format!("cut at byte {at}"));
            } else {
                for _ in 0..1 + rng.below(4) {
                    let at = rng.below(bytes.len());
                    bytes[at] = rng.next() as u8;
                    what.push(format!("byte {at} set to {:#04x}", bytes[at]));
                }
            }
            bytes
        } else {
            let mut v = src.value.clone();
            for _ in 0..1 + rng.below(3) {
                what.push(mutate_value(&mut rng, &src, &mut v));
            }
            if rng.chance(50) {
                serde_json::to_vec(&v).unwrap()
            } else {
                serde_json::to_vec_pretty(&v).unwrap()
            }
        };
        let what = what.join("; ");
        let path = dir.path().join(format!("result-{index}.json"));
        std::fs::write(&path, &bytes).unwrap();
        // plots (plotters, slow in debug builds) for one input in four
        let plots = index % 4 == 0;
        let work = {
            let (src, path, loaded) = (src.clone(), path.clone(), loaded.clone());
            move || check_result(&src, &path, plots, &loaded)
        };
        match bounded(work) {
            Ok(_) => {}
            Err(findings) => failures.push(fail("result", index, &what, &findings, |d| {
                std::fs::copy(&path, d.join("result.json")).unwrap();
            })),
        }
        let _ = std::fs::remove_file(&path);
    }
    println!(
        "result files: {} mutated inputs (seed {seed:#x}), {} still loaded, in {:.1} s",
        cases.len(),
        loaded.load(std::sync::atomic::Ordering::Relaxed),
        start.elapsed().as_secs_f64()
    );
    report("result", cases.len(), &failures);
}

fn check_result(
    src: &Source,
    path: &Path,
    plots: bool,
    loaded: &std::sync::atomic::AtomicUsize,
) -> Result<(), String> {
    let mut out = Vec::new();
    let file = match hwsurvey_result::load(path) {
        Err(e) => {
            check_error_line("load", &e.to_string(), &mut out);
            return if out.is_empty() {
                Ok(())
            } else {
                Err(out.join("\n"))
            };
        }
        Ok(f) => f,
    };
    loaded.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    result_facts_problems(&file, &mut out);
    // compare against the clean file, every format (and the plots)
    match compare_texts(&src.clean, file.clone(), plots) {
        Err(e) => check_error_line("compare", &e, &mut out),
        Ok(texts) => {
            for (i, (name, text)) in texts.iter().enumerate() {
                if i < 6 {
                    check_bounded(name, text.len(), src.clean_sizes[i], 256 << 10, &mut out);
                }
                if name != "compare json" {
                    let raw = raw_controls(text);
                    if !raw.is_empty() {
                        out.push(format!("{name}: raw control characters {raw:?}"));
                    }
                }
                if name.starts_with("svg ") {
                    if let Err(e) = roxmltree::Document::parse(text) {
                        out.push(format!("{name}: not XML: {e}"));
                    }
                }
            }
        }
    }
    // qualify of the file: the stored findings, then recomputed from its machine document
    match stored_qualify(&file) {
        Err(e) => check_error_line("qualify (stored)", &e, &mut out),
        Ok(texts) => {
            for (k, (name, text)) in texts.iter().enumerate() {
                check_bounded(
                    name,
                    text.len(),
                    src.clean_sizes[6 + k],
                    256 << 10,
                    &mut out,
                );
                if *name != "qualify json" {
                    let raw = raw_controls(text);
                    if !raw.is_empty() {
                        out.push(format!("{name}: raw control characters {raw:?}"));
                    }
                }
            }
        }
    }
    if let Ok(machine) = serde_json::from_value::<Machine>(file.machine.clone()) {
        let mut facts = from_machine(&machine);
        facts.result = Probed::Known(hwsurvey_qualify::machine::result_facts("r.json", &file));
        let report = qualify("r.json", &facts, &RuleSet::builtin());
        for (name, text) in qualify_texts(&report) {
            if text.len() > 4 * MIB {
                out.push(format!("recomputed {name}: {} bytes", text.len()));
            }
            if name != "qualify json" {
                let raw = raw_controls(&text);
                if !raw.is_empty() {
                    out.push(format!("recomputed {name}: raw control characters {raw:?}"));
                }
            }
        }
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(out.join("\n"))
    }
}

// ---------------------------------------------------------------------------------------
// Kind 3: ELF files.

struct Binary {
    name: String,
    bytes: Vec<u8>,
    /// Only the header is there (a prefix of a large binary): `inspect` is not asked.
    header_only: bool,
}

fn binaries() -> Vec<Arc<Binary>> {
    let mut out = Vec::new();
    for p in [
        "/usr/bin/true",
        "/usr/aarch64-linux-gnu/lib/libc.so.6",
        "/usr/sparc64-linux-gnu/lib/libc.so.6",
    ] {
        match std::fs::read(p) {
            Ok(bytes) => out.push(Arc::new(Binary {
                name: p.into(),
                bytes,
                header_only: false,
            })),
            Err(e) => println!("SKIPPED: {p}: {e} (a cross C library missing: fewer ELF sources)"),
        }
    }
    let exe = env!("CARGO_BIN_EXE_hwsurvey");
    let mut head = std::fs::read(exe).unwrap_or_else(|e| panic!("{exe}: {e}"));
    head.truncate(64 << 10);
    out.push(Arc::new(Binary {
        name: format!("{exe} (first 64 KiB)"),
        bytes: head,
        header_only: true,
    }));
    out
}

/// Writes `value` as a `width`-byte field at `at`, in the file's byte order.
fn put(bytes: &mut [u8], at: usize, width: usize, value: u64) {
    let big = bytes.get(5) == Some(&2);
    for i in 0..width {
        let shift = if big { 8 * (width - 1 - i) } else { 8 * i };
        if let Some(b) = bytes.get_mut(at + i) {
            *b = (value >> shift) as u8;
        }
    }
}

fn get(bytes: &[u8], at: usize, width: usize) -> u64 {
    let big = bytes.get(5) == Some(&2);
    (0..width).fold(0, |acc, i| {
        let b = *bytes.get(at + i).unwrap_or(&0) as u64;
        if big {
            (acc << 8) | b
        } else {
            acc | (b << (8 * i))
        }
    })
}

/// ELF header fields: (name, offset in ELF32, width in ELF32, offset in ELF64, width in ELF64).
const FIELDS: &[(&str, usize, usize, usize, usize)] = &[
    ("EI_CLASS", 4, 1, 4, 1),
    ("EI_DATA", 5, 1, 5, 1),
    ("EI_VERSION", 6, 1, 6, 1),
    ("EI_OSABI", 7, 1, 7, 1),
    ("e_type", 16, 2, 16, 2),
    ("e_machine", 18, 2, 18, 2),
    ("e_version", 20, 4, 20, 4),
    ("e_entry", 24, 4, 24, 8),
    ("e_phoff", 28, 4, 32, 8),
    ("e_shoff", 32, 4, 40, 8),
    ("e_flags", 36, 4, 48, 4),
    ("e_ehsize", 40, 2, 52, 2),
    ("e_phentsize", 42, 2, 54, 2),
    ("e_phnum", 44, 2, 56, 2),
    ("e_shentsize", 46, 2, 58, 2),
    ("e_shnum", 48, 2, 60, 2),
    ("e_shstrndx", 50, 2, 62, 2),
];

/// Program-header fields of ELF64 (offset within the entry, width).
const PH64: &[(&str, usize, usize)] = &[
    ("p_type", 0, 4),
    ("p_offset", 8, 8),
    ("p_filesz", 32, 8),
    ("p_memsz", 40, 8),
    ("p_align", 48, 8),
];

fn edge_value(rng: &mut Rng, width: usize) -> u64 {
    let max = if width >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * width)) - 1
    };
    match rng.below(9) {
        0 => 0,
        1 => max,
        2 => max / 2,
        3 => max / 2 + 1,
        4 => 1,
        5 => rng.next() & max,
        6 => *rng.pick(&[2u64, 3, 43, 62, 183, 175, 0x9026, 0xffff]) & max,
        7 => 0x7fff_ffff & max,
        _ => 64,
    }
}

fn mutate_elf(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let elf64 = bytes.get(4) == Some(&2);
    match rng.below(10) {
        0..=4 => {
            let (name, o32, w32, o64, w64) = *rng.pick(FIELDS);
            let (at, w) = if elf64 { (o64, w64) } else { (o32, w32) };
            let v = edge_value(rng, w);
            put(bytes, at, w, v);
            format!("{name} = {v:#x}")
        }
        5 if elf64 => {
            let phoff = get(bytes, 32, 8) as usize;
            let phnum = get(bytes, 56, 2) as usize;
            if phnum == 0 || phoff >= bytes.len() {
                return "no program header to change".into();
            }
            let i = rng.below(phnum);
            let (name, off, w) = *rng.pick(PH64);
            let v = edge_value(rng, w);
            put(bytes, phoff + 56 * i + off, w, v);
            format!("program header {i} {name} = {v:#x}")
        }
        6 => {
            let at = rng.below(bytes.len().max(1));
            bytes.truncate(at);
            format!("cut at byte {at}")
        }
        _ => {
            let n = 1 + rng.below(8);
            let span = bytes.len().clamp(1, 4096);
            for _ in 0..n {
                let at = rng.below(span);
                if let Some(b) = bytes.get_mut(at) {
                    *b ^= 1 << rng.below(8);
                }
            }
            format!("{n} bits flipped in the first {span} bytes")
        }
    }
}

#[test]
fn mutated_elf_files() {
    let start = Instant::now();
    let sources = binaries();
    // the facts of a real machine to qualify the binaries on (the firecracker x86_64 guest),
    // else this machine
    let machine = match hwsurvey_testkit::fixtures()
        .and_then(|f| load_capture(&f, "x86_64-firecracker-guest-epyc-2vcpu-thp-mthp"))
    {
        Some(c) => probe_machine(&SysRoot::new(&c.root)),
        None => probe_machine(&SysRoot::live()),
    };
    let machine = Arc::new(machine);
    let targets = Arc::new(
        hwsurvey_elf::TargetDescriptor::load_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../targets"),
        )
        .expect("targets/*.toml"),
    );
    let seed = seed();
    let cases = cases(50);
    let mut failures = Vec::new();
    let mut parsed = 0;
    for &index in &cases {
        let mut rng = Rng::for_case(seed, "elf", index);
        let src = sources[rng.below(sources.len())].clone();
        let mut bytes = src.bytes.clone();
        let mut what = vec![format!("from {}", src.name)];
        for _ in 0..1 + rng.below(3) {
            what.push(mutate_elf(&mut rng, &mut bytes));
        }
        let what = what.join("; ");
        let bytes = Arc::new(bytes);
        let work = {
            let (bytes, machine, targets) = (bytes.clone(), machine.clone(), targets.clone());
            let header_only = src.header_only;
            move || check_elf(&bytes, header_only, &machine, &targets)
        };
        match bounded(work) {
            Ok(_) => {
                if hwsurvey_elf::parse_header(&bytes).is_ok() {
                    parsed += 1;
                }
            }
            Err(findings) => failures.push(fail("elf", index, &what, &findings, |d| {
                std::fs::write(d.join("binary.elf"), &*bytes).unwrap();
            })),
        }
    }
    println!(
        "ELF files: {} mutated inputs (seed {seed:#x}), {parsed} headers still read, in {:.1} s",
        cases.len(),
        start.elapsed().as_secs_f64()
    );
    report("elf", cases.len(), &failures);
}

fn check_elf(
    bytes: &[u8],
    header_only: bool,
    machine: &Machine,
    targets: &[hwsurvey_elf::TargetDescriptor],
) -> Result<(), String> {
    let mut out = Vec::new();
    match hwsurvey_elf::parse_header(bytes) {
        Err(e) => check_error_line("parse_header", &e.to_string(), &mut out),
        Ok(h) => {
            // what the header says is what the bytes hold
            if h.machine.0 as u64 != get(bytes, 18, 2) {
                out.push(format!(
                    "parse_header: e_machine {} but the bytes hold {}",
                    h.machine.0,
                    get(bytes, 18, 2)
                ));
            }
            if h.class_bits() != if bytes[4] == 2 { 64 } else { 32 } {
                out.push(format!(
                    "parse_header: {}-bit, EI_CLASS {}",
                    h.class_bits(),
                    bytes[4]
                ));
            }
        }
    }
    if header_only {
        return if out.is_empty() {
            Ok(())
        } else {
            Err(out.join("\n"))
        };
    }
    match hwsurvey_qualify::binary::parse_elf_header("a.out", bytes) {
        Err(e) => check_error_line("qualify ELF reader", &e.to_string(), &mut out),
        Ok(b) => {
            if let Ok(info) = hwsurvey_elf::inspect(bytes) {
                for s in info.needed.iter().chain(info.interpreter.iter()) {
                    if s.len() > 4096 {
                        out.push(format!("inspect: a string of {} bytes", s.len()));
                    }
                }
                for t in targets {
                    for m in hwsurvey_elf::check(&info, t) {
                        check_error_line("target check", &m.to_string(), &mut out);
                    }
                }
            }
            let mut facts = from_machine(machine);
            facts.binary = Probed::Known(b.clone());
            facts.target =
                hwsurvey_qualify::machine::target_facts(&facts.binary, &facts.os.kernel_machine);
            let report = qualify("a.out", &facts, &RuleSet::builtin());
            for (name, text) in qualify_texts(&report) {
                if text.len() > MIB {
                    out.push(format!("{name}: {} bytes", text.len()));
                }
                if name != "qualify json" {
                    let raw = raw_controls(&text);
                    if !raw.is_empty() {
                        out.push(format!("{name}: raw control characters {raw:?}"));
                    }
                }
            }
            // binary.arch passes only for a binary the kernel's machine runs
            let passed = report
                .findings
                .iter()
                .any(|f| f.rule == "binary.arch" && f.verdict == Verdict::Pass);
            let kernel = machine
                .os
                .kernel
                .machine
                .known()
                .cloned()
                .unwrap_or_default();
            let runs = hwsurvey_elf::MachineInfo::for_kernel(&kernel).is_some_and(|k| {
                k.is_native(b.class_bits, b.machine) || k.runs_in_compat(b.class_bits, b.machine)
            });
            if passed && !runs {
                out.push(format!(
                    "binary.arch passes a {}-bit e_machine {} binary on a {kernel} kernel",
                    b.class_bits, b.machine
                ));
            }
        }
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(out.join("\n"))
    }
}

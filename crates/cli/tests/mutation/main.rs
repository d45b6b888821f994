//! The mutation campaign, as a test: from a fixed seed, thousands of mutated
//! inputs of three kinds, each run in-process through the library entry points the commands
//! use, with the failing input saved so that a failure is reproducible.
//!
//! - **captures**: real /proc + /sys captures of `../shared/fixtures` (extracted once), with
//!   1-3 of the files the probe reads truncated, byte-flipped, given huge numbers, negative
//!   ids, control characters, a 1 MiB line, a huge CPU list (`0-1048575`), deleted, replaced
//!   by a self-loop or escaping symlink or a folder, or a folder turned into a symlink loop.
//!   Runs `probe_machine`, the `hwsurvey probe` summary, `qualify` on the probed facts and its
//!   renderers.
//! - **results**: `reports/examples/*.json` and the test kit's synthetic results, with JSON
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
//! "silent wrong" classes (a CPU set beyond `possible` or beyond the kernel's
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
    // exactly what `hwsurvey probe` prints
    hwsurvey_probe::render_summary(m)
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

mod captures;
mod elf;
mod results;

//! hwsurvey's RAID-6 P+Q generation beside ISA-L's `pq_gen` and the kernel's choice.
//!
//!     cargo bench -p hwsurvey-workloads --bench raid_peers
//!
//! 8 data + P + Q, 64 KiB chunks, each thread with its own stripe (in cache: 640 KiB; blocks
//! 64-byte aligned in both tools, as ISA-L requires 32), on
//! 1 thread and on every CPU: hwsurvey's fastest path ([`raid6::select_fastest`], as
//! `hwsurvey run` picks it for `gen.best`) against ISA-L's `pq_gen` (Debian `libisal-dev`,
//! which picks its own fastest version at run time), driven by `raid_peers_isal.c` (compiled
//! here with `cc -O2 -lisal`). The two are interleaved in pairs, the order alternating (hwsurvey
//! then ISA-L, ISA-L then hwsurvey, ...), following shared/notes/measuring.md; each pair gives a
//! ratio of data bytes per second, and the benchmark prints every raw figure and the median of
//! the per-pair ratios with min and max. Before timing, thread 0's P and Q of both tools are
//! compared (FNV-1a of P then Q over the same bytes): a difference stops the benchmark.
//! The kernel's raid6 choice (and its figures when CONFIG_RAID6_PQ_BENCHMARK printed them) is
//! shown from the boot log when `dmesg` can read it; the kernel's own code does not run in
//! user space here.
//!
//! Environment: HWSURVEY_PEER_PAIRS (default 8), HWSURVEY_PEER_SECONDS (per run, default 1).
//! HWSURVEY_BENCH_SMOKE=1 (scripts/bench-smoke): the short form, whose figures mean nothing:
//! 2 pairs of 0.05 s runs (each variable above still wins when set).
//! Without ISA-L (or `cc`) the comparison says SKIPPED and why; the rest still runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Barrier;
use std::time::Instant;

use hwsurvey_workloads::raid6::{self, Algorithm, AlignedBlock};

const DATA_BLOCKS: usize = 8;
const CHUNK_BYTES: usize = 64 * 1024;

/// Whether `HWSURVEY_BENCH_SMOKE=1` asks for the short form (see the module docs).
fn smoke() -> bool {
    std::env::var("HWSURVEY_BENCH_SMOKE").is_ok_and(|v| v == "1")
}

fn env_or<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// `/proc/loadavg`'s three averages, read by the probe layer.
fn loadavg() -> String {
    hwsurvey_probe::run_env::load_average_line(&hwsurvey_probe::SysRoot::live())
}

/// FNV-1a 64 over the blocks in order.
fn fnv1a(blocks: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in blocks {
        for &x in *b {
            h = (h ^ x as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

/// A stripe as raid_peers_isal.c fills it: block i of thread t from seed t*1000 + i + 1.
fn stripe(thread: usize) -> Vec<AlignedBlock> {
    (0..DATA_BLOCKS + 2)
        .map(|i| {
            let mut b = AlignedBlock::zeroed(CHUNK_BYTES);
            raid6::fill_pseudo_random(&mut b, (thread * 1000 + i + 1) as u64);
            b
        })
        .collect()
}

fn gen(alg: Algorithm, blocks: &mut [AlignedBlock]) {
    let (data, pq) = blocks.split_at_mut(DATA_BLOCKS);
    let view: Vec<&[u8]> = data.iter().map(|d| &d[..]).collect();
    let [p, q] = pq else {
        unreachable!("two parity blocks")
    };
    raid6::gen_syndrome(alg, &view, p, q).expect("valid stripe");
}

/// hwsurvey's run: `threads` threads, each generating P+Q of its own stripe until `secs` have
/// passed. Returns (data bytes per second over all threads, FNV-1a of thread 0's P and Q).
fn hwsurvey_run(alg: Algorithm, threads: usize, secs: f64) -> (f64, u64) {
    let start = Barrier::new(threads);
    let results: Vec<(u64, f64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let start = &start;
                s.spawn(move || {
                    let mut blocks = stripe(t);
                    gen(alg, &mut blocks);
                    let hash = fnv1a(&[&blocks[DATA_BLOCKS], &blocks[DATA_BLOCKS + 1]]);
                    start.wait();
                    let t0 = Instant::now();
                    let mut calls = 0u64;
                    loop {
                        for _ in 0..8 {
                            gen(alg, &mut blocks);
                        }
                        calls += 8;
                        if t0.elapsed().as_secs_f64() >= secs {
                            break;
                        }
                    }
                    (calls, t0.elapsed().as_secs_f64(), hash)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker"))
            .collect()
    });
    let bytes: f64 = results
        .iter()
        .map(|r| r.0 as f64 * (DATA_BLOCKS * CHUNK_BYTES) as f64)
        .sum();
    let longest = results.iter().map(|r| r.1).fold(0.0, f64::max);
    (bytes / longest, results[0].2)
}

/// Compiles raid_peers_isal.c against ISA-L.
fn build_isal_driver(tmp: &Path) -> Result<PathBuf, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/raid_peers_isal.c");
    let exe = tmp.join("raid_peers_isal");
    let out = Command::new("cc")
        .args(["-O2", "-pthread", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lisal")
        .output()
        .map_err(|e| format!("cc: {e} (apt-get install -y gcc)"))?;
    if out.status.success() {
        Ok(exe)
    } else {
        Err(format!(
            "cc -O2 {} -lisal failed (ISA-L missing? apt-get install -y libisal-dev): {}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ))
    }
}

/// ISA-L's run; the same shape as [`hwsurvey_run`].
fn isal_run(exe: &Path, threads: usize, secs: f64) -> Result<(f64, u64), String> {
    let out = Command::new(exe)
        .args([
            DATA_BLOCKS.to_string(),
            CHUNK_BYTES.to_string(),
            threads.to_string(),
            secs.to_string(),
        ])
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!("{} exited with {}", exe.display(), out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k))
            .map(str::trim)
            .ok_or_else(|| format!("raid_peers_isal printed no {k:?}: {text:?}"))
    };
    let rate: f64 = field("bytes_per_s ")?
        .parse()
        .map_err(|e| format!("bytes_per_s: {e}"))?;
    let hash =
        u64::from_str_radix(field("pq_fnv1a ")?, 16).map_err(|e| format!("pq_fnv1a: {e}"))?;
    Ok((rate, hash))
}

fn compare(exe: &Path, alg: Algorithm, threads: usize, pairs: usize, secs: f64) {
    println!(
        "   {pairs} interleaved pairs of {secs} s runs; load average before: {}",
        loadavg()
    );
    println!(
        "   {:>4} {:>22} {:>22} {:>8}",
        "pair",
        format!("hwsurvey {} MB/s", alg.name()),
        "ISA-L pq_gen MB/s",
        "ratio"
    );
    let mut ratios = Vec::new();
    for i in 0..pairs {
        let isal_first = i % 2 == 1;
        let early = isal_first.then(|| isal_run(exe, threads, secs));
        let (ours, our_hash) = hwsurvey_run(alg, threads, secs);
        let theirs = match early.unwrap_or_else(|| isal_run(exe, threads, secs)) {
            Ok(r) => r,
            Err(e) => {
                println!("   ISA-L run failed: {e}");
                return;
            }
        };
        assert_eq!(
            our_hash,
            theirs.1,
            "P and Q of hwsurvey's {} and ISA-L's pq_gen differ on the same stripe",
            alg.name()
        );
        let ratio = ours / theirs.0;
        if ratio.is_finite() {
            ratios.push(ratio);
        }
        println!(
            "   {:>4} {:>22.0} {:>22.0} {:>8.3}{}",
            i + 1,
            ours / 1e6,
            theirs.0 / 1e6,
            ratio,
            if isal_first { "  (ISA-L first)" } else { "" }
        );
    }
    println!("   load average after: {}", loadavg());
    let (Some(med), Some(lo), Some(hi)) = (
        hwsurvey_stats::median(&ratios),
        ratios.iter().copied().reduce(f64::min),
        ratios.iter().copied().reduce(f64::max),
    ) else {
        println!("   no ratio could be computed");
        return;
    };
    println!(
        "   ratio hwsurvey/ISA-L (data bytes per s): median {med:.3} (min {lo:.3}, max {hi:.3}) over {} pairs: {}",
        ratios.len(),
        if med >= 1.0 { "hwsurvey at or above ISA-L" } else { "hwsurvey BELOW ISA-L" }
    );
}

fn kernel_lines() {
    match raid6::kmsg::probe_kernel_raid6() {
        Ok(Some(k)) => {
            for f in &k.gen_figures {
                println!(
                    "   kernel boot log: {:<9} gen {:>6} MiB/s (its own stripe: data pages of 4 KiB)",
                    f.algorithm,
                    f.gen_bandwidth_bytes_per_s >> 20
                );
            }
            match (&k.selected_algorithm, k.selected_gen_bandwidth_bytes_per_s) {
                (Some(a), Some(b)) => {
                    println!("   kernel boot log: selected {a}, gen {} MiB/s", b >> 20)
                }
                (Some(a), None) => println!(
                    "   kernel boot log: selected {a} without timing it (CONFIG_RAID6_PQ_BENCHMARK unset: no kernel figure)"
                ),
                _ => {}
            }
            if let Some(r) = &k.recovery_algorithm {
                println!("   kernel boot log: recovery with {r}");
            }
        }
        Ok(None) => {
            println!("   kernel: no raid6 lines in the log (raid6_pq not loaded, or rotated out)")
        }
        Err(e) => println!("   kernel: log unreadable: {e}"),
    }
}

fn main() {
    let pairs: usize = env_or("HWSURVEY_PEER_PAIRS", if smoke() { 2 } else { 8 });
    let secs: f64 = env_or("HWSURVEY_PEER_SECONDS", if smoke() { 0.05 } else { 1.0 });
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let sel = raid6::select_fastest(DATA_BLOCKS, CHUNK_BYTES).expect("8+2 is a valid geometry");
    let tmp = tempfile::tempdir().expect("temporary directory");
    let exe = build_isal_driver(tmp.path());
    for (k, threads) in [1, all].into_iter().enumerate() {
        if k == 1 && all == 1 {
            break;
        }
        println!(
            "== {}. RAID-6 P+Q gen, {DATA_BLOCKS}+2, 64 KiB chunks, {threads} thread{}: hwsurvey {} vs ISA-L pq_gen",
            k + 1,
            if threads == 1 { "" } else { "s" },
            sel.best.name()
        );
        if k == 0 {
            println!(
                "   hwsurvey's choice (1 thread, {} interleaved rounds, median gen rate): {}",
                sel.rounds,
                sel.measured
                    .iter()
                    .map(|f| format!("{} {:.0} MB/s", f.algorithm.name(), f.gen_bytes_per_s / 1e6))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            kernel_lines();
        }
        match &exe {
            Ok(exe) => compare(exe, sel.best, threads, pairs, secs),
            Err(e) => println!("   SKIPPED: {e}"),
        }
    }
}

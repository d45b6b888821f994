//! hwsurvey beside peer tools, on this machine, in one run (issue 4).
//!
//!     cargo bench -p hwsurvey-workloads --bench peers
//!
//! Following shared/notes/measuring.md: hwsurvey and the peer are interleaved (hwsurvey, peer,
//! hwsurvey, peer, ...) for at least 5 pairs with the same working set and thread count; each
//! comparison prints the raw figures, the median of the per-pair ratios with min and max (never a
//! ratio of two separate medians), and the load average before and after. Absolute GB/s from a
//! shared host are not properties of either tool.
//!
//! 1. STREAM Triad: hwsurvey's `mem.bandwidth` Triad (run through the engine exactly as
//!    `hwsurvey run` does) vs likwid-bench `-t stream`, `-t stream_avx`, `-t stream_mem_avx`,
//!    and on CPUs with AVX-512F `-t stream_avx512`, `-t stream_mem_avx512`; the ratio of record
//!    is against the best likwid kernel of all (the STREAM triad `A = B*c + C`; likwid's
//!    `triad` kernel is the 4-stream vector triad `A = B + C*D`, not STREAM's, so it is not
//!    used). Same total working set, same threads.
//! 2. Block read: hwsurvey `mem.bandwidth` block read (a block a thread) at 1 MiB and 64 MiB a
//!    thread, at 1 thread and at all usable CPUs, vs the best of likwid-bench's load kernels
//!    (`load_avx512` where the CPU has AVX-512F, `load_avx`, `load_sse`) with the same bytes a
//!    thread; `sysbench memory` (read, sequential) beside it at both scopes, named: `local` (a
//!    block a thread, like hwsurvey) and `global` (its default: all threads read one block).
//! 3. Latency: hwsurvey `mem.latency` full-random chase over 256 MiB (base pages) vs an
//!    independent chase in a few lines of C (`peers_chase.c`, compiled here with `cc -O2`),
//!    each the median of as many samples (hwsurvey's sample count of the pair).
//! 4. Run-to-run spread of hwsurvey's Triad and latency medians over the runs above.
//!
//! A missing peer (likwid is x86-only; sysbench or cc may be absent) is reported and skipped.
//! `HWSURVEY_PEERS_ONLY=triad,read,chase` runs only the sections named (all by default).
//! `HWSURVEY_PEERS_PAIRS` sets the number of pairs (default 5, minimum 5 for the figures to
//! count as the measurement of record).
//!
//! `HWSURVEY_BENCH_SMOKE=1` (scripts/bench-smoke) runs the short form: every section with tiny
//! sizes (working sets of 4 to 8 MiB, blocks of 4 KiB and 1 MiB, a 4 MiB chase), short samples
//! and 2 pairs (the fewest that give section 4 a spread; the block read, which section 4 does
//! not use, 1 pair). Its figures mean nothing; it shows
//! that every section still produces its figures and ratios.

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;

use hwsurvey_engine::env::RunEnv;
use hwsurvey_engine::result::{ResultFile, Tool};
use hwsurvey_engine::run::{run_with_cancel, RunRequest, Silent};
use hwsurvey_engine::{build_plan, Point, Profile, RunOptions};
use hwsurvey_probe::{probe_machine, Machine, SysRoot};
use hwsurvey_workloads::families::{
    mem_bandwidth::MemBandwidth, mem_latency::MemLatency, DynFamily,
};

/// Whether `HWSURVEY_BENCH_SMOKE=1` asks for the short form (see the module docs).
fn smoke() -> bool {
    std::env::var("HWSURVEY_BENCH_SMOKE").is_ok_and(|v| v == "1")
}

/// `[run]` of the short form: quick profile's sample settings, working sets of 4 to 8 MiB.
const SMOKE_RUN_HEADER: &str = r#"
format_version = 1
id = "peers-smoke"
version = 1
description = "benches/peers.rs short form (HWSURVEY_BENCH_SMOKE=1): tiny sizes, numbers not comparable"

[run]
placement = "compact"
sample_min_s = 0.01
sample_min_clock_ticks = 20
warmup_s = 0.0
samples_min = 2
samples_max = 3
target_cv = 0.05
memory_fraction = 0.25
memory_llc_multiple = 1.0
memory_min_working_set_bytes = 4194304
memory_max_working_set_bytes = 8388608
oversubscription_factor = 2
budget_s = 600
"#;

const RUN_HEADER: &str = r#"
format_version = 1
id = "peers"
version = 1
description = "benches/peers.rs: one test family at a time, side by side with a peer tool"

[run]
placement = "compact"
sample_min_s = 0.2
sample_min_clock_ticks = 20
warmup_s = 0.1
samples_min = 5
samples_max = 5
target_cv = 0.03
memory_fraction = 0.5
memory_llc_multiple = 4.0
memory_min_working_set_bytes = 268435456
oversubscription_factor = 2
budget_s = 600
"#;

const TRIAD: &str = r#"
[families."mem.bandwidth"]
budget_s = 600
[families."mem.bandwidth".params]
stream_kernels = ["triad"]
# lists must be non-empty (profile validation): one block point, left out by `keep`
block_sizes_bytes = [4096]
block_ops = ["read"]
"#;

const LATENCY: &str = r#"
[families."mem.latency"]
budget_s = 600
[families."mem.latency".params]
working_set_min_bytes = 268435456
working_set_step_factor = 4
orders = ["full_random"]
page_local_window_pages = 64
page_local_min_bytes = 1099511627776
page_modes = ["base"]
huge_min_bytes = 1099511627776
"#;

/// Block sizes compared with sysbench, bytes.
/// Block sizes a thread compared with likwid-bench's load kernels and sysbench, bytes: one in
/// L2 on today's x86 cores, one far beyond any last-level cache.
const BLOCKS: [u64; 2] = [1 << 20, 64 << 20];
/// Block sizes of the short form, bytes.
const SMOKE_BLOCKS: [u64; 1] = [1 << 20];
/// Working set of the latency comparison (hwsurvey's smallest chase and the C chase), bytes,
/// and the C chase's loads.
const CHASE_BYTES: u64 = 256 << 20;
const CHASE_STEPS: u64 = 20_000_000;
const SMOKE_CHASE_BYTES: u64 = 4 << 20;
const SMOKE_CHASE_STEPS: u64 = 1_000_000;

struct Live {
    root: SysRoot,
    machine: Machine,
    env: RunEnv,
    tmp: PathBuf,
    /// [`RUN_HEADER`], or [`SMOKE_RUN_HEADER`] for the short form.
    header: &'static str,
}

/// One hwsurvey point's headline figures.
#[derive(Clone, Copy, Debug)]
struct Figure {
    median: f64,
    peak: Option<f64>,
    /// Samples behind the median.
    samples: usize,
}

/// Runs `family` through the engine with `section` under `live.header`, keeping only the
/// points `keep` accepts; returns the result file.
fn run_hwsurvey(
    live: &Live,
    family: &dyn DynFamily,
    section: &str,
    keep: impl Fn(&Point) -> bool,
) -> ResultFile {
    let text = format!("{}{section}", live.header);
    let profile = Profile::parse("benches/peers.rs (built in)", &text, &[family.id()])
        .expect("peers profile");
    let fams: Vec<&dyn DynFamily> = vec![family];
    let options = RunOptions::default();
    let mut plan =
        build_plan(&profile, &fams, &live.machine, &live.env, &options, &[]).expect("plan");
    for f in &mut plan.families {
        f.points.retain(&keep);
    }
    let output = live.tmp.join("peers.json");
    let req = RunRequest {
        profile: &profile,
        plan: &plan,
        families: &fams,
        machine: &live.machine,
        env: &live.env,
        options: &options,
        output: &output,
        root: &live.root,
        tool: Tool::this_build(),
        time_limit: None,
        qualifier: None,
        clock: None,
    };
    run_with_cancel(&req, &mut Silent, &AtomicBool::new(false)).expect("engine run")
}

/// Headline figure of the point `id` in `file`.
fn figure(file: &ResultFile, id: &str) -> Option<Figure> {
    let t = file
        .tests
        .iter()
        .find(|t| t.point.id == id && t.outcome == hwsurvey_engine::result::Outcome::Measured)?;
    let m = t.metrics.first()?;
    let summary = m.summary.as_ref()?;
    Some(Figure {
        median: summary.median,
        peak: m.peak,
        samples: summary.n,
    })
}

/// `/proc/loadavg`'s three averages, read by the probe layer.
fn loadavg() -> String {
    hwsurvey_probe::run_env::load_average_line(&hwsurvey_probe::SysRoot::live())
}

fn which(tool: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool} >/dev/null 2>&1"))
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the CPU has AVX-512F (CPUID, as hwsurvey's own kernel choice reads it; false
/// off x86_64).
fn cpu_has_avx512f() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// likwid-bench `-t kernel -w S0:<kB>kB:<threads>`; its "MByte/s" is 10^6 bytes/s, and its
/// kB is 1000 bytes (128MB gives "Size (Byte): 127999872").
fn likwid(kernel: &str, total_bytes: u64, threads: usize) -> Result<f64, String> {
    let w = format!("S0:{}kB:{threads}", total_bytes / 1000);
    let out = Command::new("likwid-bench")
        .args(["-t", kernel, "-w", &w])
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("MByte/s:"))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|mb| mb * 1e6)
        .ok_or_else(|| {
            format!(
                "likwid-bench -t {kernel} -w {w}: no MByte/s line (exit {})",
                out.status
            )
        })
}

/// `sysbench memory` read, sequential, block size, threads and scope as given, 1 s; its
/// "MiB/sec" is 2^20 bytes/s. Scope `global` (sysbench's default) has every thread read one
/// shared block; `local` gives each thread a block of its own, as hwsurvey does.
fn sysbench(block: u64, threads: usize, scope: &str) -> Result<f64, String> {
    let out = Command::new("sysbench")
        .args([
            "memory",
            &format!("--memory-block-size={block}"),
            &format!("--memory-scope={scope}"),
            "--memory-total-size=1000T",
            "--memory-oper=read",
            "--memory-access-mode=seq",
            &format!("--threads={threads}"),
            "--time=1",
            "run",
        ])
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find(|l| l.contains("MiB/sec"))
        .and_then(|l| l.split('(').nth(1))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
        .map(|mib| mib * (1u64 << 20) as f64)
        .ok_or_else(|| {
            format!(
                "sysbench memory block {block}: no MiB/sec figure (exit {})",
                out.status
            )
        })
}

/// Compiles peers_chase.c with `cc -O2`.
fn build_chase(tmp: &Path) -> Result<PathBuf, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers_chase.c");
    let exe = tmp.join("peers_chase");
    let st = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .map_err(|e| format!("cc: {e}"))?;
    if st.success() {
        Ok(exe)
    } else {
        Err(format!("cc -O2 {}: {st}", src.display()))
    }
}

/// Runs the C chase pinned to `cpu` (taskset, when present): `steps` loads in `samples`
/// samples; the median sample's ns per load (hwsurvey's figure is the median of its samples
/// too: a stall of the host only lengthens a sample, and a mean against a median would make
/// hwsurvey look faster on a noisy host).
fn c_chase(exe: &Path, size: u64, steps: u64, samples: usize, cpu: u32) -> Result<f64, String> {
    let mut cmd = if which("taskset") {
        let mut c = Command::new("taskset");
        c.arg("-c").arg(cpu.to_string()).arg(exe);
        c
    } else {
        Command::new(exe)
    };
    let out = cmd
        .arg(size.to_string())
        .arg(steps.to_string())
        .arg(samples.max(1).to_string())
        .output()
        .map_err(|e| e.to_string())?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("ns_per_load "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("peers_chase: no figure (exit {})", out.status))
}

/// Whether `HWSURVEY_PEERS_ONLY` (a comma-separated list of `triad`, `read`, `chase`; all when
/// unset) asks for the section `name`.
fn wants(name: &str) -> bool {
    match std::env::var("HWSURVEY_PEERS_ONLY") {
        Ok(v) if !v.trim().is_empty() => v.split(',').any(|s| s.trim() == name),
        _ => true,
    }
}

/// likwid-bench's load kernels this CPU runs, widest first (`load_avx512` only with AVX-512F:
/// likwid-bench runs its kernels unchecked, and dies of SIGILL without it).
fn load_kernels() -> Vec<&'static str> {
    let mut k = Vec::new();
    if cpu_has_avx512f() {
        k.push("load_avx512");
    }
    k.extend(["load_avx", "load_sse"]);
    k
}

/// Section 2: hwsurvey's block read point at `block` bytes a thread, at 1 thread and at every
/// usable CPU, against the best of likwid-bench's load kernels with the same bytes a thread
/// (`-w S0:<threads x block>:<threads>`), interleaved; then sysbench memory read at both
/// scopes (a figure beside, not a ceiling: its `global` scope has the threads share one block).
fn block_read_section(live: &Live, blocks: &[u64], pairs: usize, have_likwid: bool) {
    let all = live.env.cpu_count();
    let mut thread_counts = vec![1];
    if all > 1 {
        thread_counts.push(all);
    }
    let kernels = load_kernels();
    println!(
        "\n== 2. Block read, hwsurvey mem.bandwidth read (a block a thread, the fastest read path by trial) vs likwid-bench best of {kernels:?} (same bytes a thread)"
    );
    let section = format!(
        // lists must be non-empty (profile validation): one Triad point, left out by `keep`
        "\n[families.\"mem.bandwidth\"]\nbudget_s = 600\n[families.\"mem.bandwidth\".params]\nstream_kernels = [\"triad\"]\nblock_sizes_bytes = {blocks:?}\nblock_ops = [\"read\"]\n",
    );
    for &block in blocks {
        for &threads in &thread_counts {
            let id_part = format!("/threads={threads}");
            let (mut vs_likwid, mut vs_global, mut vs_local) = (Vec::new(), Vec::new(), Vec::new());
            let mut peak_vs_likwid = Vec::new();
            let mut raw = Vec::new();
            for _ in 0..pairs {
                let file = run_hwsurvey(live, &MemBandwidth, &section, |p| {
                    p.id.starts_with("read/")
                        && p.id.ends_with(&id_part)
                        && p.params.get("block_size_bytes").and_then(|v| v.as_u64()) == Some(block)
                });
                let measured = file
                    .tests
                    .iter()
                    .find(|t| t.outcome == hwsurvey_engine::result::Outcome::Measured);
                let Some(h) = measured.and_then(|t| figure(&file, &t.point.id)) else {
                    raw.push("hwsurvey: not measured".to_string());
                    continue;
                };
                let path = measured
                    .and_then(|t| t.details.get("read_path"))
                    .and_then(|v| v.as_str())
                    .unwrap_or("?");
                let mut line = format!("hwsurvey {} ({path})", gbs(h.median));
                if have_likwid {
                    let mut best: Option<(f64, &str)> = None;
                    for kernel in &kernels {
                        match likwid(kernel, block * threads as u64, threads) {
                            Ok(v) => {
                                line += &format!(" {kernel} {}", gbs(v));
                                match best {
                                    Some((b, _)) if b >= v => {}
                                    _ => best = Some((v, kernel)),
                                }
                            }
                            Err(e) => line += &format!(" {kernel}: {e}"),
                        }
                    }
                    if let Some((b, _)) = best {
                        vs_likwid.push(h.median / b);
                        peak_vs_likwid.push(h.peak.unwrap_or(h.median) / b);
                    }
                }
                for (scope, ratios) in [("global", &mut vs_global), ("local", &mut vs_local)] {
                    match sysbench(block, threads, scope) {
                        Ok(v) => {
                            line += &format!(" sysbench-{scope} {}", gbs(v));
                            ratios.push(h.median / v);
                        }
                        Err(e) => line += &format!(" sysbench-{scope}: {e}"),
                    }
                }
                raw.push(line);
            }
            println!(
                "block {block:>9} B a thread, {threads} thread(s): hwsurvey median / likwid best load: {}",
                ratio_line(&vs_likwid)
            );
            println!(
                "    hwsurvey peak (best sample) / likwid best load: {}",
                ratio_line(&peak_vs_likwid)
            );
            println!(
                "    hwsurvey / sysbench --memory-scope=local (a block a thread): {}",
                ratio_line(&vs_local)
            );
            println!(
                "    hwsurvey / sysbench --memory-scope=global (one shared block): {}",
                ratio_line(&vs_global)
            );
            for r in raw {
                println!("    {r}");
            }
        }
    }
    println!("(issue 38 asks hwsurvey / likwid best load >= 0.95 at 1 and 2 threads, 1 MiB and 64 MiB a thread)");
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// "median 0.97 (min 0.91, max 1.03) over 5 pairs".
fn ratio_line(ratios: &[f64]) -> String {
    if ratios.is_empty() {
        return "no pairs".into();
    }
    let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let max = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!(
        "median {:.3} (min {:.3}, max {:.3}) over {} pairs",
        median(ratios),
        min,
        max,
        ratios.len()
    )
}

fn spread_line(v: &[f64]) -> String {
    if v.len() < 2 {
        return "fewer than 2 runs".into();
    }
    let m = median(v);
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt();
    format!(
        "median {:.4e}, min {:.4e}, max {:.4e}, (max-min)/median {:.1}%, CV {:.1}% over {} runs",
        m,
        min,
        max,
        (max - min) / m * 100.0,
        sd / mean * 100.0,
        v.len()
    )
}

fn gbs(v: f64) -> String {
    format!("{:.2} GB/s", v / 1e9)
}

fn main() {
    let smoke = smoke();
    let pairs: usize = std::env::var("HWSURVEY_PEERS_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if smoke { 2 } else { 5 });
    let (blocks, chase_bytes, chase_steps): (&[u64], u64, u64) = if smoke {
        (&SMOKE_BLOCKS, SMOKE_CHASE_BYTES, SMOKE_CHASE_STEPS)
    } else {
        (&BLOCKS, CHASE_BYTES, CHASE_STEPS)
    };
    let latency_section = LATENCY.replace(
        "working_set_min_bytes = 268435456",
        &format!("working_set_min_bytes = {chase_bytes}"),
    );
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = SysRoot::live();
    let live = Live {
        machine: probe_machine(&root),
        env: RunEnv::read(&root),
        root,
        tmp: tmp.path().to_path_buf(),
        header: if smoke { SMOKE_RUN_HEADER } else { RUN_HEADER },
    };
    let threads = live.env.cpu_count();
    println!(
        "hwsurvey vs peers, {} usable CPUs, arch {}, {pairs} interleaved pairs per comparison",
        threads,
        std::env::consts::ARCH
    );
    println!("load average before: {}", loadavg());
    if smoke {
        println!("SMOKE: short form (HWSURVEY_BENCH_SMOKE=1): tiny sizes, figures not comparable");
    }
    if pairs < 5 {
        println!("NOTE: fewer than 5 pairs: not the measurement of record (notes/measuring.md)");
    }
    let mut triad_medians = Vec::new();
    let mut latency_medians = Vec::new();

    let have_likwid = which("likwid-bench");

    // 1. STREAM Triad vs likwid-bench
    if wants("triad") {
        println!("\n== 1. STREAM Triad, {threads} threads, hwsurvey mem.bandwidth vs likwid-bench (24 bytes credited per element by both)");
        // The AVX-512 kernels join where the CPU has AVX-512F (likwid-bench runs them unchecked:
        // without it they die of SIGILL); the ratio is against the best likwid kernel of all.
        let mut kernels = vec!["stream", "stream_avx", "stream_mem_avx"];
        if cpu_has_avx512f() {
            kernels.extend(["stream_avx512", "stream_mem_avx512"]);
        } else {
            println!("NOTE: no avx512f in /proc/cpuinfo: likwid's AVX-512 kernels are left out");
        }
        if !have_likwid {
            println!(
            "likwid-bench not found (Debian package likwid, x86 only): Triad comparison skipped"
        );
        }
        let triad_id = format!("stream.triad/threads={threads}");
        let mut ws_bytes = 0u64;
        let (mut r_peak_best, mut r_median_best) = (Vec::new(), Vec::new());
        let mut r_each: Vec<Vec<f64>> = vec![Vec::new(); kernels.len()];
        for pair in 0..pairs {
            let file = run_hwsurvey(&live, &MemBandwidth, TRIAD, |p| p.id == triad_id);
            let Some(hw) = figure(&file, &triad_id) else {
                println!(
                    "pair {pair}: hwsurvey Triad not measured: {:?}",
                    file.tests.iter().map(|t| &t.reason).collect::<Vec<_>>()
                );
                continue;
            };
            ws_bytes = file
                .tests
                .iter()
                .find(|t| t.point.id == triad_id)
                .and_then(|t| t.point.params.get("working_set_bytes"))
                .and_then(|v| v.as_u64())
                .unwrap_or(0);
            triad_medians.push(hw.median);
            let peak = hw.peak.unwrap_or(hw.median);
            let mut line = format!(
                "pair {pair}: hwsurvey median {} peak {}",
                gbs(hw.median),
                gbs(peak)
            );
            if have_likwid {
                let mut best: Option<f64> = None;
                for (k, kernel) in kernels.iter().enumerate() {
                    match likwid(kernel, ws_bytes, threads) {
                        Ok(v) => {
                            line += &format!(" | likwid {kernel} {}", gbs(v));
                            r_each[k].push(peak / v);
                            best = Some(best.map_or(v, |b: f64| b.max(v)));
                        }
                        Err(e) => line += &format!(" | likwid {kernel}: {e}"),
                    }
                }
                if let Some(b) = best {
                    r_peak_best.push(peak / b);
                    r_median_best.push(hw.median / b);
                }
            }
            println!("{line}");
        }
        println!("working set: {ws_bytes} bytes (3 arrays of f64, all threads), same for likwid-bench (-w S0:<kB>kB:{threads})");
        if have_likwid {
            for (k, kernel) in kernels.iter().enumerate() {
                println!(
                    "hwsurvey peak / likwid {kernel:<17}: {}",
                    ratio_line(&r_each[k])
                );
            }
            println!(
                "hwsurvey peak   / likwid best of {}: {}",
                kernels.len(),
                ratio_line(&r_peak_best)
            );
            println!(
                "hwsurvey median / likwid best of {}: {}",
                kernels.len(),
                ratio_line(&r_median_best)
            );
            println!("(issue 38 asks hwsurvey Triad peak >= 1.0 x likwid-bench's best kernel, median of the pairs)");
        }
    }

    // 2. Block read vs likwid-bench's load kernels, and sysbench memory by scope
    if wants("read") {
        // the short form's one pair is enough to show the section's figures (section 4's
        // spread takes its runs from sections 1 and 3); 26 s of bench-smoke's 108 s went to
        // this section's second pair (2026-12-06)
        let read_pairs = if smoke && std::env::var_os("HWSURVEY_PEERS_PAIRS").is_none() {
            1
        } else {
            pairs
        };
        block_read_section(&live, blocks, read_pairs, have_likwid);
    }

    // 3. Latency vs the C reference chase
    if wants("chase") {
        println!(
        "\n== 3. Full-random chase over {} MiB, base pages, 1 thread: hwsurvey mem.latency vs peers_chase.c",
        chase_bytes >> 20
    );
        let lat_cpu = live.env.usable_cpus.first().unwrap_or(0);
        match build_chase(&live.tmp) {
            Err(e) => println!("reference chase unavailable: {e}"),
            Ok(exe) => {
                let mut ratios = Vec::new();
                let mut raw = Vec::new();
                for _ in 0..pairs {
                    let file = run_hwsurvey(&live, &MemLatency, &latency_section, |p| {
                        p.id.starts_with("full_random/base/")
                    });
                    let hw = file
                        .tests
                        .iter()
                        .find(|t| t.outcome == hwsurvey_engine::result::Outcome::Measured)
                        .and_then(|t| figure(&file, &t.point.id));
                    let samples = hw.map_or(5, |h| h.samples);
                    let c = c_chase(&exe, chase_bytes, chase_steps, samples, lat_cpu);
                    match (hw, c) {
                        (Some(h), Ok(c)) => {
                            latency_medians.push(h.median);
                            raw.push(format!("{:.1}/{:.1} ns", h.median, c));
                            ratios.push(h.median / c);
                        }
                        (h, c) => raw.push(format!("hwsurvey {:?} C {:?}", h.map(|f| f.median), c)),
                    }
                }
                println!(
                    "hwsurvey ns per load / C ns per load (lower is faster): {}",
                    ratio_line(&ratios)
                );
                println!("    raw hwsurvey/C: {}", raw.join(", "));
                println!("(issue 38 asks the chase within 3 % of the C chase: ratio 0.97 .. 1.03)");
            }
        }
    }

    // 4. Run-to-run spread
    println!(
        "\n== 4. Run-to-run spread of hwsurvey medians (each run a full engine run of the point)"
    );
    println!(
        "Triad median bandwidth (bytes/s): {}",
        spread_line(&triad_medians)
    );
    println!(
        "latency median (ns per load):     {}",
        spread_line(&latency_medians)
    );
    println!("\nload average after: {}", loadavg());
}

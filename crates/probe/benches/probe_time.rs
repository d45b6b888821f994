//! Median probe time on the live machine and on the extracted 128-CPU Kunpeng 920 capture,
//! side by side with `lscpu` (`lscpu --sysroot DIR` on the capture) run alternately with it,
//! so both see the same load; the ratio is the median of the per-pair ratios. Targets: under
//! 100 ms live; on the Kunpeng capture at most 2x lscpu's time (it was
//! 123 ms against lscpu's 27 ms; 1.94-2.13x with the directory cache; the directory handles
//! of `SysRoot`, one-component lookups, brought it to ~1.7x). lscpu's figure is a whole
//! process (exec, dynamic linking, output to /dev/null); the probe's is the `probe_machine`
//! call, which reads more (memory, PCIe, OS) than lscpu does.
//! Run: `cargo bench -p hwsurvey-probe --bench probe_time`. `HWSURVEY_BENCH_SMOKE=1`
//! (scripts/bench-smoke): the short form, 3 runs each instead of 21.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hwsurvey_probe::{probe_machine, SysRoot};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// Median, min and max of some samples.
struct Stats {
    median: Duration,
    min: Duration,
    max: Duration,
}

impl Stats {
    fn of(samples: Vec<Duration>) -> Stats {
        let min = samples.iter().min().copied().unwrap_or_default();
        let max = samples.iter().max().copied().unwrap_or_default();
        Stats {
            median: median(samples),
            min,
            max,
        }
    }
    fn show(&self, runs: usize) -> String {
        format!(
            "median {:.2} ms, min {:.2} ms, max {:.2} ms over {runs} runs",
            self.median.as_secs_f64() * 1e3,
            self.min.as_secs_f64() * 1e3,
            self.max.as_secs_f64() * 1e3
        )
    }
}

/// One `lscpu` run on `root` (`--sysroot` unless `/`), timed; `None` when lscpu is missing
/// or fails.
fn time_lscpu(root: &Path) -> Option<Duration> {
    let mut cmd = Command::new("lscpu");
    if root != Path::new("/") {
        cmd.arg("--sysroot").arg(root);
    }
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let t = Instant::now();
    let status = cmd.status().ok()?;
    let took = t.elapsed();
    status.success().then_some(took)
}

/// lscpu's times beside the probe's, and the probe/lscpu ratio of each pair (a probe and the
/// lscpu run right after it, so both saw the same load).
struct Lscpu {
    stats: Stats,
    ratios: Vec<f64>,
}

/// `runs` probes of `root`, each followed by one lscpu run on the same root.
fn time_probe_and_lscpu(root: &Path, runs: usize) -> (Stats, Option<Lscpu>) {
    let mut probe = Vec::with_capacity(runs);
    let mut lscpu = Vec::with_capacity(runs);
    let mut ratios = Vec::with_capacity(runs);
    for _ in 0..runs {
        let sys = SysRoot::new(root);
        let t = Instant::now();
        let m = probe_machine(&sys);
        let took = t.elapsed();
        probe.push(took);
        std::hint::black_box(m);
        if let Some(d) = time_lscpu(root) {
            lscpu.push(d);
            ratios.push(took.as_secs_f64() / d.as_secs_f64().max(1e-9));
        }
    }
    let lscpu = (lscpu.len() == runs).then(|| Lscpu {
        stats: Stats::of(lscpu),
        ratios,
    });
    (Stats::of(probe), lscpu)
}

/// The lscpu line and the median of the per-pair ratios (../shared/notes/measuring.md), or why
/// lscpu could not be timed.
fn report_lscpu(lscpu: Option<Lscpu>, runs: usize, target: Option<f64>) {
    match lscpu {
        Some(Lscpu { stats, mut ratios }) => {
            ratios.sort_by(f64::total_cmp);
            let ratio = ratios[ratios.len() / 2];
            let (lo, hi) = (ratios[0], ratios[ratios.len() - 1]);
            println!("lscpu (same root, alternating): {}", stats.show(runs));
            let verdict = match target {
                Some(t) if ratio <= t => format!(" (target <= {t:.1}x: met)"),
                Some(t) => format!(" (target <= {t:.1}x: OVER)"),
                None => String::new(),
            };
            println!(
                "probe / lscpu: median {ratio:.2}x (min {lo:.2}x, max {hi:.2}x) over {runs} pairs{verdict}"
            );
        }
        None => println!("lscpu: not timed (no lscpu on PATH, or it failed on this root)"),
    }
}

fn extract_kunpeng(dir: &Path) -> Option<PathBuf> {
    let archive = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/aarch64-hisilicon-kunpeng920-2s-4numa-clusters/128arm-2pa2n8cluster4co.tar.bz2");
    let file = std::fs::File::open(archive).ok()?;
    let mut tar = tar::Archive::new(bzip2::read::BzDecoder::new(file));
    tar.unpack(dir).ok()?;
    Some(dir.join("128arm-2pa2n8cluster4co"))
}

fn main() {
    let smoke = std::env::var("HWSURVEY_BENCH_SMOKE").is_ok_and(|v| v == "1");
    let runs = if smoke { 3 } else { 21 };
    println!("== 1. probe_machine on this machine");
    let (probe, lscpu) = time_probe_and_lscpu(Path::new("/"), runs);
    println!(
        "probe_machine live (/): {} (target < 100 ms)",
        probe.show(runs)
    );
    report_lscpu(lscpu, runs, None);
    println!("== 2. probe_machine on the Kunpeng 920 capture");
    let tmp = tempfile::tempdir().expect("temporary directory");
    match extract_kunpeng(tmp.path()) {
        Some(root) => {
            let (probe, lscpu) = time_probe_and_lscpu(&root, runs);
            println!(
                "probe_machine Kunpeng 920 capture (128 CPUs): {}",
                probe.show(runs)
            );
            report_lscpu(lscpu, runs, Some(2.0));
        }
        None => println!("SKIPPED: ../shared not found (Kunpeng capture)"),
    }
}

//! Median probe time on the live machine and on the extracted 128-CPU Kunpeng 920 capture.
//! Targets (issue 3): under 100 ms live, under 300 ms on the Kunpeng capture.
//! Run: `cargo bench -p hwsurvey-probe --bench probe_time`. `HWSURVEY_BENCH_SMOKE=1`
//! (scripts/bench-smoke): the short form, 3 runs each instead of 21.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hwsurvey_probe::{probe_machine, SysRoot};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn time_probe(root: &Path, runs: usize) -> (Duration, Duration, Duration) {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let sys = SysRoot::new(root);
        let t = Instant::now();
        let m = probe_machine(&sys);
        samples.push(t.elapsed());
        std::hint::black_box(m);
    }
    let min = samples.iter().min().copied().unwrap_or_default();
    let max = samples.iter().max().copied().unwrap_or_default();
    (median(samples), min, max)
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
    let (med, min, max) = time_probe(Path::new("/"), runs);
    println!(
        "probe_machine live (/): median {:.2} ms, min {:.2} ms, max {:.2} ms over {runs} runs (target < 100 ms)",
        med.as_secs_f64() * 1e3,
        min.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    );
    println!("== 2. probe_machine on the Kunpeng 920 capture");
    let tmp = tempfile::tempdir().expect("temporary directory");
    match extract_kunpeng(tmp.path()) {
        Some(root) => {
            let (med, min, max) = time_probe(&root, runs);
            println!(
                "probe_machine Kunpeng 920 capture (128 CPUs): median {:.2} ms, min {:.2} ms, max {:.2} ms over {runs} runs (target < 300 ms)",
                med.as_secs_f64() * 1e3,
                min.as_secs_f64() * 1e3,
                max.as_secs_f64() * 1e3
            );
        }
        None => println!("SKIPPED: ../shared not found (Kunpeng capture)"),
    }
}

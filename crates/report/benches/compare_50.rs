//! Compares 50 result files (written to a temp folder, loaded from disk) and prints the time
//! of load + compare + every format, 3 rounds and their median.
//! `cargo bench -p hwsurvey-report --bench compare_50`. `HWSURVEY_BENCH_SMOKE=1`
//! (scripts/bench-smoke): the short form, 5 files and 2 rounds.

use std::time::Instant;

use hwsurvey_report::{compare, default_label, plot, render, Format, Input};
use hwsurvey_testkit::report_sample::{result, Spec};

fn main() {
    let smoke = std::env::var("HWSURVEY_BENCH_SMOKE").is_ok_and(|v| v == "1");
    let (files, rounds) = if smoke { (5, 2) } else { (50, 3) };
    println!("== compare {files} result files: load + compare + plots + 5 formats");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut paths = Vec::new();
    for i in 0..files {
        let f = result(&Spec {
            hostname: format!("host{i:02}"),
            arch: ["x86_64", "aarch64", "sparc64"][i % 3].into(),
            kernel: "6.1".into(),
            cpus: 64,
            triad_one_thread: 5e9 + i as f64 * 1e8,
            spread: 0.02,
            profile_version: 1,
            hugetlb_skipped: i % 2 == 0,
        });
        let p = dir.path().join(format!("r{i:02}.json"));
        f.write_atomic(&p).expect("write");
        paths.push(p);
    }
    let mut totals_s = Vec::new();
    for round in 0..rounds {
        let t0 = Instant::now();
        let inputs: Vec<Input> = paths
            .iter()
            .map(|p| {
                let file = hwsurvey_result::load(p).expect("load");
                Input {
                    label: default_label(&file),
                    file,
                }
            })
            .collect();
        let t1 = Instant::now();
        let c = compare(&inputs, None, false).expect("compare");
        let plots = plot::scaling_plots(&c, 3);
        let mut bytes = 0;
        for f in [
            Format::Terminal,
            Format::Markdown,
            Format::Csv,
            Format::Json,
            Format::Html,
        ] {
            bytes += render(&c, f, &plots).len();
        }
        let t2 = Instant::now();
        println!(
            "round {round}: {files} files: load {:.3} s, compare + plots + 5 formats {:.3} s, total {:.3} s ({bytes} bytes rendered)",
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            (t2 - t0).as_secs_f64()
        );
        totals_s.push((t2 - t0).as_secs_f64());
    }
    totals_s.sort_by(f64::total_cmp);
    println!(
        "total: median {:.3} s (min {:.3} s, max {:.3} s) over {rounds} runs",
        (totals_s[(totals_s.len() - 1) / 2] + totals_s[totals_s.len() / 2]) / 2.0,
        totals_s[0],
        totals_s[totals_s.len() - 1]
    );
}

//! Compares 50 result files (written to a temp folder, loaded from disk) and prints the time
//! of load + compare + every format. `cargo bench -p hwsurvey-report --bench compare_50`.

use std::time::Instant;

use hwsurvey_report::sample::{result, Spec};
use hwsurvey_report::{compare, default_label, plot, render, Format, Input};

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut paths = Vec::new();
    for i in 0..50 {
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
    for round in 0..3 {
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
            "round {round}: 50 files: load {:.3} s, compare + plots + 5 formats {:.3} s, total {:.3} s ({bytes} bytes rendered)",
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            (t2 - t0).as_secs_f64()
        );
    }
}

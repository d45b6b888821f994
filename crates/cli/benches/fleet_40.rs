//! `hwsurvey fleet` (the real binary) on 40 result files: copies of the x86_64 example of
//! reports/examples/ as 40 hosts in `DIR/<host>/result.json`, each a little apart (samples
//! scaled by 0.97 to 1.03), one with its memory bandwidth at 0.7 and THP never. Prints the
//! wall time of each round and their median; the target is under 2 s (issue 20). Also checks
//! that the one defective host is the one flagged (it fails: 30 % slow, beyond --fail-pct;
//! exit 2, its name in the output).
//!
//! `cargo bench -p hwsurvey --bench fleet_40`: 40 files, 5 rounds. `HWSURVEY_BENCH_SMOKE=1`
//! (scripts/bench-smoke): the short form, 8 files and 2 rounds.
//!
//! Output (scripts/bench-smoke's contract): "== hwsurvey fleet, N result files", then
//! "total: median X s (...) over N runs".

use std::process::Command;
use std::time::Instant;

use hwsurvey_testkit::fleet_sample::{example, scale, set_thp, with_host};

fn main() {
    let smoke = std::env::var("HWSURVEY_BENCH_SMOKE").is_ok_and(|v| v == "1");
    let (files, rounds) = if smoke { (8, 2) } else { (40, 5) };
    println!("== hwsurvey fleet, {files} result files (target: under 2 s for 40)");
    let dir = tempfile::tempdir().expect("temp dir");
    let base = example("x86_64-standard.json");
    let bad = files / 2;
    for i in 0..files {
        let host = format!("node{i:02}");
        let mut file = with_host(base.clone(), &host);
        file = if i == bad {
            set_thp(scale(file, Some("mem.bandwidth"), 0.7), "never")
        } else {
            // 0.97 .. 1.03 in steps, so that the group has a spread (MAD > 0)
            scale(file, None, 0.97 + 0.06 * (i % 7) as f64 / 6.0)
        };
        file.write_atomic(&dir.path().join(&host).join("result.json"))
            .expect("write");
    }
    let bin = env!("CARGO_BIN_EXE_hwsurvey");
    let mut times_s = Vec::new();
    for round in 0..rounds {
        let t0 = Instant::now();
        let out = Command::new(bin)
            .arg("fleet")
            .arg(dir.path())
            .output()
            .expect("run hwsurvey fleet");
        let s = t0.elapsed().as_secs_f64();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let flagged = format!("node{bad:02}:\n  outlier: STREAM Triad");
        assert!(text.contains(&flagged), "{text}");
        assert_eq!(text.matches("  outlier: ").count(), 1, "{text}");
        println!("round {round}: {files} files: {s:.3} s");
        times_s.push(s);
    }
    times_s.sort_by(f64::total_cmp);
    let n = times_s.len();
    let median = (times_s[(n - 1) / 2] + times_s[n / 2]) / 2.0;
    println!(
        "total: median {median:.3} s (min {:.3} s, max {:.3} s) over {rounds} runs; {}",
        times_s[0],
        times_s[n - 1],
        if median < 2.0 {
            "under the 2 s target"
        } else {
            "OVER the 2 s target"
        }
    );
}

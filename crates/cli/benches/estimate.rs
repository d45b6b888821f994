//! The plan's time estimate against the time each family took (issue 13: every family within
//! ±25 %), from the `family_times` a result file records (`estimated_s`: the sum of the
//! estimates of the points that ran; `actual_s`: wall time from the family's first point to
//! the end of its last).
//!
//! 1. `hwsurvey run` of the standard profile on this machine (its result file is kept; the
//!    path is printed), then per family: points, estimated and actual seconds, their ratio and
//!    whether it is within ±25 %; then the whole run.
//! 2. The same table for the result file of each guest's last measured run, where the guest
//!    tests left one (`target/guests/runs/<guest>/guest/out/run.json`; `HWSURVEY_GUESTS=1
//!    cargo test -p hwsurvey-guests --test guests` writes them), and for any file named in
//!    `HWSURVEY_ESTIMATE_FILES` (colon-separated).
//!
//! `cargo bench -p hwsurvey --bench estimate`; `HWSURVEY_BENCH_SMOKE=1` is the short form
//! (CI's scripts/bench-smoke): the quick profile, section 1 only.
//!
//! Output (scripts/bench-smoke's contract): each section's figure line is "actual/estimated:
//! median R (min A, max B) over N families".

use std::path::{Path, PathBuf};
use std::process::Command;

use hwsurvey_result::ResultFile;

/// Allowed relative error of a family's estimate (issue 13).
const TOLERANCE: f64 = 0.25;

/// `/proc/loadavg`'s three averages, read by the probe layer.
fn loadavg() -> String {
    hwsurvey_probe::run_env::load_average_line(&hwsurvey_probe::SysRoot::live())
}

/// Prints the per-family table of `file` and its figure line.
fn report(file: &ResultFile) {
    let rows: Vec<(&str, usize, f64, f64, Option<f64>)> = file
        .family_times
        .iter()
        .map(|t| {
            (
                t.family.as_str(),
                t.points_run,
                t.estimated_s,
                t.actual_s,
                t.actual_over_estimate(),
            )
        })
        .collect();
    if rows.is_empty() {
        println!("this result file records no family times (written before hwsurvey kept them)");
        return;
    }
    println!(
        "{:<22} {:>6} {:>11} {:>11} {:>10}  within ±{:.0} %",
        "family",
        "points",
        "estimated s",
        "actual s",
        "act/est",
        TOLERANCE * 100.0
    );
    let mut ratios = Vec::new();
    let mut within = 0usize;
    for (family, points, est, act, ratio) in &rows {
        let (shown, ok) = match ratio {
            Some(r) => {
                ratios.push(*r);
                let ok = (r - 1.0).abs() <= TOLERANCE;
                within += usize::from(ok);
                (format!("{r:.2}"), if ok { "yes" } else { "NO" })
            }
            None => ("n/a".to_string(), "no estimate"),
        };
        println!("{family:<22} {points:>6} {est:>11.2} {act:>11.2} {shown:>10}  {ok}");
    }
    let est: f64 = rows.iter().map(|r| r.2).sum();
    let act: f64 = rows.iter().map(|r| r.3).sum();
    println!(
        "{:<22} {:>6} {est:>11.2} {act:>11.2} {:>10.2}",
        "all families",
        rows.iter().map(|r| r.1).sum::<usize>(),
        act / est.max(1e-9)
    );
    if ratios.is_empty() {
        return;
    }
    let median = hwsurvey_stats::median(&ratios).unwrap_or(f64::NAN);
    let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let max = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    println!(
        "actual/estimated: median {median:.2} (min {min:.2}, max {max:.2}) over {} families; {within} of {} within ±{:.0} %",
        ratios.len(),
        ratios.len(),
        TOLERANCE * 100.0
    );
}

/// Result files of the guests' last measured runs, by guest name.
fn guest_files(repo: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let runs = repo.join("target/guests/runs");
    if let Ok(entries) = std::fs::read_dir(&runs) {
        for e in entries.flatten() {
            let f = e.path().join("guest/out/run.json");
            if f.is_file() {
                out.push((format!("guest {}", e.file_name().to_string_lossy()), f));
            }
        }
    }
    if let Ok(list) = std::env::var("HWSURVEY_ESTIMATE_FILES") {
        for p in list.split(':').filter(|p| !p.is_empty()) {
            out.push((p.to_string(), PathBuf::from(p)));
        }
    }
    out.sort();
    out
}

fn main() {
    let smoke = std::env::var_os("HWSURVEY_BENCH_SMOKE").is_some_and(|v| v == "1");
    let profile = if smoke { "quick" } else { "standard" };
    let bin = env!("CARGO_BIN_EXE_hwsurvey");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("estimate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder for the result file");
    let out = dir.join(format!("{profile}.json"));
    println!(
        "== 1. hwsurvey run --profile {profile} on this machine (load before {})",
        loadavg()
    );
    let status = Command::new(bin)
        .args(["run", "--profile", profile, "-o"])
        .arg(&out)
        .current_dir(&repo)
        .stdout(std::process::Stdio::null())
        .stderr(
            std::fs::File::create(dir.join("run.log")).expect("a log file for the run's progress"),
        )
        .status()
        .expect("hwsurvey runs");
    match hwsurvey_result::load(&out) {
        Ok(file) => {
            let code = status.code().map_or("a signal".into(), |c| c.to_string());
            println!("result file: {} (exit {code})", out.display());
            report(&file);
        }
        Err(e) => println!("run: {status}, no result file: {e}"),
    }
    println!("load after {}", loadavg());
    // the short form measures; old guest files in target/ are no part of what it checks
    let guests = if smoke {
        Vec::new()
    } else {
        guest_files(&repo)
    };
    for (name, path) in guests {
        println!("\n== 2. {name}: {}", path.display());
        match hwsurvey_result::load(&path) {
            Ok(file) => {
                println!(
                    "profile {}, {} families, run {}",
                    file.profile.id,
                    file.family_times.len(),
                    file.started_at
                );
                report(&file);
            }
            Err(e) => println!("unreadable: {e}"),
        }
    }
}

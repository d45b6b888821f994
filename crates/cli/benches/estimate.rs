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
//! 3. What the measured figures of issue 34 cost (its Performance section: "measuring the
//!    clock adds under 2 s to the standard profile; reading energy counters adds no
//!    measurable time to a point"): `hwsurvey run --profile standard --only cpu.clock` run a
//!    few times, the family's actual seconds each time (and in section 1's run, when it was
//!    the standard profile); then the energy reads the engine makes around every point (one
//!    reading before, one after, the difference: `hwsurvey_probe::energy::{read, between}`),
//!    timed over a synthetic two-package RAPL tree (5 counters: two packages, their DRAM,
//!    psys) and over this machine's own tree (where it has none, a point reads nothing: the
//!    time of finding that out once per run is given), each against the shortest point of
//!    section 1's run.
//! 4. What the hardware watch costs a point ("reading the counters adds no
//!    measurable time to a point"): the engine's reads just before and just after a point
//!    (`hwsurvey_engine::watch::Watcher::{before, after}`: EDAC, AER, links, throttle
//!    counters, cpufreq of the point's CPUs, the kernel log, the difference and the run's
//!    totals), timed over a synthetic server tree (4 EDAC DIMMs, 11 PCIe functions with AER
//!    statistics and links, 64 CPUs of 2 packages with thermal throttle counters, a kernel
//!    log) and over this machine's own, against the shortest point of section 1's run.
//!
//! `cargo bench -p hwsurvey --bench estimate`; `HWSURVEY_BENCH_SMOKE=1` is the short form
//! (CI's scripts/bench-smoke): the quick profile in section 1, no section 2, and section 3
//! with 3 cpu.clock runs and 200 read pairs (the full form: 5 runs, 2000 pairs).
//!
//! Output (scripts/bench-smoke's contract): the figure line of sections 1 and 2 is
//! "actual/estimated: median R (min A, max B) over N families"; section 3's are "... median
//! X s (min A, max B) over N runs" for cpu.clock and "... median X us ... over N runs" for
//! each tree's energy reads; section 4's "... median X us ... over N runs" for each tree's
//! watch reads.

use std::path::{Path, PathBuf};
use std::process::Command;

use hwsurvey_probe::energy;
use hwsurvey_probe::SysRoot;
use hwsurvey_result::ResultFile;

/// Allowed relative error of a family's estimate (issue 13).
const TOLERANCE: f64 = 0.25;

/// `/proc/loadavg`'s three averages, read by the probe layer.
fn loadavg() -> String {
    hwsurvey_probe::run_env::load_average_line(&SysRoot::live())
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
    let file = match hwsurvey_result::load(&out) {
        Ok(file) => {
            let code = status.code().map_or("a signal".into(), |c| c.to_string());
            println!("result file: {} (exit {code})", out.display());
            report(&file);
            Some(file)
        }
        Err(e) => {
            println!("run: {status}, no result file: {e}");
            None
        }
    };
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
    let (runs, pairs) = if smoke { (3, 200) } else { (5, 2000) };
    println!("\n== 3. what cpu.clock and the energy reads cost (issue 34, Performance)");
    clock_cost(bin, &repo, &dir, runs, file.as_ref().filter(|_| !smoke));
    let shortest = file.as_ref().and_then(shortest_point);
    energy_cost(pairs, shortest.as_ref());
    println!("\n== 4. what the hardware watch's reads cost a point: none may be measurable");
    watch_cost(pairs, shortest.as_ref());
}

/// `pairs` times what the engine does around a point for the hardware watch: the reading
/// before, the reading after with cpufreq of the point's CPUs and the kernel log's new lines,
/// the point's difference and the run's totals (microseconds each time).
fn time_watch(
    w: &mut hwsurvey_engine::watch::Watcher<'_>,
    point: &hwsurvey_engine::Point,
    pairs: usize,
) -> Vec<f64> {
    (0..pairs)
        .map(|_| {
            let t0 = std::time::Instant::now();
            let before = w.before();
            std::hint::black_box(w.after(before, point));
            t0.elapsed().as_secs_f64() * 1e6
        })
        .collect()
}

/// The watch's reads of one point over a synthetic server tree and over this machine's own.
fn watch_cost(pairs: usize, shortest: Option<&(String, f64)>) {
    use hwsurvey_probe::run_env::{CpuPlace, ReadRunEnv as _};
    use hwsurvey_testkit::watch as tree;
    let dir = tempfile::tempdir().expect("a folder for the synthetic tree");
    let root_path = dir.path();
    tree::edac_tree(root_path, &tree::R181_GHES);
    hwsurvey_testkit::pcie_switch_tree(root_path);
    for a in hwsurvey_probe::SysRoot::new(root_path)
        .list_dir("/sys/bus/pci/devices")
        .unwrap_or_default()
    {
        tree::aer_files(root_path, &a, &[], &[], &[]);
    }
    let cpus: Vec<CpuPlace> = (0..64u32)
        .map(|cpu| CpuPlace {
            cpu,
            package: Some(i64::from(cpu / 32)),
            core: Some(i64::from(cpu % 16)),
            node: Some(cpu / 32),
        })
        .collect();
    tree::thermal_throttle_tree(root_path, &(0..64).collect::<Vec<u32>>(), 0);
    tree::kmsg_file(root_path);
    let root = SysRoot::new(root_path);
    let machine = hwsurvey_probe::probe_machine(&root);
    let point: hwsurvey_engine::Point = serde_json::from_value(serde_json::json!({
        "family": "mem.bandwidth", "id": "stream.triad/threads=64", "threads": 64,
        "placement": "compact", "cpus": (0..64).collect::<Vec<u32>>(), "params": {},
        "memory_bytes": 0, "estimated_s": 1.0
    }))
    .expect("a point");
    let mut w = hwsurvey_engine::watch::Watcher::start(&root, &machine, &cpus);
    let watched: Vec<String> = w
        .run()
        .sources
        .iter()
        .map(|s| format!("{} {}", s.watched, s.source.words()))
        .collect();
    print_reads(
        &format!(
            "watch reads of one point, synthetic server tree ({})",
            watched.join(", ")
        ),
        &time_watch(&mut w, &point, pairs),
        shortest,
    );
    let live = SysRoot::live();
    let machine = hwsurvey_probe::probe_machine(&live);
    let env = hwsurvey_probe::run_env::RunEnv::read(&live);
    let first: Vec<u32> = env.usable_cpus.iter().take(1).collect();
    let point: hwsurvey_engine::Point = serde_json::from_value(serde_json::json!({
        "family": "mem.bandwidth", "id": "stream.triad/threads=1", "threads": 1,
        "placement": "compact", "cpus": first, "params": {},
        "memory_bytes": 0, "estimated_s": 1.0
    }))
    .expect("a point");
    let mut w = hwsurvey_engine::watch::Watcher::start(&live, &machine, &env.cpus);
    let watched: Vec<String> = w
        .run()
        .sources
        .iter()
        .map(|s| match &s.unavailable {
            None => format!("{} {}", s.watched, s.source.words()),
            Some(_) => format!("no {}", s.source.words()),
        })
        .collect();
    print_reads(
        &format!(
            "watch reads of one point, this machine's tree ({})",
            watched.join(", ")
        ),
        &time_watch(&mut w, &point, pairs),
        shortest,
    );
}

/// Median, least and largest of `v` (not empty).
fn spread(v: &[f64]) -> (f64, f64, f64) {
    let median = hwsurvey_stats::median(v).unwrap_or(f64::NAN);
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (median, min, max)
}

/// The bound on what cpu.clock adds to the standard profile, seconds.
const CLOCK_BOUND_S: f64 = 2.0;

/// `hwsurvey run --profile standard --only cpu.clock`, `runs` times: the family's actual
/// seconds (`family_times`) each time and their median; `standard`: section 1's run of the
/// whole profile, whose cpu.clock time is printed beside them.
fn clock_cost(bin: &str, repo: &Path, dir: &Path, runs: usize, standard: Option<&ResultFile>) {
    let clock_time = |f: &ResultFile| {
        f.family_times
            .iter()
            .find(|t| t.family == "cpu.clock")
            .map(|t| (t.points_run, t.estimated_s, t.actual_s))
    };
    let mut actual = Vec::new();
    for n in 1..=runs {
        let out = dir.join(format!("clock-{n}.json"));
        let status = Command::new(bin)
            .args(["run", "--profile", "standard", "--only", "cpu.clock", "-o"])
            .arg(&out)
            .current_dir(repo)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("hwsurvey runs");
        match hwsurvey_result::load(&out)
            .ok()
            .as_ref()
            .and_then(clock_time)
        {
            Some((points, est, act)) => {
                println!(
                    "run {n} cpu.clock: {points} points, actual {act:.3} s (estimated {est:.3} s)"
                );
                actual.push(act);
            }
            None => println!(
                "run {n} cpu.clock: {status}, no cpu.clock time in {}",
                out.display()
            ),
        }
    }
    if let Some((points, est, act)) = standard.and_then(clock_time) {
        println!(
            "in section 1's standard run: cpu.clock {points} points, actual {act:.3} s (estimated {est:.3} s)"
        );
    }
    if actual.is_empty() {
        return;
    }
    let (median, min, max) = spread(&actual);
    println!(
        "cpu.clock in the standard profile: median {median:.3} s (min {min:.3}, max {max:.3}) over {} runs; under {CLOCK_BOUND_S} s: {}",
        actual.len(),
        if max < CLOCK_BOUND_S { "yes" } else { "NO" }
    );
}

/// The shortest measured point of `file`: (family and id, seconds).
fn shortest_point(file: &ResultFile) -> Option<(String, f64)> {
    file.tests
        .iter()
        .filter(|t| t.outcome == hwsurvey_result::Outcome::Measured && t.duration_s > 0.0)
        .min_by(|a, b| a.duration_s.total_cmp(&b.duration_s))
        .map(|t| (format!("{} {}", t.point.family, t.point.id), t.duration_s))
}

/// `pairs` times what the engine does around a point where counters exist: a reading before,
/// one after, the energy between (microseconds each time).
fn time_reads(root: &SysRoot, counters: &[energy::EnergyCounter], pairs: usize) -> Vec<f64> {
    (0..pairs)
        .map(|_| {
            let t0 = std::time::Instant::now();
            let before = energy::read(root, counters);
            let after = energy::read(root, counters);
            std::hint::black_box(energy::between(counters, &before, &after));
            t0.elapsed().as_secs_f64() * 1e6
        })
        .collect()
}

/// Prints one figure line of read times (microseconds) against the shortest point.
fn print_reads(what: &str, us: &[f64], shortest: Option<&(String, f64)>) {
    let (median, min, max) = spread(us);
    let against = match shortest {
        Some((id, s)) => format!(
            "; {:.4} % of the shortest point of section 1 ({id}, {s:.3} s)",
            median / 1e6 / s * 100.0
        ),
        None => String::new(),
    };
    println!(
        "{what}: median {median:.1} us (min {min:.1}, max {max:.1}) over {} runs{against}",
        us.len()
    );
}

/// The energy reads of one point over a synthetic two-package RAPL tree and over this
/// machine's own tree.
fn energy_cost(pairs: usize, shortest: Option<&(String, f64)>) {
    let tree = tempfile::tempdir().expect("a folder for the synthetic tree");
    hwsurvey_testkit::powercap::write_zones(
        tree.path(),
        &hwsurvey_testkit::powercap::TWO_PACKAGE_SERVER,
    );
    let root = SysRoot::new(tree.path());
    let counters = energy::discover(&root).expect("the synthetic tree's counters");
    let names: Vec<&str> = counters.iter().map(|c| c.domain.as_str()).collect();
    print_reads(
        &format!(
            "energy reads of one point, synthetic two-package RAPL tree ({} counters: {})",
            counters.len(),
            names.join(", ")
        ),
        &time_reads(&root, &counters, pairs),
        shortest,
    );
    let live = SysRoot::live();
    let mut found = Vec::new();
    let mut last = None;
    for _ in 0..pairs.min(200) {
        let t0 = std::time::Instant::now();
        last = Some(energy::discover(&live));
        found.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    match last {
        Some(Ok(c)) if !c.is_empty() => print_reads(
            &format!(
                "energy reads of one point, this machine's tree ({} counters)",
                c.len()
            ),
            &time_reads(&live, &c, pairs),
            shortest,
        ),
        last => {
            let why = match last {
                Some(Err(u)) => u.to_string(),
                _ => "an empty list".into(),
            };
            println!(
                "this machine's tree has no energy counter ({why}): the engine reads nothing \
                 around a point (0 s a point)"
            );
            print_reads(
                "finding that out, once per run (energy::discover)",
                &found,
                shortest,
            );
        }
    }
}

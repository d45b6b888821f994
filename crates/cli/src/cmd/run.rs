//! `hwsurvey run`: probe, plan, run the profile's scaling tests, write the result file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use hwsurvey_bench::engine::{self, Observer, RunRequest};
use hwsurvey_bench::env::RunEnv;
use hwsurvey_bench::families;
use hwsurvey_bench::plan::{build_plan, Plan, RunOptions};
use hwsurvey_bench::result::{ResultFile, RunStatus, TestResult, Tool};
use hwsurvey_model::units::{format_bytes_binary, format_rate_decimal, three_significant};
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_stats::scaling::{analyse, ScalingPoint};

/// Options of `hwsurvey run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Profile: a built-in name (`standard`, `quick`) or a path to a TOML file.
    #[arg(long, default_value = "standard")]
    pub profile: String,
    /// Result file [default: reports/<hostname>-<arch>-<date>.json].
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Run only these families (ids like `mem.bandwidth`, or a prefix like `mem`); repeatable.
    #[arg(long, num_args = 1..)]
    pub only: Vec<String>,
    /// Print the plan and exit without running anything.
    #[arg(long)]
    pub plan_only: bool,
    /// Directory on a device to test with storage.iops (repeatable, one per device).
    #[arg(long)]
    pub storage_dir: Vec<PathBuf>,
    /// Raw block device for storage.iops (needs --destructive; refused if it holds data).
    #[arg(long)]
    pub storage_device: Vec<PathBuf>,
    /// Allow writing to the --storage-device devices.
    #[arg(long)]
    pub destructive: bool,
}

/// Runs `hwsurvey run`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let registry = families::registry();
    let profile = families::load_profile(&args.profile)?;
    let root = SysRoot::live();
    let machine = probe_machine(&root);
    let env = RunEnv::read(&root);
    let options = RunOptions {
        storage_dirs: args.storage_dir.clone(),
        storage_devices: args.storage_device.clone(),
        destructive: args.destructive,
    };
    let plan = build_plan(&profile, &registry, &machine, &env, &options, &args.only)?;
    print!("{}", render_plan(&plan, &profile.description));
    if args.plan_only {
        return Ok(ExitCode::SUCCESS);
    }
    let output = match args.output {
        Some(p) => p,
        None => default_output(&env)?,
    };
    let handler = engine::install_sigint_handler();
    println!(
        "writing {} after every test{}",
        output.display(),
        if handler {
            "; Ctrl-C stops after the current sample and keeps what finished"
        } else {
            ""
        }
    );
    let tool = Tool {
        version: env!("CARGO_PKG_VERSION").to_string(),
        git_revision: hwsurvey_bench::GIT_REVISION.to_string(),
        arch: std::env::consts::ARCH.to_string(),
    };
    let req = RunRequest {
        profile: &profile,
        plan: &plan,
        families: &registry,
        machine: &machine,
        env: &env,
        options: &options,
        output: &output,
        root: &root,
        tool,
    };
    let mut progress = Progress::new(plan.point_count());
    let file = engine::run(&req, &mut progress)
        .with_context(|| format!("writing {}", output.display()))?;
    progress.bar.finish_and_clear();
    println!("{}", render_summary(&file));
    println!("result file: {}", output.display());
    Ok(match file.status {
        RunStatus::Interrupted => {
            println!(
                "interrupted: the file holds the {} finished tests",
                file.tests.len()
            );
            ExitCode::from(130)
        }
        _ => ExitCode::SUCCESS,
    })
}

/// `reports/<hostname>-<arch>-<YYYY-MM-DD>.json`, with `-2`, `-3`, ... if taken.
fn default_output(env: &RunEnv) -> anyhow::Result<PathBuf> {
    let host = env
        .hostname
        .known()
        .map(|h| h.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_"))
        .unwrap_or_else(|| "unknown-host".into());
    let now = hwsurvey_bench::result::rfc3339(std::time::SystemTime::now());
    let date = now.get(..10).unwrap_or("unknown-date");
    let dir = Path::new("reports");
    let base = format!("{host}-{}-{date}", env.arch);
    let mut path = dir.join(format!("{base}.json"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{base}-{n}.json"));
        n += 1;
    }
    Ok(path)
}

struct Progress {
    bar: indicatif::ProgressBar,
}

impl Progress {
    fn new(total: usize) -> Self {
        let bar = indicatif::ProgressBar::new(total as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "[{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
        ) {
            bar.set_style(style);
        }
        Progress { bar }
    }
}

impl Observer for Progress {
    fn point_started(&mut self, point: &hwsurvey_bench::Point, index: usize, _total: usize) {
        self.bar.set_position(index as u64);
        self.bar
            .set_message(format!("{} {}", point.family, point.id));
    }
    fn point_finished(&mut self, result: &TestResult) {
        self.bar.inc(1);
        if result.outcome != "measured" {
            self.bar.println(format!(
                "{} {}: {} ({})",
                result.point.family,
                result.point.id,
                result.outcome,
                result.reason.as_deref().unwrap_or("")
            ));
        }
    }
}

/// The plan for people.
pub fn render_plan(plan: &Plan, description: &str) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "profile {} v{}: {description}",
        plan.profile_id, plan.profile_version
    );
    let _ = writeln!(
        s,
        "usable CPUs {}, thread counts {:?}, last-level cache {}, memory working set {}, memory cap {}",
        plan.usable_cpus,
        plan.thread_counts,
        plan.llc_total_bytes
            .map(format_bytes_binary)
            .unwrap_or_else(|| "unknown".into()),
        format_bytes_binary(plan.memory_working_set_bytes),
        plan.memory_cap_bytes
            .map(format_bytes_binary)
            .unwrap_or_else(|| "unknown (1 GiB assumed)".into()),
    );
    for f in &plan.families {
        let _ = writeln!(
            s,
            "{}: {} points, estimated {:.0} s of a {:.0} s budget",
            f.family,
            f.points.len(),
            f.estimated_s,
            f.budget_s
        );
        for p in &f.points {
            let _ = writeln!(
                s,
                "  {:<40} threads {:<3} cpus {}",
                p.id,
                p.threads,
                cpus_text(&p.cpus)
            );
        }
        for k in &f.skipped {
            let _ = writeln!(s, "  {:<40} skipped: {}", k.id, k.reason);
        }
    }
    let _ = writeln!(
        s,
        "total: {} points, estimated {:.0} s",
        plan.point_count(),
        plan.estimated_s()
    );
    s
}

fn cpus_text(cpus: &[u32]) -> String {
    let mut v: Vec<String> = cpus.iter().take(8).map(|c| c.to_string()).collect();
    if cpus.len() > 8 {
        v.push("...".into());
    }
    v.join(",")
}

/// A metric value for people, in scaled units by the unit in its name.
fn human(name: &str, v: f64) -> String {
    if name.ends_with("bytes_per_s") {
        format_rate_decimal(v)
    } else if name.ends_with("_ns") {
        format!("{} ns", three_significant(v))
    } else if name.ends_with("_per_s") || name == "iops" {
        let (d, u) = if v >= 1e9 {
            (1e9, "G")
        } else if v >= 1e6 {
            (1e6, "M")
        } else if v >= 1e3 {
            (1e3, "k")
        } else {
            (1.0, "")
        };
        let what = if name == "iops" { "IOPS" } else { "/s" };
        format!("{} {u}{what}", three_significant(v / d))
    } else {
        three_significant(v)
    }
}

#[derive(tabled::Tabled)]
struct Row {
    family: String,
    point: String,
    metric: String,
    median: String,
    #[tabled(rename = "min..max")]
    range: String,
    #[tabled(rename = "CV")]
    cv: String,
    peak: String,
}

/// The end-of-run table: one row per measured metric, skipped/failed points with reasons,
/// and a scaling line per thread-swept series.
pub fn render_summary(file: &ResultFile) -> String {
    let mut rows = Vec::new();
    for t in &file.tests {
        if t.outcome != "measured" {
            rows.push(Row {
                family: t.point.family.clone(),
                point: t.point.id.clone(),
                metric: t.outcome.clone(),
                median: t.reason.clone().unwrap_or_default(),
                range: String::new(),
                cv: String::new(),
                peak: String::new(),
            });
            continue;
        }
        for m in &t.metrics {
            let (median, range, cv) = match &m.summary {
                Some(s) => (
                    human(&m.name, s.median),
                    format!("{}..{}", human(&m.name, s.min), human(&m.name, s.max)),
                    s.cv.map(|c| format!("{:.1}%", c * 100.0))
                        .unwrap_or_default(),
                ),
                None => (
                    m.summary_error.clone().unwrap_or_default(),
                    String::new(),
                    String::new(),
                ),
            };
            rows.push(Row {
                family: t.point.family.clone(),
                point: t.point.id.clone(),
                metric: m.name.clone(),
                median,
                range,
                cv,
                peak: m.peak.map(|p| human(&m.name, p)).unwrap_or_default(),
            });
        }
    }
    let mut out = tabled::Table::new(rows)
        .with(tabled::settings::Style::sharp())
        .to_string();
    out.push('\n');
    for line in scaling_lines(file) {
        out.push_str(&line);
        out.push('\n');
    }
    let skipped = file.skipped.len();
    if skipped > 0 {
        out.push_str(&format!(
            "{skipped} points skipped (reasons in the plan above and in the file's \"skipped\")\n"
        ));
    }
    out
}

/// For every series whose point ids differ only in `threads=N`: single thread, peak, knee.
fn scaling_lines(file: &ResultFile) -> Vec<String> {
    let mut series: BTreeMap<(String, String, String), Vec<ScalingPoint>> = BTreeMap::new();
    for t in &file.tests {
        let Some(m) = t.metrics.first() else {
            continue;
        };
        let Some(s) = &m.summary else { continue };
        if m.better != hwsurvey_bench::Better::Higher || !t.point.id.contains("threads=") {
            continue;
        }
        let key: Vec<&str> = t
            .point
            .id
            .split('/')
            .filter(|p| !p.starts_with("threads="))
            .collect();
        series
            .entry((t.point.family.clone(), key.join("/"), m.name.clone()))
            .or_default()
            .push(ScalingPoint {
                threads: t.point.threads,
                throughput: s.median,
            });
    }
    series
        .into_iter()
        .filter(|(_, pts)| pts.len() >= 2)
        .filter_map(|((family, id, name), pts)| {
            let a = analyse(&pts)?;
            Some(format!(
                "{family} {id}: 1 thread {}, peak {} at {} threads, efficiency {}, knee (90% of peak) at {} threads",
                a.single_thread.map(|v| human(&name, v)).unwrap_or_else(|| "n/a".into()),
                human(&name, a.peak),
                a.peak_threads,
                a.efficiency_at_peak
                    .map(|e| format!("{:.0}%", e * 100.0))
                    .unwrap_or_else(|| "n/a".into()),
                a.knee_threads
            ))
        })
        .collect()
}

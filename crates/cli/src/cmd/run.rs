//! `hwsurvey run`: probe, plan, run the profile's scaling tests, write the result file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[cfg(test)]
use super::run_output::default_stem;
use super::run_output::{claim_output, default_output, file_identity, what_was_kept};
use hwsurvey_engine::plan::{build_plan, Plan, RunOptions};
use hwsurvey_engine::run::{self as engine, Observer, RunRequest};
use hwsurvey_engine::signals;
use hwsurvey_model::units::plural;
use hwsurvey_probe::run_env::RunEnv;
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_report::format::duration_text;
use hwsurvey_report::run::{
    long_run_warning, progress_line, render_closing, render_plan, render_summary,
};
use hwsurvey_result::{ResultFile, RunStatus, TestResult, Tool};
use hwsurvey_workloads::families;

/// Options of `hwsurvey run`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Exit status:
  0      at least one test was measured and none failed
  1      a test failed (the result file holds its error)
  2      the run did not start (bad option or profile, a refused --storage-dir or
         --storage-device, an existing -o file) or its result could not be written
  3      nothing was measured (every point asked for was skipped; the reasons are printed)
  128+N  stopped by signal N (130 Ctrl-C, 143 SIGTERM); the file keeps what finished

Examples:
  hwsurvey run                                  # standard profile
  hwsurvey run --plan-only                      # the points this machine would run
  hwsurvey run --profile quick -o quick.json    # tiny sizes, seconds
  hwsurvey run --only mem.bandwidth --only mem.latency
  hwsurvey run --storage-dir /mnt/nvme0/tmp --storage-dir /mnt/nvme1/tmp")]
pub struct Args {
    /// Profile: a built-in name (`standard`, `quick`) or a path to a TOML file.
    #[arg(long, default_value = "standard")]
    pub profile: String,
    /// Result file [default: reports/<hostname>-<arch>-<date>-<HHMMSS>.json, with -2, -3, ...
    /// when taken]. An existing file is refused unless --force.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Replace the -o file when it exists.
    #[arg(long)]
    pub force: bool,
    /// Run only these families (ids like `mem.bandwidth`, or a prefix like `mem`); repeatable.
    #[arg(long, num_args = 1..)]
    pub only: Vec<String>,
    /// Print the plan point by point (thread count and CPUs of each, and every planned skip
    /// with its reason) and exit without running anything.
    #[arg(long)]
    pub plan_only: bool,
    /// Before a run, print the plan point by point as --plan-only does [default: one line per
    /// family].
    #[arg(long)]
    pub plan_points: bool,
    /// At the end, print every measured metric (median, min..max, CV, peak), every
    /// thread-scaling series and the time of each family [default: the headline, at most
    /// 40 lines; `hwsurvey compare FILE` shows all of it later].
    #[arg(long)]
    pub full_summary: bool,
    /// Bound the run's estimated time (`90s`, `10m`, `1h30m`; plain numbers are seconds). When
    /// the profile's plan is estimated over it, samples and repetitions are shortened first;
    /// points are dropped only as a last resort, each named. Such a run is marked
    /// time-limited in the result file and in every report: not comparable to full runs.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_s)]
    pub max_time: Option<f64>,
    /// With --plan-only: plan for a captured machine instead of this one: an extracted
    /// snapshot folder or a snapshot archive (.tar.gz, .tgz, .tar.bz2, .tar). Its online CPUs
    /// are the usable CPUs and its MemTotal is the memory.
    #[arg(long, value_name = "DIR|SNAPSHOT.tar.gz", requires = "plan_only")]
    pub root: Option<PathBuf>,
    /// Directory on a device to test with storage.iops (repeatable, one per device).
    #[arg(long)]
    pub storage_dir: Vec<PathBuf>,
    /// Raw block device for storage.iops (needs --destructive). Refused, before anything runs,
    /// when it holds any signature libblkid knows (file system, RAID, LVM, swap, crypto,
    /// partition table), has partitions, is mounted, held, swap, or in use, or when another
    /// block device is built on it (a loop device over it at any offset, device mapper, MD,
    /// bcache, zram writeback, a mounted btrfs it belongs to), named in the refusal.
    #[arg(long)]
    pub storage_device: Vec<PathBuf>,
    /// Allow writing to the --storage-device devices.
    #[arg(long)]
    pub destructive: bool,
    /// Confirm, by name, a --storage-device that has no signature but holds data (sampled
    /// blocks not blank: a plain dm-crypt volume or LUKS with a detached header looks like
    /// this): its serial, or its size in bytes, as the refusal prints them. Repeatable; a
    /// value that names none of the devices is an error.
    #[arg(long, value_name = "SERIAL|SIZE", requires = "destructive")]
    pub confirm_device: Vec<String>,
}

/// Runs `hwsurvey run`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let registry = families::registry();
    let profile = families::load_profile(&args.profile)?;
    if let Some(capture) = &args.root {
        return plan_captured(&args, &profile, capture);
    }
    let root = SysRoot::live();
    let machine = probe_machine(&root);
    let env = RunEnv::read(&root);
    let options = RunOptions {
        storage_dirs: args.storage_dir.clone(),
        storage_devices: args.storage_device.clone(),
        destructive: args.destructive,
        confirm_devices: args.confirm_device.clone(),
        capture: false,
        // the machine's speed at a point's fixed work, for the time estimate (about 0.1 s),
        // unless the memory limits leave too little room to measure it
        speed: Some(hwsurvey_engine::speed::measure_within(
            env.cpu_count(),
            env.memory_cap_bytes(1.0),
        )),
    };
    // Every storage directory and device the user named is checked before anything runs (and
    // for --plan-only): a refused one is a one-line error, exit 2, never a skipped point.
    #[cfg(feature = "sys")]
    hwsurvey_workloads::storage::target::check_storage_dirs(&options.storage_dirs)?;
    #[cfg(feature = "sys")]
    let devices = hwsurvey_workloads::storage::device::check_storage_devices(
        &options.storage_devices,
        &hwsurvey_workloads::storage::device::WriteOptions {
            destructive: options.destructive,
            confirm: options.confirm_devices.clone(),
        },
    )?;
    let (profile, plan, time_limit) = fitted_plan(&args, &profile, &machine, &env, &options)?;
    if let Some(note) = profile.obsolete_note() {
        eprintln!("hwsurvey: note: {note}");
    }
    out!(
        "{}",
        render_plan(
            &plan,
            &profile.description,
            args.plan_only || args.plan_points
        )
    );
    if let Some(t) = &time_limit {
        eprintln!(
            "hwsurvey: warning: time-limited run, not comparable to full runs: {}",
            t.summary()
        );
    }
    if let Some(w) = long_run_warning(&plan) {
        eprintln!("hwsurvey: {w}");
    }
    #[cfg(feature = "sys")]
    warn_storage(&devices, &options.storage_dirs, args.plan_only);
    if args.plan_only {
        return Ok(ExitCode::SUCCESS);
    }
    // Signals are handled from before the result file is claimed: a Ctrl-C or SIGTERM between
    // the claim and the engine's first write must not leave an empty file behind.
    let handler = signals::install_sigint_handler();
    let (output, lock) = match args.output {
        Some(p) => claim_output(&p, args.force, &args.profile)?,
        None => default_output(&env)?,
    };
    // the file --force is about to replace, if any: after a failed write, what_was_kept tells
    // it from this run's own writes (each atomic write is a new inode)
    let previous = file_identity(&output);
    if let Some(stale) = lock.stale_lock() {
        errln!("hwsurvey: took over the lock file {stale}; it is removed when this run ends");
    }
    for leftover in lock.removed_leftovers() {
        errln!(
            "hwsurvey: removed {}, {} of an earlier run that was killed",
            leftover.display(),
            if leftover.extension().is_some_and(|e| e == "lock") {
                "a lock file in the making"
            } else {
                "a partial write"
            }
        );
    }
    // Under qemu-user or binfmt the figures measure the emulator: say so before any test
    // (after the usage checks: the error stays the only line of a refused run).
    if let Some(b) = machine.os.binary_vs_kernel.known().filter(|b| !b.native) {
        errln!(
            "hwsurvey: warning: {}: the figures of this run measure the emulator, not the hardware",
            b.finding
                .as_deref()
                .unwrap_or("binary not native to the kernel")
        );
    }
    // A status line, on stderr with the progress: once the file is claimed, a closed stdout
    // (`run | head`) must not end the run before the engine's first write fills the file.
    errln!(
        "writing {} after every test{}",
        output.display(),
        if handler {
            "; Ctrl-C, SIGTERM or SIGHUP stops after the current sample and keeps what finished"
        } else {
            ""
        }
    );
    let tool = Tool::this_build();
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
    let mut progress = Progress::new(
        &plan,
        std::io::IsTerminal::is_terminal(&std::io::stderr()),
        time_limit,
        Qualifier {
            label: output.display().to_string(),
            facts: {
                // the stored pages.hugetlb fix asks for what this run's plan needs
                let mut f = hwsurvey_qualify::from_machine(&machine);
                f.pages.hugetlb_needed = Some(
                    families::mem_latency::hugetlb_needs(&plan)
                        .into_iter()
                        .map(
                            |(page_size_bytes, pages)| hwsurvey_qualify::facts::HugePool {
                                page_size_bytes,
                                pages,
                            },
                        )
                        .collect(),
                );
                f
            },
            rules: hwsurvey_qualify::RuleSet::builtin(),
            rules_ref: hwsurvey_qualify::stored::RulesRef::builtin(),
        },
    );
    let file = match engine::run(&req, &mut progress) {
        Ok(file) => file,
        Err(e) => {
            progress.bar.finish_and_clear();
            anyhow::bail!("{e}; {}", what_was_kept(&output, previous));
        }
    };
    progress.bar.finish_and_clear();
    if args.full_summary {
        outln!("{}", render_summary(&file, crate::terminal_width()));
    } else {
        out!("{}", render_closing(&file, crate::terminal_width()));
    }
    outln!("result file: {}", output.display());
    Ok(match file.status {
        RunStatus::Interrupted => {
            outln!(
                "interrupted by {}: the file holds {}",
                signals::interrupt_cause(),
                plural(file.tests.len() as u64, "finished test")
            );
            // 128 + the signal number, as a shell reports a process stopped by it (SIGINT 130).
            let signo = signals::INTERRUPT_SIGNAL.load(std::sync::atomic::Ordering::SeqCst);
            ExitCode::from(if signo > 0 { 128 + signo as u8 } else { 130 })
        }
        _ => match run_verdict(&file) {
            Some((code, line)) => {
                errln!("hwsurvey: {line}");
                ExitCode::from(code)
            }
            None => ExitCode::SUCCESS,
        },
    })
}

/// The plan of `profile` for this machine, fitted into `--max-time` when given
/// ([`hwsurvey_engine::plan::fit_plan`]): the profile with the engine rules used, the plan, and
/// what the limit changed.
fn fitted_plan(
    args: &Args,
    profile: &hwsurvey_engine::Profile,
    machine: &hwsurvey_probe::Machine,
    env: &RunEnv,
    options: &RunOptions,
) -> anyhow::Result<(
    hwsurvey_engine::Profile,
    Plan,
    Option<hwsurvey_result::TimeLimit>,
)> {
    let registry = families::registry();
    Ok(match args.max_time {
        Some(max) => hwsurvey_engine::plan::fit_plan(
            profile, &registry, machine, env, options, &args.only, max,
        )?,
        None => (
            profile.clone(),
            build_plan(profile, &registry, machine, env, options, &args.only)?,
            None,
        ),
    })
}

/// Parses a duration for `--max-time`: a number of seconds (`90`), or numbers with units
/// `h`, `m`/`min`, `s` in that order (`90s`, `10m`, `1h30m`, `2h`); more than 0 and at most one
/// day.
pub fn parse_duration_s(text: &str) -> Result<f64, String> {
    let bad = || {
        format!(
            "expected a duration such as 90, 90s, 10m, 1h30m (more than 0, at most 24h), got {}",
            hwsurvey_model::text::quote(text)
        )
    };
    let t = text.trim();
    if let Ok(v) = t.parse::<f64>() {
        return (v.is_finite() && v > 0.0 && v <= 86_400.0)
            .then_some(v)
            .ok_or_else(bad);
    }
    let mut total = 0.0;
    let mut rest = t;
    let mut last_unit = 0.0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let v: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let (unit, len) = if rest.starts_with("min") {
            (60.0, 3)
        } else if rest.starts_with('h') {
            (3600.0, 1)
        } else if rest.starts_with('m') {
            (60.0, 1)
        } else if rest.starts_with('s') {
            (1.0, 1)
        } else {
            return Err(bad());
        };
        if last_unit != 0.0 && unit >= last_unit {
            return Err(bad());
        }
        last_unit = unit;
        total += v * unit;
        rest = &rest[len..];
    }
    (total > 0.0 && total <= 86_400.0)
        .then_some(total)
        .ok_or_else(bad)
}

/// `run --plan-only --root DIR|ARCHIVE`: the plan and its time estimate for a captured
/// machine ([`hwsurvey_engine::ladder::captured_env`]); an archive is unpacked into a temporary
/// folder first.
fn plan_captured(
    args: &Args,
    profile: &hwsurvey_engine::Profile,
    capture: &Path,
) -> anyhow::Result<ExitCode> {
    let capture_dir = super::capture::open(capture)?;
    let root = &capture_dir.root;
    let machine = probe_machine(root);
    let env = hwsurvey_engine::ladder::captured_env(&machine, RunEnv::read(root))
        .map_err(|e| anyhow::anyhow!("--root {}: {e}", capture.display()))?;
    let options = RunOptions {
        storage_dirs: args.storage_dir.clone(),
        storage_devices: args.storage_device.clone(),
        destructive: args.destructive,
        confirm_devices: args.confirm_device.clone(),
        capture: true,
        speed: None,
    };
    let (profile, plan, time_limit) = fitted_plan(args, profile, &machine, &env, &options)?;
    if let Some(note) = profile.obsolete_note() {
        eprintln!("hwsurvey: note: {note}");
    }
    outln!("plan for the captured machine {}", capture.display());
    out!("{}", render_plan(&plan, &profile.description, true));
    if let Some(t) = &time_limit {
        eprintln!(
            "hwsurvey: warning: time-limited plan, not comparable to full runs: {}",
            t.summary()
        );
    }
    if let Some(w) = long_run_warning(&plan) {
        eprintln!("hwsurvey: {w}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Exit status of a run in which at least one test failed (the result file holds each error).
pub const EXIT_TEST_FAILED: u8 = 1;
// Exit status 2 (main.rs, every subcommand's error): a run that refused to start (bad option or
// profile, a refused `--storage-dir`/`--storage-device`, an existing `-o` file) or could not
// write its result.
/// Exit status of a run that measured nothing: every point it was asked for was skipped.
pub const EXIT_NOTHING_MEASURED: u8 = 3;

/// The exit status and one line for a finished (not interrupted) run that did not fully
/// succeed: [`EXIT_TEST_FAILED`] when a test failed, naming the first and how many;
/// [`EXIT_NOTHING_MEASURED`] when no test was measured, with the skip reasons (at most three,
/// each shortened). `None`: at least one test measured and none failed.
pub fn run_verdict(file: &ResultFile) -> Option<(u8, String)> {
    let short = |s: &str| {
        let mut out: String = s.chars().take(100).collect();
        if s.chars().count() > 100 {
            out.push('…');
        }
        out
    };
    let failed: Vec<&TestResult> = file
        .tests
        .iter()
        .filter(|t| t.outcome == hwsurvey_result::Outcome::Failed)
        .collect();
    if let Some(first) = failed.first() {
        return Some((
            EXIT_TEST_FAILED,
            format!(
                "{} of {} failed; first: {} {}: {}",
                plural(failed.len() as u64, "test"),
                file.tests.len(),
                first.point.family,
                first.point.id,
                short(first.reason.as_deref().unwrap_or("no error given"))
            ),
        ));
    }
    if file
        .tests
        .iter()
        .any(|t| t.outcome == hwsurvey_result::Outcome::Measured)
    {
        return None;
    }
    let mut reasons: Vec<String> = Vec::new();
    let skipped = file
        .tests
        .iter()
        .filter_map(|t| t.reason.as_deref().map(|r| (t.point.family.as_str(), r)))
        .chain(
            file.skipped
                .iter()
                .map(|s| (s.family.as_str(), s.reason.as_str())),
        );
    let mut points = 0;
    for (family, reason) in skipped {
        points += 1;
        let r = format!("{family}: {}", short(reason));
        if !reasons.contains(&r) {
            reasons.push(r);
        }
    }
    let more = reasons.len().saturating_sub(3);
    reasons.truncate(3);
    Some((
        EXIT_NOTHING_MEASURED,
        format!(
            "nothing was measured: {} skipped ({}{})",
            plural(points as u64, "point"),
            reasons.join("; "),
            if more > 0 {
                format!("; {more} more reasons in the result file")
            } else {
                String::new()
            }
        ),
    ))
}

/// Warnings on stderr before the run (and for --plan-only): each device that will be
/// overwritten, named by path, size, model and serial, with the checker that found it blank;
/// and each test file a killed run left in a storage directory, removed now by a run (named,
/// never removed silently) or listed by --plan-only.
#[cfg(feature = "sys")]
fn warn_storage(
    devices: &[hwsurvey_workloads::storage::device::DeviceDescription],
    dirs: &[PathBuf],
    plan_only: bool,
) {
    let will = if plan_only { "would be" } else { "will be" };
    for d in devices {
        errln!(
            "hwsurvey: warning: --storage-device {d} {will} overwritten: everything on it is destroyed \
             (no signature found by {})",
            hwsurvey_workloads::storage::blkid::checker()
        );
    }
    for dir in dirs {
        for (path, pid) in hwsurvey_workloads::storage::target::stale_test_files(dir) {
            if plan_only {
                errln!(
                    "hwsurvey: note: {} was left by a killed hwsurvey run (pid {pid}); `run` removes it",
                    hwsurvey_model::text::path(&path)
                );
            } else if std::fs::remove_file(&path).is_ok() {
                errln!(
                    "hwsurvey: removed {}: a test file left by a killed hwsurvey run (pid {pid})",
                    hwsurvey_model::text::path(&path)
                );
            }
        }
    }
}

/// The default qualification rules, evaluated on the probed machine (the running binary's
/// target included) plus the result so far, stored in the file before every write.
struct Qualifier {
    /// The result file's name, in the findings' evidence.
    label: String,
    /// Facts of the probed machine.
    facts: hwsurvey_qualify::Facts,
    /// The rules (the built-in default set, identical to profiles/qualify.toml).
    rules: hwsurvey_qualify::RuleSet,
    /// Their source and hash, stored with the findings.
    rules_ref: hwsurvey_qualify::stored::RulesRef,
}

/// Progress: an indicatif bar on a terminal; otherwise (CI, `| tee`, where indicatif hides
/// itself) one plain line per finished test on stderr. Also stores the qualification
/// findings in the file before each write.
struct Progress {
    bar: indicatif::ProgressBar,
    tty: bool,
    done: usize,
    total: usize,
    /// Estimated seconds of each planned point ([`point_estimates`]).
    estimates: BTreeMap<(String, String), f64>,
    /// Estimated seconds of the points finished so far.
    estimated_done_s: f64,
    /// Estimated seconds of the whole plan.
    estimated_total_s: f64,
    started: std::time::Instant,
    qualifier: Qualifier,
    /// What `--max-time` changed, stored in the file.
    time_limit: Option<hwsurvey_result::TimeLimit>,
}

impl Progress {
    fn new(
        plan: &Plan,
        tty: bool,
        time_limit: Option<hwsurvey_result::TimeLimit>,
        qualifier: Qualifier,
    ) -> Self {
        let total = plan.point_count();
        let bar = if tty {
            indicatif::ProgressBar::new(total as u64)
        } else {
            indicatif::ProgressBar::hidden()
        };
        // `wide_msg` takes the width the rest leaves and cuts the message there: the line never
        // wraps. Colours go through `console`, which honours NO_COLOR and CLICOLOR.
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "[{elapsed_precise}] {bar:30.cyan/blue} {pos}/{len} {wide_msg}",
        ) {
            bar.set_style(style);
        }
        let estimates = point_estimates(plan);
        Progress {
            bar,
            tty,
            done: 0,
            total,
            estimated_total_s: estimates.values().sum(),
            estimates,
            estimated_done_s: 0.0,
            started: std::time::Instant::now(),
            qualifier,
            time_limit,
        }
    }
}

/// The estimated seconds of every planned point, keyed by (family, point id): its family's
/// estimate shared evenly among the family's points (the plan estimates families, not points).
fn point_estimates(plan: &Plan) -> BTreeMap<(String, String), f64> {
    let mut out = BTreeMap::new();
    for f in &plan.families {
        let each = f.estimated_s / f.points.len().max(1) as f64;
        for p in &f.points {
            out.insert((f.family.clone(), p.id.clone()), each);
        }
    }
    out
}

/// Seconds left: the plan's estimate of the points not yet finished (`estimated_left_s`),
/// scaled by how the finished ones compared with theirs (`elapsed_s / estimated_done_s`, kept
/// within 0.25..4 so that one slow first point does not swing it). Before any point finished,
/// the estimate as it is.
pub fn eta_s(estimated_done_s: f64, estimated_left_s: f64, elapsed_s: f64) -> f64 {
    let pace = if estimated_done_s > 0.0 {
        (elapsed_s / estimated_done_s).clamp(0.25, 4.0)
    } else {
        1.0
    };
    (estimated_left_s * pace).max(0.0)
}

impl Observer for Progress {
    fn before_write(&mut self, file: &mut ResultFile) {
        file.time_limit = self.time_limit.clone();
        let q = &self.qualifier;
        let stored = hwsurvey_qualify::stored::evaluate_for_run(
            &q.label,
            &q.facts,
            file,
            &q.rules,
            &q.rules_ref,
            hwsurvey_result::rfc3339(std::time::SystemTime::now()),
        );
        file.qualification = serde_json::to_value(stored).ok();
    }
    fn point_started(&mut self, point: &hwsurvey_engine::Point, index: usize, _total: usize) {
        self.done = index;
        self.bar.set_position(index as u64);
        let eta = eta_s(
            self.estimated_done_s,
            self.estimated_total_s - self.estimated_done_s,
            self.started.elapsed().as_secs_f64(),
        );
        self.bar.set_message(format!(
            "ETA {} · {} {}",
            duration_text(eta),
            point.family,
            point.id
        ));
    }
    fn point_finished(&mut self, result: &TestResult) {
        self.done += 1;
        self.estimated_done_s += self
            .estimates
            .get(&(result.point.family.clone(), result.point.id.clone()))
            .copied()
            .unwrap_or(0.0);
        self.bar.inc(1);
        if !self.tty {
            errln!("{}", progress_line(self.done, self.total, result));
        } else if result.outcome != hwsurvey_result::Outcome::Measured {
            self.bar
                .println(not_measured_line(result, crate::fit::stderr_width()));
        }
    }
}

/// The line a point that was not measured prints above the progress bar: family, id, outcome
/// and reason, wrapped with a hanging indent to a terminal `width` columns wide (the reason of
/// a skipped critical-rate search runs to 700 characters; a new user's 80-column terminal got
/// it on one line).
fn not_measured_line(result: &TestResult, width: Option<usize>) -> String {
    let line = format!(
        "{} {}: {} ({})",
        result.point.family,
        result.point.id,
        result.outcome,
        result.reason.as_deref().unwrap_or("")
    );
    match width {
        Some(w) => crate::fit::fit(&line, w).trim_end_matches('\n').to_string(),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsurvey_engine::plan::FamilyPlan;
    use hwsurvey_engine::Point;

    fn point(family: &str, id: &str, threads: usize) -> Point {
        serde_json::from_value(serde_json::json!({
            "family": family, "id": id, "threads": threads, "placement": "compact",
            "cpus": [0], "params": {}, "memory_bytes": 0, "estimated_s": 1.0
        }))
        .unwrap()
    }

    fn plan(families: Vec<FamilyPlan>) -> Plan {
        Plan {
            profile_id: "quick".into(),
            profile_version: 1,
            usable_cpus: 1,
            thread_counts: vec![1],
            landmarks: vec![],
            llc_total_bytes: None,
            memory_working_set_bytes: 1 << 20,
            memory_cap_bytes: None,
            memory_cap_source: None,
            cpu_quota: None,
            fixed_work: None,
            families,
        }
    }

    /// The ETA follows the plan's estimate until a point finished, then the pace of the
    /// finished points, within 0.25x..4x of the estimate.
    #[test]
    fn eta_follows_the_pace_of_the_finished_points() {
        assert_eq!(eta_s(0.0, 300.0, 0.0), 300.0);
        // 60 s of estimated work took 90 s: the 240 s left take 360 s
        assert_eq!(eta_s(60.0, 240.0, 90.0), 360.0);
        // faster than estimated: 60 s took 30 s
        assert_eq!(eta_s(60.0, 240.0, 30.0), 120.0);
        // one first point 10x slower than estimated: kept to 4x
        assert_eq!(eta_s(1.0, 100.0, 10.0), 400.0);
        assert_eq!(eta_s(100.0, 0.0, 120.0), 0.0);
        let p = plan(vec![FamilyPlan {
            family: "mem.latency".into(),
            budget_s: 10.0,
            estimated_s: 6.0,
            points: vec![
                point("mem.latency", "a", 1),
                point("mem.latency", "b", 1),
                point("mem.latency", "c", 2),
            ],
            skipped: vec![],
        }]);
        let e = point_estimates(&p);
        assert_eq!(e.len(), 3);
        assert_eq!(e[&("mem.latency".to_string(), "b".to_string())], 2.0);
    }

    #[test]
    fn default_name_has_host_arch_date_and_start_time() {
        assert_eq!(
            default_stem(Some("db-01.example"), "x86_64", "2026-11-29T20:05:30Z"),
            "db-01_example-x86_64-2026-11-29-200530"
        );
        assert_eq!(
            default_stem(None, "sparc64", "2026-11-29T00:00:07Z"),
            "unknown-host-sparc64-2026-11-29-000007"
        );
    }

    #[test]
    fn durations_parse_in_seconds_minutes_and_hours() {
        assert_eq!(parse_duration_s("90"), Ok(90.0));
        assert_eq!(parse_duration_s("90s"), Ok(90.0));
        assert_eq!(parse_duration_s("10m"), Ok(600.0));
        assert_eq!(parse_duration_s("10min"), Ok(600.0));
        assert_eq!(parse_duration_s("1h30m"), Ok(5400.0));
        for bad in ["", "0", "-5", "10x", "30m1h", "25h", "m"] {
            let e = parse_duration_s(bad).unwrap_err();
            assert!(
                e.starts_with("expected a duration such as 90"),
                "{bad}: {e}"
            );
        }
    }

    /// A skipped critical-rate search's reason (as the 2-vCPU guest printed it in CI) fits an
    /// 80-column terminal, every word kept; without a terminal it is one line.
    #[test]
    fn a_not_measured_line_fits_the_terminal() {
        let reason = "no open-loop rate kept p99 <= 1000000 ns (4 trials, search stopped: trial \
                      budget spent); lowest rate tried: 108169/s requested, 15604/s achieved, \
                      3598 abandoned, p50 28721151 ns, p99 39845887 ns, p999 40009727 ns; \
                      workers stalled 21.9 % of the window (220 stalls > 50 us, longest 0.64 \
                      ms; 0.00 % past the bound); failed: 3598 of 4327 requests abandoned";
        let r = TestResult::new(
            point("service.point_select", "critical/pages=base", 2),
            hwsurvey_engine::PointOutcome::SkippedAfterTrying {
                reason: reason.into(),
                details: Default::default(),
            },
            "2026-12-04T00:00:00Z".into(),
            1.0,
        );
        let wrapped = not_measured_line(&r, Some(80));
        assert!(wrapped.lines().count() > 3, "{wrapped}");
        assert!(
            wrapped.lines().all(|l| crate::fit::display_width(l) <= 80),
            "{wrapped}"
        );
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        let whole = not_measured_line(&r, None);
        assert_eq!(whole.lines().count(), 1);
        assert_eq!(words(&wrapped), words(&whole));
        assert!(whole.starts_with("service.point_select critical/pages=base: skipped"));
    }
}

//! `hwsurvey run`: probe, plan, run the profile's scaling tests, write the result file.

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[cfg(test)]
use super::run_output::default_stem;
use super::run_output::{claim_output, default_output, file_identity, what_was_kept};
use super::run_progress::Progress;
use hwsurvey_engine::plan::{build_plan, Plan, RunOptions};
use hwsurvey_engine::run::{self as engine, RunRequest};
use hwsurvey_engine::signals;
use hwsurvey_model::units::plural;
use hwsurvey_probe::run_env::RunEnv;
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_report::run::{long_run_warning, render_closing, render_plan, render_summary};
use hwsurvey_result::verdict::run_verdict;
use hwsurvey_result::{RunStatus, Tool};
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
  With --soak, 1 also when the hardware watch fails the run (an uncorrected error or a
  machine check during it: qualify's watch.errors).

Examples:
  hwsurvey run                                  # standard profile
  hwsurvey run --plan-only                      # the points this machine would run
  hwsurvey run --profile quick -o quick.json    # tiny sizes, seconds
  hwsurvey run --only mem.bandwidth --only mem.latency
  hwsurvey run --storage-dir /mnt/nvme0/tmp --storage-dir /mnt/nvme1/tmp
  hwsurvey run --soak 10m                       # burn-in: rounds of memory and CPU tests")]
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
    /// time-limited in the result file and in every report; `compare` lines up its points
    /// with any run's of the profile (fewer, shorter samples: wider noise) and names the
    /// points it dropped.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_s)]
    pub max_time: Option<f64>,
    /// Burn-in: repeat the soak subset of the profile (mem.bandwidth's STREAM points,
    /// cpu.scaling, cpu.clock) in rounds for DURATION (`10m`, `2h`, `3d`; at most 7 days; a
    /// round that has begun is finished) while the hardware watch reads EDAC, PCIe AER and
    /// links, throttle counters and the kernel log around every point. Prints each round's
    /// figures against round 1's and ends with the watch's verdicts.
    #[arg(long, value_name = "DURATION", value_parser = parse_soak_s,
          conflicts_with_all = ["only", "max_time", "storage_dir", "storage_device", "root"])]
    pub soak: Option<f64>,
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
    /// partition table), has partitions, is mounted in any mount namespace, held, swap, or in
    /// use, when another block device is built on it (a loop device over it at any offset,
    /// device mapper, MD, bcache, zram writeback, a mounted btrfs it belongs to), named in the
    /// refusal, when the span the run writes (every byte is read first) holds data that is
    /// neither blank nor hwsurvey's, or when any of this cannot be read.
    #[arg(long)]
    pub storage_device: Vec<PathBuf>,
    /// Allow writing to the --storage-device devices.
    #[arg(long)]
    pub destructive: bool,
    /// Confirm, by name, a --storage-device that has no signature but holds data (a plain
    /// dm-crypt volume or LUKS with a detached header looks like this), or whose users cannot
    /// all be read (a mount namespace, a loop device the kernel could not be asked about): its
    /// serial, or its size in bytes, as the refusal prints them. Repeatable; a value that
    /// names none of the devices is an error.
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
    let env = RunEnv::from_machine(&machine, &root);
    // the machine's speed at a point's fixed work, for the time estimate (about 0.1 s), unless
    // the memory limits leave too little room to measure it
    let options = run_options(
        &args,
        false,
        Some(hwsurvey_engine::speed::measure_within(
            env.cpu_count(),
            env.memory_cap_bytes(1.0),
        )),
    );
    // Every storage directory and device the user named is checked before anything runs (and
    // for --plan-only): a refused one is a one-line error, exit 2, never a skipped point. A
    // device after planning: every byte of the span the plan writes on it is read.
    #[cfg(feature = "sys")]
    hwsurvey_workloads::storage::target::check_storage_dirs(&options.storage_dirs)?;
    let (profile, plan, time_limit) = fitted_plan(&args, &profile, &machine, &env, &options)?;
    let plan = match args.soak {
        Some(_) => hwsurvey_workloads::soak::subset(plan),
        None => plan,
    };
    #[cfg(feature = "sys")]
    let devices = hwsurvey_workloads::storage::run_devices::check_storage_devices(
        &options.storage_devices,
        &hwsurvey_workloads::storage::device::WriteOptions {
            destructive: options.destructive,
            confirm: options.confirm_devices.clone(),
            span_bytes: families::storage_iops::device_span_bytes(&plan),
        },
    )?;
    if let Some(d) = args.soak {
        outln!(
            "soak: rounds of {} for {} (each round as planned below)",
            hwsurvey_workloads::soak::FAMILIES.join(", "),
            hwsurvey_report::format::duration_text(d)
        );
    }
    out!(
        "{}",
        render_plan(
            &plan,
            &profile.description,
            args.plan_only || args.plan_points
        )
    );
    warn_plan(&profile, &plan, time_limit.as_ref(), "run");
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
    let qualifier = hwsurvey_qualify::stored::RunQualifier::builtin(
        &machine,
        &families::mem_latency::hugetlb_needs(&plan),
    );
    let req = RunRequest {
        profile: &profile,
        plan: &plan,
        families: &registry,
        machine: &machine,
        env: &env,
        options: &options,
        output: &output,
        root: &root,
        tool: Tool::this_build(),
        time_limit,
        qualifier: Some(&qualifier),
        clock: Some(&hwsurvey_workloads::watch_clock::AddChain),
    };
    let mut progress = Progress::new(&plan, std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let ran = match args.soak {
        Some(d) => engine::soak(
            &req,
            std::time::Duration::from_secs_f64(d),
            &mut progress,
            &signals::INTERRUPTED,
        ),
        None => engine::run(&req, &mut progress),
    };
    let file = match ran {
        Ok(file) => file,
        Err(e) => {
            progress.bar.finish_and_clear();
            anyhow::bail!("{e}; {}", what_was_kept(&output, previous));
        }
    };
    progress.bar.finish_and_clear();
    let watch_failed = if args.soak.is_some() {
        soak_closing(&file)
    } else {
        if args.full_summary {
            outln!("{}", render_summary(&file, crate::terminal_width()));
        } else {
            out!("{}", render_closing(&file, crate::terminal_width()));
        }
        false
    };
    outln!("result file: {}", output.display());
    Ok(match file.status {
        RunStatus::Interrupted => {
            outln!(
                "interrupted by {}: the file holds {}",
                signals::interrupt_cause(),
                plural(file.tests.len() as u64, "finished test")
            );
            ExitCode::from(signals::interrupt_exit_status())
        }
        _ => match run_verdict(&file) {
            Some((code, line)) => {
                errln!("hwsurvey: {line}");
                ExitCode::from(code)
            }
            None if watch_failed => ExitCode::from(1),
            None => ExitCode::SUCCESS,
        },
    })
}

/// The end of a soak: the rounds' drift and what the watch saw
/// ([`hwsurvey_report::soak::closing_text`]), then the watch's verdicts as the run stored them
/// (`watch.*` of the qualification) and a count of the others. True when the watch failed the
/// run.
fn soak_closing(file: &hwsurvey_result::ResultFile) -> bool {
    let width = crate::terminal_width();
    let fit = |text: &str| match width {
        Some(w) => crate::fit::fit(text, w),
        None => format!("{text}\n"),
    };
    for line in hwsurvey_report::soak::closing_text(file).lines() {
        out!("{}", fit(line));
    }
    let findings = file
        .qualification
        .as_ref()
        .map(|q| q.findings.as_slice())
        .unwrap_or_default();
    outln!("verdicts:");
    let mut failed = false;
    for f in findings.iter().filter(|f| f.rule.starts_with("watch.")) {
        failed |= f.verdict == hwsurvey_result::qualification::Verdict::Fail;
        out!(
            "{}",
            fit(&format!("  {} {}: {}", f.verdict.word(), f.rule, f.summary))
        );
    }
    let others = |v| {
        findings
            .iter()
            .filter(|f| !f.rule.starts_with("watch.") && f.verdict == v)
            .count() as u64
    };
    use hwsurvey_result::qualification::Verdict;
    out!(
        "{}",
        fit(&format!(
            "  other rules: {}, {} (`hwsurvey qualify FILE` shows them)",
            plural(others(Verdict::Fail), "failure"),
            plural(others(Verdict::Warn), "warning")
        ))
    );
    failed
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
    parse_duration_within(text, 86_400.0, "24h")
}

/// Parses a duration for `--soak`: as [`parse_duration_s`], with days (`3d`, `1d12h`) and at
/// most 7 days (a burn-in runs for days).
pub fn parse_soak_s(text: &str) -> Result<f64, String> {
    parse_duration_within(text, 7.0 * 86_400.0, "7d")
}

/// A duration of at most `max_s` seconds (`max_words` in the error).
fn parse_duration_within(text: &str, max_s: f64, max_words: &str) -> Result<f64, String> {
    let bad = || {
        format!(
            "expected a duration such as 90, 90s, 10m, 1h30m (more than 0, at most {max_words}), got {}",
            hwsurvey_model::text::quote(text)
        )
    };
    let t = text.trim();
    if let Ok(v) = t.parse::<f64>() {
        return (v.is_finite() && v > 0.0 && v <= max_s)
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
        } else if rest.starts_with('d') && max_s > 86_400.0 {
            (86_400.0, 1)
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
    (total > 0.0 && total <= max_s)
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
    let env = hwsurvey_engine::ladder::captured_env(&machine, RunEnv::from_machine(&machine, root))
        .map_err(|e| anyhow::anyhow!("--root {}: {e}", capture.display()))?;
    let options = run_options(args, true, None);
    let (profile, plan, time_limit) = fitted_plan(args, profile, &machine, &env, &options)?;
    outln!("plan for the captured machine {}", capture.display());
    out!("{}", render_plan(&plan, &profile.description, true));
    warn_plan(&profile, &plan, time_limit.as_ref(), "plan");
    Ok(ExitCode::SUCCESS)
}

/// The run's options from its arguments: `capture` for a plan of a captured machine (nothing
/// runs), `speed` the machine's measured speed for the time estimate (`None`: the nominal one).
fn run_options(
    args: &Args,
    capture: bool,
    speed: Option<hwsurvey_engine::speed::FixedWorkSpeed>,
) -> RunOptions {
    RunOptions {
        storage_dirs: args.storage_dir.clone(),
        storage_devices: args.storage_device.clone(),
        destructive: args.destructive,
        confirm_devices: args.confirm_device.clone(),
        capture,
        speed,
    }
}

/// The notes and warnings about a plan, on stderr through [`errln!`] (control characters
/// escaped, lines fitted): an obsolete profile, a time limit that shortened the plan (`what`:
/// "run" or "plan"), a long run.
fn warn_plan(
    profile: &hwsurvey_engine::Profile,
    plan: &Plan,
    time_limit: Option<&hwsurvey_result::TimeLimit>,
    what: &str,
) {
    if let Some(note) = profile.obsolete_note() {
        errln!("hwsurvey: note: {note}");
    }
    if let Some(t) = time_limit {
        errln!(
            "hwsurvey: warning: time-limited {what} (fewer, shorter samples: wider noise; \
             compare names any point dropped): {}",
            t.summary()
        );
    }
    if let Some(w) = long_run_warning(plan) {
        errln!("hwsurvey: {w}");
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
        for bad in ["", "0", "-5", "10x", "30m1h", "25h", "m", "1d"] {
            let e = parse_duration_s(bad).unwrap_err();
            assert!(
                e.starts_with("expected a duration such as 90"),
                "{bad}: {e}"
            );
        }
        // --soak: days too, at most 7
        assert_eq!(parse_soak_s("10m"), Ok(600.0));
        assert_eq!(parse_soak_s("1d12h"), Ok(129_600.0));
        assert!(parse_soak_s("8d").unwrap_err().contains("at most 7d"));
    }
}

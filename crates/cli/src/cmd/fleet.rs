//! `hwsurvey fleet DIR|FILES...`: result files of many hosts -> groups by hardware identity ->
//! the hosts that stand out, with the probe differences that explain them (crates/fleet).
//! Exit code by the gravest host verdict (`hwsurvey_fleet::decide`): 0 (every host passes),
//! 1 (a host warned: stood out, drifted, a warned finding), 2 (a host failed: unreadable file,
//! run not complete, failed finding, a figure --fail-pct or more worse than its group), 3
//! (input or usage error), 4 (a host incomplete: rules not evaluated), 5 (a host emulated: no
//! hardware verdict).

use std::path::PathBuf;
use std::process::ExitCode;

use hwsurvey_fleet::render::{render, Format};
use hwsurvey_fleet::{collect, load_and_analyse, Options};
use hwsurvey_model::files::{check_output_reading, ScannedFolder};

/// Exit code of an input or usage error (2 means "a host failed").
pub const EXIT_INPUT_ERROR: u8 = 3;

/// Text after the options in `hwsurvey fleet --help`.
const AFTER_HELP: &str =
    "Outlier rule: per group of hosts with the same hardware identity (architecture, CPU
model, sockets x cores per socket x threads per core, memory to the GiB, DIMM population and board where DMI gives
them) and per headline figure (STREAM Triad all threads, cpu.scaling integer and floating point
at 1 and all threads, mem.latency at the largest working set, service.point_select closed-loop
max, raid.parity gen), a host stands out when its figure lies outside the group median ± k x MAD
and more than --min-diff-pct from the median.

Configuration rule: in a group of 3 or more hosts, a host whose configuration (CPUs online,
DIMMs, DIMM speed, memory channels, PCIe links below max, THP, governor, cgroup limits, hugetlb
pools, SMT, numa_balancing) differs from the value more than half the group holds stands out
with that cause, whatever its figures (the kernel release only explains a flagged host).

Several result files of one host are pooled (median
per figure, between-run spread); a figure moving one way over 3 or more runs by more than
--drift-pct is a drift.

Verdict of a host (a host that stands out or drifts is never a pass):
  fail        an unreadable file or failure marker, a run not complete, a
              failed finding, or an outlier figure worse than its group
              median by --fail-pct or more
  warn        any other outlier figure (smaller, or the better way), a
              configuration that stands out, drift, a warned finding, or a
              failed test
  emulated    none of the above, and a run measured an emulator: no hardware
              verdict (its figures' outliers and drift and its findings are
              listed, never counted)
  incomplete  none of the above, and rules were not evaluated (on a virtual
              machine: the rules it could not check), or no findings stored
  pass        every rule evaluated; nothing stood out, drifted, warned, failed
Preconditions of the profile (empty hugetlb pools) never change a verdict.

Exit codes, by the gravest host verdict:
  0  every host passes
  1  a host warned (and none failed)
  2  a host failed
  3  input or usage error: a path that does not exist, a directory without
     .json files
  4  a host is incomplete (and none failed, warned or was emulated)
  5  a host ran under emulation (and none failed or warned)

Examples:
  hwsurvey fleet reports/fleet/examples/             # every host folder of one run
  hwsurvey fleet a.json b.json c.json --k 4 --min-diff-pct 3
  hwsurvey fleet RUN_DIR/ --format markdown -o fleet.md
  hwsurvey fleet RUN_DIR/ --json > fleet.json
  hwsurvey fleet RUN_DIR/ --format html -o fleet.html   # one self-contained page";

/// Output formats.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum FormatArg {
    /// Box tables fitted to the terminal.
    Terminal,
    /// Markdown.
    Markdown,
    /// JSON.
    Json,
    /// One self-contained HTML page (the compare report's style).
    Html,
}

/// Options of `hwsurvey fleet`.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// Result files, or directories searched recursively for *.json (a host's name is its
    /// folder in DIR/<host>/, else the hostname the run recorded).
    #[arg(value_name = "DIR|FILE", required = true)]
    inputs: Vec<PathBuf>,
    /// k of the outlier rule: outside the group median ± k x MAD.
    #[arg(long, default_value_t = hwsurvey_fleet::DEFAULT_K, value_name = "K")]
    k: f64,
    /// Minimum difference from the group median for an outlier, percent.
    #[arg(long, default_value_t = hwsurvey_fleet::DEFAULT_MIN_DIFF_PCT, value_name = "PCT")]
    min_diff_pct: f64,
    /// Drift threshold over successive runs of one host, percent.
    #[arg(long, default_value_t = hwsurvey_fleet::DEFAULT_DRIFT_PCT, value_name = "PCT")]
    drift_pct: f64,
    /// An outlier figure this many percent or more worse than its group median fails its
    /// host (a smaller one warns).
    #[arg(long, default_value_t = hwsurvey_fleet::DEFAULT_FAIL_PCT, value_name = "PCT")]
    fail_pct: f64,
    /// Output format.
    #[arg(long, value_enum, default_value = "terminal")]
    format: FormatArg,
    /// Print JSON: the same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Write the report to FILE instead of standard output. An existing file is refused
    /// unless --force; an input is always refused, and so is a *.json or hwsurvey-failed.txt
    /// name inside a DIR given (the next fleet would read it as a host's).
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Replace an existing -o file (never an input, nor a name the scan of a DIR reads).
    #[arg(long)]
    force: bool,
}

/// Runs `hwsurvey fleet`; input errors are printed here and exit with [`EXIT_INPUT_ERROR`].
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::exit_on_input_error(args, run_checked, EXIT_INPUT_ERROR)
}

fn check_value(name: &str, v: f64) -> anyhow::Result<()> {
    anyhow::ensure!(
        v.is_finite() && v >= 0.0,
        "{name} {v}: expected a finite number >= 0"
    );
    Ok(())
}

fn run_checked(args: Args) -> anyhow::Result<ExitCode> {
    check_value("--k", args.k)?;
    check_value("--min-diff-pct", args.min_diff_pct)?;
    check_value("--drift-pct", args.drift_pct)?;
    check_value("--fail-pct", args.fail_pct)?;
    // the report being written is never read as a host (nor is any fleet report in DIR)
    let collected = collect(&args.inputs, args.output.as_slice())?;
    let sources = collected.sources;
    // the one output rule, before any work: never an input (a file read, or a name the scan
    // of a DIR reads, even not there yet), never an existing file without --force
    if let Some(p) = &args.output {
        let inputs: Vec<&std::path::Path> = sources.iter().map(|s| s.path.as_path()).collect();
        let folders: Vec<ScannedFolder> = args
            .inputs
            .iter()
            .filter(|i| i.is_dir())
            .map(|dir| ScannedFolder {
                dir,
                reads: hwsurvey_fleet::is_input_name,
                what: "a host's result file or failure marker",
            })
            .collect();
        check_output_reading(p, &inputs, &folders, args.force)?;
    }
    let opts = Options {
        k: args.k,
        min_diff_pct: args.min_diff_pct,
        drift_pct: args.drift_pct,
        fail_pct: args.fail_pct,
        precondition_rules: hwsurvey_qualify::RULES
            .iter()
            .filter(|r| r.kind == hwsurvey_qualify::RuleKind::Precondition)
            .map(|r| r.id.to_string())
            .collect(),
    };
    let mut fleet = load_and_analyse(sources, &opts);
    fleet.notes.extend(collected.skipped);
    let format = match (args.json, args.format) {
        (true, _) | (_, FormatArg::Json) => Format::Json,
        (_, FormatArg::Terminal) => Format::Terminal,
        (_, FormatArg::Markdown) => Format::Markdown,
        (_, FormatArg::Html) => Format::Html,
    };
    match &args.output {
        Some(path) => {
            let text = render(&fleet, format, None);
            hwsurvey_model::files::write_atomic(path, text.as_bytes(), args.force)?;
            errln!(
                "hwsurvey fleet: wrote {} ({} hosts, {} groups)",
                path.display(),
                fleet.hosts.len(),
                fleet.groups.len()
            );
        }
        None => out!("{}", render(&fleet, format, crate::terminal_width())),
    }
    Ok(ExitCode::from(fleet.exit_code()))
}

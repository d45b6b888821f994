//! `hwsurvey qualify`: probe (or a snapshot, or a result file) -> findings -> verdict table.
//! Exit code 0 (pass: every rule evaluated, nothing wrong), 1 (warnings), 2 (failures;
//! warnings and an incomplete verdict too with --strict), 3 (the input could not be used:
//! unreadable rules file or result, bad option, not an ELF binary, a --dmidecode text of
//! another machine, or a root under which no rule could be evaluated), 4 (incomplete: rules
//! not evaluated, nothing warned or failed), 5 (an emulated machine: no hardware verdict);
//! the codes are `hwsurvey_qualify::verdict`'s.

use std::path::PathBuf;
use std::process::ExitCode;

use hwsurvey_model::Probed;
use hwsurvey_qualify::machine::target_facts;
use hwsurvey_qualify::render::{render, Format};
use hwsurvey_qualify::stored::{self, BuiltinRules, Origin, RulesRef};
use hwsurvey_qualify::{binary, from_machine, qualify, Report, RuleSet, Verdict};

/// Exit code of an input or usage error (never a verdict: those are 0, 1 and 2).
pub const EXIT_INPUT_ERROR: u8 = 3;

/// Text after the options in `hwsurvey qualify --help`.
const EXIT_CODES: &str = "Verdict (the line under the tally): pass only when every rule about
the machine was evaluated and none warned or failed; incomplete when rules could
not be evaluated (named; on a virtual machine, the rules it could not check
there); none on an emulated machine (QEMU TCG, emulation not excluded, or a
result measured under qemu-user): its CPUs, memory and figures are the
emulator's.

Exit codes (findings about the machine only; unmet preconditions of the profile,
such as empty hugetlb pools, are listed apart and never change them):
  0  pass: every rule evaluated, none warned or failed (info findings allowed)
  1  warnings, no failure
  2  a rule failed (with --strict: a warning or an incomplete verdict too)
  3  input or usage error: bad option, unreadable or invalid rules file, result
     file or --binary, a --dmidecode text of another machine (without
     --dmidecode-other-machine), or nothing could be evaluated under the root
  4  incomplete: rules not evaluated, none warned or failed
  5  emulated machine: no hardware verdict

Examples:
  hwsurvey qualify                       # this machine
  hwsurvey qualify result.json           # the findings a run stored, with its figures
  hwsurvey qualify --root hwsurvey-snapshot/ --format markdown
  hwsurvey qualify --dmidecode dmidecode.txt   # DIMM rules on saved `dmidecode` text";

/// Output formats.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum FormatArg {
    /// Aligned text.
    Terminal,
    /// Markdown table.
    Markdown,
    /// JSON.
    Json,
}

/// Options of `hwsurvey qualify`.
#[derive(clap::Args, Debug)]
#[command(after_help = EXIT_CODES)]
pub struct Args {
    /// Qualify a captured machine instead of this one: a copy of / with proc/ and sys/, an
    /// extracted snapshot (or the folder it was extracted into), or a snapshot archive
    /// (.tar.gz, .tgz, .tar.bz2, .tar).
    #[arg(long, value_name = "DIR|SNAPSHOT.tar.gz", conflicts_with = "result")]
    root: Option<PathBuf>,
    /// Qualify the machine recorded in a result file (and check its measured figures): shows
    /// the findings `hwsurvey run` stored in it, or recomputes them for older files (and with
    /// --rules or --binary), saying which.
    #[arg(value_name = "RESULT.json")]
    result: Option<PathBuf>,
    /// Saved `dmidecode` (or `dmidecode -t memory`) text: the memory rules read its DIMM
    /// population (SMBIOS Type 16/17) instead of /sys/firmware/dmi (as `probe --dmidecode`).
    #[arg(long, value_name = "FILE", conflicts_with = "result")]
    dmidecode: Option<PathBuf>,
    /// Read the --dmidecode text even though it was saved on another machine (its system,
    /// DMI UUID or serial, sockets or installed memory do not fit this one; refused
    /// otherwise, exit 3): the report's origin line names each difference.
    #[arg(long, requires = "dmidecode")]
    dmidecode_other_machine: bool,
    /// Rules file (default: the built-in set, identical to profiles/qualify.toml).
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "terminal")]
    format: FormatArg,
    /// Print the report as JSON: the same as `--format json` (as `probe --json`).
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Only a pass exits 0: warnings and an incomplete verdict (rules not evaluated) exit 2,
    /// as failures.
    #[arg(long)]
    strict: bool,
    /// Check this ELF binary instead of hwsurvey itself.
    #[arg(long, value_name = "FILE")]
    binary: Option<PathBuf>,
}

/// Runs `hwsurvey qualify`. Input errors are printed here and exit with
/// [`EXIT_INPUT_ERROR`], so that exit code 2 always means "a rule failed".
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::exit_on_input_error(args, run_checked, EXIT_INPUT_ERROR)
}

/// Prints the report; its verdict's exit code, or an error when no rule could be evaluated
/// (an empty or wrong root reads as "nothing wrong" otherwise).
fn finish(report: &Report, args: &Args, under: &str) -> anyhow::Result<ExitCode> {
    let format = if args.json {
        FormatArg::Json
    } else {
        args.format
    };
    out!("{}", render(report, format_of(format)));
    let nothing = !report.findings.is_empty()
        && report
            .findings
            .iter()
            .all(|f| f.verdict == Verdict::NotEvaluated);
    anyhow::ensure!(
        !nothing,
        "nothing could be evaluated under {under}: every rule's input is missing (is this a Linux root with /proc and /sys?)"
    );
    Ok(ExitCode::from(report.exit_code(args.strict)))
}

fn run_checked(args: Args) -> anyhow::Result<ExitCode> {
    let (rules, rules_ref) = match &args.rules {
        Some(path) => {
            // a regular file only (a FIFO or /dev/zero is refused), at most 1 MiB
            let text = hwsurvey_qualify::config::read_rules_file(path)?;
            let shown = path.display().to_string();
            (
                RuleSet::parse(&shown, &text)?,
                RulesRef::of_text(shown, &text),
            )
        }
        None => (RuleSet::builtin(), RulesRef::builtin()),
    };
    if let Some(path) = &args.result {
        let shown = path.display().to_string();
        let file = hwsurvey_result::load(path)?;
        // The findings `hwsurvey run` stored, unless --rules or --binary asks for others.
        if args.rules.is_none() && args.binary.is_none() {
            let report = stored::findings_of_result(&shown, &file, &rules, &rules_ref);
            return finish(&report, &args, &shown);
        }
        let mut facts = from_machine(&file.machine);
        facts.result = Probed::Known(hwsurvey_qualify::machine::result_facts(&shown, &file));
        facts.platform = hwsurvey_qualify::Platform::of_result(&file);
        if let Some(bin) = &args.binary {
            facts.binary = Probed::Known(binary::read_elf_header(bin)?);
            facts.target = target_facts(&facts.binary, &facts.os.kernel_machine);
        }
        let mut report = qualify(&shown, &facts, &rules);
        let given = match (&args.rules, &args.binary) {
            (Some(_), Some(_)) => "--rules and --binary given",
            (Some(_), None) => "--rules given",
            _ => "--binary given",
        };
        let why = if file.qualification.is_some() {
            format!("{given} (the file's stored findings are not shown)")
        } else {
            format!(
                "{given}; the file stores no findings (written before hwsurvey run stored them)"
            )
        };
        report.origin = Some(
            Origin::Recomputed {
                rules: rules_ref,
                why,
            }
            .note(),
        );
        return finish(&report, &args, &shown);
    }
    let capture = super::capture::open_or_live(args.root.as_deref())?;
    let root = &capture.root;
    let dimms = args
        .dmidecode
        .as_deref()
        .map(crate::cmd::probe::read_dmidecode)
        .transpose()?;
    let mut machine = hwsurvey_probe::probe_machine(root);
    let other = match dimms {
        Some(file) => {
            crate::cmd::probe::merge_dmidecode(file, &mut machine, args.dmidecode_other_machine)?
        }
        None => None,
    };
    let mut facts = from_machine(&machine);
    facts.pages.hugetlb_needed =
        hwsurvey_workloads::families::mem_latency::standard_plan_hugetlb_needs(root, &machine).map(
            |needs| {
                needs
                    .into_iter()
                    .map(
                        |(page_size_bytes, pages)| hwsurvey_qualify::facts::HugetlbNeed {
                            page_size_bytes,
                            pages,
                        },
                    )
                    .collect()
            },
        );
    facts.binary = binary::binary_fact(args.binary.as_deref(), root.is_live())?;
    // os.kernel_min reads the minimum from the target descriptor of the binary just chosen
    facts.target = target_facts(&facts.binary, &facts.os.kernel_machine);
    // the archive as given, not the temporary folder it was unpacked into
    let subject = capture.shown.clone();
    let mut report = qualify(&subject, &facts, &rules);
    if let Some(file) = &args.dmidecode {
        report.origin = Some(match &other {
            Some(note) => format!("{note}; everything else from {subject}"),
            None => format!(
                "DIMMs (SMBIOS Type 16/17) from the dmidecode text {}; everything else from {subject}",
                file.display()
            ),
        });
    }
    finish(&report, &args, &subject)
}

fn format_of(f: FormatArg) -> Format {
    match f {
        FormatArg::Terminal => Format::Terminal,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Json => Format::Json,
    }
}

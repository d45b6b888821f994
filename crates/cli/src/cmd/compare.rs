//! `hwsurvey compare FILE...`: result files side by side (tables, plots, HTML report).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use hwsurvey_model::files::{check_output, write_atomic};
use hwsurvey_report::{compare, distinct_labels, label_candidates, plot, render, Format, Input};

/// Output formats.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum FormatArg {
    /// Box tables.
    Terminal,
    /// Markdown.
    Markdown,
    /// CSV (base units, unit column).
    Csv,
    /// JSON layout model.
    Json,
    /// Self-contained HTML report with inline SVG plots.
    Html,
}

/// Options of `hwsurvey compare`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Exit status:
  0    the comparison was printed or written (-o, --plots)
  2    usage error, or a FILE that cannot be read or is not a result file, different profile
       versions without --mixed-profiles, a --baseline that names no column, an existing -o
       or plot file without --force, or output that could not be written
  141  the reader of standard output went away (`hwsurvey compare a.json b.json | head`)

Examples:
  hwsurvey compare a.json b.json        # machines and headline on the terminal
  hwsurvey compare a.json b.json --details | less -S   # every table
  hwsurvey compare a.json b.json -o report.html --plots plots/
  hwsurvey compare a.json b.json -o - --format markdown | pandoc -o report.docx
  hwsurvey compare a.json b.json --label xeon --label altra --baseline altra

A PDF: write the HTML report, then print it with a browser (A4, the report's print
stylesheet; scripts/html-to-pdf-png does the same):
  hwsurvey compare a.json b.json -o report.html
  chromium --headless --no-pdf-header-footer --print-to-pdf=report.pdf report.html")]
pub struct Args {
    /// Result files, one column each, in this order.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Baseline of the relative columns: a column label, or a file as given or its name without
    /// the extension (`a` for a.json) (default: the first file whose run was not measured
    /// under emulation, else the first file).
    #[arg(long)]
    baseline: Option<String>,
    /// Column labels, one per file in order (default: the hostname; where two files share it,
    /// hostname and arch, then hostname, arch and kernel, then the file name stem appended).
    #[arg(long = "label", value_name = "LABEL")]
    labels: Vec<String>,
    /// Output format [default: from the -o file's extension (.md, .csv, .json, .html/.htm,
    /// .txt for the terminal's text), else terminal].
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Write to FILE instead of standard output (`-o -`: standard output). Without --format
    /// the extension picks the format; any other extension is refused (.pdf too: print the
    /// HTML report to PDF, as the after-help says). An existing file is refused unless
    /// --force; an input result file is always refused.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Also write each plot as an SVG file into DIR, named by family and view
    /// (`mem.bandwidth-stream.triad-vs-threads.svg`); existing plot files are refused unless
    /// --force.
    #[arg(long, value_name = "DIR")]
    plots: Option<PathBuf>,
    /// Replace existing -o and --plots files (never an input), as `run --force` and
    /// `snapshot --force` replace theirs.
    #[arg(long)]
    force: bool,
    /// Compare results of different profile versions; every table is flagged.
    #[arg(long)]
    mixed_profiles: bool,
    /// Print the JSON layout model: the same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// On a terminal, print the detail tables too (every metric, the scaling series, the
    /// machine details and findings) after the machines and the headline. Into a pipe or a
    /// file everything is printed anyway.
    #[arg(long)]
    details: bool,
}

/// The column label that `--baseline b` names: `b` itself when it is a label, else the label of
/// the one file given as `b` or whose name without the extension is `b` (`--baseline a` for
/// a.json, as the README shows), else `b` unchanged (the comparison then names the labels).
fn baseline_label<'a>(b: &'a str, labels: &'a [String], files: &[PathBuf]) -> &'a str {
    if labels.iter().any(|l| l == b) {
        return b;
    }
    let matches: Vec<usize> = files
        .iter()
        .enumerate()
        .filter(|(_, p)| p.as_os_str() == b || p.file_stem().is_some_and(|s| s == b))
        .map(|(i, _)| i)
        .collect();
    match matches.as_slice() {
        [i] => labels[*i].as_str(),
        _ => b,
    }
}

/// The format of the output: `--format` (or `--json`), else from the extension of `-o`
/// (`.md`/`.markdown`, `.csv`, `.json`, `.html`/`.htm`, `.txt` for the terminal's text), else
/// the terminal's. An `-o` whose extension names no format is refused, never written as
/// terminal text: `.pdf` with the way to print the HTML report to PDF.
fn output_format(args: &Args) -> anyhow::Result<Format> {
    let chosen = args.format.or(args.json.then_some(FormatArg::Json));
    let from_extension = |p: &Path| -> anyhow::Result<FormatArg> {
        let ext = p
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        Ok(match ext.as_deref() {
            Some("md" | "markdown") => FormatArg::Markdown,
            Some("csv") => FormatArg::Csv,
            Some("json") => FormatArg::Json,
            Some("html" | "htm") => FormatArg::Html,
            Some("txt" | "text") => FormatArg::Terminal,
            Some("pdf") => {
                // the commands whole, each on its own line, before the one-line error
                errln!(
                    "note: a PDF is the HTML report printed by a browser (A4, its print \
                     stylesheet; scripts/html-to-pdf-png does this):\n  hwsurvey compare \
                     FILE... -o report.html\n  chromium --headless --no-pdf-header-footer \
                     --print-to-pdf={} report.html",
                    p.display()
                );
                anyhow::bail!(
                    "-o {}: hwsurvey writes no PDF: write the HTML report and print it (the \
                     note above)",
                    p.display()
                )
            }
            other => anyhow::bail!(
                "-o {}: {}: name the file .md, .csv, .json, .html or .txt (the terminal's \
                 text), or give --format",
                p.display(),
                match other {
                    Some(e) => format!("no output format has the extension .{e}"),
                    None => "no extension to pick the output format by".into(),
                }
            ),
        })
    };
    let arg = match (chosen, &args.output) {
        // a PDF is never written, whatever --format says
        (Some(_), Some(p)) if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("pdf")) => {
            from_extension(p)?
        }
        (Some(f), _) => f,
        (None, Some(p)) => from_extension(p)?,
        (None, None) => FormatArg::Terminal,
    };
    Ok(match arg {
        FormatArg::Terminal => Format::Terminal,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Csv => Format::Csv,
        FormatArg::Json => Format::Json,
        FormatArg::Html => Format::Html,
    })
}

/// Runs `hwsurvey compare`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.labels.is_empty() || args.labels.len() == args.files.len(),
        "{} --label values for {} files: give one per file or none",
        args.labels.len(),
        args.files.len()
    );
    let mut args = args;
    // `-o -` is standard output, as for most Unix tools (it made a file named "-")
    if args.output.as_deref() == Some(Path::new("-")) {
        args.output = None;
    }
    // the format before any work: from --format, else the extension of -o, else refused
    let format = output_format(&args)?;
    // the one output rule, before any work: never an input, never an existing file without
    // --force
    let given = args.files.clone();
    let input_paths: Vec<&Path> = given.iter().map(PathBuf::as_path).collect();
    if let Some(p) = &args.output {
        check_output(p, &input_paths, args.force)?;
    }
    // hwsurvey's own reports beside the results (`compare reports/examples/*.json` with
    // compare.json there) are skipped with a note, recognised by their content
    let mut files = Vec::new();
    let mut kept: Vec<usize> = Vec::new();
    for (i, path) in args.files.iter().enumerate() {
        match hwsurvey_result::load(path) {
            Ok(f) => {
                files.push(f);
                kept.push(i);
            }
            Err(e) => {
                // only a JSON file that is no result file is read again, to say what it is
                // (a file refused for its size or density is not parsed a second time)
                let kind = matches!(e, hwsurvey_result::ResultError::WrongSchema { .. })
                    .then(|| std::fs::read_to_string(path).ok())
                    .flatten()
                    .and_then(|t| hwsurvey_report::input::own_report_kind(&t));
                match kind {
                    Some(kind) => errln!(
                        "note: {}: skipped: hwsurvey's own {kind}, not a result file",
                        path.display()
                    ),
                    None => return Err(e.into()),
                }
            }
        }
    }
    anyhow::ensure!(
        !files.is_empty(),
        "no result files among the {} files given",
        args.files.len()
    );
    if kept.len() < args.files.len() {
        args.files = kept.iter().map(|&i| args.files[i].clone()).collect();
        if !args.labels.is_empty() {
            args.labels = kept.iter().map(|&i| args.labels[i].clone()).collect();
        }
    }
    // --label overrides; by default each file is its hostname, with its arch and kernel added
    // where two files share one, then the file name (report::distinct_labels)
    let (labels, label_note) = if args.labels.is_empty() {
        let candidates: Vec<Vec<String>> = files.iter().map(label_candidates).collect();
        let names: Vec<(String, String)> = args
            .files
            .iter()
            .map(|p| {
                let stem = p
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (stem, p.display().to_string())
            })
            .collect();
        distinct_labels(&candidates, &names)
    } else {
        (args.labels.clone(), None)
    };
    let baseline = args
        .baseline
        .as_deref()
        .map(|b| baseline_label(b, &labels, &args.files).to_string());
    let inputs: Vec<Input> = labels
        .into_iter()
        .zip(files)
        .map(|(label, file)| Input { label, file })
        .collect();
    let mut c = compare(&inputs, baseline.as_deref(), args.mixed_profiles)?;
    // the printed report's page 1 says when it was written
    c.written_at = Some(hwsurvey_result::file::rfc3339(std::time::SystemTime::now()));
    if let Some(note) = label_note {
        errln!("note: {note}");
        c.add_note(note);
    }
    let left_out = plot::left_out_of_report(&c);
    if !left_out.is_empty() {
        let where_ = match &args.plots {
            Some(dir) => format!("are in {}", dir.display()),
            None => "are written by --plots DIR".to_string(),
        };
        let note = format!(
            "the report shows {} thread-scaling plots per family; {} more {where_}",
            plot::REPORT_PLOTS_PER_FAMILY,
            left_out.len(),
        );
        // the list on stderr for a log (stderr not a terminal) when the report goes to a
        // file or a pipe; never on a terminal's screen, whose first lines it filled (issues
        // 33 and 49: `compare ... | less` showed a 1,000-character list first); the report
        // says it in one line
        let to_screen = crate::terminal_width().is_some();
        if !to_screen {
            if crate::fit::stderr_width().is_none() {
                errln!("note: {note}: {}", left_out.join("; "));
            } else if args.output.is_some() || args.plots.is_some() {
                errln!("note: {note}");
            }
        }
        c.add_note(note);
    }
    let plots = plot::all_plots(&c);
    if let Some(dir) = &args.plots {
        if dir.exists() && !dir.is_dir() {
            anyhow::bail!("--plots {}: exists and is not a directory", dir.display());
        }
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        // named by family and view (mem.bandwidth-stream.triad-vs-threads.svg), with captions;
        // every name checked before the first is written
        let files = plot::plot_files(&c);
        for (name, _) in &files {
            check_output(&dir.join(name), &input_paths, args.force)?;
        }
        for (name, svg) in files {
            write_atomic(&dir.join(name), svg.as_bytes(), args.force)?;
        }
    }
    let text = match (format, &args.output) {
        // to the terminal: tables shrunk to its width
        // to the terminal: the machines and the headline first, tables shrunk to its width,
        // the detail tables with --details
        (Format::Terminal, None) => hwsurvey_report::terminal::screen(
            &c,
            &hwsurvey_report::terminal::Screen {
                width: crate::terminal_width(),
                details: args.details,
                hint: Some(format!(
                    "{} detail tables (every metric, the scaling series, the machine details \
                     and findings) are printed with --details, or into a pipe or file",
                    hwsurvey_report::terminal::detail_tables(&c)
                )),
                one_line_notes: false,
            },
        ),
        _ => render(&c, format, &plots),
    };
    match &args.output {
        Some(p) => write_atomic(p, text.as_bytes(), args.force)?,
        None => out!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

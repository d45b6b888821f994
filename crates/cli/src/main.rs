//! `hwsurvey`: thin command line over the pipeline
//! probe -> plan -> run -> result file -> compare / qualify.
//!
//! Each subcommand lives in `cmd/<name>.rs`: clap options in, one call into a library crate.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `print!` to stdout, except that a reader that has gone (`hwsurvey probe | head`) ends the
/// process quietly with status 141 (128 + SIGPIPE), as a Unix tool killed by SIGPIPE does,
/// instead of a panic; another write error (`> /dev/full`) is a one-line error, exit 2.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::write_stdout(format_args!($($arg)*))
    };
}

/// [`out!`] with a newline.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// The writer behind [`out!`]: stdout, flushed, with EPIPE and other errors handled there.
/// Control characters from probed or loaded strings (ESC, BEL, NUL in a hostname or a CPU
/// model) are written escaped (`\u{1b}`), never raw to the terminal; newlines and tabs stay.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let text = args.to_string();
    let text = hwsurvey_model::text::escape_controls(&text, "\n\t");
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        eprintln!("hwsurvey: error: writing to standard output: {e}");
        std::process::exit(2);
    }
}

mod cmd;

/// Longest error line printed, characters: a value quoted in an error is bounded where it is
/// quoted ([`hwsurvey_model::text::quote`]); this bounds what a library's message still holds
/// (serde's "invalid type: string ..." quotes the whole string).
const MAX_ERROR_CHARS: usize = 1000;

/// An error for stderr: one line (newlines and other control characters escaped), at most
/// [`MAX_ERROR_CHARS`] characters plus the length note.
pub(crate) fn error_line(message: &str) -> std::borrow::Cow<'_, str> {
    hwsurvey_model::text::one_line(message, MAX_ERROR_CHARS)
}

/// What a Linux server really is and how it really scales.
#[derive(Parser, Debug)]
#[command(name = "hwsurvey", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Probe the machine (or a captured snapshot) and print what it is.
    Probe(cmd::probe::Args),
    /// Capture exactly the /proc and /sys files the probes read into a .tar.gz.
    Snapshot(cmd::snapshot::Args),
    /// Run the fixed profile of scaling tests and write a result file.
    Run(cmd::run::Args),
    /// Put result files side by side: tables, plots, HTML report.
    Compare(cmd::compare::Args),
    /// Turn the probe (and a result file) into pass / warn / fail findings.
    Qualify(cmd::qualify::Args),
    /// Inspect an ELF file, and check it against a target descriptor.
    Elf(cmd::elf::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // qualify keeps 2 for "a rule failed": its usage errors exit 3
        Err(e) if e.use_stderr() && std::env::args_os().nth(1).is_some_and(|a| a == "qualify") => {
            let _ = e.print();
            return ExitCode::from(cmd::qualify::EXIT_INPUT_ERROR);
        }
        Err(e) => e.exit(),
    };
    let outcome = match cli.command {
        Command::Probe(args) => cmd::probe::run(args),
        Command::Snapshot(args) => cmd::snapshot::run(args),
        Command::Run(args) => cmd::run::run(args),
        Command::Compare(args) => cmd::compare::run(args),
        Command::Qualify(args) => cmd::qualify::run(args),
        Command::Elf(args) => cmd::elf::run(args),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("hwsurvey: error: {}", error_line(&format!("{error:#}")));
            ExitCode::from(2)
        }
    }
}

//! `hwsurvey`: thin command line over the pipeline
//! probe -> plan -> run -> result file -> compare / qualify.
//!
//! Each subcommand lives in `cmd/<name>.rs`: clap options in, one call into a library crate.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

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
/// When stdout is a terminal, every line fits its width ([`fit::fit`]).
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let text = args.to_string();
    let text = hwsurvey_model::text::escape_controls(&text, "\n\t");
    let text = match terminal_width() {
        Some(width) => std::borrow::Cow::Owned(fit::fit(&text, width)),
        None => text,
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        write_stderr(format_args!(
            "hwsurvey: error: writing to standard output: {e}\n"
        ));
        std::process::exit(2);
    }
}

/// `eprintln!` for notes and errors: control characters escaped, and every line fitted to the
/// width of the terminal on stderr when there is one ([`fit::fit`]). A failed write to stderr
/// is ignored (there is nowhere left to report it).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::write_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// The writer behind [`errln!`].
pub(crate) fn write_stderr(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    static WIDTH: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let text = args.to_string();
    let text = hwsurvey_model::text::escape_controls(&text, "\n\t");
    let text = match *WIDTH.get_or_init(fit::stderr_width) {
        Some(width) => std::borrow::Cow::Owned(fit::fit(&text, width)),
        None => text,
    };
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

mod cmd;
mod fit;

/// Width of the terminal on stdout, read once ([`fit::stdout_width`]); `None` for a pipe or file.
pub(crate) fn terminal_width() -> Option<usize> {
    static WIDTH: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *WIDTH.get_or_init(fit::stdout_width)
}

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
#[command(
    name = "hwsurvey",
    version,
    propagate_version = true,
    about,
    long_about = None,
    after_help = "Exit status (each command's --help and manual page, hwsurvey-run(1), ..., list its own):
  0    done
  2    an error, said in one line on standard error, or a usage error (qualify and fleet: 3,
       their 1 and 2 being verdicts)
  141  the reader of standard output went away (`hwsurvey probe | head`)

Examples:
  hwsurvey probe                     # what this machine is: CPUs, caches, NUMA, DIMMs
  hwsurvey run                       # standard profile, summary, result file
  hwsurvey run --profile quick -o q.json          # tiny sizes, seconds
  hwsurvey compare a.json b.json -o report.html   # side by side
  hwsurvey qualify                   # pass / warn / fail findings (exit 0/1/2)
  hwsurvey fleet reports/fleet/examples/          # many hosts: outliers and their causes
  hwsurvey completions bash > /etc/bash_completion.d/hwsurvey"
)]
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
    /// Group many hosts' result files by hardware and name the hosts that stand out, and why.
    Fleet(cmd::fleet::Args),
    /// Inspect an ELF file, and check it against a target descriptor.
    Elf(cmd::elf::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::Args),
    /// Print the manual page (roff), or write every page into a folder.
    Man(cmd::man::ManArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // qualify keeps 2 for "a rule failed": its usage errors exit 3
        Err(e)
            if e.use_stderr()
                && std::env::args_os()
                    .nth(1)
                    .is_some_and(|a| a == "qualify" || a == "fleet") =>
        {
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
        Command::Fleet(args) => cmd::fleet::run(args),
        Command::Elf(args) => cmd::elf::run(args),
        Command::Completions(args) => cmd::completions::run(args, &mut Cli::command()),
        Command::Man(args) => cmd::man::man(args, Cli::command()),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            errln!("hwsurvey: error: {}", error_line(&format!("{error:#}")));
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every "Examples:" line of every `--help` (`  hwsurvey ...`, a `#` comment, a shell
    /// redirect or pipe after it) with the command's words only.
    fn examples(cmd: &clap::Command, out: &mut Vec<(String, String)>) {
        if let Some(help) = cmd.get_after_help() {
            let help = help.to_string();
            if let Some((_, tail)) = help.split_once("Examples:") {
                for line in tail
                    .lines()
                    .filter(|l| l.trim_start().starts_with("hwsurvey "))
                {
                    let words = line.split(" #").next().unwrap_or_default();
                    let words = words
                        .split(['>', '|', '&'])
                        .next()
                        .unwrap_or_default()
                        .trim();
                    out.push((cmd.get_name().to_string(), words.to_string()));
                }
            }
        }
        for sub in cmd.get_subcommands() {
            examples(sub, out);
        }
    }

    #[test]
    fn every_help_example_parses_and_every_subcommand_has_some() {
        let cli = Cli::command();
        let mut found = Vec::new();
        examples(&cli, &mut found);
        for sub in cli.get_subcommands() {
            assert!(
                found.iter().any(|(c, _)| c == sub.get_name()),
                "`hwsurvey {} --help` shows no example",
                sub.get_name()
            );
        }
        assert!(found.len() >= 20, "{found:?}");
        for (cmd, line) in &found {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let Err(e) = Cli::try_parse_from(&words) {
                panic!("example of `{cmd} --help` does not parse: {line}\n{e}");
            }
        }
    }

    #[test]
    fn the_clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}

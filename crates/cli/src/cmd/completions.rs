//! `hwsurvey completions SHELL`: shell completions (clap_complete), generated from the same
//! clap definitions as the command line itself, so they cannot drift from it. README "Shell
//! completions and manual pages" gives the install commands; `hwsurvey man` is in
//! [`super::man`].

use std::process::ExitCode;

use anyhow::Context;

/// Options of `hwsurvey completions`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Exit status:
  0  the script was written to standard output
  2  usage error (an unknown shell: the choices are named), or standard output could not be
     written

Examples:
  hwsurvey completions bash > /etc/bash_completion.d/hwsurvey
  hwsurvey completions zsh > \"${fpath[1]}/_hwsurvey\"
  hwsurvey completions fish > ~/.config/fish/completions/hwsurvey.fish")]
pub struct Args {
    /// Shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Prints the completion script for `args.shell` on stdout.
pub fn run(args: Args, cli: &mut clap::Command) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, cli, "hwsurvey", &mut script);
    // straight to stdout: a completion script is not fitted to the terminal
    use std::io::Write;
    std::io::stdout()
        .lock()
        .write_all(&script)
        .context("writing the completion script to standard output")?;
    Ok(ExitCode::SUCCESS)
}

//! `hwsurvey completions SHELL` and `hwsurvey man`: shell completions (clap_complete) and
//! manual pages in roff (clap_mangen), generated from the same clap definitions as the
//! command line itself, so they cannot drift from it. README "Shell completions and manual
//! pages" gives the install commands.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

/// Options of `hwsurvey completions`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
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

/// Options of `hwsurvey man`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  hwsurvey man | man -l -
  hwsurvey man --dir /usr/local/share/man/man1 && mandb -q")]
pub struct ManArgs {
    /// Write hwsurvey.1 and one page per subcommand (hwsurvey-run.1, ...) into DIR, replacing
    /// pages of those names; without it, hwsurvey.1 goes to standard output
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Writes the manual pages (section 1, roff) to `args.dir` or hwsurvey.1 to stdout.
pub fn man(args: ManArgs, cli: clap::Command) -> anyhow::Result<ExitCode> {
    match args.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("creating the folder {}", dir.display()))?;
            clap_mangen::generate_to(cli, &dir)
                .with_context(|| format!("writing manual pages into {}", dir.display()))?;
            let mut pages: Vec<String> = std::fs::read_dir(&dir)
                .with_context(|| format!("listing {}", dir.display()))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("hwsurvey") && n.ends_with(".1"))
                .collect();
            pages.sort();
            outln!("{}: {}", dir.display(), pages.join(" "));
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cli)
                .render(&mut page)
                .context("rendering the manual page")?;
            use std::io::Write;
            std::io::stdout()
                .lock()
                .write_all(&page)
                .context("writing the manual page to standard output")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! `hwsurvey man`: manual pages in roff, generated from the same clap definitions as the
//! command line itself (clap_mangen renders the title, name, synopsis, description, options
//! and subcommands), so they cannot drift from it. The text after the options of each
//! `--help` becomes sections of its own ([`after_help_sections`]): `Exit status:` the EXIT
//! STATUS section, `Examples:` the EXAMPLES section, both printed as written (no-fill mode:
//! `man` neither reflows nor hyphenates a command line, which clap_mangen's one EXTRA
//! paragraph did: "ma‐ chine"); any other paragraph a filled NOTES paragraph.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use roff::{roman, Roff};

/// Options of `hwsurvey man`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Exit status:
  0  the page was written to standard output, or every page into DIR (their names printed)
  2  usage error, DIR could not be created or a page not written there, or standard output
     could not be written

Examples:
  hwsurvey man | man -l -
  hwsurvey man --dir /usr/local/share/man/man1 && mandb -q")]
pub struct ManArgs {
    /// Write hwsurvey.1 and one page per subcommand (hwsurvey-run.1, ...) into DIR, replacing
    /// pages of those names; without it, hwsurvey.1 goes to standard output
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// A part of a command's after-help text, as the manual page shows it.
#[derive(Debug, PartialEq, Eq)]
pub enum Section {
    /// `Exit status:` (or `Exit codes ...:`): the lines after that heading, verbatim; a
    /// heading that says more than the two words is kept as the first line.
    ExitStatus(Vec<String>),
    /// `Examples:`: the command lines after the heading, verbatim.
    Examples(Vec<String>),
    /// Any other paragraph: prose, its lines joined and filled by `man`.
    Note(String),
}

/// The sections of `after_help`: paragraphs separated by blank lines, each classified by its
/// first line ([`Section`]).
pub fn after_help_sections(after_help: &str) -> Vec<Section> {
    let mut out = Vec::new();
    let mut paragraphs: Vec<Vec<&str>> = vec![Vec::new()];
    for line in after_help.lines() {
        if line.trim().is_empty() {
            paragraphs.push(Vec::new());
        } else if let Some(p) = paragraphs.last_mut() {
            p.push(line.trim_end());
        }
    }
    for p in paragraphs.into_iter().filter(|p| !p.is_empty()) {
        let first = p[0];
        let rest = || p[1..].iter().map(|l| l.to_string()).collect::<Vec<_>>();
        if first == "Examples:" {
            out.push(Section::Examples(rest()));
        } else if first.starts_with("Exit status") || first.starts_with("Exit codes") {
            let lines = if first == "Exit status:" || first == "Exit codes:" {
                rest()
            } else {
                p.iter().map(|l| l.to_string()).collect()
            };
            out.push(Section::ExitStatus(lines));
        } else {
            out.push(Section::Note(p.join(" ")));
        }
    }
    out
}

/// Lines in no-fill mode (`.nf` ... `.fi`): each printed as written, not hyphenated.
fn verbatim(roff: &mut Roff, lines: &[String]) {
    roff.control("nf", []);
    roff.control("nh", []);
    for line in lines {
        roff.text([roman(line.as_str())]);
    }
    roff.control("fi", []);
    roff.control("hy", []);
}

/// The manual page of `cmd` (built, so its display name is `hwsurvey-run` for a subcommand).
fn page(cmd: clap::Command) -> anyhow::Result<Vec<u8>> {
    let after = cmd
        .get_after_long_help()
        .or(cmd.get_after_help())
        .map(ToString::to_string)
        .unwrap_or_default();
    let sections = after_help_sections(&after);
    let has_args = cmd.get_arguments().any(|a| !a.is_hide_set());
    let has_subcommands = cmd.get_subcommands().any(|s| !s.is_hide_set());
    let has_version = cmd.get_version().is_some();
    let man = clap_mangen::Man::new(cmd);
    let mut buf = Vec::new();
    man.render_title(&mut buf)?;
    man.render_name_section(&mut buf)?;
    man.render_synopsis_section(&mut buf)?;
    man.render_description_section(&mut buf)?;
    if has_args {
        man.render_options_section(&mut buf)?;
    }
    if has_subcommands {
        man.render_subcommands_section(&mut buf)?;
    }
    let mut roff = Roff::new();
    for s in &sections {
        if let Section::ExitStatus(lines) = s {
            roff.control("SH", ["EXIT STATUS"]);
            verbatim(&mut roff, lines);
        }
    }
    for s in &sections {
        if let Section::Examples(lines) = s {
            roff.control("SH", ["EXAMPLES"]);
            verbatim(&mut roff, lines);
        }
    }
    let notes: Vec<&String> = sections
        .iter()
        .filter_map(|s| match s {
            Section::Note(n) => Some(n),
            _ => None,
        })
        .collect();
    if !notes.is_empty() {
        roff.control("SH", ["NOTES"]);
        for n in notes {
            roff.control("PP", []);
            roff.text([roman(n.as_str())]);
        }
    }
    // to_roff: the body only (render() would repeat the apostrophe preamble of the title)
    buf.extend_from_slice(roff.to_roff().as_bytes());
    if has_version {
        man.render_version_section(&mut buf)?;
    }
    Ok(buf)
}

/// Every page: `cmd` (built, without the `help` subcommand) and its visible subcommands,
/// each as (file name, page).
fn pages(cmd: clap::Command) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
        out.extend(pages(sub)?);
    }
    let name = format!(
        "{}.1",
        cmd.get_display_name().unwrap_or_else(|| cmd.get_name())
    );
    out.push((name, page(cmd)?));
    Ok(out)
}

/// The pages of `cli` by file name: `hwsurvey.1`, `hwsurvey-run.1`, ...
pub fn all_pages(cli: clap::Command) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut cli = cli.disable_help_subcommand(true);
    cli.build();
    pages(cli)
}

/// Writes every page into `dir` as every hwsurvey output is written
/// ([`hwsurvey_model::files::write_atomic`]): to a temporary file in `dir`, then renamed over
/// the page's name, so a symlink planted under a page's name is replaced, never written
/// through.
fn write_pages(cli: clap::Command, dir: &Path) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the folder {}", dir.display()))?;
    let mut names = Vec::new();
    for (name, page) in all_pages(cli)? {
        hwsurvey_model::files::write_atomic(&dir.join(&name), &page, true)?;
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// Writes the manual pages (section 1, roff) to `args.dir` or hwsurvey.1 to stdout.
pub fn man(args: ManArgs, cli: clap::Command) -> anyhow::Result<ExitCode> {
    match args.dir {
        Some(dir) => {
            let pages = write_pages(cli, &dir)?;
            outln!("{}: {}", dir.display(), pages.join(" "));
        }
        None => {
            let top = all_pages(cli)?
                .into_iter()
                .find(|(name, _)| name == "hwsurvey.1")
                .map(|(_, page)| page)
                .context("no page hwsurvey.1")?;
            use std::io::Write;
            std::io::stdout()
                .lock()
                .write_all(&top)
                .context("writing the manual page to standard output")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_help_splits_into_exit_status_examples_and_notes() {
        let text = "Outlier rule: a host stands out when
its figure lies outside.

Exit codes:
  0  fine
  3  input error

Examples:
  hwsurvey fleet a.json b.json --k 4   # four MADs";
        assert_eq!(
            after_help_sections(text),
            vec![
                Section::Note(
                    "Outlier rule: a host stands out when its figure lies outside.".into()
                ),
                Section::ExitStatus(vec!["  0  fine".into(), "  3  input error".into()]),
                Section::Examples(vec![
                    "  hwsurvey fleet a.json b.json --k 4   # four MADs".into()
                ]),
            ]
        );
        // a heading that says more is kept
        let long = "Exit codes (findings only):\n  0  pass";
        assert_eq!(
            after_help_sections(long),
            vec![Section::ExitStatus(vec![
                "Exit codes (findings only):".into(),
                "  0  pass".into()
            ])]
        );
    }
}

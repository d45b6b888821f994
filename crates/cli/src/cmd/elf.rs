//! `hwsurvey elf FILE [--target NAME]`: what an ELF file is, and whether it fits a target.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use hwsurvey_elf::{check, inspect_file, TargetDescriptor};

/// Options of `hwsurvey elf`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Exit status:
  0  the facts were printed; with --target, the file fits it
  1  with --target: the file does not fit it (one line per mismatch)
  2  usage error, a file that cannot be read or is not ELF, or a bad target descriptor

Examples:
  hwsurvey elf target/dist/sparc64-unknown-linux-gnu/hwsurvey --target sparc64")]
pub struct Args {
    /// The ELF file to inspect.
    pub file: PathBuf,
    /// Check the file against a target descriptor: a name (`sparc64` -> ./targets/sparc64.toml,
    /// or the copy built into hwsurvey) or a path to a .toml file. Exits 1 on any mismatch.
    #[arg(long, value_name = "NAME")]
    pub target: Option<String>,
}

/// Runs `hwsurvey elf`: prints the facts; with `--target`, one line per mismatch.
///
/// Exit status: 0 (fits, or no target given), 1 (mismatches), 2 (unreadable or not ELF,
/// bad descriptor; one-line error from `main`).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let target = match &args.target {
        Some(arg) => Some(TargetDescriptor::resolve(
            arg,
            std::path::Path::new("targets"),
        )?),
        None => None,
    };
    let info = inspect_file(&args.file)?;
    outln!("file:         {}", args.file.display());
    outln!("{info}");
    let Some((desc, source)) = target else {
        return Ok(ExitCode::SUCCESS);
    };
    let mismatches = check(&info, &desc);
    outln!("target:       {} ({}, {source})", desc.name, desc.triple);
    if mismatches.is_empty() {
        outln!("check:        ok, the file fits target {}", desc.name);
        return Ok(ExitCode::SUCCESS);
    }
    for m in &mismatches {
        outln!("mismatch:     {m}");
    }
    errln!(
        "hwsurvey: {} does not fit target {}: {}",
        args.file.display(),
        desc.name,
        mismatches
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    );
    std::io::Write::flush(&mut std::io::stdout()).context("writing to stdout")?;
    Ok(ExitCode::from(1))
}

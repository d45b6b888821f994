//! `hwsurvey elf` (being built).

use std::process::ExitCode;

/// Options of `hwsurvey elf`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `hwsurvey elf`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`hwsurvey elf` is not built yet")
}

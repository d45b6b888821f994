//! `hwsurvey probe` (being built).

use std::process::ExitCode;

/// Options of `hwsurvey probe`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `hwsurvey probe`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`hwsurvey probe` is not built yet")
}

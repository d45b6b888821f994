//! `hwsurvey compare` (being built).

use std::process::ExitCode;

/// Options of `hwsurvey compare`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `hwsurvey compare`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`hwsurvey compare` is not built yet")
}

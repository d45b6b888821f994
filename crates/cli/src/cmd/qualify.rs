//! `hwsurvey qualify` (being built).

use std::process::ExitCode;

/// Options of `hwsurvey qualify`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `hwsurvey qualify`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`hwsurvey qualify` is not built yet")
}

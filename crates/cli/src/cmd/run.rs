//! `hwsurvey run` (being built).

use std::process::ExitCode;

/// Options of `hwsurvey run`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `hwsurvey run`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`hwsurvey run` is not built yet")
}

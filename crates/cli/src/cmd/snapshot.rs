//! `hwsurvey snapshot` (being built).

use std::process::ExitCode;

/// Options of `hwsurvey snapshot`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `hwsurvey snapshot`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`hwsurvey snapshot` is not built yet")
}

//! `--root DIR|ARCHIVE` of `probe`, `snapshot`, `qualify` and `run --plan-only`: opened by
//! [`hwsurvey_probe::capture`] (the unpacking, its bounds and its clean-up live there); here
//! only the option's name is put before its errors and the files an archive left out are
//! named on standard error.

use std::path::Path;

use hwsurvey_probe::capture::{self, limits, Capture};

/// The machine a command reads: `--root PATH` opened ([`capture::open`]), or the live
/// machine without one.
///
/// # Errors
/// Those of [`capture::open`], as `--root <error>`.
pub fn open_or_live(path: Option<&Path>) -> anyhow::Result<Capture> {
    match path {
        Some(p) => open(p),
        None => Ok(Capture::live()),
    }
}

/// Opens `--root PATH` ([`capture::open`]); names the files an archive left out for their
/// size in one warning line.
///
/// # Errors
/// Those of [`capture::open`], as `--root <error>`.
pub fn open(path: &Path) -> anyhow::Result<Capture> {
    let capture = capture::open(path).map_err(|e| anyhow::anyhow!("--root {e}"))?;
    let skipped = &capture.skipped;
    if !skipped.is_empty() {
        let names: Vec<String> = skipped
            .iter()
            .take(5)
            .map(|s| {
                format!(
                    "{} ({:.1} MiB)",
                    s.name,
                    s.size_bytes as f64 / (1u64 << 20) as f64
                )
            })
            .collect();
        let more = skipped.len().saturating_sub(names.len());
        errln!(
            "hwsurvey: warning: --root {}: skipped {} file{} larger than {} MiB (a snapshot holds small text files): {}{}",
            capture.shown,
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" },
            limits::FILE_BYTES >> 20,
            names.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        );
    }
    Ok(capture)
}

//! The result file of `hwsurvey run`: claiming the `-o` file or a default name under
//! `reports/` (each held by its lock for the whole run), and what a failed write left there.

use std::path::{Path, PathBuf};

use anyhow::Context;
use hwsurvey_model::files::{check_output, OutputError, OutputLock};
use hwsurvey_model::units::plural;
use hwsurvey_probe::run_env::RunEnv;

/// Claims the `-o` file by the rule every output follows
/// ([`hwsurvey_model::files::check_output`]): never an input (the profile file), never an
/// existing file without `force`, with `force` only a regular file. The claim is a lock
/// ([`OutputLock`]) held for the whole run, so a second run on the same file is refused; the
/// file itself appears only with the engine's first complete write, so a run killed before
/// that leaves no file at all (never an empty one).
pub(crate) fn claim_output(
    path: &Path,
    force: bool,
    profile: &str,
) -> anyhow::Result<(PathBuf, OutputLock)> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the directory {}", dir.display()))?;
    }
    let lock = OutputLock::acquire(path)?;
    let profile_file = Path::new(profile);
    let inputs: Vec<&Path> = if profile_file.is_file() {
        vec![profile_file]
    } else {
        vec![]
    };
    check_output(path, &inputs, force)?;
    Ok((path.to_path_buf(), lock))
}

/// The device and inode of the file at `path` (not following a symlink), `None` when absent.
pub(crate) fn file_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// After a failed write (ENOSPC, EIO): what the output holds now, for the error line. The
/// writes are atomic, so it is this run's last complete write, the file that was there before
/// the run (`previous`, its device and inode: `--force` had not replaced it yet), or nothing.
pub(crate) fn what_was_kept(output: &Path, previous: Option<(u64, u64)>) -> String {
    let before_this_run = previous.is_some() && file_identity(output) == previous;
    match hwsurvey_result::load(output) {
        Ok(f) if before_this_run => format!(
            "{} is still the previous file, of an earlier run started {} ({}, status {}); this run wrote nothing into it",
            output.display(),
            f.started_at,
            plural(f.tests.len() as u64, "finished test"),
            f.status
        ),
        Ok(f) => format!(
            "{} keeps this run's last complete write ({}, status {})",
            output.display(),
            plural(f.tests.len() as u64, "finished test"),
            f.status
        ),
        Err(_) if std::fs::symlink_metadata(output).is_err() => {
            format!(
                "no result file was written ({} does not exist)",
                output.display()
            )
        }
        Err(e) if before_this_run => format!(
            "{} is still the previous file, unchanged by this run ({e})",
            output.display()
        ),
        Err(e) => format!("{} was left as it was before ({e})", output.display()),
    }
}

/// File name stem of the default result file, from the hostname, the binary's arch and the
/// start time in RFC 3339 UTC (`2026-11-29T20:05:30Z`): `<host>-<arch>-<YYYY-MM-DD>-<HHMMSS>`;
/// characters other than ASCII letters, digits and `-` in the hostname become `_`.
pub fn default_stem(host: Option<&str>, arch: &str, started_rfc3339: &str) -> String {
    let host = host
        .map(|h| h.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_"))
        .unwrap_or_else(|| "unknown-host".into());
    let date = started_rfc3339.get(..10).unwrap_or("unknown-date");
    let time: String = started_rfc3339
        .get(11..19)
        .unwrap_or("unknown-time")
        .chars()
        .filter(|c| *c != ':')
        .collect();
    format!("{host}-{arch}-{date}-{time}")
}

/// `reports/<stem>.json` ([`default_stem`]), or `<stem>-2.json`, `-3`, ... when taken or
/// locked by another run, so two concurrent runs never get the same file.
pub(crate) fn default_output(env: &RunEnv) -> anyhow::Result<(PathBuf, OutputLock)> {
    let now = hwsurvey_result::rfc3339(std::time::SystemTime::now());
    let stem = default_stem(env.hostname.known().map(String::as_str), &env.arch, &now);
    let dir = Path::new("reports");
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the directory {}", dir.display()))?;
    for n in 1..=1000 {
        let path = if n == 1 {
            dir.join(format!("{stem}.json"))
        } else {
            dir.join(format!("{stem}-{n}.json"))
        };
        let lock = match OutputLock::acquire(&path) {
            Ok(lock) => lock,
            Err(OutputError::Locked { .. }) => continue,
            Err(e) => return Err(e.into()),
        };
        if std::fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        return Ok((path, lock));
    }
    anyhow::bail!(
        "{}: {stem}.json and 999 numbered variants exist; pass -o FILE",
        dir.display()
    )
}

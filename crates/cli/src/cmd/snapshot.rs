//! `hwsurvey snapshot -o FILE.tar.gz [--root DIR]`: runs the probe and archives the
//! files it read ([`hwsurvey_probe::SysRoot::accessed`]), under one top-level folder
//! `hwsurvey-snapshot/`, so `hwsurvey probe --root <extracted>/hwsurvey-snapshot` gives the
//! same Machine document (apart from `root`).
//!
//! Besides, the archive holds the files that `lscpu --sysroot DIR` and hwloc's
//! `lstopo --input DIR` read ([`hwsurvey_probe::peer_files`]), so the peers' tools run on the
//! extracted snapshot too.
//!
//! How: probe the machine once to learn which files the probes read, and read the peers'
//! files ([`hwsurvey_probe::peer_files::read_peer_files`]); copy those files (and the
//! directories they listed, symlinks as symlinks, and the targets the probe followed, which
//! [`SysRoot`] records too) into a staging folder; write the live-only facts that no file
//! holds (cpuid, the sysconf page size, the binary's ELF header, uname's machine) to
//! `hwsurvey/live.json`
//! there; probe the staging folder (copying any file that second probe reads in addition, up
//! to three rounds). The archive holds the staging folder plus `hwsurvey/machine.json`, the
//! document of that last probe, which is what a probe of the extracted snapshot prints.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use hwsurvey_probe::live::{LiveFacts, LIVE_FACTS_PATH};
use hwsurvey_probe::{probe_machine, SysRoot};

/// Options of `hwsurvey snapshot`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Exit status:
  0  the archive was written (one line on standard error names it)
  2  usage error, an existing -o file without --force, an unreadable --root, or the archive
     could not be written (nothing is left half-written under the -o name)

Examples:
  hwsurvey snapshot -o host.tar.gz      # the files the probe reads
  tar -xzf host.tar.gz                  # elsewhere: unpacks into hwsurvey-snapshot/
  hwsurvey probe --root hwsurvey-snapshot/")]
pub struct Args {
    /// Output archive (.tar.gz). An existing file is refused unless --force.
    #[arg(short = 'o', long = "output", value_name = "FILE.tar.gz")]
    pub output: PathBuf,
    /// Replace the -o file when it exists (a regular file only).
    #[arg(long)]
    pub force: bool,
    /// A captured machine standing for `/`: a copy of / with proc/ and sys/, an extracted
    /// snapshot (or the folder it was extracted into), or a snapshot archive (.tar.gz, .tgz,
    /// .tar.bz2, .tar); default: the live machine.
    #[arg(long, value_name = "DIR|SNAPSHOT.tar.gz")]
    pub root: Option<PathBuf>,
}

/// Top-level folder inside the archive.
pub const TOP: &str = "hwsurvey-snapshot";

/// Where the probe's own document is kept inside the snapshot.
pub const MACHINE_JSON: &str = "/hwsurvey/machine.json";

/// Copies one accessed kernel path from `source` into the staging folder.
fn stage(source: &SysRoot, staging: &Path, path: &str) -> anyhow::Result<()> {
    // Resolve the parents inside the source root (never escaping it), not the last link.
    let host = match source.resolve(path, false) {
        Ok(resolved) => source.host_path(&resolved),
        Err(_) => return Ok(()),
    };
    let dest = staging.join(path.trim_start_matches('/'));
    if dest.symlink_metadata().is_ok() {
        return Ok(());
    }
    let meta = match host.symlink_metadata() {
        Ok(m) => m,
        Err(_) => return Ok(()),
    };
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("staging {path}"))?;
    }
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&host)?;
        let is_dir = source
            .resolve(path, true)
            .map(|r| source.host_path(&r).is_dir())
            .unwrap_or(false);
        if is_dir {
            match dest.parent().filter(|p| stays_inside(staging, p, &target)) {
                // Keep the link (probes read_link it) and make its target a real folder.
                Some(parent) => std::fs::create_dir_all(parent.join(&target))?,
                // A folder link out of the staging folder (absolute, or `..` past its top:
                // a crafted --root) would have the files beneath it written outside: it is
                // staged as a real folder instead.
                None => {
                    std::fs::create_dir_all(&dest)?;
                    return Ok(());
                }
            }
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(&target, &dest)?;
        return Ok(());
    }
    if host.is_dir() {
        std::fs::create_dir_all(&dest)?;
        // A listed folder keeps its sub-folders, empty where nothing in them was read: an
        // offline CPU's `cpu24/` without a topology folder is a fact the probe counts.
        if let Ok(entries) = std::fs::read_dir(&host) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    std::fs::create_dir_all(dest.join(e.file_name()))?;
                }
            }
        }
        return Ok(());
    }
    // Read again through the source root; a file that vanished since is skipped.
    if let Ok(bytes) = source.read_bytes(path) {
        std::fs::write(&dest, bytes)?;
    }
    Ok(())
}

/// Whether symlink `target`, read in the existing folder `parent`, names a path inside
/// `staging`: relative, and from `parent`'s real place (links resolved) its `..` components
/// never climb above `staging` (the folders it passes through are made as real folders).
fn stays_inside(staging: &Path, parent: &Path, target: &Path) -> bool {
    let (Ok(staging), Ok(parent)) = (staging.canonicalize(), parent.canonicalize()) else {
        return false;
    };
    let Ok(rel) = parent.strip_prefix(&staging) else {
        return false;
    };
    let mut depth: usize = rel.components().count();
    for c in target.components() {
        match c {
            std::path::Component::Normal(_) => depth += 1,
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            std::path::Component::RootDir | std::path::Component::Prefix(_) => return false,
        }
    }
    true
}

fn append_tree(
    tar: &mut tar::Builder<impl Write>,
    staging: &Path,
    dir: &Path,
) -> anyhow::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        let rel = p.strip_prefix(staging)?;
        let name = format!("{TOP}/{}", rel.display());
        let meta = p.symlink_metadata()?;
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        if meta.file_type().is_symlink() {
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_mode(0o777);
            tar.append_link(&mut h, &name, std::fs::read_link(&p)?)?;
        } else if meta.is_dir() {
            h.set_entry_type(tar::EntryType::Directory);
            h.set_mode(0o755);
            tar.append_data(&mut h, format!("{name}/"), std::io::empty())?;
            append_tree(tar, staging, &p)?;
        } else {
            let bytes = std::fs::read(&p)?;
            h.set_entry_type(tar::EntryType::Regular);
            h.set_mode(0o444);
            h.set_size(bytes.len() as u64);
            tar.append_data(&mut h, &name, bytes.as_slice())?;
        }
    }
    Ok(())
}

/// Runs `hwsurvey snapshot`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // the one output rule, before the probe: never an existing file without --force
    hwsurvey_model::files::check_output(&args.output, &[], args.force)?;
    let capture = super::capture::open_or_live(args.root.as_deref())?;
    let source = &capture.root;
    let first = probe_machine(source);
    // what lscpu --sysroot and lstopo --input read besides: recorded, so staged below
    let peers = hwsurvey_probe::peer_files::read_peer_files(source);
    if peers.truncated {
        errln!(
            "hwsurvey: warning: the snapshot holds the first {} of the files lscpu and hwloc read (the bound); their tools may not run on it",
            hwsurvey_probe::peer_files::MAX_PEER_FILES
        );
    }
    // removed on every exit path, a signal's included
    let tmp = hwsurvey_probe::capture::TempFolder::new()
        .context("cannot create a temporary folder for staging")?;
    let staging = tmp.path();
    for path in source.accessed() {
        stage(source, staging, &path)?;
    }
    let facts_path = staging.join(LIVE_FACTS_PATH.trim_start_matches('/'));
    if let Some(parent) = facts_path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(
        &facts_path,
        hwsurvey_model::text::json::to_vec_pretty(&LiveFacts::from_machine(&first, source))?,
    )?;
    let mut machine = first;
    for _ in 0..3 {
        let staged = SysRoot::new(staging);
        machine = probe_machine(&staged);
        let missing: Vec<String> = staged
            .accessed()
            .into_iter()
            .filter(|p| !staged.exists(p) && source.exists(p))
            .collect();
        if missing.is_empty() {
            break;
        }
        for p in &missing {
            stage(source, staging, p)?;
        }
    }
    let machine_json = staging.join(MACHINE_JSON.trim_start_matches('/'));
    std::fs::write(
        &machine_json,
        hwsurvey_model::text::json::to_vec_pretty(&machine.document())?,
    )?;

    // a temporary file beside the output, published complete (or removed on an error)
    let file = hwsurvey_model::files::AtomicFile::create(&args.output)?;
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Directory);
    h.set_mode(0o755);
    h.set_size(0);
    tar.append_data(&mut h, format!("{TOP}/"), std::io::empty())?;
    append_tree(&mut tar, staging, staging)?;
    let gz = tar.into_inner()?;
    let mut file = gz.finish()?;
    file.flush()?;
    file.commit(args.force)?;
    errln!(
        "hwsurvey: wrote {} ({} paths read; probe with --root <extracted>/{TOP})",
        args.output.display(),
        source.accessed().len()
    );
    Ok(ExitCode::SUCCESS)
}

//! `hwsurvey snapshot -o FILE.tar.gz [--root DIR]`: runs the probe and archives exactly the
//! files it read ([`hwsurvey_probe::SysRoot::accessed`]), under one top-level folder
//! `hwsurvey-snapshot/`, so `hwsurvey probe --root <extracted>/hwsurvey-snapshot` gives the
//! same Machine document (apart from `root`). Live-only facts that no file holds (cpuid, the
//! sysconf page size) are written to `hwsurvey/live.json` inside the snapshot, where the
//! probes look for them when reading a capture.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use hwsurvey_probe::{probe_machine, SysRoot};

/// Options of `hwsurvey snapshot`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Output archive (.tar.gz).
    #[arg(short = 'o', long = "output", value_name = "FILE.tar.gz")]
    pub output: PathBuf,
    /// Directory standing for `/` (re-snapshot a capture); default: the live machine.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

/// Top-level folder inside the archive.
pub const TOP: &str = "hwsurvey-snapshot";

/// Runs `hwsurvey snapshot`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = match &args.root {
        Some(dir) => SysRoot::new(dir),
        None => SysRoot::live(),
    };
    let machine = probe_machine(&root);
    let file = std::fs::File::create(&args.output)
        .with_context(|| format!("creating {}", args.output.display()))?;
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mut dir_header = tar::Header::new_gnu();
    dir_header.set_entry_type(tar::EntryType::Directory);
    dir_header.set_mode(0o755);
    dir_header.set_size(0);
    tar.append_data(&mut dir_header.clone(), format!("{TOP}/"), std::io::empty())?;
    let mut files = 0usize;
    for path in root.accessed() {
        let host = root.host_path(&path);
        let name = format!("{TOP}/{}", path.trim_start_matches('/'));
        if host.is_dir() {
            tar.append_data(
                &mut dir_header.clone(),
                format!("{name}/"),
                std::io::empty(),
            )?;
            continue;
        }
        // Read again through the same root; a file that vanished since is skipped.
        let Ok(bytes) = root.read_bytes(&path) else {
            continue;
        };
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_mode(0o444);
        h.set_size(bytes.len() as u64);
        tar.append_data(&mut h, &name, bytes.as_slice())?;
        files += 1;
    }
    let live = serde_json::to_vec_pretty(&hwsurvey_probe::cpu::LiveFacts::from_machine(&machine))?;
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Regular);
    h.set_mode(0o444);
    h.set_size(live.len() as u64);
    tar.append_data(&mut h, format!("{TOP}/hwsurvey/live.json"), live.as_slice())?;
    let gz = tar.into_inner()?;
    gz.finish()?.flush()?;
    eprintln!(
        "hwsurvey: wrote {} ({files} files; probe with --root <extracted>/{TOP})",
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}

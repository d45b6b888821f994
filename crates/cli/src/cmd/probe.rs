//! `hwsurvey probe [--root DIR] [--json]`: what the machine (or a captured snapshot) is.
//!
//! Without `--json`: a readable summary (CPUs as lscpu, NUMA as `numactl -H`, pages, then
//! memory / I/O / OS), ending with what could not be read and why. With `--json`: the
//! [`hwsurvey_probe::Machine`] document.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use hwsurvey_probe::{io, memory, os, probe_machine, summary, Machine, SysRoot};

/// Options of `hwsurvey probe`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  hwsurvey probe                        # lscpu + numactl -H + DIMMs, in one
  hwsurvey probe --json > machine.json  # the Machine document
  hwsurvey probe --root extracted-snapshot/")]
pub struct Args {
    /// Directory standing for `/` (an extracted snapshot); default: the live machine.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print the Machine JSON document instead of the summary.
    #[arg(long)]
    pub json: bool,
}

/// Runs `hwsurvey probe`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = match &args.root {
        Some(dir) => open_root(dir)?,
        None => SysRoot::live(),
    };
    let machine = probe_machine(&root);
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&machine)?);
    } else {
        out!("{}", render_summary(&machine));
    }
    Ok(ExitCode::SUCCESS)
}

/// The [`SysRoot`] of `--root DIR`, or an error when `DIR` is not a Linux root or an
/// extracted snapshot: a file (e.g. the snapshot archive itself: extract it first), or a folder
/// with neither `/proc/cpuinfo` nor `/sys/devices/system/cpu` (symlinks resolved inside it).
pub fn open_root(dir: &Path) -> anyhow::Result<SysRoot> {
    if dir.is_file() {
        let name = dir.to_string_lossy();
        if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
            anyhow::bail!(
                "--root {}: is a file, not a folder; extract the archive first \
                 (tar xzf {} -C OUT) and pass OUT/hwsurvey-snapshot",
                dir.display(),
                dir.display()
            );
        }
        anyhow::bail!(
            "--root {}: is a file, not a folder (a --root is an extracted snapshot or a \
             copy of / with proc/ and sys/)",
            dir.display()
        );
    }
    anyhow::ensure!(dir.is_dir(), "--root {}: not a directory", dir.display());
    let root = SysRoot::new(dir);
    anyhow::ensure!(
        root.exists("/proc/cpuinfo") || root.exists("/sys/devices/system/cpu"),
        "{} does not look like a Linux root or snapshot (no /proc/cpuinfo, no /sys/devices/system/cpu)",
        dir.display()
    );
    Ok(root)
}

/// The whole human summary: CPU, NUMA, pages, memory, I/O, OS, then what could not be read.
pub fn render_summary(machine: &Machine) -> String {
    let mut out = summary::topology_summary(machine);
    for section in [
        memory::summary(&machine.memory),
        io::summary(&machine.io),
        os::summary(&machine.os),
    ] {
        out.push('\n');
        out.push_str(&section);
        if !section.ends_with('\n') {
            out.push('\n');
        }
    }
    out.push('\n');
    out.push_str(&summary::unknowns_summary(machine));
    out
}

//! `hwsurvey probe [--root DIR] [--dmidecode FILE] [--json]`: what the machine (or a captured
//! snapshot) is.
//!
//! Without `--json`: a readable summary (CPUs as lscpu, NUMA as `numactl -H`, pages, then
//! memory / I/O / OS), ending with what could not be read and why. With `--json`: the
//! [`hwsurvey_probe::Machine`] document. `--dmidecode FILE` takes the memory population
//! (SMBIOS Type 16/17) from saved `dmidecode` text instead of `/sys/firmware/dmi`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use hwsurvey_probe::{io, memory, os, probe_machine, summary, Machine, SysRoot};

/// Options of `hwsurvey probe`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  hwsurvey probe                        # lscpu + numactl -H + DIMMs, in one
  hwsurvey probe --json > machine.json  # the Machine document
  hwsurvey probe --root extracted-snapshot/
  hwsurvey probe --dmidecode dmidecode.txt  # DIMMs from saved `dmidecode -t memory` output")]
pub struct Args {
    /// Directory standing for `/` (an extracted snapshot); default: the live machine.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Saved `dmidecode` (or `dmidecode -t memory`) text: its Memory Device records give the
    /// DIMM population (slots, sizes, speeds, channels) in place of /sys/firmware/dmi, which
    /// needs root and is absent on many machines. Meminfo and EDAC are still probed.
    #[arg(long, value_name = "FILE")]
    pub dmidecode: Option<PathBuf>,
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
    // read before probing: a bad file is an error before anything else is done
    let dimms = args.dmidecode.as_deref().map(read_dmidecode).transpose()?;
    let mut machine = probe_machine(&root);
    if let Some(smbios) = dimms {
        machine.memory.set_smbios(smbios);
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&machine)?);
    } else {
        out!("{}", render_summary(&machine));
    }
    Ok(ExitCode::SUCCESS)
}

/// The SMBIOS memory records of `--dmidecode FILE` (saved `dmidecode` text), to replace the
/// machine's with [`memory::Memory::set_smbios`]; their source names the file, and so does the
/// memory section of the summary.
///
/// # Errors
/// One line naming `file` and what is wrong with it: unreadable, not a regular file, binary,
/// empty, or without `DMI type 17` Memory Device records.
pub fn read_dmidecode(file: &Path) -> anyhow::Result<memory::SmbiosMemory> {
    memory::dmidecode::read_dmidecode_file(file).map_err(|e| anyhow::anyhow!("--dmidecode {e}"))
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

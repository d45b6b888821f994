//! `hwsurvey probe [--root DIR] [--dmidecode FILE] [--json | --cpus]`: what the machine (or a captured
//! snapshot) is.
//!
//! Without `--json`: a readable summary (CPUs as lscpu, NUMA as `numactl -H`, pages, then
//! memory / I/O / OS), ending with what could not be read and why. With `--json`: the
//! [`hwsurvey_probe::Machine`] document ([`hwsurvey_probe::Machine::document`]: plain values,
//! `null` for unknown, the reasons in one `"unknown"` map keyed by JSON Pointer). `--dmidecode FILE` takes the memory population
//! (SMBIOS Type 16/17) from saved `dmidecode` text instead of `/sys/firmware/dmi`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use hwsurvey_probe::{memory, probe_machine, Machine};

/// Options of `hwsurvey probe`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Exit status:
  0    the machine was probed and printed (facts that could not be read are shown as unknown,
       with the reason)
  2    usage error, or the input could not be used: a --root that is not a
       readable directory or snapshot archive, a --dmidecode file that cannot be
       read, holds no Memory Device record or was saved on another machine (its
       system, DMI UUID or serial, sockets or installed memory do not fit this
       one; --dmidecode-other-machine reads it anyway), or standard output that
       could not be written
  141  the reader of standard output went away (`hwsurvey probe | head`)

Examples:
  hwsurvey probe                        # lscpu + numactl -H + DIMMs, in one
  hwsurvey probe --json > machine.json  # the Machine document
  hwsurvey probe --cpus                 # one line per CPU, as lscpu -e
  hwsurvey probe --root hwsurvey-snapshot/
  hwsurvey probe --dmidecode dmidecode.txt  # DIMMs from saved `dmidecode -t memory` output")]
pub struct Args {
    /// A captured machine standing for `/`: a copy of / with proc/ and sys/, an extracted
    /// snapshot (or the folder it was extracted into), or a snapshot archive (.tar.gz, .tgz,
    /// .tar.bz2, .tar); default: the live machine.
    #[arg(long, value_name = "DIR|SNAPSHOT.tar.gz")]
    pub root: Option<PathBuf>,
    /// Saved `dmidecode` (or `dmidecode -t memory`) text: its Memory Device records give the
    /// DIMM population (slots, sizes, speeds, channels) in place of /sys/firmware/dmi, which
    /// needs root and is absent on many machines. Meminfo and EDAC are still probed.
    #[arg(long, value_name = "FILE")]
    pub dmidecode: Option<PathBuf>,
    /// Read the --dmidecode text even though it was saved on another machine (its system,
    /// DMI UUID or serial, sockets or installed memory do not fit this one): its DIMMs are
    /// then shown as that machine's, under a note naming each difference.
    #[arg(long, requires = "dmidecode")]
    pub dmidecode_other_machine: bool,
    /// Print the Machine JSON document instead of the summary.
    #[arg(long, conflicts_with = "cpus")]
    pub json: bool,
    /// Print one line per CPU instead of the summary, as `lscpu -e`: CPU, NUMA node, logical
    /// socket, die, cluster and core numbers, the L1d:L1i:L2:L3 instance ids, online, max and
    /// min MHz.
    #[arg(long)]
    pub cpus: bool,
}

/// Runs `hwsurvey probe`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let capture = super::capture::open_or_live(args.root.as_deref())?;
    let root = &capture.root;
    // read before probing: a bad file is an error before anything else is done
    let dimms = args.dmidecode.as_deref().map(read_dmidecode).transpose()?;
    let mut machine = probe_machine(root);
    machine.root = capture.shown.clone();
    let other = match dimms {
        Some(file) => merge_dmidecode(file, &mut machine, args.dmidecode_other_machine)?,
        None => None,
    };
    if let Some(note) = other.as_ref().filter(|_| args.json || args.cpus) {
        errln!("hwsurvey: note: {note}");
    }
    if args.json {
        outln!(
            "{}",
            hwsurvey_model::text::json::to_string_pretty(&machine.document())?
        );
    } else if args.cpus {
        out!("{}", hwsurvey_probe::cpu_table::cpu_table(&machine));
    } else {
        // the other machine's DIMMs are said to be so before anything is shown beside them
        if let Some(note) = &other {
            outln!("note: {note}\n");
        }
        out!("{}", hwsurvey_probe::render_summary(&machine));
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads `--dmidecode FILE` ([`memory::dmidecode::DmidecodeFile::read`]), before anything
/// is probed: a bad file is an error before anything else is done.
///
/// # Errors
/// One line naming the file: unreadable, not a regular file, binary, empty, or without
/// `DMI type 17` Memory Device records.
pub fn read_dmidecode(file: &Path) -> anyhow::Result<memory::dmidecode::DmidecodeFile> {
    memory::dmidecode::DmidecodeFile::read(file).map_err(anyhow::Error::msg)
}

/// Holds the text read by [`read_dmidecode`] against `machine` and puts its records in place
/// ([`memory::dmidecode::DmidecodeFile`]); gives the note that stands before what is shown
/// when the text is another machine's (`other_machine`), and says on stderr when nothing
/// could be compared. Probe and qualify call this one function.
///
/// # Errors
/// The text does not fit the machine (system identity, sockets, installed memory).
pub fn merge_dmidecode(
    file: memory::dmidecode::DmidecodeFile,
    machine: &mut Machine,
    other_machine: bool,
) -> anyhow::Result<Option<String>> {
    let check = file
        .check(machine, other_machine)
        .map_err(anyhow::Error::msg)?;
    if let Some(note) = &check.unchecked {
        errln!("hwsurvey: note: {note}");
    }
    file.apply(machine);
    Ok(check.other_machine)
}

//! Where a result file's figures come from: the platform the run measured (a machine, a
//! virtual machine, an emulator) and which run it is. Every reader asks these questions through
//! the functions here (compare's columns and baseline, qualify's verdict, fleet's verdict), so
//! that one file gets one answer, and names a platform in the words of [`platform_words`].
//!
//! Sources, all in the file itself: `machine.os.virtualization` (the probe's
//! `hwsurvey_machine::virt::Virtualization`: `platform`, `hypervisor`, `evidence`),
//! `machine.os.binary_vs_kernel.native` (whether the binary ran under qemu-user), `started_at`,
//! `environment.hostname` and `machine.os.host_id` (the machine's hashed DMI UUID, serial and
//! machine-id, `hwsurvey_machine::os::host_id`).

use hwsurvey_machine::virt::{Platform, Virtualization};

use crate::ResultFile;

/// The platform a run measured, from the probe's verdict ([`Virtualization::platform`]). A
/// result file written before the probe told KVM from TCG on arm64 says
/// [`Platform::VirtualMachine`] with hypervisor `QEMU virt board` and no generic timer
/// evidence (`CNTFRQ_EL0 ...`): that board does not exclude emulation, and reads
/// [`Platform::EmulationNotExcluded`].
pub fn platform(virt: &Virtualization) -> Platform {
    let board = virt.hypervisor.as_deref() == Some("QEMU virt board");
    let timer = virt
        .evidence
        .iter()
        .any(|e| e.source.starts_with("CNTFRQ_EL0"));
    if virt.platform == Platform::VirtualMachine && board && !timer {
        return Platform::EmulationNotExcluded;
    }
    virt.platform
}

/// Where a platform's words stand, which decides how much they say ([`platform_words`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wording {
    /// A cell of the report's machine table: emulation in capitals, with what it does to
    /// the figures (`EMULATED: full-system emulator, figures measure it`).
    Cell,
    /// The one-line machine of the report's top table: the platform alone (`emulated`,
    /// `native`).
    Line,
    /// The report's closing sentence per machine: the platform and what its figures are
    /// (`emulated: figures measure qemu, not the hardware`).
    Sentence,
    /// A verdict's reason (qualify's and fleet's [`emulation`], [`virtual_machine`]):
    /// `full-system emulation: figures measure the emulator`.
    Verdict,
}

/// The words for platform `p` where they stand (`at`): every reader's words for a platform,
/// in this one table (the probe's own are [`Platform::words`]). The hypervisor, where known,
/// is the caller's to add.
pub fn platform_words(p: Platform, at: Wording) -> &'static str {
    use Platform::*;
    use Wording::*;
    match (p, at) {
        (NoHypervisorSeen, Cell | Verdict) => "native (no hypervisor seen)",
        (NoHypervisorSeen, Line | Sentence) => "native",
        (VirtualMachine, Cell | Line | Verdict) => "virtual machine",
        (VirtualMachine, Sentence) => "virtual machine: figures are its share of the host",
        (Emulated, Cell) => "EMULATED: full-system emulator, figures measure it",
        (Emulated, Line) => "emulated",
        (Emulated, Sentence) => "emulated: figures measure qemu, not the hardware",
        (Emulated, Verdict) => "full-system emulation: figures measure the emulator",
        (EmulationNotExcluded, Cell) => {
            "virtual machine, EMULATION NOT EXCLUDED: figures may measure the emulator"
        }
        (EmulationNotExcluded, Line) => "virtual machine, emulation not excluded",
        (EmulationNotExcluded, Sentence) => {
            "virtual machine, emulation not excluded: figures may measure qemu, not the hardware"
        }
        (EmulationNotExcluded, Verdict) => {
            "virtual machine, emulation not excluded: figures may measure the emulator"
        }
        (Partition, _) => "logical partition",
    }
}

/// Why a platform (the probe's `os.virtualization`) may be an emulator, in one line:
/// `full-system emulation: figures measure the emulator`, or for a virtual machine whose probe
/// could not exclude emulation `virtual machine, emulation not excluded: figures may measure
/// the emulator`; `None` otherwise.
pub fn platform_emulation(virt: &Virtualization) -> Option<&'static str> {
    match platform(virt) {
        p @ (Platform::Emulated | Platform::EmulationNotExcluded) => {
            Some(platform_words(p, Wording::Verdict))
        }
        Platform::NoHypervisorSeen | Platform::VirtualMachine | Platform::Partition => None,
    }
}

/// A platform (the probe's `os.virtualization`) that is a virtual machine or a logical
/// partition, in words with its hypervisor: `virtual machine (KVM)`, `logical partition
/// (pHyp)`; `None` for no hypervisor seen and for emulation ([`platform_emulation`]).
pub fn platform_virtual_machine(virt: &Virtualization) -> Option<String> {
    let words = match platform(virt) {
        p @ (Platform::VirtualMachine | Platform::Partition) => platform_words(p, Wording::Verdict),
        Platform::NoHypervisorSeen | Platform::Emulated | Platform::EmulationNotExcluded => {
            return None
        }
    };
    Some(match &virt.hypervisor {
        Some(h) => format!("{words} ({})", hwsurvey_model::text::one_line(h, 64)),
        None => words.to_string(),
    })
}

/// Why the figures of a run may measure an emulator rather than a machine, one line each: a
/// full-system emulator or a virtual machine whose probe could not exclude emulation
/// ([`platform_emulation`]), or a binary under qemu-user (`os.binary_vs_kernel.native`
/// false). Empty for a run on a machine or in a virtual machine that is not emulated, and
/// where the probe's platform is unknown.
pub fn emulation(f: &ResultFile) -> Vec<String> {
    let os = &f.machine.os;
    let mut why: Vec<String> = os
        .virtualization
        .known()
        .and_then(platform_emulation)
        .map(str::to_string)
        .into_iter()
        .collect();
    if os.binary_vs_kernel.known().is_some_and(|b| !b.native) {
        why.push("binary emulated (qemu-user): figures measure the emulator".into());
    }
    why
}

/// What the run's machine is, for a verdict that must name it ([`platform_virtual_machine`]):
/// `Some("virtual machine (KVM)")`; `None` for a machine with no hypervisor seen, an emulated
/// one ([`emulation`] says that), or a file without the probe's platform.
pub fn virtual_machine(f: &ResultFile) -> Option<String> {
    platform_virtual_machine(f.machine.os.virtualization.known()?)
}

/// The identity of one run: where and when it started. Two files with equal ids are one run
/// (a file and its copy, edited or not), never two measurements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunId {
    /// `started_at` (UTC, RFC 3339, to the second).
    pub started_at: String,
    /// `environment.hostname`, when known.
    pub hostname: Option<String>,
    /// `machine.os.host_id` (hashed DMI UUID, serial, machine-id); `None` when the file has
    /// none (written before the probe read it, or none of the three readable).
    pub host_id: Option<hwsurvey_machine::os::host_id::HostId>,
}

impl RunId {
    /// The id of `f`.
    pub fn of(f: &ResultFile) -> RunId {
        RunId {
            started_at: f.started_at.clone(),
            hostname: f.environment.hostname.known().cloned(),
            host_id: Some(&f.machine.os.host_id)
                .filter(|h| !h.is_empty())
                .cloned(),
        }
    }

    /// `started 2026-12-01T10:00:00Z on node7`.
    pub fn words(&self) -> String {
        match &self.hostname {
            Some(h) => format!(
                "started {} on {}",
                self.started_at,
                hwsurvey_model::text::one_line(h, 64)
            ),
            None => format!("started {}", self.started_at),
        }
    }
}

/// Groups of positions in `files` that hold one run ([`RunId`]), each group ascending and of
/// two or more, in order of its first member; empty when every file is a run of its own.
pub fn same_runs(files: &[&ResultFile]) -> Vec<Vec<usize>> {
    let ids: Vec<RunId> = files.iter().map(|f| RunId::of(f)).collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        if groups.iter().any(|g| g.contains(&i)) {
            continue;
        }
        let group: Vec<usize> = (i..ids.len()).filter(|&j| ids[j] == *id).collect();
        if group.len() > 1 {
            groups.push(group);
        }
    }
    groups
}

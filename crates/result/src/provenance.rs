//! Where a result file's figures come from: the platform the run measured (a machine, a
//! virtual machine, an emulator) and which run it is. Every reader asks these questions through
//! the functions here (compare's columns and baseline, qualify's verdict, fleet's verdict), so
//! that one file gets one answer.
//!
//! Sources, all in the file itself: `machine.os.virtualization` (the probe's
//! `hwsurvey_machine::virt::Virtualization`: `platform`, `hypervisor`, `evidence`),
//! `machine.os.binary_vs_kernel.native` (whether the binary ran under qemu-user), `started_at`,
//! `environment.hostname` and `machine.os.host_id` (the machine's hashed DMI UUID, serial and
//! machine-id, `hwsurvey_machine::os::host_id`).

use serde_json::Value;

use crate::ResultFile;

/// A probed value of a machine document in either form: the tagged one of schema 1
/// (`{"known": v}` / `{"unknown": why}`) or the plain one of schema 2 (`v`, `null` when
/// unknown). `None` when absent or unknown.
fn known(v: Option<&Value>) -> Option<&Value> {
    let v = v?;
    match (v.get("known"), v.get("unknown")) {
        (Some(k), _) => Some(k),
        (None, Some(_)) => None,
        (None, None) if v.is_null() => None,
        (None, None) => Some(v),
    }
}

/// The probe's platform (`os.virtualization.platform`: `no_hypervisor_seen`, `virtual_machine`,
/// `emulated`, `emulation_not_excluded`, `partition`). A result file written before the probe
/// told KVM from TCG on arm64 says `virtual_machine` with hypervisor `QEMU virt board` and no
/// generic timer evidence: that board does not exclude emulation, and reads
/// `emulation_not_excluded`.
pub fn platform_key(virt: &Value) -> Option<&str> {
    let p = virt.get("platform").and_then(Value::as_str)?;
    let board = virt.get("hypervisor").and_then(Value::as_str) == Some("QEMU virt board");
    let timer = virt
        .get("evidence")
        .and_then(Value::as_array)
        .is_some_and(|e| {
            e.iter().any(|e| {
                e.get("source")
                    .and_then(Value::as_str)
                    .is_some_and(|s| s.starts_with("CNTFRQ_EL0"))
            })
        });
    if p == "virtual_machine" && board && !timer {
        return Some("emulation_not_excluded");
    }
    Some(p)
}

/// `os.virtualization` of the file's machine document, when the probe recorded it.
fn virtualization(f: &ResultFile) -> Option<&Value> {
    known(f.machine.pointer("/os/virtualization"))
}

/// Why a platform (an `os.virtualization` document) may be an emulator, in one line:
/// `full-system emulation: figures measure the emulator`, or for a virtual machine whose probe
/// could not exclude emulation `virtual machine, emulation not excluded: figures may measure
/// the emulator`; `None` otherwise.
pub fn platform_emulation(virt: &Value) -> Option<&'static str> {
    match platform_key(virt)? {
        "emulated" => Some("full-system emulation: figures measure the emulator"),
        "emulation_not_excluded" => {
            Some("virtual machine, emulation not excluded: figures may measure the emulator")
        }
        _ => None,
    }
}

/// A platform (an `os.virtualization` document) that is a virtual machine or a logical
/// partition, in words with its hypervisor: `virtual machine (KVM)`, `logical partition
/// (pHyp)`; `None` for no hypervisor seen and for emulation ([`platform_emulation`]).
pub fn platform_virtual_machine(virt: &Value) -> Option<String> {
    let words = match platform_key(virt)? {
        "virtual_machine" => "virtual machine",
        "partition" => "logical partition",
        _ => return None,
    };
    Some(match virt.get("hypervisor").and_then(Value::as_str) {
        Some(h) => format!("{words} ({})", hwsurvey_model::text::one_line(h, 64)),
        None => words.to_string(),
    })
}

/// Why the figures of a run may measure an emulator rather than a machine, one line each: a
/// full-system emulator or a virtual machine whose probe could not exclude emulation
/// ([`platform_emulation`]), or a binary under qemu-user. Empty for a run on a machine or in a
/// virtual machine that is not emulated.
pub fn emulation(f: &ResultFile) -> Vec<String> {
    let mut why: Vec<String> = virtualization(f)
        .and_then(platform_emulation)
        .map(str::to_string)
        .into_iter()
        .collect();
    let bin = known(f.machine.pointer("/os/binary_vs_kernel"));
    if bin.and_then(|b| b.get("native")).and_then(Value::as_bool) == Some(false) {
        why.push("binary emulated (qemu-user): figures measure the emulator".into());
    }
    why
}

/// What the run's machine is, for a verdict that must name it ([`platform_virtual_machine`]):
/// `Some("virtual machine (KVM)")`; `None` for a machine with no hypervisor seen, an emulated
/// one ([`emulation`] says that), or a file without the probe's platform.
pub fn virtual_machine(f: &ResultFile) -> Option<String> {
    platform_virtual_machine(virtualization(f)?)
}

/// The identity of one run: where and when it started. Two files with equal ids are one run
/// (a file and its copy, edited or not), never two measurements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunId {
    /// `started_at` (UTC, RFC 3339, to the second).
    pub started_at: String,
    /// `environment.hostname`, when known.
    pub hostname: Option<String>,
    /// `machine.os.host_id` (hashed DMI UUID, serial, machine-id), compact JSON; `None` when
    /// the file has none.
    pub host_id: Option<String>,
}

impl RunId {
    /// The id of `f`.
    pub fn of(f: &ResultFile) -> RunId {
        RunId {
            started_at: f.started_at.clone(),
            hostname: f.environment.hostname.known().cloned(),
            host_id: f
                .machine
                .pointer("/os/host_id")
                .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
                .map(Value::to_string),
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

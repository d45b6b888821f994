//! Probes: what a Linux machine is, read from /proc and /sys under a root.
//!
//! The readers here go through a [`SysRoot`], so every probe runs the same on the live machine
//! and on a captured snapshot; [`probe_machine`] gathers everything into one [`Machine`]
//! document. The document's types (schema [`MACHINE_SCHEMA_VERSION`], units in field names)
//! and the pure parsers over kernel text are `hwsurvey_machine`, which does no I/O; each module
//! here re-exports its part of it under the same path (`hwsurvey_probe::pages::Pages` is
//! `hwsurvey_machine::pages::Pages`), as procfs re-exports procfs-core.
//!
//! Module ownership: `cpu`, `numa`, `pages` (topology side); `memory`, `io`, `os` (population,
//! devices and system side). Each module has `pub fn probe(root: &SysRoot) -> <Type>` that never
//! fails as a whole: what could not be read is recorded inside, with the reason.

pub mod block;
pub mod capture;
pub mod cgroup;
pub mod clocksource;
pub mod cpu;
pub mod energy;
pub mod firmware;
pub mod freq;
pub mod io;
pub mod kmsg;
pub mod limits;
pub mod live;
pub mod memory;
pub mod mounts;
pub mod numa;
pub mod os;
pub mod pages;
pub mod pci_ids;
pub mod peer_files;
pub mod process;
pub mod run_env;
pub mod smaps;
pub mod sysroot;
pub mod thp;
pub mod virt;
pub mod watch;

pub use sysroot::{ProbeError, SysRoot};

pub use hwsurvey_machine::{
    binary, block_use, cpu_table, isa, pci, pci_text, pcie, probe_text, Machine,
    MACHINE_SCHEMA_VERSION,
};

/// Probes everything under `root`. Never fails as a whole; unknowns carry their reasons.
pub fn probe_machine(root: &SysRoot) -> Machine {
    let cpu = cpu::probe(root);
    Machine {
        schema_version: MACHINE_SCHEMA_VERSION,
        root: root.root().display().to_string(),
        firmware: firmware::probe(root, cpu.arch),
        cpu,
        numa: numa::probe(root),
        pages: pages::probe(root),
        memory: memory::probe(root),
        io: io::probe(root),
        os: os::probe(root),
    }
}

/// The text `hwsurvey probe` prints of `machine`: the CPU topology, then memory, I/O,
/// firmware and OS, each a section ending in a newline, then what could not be read and why
/// ([`probe_text::unknowns_summary`]). The CLI and the tests that hold its text call this one
/// function.
pub fn render_summary(machine: &Machine) -> String {
    let mut out = probe_text::topology_summary(machine);
    for section in [
        memory::summary(&machine.memory),
        io::summary(&machine.io),
        firmware::summary(machine),
        os::summary(&machine.os),
    ] {
        out.push('\n');
        out.push_str(&section);
        if !section.ends_with('\n') {
            out.push('\n');
        }
    }
    out.push('\n');
    out.push_str(&probe_text::unknowns_summary(machine));
    out
}

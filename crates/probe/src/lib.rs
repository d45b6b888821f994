//! Probes: what a Linux machine is.
//!
//! Pure parsers (text in, typed value out) sit beside thin readers that go through a
//! [`SysRoot`], so every probe runs the same on the live machine and on a captured snapshot.
//! [`probe_machine`] gathers everything into one [`Machine`] document (schema
//! [`MACHINE_SCHEMA_VERSION`]), serialized with units in field names.
//!
//! Module ownership: `cpu`, `numa`, `pages` (topology side); `memory`, `io`, `os` (population,
//! devices and system side). Each module has `pub fn probe(root: &SysRoot) -> <Type>` that never
//! fails as a whole: what could not be read is recorded inside, with the reason.

pub mod cpu;
pub mod io;
pub mod limits;
pub mod memory;
pub mod numa;
pub mod os;
pub mod pages;
pub mod pcie;
pub mod run_env;
pub mod summary;
pub mod sysroot;
pub mod virt;

use serde::{Deserialize, Serialize};

pub use sysroot::{ProbeError, SysRoot};

/// Version of the [`Machine`] JSON document. Bump on any incompatible change.
pub const MACHINE_SCHEMA_VERSION: u32 = 1;

/// Everything hwsurvey knows about one machine.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Machine {
    /// [`MACHINE_SCHEMA_VERSION`] at the time of writing.
    pub schema_version: u32,
    /// The root the probe read under (`/` for the live machine).
    pub root: String,
    /// CPUs: sets, topology, identity, core kinds, caches.
    pub cpu: cpu::Cpu,
    /// NUMA nodes, their CPUs and memory, distances.
    pub numa: numa::Numa,
    /// Base page size, hugetlb pools, THP.
    pub pages: pages::Pages,
    /// Memory population: SMBIOS, EDAC, totals, theoretical peak.
    pub memory: memory::Memory,
    /// PCIe links and block devices.
    pub io: io::Io,
    /// Kernel, distro, settings that affect numbers, the binary's own ELF.
    pub os: os::Os,
}

/// Probes everything under `root`. Never fails as a whole; unknowns carry their reasons.
pub fn probe_machine(root: &SysRoot) -> Machine {
    Machine {
        schema_version: MACHINE_SCHEMA_VERSION,
        root: root.root().display().to_string(),
        cpu: cpu::probe(root),
        numa: numa::probe(root),
        pages: pages::probe(root),
        memory: memory::probe(root),
        io: io::probe(root),
        os: os::probe(root),
    }
}

//! The machine document: what hwsurvey knows about one machine, as plain typed data with no
//! I/O ([`Machine`], schema [`MACHINE_SCHEMA_VERSION`], units in field names), the run
//! environment a result file records ([`run_env::RunEnv`]), and the pure functions over them
//! (the parsers of kernel files, classifications, summaries).
//!
//! The readers that fill these types from `/proc` and `/sys` under a root live in
//! `hwsurvey-probe`, which re-exports every item here under the same path; the crates that
//! only read documents (result, report, qualify, fleet) depend on this crate alone, as
//! `procfs-core` holds procfs's types and parsers apart from its live reader.
//!
//! Module ownership: `cpu`, `numa`, `pages` (topology side); `memory`, `io`, `os` (population,
//! devices and system side); `virt`, `limits`, `energy`, `clocksource`, `run_env` (the
//! environment of a run).
//!
//! ## One parser per kernel file
//!
//! Each file the probe reads as text (or as SMBIOS bytes) has one parser here and one reader
//! in `hwsurvey_probe`, which knows the path and reads it under a root; every fact taken from
//! the file (the usable CPUs, the memory available, the CPU quota) is computed from that one
//! parse. `tests/one_parser_per_file.rs` reads this table and fails on a second parser.
//!
//! | kernel file | parser (here) | reader (`hwsurvey_probe`) |
//! |---|---|---|
//! | `/proc/self/cgroup` | `os::cgroup::parse_proc_cgroup` | `cgroup::read` |
//! | `/proc/self/mountinfo` | `mounts::parse_mountinfo` | `mounts::read_mount_entries` |
//! | `/proc/swaps` | `mounts::parse_swaps` | `mounts::read_swaps` |
//! | cgroup v2 `cpu.max` | `os::cgroup::parse_cpu_max` | `cgroup::Cgroups::cpu_files` |
//! | cgroup v1 `cpu.cfs_quota_us` | `os::cgroup::parse_cfs_quota_us` | `cgroup::Cgroups::cpu_files` |
//! | cgroup `memory.max`, `memory.high`, `memory.limit_in_bytes`, `memory.memsw.limit_in_bytes` | `os::cgroup::parse_limit_bytes` | `cgroup::Cgroups::memory_files` |
//! | CPU lists: `cpuset.cpus.effective`, `online`, `*_list` | `cpu::sets::parse_cpulist_at` | `cpu::sets::read_cpuset` |
//! | CPU masks: `thread_siblings`, `shared_cpu_map` | `cpu::sets::parse_cpumask_at` | `cpu::sets::read_cpuset` |
//! | `/proc/self/status` (`Cpus_allowed_list`, `VmSize`, `VmData`) | `process::parse_status` | `process::read_status` |
//! | `/proc/self/limits` | `process::parse_limits` | `process::read_limits` |
//! | `/proc/meminfo` | `memory::meminfo::parse_meminfo` | `memory::meminfo::read_fields` |
//! | `/proc/self/smaps` | `smaps::parse_smaps` | `smaps::read_smaps` |
//! | `/sys/firmware/dmi/tables/DMI`, `/sys/firmware/dmi/entries/*/raw` | `memory::smbios::parse_structures` | `memory::smbios::read` |
//! | SMBIOS strings (the DMI table, `/sys/class/dmi/id/*`, `dmidecode` text) | `dmi::clean` | `firmware::probe` |
//! | saved `dmidecode` text (the user's file) | `dmidecode::split_records` | `memory::dmidecode::read_dmidecode_file_with_firmware` |
//! | a block device's `dev` (`MAJ:MIN`) | `io::parse_dev` | `block::partitions` |

pub mod binary;
pub mod block_use;
pub mod clocksource;
pub mod cpu;
pub mod cpu_table;
pub mod dmi;
pub mod dmidecode;
pub mod energy;
pub mod firmware;
pub mod io;
pub mod isa;
pub mod limits;
pub mod memory;
pub mod mounts;
pub mod numa;
pub mod os;
pub mod pages;
pub mod pci;
pub mod pci_ids;
pub mod pci_text;
pub mod pcie;
pub mod probe_text;
pub mod process;
pub mod run_env;
pub mod smaps;
pub mod virt;
pub mod watch;

mod parse_error;
pub use parse_error::ParseError;

use hwsurvey_model::Probed;
use serde::{Deserialize, Serialize};

/// Version of the [`Machine`] JSON document. Bump on any incompatible change.
///
/// - 2: the document ([`Machine::document`]) holds plain values, `null` for unknown, and the
///   reasons in one `"unknown"` map keyed by JSON Pointer ([`hwsurvey_model::probed::to_plain`]).
/// - 1: every probed value wrapped as `{"known": v}` or `{"unknown": {"reason": ...}}`. The
///   serde form of [`Machine`] in memory still is this one; [`Machine::from_document`] reads
///   both.
pub const MACHINE_SCHEMA_VERSION: u32 = 2;

/// Everything hwsurvey knows about one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// BIOS, system and board (SMBIOS Types 0, 1, 2: [`firmware`]), or why unknown; the CPU
    /// microcode is [`cpu::Identity::microcode`]. Documents written before hwsurvey read it
    /// load as unknown.
    #[serde(default = "firmware::not_probed")]
    pub firmware: Probed<firmware::DmiIds>,
}

impl Machine {
    /// The JSON document of [`MACHINE_SCHEMA_VERSION`] 2 (what `hwsurvey probe --json` prints
    /// and result files hold): plain values, `null` for unknown, the reasons in `"unknown"`.
    pub fn document(&self) -> serde_json::Value {
        // a Machine is plain data (strings, numbers, maps with string keys): it always serializes
        let tagged = serde_json::to_value(self).expect("a Machine serializes to JSON");
        Machine::document_of(&tagged)
    }

    /// [`Machine::document`] of a machine held in its tagged JSON form (as a result file
    /// keeps it in memory, possibly written by an older hwsurvey).
    pub fn document_of(tagged: &serde_json::Value) -> serde_json::Value {
        let mut doc = hwsurvey_model::probed::to_plain(tagged);
        if let Some(top) = doc.as_object_mut() {
            top.insert("schema_version".into(), MACHINE_SCHEMA_VERSION.into());
        }
        doc
    }

    /// Reads a machine document of schema version 1 (tagged values) or 2 ([`Machine::document`]).
    ///
    /// # Errors
    /// One line: a schema version this build does not read, an `"unknown"` map naming a value
    /// that is not `null` or not there, or the field path and serde's message of a value of
    /// the wrong type.
    pub fn from_document(doc: serde_json::Value) -> Result<Machine, String> {
        let version = doc.get("schema_version").and_then(|v| v.as_u64());
        let tagged = match version {
            Some(1) => doc,
            Some(2) => hwsurvey_model::probed::from_plain(doc)?,
            _ => {
                return Err(format!(
                    "machine schema version {}, this hwsurvey reads versions 1 and 2",
                    doc.get("schema_version")
                        .map(|v| hwsurvey_model::text::one_line(&v.to_string(), 40).into_owned())
                        .unwrap_or_else(|| "missing".into())
                ))
            }
        };
        let mut m: Machine = serde_path_to_error::deserialize(&tagged).map_err(|e| {
            format!(
                "machine document at {}: {}",
                hwsurvey_model::text::one_line(&e.path().to_string(), 120),
                hwsurvey_model::text::one_line(&e.inner().to_string(), 200)
            )
        })?;
        m.schema_version = MACHINE_SCHEMA_VERSION;
        Ok(m)
    }
}

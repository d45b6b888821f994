//! The integration tests of hwsurvey-probe: one module per `tests/*.rs` file below, built
//! as one test binary (one compile and one link instead of one per file, most of what the
//! cross stages cost: docs/testing.md). A new test file must be added below
//! (xtask/tests/one_test_binary.rs fails naming a file that is not).

mod capture_archive;
mod core_kinds_cpufreq_pci;
mod dimm_size_encodings;
mod dmidecode_fit;
mod energy_counters;
mod firmware;
mod implausible_values_refused;
mod interleave_smbios;
mod limits_trees;
mod nominal_clock;
mod pci_names;
mod population_io_os;
mod population_memory;
mod population_robustness;
mod probe_fault_classes;
mod run_env_from_machine;
mod topology_corrupt;
mod topology_fixtures;
mod topology_nodes_and_pools;
mod topology_proptest;
mod topology_summary;
#[path = "topology_support/mod.rs"]
mod topology_support;
mod unknowns_pseudo_disks;
mod virt_fixtures;
mod watch_trees;

//! Shared vocabulary of hwsurvey: typed ids and sets for the two index spaces the kernel uses
//! (OS CPU numbers and NUMA node numbers), the Linux "cpulist" grammar, and [`Probed`], the
//! wrapper that says *why* a value is unknown instead of returning a sentinel zero.
//!
//! Units live in field names everywhere in hwsurvey (`size_bytes`, `latency_ns`,
//! `speed_mt_per_s`). MB = 10^6 bytes and MiB = 2^20 bytes; see [`units`].

pub mod cpulist;
pub mod files;
pub mod memory;
pub mod probed;
pub mod text;
pub mod units;

pub use cpulist::{CpuId, CpuSet, ListParseError, NodeId, NodeSet};
pub use probed::{Probed, Unknown};

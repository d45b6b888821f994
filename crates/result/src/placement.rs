//! Thread placement as recorded: the policy ([`Placement`]) and what pinning each worker
//! achieved ([`PinStatus`]). The engine decides and pins; this crate only records.

use hwsurvey_model::CpuId;
use serde::{Deserialize, Serialize};

/// How workers are laid over the CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Fill SMT siblings and cores of one package (and node) first, then the next.
    Compact,
    /// One worker per package/node in turn, then per core, SMT siblings last.
    Spread,
}

impl std::fmt::Display for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Placement::Compact => "compact",
            Placement::Spread => "spread",
        })
    }
}

/// What pinning one thread achieved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum PinStatus {
    /// `sched_setaffinity` to this one CPU succeeded.
    Pinned {
        /// OS CPU number.
        cpu: CpuId,
    },
    /// The thread runs unpinned, and why (std-only build, or the call failed).
    Unpinned {
        /// CPU it was meant for.
        intended_cpu: CpuId,
        /// Why not.
        reason: String,
    },
}

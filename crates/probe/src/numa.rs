//! (being built)

use serde::{Deserialize, Serialize};

use crate::SysRoot;

/// (being built)
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Numa {}

/// Probes under `root`.
pub fn probe(_root: &SysRoot) -> Numa {
    Numa {}
}

//! Typed views of the point params the report reads, one per family: the fields of each
//! family's `PointParams` (in `hwsurvey_workloads::families::<family>`, as a result file
//! records them in `tests[].point.params`) that the headline and the tables look at, read once
//! with serde. A field renamed here breaks every reader of it at compile time; a key renamed
//! in a family makes its points stop reading as this view, which the workloads' test
//! `point_params_views` catches on every family's real plan.
//!
//! A view reads a point of its own family only ([`View::of`]); params of another shape (a
//! file of an older hwsurvey, a hand-edited file) read as `None`, never as a default.

use hwsurvey_result::{PageMode, TestResult};
use serde::de::DeserializeOwned;
use serde::Deserialize;

/// A view of one family's point params.
pub trait View: DeserializeOwned {
    /// The family whose points it reads (`cpu.scaling`).
    const FAMILY: &'static str;

    /// The view of `t`'s params when `t` is a point of [`View::FAMILY`] and its params read.
    fn of(t: &TestResult) -> Option<Self> {
        if t.point.family != Self::FAMILY {
            return None;
        }
        Self::read(&t.point.params)
    }

    /// The view of a point's `params` (JSON), whatever its family.
    fn read(params: &serde_json::Value) -> Option<Self> {
        Self::deserialize(params).ok()
    }
}

/// `cpu.scaling`: the kernel of a point.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CpuScaling {
    /// `integer`, `floating_point`, ...
    pub kernel: String,
}

impl View for CpuScaling {
    const FAMILY: &'static str = "cpu.scaling";
}

/// `mem.bandwidth`: which test a point runs (`stream` or `block`) and, for STREAM, its kernel.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MemBandwidth {
    /// `stream` or `block`.
    pub test: String,
    /// STREAM kernel (`copy`, `scale`, `add`, `triad`); `None` for block points.
    #[serde(default)]
    pub kernel: Option<String>,
}

impl View for MemBandwidth {
    const FAMILY: &'static str = "mem.bandwidth";
}

/// `mem.latency`: the visiting order, page mode and working set of a chase.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MemLatency {
    /// `"full_random"`, or `{"page_local": {"window_bytes": N}}`.
    pub order: serde_json::Value,
    /// Page mode asked for.
    pub page_mode: PageMode,
    /// Working set, bytes.
    pub working_set_bytes: u64,
}

impl MemLatency {
    /// Whether the chase visits the whole working set in random order.
    pub fn full_random(&self) -> bool {
        self.order.as_str() == Some("full_random")
    }
}

impl View for MemLatency {
    const FAMILY: &'static str = "mem.latency";
}

/// `c2c.latency`: the CPU pair of a point.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct C2cLatency {
    /// The pair.
    pub pair: C2cPair,
}

/// A c2c CPU pair as the report reads it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct C2cPair {
    /// Topology class label: `smt`, `cluster`, `die`, `package`, `cross_package`, with
    /// `/other_node` or `/same_node`.
    pub label: String,
}

impl View for C2cLatency {
    const FAMILY: &'static str = "c2c.latency";
}

/// `service.point_select`: the test of a point (`closed` or `critical`) and its client threads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PointSelect {
    /// `closed` or `critical`.
    pub test: String,
    /// Closed-loop client threads; `None` for `critical` points.
    #[serde(default)]
    pub clients: Option<u64>,
}

impl View for PointSelect {
    const FAMILY: &'static str = "service.point_select";
}

/// `storage.iops`: the I/O pattern of a point and the targets it ran on.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StorageIops {
    /// `randread_4k`, ...
    pub pattern: String,
    /// One entry per storage target (directory or device).
    pub targets: Vec<serde_json::Value>,
}

impl View for StorageIops {
    const FAMILY: &'static str = "storage.iops";
}

/// `raid.parity`: the operation, code path and stripe width of a point.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RaidParity {
    /// `gen` (P+Q generation) or `recov_2data` (two data blocks rebuilt).
    pub op: String,
    /// `best` (the fastest path this CPU runs) or `int64x4` (the portable path).
    pub path: String,
    /// Data blocks of the stripe.
    pub data_blocks: u64,
}

impl View for RaidParity {
    const FAMILY: &'static str = "raid.parity";
}

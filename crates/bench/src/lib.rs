//! Workloads of the fixed profile and the engine that runs them.
//!
//! Data flow: [`profile::Profile`] (profiles/*.toml) + `Machine` + [`env::RunEnv`] ->
//! [`plan::build_plan`] (pure) -> [`engine::run`] (pinned workers, repetitions, statistics)
//! -> [`result::ResultFile`] (JSON, written after every test; format in
//! `docs/result-format.md`).
//!
//! Families plug in through [`families::Family`]; see the module docs of [`families`] for
//! how to add one, with `mem.bandwidth` as the worked example.

pub mod affinity;
pub mod engine;
pub mod env;
pub mod families;
pub mod outcome;
pub mod pages;
pub mod plan;
pub mod profile;
pub mod raid6;
pub mod result;
pub mod runner;
pub mod service;
pub mod storage;

pub use affinity::{PinStatus, Placement};
pub use outcome::{Better, Measurement, Metric, PointOutcome};
pub use plan::{build_plan, FamilyPoints, Plan, PlanInput, Point, RunOptions, SkippedPoint};
pub use profile::{Profile, ProfileError, RunSettings, Section};
pub use runner::{RunContext, Timed, Worker};

/// Git revision of the source at build time (`<12 hex>[-dirty]`), or "unknown" outside a
/// git checkout; set by build.rs (an `HWSURVEY_GIT_REVISION` in the build environment wins).
pub const GIT_REVISION: &str = match option_env!("HWSURVEY_GIT_REVISION") {
    Some(v) => v,
    None => "unknown",
};

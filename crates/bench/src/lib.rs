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
pub mod families;
pub mod ladder;
pub mod pages;
pub mod plan;
pub mod profile;
pub mod raid6;
pub mod runner;
pub mod service;
pub mod storage;

/// The live run environment, read by the probe crate.
pub use hwsurvey_probe::run_env as env;
/// The result file (its own crate, a leaf readers depend on).
pub use hwsurvey_result as result;
/// What a family returns for one point (the result crate's types).
pub use hwsurvey_result::outcome;
pub use hwsurvey_result::GIT_REVISION;

pub use affinity::{PinStatus, Placement};
pub use outcome::{Better, Measurement, Metric, PointOutcome};
pub use plan::{build_plan, FamilyPoints, Plan, PlanInput, Point, RunOptions, SkippedPoint};
pub use profile::{Profile, ProfileError, RunSettings, Section};
pub use runner::{RunContext, Timed, Worker};

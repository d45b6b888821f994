//! The engine of the fixed profile: everything between a probed machine and a result file
//! except the workloads themselves.
//!
//! Data flow: [`profile::Profile`] (profiles/*.toml) + `Machine` + [`env::RunEnv`] ->
//! [`plan::build_plan`] (pure) -> [`run::run`] (pinned workers, repetitions, statistics)
//! -> [`result::ResultFile`] (JSON, written after every test; format in
//! `docs/result-format.md`).
//!
//! Families plug in through [`family::Family`]; the families themselves and their registry
//! live in the workloads crate (`hwsurvey-workloads`), which depends on this one, never the
//! other way round. Whatever a family must undo on a forced exit it registers with
//! [`signals::on_forced_exit`].

pub mod affinity;
pub mod eta;
pub mod family;
pub mod gate;
pub mod ladder;
pub mod pages;
pub mod plan;
pub mod plan_input;
pub mod profile;
pub mod run;
pub mod runner;
pub mod signals;
pub mod speed;
pub mod watch;

/// The live run environment, read by the probe crate.
pub use hwsurvey_probe::run_env as env;
/// The result file (its own crate, a leaf readers depend on).
pub use hwsurvey_result as result;
/// What a family returns for one point (the result crate's types).
pub use hwsurvey_result::outcome;
pub use hwsurvey_result::GIT_REVISION;

pub use affinity::{PinStatus, Placement};
pub use family::{DynFamily, Family};
pub use outcome::{Better, Measurement, Metric, PointOutcome};
pub use plan::{build_plan, FamilyPoints, Plan, PlanInput, Point, RunOptions, SkippedPoint};
pub use profile::{Profile, ProfileError, RunSettings, Section};
pub use runner::{RunContext, Timed, Worker};

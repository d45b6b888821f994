//! The result file of a hwsurvey run as typed data: the versioned JSON schema
//! ([`ResultFile`], format in `docs/result-format.md`), its loader with validation
//! ([`load`], [`parse`]) and its atomic writer ([`ResultFile::write_atomic`]).
//!
//! A leaf of the pipeline: the engine writes these types, compare, report and qualify read
//! them, and nothing here depends on a workload. Module map: [`file`](mod@file) (the document, load,
//! validate, write), [`bounds`] (what a point can be on its own machine), [`consistency`] (sizes, page sizes and strings a loaded file must hold), [`outcome`] (what a family returns for one point), [`page_mode`] (the page backing a
//! point asks for), [`plan`] (points and
//! skips as recorded), [`placement`] (placement policy and pinning achieved), [`plain`] (version 2's plain values
//! with `null` for unknown, and the reader back), [`profile`]
//! (the engine rules recorded with the profile reference), [`provenance`] (emulated, virtual or
//! native; which run), [`qualification`] (the findings a run
//! stores, typed), [`qualifier`] (what fills them as the file is written), [`verdict`] (a finished run's exit status),
//! [`watch`] (the hardware watch around each point, and a soak's rounds).

pub mod bounds;
pub mod consistency;
pub mod counts;
pub mod file;
pub mod load;
pub mod outcome;
pub mod page_mode;
pub mod placement;
pub mod plain;
pub mod plan;
pub mod profile;
pub mod provenance;
pub mod qualification;
pub mod qualifier;
pub mod validate;
pub mod verdict;
pub mod watch;

pub use file::*;
pub use load::{load, parse};
pub use outcome::{Better, Measurement, Metric, PointOutcome};
pub use page_mode::PageMode;
pub use placement::{PinStatus, Placement};
pub use plan::{FamilyPlan, Landmark, Plan, Point, SkippedPoint};
pub use profile::RunSettings;
pub use qualifier::Qualifier;
pub use validate::{plausible_max, STATS_TOLERANCE};
pub use watch::{Soak, SoakPoint, SoakRound, WatchedPoint};

/// Git revision of the source at build time (`<12 hex>[-dirty]`), or "unknown" outside a
/// git checkout; set by build.rs (an `HWSURVEY_GIT_REVISION` in the build environment wins).
pub const GIT_REVISION: &str = match option_env!("HWSURVEY_GIT_REVISION") {
    Some(v) => v,
    None => "unknown",
};

//! The trait every test family implements, [`Family`], with its profile params and its point
//! params as associated types, and its object-safe face [`DynFamily`] (every `Family` is one),
//! through which alone the engine plans and runs families (the families and their registry
//! are in the workloads crate).
//!
//! # Adding a family
//!
//! A family is a unit struct implementing [`Family`] in its own file
//! `crates/workloads/src/families/<name>.rs`, registered by one `pub mod` line and one entry in
//! the workloads crate's `families::registry`. `mem_bandwidth.rs` is the worked example; in short:
//!
//! 1. **Id and section.** `id()` returns the dotted family id (`"mem.bandwidth"`). The profile
//!    gives it a section with engine keys and the family's own `params` table:
//!
//!    ```toml
//!    [families."mem.bandwidth"]   # engine keys (`enabled`); no time budget: the profile
//!                                  # defines the points on every machine
//!    [families."mem.bandwidth".params]
//!    stream_kernels = ["copy", "scale", "add", "triad"]
//!    block_sizes_bytes = [1024, 65536, 67108864]
//!    ```
//!
//!    Define a `#[derive(Deserialize)] #[serde(deny_unknown_fields)] struct Params` with units
//!    in its field names and the [`CheckedParams`] ranges, and name it as `type Params`: the
//!    engine reads and checks it at load time (errors name the file, line and key) and hands
//!    it to `plan`. Add the section to `profiles/standard.toml` and `profiles/quick.toml`.
//!
//! 2. **Plan** (`plan`, pure). Turn params + [`PlanInput`] into points. Use the shared rules:
//!    `input.ladder(oversubscribe)` (the thread ladder with its topology landmarks: build
//!    each point with `input.rung_point(id, &rung, params, memory_bytes)` and put
//!    `rung.id_part()` in its id), `input.memory_working_set_bytes()` (>= k x LLC),
//!    `input.memory_cap_bytes()`, `input.env` (CPUs, LLC, page sizes, huge page pools, THP),
//!    `input.machine` (the probe document). Build each point with
//!    `input.point(id, threads, params, memory_bytes)` (params: the family's `PointParams`,
//!    any `Serialize` with units in its field names; the engine reads them back for
//!    `run_point`, a point whose params do not read is `Failed`), and anything that cannot run
//!    here with `input.skip(id, params, reason)`. Set `point.estimated_s` when the point's
//!    own setup or repetitions make it longer than the standard estimate: the plan's time
//!    estimate is the sum, and a point may take 1.25 x its estimate. The engine skips points
//!    over the memory cap, with that reason; no point is dropped for time.
//!
//! 3. **Run** (`run_point`, given the point's `PointParams`). Measure one point with the
//!    [`RunContext`] helpers:
//!    - `ctx.measure_parallel(point, setup, kernel)`: one pinned worker per `point.cpus`;
//!      `setup(&Worker)` runs in the worker's own thread (allocate and first-touch buffers
//!      there); `kernel(&mut state, reps)` repeats the work `reps` times. The runner
//!      calibrates `reps` so each sample lasts >= the profile's minimum, warms up, and takes
//!      samples by the bounded adaptive rule. `timed.rates(work_per_rep)` converts to rates.
//!    - `ctx.run_pinned(cpus, f)` for families that synchronise themselves (ping-pong,
//!      loaded latency), with `worker.barrier`; `ctx.repeat(|| one_sample)` applies the
//!      adaptive rule to samples you time yourself; `ctx.cancelled()` / `ctx.time_left()` in
//!      long loops.
//!    - `hwsurvey_engine::pages::PageBuffer::allocate(mode, len)` allocates with a page mode (base,
//!      THP, hugetlbfs of each size) and verifies the backing obtained from /proc/self/smaps
//!      (use it where the page mode is under test, as mem.latency does); `PageMode::Default`
//!      is the system's own choice (no madvise), which the bandwidth kernels use.
//!
//!    Return [`PointOutcome::Measured`] with one or more [`Metric`](crate::Metric)s of raw samples
//!    (name with unit: `bandwidth_bytes_per_s`, `latency_ns`, `ops_per_s`; the first is the
//!    headline), `pins: timed.pins`, and `details` (facts such as credited bytes per element
//!    or the backing obtained). Use [`PointOutcome::Skipped`] with a reason when the point
//!    cannot run after all (e.g. `MAP_HUGETLB` gave ENOMEM/EINVAL), `Failed` for errors.
//!    The engine computes the statistics (median/min/max/CV/bootstrap CI, peak for
//!    bandwidth) and writes the result file after each point.
//!
//! Never panic on external data; everything must compile on every target (cfg arch-specific
//! code into its own module with a portable fallback) and without the `sys` feature.

use serde::de::DeserializeOwned;

use crate::outcome::PointOutcome;
use crate::plan_input::{FamilyPoints, PlanInput};
use crate::profile::{CheckedParams, Profile, ProfileError, Section};
use crate::runner::RunContext;
use hwsurvey_result::plan::Point;

/// One family of tests, typed: its profile params and its point params are associated types,
/// read by the engine (through [`DynFamily`]) before `plan` and `run_point` see them.
pub trait Family: Send + Sync {
    /// The family's `[families."<id>".params]` table of the profile.
    type Params: DeserializeOwned + CheckedParams;
    /// One point's params, as `plan` stores them in `Point.params` (JSON in the result file).
    type PointParams: DeserializeOwned;

    /// Dotted family id, as in the profile: `mem.bandwidth`.
    fn id(&self) -> &'static str;

    /// One line for people: what it measures.
    fn describe(&self) -> &'static str;

    /// The concrete points for this machine from the checked params. Pure: reads only its
    /// input.
    fn plan(
        &self,
        params: Self::Params,
        input: &PlanInput<'_>,
    ) -> Result<FamilyPoints, ProfileError>;

    /// Measures one point of this family's plan, given its params.
    fn run_point(
        &self,
        params: Self::PointParams,
        point: &Point,
        ctx: &RunContext<'_>,
    ) -> PointOutcome;
}

/// A family as the engine and the registry hold it (`&dyn DynFamily`): the params read and
/// checked here, once for every family. Implemented for every [`Family`].
pub trait DynFamily: Send + Sync {
    /// [`Family::id`].
    fn id(&self) -> &'static str;

    /// [`Family::describe`].
    fn describe(&self) -> &'static str;

    /// Checks the family's profile section: its params read as [`Family::Params`] and
    /// range-checked.
    fn check_section(&self, section: &Section) -> Result<(), ProfileError>;

    /// [`Family::plan`] with the params read from `input.section` (errors name the file, line
    /// and key).
    fn plan(&self, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError>;

    /// [`Family::run_point`] with the params read from `point.params`; params that do not
    /// read make the point [`PointOutcome::Failed`] with the reason.
    fn run_point(&self, point: &Point, ctx: &RunContext<'_>) -> PointOutcome;
}

impl<F: Family> DynFamily for F {
    fn id(&self) -> &'static str {
        Family::id(self)
    }

    fn describe(&self) -> &'static str {
        Family::describe(self)
    }

    fn check_section(&self, section: &Section) -> Result<(), ProfileError> {
        section.checked_params::<F::Params>().map(|_| ())
    }

    fn plan(&self, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        let params = input.section.checked_params::<F::Params>()?;
        Family::plan(self, params, input)
    }

    fn run_point(&self, point: &Point, ctx: &RunContext<'_>) -> PointOutcome {
        match point.params::<F::PointParams>() {
            Ok(params) => Family::run_point(self, params, point, ctx),
            Err(error) => PointOutcome::Failed { error },
        }
    }
}

/// Checks each section of `profile` that one of `families` owns, with that family.
pub fn check_sections(profile: &Profile, families: &[&dyn DynFamily]) -> Result<(), ProfileError> {
    for family in families {
        if let Some(section) = profile.families.get(family.id()) {
            family.check_section(section)?;
        }
    }
    Ok(())
}

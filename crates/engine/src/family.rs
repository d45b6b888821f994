//! The one trait every test family implements; the engine plans and runs families only
//! through it (the families and their registry are in the workloads crate).
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
//!    in its field names and read it with `input.section.params::<Params>()?` (errors then
//!    name the file, line and key). `check_section` does the same so a bad profile fails at
//!    load time. Add the section to `profiles/standard.toml` and `profiles/quick.toml`.
//!
//! 2. **Plan** (`plan`, pure). Turn params + [`PlanInput`] into points. Use the shared rules:
//!    `input.ladder(oversubscribe)` (the thread ladder with its topology landmarks: build
//!    each point with `input.rung_point(id, &rung, params, memory_bytes)` and put
//!    `rung.id_part()` in its id), `input.memory_working_set_bytes()` (>= k x LLC),
//!    `input.memory_cap_bytes()`, `input.env` (CPUs, LLC, page sizes, huge page pools, THP),
//!    `input.machine` (the probe document). Build each point with
//!    `input.point(id, threads, params, memory_bytes)` (params: any `Serialize` with units in
//!    its field names; read back with `point.params::<T>()`), and anything that cannot run
//!    here with `input.skip(id, params, reason)`. Set `point.estimated_s` when the point's
//!    own setup or repetitions make it longer than the standard estimate: the plan's time
//!    estimate is the sum, and a point may take 1.25 x its estimate. The engine skips points
//!    over the memory cap, with that reason; no point is dropped for time.
//!
//! 3. **Run** (`run_point`). Measure one point with the [`RunContext`] helpers:
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

use crate::outcome::PointOutcome;
use crate::plan_input::{FamilyPoints, PlanInput};
use crate::profile::{Profile, ProfileError, Section};
use crate::runner::RunContext;
use hwsurvey_result::plan::Point;

/// One family of tests.
pub trait Family: Send + Sync {
    /// Dotted family id, as in the profile: `mem.bandwidth`.
    fn id(&self) -> &'static str;

    /// One line for people: what it measures.
    fn describe(&self) -> &'static str;

    /// Checks the family's profile section (usually `section.checked_params::<Params>().map(|_| ())`).
    fn check_section(&self, section: &Section) -> Result<(), ProfileError>;

    /// The concrete points for this machine. Pure: reads only its input.
    fn plan(&self, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError>;

    /// Measures one point of this family's plan.
    fn run_point(&self, point: &Point, ctx: &RunContext<'_>) -> PointOutcome;
}

/// Checks each section of `profile` that one of `families` owns, with that family.
pub fn check_sections(profile: &Profile, families: &[&dyn Family]) -> Result<(), ProfileError> {
    for family in families {
        if let Some(section) = profile.families.get(family.id()) {
            family.check_section(section)?;
        }
    }
    Ok(())
}

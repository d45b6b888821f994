//! `service.point_select`: point selects on an in-memory table, closed-loop up to 512 clients,
//! and the highest throughput whose p99 stays under a bound.
//!
//! The table holds `rows` rows of [`ROW_BYTES`] bytes with a hash index over their keys (see
//! [`crate::service`]); one request picks a row uniformly at random, looks its key up in the
//! index, reads the row and folds it into a checksum (the shape of a MySQL HEAP/MEMORY
//! primary-key select without the SQL layer). Table and index memory are allocated with each
//! requested page mode (base pages, THP by `madvise`) and the backing obtained is read back from
//! `/proc/self/smaps` and recorded per point (`backing_table`, `backing_index`).
//!
//! Points, per page mode:
//! - `closed/pages=<mode>/clients=<N>`: N client threads (1, 2, 4, ..., the usable CPU count,
//!   ..., `max_clients`, on every machine: the same client counts from 2 to 512 CPUs, so
//!   that "512 clients on a 32-thread machine" is a point of every run), unpinned, each sending its
//!   next request when the last returns. Samples are windows of `window_s`: metrics
//!   `throughput_ops_per_s` (headline), `latency_p50_ns`, `latency_p99_ns`, `latency_p999_ns`
//!   per window (HdrHistogram, 3 significant figures: quantiles within 10^-3 relative, see
//!   [`crate::service::histogram`]); details hold each window's full summary.
//! - `critical/pages=<mode>`: open-loop runs at fixed arrival rates (latency from the intended
//!   send time, so queueing is not hidden), searching for the highest rate whose p99 <=
//!   `p99_bound_ns` ([`crate::service::search`]; like SPECjbb2015's critical-jOPS), starting
//!   from a fraction of a closed-loop run with one client per usable CPU. The rate found is run
//!   `confirm_trials` more times: metric `critical_throughput_ops_per_s` (achieved rates of all
//!   runs at that rate) and `critical_p99_ns` (their p99s); details hold every trial. When no
//!   rate meets the bound the point is "skipped" with the reason (bound, rates tried, why the
//!   search stopped), never "measured" with empty samples.
//!
//! For `compare` and plots (report): per page mode, plot `throughput_ops_per_s` and
//! `latency_p99_ns` (log y) against `params.clients` of the `closed/...` points; show
//! `critical_throughput_ops_per_s` with `params.p99_bound_ns` as the headline per page mode.

use std::cell::Cell;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::service::clock::MonotonicClock;
use crate::service::closed_loop::{run_closed_loop, ClosedLoopPoint};
use crate::service::index::HashIndex;
use crate::service::open_loop::{run_open_loop, OpenLoopConfig, OpenLoopPoint};
use crate::service::search::{search_critical_rate, RateTrial, SearchParams};
use crate::service::table::{Table, ROW_BYTES};
use crate::service::ServiceError;
use hwsurvey_engine::affinity::{pin_current_thread, PinStatus};
use hwsurvey_engine::outcome::{Metric, PointOutcome};
use hwsurvey_engine::pages::PageMode;
use hwsurvey_engine::plan::{FamilyPoints, PlanInput, Point};
use hwsurvey_engine::profile::{CheckedParams, Checker, ProfileError};
use hwsurvey_engine::runner::RunContext;
use hwsurvey_engine::speed::FixedWorkSpeed;
use hwsurvey_engine::Family;

mod table_memory;
use table_memory::{base_details, build, unavailable};

/// The family.
pub struct ServicePointSelect;

/// Page backing of the table and index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TablePages {
    /// Base pages (`MADV_NOHUGEPAGE`).
    Base,
    /// Transparent huge pages (`MADV_HUGEPAGE`).
    Thp,
}

impl TablePages {
    fn mode(self) -> PageMode {
        match self {
            TablePages::Base => PageMode::Base,
            TablePages::Thp => PageMode::Thp,
        }
    }
    fn label(self) -> &'static str {
        match self {
            TablePages::Base => "base",
            TablePages::Thp => "thp",
        }
    }
}

/// `[families."service.point_select".params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Rows in the table (1_000_000 in the standard profile); 1..=100_000_000.
    pub rows: u64,
    /// Page backings to run, in order (non-empty, no duplicates).
    pub page_modes: Vec<TablePages>,
    /// Most client threads (512), on every machine; 1..=4096 (`MAX_THREADS_PER_POINT`).
    /// (Profiles before version 2 also had `clients_per_cpu`, which stopped the clients at
    /// that many per usable CPU; the key is gone, and a profile that gives it is an error.)
    pub max_clients: usize,
    /// Unrecorded lead-in of a closed-loop point and of each open-loop trial (s); [0, 60].
    pub warmup_s: f64,
    /// Length of one closed-loop sample window (s); (0, 60].
    pub window_s: f64,
    /// p99 bound of the critical-throughput search (ns; 1 ms = 1_000_000); 1..=60e9.
    pub p99_bound_ns: u64,
    /// Length of one open-loop trial's measured window (s); (0, 60].
    pub search_window_s: f64,
    /// Most search trials; 1..=100.
    pub search_max_trials: usize,
    /// First trial rate as a fraction of the closed-loop throughput; (0, 1].
    pub search_start_fraction: f64,
    /// Rate factor between passing trials before the first failure; [1.01, 16].
    pub search_step_factor: f64,
    /// Relative gap between best pass and lowest failure at which the search stops; (0, 1].
    pub search_resolution: f64,
    /// Extra trials at the rate found (confirmation samples); 0..=100.
    pub confirm_trials: usize,
}

impl CheckedParams for Params {
    /// The ranges in the field docs.
    fn check(&self, c: &Checker<'_>) -> Result<(), ProfileError> {
        c.int("rows", self.rows, 1, 100_000_000, "")?;
        c.list("page_modes", &self.page_modes)?;
        c.int(
            "max_clients",
            self.max_clients,
            1,
            hwsurvey_engine::profile::MAX_THREADS_PER_POINT,
            "threads",
        )?;
        c.float("warmup_s", self.warmup_s, 0.0, false, 60.0, "seconds")?;
        c.float("window_s", self.window_s, 0.0, true, 60.0, "seconds")?;
        c.int("p99_bound_ns", self.p99_bound_ns, 1, 60_000_000_000, "ns")?;
        c.float(
            "search_window_s",
            self.search_window_s,
            0.0,
            true,
            60.0,
            "seconds",
        )?;
        c.int("search_max_trials", self.search_max_trials, 1, 100, "")?;
        c.float(
            "search_start_fraction",
            self.search_start_fraction,
            0.0,
            true,
            1.0,
            "",
        )?;
        c.float(
            "search_step_factor",
            self.search_step_factor,
            1.01,
            false,
            16.0,
            "",
        )?;
        c.float(
            "search_resolution",
            self.search_resolution,
            0.0,
            true,
            1.0,
            "",
        )?;
        c.int("confirm_trials", self.confirm_trials, 0, 100, "")
    }
}

/// What one point measures: the test and the timing it runs with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointParams {
    /// Closed loop or critical-throughput search.
    #[serde(flatten)]
    pub test: Test,
    /// Windows and search settings from the profile.
    pub timing: Timing,
}

/// The test of a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "test", rename_all = "snake_case")]
pub enum Test {
    /// Closed loop with `clients` threads.
    Closed {
        /// Page backing asked for.
        page_mode: TablePages,
        /// Client threads.
        clients: usize,
        /// Rows.
        rows: u64,
        /// Bytes per row.
        row_bytes: u64,
    },
    /// Open-loop search for the highest rate with p99 <= bound.
    Critical {
        /// Page backing asked for.
        page_mode: TablePages,
        /// Open-loop worker threads (usable CPUs).
        workers: usize,
        /// Rows.
        rows: u64,
        /// Bytes per row.
        row_bytes: u64,
        /// The p99 bound (ns).
        p99_bound_ns: u64,
    },
}

/// Windows and search settings (the profile's, copied into each point).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Unrecorded lead-in (s).
    pub warmup_s: f64,
    /// Closed-loop window (s).
    pub window_s: f64,
    /// Open-loop trial window (s).
    pub search_window_s: f64,
    /// Most search trials.
    pub search_max_trials: usize,
    /// First rate / closed-loop throughput.
    pub search_start_fraction: f64,
    /// Rate step before the first failure.
    pub search_step_factor: f64,
    /// Stop gap between best pass and lowest failure.
    pub search_resolution: f64,
    /// Confirmation trials at the rate found.
    pub confirm_trials: usize,
}

impl Timing {
    fn from_params(p: &Params) -> Self {
        Timing {
            warmup_s: p.warmup_s,
            window_s: p.window_s,
            search_window_s: p.search_window_s,
            search_max_trials: p.search_max_trials,
            search_start_fraction: p.search_start_fraction,
            search_step_factor: p.search_step_factor,
            search_resolution: p.search_resolution,
            confirm_trials: p.confirm_trials,
        }
    }

    fn knobs(&self, p99_bound_ns: u64) -> Result<Knobs, String> {
        let dur = |s: f64, what: &str| {
            Duration::try_from_secs_f64(s).map_err(|e| format!("{what} = {s}: {e}"))
        };
        Ok(Knobs {
            warmup: dur(self.warmup_s, "warmup_s")?,
            window: dur(self.window_s, "window_s")?,
            search_window: dur(self.search_window_s, "search_window_s")?,
            confirm_trials: self.confirm_trials,
            search: SearchParams {
                p99_bound_ns,
                start_fraction: self.search_start_fraction,
                step_factor: self.search_step_factor,
                resolution: self.search_resolution,
                max_trials: self.search_max_trials,
                min_achieved_fraction: 0.98,
                retry_failed: 1,
            },
        })
    }
}

/// Run-time form of [`Timing`].
#[derive(Debug, Clone)]
struct Knobs {
    warmup: Duration,
    window: Duration,
    search: SearchParams,
    search_window: Duration,
    confirm_trials: usize,
}

/// Client counts: 1, 2, 4, ... up to `cap`, plus `cpus` and `cap` themselves, ascending.
pub fn client_counts(cpus: usize, cap: usize) -> Vec<usize> {
    let cap = cap.max(1);
    let mut v = Vec::new();
    let mut n = 1;
    while n < cap {
        v.push(n);
        n *= 2;
    }
    v.push(cap);
    if cpus <= cap {
        v.push(cpus.max(1));
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Estimated seconds to build the table and index of `rows` rows beyond their first touch: an
/// insert at a random place of the index a row, at the measured speed of a random step
/// ([`FixedWorkSpeed::random_inserts_s`]), and 20 ms of set-up. On a 2-vCPU Zen 2 VM the
/// build of 1,000,000 rows took 0.11 s (`build_s`) with its 160 MiB's first touch; with the
/// old 0.4 us a row, scaled by an in-cache shuffle's speed, it was planned at 1.35 s.
fn build_estimate_s(rows: u64, speed: &FixedWorkSpeed) -> f64 {
    0.02 + speed.random_inserts_s(rows)
}

/// Upper bound of one latency histogram's memory, bytes.
const HISTOGRAM_BYTES: u64 = 256 * 1024;

fn memory_bytes(rows: u64) -> u64 {
    let rows = rows as usize;
    ((Table::required_words(rows) + HashIndex::required_words(rows)) * 8) as u64
}

impl Family for ServicePointSelect {
    type Params = Params;
    type PointParams = PointParams;

    fn id(&self) -> &'static str {
        "service.point_select"
    }

    fn describe(&self) -> &'static str {
        "In-memory hash-table point selects: throughput and p50/p99 vs clients, max throughput at a p99 bound"
    }

    fn plan(&self, p: Params, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        let mut out = FamilyPoints::default();
        let cpus = input.env.cpu_count().max(1);
        let cap = p.max_clients.max(1);
        let mem = memory_bytes(p.rows);
        // the table and index build: a random insert a row at this machine's measured speed
        // (the table's first touch is the point's fixed work below)
        let build = build_estimate_s(p.rows, input.speed());
        // closed-loop runs of a point: the profile's minimum samples plus the usual adaptive
        // extra one (as PlanInput::estimate_point_s)
        let runs = ((input.settings.samples_min + 1).min(input.settings.samples_max)).max(1) as f64;
        let timing = Timing::from_params(&p);
        for &mode in &p.page_modes {
            let label = mode.label();
            let thp_never = mode == TablePages::Thp
                && input
                    .env
                    .thp_enabled
                    .known()
                    .is_some_and(|s| s.as_str() == "never");
            for n in client_counts(cpus, cap) {
                let params = PointParams {
                    test: Test::Closed {
                        page_mode: mode,
                        clients: n,
                        rows: p.rows,
                        row_bytes: ROW_BYTES as u64,
                    },
                    timing: timing.clone(),
                };
                let id = format!("closed/pages={label}/clients={n}");
                if thp_never {
                    out.skipped
                        .push(input.skip(id, &params, "THP disabled (enabled = never)"));
                    continue;
                }
                // Each client keeps a latency histogram (about 220 KiB at 3 significant
                // figures over 1 ns .. 60 s); its first touch is part of the measured start of
                // a worker thread (`spawn_s`), so the fixed work counts the table only. Every
                // sample is a closed-loop run of its own: the clients start, warm up, run the
                // window and, past the CPUs, wait a slice each to see the stop (`drain`).
                let mut point = input.point(id, n, &params, mem + n as u64 * HISTOGRAM_BYTES);
                let speed = input.speed();
                let past_cpus = n.saturating_sub(cpus) as f64;
                let per_run = p.warmup_s
                    + p.window_s
                    + n as f64 * speed.spawn_s
                    + past_cpus * speed.drain_s();
                point.estimated_s = build + input.fixed_work_s(mem, 0) + runs * per_run;
                out.points.push(point);
            }
            let params = PointParams {
                test: Test::Critical {
                    page_mode: mode,
                    workers: cpus,
                    rows: p.rows,
                    row_bytes: ROW_BYTES as u64,
                    p99_bound_ns: p.p99_bound_ns,
                },
                timing: timing.clone(),
            };
            let id = format!("critical/pages={label}");
            if thp_never {
                out.skipped
                    .push(input.skip(id, &params, "THP disabled (enabled = never)"));
                continue;
            }
            let mut point = input.point(id, cpus, &params, mem);
            let trials = (p.search_max_trials + p.confirm_trials) as f64;
            point.estimated_s = build
                + input.fixed_work_s(mem, cpus)
                + p.warmup_s
                + p.window_s
                + trials * (p.warmup_s + p.search_window_s * 1.2);
            out.points.push(point);
        }
        Ok(out)
    }

    fn run_point(&self, params: PointParams, point: &Point, ctx: &RunContext<'_>) -> PointOutcome {
        let bound = match params.test {
            Test::Critical { p99_bound_ns, .. } => p99_bound_ns,
            Test::Closed { .. } => 0,
        };
        let profile = match params.timing.knobs(bound) {
            Ok(k) => k,
            Err(error) => return PointOutcome::Failed { error },
        };
        match params.test {
            Test::Closed {
                page_mode,
                clients,
                rows,
                ..
            } => run_closed(ctx, &profile, page_mode, clients, rows),
            Test::Critical {
                page_mode,
                workers,
                rows,
                p99_bound_ns,
                ..
            } => run_critical(
                ctx,
                &profile,
                page_mode,
                &point.cpus[..workers.min(point.cpus.len())],
                rows,
                p99_bound_ns,
            ),
        }
    }
}

fn latency_metric(
    name: &str,
    windows: &[ClosedLoopPoint],
    f: fn(&crate::service::histogram::LatencySummary) -> u64,
) -> Metric {
    Metric::latency(
        name,
        windows
            .iter()
            .filter_map(|w| w.latency.as_ref().map(|l| f(l) as f64))
            .collect(),
    )
}

fn run_closed(
    ctx: &RunContext<'_>,
    k: &Knobs,
    mode: TablePages,
    clients: usize,
    rows: u64,
) -> PointOutcome {
    let built = match build(mode, rows) {
        Ok(b) => b,
        Err(reason) => return unavailable(mode, reason),
    };
    let clock = MonotonicClock::new();
    let op = |r: u64| built.service.select_random(r);
    let first = Cell::new(true);
    let mut windows: Vec<ClosedLoopPoint> = Vec::new();
    let samples = ctx.repeat(|| -> Result<f64, ServiceError> {
        let warmup = if first.replace(false) {
            k.warmup
        } else {
            Duration::ZERO
        };
        let w = run_closed_loop(&clock, clients, warmup, k.window, &op)?;
        let t = w.throughput_ops_per_s;
        windows.push(w);
        Ok(t)
    });
    let samples = match samples {
        Ok(s) => s,
        Err(e) => {
            return PointOutcome::Failed {
                error: e.to_string(),
            }
        }
    };
    let mut m = base_details(&built, mode);
    m.metrics = vec![
        Metric::throughput("throughput_ops_per_s", samples),
        latency_metric("latency_p50_ns", &windows, |l| l.p50_ns),
        latency_metric("latency_p99_ns", &windows, |l| l.p99_ns),
        latency_metric("latency_p999_ns", &windows, |l| l.p999_ns),
    ];
    PointOutcome::Measured(m.detail("clients", clients).detail("windows", &windows))
}

/// The open-loop search. Each worker both generates and serves its share of the arrivals, so
/// it is pinned to its own CPU of `cpus` (the point's placement): unpinned, two spinning
/// workers of a 2-CPU machine were found sharing one CPU, each then waiting whole scheduler
/// slices (milliseconds) for the other, which made every rate fail p99 <= 1 ms.
fn run_critical(
    ctx: &RunContext<'_>,
    k: &Knobs,
    mode: TablePages,
    cpus: &[hwsurvey_model::CpuId],
    rows: u64,
    p99_bound_ns: u64,
) -> PointOutcome {
    let built = match build(mode, rows) {
        Ok(b) => b,
        Err(reason) => return unavailable(mode, reason),
    };
    let clock = MonotonicClock::new();
    let op = |r: u64| built.service.select_random(crate::service::rng::mix64(r));
    let workers = cpus.len().max(1);
    let pins: std::sync::Mutex<Vec<Option<PinStatus>>> = std::sync::Mutex::new(vec![None; workers]);
    let pin = |w: usize| {
        if let Some(&cpu) = cpus.get(w) {
            let status = pin_current_thread(cpu);
            if let Ok(mut v) = pins.lock() {
                v[w] = Some(status);
            }
        }
    };
    let start = match run_closed_loop(&clock, workers, k.warmup, k.window, &op) {
        Ok(p) => p,
        Err(e) => {
            return PointOutcome::Failed {
                error: e.to_string(),
            }
        }
    };
    let search = SearchParams {
        p99_bound_ns,
        ..k.search
    };
    let trial = |rate: f64| -> Result<OpenLoopPoint, ServiceError> {
        if ctx.cancelled() {
            return Err(ServiceError::BadConfig(format!(
                "cancelled ({})",
                hwsurvey_engine::signals::interrupt_cause()
            )));
        }
        let cfg = OpenLoopConfig {
            rate_ops_per_s: rate,
            workers,
            warmup: k.warmup,
            duration: k.search_window,
            max_lag: k.search_window,
            latency_bound_ns: p99_bound_ns,
        };
        run_open_loop(&clock, &cfg, &op, &pin)
    };
    let outcome = match search_critical_rate(start.throughput_ops_per_s, &search, trial) {
        Ok(o) => o,
        Err(e) => {
            return PointOutcome::Failed {
                error: e.to_string(),
            }
        }
    };
    // The rate found: the highest requested rate that passed.
    let found = outcome
        .trials
        .iter()
        .filter(|t| t.passed)
        .max_by(|a, b| {
            a.point
                .requested_rate_ops_per_s
                .total_cmp(&b.point.requested_rate_ops_per_s)
        })
        .cloned();
    let mut confirmations: Vec<RateTrial> = Vec::new();
    if let Some(f) = &found {
        for _ in 0..k.confirm_trials {
            if ctx.cancelled() || ctx.time_left() < k.search_window * 2 {
                break;
            }
            match trial(f.point.requested_rate_ops_per_s) {
                Ok(point) => confirmations.push(RateTrial::judged(point, &search)),
                Err(e) => {
                    return PointOutcome::Failed {
                        error: e.to_string(),
                    }
                }
            }
        }
    }
    let pins: Vec<PinStatus> = pins
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .flatten()
        .collect();
    let Some(found) = found else {
        let reason = no_pass_reason(&outcome);
        let details = base_details(&built, mode)
            .detail("workers", workers)
            .detail("workers_pinned", &pins)
            .detail("p99_bound_ns", p99_bound_ns)
            .detail("start_closed_loop", &start)
            .detail("search", &outcome)
            .detail("no_pass_reason", &reason)
            .details;
        return PointOutcome::SkippedAfterTrying { reason, details };
    };
    let at_rate: Vec<&RateTrial> = std::iter::once(&found)
        .chain(confirmations.iter())
        .collect();
    let mut m = base_details(&built, mode);
    m.pins = pins;
    m.metrics = vec![
        Metric::throughput(
            "critical_throughput_ops_per_s",
            at_rate
                .iter()
                .map(|t| t.point.achieved_rate_ops_per_s)
                .collect(),
        ),
        Metric::latency(
            "critical_p99_ns",
            at_rate
                .iter()
                .filter_map(|t| t.point.latency.as_ref().map(|l| l.p99_ns as f64))
                .collect(),
        ),
    ];
    PointOutcome::Measured(
        m.detail("workers", workers)
            .detail("p99_bound_ns", p99_bound_ns)
            .detail("start_closed_loop", &start)
            .detail("search", &outcome)
            .detail(
                "confirmations_passed",
                confirmations.iter().filter(|t| t.passed).count(),
            )
            .detail("confirmations", &confirmations),
    )
}

/// Why a `critical/...` point's search found no rate meeting the criteria: the bound, why the
/// search stopped, and the lowest-rate trial (the easiest one) with every criterion it failed
/// and its numbers (rates, abandoned requests, p50/p99/p999, stalls). The point is then
/// skipped with every trial kept in its details, never "measured" with empty samples.
pub fn no_pass_reason(outcome: &crate::service::search::SearchOutcome) -> String {
    let lowest = outcome.trials.iter().min_by(|a, b| {
        a.point
            .requested_rate_ops_per_s
            .total_cmp(&b.point.requested_rate_ops_per_s)
    });
    let n = outcome.trials.len();
    let head = format!(
        "no open-loop rate kept p99 <= {} ns ({n} trials, search stopped: {})",
        outcome.p99_bound_ns, outcome.stop
    );
    match lowest {
        Some(t) => format!("{head}; lowest rate tried: {}", t.describe()),
        None => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_rate_under_the_bound_names_the_criterion_and_its_numbers() {
        use crate::service::histogram::LatencyRecorder;
        use crate::service::search::{SearchOutcome, SearchStop};
        let params = SearchParams {
            p99_bound_ns: 1_000_000,
            start_fraction: 0.25,
            step_factor: 1.5,
            resolution: 0.05,
            max_trials: 6,
            min_achieved_fraction: 0.98,
            retry_failed: 1,
        };
        let trial = |rate: f64, p99_ms: u64, achieved: f64, stalled_ns: u64| {
            let mut rec = LatencyRecorder::new();
            for i in 0..1000u64 {
                rec.record_ns(if i < 980 { 500 } else { p99_ms * 1_000_000 });
            }
            RateTrial::judged(
                OpenLoopPoint {
                    requested_rate_ops_per_s: rate,
                    workers: 2,
                    window_s: 0.3,
                    issued_ops: 1000,
                    abandoned_ops: 0,
                    achieved_rate_ops_per_s: achieved,
                    max_send_lag_ns: 0,
                    stalls: 7,
                    stalled_ns,
                    max_stall_ns: 4_000_000,
                    // The 7 stalls, each less its first millisecond (the bound).
                    stalled_past_bound_ns: stalled_ns - 7_000_000,
                    latency: rec.summary(),
                },
                &params,
            )
        };
        let outcome = SearchOutcome {
            p99_bound_ns: 1_000_000,
            closed_loop_max_ops_per_s: 400_000.0,
            critical_throughput_ops_per_s: None,
            lowest_failing_rate_ops_per_s: Some(44_444.0),
            stop: SearchStop::Stalled,
            trials: vec![
                trial(100_000.0, 3, 100_000.0, 12_000_000),
                trial(44_444.0, 5, 40_000.0, 18_000_000),
            ],
        };
        assert_eq!(
            no_pass_reason(&outcome),
            "no open-loop rate kept p99 <= 1000000 ns (2 trials, search stopped: the workers \
             were off their CPUs for longer than the bound, past it for >= 1 % of two trials \
             in a row (a busy machine): no lower rate can meet p99); lowest rate tried: \
             44444/s requested, 40000/s achieved, 0 abandoned, p50 500 ns, p99 5001215 ns, \
             p999 5001215 ns; workers stalled 3.0 % of the window (7 stalls > 50 us, longest \
             4.00 ms; 1.83 % past the bound); failed: achieved 40000/s < required 43555/s; \
             p99 5001215 ns > bound 1000000 ns"
        );
    }

    #[test]
    fn client_counts_reach_the_oversubscribed_cap() {
        assert_eq!(client_counts(2, 16), vec![1, 2, 4, 8, 16]);
        assert_eq!(client_counts(6, 48), vec![1, 2, 4, 6, 8, 16, 32, 48]);
        assert_eq!(
            client_counts(128, 512),
            vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
        );
        assert_eq!(client_counts(1, 8), vec![1, 2, 4, 8]);
    }
}

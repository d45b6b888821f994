//! What a point can be on the machine its own file records ([`check_points`]): a file whose
//! 2-CPU machine ran a point of 1048576 threads, placed workers on CPUs 4095 and 100000, or
//! measured 94.6 T integer operations per second on one thread was shown as true ("fp peak
//! 2.33G @1048576"). The loader refuses such a file with the field's JSON path.
//!
//! The bounds, each from the file's own machine document and run environment:
//!
//! - **threads**: a point runs at most the machine's online CPUs x the profile's
//!   `oversubscription_factor` threads (`machine.cpu.online`, or the run's
//!   `environment.usable_cpus` where it names more, each of them one of the possible CPUs);
//!   a closed-loop service test's client threads
//!   (`params.clients` equal to the threads: the profile sets them, up to
//!   [`MAX_THREADS_PER_POINT`], whatever the CPUs) at most [`MAX_THREADS_PER_POINT`]; no point
//!   more than [`MAX_THREADS_PER_POINT`] (the engine's cap);
//! - **CPUs**: every CPU a point places a worker on, and every usable CPU of the run, is one
//!   of the machine's possible CPUs (`machine.cpu.possible`, else the online ones);
//! - **rates** (every sample of a metric of a measured point): the point's distinct CPUs x a
//!   clock bound x the most a CPU does in one cycle: [`BYTES_PER_CYCLE`] bytes for a
//!   `*_bytes_per_s` metric, [`OPS_PER_CYCLE`] for any other rate (`*_per_s`, `iops`); a
//!   latency (`*_ns`, not `*_ns_per_*`) at least one cycle of the clock bound. The clock bound
//!   is [`TURBO_FACTOR`] x the highest clock the file records (the nominal clock
//!   `machine.cpu.nominal_clock`, cpufreq's `cpuinfo_max_freq` of a core kind), at most
//!   [`MAX_CLOCK_HZ`], which is also the bound where the file records no clock;
//! - **memory bandwidth**: a `bandwidth_bytes_per_s` of a point whose `working_set_bytes` is
//!   at least [`MEMORY_POINT_LLC_MULTIPLE`] x the last-level cache
//!   (`environment.llc.total_size_bytes`) at most [`MEMORY_PEAK_FACTOR`] x the theoretical
//!   peak of the populated channels (`machine.memory.population.peak_bandwidth`), where both
//!   are known.
//!
//! Each bound lies far above what hardware delivers (a Zen 4 core retires about 1 integer
//! operation of cpu.scaling's kernel a cycle and reads at most 64 bytes a cycle from L1), so a
//! real measurement never meets it, and a figure edited by orders of magnitude always does.

use hwsurvey_model::{CpuId, CpuSet};
use serde_json::Value;

use crate::consistency::{shown_number, FieldProblem};
use crate::file::ResultFile;
use crate::plan::Point;

/// The most threads one point may have, whatever the machine: 4096 (the engine's cap of a
/// profile's thread counts and oversubscription, `hwsurvey_engine::profile`).
pub const MAX_THREADS_PER_POINT: usize = 4096;

/// The clock bound where a file records no clock, and the most any bound is, Hz: 10 GHz
/// (the fastest shipping core's turbo clock is 6.2 GHz; overclocking records about 9 GHz).
pub const MAX_CLOCK_HZ: f64 = 10e9;

/// The clock bound is this multiple of the highest clock a file records: 5 (a mobile part's
/// turbo clock is up to about 4.3 times its base clock, which the TSC rate states).
pub const TURBO_FACTOR: f64 = 5.0;

/// Bytes one CPU moves in one cycle at most, for a `*_bytes_per_s` bound: 512 (more than twice
/// an AVX-512 core's two 64-byte loads and one store a cycle).
pub const BYTES_PER_CYCLE: f64 = 512.0;

/// Operations one CPU completes in one cycle at most, for any other rate: 64 (an AVX-512
/// core's two 16-lane fused multiply-adds a cycle count as 64 floating-point operations).
pub const OPS_PER_CYCLE: f64 = 64.0;

/// A memory point's bandwidth may be at most this multiple of the theoretical peak: 2
/// (STREAM credits fewer bytes than the channels move; a working set of 4x the LLC leaves
/// at most a quarter in cache).
pub const MEMORY_PEAK_FACTOR: f64 = 2.0;

/// A point is a memory point when its working set is at least this multiple of the total
/// last-level cache (the profile's rule for "memory" points).
pub const MEMORY_POINT_LLC_MULTIPLE: u64 = 4;

/// The facts of a file's machine the bounds rest on.
struct Machine {
    /// The number of CPUs the run had and the field it comes from.
    online: Option<(usize, &'static str)>,
    /// Possible CPUs and the field they come from.
    possible: Option<(CpuSet, &'static str)>,
    /// The clock bound, Hz, and how it was derived.
    clock_hz: f64,
    clock_words: String,
    /// The theoretical memory peak, bytes per second.
    peak_bytes_per_s: Option<f64>,
    /// The total last-level cache, bytes.
    llc_total_bytes: Option<u64>,
    /// The profile's oversubscription factor (at least 1).
    factor: usize,
}

impl Machine {
    fn of(file: &ResultFile) -> Machine {
        let cpu = &file.machine.cpu;
        let online = cpu.online.known().cloned();
        let usable = &file.environment.usable_cpus;
        // the CPUs the run had: the online ones when the probe ran, or the run's usable ones
        // when more (a file whose CPUs went offline after its run)
        let online_count = match &online {
            Some(o) if o.len() >= usable.len() => Some((o.len(), "machine.cpu.online")),
            _ if !usable.is_empty() => Some((usable.len(), "environment.usable_cpus")),
            Some(o) => Some((o.len(), "machine.cpu.online")),
            None => None,
        };
        let possible = cpu
            .possible
            .known()
            .cloned()
            .map(|s| (s, "machine.cpu.possible"))
            .or_else(|| online.map(|s| (s, "machine.cpu.online")));
        let nominal = cpu
            .nominal_clock
            .known()
            .map(|c| c.hz)
            .filter(|hz| hz.is_finite() && *hz > 0.0);
        let cpufreq = cpu
            .kinds
            .iter()
            .filter_map(|k| k.max_freq_khz)
            .map(|khz| khz as f64 * 1e3)
            .filter(|hz| hz.is_finite() && *hz > 0.0)
            .reduce(f64::max);
        let highest = match (nominal, cpufreq) {
            (Some(n), Some(c)) if c >= n => Some((c, "cpufreq's cpuinfo_max_freq")),
            (Some(n), _) => Some((n, "the nominal clock")),
            (None, Some(c)) => Some((c, "cpufreq's cpuinfo_max_freq")),
            (None, None) => None,
        };
        let (clock_hz, clock_words) = match highest {
            Some((hz, what)) if hz * TURBO_FACTOR < MAX_CLOCK_HZ => (
                hz * TURBO_FACTOR,
                format!(
                    "{} GHz, {TURBO_FACTOR} x {what} {} GHz",
                    shown_number(hz * TURBO_FACTOR / 1e9),
                    shown_number(hz / 1e9)
                ),
            ),
            Some(_) => (MAX_CLOCK_HZ, "10 GHz, above any CPU's clock".to_string()),
            None => (
                MAX_CLOCK_HZ,
                "10 GHz, above any CPU's clock (the file records none)".to_string(),
            ),
        };
        let peak_bytes_per_s = file
            .machine
            .memory
            .population
            .known()
            .and_then(|p| p.peak_bandwidth.known())
            .map(|p| p.bandwidth_bytes_per_s as f64)
            .filter(|b| *b > 0.0);
        Machine {
            online: online_count,
            possible,
            clock_hz,
            clock_words,
            peak_bytes_per_s,
            llc_total_bytes: file.environment.llc.known().map(|l| l.total_size_bytes),
            factor: file.profile.run.oversubscription_factor.max(1),
        }
    }
}

/// Whether `p` is a closed-loop service test whose threads are its clients
/// (`params.clients` equal to the threads).
fn client_threads(p: &Point) -> bool {
    p.params.get("clients").and_then(Value::as_u64) == Some(p.threads as u64)
}

/// Threads and CPUs of one point (`tests[i].point` or `plan.families[j].points[k]`) against
/// the machine.
fn check_point(p: &Point, field: &str, m: &Machine) -> Result<(), FieldProblem> {
    let threads = p.threads;
    let most = match m.online {
        Some((online, _)) if !client_threads(p) => (online * m.factor).min(MAX_THREADS_PER_POINT),
        _ => MAX_THREADS_PER_POINT,
    };
    if threads > most {
        let why = match m.online {
            Some((online, from)) if !client_threads(p) => format!(
                "a point runs at most {online} online CPUs ({from}) x {} (the profile's \
                 oversubscription_factor) threads",
                m.factor
            ),
            _ => format!("a point runs at most {MAX_THREADS_PER_POINT} threads"),
        };
        return Err(FieldProblem::new(
            format!("{field}.threads"),
            format!("{threads} threads on this file's machine: {why}"),
        ));
    }
    if let Some((possible, from)) = &m.possible {
        if let Some((k, cpu)) = p
            .cpus
            .iter()
            .enumerate()
            .find(|(_, c)| !possible.contains(**c))
        {
            return Err(FieldProblem::new(
                format!("{field}.cpus[{k}]"),
                format!(
                    "CPU {cpu} is not one of the machine's CPUs ({from} {})",
                    possible.to_list_string()
                ),
            ));
        }
    }
    Ok(())
}

/// What bounds a metric, by its name's unit.
enum Bound {
    /// A rate: at most this many per CPU-cycle.
    PerCycle(f64, &'static str),
    /// A latency: at least one cycle.
    Latency,
    /// Not bounded here (a clock, CPU time per I/O).
    None,
}

fn bound_of(metric: &str) -> Bound {
    if metric.ends_with("_bytes_per_s") || metric == "bytes_per_s" {
        Bound::PerCycle(BYTES_PER_CYCLE, "bytes")
    } else if metric.ends_with("_hz") {
        Bound::None
    } else if metric.ends_with("_per_s") || metric == "iops" || metric.ends_with("_iops") {
        Bound::PerCycle(OPS_PER_CYCLE, "operations")
    } else if metric.ends_with("_ns") && !metric.contains("_ns_per_") {
        Bound::Latency
    } else {
        Bound::None
    }
}

/// The samples of test `i` against the rate, latency and memory bounds.
fn check_rates(file: &ResultFile, i: usize, m: &Machine) -> Result<(), FieldProblem> {
    let t = &file.tests[i];
    let mut distinct: Vec<CpuId> = t.point.cpus.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let cpus = match m.online {
        Some((online, _)) => distinct.len().min(online),
        None => distinct.len(),
    }
    .max(1);
    let working_set = t
        .point
        .params
        .get("working_set_bytes")
        .and_then(Value::as_u64);
    let memory_point = match (working_set, m.llc_total_bytes) {
        (Some(ws), Some(llc)) if llc > 0 => ws >= MEMORY_POINT_LLC_MULTIPLE.saturating_mul(llc),
        _ => false,
    };
    for (j, metric) in t.metrics.iter().enumerate() {
        let field = |k: usize| format!("tests[{i}].metrics[{j}].samples[{k}]");
        match bound_of(&metric.name) {
            Bound::PerCycle(per_cycle, what) => {
                let most = cpus as f64 * m.clock_hz * per_cycle;
                if let Some((k, v)) = metric.samples.iter().enumerate().find(|(_, v)| **v > most) {
                    return Err(FieldProblem::new(
                        field(k),
                        format!(
                            "{} {} is more than this file's machine can do: {cpus} CPU{} x {} \
                             x {per_cycle} {what} a cycle = {}",
                            shown_number(*v),
                            metric.name,
                            if cpus == 1 { "" } else { "s" },
                            m.clock_words,
                            shown_number(most)
                        ),
                    ));
                }
                if let (true, "bandwidth_bytes_per_s", Some(peak)) =
                    (memory_point, metric.name.as_str(), m.peak_bytes_per_s)
                {
                    let most = peak * MEMORY_PEAK_FACTOR;
                    if let Some((k, v)) =
                        metric.samples.iter().enumerate().find(|(_, v)| **v > most)
                    {
                        return Err(FieldProblem::new(
                            field(k),
                            format!(
                                "{} bytes/s from a working set of {} bytes (4 x the last-level \
                                 cache or more) is more than {MEMORY_PEAK_FACTOR} x the \
                                 memory's theoretical peak of {} bytes/s \
                                 (machine.memory.population.peak_bandwidth)",
                                shown_number(*v),
                                working_set.unwrap_or_default(),
                                shown_number(peak)
                            ),
                        ));
                    }
                }
            }
            Bound::Latency => {
                let least = 1e9 / m.clock_hz;
                if let Some((k, v)) = metric.samples.iter().enumerate().find(|(_, v)| **v < least) {
                    return Err(FieldProblem::new(
                        field(k),
                        format!(
                            "{} ns is less than one cycle of this file's machine: {} ns at {}",
                            shown_number(*v),
                            shown_number(least),
                            m.clock_words
                        ),
                    ));
                }
            }
            Bound::None => {}
        }
    }
    Ok(())
}

/// Checks every point of `file` against its own machine ([`ResultFile::machine`]):
/// threads, CPUs and, for the tests, every sample's rate or latency (see the module docs).
///
/// Err: the first problem, with the field's JSON path.
pub fn check_points(file: &ResultFile) -> Result<(), FieldProblem> {
    let m = Machine::of(file);
    if let Some((possible, from)) = &m.possible {
        if let Some(cpu) = file
            .environment
            .usable_cpus
            .iter()
            .find(|c| !possible.contains(*c))
        {
            return Err(FieldProblem::new(
                "environment.usable_cpus",
                format!(
                    "CPU {cpu} is not one of the machine's CPUs ({from} {})",
                    possible.to_list_string()
                ),
            ));
        }
    }
    for (i, t) in file.tests.iter().enumerate() {
        check_point(&t.point, &format!("tests[{i}].point"), &m)?;
        check_rates(file, i, &m)?;
    }
    for (j, f) in file.plan.families.iter().enumerate() {
        for (k, p) in f.points.iter().enumerate() {
            check_point(p, &format!("plan.families[{j}].points[{k}]"), &m)?;
        }
    }
    Ok(())
}

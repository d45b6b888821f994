//! `c2c.latency`: cache-line ping-pong round trip between two pinned CPUs, for one representative
//! pair per topology class instead of all n^2 pairs.
//!
//! A pair's class is the innermost topology level the two CPUs share ([`SharedLevel`]: core, i.e.
//! SMT siblings; cluster; die; package; nothing) together with whether they sit in the same NUMA
//! node: a 2-socket EPYC 7451 thus has "package, same node" (inside one CCX/node) and "package,
//! other node" pairs besides SMT siblings and cross-package ones. The representative of a class is
//! its lowest-numbered pair (lowest first CPU, then lowest second CPU).
//!
//! Levels the kernel reports but that do not divide anything are ignored: x86 kernels print
//! `cluster_id` 65535 for every CPU, and older kernels `die_id` 0 everywhere; such a level would
//! only rename the next one.
//!
//! The round trip ([`ping_pong`]): one 64-bit counter on a fresh, 128-byte-aligned line (so the
//! adjacent-line prefetcher pulls in nothing shared); the initiator writes an odd value, the
//! responder waits for it and writes the next even value, the initiator waits for that; repeat.
//! Loads and stores are `Relaxed`: only cache coherence is measured, no fences.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Where one CPU sits, as far as pair classification needs. Ids are the kernel's
/// (`/sys/devices/system/cpu/cpuN/topology/{physical_package_id,die_id,cluster_id,core_id}`,
/// node from `/sys/devices/system/node/nodeN/cpulist`); they are labels, not dense indices
/// (Kunpeng 920 reports packages 36 and 8442).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairCpu {
    /// OS CPU number.
    pub cpu: u32,
    /// Package id, if known.
    pub package: Option<i64>,
    /// Die id, if known.
    pub die: Option<i64>,
    /// Cluster id, if known (65535 / -1 mean "none" on x86 and are treated as unknown).
    pub cluster: Option<i64>,
    /// Core id, if known (unique within a package; SMT siblings share it).
    pub core: Option<i64>,
    /// NUMA node, if known.
    pub node: Option<u32>,
}

/// The innermost topology level two CPUs share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SharedLevel {
    /// Same core: SMT siblings.
    Core,
    /// Same cluster (e.g. Kunpeng 920's 4-core clusters), different cores.
    Cluster,
    /// Same die, different clusters (or different cores where clusters are unknown).
    Die,
    /// Same package, different dies (or different cores where dies are unknown).
    Package,
    /// Different packages.
    Machine,
}

/// A topology class of CPU pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PairClass {
    /// Innermost shared level.
    pub shared: SharedLevel,
    /// Both CPUs in the same NUMA node (`None` when a node is unknown).
    pub same_node: Option<bool>,
}

impl PairClass {
    /// Stable label: `smt`, `cluster`, `die`, `package`, `cross_package`, with `/other_node` when
    /// the pair spans NUMA nodes inside a package, `/same_node` when it stays in one node across
    /// packages (e.g. Xeon X7550's node 0 holding two packages).
    pub fn label(&self) -> String {
        let base = match self.shared {
            SharedLevel::Core => "smt",
            SharedLevel::Cluster => "cluster",
            SharedLevel::Die => "die",
            SharedLevel::Package => "package",
            SharedLevel::Machine => "cross_package",
        };
        match (self.shared, self.same_node) {
            (SharedLevel::Machine, Some(true)) => format!("{base}/same_node"),
            (SharedLevel::Machine, _) => base.to_string(),
            (_, Some(false)) => format!("{base}/other_node"),
            _ => base.to_string(),
        }
    }
}

/// A representative pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pair {
    /// Class of the pair.
    pub class: PairClass,
    /// Class label ([`PairClass::label`]).
    pub label: String,
    /// Initiating CPU (lower number).
    pub cpu_a: u32,
    /// Responding CPU.
    pub cpu_b: u32,
}

/// The "no cluster" values x86 kernels print in `cluster_id` (u16 -1, and -1).
fn real_id(v: Option<i64>) -> Option<i64> {
    v.filter(|&x| x >= 0 && x != 0xFFFF && x != 0xFFFF_FFFF)
}

/// Keeps a level only if it divides its parent somewhere: some two CPUs with the same parent key
/// have different (known) values.
fn informative<K: Ord, F: Fn(&PairCpu) -> (K, Option<i64>)>(cpus: &[PairCpu], key: F) -> bool {
    let mut seen: BTreeMap<K, i64> = BTreeMap::new();
    for c in cpus {
        let (parent, v) = key(c);
        if let Some(v) = v {
            match seen.get(&parent) {
                Some(&prev) if prev != v => return true,
                Some(_) => {}
                None => {
                    seen.insert(parent, v);
                }
            }
        }
    }
    false
}

/// Classifies every pair and returns one representative per class, innermost class first.
/// CPUs with an unknown package are treated as sharing nothing known with anybody beyond
/// what their other ids say (they never form Core/Cluster/Die pairs).
pub fn representative_pairs(cpus: &[PairCpu]) -> Vec<Pair> {
    let mut cpus: Vec<PairCpu> = cpus.to_vec();
    cpus.sort_by_key(|c| c.cpu);
    cpus.dedup_by_key(|c| c.cpu);
    for c in &mut cpus {
        c.cluster = real_id(c.cluster);
        c.die = real_id(c.die);
    }
    let use_die = informative(&cpus, |c| (c.package, c.die));
    let use_cluster = informative(&cpus, |c| {
        ((c.package, if use_die { c.die } else { None }), c.cluster)
    });
    let mut best: BTreeMap<PairClass, (u32, u32)> = BTreeMap::new();
    for (i, a) in cpus.iter().enumerate() {
        for b in &cpus[i + 1..] {
            let class = classify(a, b, use_die, use_cluster);
            best.entry(class).or_insert((a.cpu, b.cpu));
        }
    }
    let mut pairs: Vec<(PairClass, (u32, u32))> = best.into_iter().collect();
    // innermost level first; inside a level the same-node pair before the other-node one.
    pairs.sort_by_key(|(class, _)| {
        (
            class.shared,
            class.same_node != Some(true),
            class.same_node.is_none(),
        )
    });
    pairs
        .into_iter()
        .map(|(class, (cpu_a, cpu_b))| Pair {
            class,
            label: class.label(),
            cpu_a,
            cpu_b,
        })
        .collect()
}

fn classify(a: &PairCpu, b: &PairCpu, use_die: bool, use_cluster: bool) -> PairClass {
    let same = |x: Option<i64>, y: Option<i64>| matches!((x, y), (Some(p), Some(q)) if p == q);
    let same_package = same(a.package, b.package);
    let same_die = same_package && (!use_die || same(a.die, b.die));
    let same_cluster = same_die && use_cluster && same(a.cluster, b.cluster);
    let same_core = same_die && same(a.core, b.core) && (!use_cluster || a.cluster == b.cluster);
    let shared = if same_core {
        SharedLevel::Core
    } else if same_cluster {
        SharedLevel::Cluster
    } else if same_die && use_die {
        SharedLevel::Die
    } else if same_package {
        SharedLevel::Package
    } else {
        SharedLevel::Machine
    };
    let same_node = match (a.node, b.node) {
        (Some(x), Some(y)) => Some(x == y),
        _ => None,
    };
    PairClass { shared, same_node }
}

/// A 64-bit counter alone on a 128-byte line pair.
#[repr(C, align(128))]
struct Line {
    value: AtomicU64,
}

/// Spins until `v` holds `want` or [`STOP_VALUE`]; returns the value seen. After
/// [`SPINS_BEFORE_YIELD`] failed looks it yields the CPU between looks, so two threads that
/// ended up on one CPU (pinning refused, qemu-user) still progress; pinned to distinct CPUs the
/// answer arrives long before that.
#[inline(always)]
fn wait_for(v: &AtomicU64, want: u64) -> u64 {
    let mut spins = 0u32;
    loop {
        let seen = v.load(Ordering::Relaxed);
        if seen == want || seen == STOP_VALUE {
            return seen;
        }
        spins += 1;
        if spins >= SPINS_BEFORE_YIELD {
            std::thread::yield_now();
        }
    }
}

/// The line's value by which the initiator tells the responder that a sample ended early
/// (its time cap was reached).
const STOP_VALUE: u64 = u64::MAX;

/// Round trips between two looks at the clock by the initiator of a time-capped sample.
const ROUND_TRIPS_PER_CLOCK_LOOK: u64 = 1024;

/// Failed looks at the line before [`wait_for`] starts yielding (far above any cache-line
/// transfer: ~100 ns per look at most).
pub const SPINS_BEFORE_YIELD: u32 = 1 << 16;

/// Result of one ping-pong sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PingPong {
    /// Round trips completed.
    pub round_trips: u64,
    /// Wall time of the initiator's loop, nanoseconds.
    pub elapsed_ns: u64,
    /// elapsed / round trips, nanoseconds.
    pub round_trip_ns: f64,
}

/// Errors of a ping-pong run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PingPongError {
    /// Zero round trips asked.
    #[error("ping-pong needs at least one round trip")]
    NoRounds,
    /// The counter ended at the wrong value (a lost or torn update).
    #[error("ping-pong counter ended at {got}, expected {expected}")]
    Corrupt {
        /// Final counter value.
        got: u64,
        /// 2 x round trips.
        expected: u64,
    },
    /// A worker thread panicked or could not be started.
    #[error("ping-pong thread failed: {0}")]
    Thread(String),
}

/// Runs `round_trips` ping-pong round trips between two threads, or fewer when `time_cap` is
/// given and passes first (the initiator looks at the clock every
/// [`ROUND_TRIPS_PER_CLOCK_LOOK`] round trips, then stops the responder). `pin(0)` is called
/// first in the initiator thread, `pin(1)` in the responder, before a barrier; the caller's
/// closure pins to the pair's CPUs (and may record the outcome). A fresh line is allocated per
/// call.
///
/// The time cap keeps a sample near its intended length when the pair runs slower than in
/// the calibration run (issue 13: on this 2-vCPU VM a calibrated sample of 2.5 million round
/// trips took 2.6 s instead of 0.3 s, because both vCPUs were descheduled now and then).
///
/// Errors: [`PingPongError::NoRounds`] for zero round trips, [`PingPongError::Corrupt`] when
/// the two threads disagree on the count, [`PingPongError::Thread`] when the responder could
/// not start or panicked.
pub fn ping_pong<P>(
    round_trips: u64,
    time_cap: Option<Duration>,
    pin: &P,
) -> Result<PingPong, PingPongError>
where
    P: Fn(usize) + Sync,
{
    if round_trips == 0 {
        return Err(PingPongError::NoRounds);
    }
    let line = Box::new(Line {
        value: AtomicU64::new(0),
    });
    let line = &*line;
    let barrier = Barrier::new(2);
    let barrier = &barrier;
    let (done, replies, elapsed) = std::thread::scope(|s| {
        let responder = std::thread::Builder::new()
            .name("c2c-responder".into())
            .spawn_scoped(s, move || {
                pin(1);
                barrier.wait();
                let mut replies = 0u64;
                for i in 0..round_trips {
                    let want = 2 * i + 1;
                    if wait_for(&line.value, want) == STOP_VALUE {
                        break;
                    }
                    line.value.store(want + 1, Ordering::Relaxed);
                    replies += 1;
                }
                replies
            })
            .map_err(|e| PingPongError::Thread(e.to_string()))?;
        pin(0);
        barrier.wait();
        let start = Instant::now();
        let mut done = 0u64;
        for i in 0..round_trips {
            line.value.store(2 * i + 1, Ordering::Relaxed);
            wait_for(&line.value, 2 * i + 2);
            done = i + 1;
            if done.is_multiple_of(ROUND_TRIPS_PER_CLOCK_LOOK)
                && done < round_trips
                && time_cap.is_some_and(|cap| start.elapsed() >= cap)
            {
                line.value.store(STOP_VALUE, Ordering::Relaxed);
                break;
            }
        }
        let elapsed = start.elapsed();
        let replies = responder
            .join()
            .map_err(|_| PingPongError::Thread("responder panicked".into()))?;
        Ok::<(u64, u64, Duration), PingPongError>((done, replies, elapsed))
    })?;
    let got = line.value.load(Ordering::Relaxed);
    let finished = done == round_trips && got == 2 * round_trips;
    let stopped = done < round_trips && got == STOP_VALUE;
    if replies != done || !(finished || stopped) {
        return Err(PingPongError::Corrupt {
            got,
            expected: 2 * round_trips,
        });
    }
    let elapsed_ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
    Ok(PingPong {
        round_trips: done,
        elapsed_ns,
        round_trip_ns: elapsed_ns as f64 / done as f64,
    })
}

// ---------------------------------------------------------------------------------------------
// The family: plan and run over the engine.

use hwsurvey_engine::affinity::{pin_current_thread, PinStatus};
use hwsurvey_engine::outcome::{Measurement, Metric, PointOutcome};
use hwsurvey_engine::plan::{FamilyPoints, PlanInput, Point};
use hwsurvey_engine::profile::{CheckedParams, Checker, ProfileError};
use hwsurvey_engine::runner::RunContext;
use hwsurvey_engine::Family;

/// The family.
pub struct C2cLatency;

/// `[families."c2c.latency".params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Round trips of the first (calibration) run; the sample length then follows the
    /// profile's minimum sample time. Range 1..=10_000_000.
    pub calibration_round_trips: u64,
}

impl CheckedParams for Params {
    /// The ranges in the field docs.
    fn check(&self, c: &Checker<'_>) -> Result<(), ProfileError> {
        c.int(
            "calibration_round_trips",
            self.calibration_round_trips,
            1,
            10_000_000,
            "",
        )
    }
}

/// Parameters of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointParams {
    /// The pair and its class.
    pub pair: Pair,
    /// Calibration round trips.
    pub calibration_round_trips: u64,
}

/// The pair inputs for the usable CPUs: topology ids from the probe (`Machine.cpu.cpus`),
/// NUMA node from the run environment; falls back to the environment's package/core ids when
/// the probe has no per-CPU entries.
pub fn pair_cpus(input: &PlanInput<'_>) -> Vec<PairCpu> {
    let node_of = |cpu: u32| {
        input
            .env
            .cpus
            .iter()
            .find(|c| c.cpu == cpu)
            .and_then(|c| c.node)
    };
    let from_probe: Vec<PairCpu> = input
        .machine
        .cpu
        .cpus
        .iter()
        .filter(|c| c.online && input.env.usable_cpus.contains(c.cpu))
        .map(|c| PairCpu {
            cpu: c.cpu,
            package: c.package_id,
            die: c.die_id,
            // the probe's one cluster answer (none where the level is not there)
            cluster: c.cluster_index.map(i64::from),
            core: c.core_id,
            node: node_of(c.cpu),
        })
        .collect();
    if from_probe.len() >= 2 {
        return from_probe;
    }
    input
        .env
        .cpus
        .iter()
        .map(|c| PairCpu {
            cpu: c.cpu,
            package: c.package,
            die: None,
            cluster: None,
            core: c.core,
            node: c.node,
        })
        .collect()
}

impl Family for C2cLatency {
    type Params = Params;
    type PointParams = PointParams;

    fn id(&self) -> &'static str {
        "c2c.latency"
    }

    fn describe(&self) -> &'static str {
        "cache-line ping-pong round trip, one CPU pair per topology class (SMT, cluster, die, package, node)"
    }

    fn plan(&self, p: Params, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        let mut out = FamilyPoints::default();
        let cpus = pair_cpus(input);
        if cpus.len() < 2 {
            out.skipped.push(input.skip(
                "pairs",
                serde_json::Value::Null,
                format!("ping-pong needs two usable CPUs, have {}", cpus.len()),
            ));
            return Ok(out);
        }
        for pair in representative_pairs(&cpus) {
            let id = format!("{}/cpus={},{}", pair.label, pair.cpu_a, pair.cpu_b);
            let (a, b) = (pair.cpu_a, pair.cpu_b);
            let params = PointParams {
                pair,
                calibration_round_trips: p.calibration_round_trips.max(1),
            };
            let mut point = input.point(id, 2, &params, 0);
            point.cpus = vec![a, b];
            // The calibration run (at most 1/4 of a sample), the warm-up, then the profile's
            // minimum samples plus half a one: each sample is ended at its length by the time
            // cap, and a quiet pair's spread is far under the target CV, so the adaptive rule
            // often takes none extra (this VM, quiet: 3 samples; busy: 4-5).
            let min = input.settings.sample_min_s;
            point.estimated_s = 0.25 * min
                + input.settings.warmup_s
                + (input.settings.samples_min as f64 + 0.5) * min * 1.05
                + input.fixed_work_s(0, 2);
            out.points.push(point);
        }
        Ok(out)
    }

    fn run_point(&self, params: PointParams, _point: &Point, ctx: &RunContext<'_>) -> PointOutcome {
        let cpus = [params.pair.cpu_a, params.pair.cpu_b];
        let pins: std::sync::Mutex<Vec<PinStatus>> = std::sync::Mutex::new(vec![
            PinStatus::Unpinned {
                intended_cpu: cpus[0],
                reason: "not started".into(),
            },
            PinStatus::Unpinned {
                intended_cpu: cpus[1],
                reason: "not started".into(),
            },
        ]);
        let pin = |i: usize| {
            let status = pin_current_thread(cpus[i.min(1)]);
            if let Ok(mut g) = pins.lock() {
                if let Some(slot) = g.get_mut(i) {
                    *slot = status;
                }
            }
        };
        // Calibration (and warm-up): scale the round trips so a sample lasts the minimum time.
        // Capped at 1/4 of a sample, as the engine's calibration: 20000 round trips take 2 ms
        // here, but 0.54 s when the pair is descheduled (27 us a round trip on a busy host).
        let cal_cap = Duration::from_secs_f64(ctx.min_sample_s() * 0.25);
        let cal = match ping_pong(params.calibration_round_trips, Some(cal_cap), &pin) {
            Ok(r) => r,
            Err(e) => {
                return PointOutcome::Failed {
                    error: e.to_string(),
                }
            }
        };
        // Warm-up: the profile's warmup_s of ping-pong, untimed, as every family's points
        // warm up (lines, frequency and the pair's placement settle first).
        let warm = Duration::from_secs_f64(ctx.settings.warmup_s.max(0.0));
        if !warm.is_zero() {
            if let Err(e) = ping_pong(u64::MAX / 4, Some(warm), &pin) {
                return PointOutcome::Failed {
                    error: e.to_string(),
                };
            }
        }
        let per_rt_s = (cal.round_trip_ns * 1e-9).max(1e-9);
        let round_trips = ((ctx.min_sample_s() * 1.05 / per_rt_s).ceil() as u64).max(1);
        // Every sample lasts its intended length whatever the pace: the time cap ends it (at a
        // multiple of 1024 round trips) when the pair runs slower than in the calibration
        // (descheduled), and the round-trip bound is 16 x the calibrated count so that a
        // calibration slower than the samples (cold lines: 471 ns a round trip against 100 ns
        // after, on this VM) does not end them early at 45 ms for a 0.2 s minimum.
        let cap = Duration::from_secs_f64(ctx.min_sample_s() * 1.05);
        let bound = round_trips.saturating_mul(16);
        let mut done = Vec::new();
        let samples = ctx.repeat(|| {
            ping_pong(bound, Some(cap), &pin).map(|r| {
                done.push(r.round_trips);
                r.round_trip_ns
            })
        });
        let samples = match samples {
            Ok(s) => s,
            Err(e) => {
                return PointOutcome::Failed {
                    error: e.to_string(),
                }
            }
        };
        let pins = pins.into_inner().unwrap_or_default();
        PointOutcome::Measured(
            Measurement {
                metrics: vec![Metric::latency("round_trip_ns", samples)],
                pins,
                ..Default::default()
            }
            .detail("pair_class", &params.pair.label)
            .detail("round_trips_per_sample", done)
            .detail("line_alignment_bytes", std::mem::align_of::<Line>()),
        )
    }
}

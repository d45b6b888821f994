//! `cpu.clock`: the effective core clock under load, measured (lmbench's `mhz`): a chain of
//! dependent integer adds ([`crate::clock`], one add per cycle) timed against the monotonic
//! clock, on 1 thread, on one thread per core of one package, and on every usable CPU, each
//! worker pinned to its CPU, samples by the profile's adaptive rule like every point.
//!
//! Beside the measured clock each point records, per CPU, cpufreq's `scaling_cur_freq` read
//! right after each sample (and `cpuinfo_max_freq`) where a cpufreq driver exists, and on x86
//! ΔAPERF / seconds over the sample where `/dev/cpu/N/msr` is readable (as turbostat); each
//! absent source with its reason. The headline metric `clock_hz` is the mean over the workers
//! of each worker's adds per second of its own CPU time (the thread CPU clock, so a worker that
//! shared its CPU with another task still reads the clock; `clock_wall_hz` is the same over
//! the monotonic clock's wall time, and `on_cpu_fraction_per_sample` the least share of its
//! wall time a worker was on its CPU); `cpufreq_cur_hz` and `aperf_hz` (same shape) follow
//! where their source exists.
//!
//! Where the chain is the portable one (sparc64, e2k: [`crate::clock::method`] not
//! reliable), the figure is adds per second, marked `reliable: false` with the caveat, and
//! the report never shows it as a clock.

use std::collections::BTreeSet;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use hwsurvey_engine::affinity::PinStatus;
use hwsurvey_engine::outcome::{Measurement, Metric, PointOutcome};
use hwsurvey_engine::plan::{FamilyPoints, PlanInput, Point};
use hwsurvey_engine::profile::{CheckedParams, Checker, ProfileError};
use hwsurvey_engine::runner::RunContext;
use hwsurvey_engine::Family;
use hwsurvey_model::CpuId;
use hwsurvey_probe::freq::{aperf_mperf_clock, cpufreq_khz, MsrDevice};
use hwsurvey_probe::run_env::CpuPlace;
use hwsurvey_probe::SysRoot;

use crate::clock;

/// The family.
pub struct CpuClock;

/// Point id prefix: `add_chain/threads=N[/package_cores]`.
pub const PREFIX: &str = "add_chain";

/// `[families."cpu.clock".params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Length of one timed chain per worker, seconds; (0, 1]. Short: the clock needs no long
    /// window, and three points must stay under 2 s of the profile.
    pub sample_s: f64,
    /// Chain run untimed before the first sample of a point (wakes the cores from idle
    /// states and lets the governor raise the clock), seconds; [0, 1].
    pub warmup_s: f64,
}

impl CheckedParams for Params {
    /// The ranges in the field docs.
    fn check(&self, c: &Checker<'_>) -> Result<(), ProfileError> {
        c.float("sample_s", self.sample_s, 0.0, true, 1.0, "s")?;
        c.float("warmup_s", self.warmup_s, 0.0, false, 1.0, "s")
    }
}

/// Parameters of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointParams {
    /// Worker threads (one per CPU of the point).
    pub threads: usize,
    /// Which CPU sets the point's CPUs are: `one_cpu`, `package_cores`, `all_cpus` (one
    /// point may be several on a small machine).
    pub sets: Vec<String>,
    /// Timed chain per worker and sample, seconds.
    pub sample_s: f64,
    /// Untimed chain before the first sample, seconds.
    pub warmup_s: f64,
}

/// One CPU per core of the package of the first CPU in `order` (the placement order), in
/// that order: the first CPU of each core met. `None` when a CPU of that package has no
/// known core, or the first CPU has no known package.
pub fn package_cores(order: &[CpuId], places: &[CpuPlace]) -> Option<Vec<CpuId>> {
    let place = |c: CpuId| places.iter().find(|p| p.cpu == c);
    let first = *order.first()?;
    let package = place(first)?.package?;
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for &c in order {
        let p = place(c)?;
        if p.package != Some(package) {
            continue;
        }
        if seen.insert(p.core?) {
            out.push(c);
        }
    }
    Some(out)
}

/// A CPU set of the family: its CPUs and its names (`one_cpu`, `package_cores`, `all_cpus`).
pub type CpuSetNames = (Vec<CpuId>, Vec<String>);

/// The CPU sets of the family, deduplicated (a set equal to an earlier one joins its point):
/// (CPUs, set names). `order` is the placement order of the usable CPUs.
pub fn cpu_sets(order: &[CpuId], places: &[CpuPlace]) -> (Vec<CpuSetNames>, Option<String>) {
    let mut sets: Vec<CpuSetNames> = Vec::new();
    let mut add = |cpus: Vec<CpuId>, name: &str| {
        let key: BTreeSet<CpuId> = cpus.iter().copied().collect();
        if let Some(s) = sets
            .iter_mut()
            .find(|(c, _)| c.iter().copied().collect::<BTreeSet<_>>() == key)
        {
            s.1.push(name.to_string());
        } else if !cpus.is_empty() {
            sets.push((cpus, vec![name.to_string()]));
        }
    };
    add(order.iter().take(1).copied().collect(), "one_cpu");
    let skipped = match package_cores(order, places) {
        Some(cpus) => {
            add(cpus, "package_cores");
            None
        }
        None => Some(
            "one thread per core of one package: the package or core of the usable CPUs is \
             not known (sysfs topology/physical_package_id, core_id)"
                .to_string(),
        ),
    };
    add(order.to_vec(), "all_cpus");
    (sets, skipped)
}

/// What one worker saw in one sample.
#[derive(Debug, Clone, PartialEq)]
struct WorkerSample {
    cpu: CpuId,
    hz: f64,
    wall_hz: f64,
    on_cpu: f64,
    cpufreq_cur_khz: Result<u64, String>,
    aperf: Result<(f64, f64), String>,
}

/// Mean of `v`; `None` when empty.
fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

impl Family for CpuClock {
    type Params = Params;
    type PointParams = PointParams;

    fn id(&self) -> &'static str {
        "cpu.clock"
    }

    fn describe(&self) -> &'static str {
        "effective core clock under load (dependent add chain), 1 thread, one per core of a package, all CPUs"
    }

    fn plan(&self, p: Params, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        let mut out = FamilyPoints::default();
        let order = input.cpus_for(input.env.usable_cpus.len().max(1));
        let (sets, why_not) = cpu_sets(&order, &input.env.cpus);
        for (cpus, names) in sets {
            let threads = cpus.len();
            // a plain rung when the CPUs are the first `threads` of the placement order
            let plain = order.iter().take(threads).copied().collect::<BTreeSet<_>>()
                == cpus.iter().copied().collect::<BTreeSet<_>>();
            let own = (!plain).then_some("package_cores");
            let params = PointParams {
                threads,
                sets: names.clone(),
                sample_s: p.sample_s,
                warmup_s: p.warmup_s,
            };
            let id = format!(
                "{PREFIX}/{}",
                hwsurvey_result::plan::rung_id_part(threads, own)
            );
            let mut point = input.point(id, threads, &params, 0);
            // the plan's topology landmarks this CPU set is (`all`, `cores`, ...); the
            // family's own names of its sets (`one_cpu`, `package_cores`, `all_cpus`) are in
            // its parameters, not here: a point's landmarks name the plan's landmarks
            let set: BTreeSet<CpuId> = cpus.iter().copied().collect();
            point.landmarks = input
                .landmarks
                .iter()
                .filter(|m| {
                    !m.cpus.is_empty() && m.cpus.iter().copied().collect::<BTreeSet<_>>() == set
                })
                .map(|m| m.name.clone())
                .collect();
            point.cpus = cpus;
            // warm-up, the calibration (about half a sample), the profile's minimum of samples
            // of sample_s, and a thread start per sample (measured 2026-12-04 on an idle 2-vCPU
            // Zen 4 guest with the standard profile: 0.13 s a point for 0.125 estimated; the
            // previous rule, a sample more and 1.2 samples of calibration, said 0.26 s)
            let samples = input.settings.samples_min.min(input.settings.samples_max) as f64;
            point.estimated_s = p.warmup_s + p.sample_s * (0.5 + samples) + 0.002 * samples;
            out.points.push(point);
        }
        if let Some(reason) = why_not {
            out.skipped.push(input.skip(
                format!("{PREFIX}/package_cores"),
                serde_json::json!({"sets": ["package_cores"]}),
                reason,
            ));
        }
        Ok(out)
    }

    fn run_point(&self, params: PointParams, point: &Point, ctx: &RunContext<'_>) -> PointOutcome {
        let method = clock::method();
        let root = SysRoot::live();
        // calibration (also the warm-up): each worker's blocks for one sample
        let warm = ctx.run_pinned(&point.cpus, |_| {
            let blocks = clock::calibrate(params.sample_s)?;
            let until = Instant::now() + std::time::Duration::from_secs_f64(params.warmup_s);
            while Instant::now() < until {
                clock::timed((blocks / 8).max(1))?;
            }
            Ok::<u64, clock::ChainError>(blocks)
        });
        let blocks: Vec<u64> = match warm {
            Ok(v) => match v.into_iter().collect::<Result<Vec<u64>, _>>() {
                Ok(b) => b,
                Err(e) => {
                    return PointOutcome::Failed {
                        error: e.to_string(),
                    }
                }
            },
            Err(hwsurvey_engine::runner::RunError::Cancelled) => return interrupted(),
            Err(e) => {
                return PointOutcome::Failed {
                    error: e.to_string(),
                }
            }
        };
        let mut pins: Vec<PinStatus> = Vec::new();
        let mut per_sample: Vec<Vec<WorkerSample>> = Vec::new();
        let mut wall: Vec<f64> = Vec::new();
        let mut on_cpu: Vec<f64> = Vec::new();
        let samples = ctx.repeat(|| {
            let got = ctx.run_pinned(&point.cpus, |w| {
                let cpu = point.cpus.get(w.index).copied().unwrap_or(0);
                let msr = MsrDevice::open(cpu);
                // a short untimed chain: the core is busy when the timed one starts
                let _ = clock::timed((blocks[w.index] / 16).max(1));
                w.barrier.wait();
                let before = msr
                    .as_ref()
                    .map_err(Clone::clone)
                    .and_then(|m| m.aperf_mperf());
                let t0 = Instant::now();
                let run = clock::timed(blocks[w.index]);
                let after = msr
                    .as_ref()
                    .map_err(Clone::clone)
                    .and_then(|m| m.aperf_mperf());
                let secs = t0.elapsed().as_secs_f64();
                let cur = cpufreq_khz(&root, cpu, "scaling_cur_freq").map_err(|e| e.to_string());
                let aperf = before.and_then(|b| after.and_then(|a| aperf_mperf_clock(b, a, secs)));
                (
                    w.pin.clone(),
                    run.map(|r| WorkerSample {
                        cpu,
                        hz: r.on_cpu_hz(),
                        wall_hz: r.hz(),
                        on_cpu: r.on_cpu_fraction(),
                        cpufreq_cur_khz: cur,
                        aperf,
                    }),
                )
            });
            let got = got.map_err(|e| e.to_string())?;
            pins = got.iter().map(|g| g.0.clone()).collect();
            let workers: Vec<WorkerSample> = got
                .into_iter()
                .map(|g| g.1)
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())?;
            let hz = mean(&workers.iter().map(|w| w.hz).collect::<Vec<_>>()).unwrap_or(0.0);
            wall.push(mean(&workers.iter().map(|w| w.wall_hz).collect::<Vec<_>>()).unwrap_or(0.0));
            on_cpu.push(workers.iter().map(|w| w.on_cpu).fold(1.0, f64::min));
            per_sample.push(workers);
            Ok::<f64, String>(hz)
        });
        let samples = match samples {
            Ok(s) => s,
            Err(e) if e == "cancelled" => return interrupted(),
            Err(error) => return PointOutcome::Failed { error },
        };
        if ctx.cancelled() && samples.len() < 2 {
            return interrupted();
        }
        let summary = summarise(&per_sample, &point.cpus, &root);
        let mut metrics = vec![
            Metric::throughput("clock_hz", samples),
            Metric::throughput("clock_wall_hz", wall),
        ];
        if let Some(s) = summary.cpufreq_cur_hz.clone() {
            metrics.push(Metric::throughput("cpufreq_cur_hz", s));
        }
        if let Some(s) = summary.aperf_hz.clone() {
            metrics.push(Metric::throughput("aperf_hz", s));
        }
        PointOutcome::Measured(
            Measurement {
                metrics,
                pins,
                ..Default::default()
            }
            .detail("method", method.name)
            .detail("reliable", method.reliable)
            .detail("caveat", method.caveat)
            .detail(
                "timing",
                if clock::thread_cpu_s().is_some() {
                    "thread CPU time (CLOCK_THREAD_CPUTIME_ID)"
                } else {
                    "monotonic clock (no thread CPU clock in this build)"
                },
            )
            .detail("on_cpu_fraction_per_sample", &on_cpu)
            .detail("adds_per_block", clock::ADDS_PER_BLOCK)
            .detail("blocks_per_sample", &blocks)
            .detail("sets", &params.sets)
            .detail("per_cpu", &summary.per_cpu)
            .detail("cpufreq", &summary.cpufreq_note)
            .detail("aperf_mperf", &summary.aperf_note),
        )
    }
}

/// One CPU's medians over the samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerCpu {
    /// OS CPU number.
    pub cpu: CpuId,
    /// Median adds per second of this CPU's worker (Hz where the method is reliable).
    pub clock_hz: f64,
    /// Median `scaling_cur_freq` read after each sample, kHz; null without cpufreq.
    pub cpufreq_cur_khz: Option<f64>,
    /// `cpuinfo_max_freq`, kHz; null without cpufreq.
    pub cpufreq_max_khz: Option<u64>,
    /// Median ΔAPERF / seconds over each sample, Hz; null where the MSRs are not readable.
    pub aperf_hz: Option<f64>,
    /// Median ΔAPERF / ΔMPERF over each sample; null where the MSRs are not readable.
    pub aperf_over_mperf: Option<f64>,
}

struct Summary {
    per_cpu: Vec<PerCpu>,
    cpufreq_cur_hz: Option<Vec<f64>>,
    aperf_hz: Option<Vec<f64>>,
    cpufreq_note: String,
    aperf_note: String,
}

/// Per CPU medians, per sample means of the side sources (only when every worker of every
/// sample read them), and one line per side source: `read` or the first reason it was not.
fn summarise(per_sample: &[Vec<WorkerSample>], cpus: &[CpuId], root: &SysRoot) -> Summary {
    let all = || per_sample.iter().flat_map(|s| s.iter());
    let per_cpu = cpus
        .iter()
        .map(|&cpu| {
            let mine = || all().filter(move |w| w.cpu == cpu);
            PerCpu {
                cpu,
                clock_hz: median(mine().map(|w| w.hz).collect()).unwrap_or(0.0),
                cpufreq_cur_khz: median(
                    mine()
                        .filter_map(|w| w.cpufreq_cur_khz.as_ref().ok().map(|k| *k as f64))
                        .collect(),
                ),
                cpufreq_max_khz: cpufreq_khz(root, cpu, "cpuinfo_max_freq").ok(),
                aperf_hz: median(
                    mine()
                        .filter_map(|w| w.aperf.as_ref().ok().map(|a| a.0))
                        .collect(),
                ),
                aperf_over_mperf: median(
                    mine()
                        .filter_map(|w| w.aperf.as_ref().ok().map(|a| a.1))
                        .collect(),
                ),
            }
        })
        .collect();
    let side = |get: &dyn Fn(&WorkerSample) -> Result<f64, String>| -> (Option<Vec<f64>>, String) {
        if let Some(e) = all().find_map(|w| get(w).err()) {
            return (None, format!("unavailable: {e}"));
        }
        let v: Vec<f64> = per_sample
            .iter()
            .filter_map(|s| mean(&s.iter().filter_map(|w| get(w).ok()).collect::<Vec<_>>()))
            .collect();
        (Some(v), "read".into())
    };
    let (cpufreq_cur_hz, cpufreq_note) =
        side(&|w| w.cpufreq_cur_khz.clone().map(|k| k as f64 * 1e3));
    let (aperf_hz, aperf_note) = side(&|w| w.aperf.clone().map(|a| a.0));
    Summary {
        per_cpu,
        cpufreq_cur_hz,
        aperf_hz,
        cpufreq_note,
        aperf_note,
    }
}

/// The outcome of a point cut by SIGINT/SIGTERM/SIGHUP.
fn interrupted() -> PointOutcome {
    PointOutcome::Skipped {
        reason: format!(
            "interrupted ({})",
            hwsurvey_engine::signals::interrupt_cause()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(cpu: CpuId, package: i64, core: i64) -> CpuPlace {
        CpuPlace {
            cpu,
            package: Some(package),
            core: Some(core),
            node: None,
        }
    }

    /// Two packages of 2 cores x 2 SMT threads, compact order 0,4,1,5 | 2,6,3,7 (siblings
    /// 0/4, 1/5 on package 0): one thread per core of package 0 is {0, 1}.
    #[test]
    fn sets_of_a_two_package_smt_machine() {
        let places: Vec<CpuPlace> = [
            (0, 0, 0),
            (4, 0, 0),
            (1, 0, 1),
            (5, 0, 1),
            (2, 1, 2),
            (6, 1, 2),
            (3, 1, 3),
            (7, 1, 3),
        ]
        .iter()
        .map(|&(c, p, k)| place(c, p, k))
        .collect();
        let order: Vec<CpuId> = places.iter().map(|p| p.cpu).collect();
        let (sets, skipped) = cpu_sets(&order, &places);
        assert_eq!(skipped, None);
        assert_eq!(
            sets,
            vec![
                (vec![0], vec!["one_cpu".to_string()]),
                (vec![0, 1], vec!["package_cores".to_string()]),
                (order.clone(), vec!["all_cpus".to_string()]),
            ]
        );
        // a 2-CPU VM: one package, two cores: package cores and all CPUs are one point
        let vm = vec![place(0, 0, 0), place(1, 0, 1)];
        let (sets, _) = cpu_sets(&[0, 1], &vm);
        assert_eq!(sets.len(), 2);
        assert_eq!(sets[1].1, vec!["package_cores", "all_cpus"]);
        // topology unknown: no package point, said why
        let bare = vec![CpuPlace {
            cpu: 0,
            package: None,
            core: None,
            node: None,
        }];
        let (sets, skipped) = cpu_sets(&[0], &bare);
        assert_eq!(
            sets,
            vec![(vec![0], vec!["one_cpu".to_string(), "all_cpus".to_string()])]
        );
        assert!(skipped.unwrap().contains("physical_package_id"));
    }
}

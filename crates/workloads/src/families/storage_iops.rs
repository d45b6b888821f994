//! `storage.iops`: 4 KiB random read/write IOPS and 1 MiB sequential read/write bandwidth with
//! O_DIRECT, per target and on all targets together, swept over threads x queue depth.
//!
//! Targets are the user's `--storage-dir DIR` (a test file is created, preconditioned by writing
//! it fully once, and removed after the point on every exit path) and, only with
//! `--destructive`, `--storage-device /dev/X` after the checks of
//! [`crate::storage::device::check_device_with`] (no partitions, no signature libblkid or
//! util-linux recognises, no other block device built on it, not mounted in any mount
//! namespace, not held, not swap, not in use, every byte of the span it writes blank or
//! hwsurvey's unless confirmed with `--confirm-device`, and refused where any of this cannot be
//! read: docs/raw-devices.md): the device is then opened with `O_EXCL`, so the kernel refuses
//! it while anything else holds it, and the opened device must be the one resolved before the
//! run, [`crate::storage::identity::open_for_writing`]. Every block it writes begins with
//! hwsurvey's marker ([`crate::storage::sample::MARKER`]). Without targets the family is
//! skipped with that reason. Each sample is one timed
//! window of the profile's `window_s`; the engine's adaptive rule decides how many. Per point:
//! IOPS and bandwidth samples, latency p50/p99/p99.9 and CPU time per I/O of the last window,
//! the I/O engine used (io_uring or pread/pwrite), and the device's context (model, NUMA node,
//! PCIe link and its theoretical ceiling) where the probe has it.

use std::path::PathBuf;
#[cfg(feature = "sys")]
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(feature = "sys")]
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::storage::Pattern;
use hwsurvey_engine::outcome::PointOutcome;
use hwsurvey_engine::plan::{FamilyPoints, PlanInput, Point};
use hwsurvey_engine::profile::{CheckedParams, Checker, ProfileError};
use hwsurvey_engine::runner::RunContext;
use hwsurvey_engine::Family;

/// The family.
pub struct StorageIops;

/// `[families."storage.iops".params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Patterns: `randread_4k`, `randwrite_4k`, `seqread_1m`, `seqwrite_1m` (non-empty, no
    /// duplicates).
    pub patterns: Vec<String>,
    /// Worker threads per target: non-empty, no duplicates, each 1..=256.
    pub threads_per_target: Vec<usize>,
    /// I/Os in flight per worker thread: non-empty, no duplicates, each 1..=1024.
    pub queue_depths: Vec<usize>,
    /// Test file size (and span used on a raw device), bytes; a multiple of 1 MiB,
    /// 1 MiB..=2^40.
    pub file_size_bytes: u64,
    /// One timed sample, seconds; (0, 60].
    pub window_s: f64,
    /// Also run every point on several targets at once, over a device-count ladder
    /// ([`device_ladder`]: the first 2, 4, 8, ... targets, then all), when there are two or
    /// more.
    pub all_targets_together: bool,
}

/// Most points of one target or group of targets a profile may ask for (patterns x
/// threads_per_target x queue_depths): 256 (the standard profile asks for 16).
pub const MAX_POINTS_PER_GROUP: usize = 256;

impl CheckedParams for Params {
    /// The ranges in the field docs.
    fn check(&self, c: &Checker<'_>) -> Result<(), ProfileError> {
        c.list("patterns", &self.patterns)?;
        if let Some(bad) = self
            .patterns
            .iter()
            .find(|s| Pattern::from_name(s).is_none())
        {
            return Err(c.error(
                "patterns",
                format!(
                    "expected randread_4k, randwrite_4k, seqread_1m or seqwrite_1m, got {bad:?}"
                ),
            ));
        }
        c.int_list(
            "threads_per_target",
            &self.threads_per_target,
            1,
            256,
            "threads",
        )?;
        c.int_list(
            "queue_depths",
            &self.queue_depths,
            1,
            1024,
            "I/Os in flight",
        )?;
        // every pattern x threads x depth is a point of each target and group of targets
        let per_group =
            self.patterns.len() * self.threads_per_target.len() * self.queue_depths.len();
        if per_group > MAX_POINTS_PER_GROUP {
            return Err(c.error(
                "queue_depths",
                format!(
                    "expected at most {MAX_POINTS_PER_GROUP} points a target (patterns x \
                     threads_per_target x queue_depths), got {} x {} x {} = {per_group}",
                    self.patterns.len(),
                    self.threads_per_target.len(),
                    self.queue_depths.len()
                ),
            ));
        }
        let mib = 1u64 << 20;
        c.int(
            "file_size_bytes",
            self.file_size_bytes,
            mib,
            hwsurvey_engine::profile::MAX_SIZE_BYTES,
            "bytes",
        )?;
        if !self.file_size_bytes.is_multiple_of(mib) {
            return Err(c.error(
                "file_size_bytes",
                format!(
                    "expected a multiple of 1 MiB (1048576), got {}",
                    self.file_size_bytes
                ),
            ));
        }
        c.float("window_s", self.window_s, 0.0, true, 60.0, "seconds")
    }
}

/// One target of a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TargetSpec {
    /// A directory where a test file is created.
    Dir {
        /// The directory.
        path: PathBuf,
    },
    /// A raw block device (only with --destructive, checked again at run time).
    Device {
        /// The device node.
        path: PathBuf,
    },
}

/// Parameters of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointParams {
    /// Pattern name.
    pub pattern: String,
    /// Targets driven at once.
    pub targets: Vec<TargetSpec>,
    /// Worker threads per target.
    pub threads_per_target: usize,
    /// I/Os in flight per worker thread.
    pub queue_depth: usize,
    /// Test file size / device span, bytes.
    pub file_size_bytes: u64,
    /// One sample, seconds.
    pub window_s: f64,
}

/// The device counts driven at once, after each target alone: 2, 4, 8, ... below `targets`,
/// then all of them (`[2, 4, 6]` for 6 targets; none for one target). The points are named
/// `target=first<N>` (the first N targets in the order given) and `target=all`.
pub fn device_ladder(targets: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut n = 2;
    while n < targets {
        out.push(n);
        n *= 2;
    }
    if targets > 1 {
        out.push(targets);
    }
    out
}

/// The most bytes a point of `plan` writes on a raw device, from byte 0 (the largest
/// `file_size_bytes` of the storage.iops points with a `--storage-device` target); 0 when no
/// point writes one. The device check reads every byte of this span before the run
/// ([`crate::storage::device::WriteOptions::span_bytes`]).
pub fn device_span_bytes(plan: &hwsurvey_engine::plan::Plan) -> u64 {
    plan.families
        .iter()
        .filter(|f| f.family == "storage.iops")
        .flat_map(|f| &f.points)
        .filter_map(|p| p.params::<PointParams>().ok())
        .filter(|p| {
            p.targets
                .iter()
                .any(|t| matches!(t, TargetSpec::Device { .. }))
        })
        .map(|p| p.file_size_bytes)
        .max()
        .unwrap_or(0)
}

/// The reason the family is skipped without targets.
pub const NO_TARGET_REASON: &str = "no --storage-dir given: storage.iops creates its test files only in directories \
     you name (one per device), or writes a raw device only with --storage-device /dev/X --destructive";

impl Family for StorageIops {
    type Params = Params;
    type PointParams = PointParams;

    fn id(&self) -> &'static str {
        "storage.iops"
    }

    fn describe(&self) -> &'static str {
        "O_DIRECT 4 KiB random read/write IOPS and 1 MiB sequential MB/s per target and all together, threads x queue depth"
    }

    fn plan(&self, params: Params, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        let mut out = FamilyPoints::default();
        let mut targets: Vec<(String, TargetSpec)> = Vec::new();
        for (i, d) in input.options.storage_dirs.iter().enumerate() {
            targets.push((format!("dir{i}"), TargetSpec::Dir { path: d.clone() }));
        }
        for (i, d) in input.options.storage_devices.iter().enumerate() {
            if input.options.destructive {
                targets.push((format!("dev{i}"), TargetSpec::Device { path: d.clone() }));
            } else {
                out.skipped.push(input.skip(
                    format!("dev{i}"),
                    TargetSpec::Device { path: d.clone() },
                    format!("{}: writing a raw device needs --destructive", d.display()),
                ));
            }
        }
        if targets.is_empty() {
            if out.skipped.is_empty() {
                out.skipped
                    .push(input.skip("all", serde_json::Value::Null, NO_TARGET_REASON));
            }
            return Ok(out);
        }
        let mut groups: Vec<(String, Vec<TargetSpec>)> = targets
            .iter()
            .map(|(k, t)| (k.clone(), vec![t.clone()]))
            .collect();
        if params.all_targets_together {
            for n in device_ladder(targets.len()) {
                let key = if n == targets.len() {
                    "all".to_string()
                } else {
                    format!("first{n}")
                };
                groups.push((key, targets[..n].iter().map(|t| t.1.clone()).collect()));
            }
        }
        let windows = input.settings.samples_min.max(1) as f64;
        for pattern in &params.patterns {
            for &t in &params.threads_per_target {
                for &qd in &params.queue_depths {
                    for (key, group) in &groups {
                        let p = PointParams {
                            pattern: pattern.clone(),
                            targets: group.clone(),
                            threads_per_target: t.max(1),
                            queue_depth: qd.max(1),
                            file_size_bytes: params.file_size_bytes,
                            window_s: params.window_s,
                        };
                        let id = format!("{pattern}/target={key}/threads={t}/qd={qd}");
                        let mut point = input.point(id, t.max(1) * group.len(), &p, 0);
                        // Creating and preconditioning the file (assume >= 200 MB/s) plus the windows.
                        point.estimated_s = params.window_s * windows
                            + group.len() as f64 * params.file_size_bytes as f64 / 200e6
                            + 0.05;
                        out.points.push(point);
                    }
                }
            }
        }
        Ok(out)
    }

    fn run_point(&self, p: PointParams, _point: &Point, ctx: &RunContext<'_>) -> PointOutcome {
        run_live(&p, ctx)
    }
}

#[cfg(not(feature = "sys"))]
fn run_live(_p: &PointParams, _ctx: &RunContext<'_>) -> PointOutcome {
    PointOutcome::Skipped {
        reason: crate::storage::StorageError::Unsupported.to_string(),
    }
}

#[cfg(feature = "sys")]
fn run_live(p: &PointParams, ctx: &RunContext<'_>) -> PointOutcome {
    use crate::storage::engine::{run_point, EngineChoice, IoSpec, IoTarget};
    use crate::storage::target::{create_test_file, TestFile};
    use crate::storage::StorageError;
    use hwsurvey_engine::outcome::{Measurement, Metric};

    let Some(pattern) = Pattern::from_name(&p.pattern) else {
        return PointOutcome::Failed {
            error: format!("unknown storage pattern {:?}", p.pattern),
        };
    };
    // The engine's Ctrl-C flag, mirrored into a flag the I/O loops poll.
    let stop = AtomicBool::new(false);
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !finished.load(Ordering::Relaxed) {
                if ctx.cancelled() {
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let outcome = (|| -> Result<PointOutcome, StorageError> {
            let mut files: Vec<TestFile> = Vec::new();
            let mut devices: Vec<(String, std::fs::File, u64)> = Vec::new();
            for t in &p.targets {
                match t {
                    TargetSpec::Dir { path } => {
                        files.push(create_test_file(path, p.file_size_bytes, &stop)?)
                    }
                    TargetSpec::Device { path } => {
                        devices.push(crate::storage::identity::open_for_writing(
                            path,
                            p.file_size_bytes,
                            &crate::storage::device::WriteOptions {
                                destructive: ctx.options.destructive,
                                confirm: ctx.options.confirm_devices.clone(),
                                span_bytes: p.file_size_bytes,
                            },
                            &stop,
                        )?)
                    }
                }
            }
            let names: Vec<String> = files
                .iter()
                .map(|f| f.path().display().to_string())
                .collect();
            let mut targets: Vec<IoTarget<'_>> = files
                .iter()
                .zip(&names)
                .map(|(f, n)| IoTarget {
                    path: n,
                    file: &f.file,
                    size_bytes: f.size_bytes,
                })
                .collect();
            targets.extend(devices.iter().map(|(n, f, size)| IoTarget {
                path: n,
                file: f,
                size_bytes: *size,
            }));
            let spec = IoSpec {
                pattern,
                threads_per_target: p.threads_per_target,
                queue_depth: p.queue_depth,
                duration: Duration::from_secs_f64(p.window_s.max(0.001)),
                engine: EngineChoice::Auto,
            };
            let mut last = None;
            let mut p99_ns: Vec<f64> = Vec::new();
            let mut cpu_ns: Vec<Option<f64>> = Vec::new();
            let samples = ctx.repeat(|| -> Result<f64, StorageError> {
                let r = run_point(&targets, &spec, &stop)?;
                let iops = r.iops;
                p99_ns.push(r.latency_p99_ns as f64);
                cpu_ns.push(r.cpu_ns_per_io);
                last = Some(r);
                Ok(iops)
            });
            let iops = match samples {
                Ok(v) => v,
                Err(StorageError::Interrupted) => {
                    return Ok(PointOutcome::Skipped {
                        reason: format!(
                            "cancelled ({}); test files removed",
                            hwsurvey_engine::signals::interrupt_cause()
                        ),
                    })
                }
                Err(e) => return Err(e),
            };
            let Some(r) = last else {
                return Ok(PointOutcome::Skipped {
                    reason: "no sample taken".into(),
                });
            };
            let block = pattern.block_bytes() as f64;
            let bw: Vec<f64> = iops.iter().map(|i| i * block).collect();
            let context: Vec<serde_json::Value> = p.targets.iter().map(device_context).collect();
            let mut metrics = if pattern.is_random() {
                vec![
                    Metric::throughput("iops", iops),
                    Metric::bandwidth_bytes_per_s(bw),
                ]
            } else {
                vec![
                    Metric::bandwidth_bytes_per_s(bw),
                    Metric::throughput("iops", iops),
                ]
            };
            metrics.push(Metric::latency("latency_p99_ns", p99_ns));
            // CPU time per I/O, one value per window, only when every window had it.
            if let Some(cpu) = cpu_ns.into_iter().collect::<Option<Vec<f64>>>() {
                metrics.push(Metric::latency("cpu_ns_per_io", cpu));
            }
            let m = Measurement {
                metrics,
                ..Default::default()
            }
            .detail("io_engine", &r.engine)
            .detail("block_size_bytes", pattern.block_bytes())
            .detail("o_direct", true)
            .detail("last_window", &r)
            .detail("latency_p50_ns", r.latency_p50_ns)
            .detail("latency_p99_ns", r.latency_p99_ns)
            .detail("latency_p999_ns", r.latency_p999_ns)
            .detail("cpu_ns_per_io", r.cpu_ns_per_io)
            .detail("cpu_busy_cpus", r.cpu_busy_cpus)
            .detail("targets", &context);
            Ok(PointOutcome::Measured(m))
        })();
        finished.store(true, Ordering::Relaxed);
        match outcome {
            Ok(o) => o,
            Err(StorageError::Interrupted) => PointOutcome::Skipped {
                reason: format!(
                    "cancelled ({}); test files removed",
                    hwsurvey_engine::signals::interrupt_cause()
                ),
            },
            Err(
                e @ (StorageError::DirMissing { .. }
                | StorageError::NotADirectory { .. }
                | StorageError::NotWritable { .. }
                | StorageError::NoDirectIo { .. }
                | StorageError::NoSpace { .. }
                | StorageError::DeviceRefused { .. }),
            ) => PointOutcome::Skipped {
                reason: e.to_string(),
            },
            Err(e) => PointOutcome::Failed {
                error: e.to_string(),
            },
        }
    })
}

/// Device context of a target from sysfs and the probe: block device, model, NUMA node, PCIe
/// link (current and maximum) and its theoretical ceiling in bytes/s.
#[cfg(feature = "sys")]
fn device_context(t: &TargetSpec) -> serde_json::Value {
    let ctx = crate::storage::context::for_path(match t {
        TargetSpec::Dir { path } | TargetSpec::Device { path } => path,
    });
    serde_json::to_value(ctx).unwrap_or(serde_json::Value::Null)
}

//! The hardware watch around every point of a run ([`Watcher`]), as the run loop reads the
//! energy counters: the counters are found once (`hwsurvey_probe::watch::start`), read just
//! before and just after each point by the run loop, outside the family's timed samples (the
//! reads cannot enter a metric, only the point's `duration_s`), and the difference is the
//! point's [`WatchDelta`]; the kernel log is followed from the run's start and its
//! hardware-error lines go to the point during which they were read (lines read between two
//! points go to the run's totals only, marked as between points).
//!
//! The measured clock at the start and the end of the run comes from a [`ClockCheck`] the
//! caller gives (the `cpu.clock` family's add chain, `hwsurvey_workloads::watch_clock`; the
//! engine names no family): [`clock_seconds`] long, on the first usable CPU.

use std::time::Instant;

use hwsurvey_probe::kmsg::Follower;
use hwsurvey_probe::run_env::CpuPlace;
use hwsurvey_probe::watch::{
    self as probe_watch, ClockReading, LogEvent, RunWatch, WatchDelta, WatchPlan, WatchReading,
    MAX_POINT_LOG_EVENTS, MAX_RUN_LOG_EVENTS,
};
use hwsurvey_probe::{Machine, SysRoot};

use crate::plan::Point;
use crate::profile::RunSettings;

/// The clock measurement of the watch: about `seconds` of a dependent add chain on `cpu`,
/// pinned (`hwsurvey_workloads::watch_clock::AddChain`).
pub trait ClockCheck: Sync {
    /// Measures the clock on `cpu`.
    ///
    /// # Errors
    /// Why no figure was had (the chain's sum wrong, the thread not started), in words.
    fn measure(&self, cpu: u32, seconds: f64) -> Result<ClockReading, String>;
}

/// Shortest and longest clock measurement of the watch, seconds.
pub const CLOCK_SECONDS: (f64, f64) = (0.05, 1.0);

/// How long the clock is measured at the run's start and end: five of the profile's sample
/// times, within [`CLOCK_SECONDS`] (the standard profile, 0.2 s samples: 1 s; the quick
/// profile: 0.05 s).
pub fn clock_seconds(run: &RunSettings) -> f64 {
    (5.0 * run.sample_min_s).clamp(CLOCK_SECONDS.0, CLOCK_SECONDS.1)
}

/// The reading before a point ([`Watcher::before`]).
#[derive(Debug)]
pub struct Before {
    at: Instant,
    reading: WatchReading,
}

/// The watch of one run: what it reads, the kernel log followed, the first reading (the
/// totals' start) and what the run's file says of it ([`Watcher::run`]).
#[derive(Debug)]
pub struct Watcher<'a> {
    root: &'a SysRoot,
    plan: WatchPlan,
    kmsg: Option<Follower>,
    first: Option<(Instant, WatchReading)>,
    log: Vec<LogEvent>,
    log_more: u64,
    lost: u64,
    run: RunWatch,
}

impl<'a> Watcher<'a> {
    /// Finds the counters under `root` (for `cpus`, naming slots and functions from
    /// `machine`) and opens the kernel log at its end.
    pub fn start(root: &'a SysRoot, machine: &Machine, cpus: &[CpuPlace]) -> Watcher<'a> {
        let live = probe_watch::start(root, machine, cpus);
        // under full-system emulation the chain times the emulator
        let not_a_clock = machine
            .os
            .virtualization
            .known()
            .filter(|v| {
                matches!(
                    v.platform,
                    hwsurvey_probe::virt::Platform::Emulated
                        | hwsurvey_probe::virt::Platform::EmulationNotExcluded
                )
            })
            .map(|v| {
                format!(
                    "{}{}: the chain times the emulator's pace, not a CPU's clock",
                    v.platform.words(),
                    v.hypervisor
                        .as_deref()
                        .map(|h| format!(" ({h})"))
                        .unwrap_or_default()
                )
            });
        let run = RunWatch {
            sources: live.plan.sources.clone(),
            dimms: live.plan.edac.iter().map(|u| u.slot.clone()).collect(),
            clock: hwsurvey_probe::watch::ClockWatch {
                not_a_clock,
                ..Default::default()
            },
            totals: None,
        };
        Watcher {
            root,
            plan: live.plan,
            kmsg: live.kmsg,
            first: None,
            log: Vec::new(),
            log_more: 0,
            lost: 0,
            run,
        }
    }

    /// What the file's `watch` holds now.
    pub fn run(&self) -> &RunWatch {
        &self.run
    }

    /// Measures the clock with `check` on `cpu` (the run's start when `end` is false) and
    /// keeps it, or the problem.
    pub fn clock(&mut self, check: Option<&dyn ClockCheck>, cpu: u32, seconds: f64, end: bool) {
        let which = if end { "end" } else { "start" };
        let Some(check) = check else {
            if !end {
                self.run.clock.problems.push(
                    "no clock check given (a library caller without the cpu.clock chain)".into(),
                );
            }
            return;
        };
        match check.measure(cpu, seconds) {
            Ok(r) if end => self.run.clock.end = Some(r),
            Ok(r) => self.run.clock.start = Some(r),
            Err(e) => self.run.clock.problems.push(format!("{which}: {e}")),
        }
    }

    /// Says why the clock at the end was not measured.
    pub fn clock_skipped(&mut self, why: &str) {
        self.run
            .clock
            .problems
            .push(format!("end: not measured: {why}"));
    }

    /// The kernel log's new hardware-error events (`Err`: the problem line), the lost
    /// records counted.
    fn new_events(&mut self, max: usize) -> (Vec<LogEvent>, u64, Option<String>) {
        let Some(k) = self.kmsg.as_mut() else {
            return (Vec::new(), 0, None);
        };
        match k.events(max) {
            Ok(n) => {
                self.lost += n.lost;
                let problem = (n.lost > 0).then(|| {
                    format!(
                        "{}: {} overwritten before they were read (a storm of messages)",
                        hwsurvey_probe::kmsg::KMSG,
                        hwsurvey_model::units::plural(n.lost, "record")
                    )
                });
                (n.events, n.more, problem)
            }
            Err(e) => (Vec::new(), 0, Some(e.to_string())),
        }
    }

    /// Keeps run-level events (at most [`MAX_RUN_LOG_EVENTS`]).
    fn keep(&mut self, events: &[LogEvent], more: u64, point: Option<&str>) {
        for e in events {
            if self.log.len() < MAX_RUN_LOG_EVENTS {
                let mut e = e.clone();
                e.point = point.map(str::to_string);
                self.log.push(e);
            } else {
                self.log_more += 1;
            }
        }
        self.log_more += more;
    }

    /// Reads every counter just before a point; the kernel log's lines since the last point
    /// go to the run's totals, as between points.
    pub fn before(&mut self) -> Before {
        let (events, more, _) = self.new_events(MAX_RUN_LOG_EVENTS);
        self.keep(&events, more, None);
        let reading = probe_watch::read(self.root, &self.plan);
        let at = Instant::now();
        if self.first.is_none() {
            self.first = Some((at, reading.clone()));
        }
        Before { at, reading }
    }

    /// Reads every counter just after `point`, and cpufreq of its CPUs: what moved during it.
    /// Updates the run's totals.
    pub fn after(&mut self, before: Before, point: &Point) -> WatchDelta {
        let reading = probe_watch::read(self.root, &self.plan);
        let seconds = before.at.elapsed().as_secs_f64();
        let (cpufreq, freq_problems) = probe_watch::cpufreq_low(self.root, &self.plan, &point.cpus);
        let (events, more, log_problem) = self.new_events(MAX_POINT_LOG_EVENTS);
        let label = format!("{} {}", point.family, point.id);
        self.keep(&events, more, Some(&label));
        let mut d = probe_watch::delta(
            &self.plan,
            &before.reading,
            &reading,
            seconds,
            events,
            MAX_POINT_LOG_EVENTS,
        );
        d.kernel_log_more += more;
        d.cpufreq = cpufreq;
        d.problems.extend(freq_problems);
        d.problems.extend(log_problem);
        if let Some((at, first)) = &self.first {
            let mut t = probe_watch::delta(
                &self.plan,
                first,
                &reading,
                at.elapsed().as_secs_f64(),
                self.log.clone(),
                MAX_RUN_LOG_EVENTS,
            );
            t.kernel_log_more += self.log_more;
            if self.lost > 0 {
                t.problems.push(format!(
                    "{}: {} overwritten before they were read",
                    hwsurvey_probe::kmsg::KMSG,
                    hwsurvey_model::units::plural(self.lost, "record")
                ));
            }
            self.run.totals = Some(t);
        }
        d
    }
}

//! What a run's watch reads, found once (`hwsurvey_probe::watch::discover` fills a
//! [`WatchPlan`]), one reading of all of it ([`WatchReading`]) and the difference of two
//! readings ([`delta`]): a point's [`WatchDelta`], or the run's totals.

use super::aer::{self, AerSeverity, AerStats};
use super::{
    AerDelta, DimmSlot, EdacDelta, LinkChange, LinkState, LogEvent, SourceState, ThrottleDelta,
    ThrottleKind, WatchDelta,
};

/// One EDAC unit whose counters are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdacUnit {
    /// Its name and slot.
    pub slot: DimmSlot,
    /// The corrected-error count file.
    pub ce_path: String,
    /// The uncorrected-error count file (`None` for a csrow channel without one).
    pub ue_path: Option<String>,
}

/// One PCI function whose AER statistics are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AerFunction {
    /// `0000:01:00.0`.
    pub device: String,
    /// What it is.
    pub name: Option<String>,
    /// Its folder, `/sys/bus/pci/devices/0000:01:00.0`.
    pub dir: String,
    /// Which of the three files it has.
    pub files: Vec<AerSeverity>,
}

/// One PCIe link whose state is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkWatch {
    /// `0000:00:01.0`.
    pub device: String,
    /// What it is.
    pub name: Option<String>,
    /// Its folder.
    pub dir: String,
    /// `max_link_{speed,width}`, where readable.
    pub max: Option<LinkState>,
}

/// One thermal throttle counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrottleCounter {
    /// Core or package.
    pub kind: ThrottleKind,
    /// The CPU whose file is read.
    pub cpu: u32,
    /// Its package.
    pub package: Option<i64>,
    /// The file.
    pub path: String,
}

/// What a run reads, found once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchPlan {
    /// EDAC units.
    pub edac: Vec<EdacUnit>,
    /// PCI functions with AER statistics.
    pub aer: Vec<AerFunction>,
    /// PCIe links.
    pub links: Vec<LinkWatch>,
    /// Thermal throttle counters.
    pub throttle: Vec<ThrottleCounter>,
    /// CPUs with cpufreq: `(cpu, cpuinfo_max_freq kHz)`.
    pub cpufreq: Vec<(u32, u64)>,
    /// Each source's state.
    pub sources: Vec<SourceState>,
}

/// One count read, or why the file could not be read (its path and the error).
pub type CountRead = Result<u64, String>;

/// One reading of every counter of a [`WatchPlan`], in its order. `Err` holds why a file
/// could not be read (path and error).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchReading {
    /// Per EDAC unit: corrected, uncorrected (`None`: no such file).
    pub edac: Vec<(CountRead, Option<CountRead>)>,
    /// Per AER function and file of [`AerFunction::files`].
    pub aer: Vec<Vec<Result<AerStats, String>>>,
    /// Per link.
    pub links: Vec<Result<LinkState, String>>,
    /// Per throttle counter.
    pub throttle: Vec<Result<u64, String>>,
}

/// `after - before` of one counter, or a problem line: a failed read, or a counter that went
/// backwards.
fn rise(
    what: &str,
    before: &Result<u64, String>,
    after: &Result<u64, String>,
    problems: &mut Vec<String>,
) -> u64 {
    match (before, after) {
        (Ok(b), Ok(a)) if a >= b => a - b,
        (Ok(b), Ok(a)) => {
            problems.push(format!(
                "{what}: went from {b} to {a} (counters reset, or the driver reloaded)"
            ));
            0
        }
        (Err(e), _) | (_, Err(e)) => {
            problems.push(e.clone());
            0
        }
    }
}

/// What moved between two readings of `plan`'s counters, `seconds` apart, with the kernel
/// log's events read in between (at most `max_log` kept, the rest counted) and the lowest
/// cpufreq ratio when read. Counters that could not be read are named in `problems` (once per
/// counter); nothing unreadable is taken for 0 errors.
pub fn delta(
    plan: &WatchPlan,
    before: &WatchReading,
    after: &WatchReading,
    seconds: f64,
    log: Vec<LogEvent>,
    max_log: usize,
) -> WatchDelta {
    let mut out = WatchDelta {
        seconds,
        ..WatchDelta::default()
    };
    let p = &mut out.problems;
    for (i, unit) in plan.edac.iter().enumerate() {
        let (Some(b), Some(a)) = (before.edac.get(i), after.edac.get(i)) else {
            continue;
        };
        let ce = rise(&unit.ce_path, &b.0, &a.0, p);
        let ue = match (&b.1, &a.1, &unit.ue_path) {
            (Some(bu), Some(au), Some(path)) => rise(path, bu, au, p),
            _ => 0,
        };
        if ce + ue > 0 {
            out.edac.push(EdacDelta {
                dimm: unit.slot.dimm.clone(),
                slot: unit.slot.slot.clone(),
                label: unit.slot.label.clone(),
                corrected: ce,
                uncorrected: ue,
            });
        }
    }
    for (i, f) in plan.aer.iter().enumerate() {
        let (Some(b), Some(a)) = (before.aer.get(i), after.aer.get(i)) else {
            continue;
        };
        let mut d = AerDelta {
            device: f.device.clone(),
            name: f.name.clone(),
            correctable: 0,
            nonfatal: 0,
            fatal: 0,
            kinds: Vec::new(),
        };
        for (k, sev) in f.files.iter().enumerate() {
            let path = format!("{}/{}", f.dir, sev.file());
            let n = match (b.get(k), a.get(k)) {
                (Some(Ok(bs)), Some(Ok(as_))) => {
                    let n = rise(&path, &Ok(bs.total), &Ok(as_.total), p);
                    if n > 0 {
                        d.kinds.extend(aer::kinds_moved(bs, as_));
                    }
                    n
                }
                (Some(Err(e)), _) | (_, Some(Err(e))) => {
                    p.push(e.clone());
                    0
                }
                _ => 0,
            };
            match sev {
                AerSeverity::Correctable => d.correctable = n,
                AerSeverity::Nonfatal => d.nonfatal = n,
                AerSeverity::Fatal => d.fatal = n,
            }
        }
        if d.correctable + d.nonfatal + d.fatal > 0 {
            out.aer.push(d);
        }
    }
    for (i, l) in plan.links.iter().enumerate() {
        match (before.links.get(i), after.links.get(i)) {
            (Some(Ok(b)), Some(Ok(a))) if b != a => out.links.push(LinkChange {
                device: l.device.clone(),
                name: l.name.clone(),
                before: b.to_string(),
                after: a.to_string(),
                max: l.max.map(|m| m.to_string()),
                below_max: l
                    .max
                    .is_some_and(|m| a.speed_mt_per_s < m.speed_mt_per_s || a.width < m.width),
            }),
            (Some(Err(e)), _) | (_, Some(Err(e))) => p.push(e.clone()),
            _ => {}
        }
    }
    for (i, t) in plan.throttle.iter().enumerate() {
        let (Some(b), Some(a)) = (before.throttle.get(i), after.throttle.get(i)) else {
            continue;
        };
        let n = rise(&t.path, b, a, p);
        if n > 0 {
            out.throttle.push(ThrottleDelta {
                kind: t.kind,
                cpu: t.cpu,
                package: t.package,
                events: n,
            });
        }
    }
    p.sort();
    p.dedup();
    let extra = log.len().saturating_sub(max_log);
    out.kernel_log = log.into_iter().take(max_log).collect();
    out.kernel_log_more = extra as u64;
    out
}

//! The hardware watch in a result file (`watch`, `tests[].watch`; the types are
//! `hwsurvey_machine::watch`) and the rounds of a soak run (`soak`): what happened to the
//! hardware while each point was measured, and how each round's figures moved.
//!
//! [`ResultFile::watched_points`] lists every point's watch of a file, a soak's later rounds
//! included, so that qualify, compare and fleet read them through one function.

use serde::{Deserialize, Serialize};

pub use hwsurvey_machine::watch::{RunWatch, WatchDelta};

use crate::outcome::Better;

/// A clock drop from the run's start to its end above this, percent, is a line of
/// [`ResultFile::watch_lines`] (qualify's `watch.throttle` default).
pub const CLOCK_DROP_LINE_PCT: f64 = 5.0;

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
use crate::{Outcome, ResultFile, TestResult};

/// A soak run (`hwsurvey run --soak DURATION`): the soak subset of the profile repeated for
/// the given time while the watch reads the hardware; round 1's records are the file's
/// `tests`, every round's figures are here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Soak {
    /// The `--soak` duration asked, seconds: no round starts after it has passed.
    pub duration_s: f64,
    /// The families repeated, in run order.
    pub families: Vec<String>,
    /// The rounds, in order.
    pub rounds: Vec<SoakRound>,
}

/// One round of a soak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakRound {
    /// 1-based.
    pub round: u32,
    /// UTC start, RFC 3339.
    pub started_at: String,
    /// Wall time, seconds.
    pub duration_s: f64,
    /// Each point of the round, in run order.
    pub points: Vec<SoakPoint>,
}

/// One point of a soak round: its headline figure and what the watch saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakPoint {
    /// Family id.
    pub family: String,
    /// Point id.
    pub id: String,
    /// Measured, skipped or failed.
    pub outcome: Outcome,
    /// The headline metric's name with its unit (`bandwidth_bytes_per_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// Which way is better.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub better: Option<Better>,
    /// The headline metric's median, in its unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<f64>,
    /// The watch over the point; `None` in round 1, whose watch is the test's
    /// (`tests[].watch`), and where the run watched nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchDelta>,
}

impl SoakPoint {
    /// The summary of a test: its headline figure (first metric's median).
    pub fn of(t: &TestResult, with_watch: bool) -> SoakPoint {
        let m = t.metrics.first();
        SoakPoint {
            family: t.point.family.clone(),
            id: t.point.id.clone(),
            outcome: t.outcome,
            metric: m.map(|m| m.name.clone()),
            better: m.map(|m| m.better),
            median: m.and_then(|m| m.summary.as_ref()).map(|s| s.median),
            watch: if with_watch { t.watch.clone() } else { None },
        }
    }
}

/// One point's watch, wherever the file holds it.
#[derive(Debug, Clone, Copy)]
pub struct WatchedPoint<'a> {
    /// Family id.
    pub family: &'a str,
    /// Point id.
    pub id: &'a str,
    /// The soak round (`None` outside a soak; round 1 is `Some(1)` in a soak).
    pub round: Option<u32>,
    /// What the watch saw.
    pub watch: &'a WatchDelta,
}

impl WatchedPoint<'_> {
    /// `mem.bandwidth stream.triad/threads=2`, with ` (round 3)` in a soak.
    pub fn words(&self) -> String {
        match self.round {
            Some(r) => format!("{} {} (round {r})", self.family, self.id),
            None => format!("{} {}", self.family, self.id),
        }
    }
}

impl ResultFile {
    /// Every point's watch: the tests' (round 1 of a soak), then a soak's later rounds.
    pub fn watched_points(&self) -> Vec<WatchedPoint<'_>> {
        let round = self.soak.as_ref().map(|_| 1);
        let mut out: Vec<WatchedPoint<'_>> = self
            .tests
            .iter()
            .filter_map(|t| {
                Some(WatchedPoint {
                    family: &t.point.family,
                    id: &t.point.id,
                    round,
                    watch: t.watch.as_ref()?,
                })
            })
            .collect();
        for r in self.soak.iter().flat_map(|s| &s.rounds) {
            for p in &r.points {
                if let Some(w) = &p.watch {
                    out.push(WatchedPoint {
                        family: &p.family,
                        id: &p.id,
                        round: Some(r.round),
                        watch: w,
                    });
                }
            }
        }
        out
    }

    /// What the hardware watch saw, one line per family and what it happened on, for a
    /// host's line in `fleet` and the end of a soak: `2,314 corrected errors on DIMM B2
    /// (mc0/dimm3) during mem.bandwidth`, `1 uncorrected memory error on DIMM B2 (mc0/dimm3)
    /// during mem.bandwidth stream.triad/threads=2`, `throttled during cpu.scaling (3 of its
    /// points; package 0 (CPU 0): 12 events)`, `PCIe link 0000:00:01.0 retrained during
    /// storage.iops (8 GT/s x8 to 2.5 GT/s x8)`. Empty when it saw nothing, and for a file
    /// without the watch.
    pub fn watch_lines(&self) -> Vec<String> {
        use std::collections::BTreeMap;
        let points = self.watched_points();
        let mut out = Vec::new();
        for p in &points {
            for f in p.watch.failures() {
                out.push(format!("{f} during {}", p.words()));
            }
        }
        // corrected errors per (family, subject), in order of first appearance
        let mut corrected: Vec<((String, String), u64)> = Vec::new();
        let mut throttled: BTreeMap<&str, (usize, BTreeMap<String, u64>)> = BTreeMap::new();
        for p in &points {
            for (who, n) in p.watch.corrected() {
                let key = (p.family.to_string(), who);
                match corrected.iter_mut().find(|(k, _)| *k == key) {
                    Some(e) => e.1 += n,
                    None => corrected.push((key, n)),
                }
            }
            if p.watch.throttled() {
                let e = throttled.entry(p.family).or_default();
                e.0 += 1;
                for t in &p.watch.throttle {
                    let what = match t.kind {
                        hwsurvey_machine::watch::ThrottleKind::Package => match t.package {
                            Some(k) => format!("package {k}"),
                            None => format!("package of CPU {}", t.cpu),
                        },
                        hwsurvey_machine::watch::ThrottleKind::Core => {
                            format!("core of CPU {}", t.cpu)
                        }
                    };
                    *e.1.entry(what).or_default() += t.events;
                }
            }
            for l in &p.watch.links {
                out.push(format!(
                    "PCIe link {} retrained during {} ({} to {})",
                    l.device,
                    p.words(),
                    l.before,
                    l.after
                ));
            }
        }
        for ((family, who), n) in corrected {
            out.push(format!(
                "{} corrected {} on {who} during {family}",
                thousands(n),
                if n == 1 { "error" } else { "errors" }
            ));
        }
        for (family, (n, by)) in throttled {
            let what: Vec<String> = by
                .iter()
                .map(|(w, e)| format!("{w}: {}", hwsurvey_model::units::plural(*e, "event")))
                .collect();
            out.push(format!(
                "throttled during {family} ({} of its points; {})",
                n,
                what.join(", ")
            ));
        }
        if let Some(d) = self.watch.as_ref().and_then(|w| w.clock.drop_pct()) {
            if d > CLOCK_DROP_LINE_PCT {
                out.push(format!(
                    "the measured clock fell {d:.1} % from the run's start to its end"
                ));
            }
        }
        out
    }

    /// The marks of point `id` of `family` ([`WatchDelta::marks`]: `throttled during this
    /// point`, ...); empty for a sound point and for a file without the watch.
    pub fn watch_marks(&self, family: &str, id: &str) -> Vec<&'static str> {
        self.tests
            .iter()
            .find(|t| t.point.family == family && t.point.id == id)
            .and_then(|t| t.watch.as_ref())
            .map(WatchDelta::marks)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(2314), "2,314");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }

    /// A file written before the watch (the schema-1 x86_64 example of reports/examples/v1)
    /// loads with no watch, no marks and no lines; one with a soak lists round 1 from its
    /// tests and later rounds from `soak`, once each.
    #[test]
    fn watched_points_of_old_files_and_soaks() {
        let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports/examples/v1/x86_64-standard.json");
        let mut file = crate::load(&example).unwrap();
        assert!(file.watch.is_none());
        assert!(file.watched_points().is_empty());
        assert!(file.watch_lines().is_empty());
        let id = file.tests[0].point.id.clone();
        let family = file.tests[0].point.family.clone();
        assert!(file.watch_marks(&family, &id).is_empty());
        let moved = WatchDelta {
            seconds: 1.0,
            throttle: vec![hwsurvey_machine::watch::ThrottleDelta {
                kind: hwsurvey_machine::watch::ThrottleKind::Core,
                cpu: 3,
                package: Some(0),
                events: 2,
            }],
            ..WatchDelta::default()
        };
        file.tests[0].watch = Some(moved.clone());
        file.soak = Some(Soak {
            duration_s: 60.0,
            families: vec![family.clone()],
            rounds: vec![
                SoakRound {
                    round: 1,
                    started_at: "2026-12-07T00:00:00Z".into(),
                    duration_s: 30.0,
                    points: vec![SoakPoint::of(&file.tests[0], false)],
                },
                SoakRound {
                    round: 2,
                    started_at: "2026-12-07T00:00:30Z".into(),
                    duration_s: 30.0,
                    points: vec![SoakPoint {
                        watch: Some(moved),
                        ..SoakPoint::of(&file.tests[0], false)
                    }],
                },
            ],
        });
        let rounds: Vec<Option<u32>> = file.watched_points().iter().map(|p| p.round).collect();
        assert_eq!(rounds, [Some(1), Some(2)]);
        assert_eq!(
            file.watch_marks(&family, &id),
            ["throttled during this point"]
        );
        assert_eq!(
            file.watch_lines(),
            [format!(
                "throttled during {family} (2 of its points; core of CPU 3: 4 events)"
            )]
        );
    }
}

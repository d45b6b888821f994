//! The time a run has left, for progress display: the plan's estimate of the points not yet
//! finished, scaled by how the finished points compared with their estimates.

use std::collections::BTreeMap;

use crate::plan::Plan;
use crate::result::TestResult;

/// The estimate of a run in progress: feed it every finished point ([`Eta::finished`]) and ask
/// it the seconds left ([`Eta::left_s`]).
#[derive(Debug, Clone)]
pub struct Eta {
    /// Estimated seconds of each planned point ([`point_estimates`]).
    estimates: BTreeMap<(String, String), f64>,
    /// Estimated seconds of the points finished so far.
    done_s: f64,
    /// Estimated seconds of the whole plan.
    total_s: f64,
}

impl Eta {
    /// Nothing finished yet: the plan's estimate as it is.
    pub fn new(plan: &Plan) -> Self {
        let estimates = point_estimates(plan);
        Eta {
            total_s: estimates.values().sum(),
            estimates,
            done_s: 0.0,
        }
    }

    /// A point finished: its estimate counts as done (a point not in the plan counts 0 s).
    pub fn finished(&mut self, result: &TestResult) {
        self.done_s += self
            .estimates
            .get(&(result.point.family.clone(), result.point.id.clone()))
            .copied()
            .unwrap_or(0.0);
    }

    /// Seconds left after `elapsed_s` seconds of run ([`eta_s`]).
    pub fn left_s(&self, elapsed_s: f64) -> f64 {
        eta_s(self.done_s, self.total_s - self.done_s, elapsed_s)
    }
}

/// The estimated seconds of every planned point, keyed by (family, point id): its family's
/// estimate shared evenly among the family's points (the plan estimates families, not points).
pub fn point_estimates(plan: &Plan) -> BTreeMap<(String, String), f64> {
    let mut out = BTreeMap::new();
    for f in &plan.families {
        let each = f.estimated_s / f.points.len().max(1) as f64;
        for p in &f.points {
            out.insert((f.family.clone(), p.id.clone()), each);
        }
    }
    out
}

/// Seconds left: the plan's estimate of the points not yet finished (`estimated_left_s`),
/// scaled by how the finished ones compared with theirs (`elapsed_s / estimated_done_s`, kept
/// within 0.25..4 so that one slow first point does not swing it). Before any point finished,
/// the estimate as it is.
pub fn eta_s(estimated_done_s: f64, estimated_left_s: f64, elapsed_s: f64) -> f64 {
    let pace = if estimated_done_s > 0.0 {
        (elapsed_s / estimated_done_s).clamp(0.25, 4.0)
    } else {
        1.0
    };
    (estimated_left_s * pace).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::FamilyPlan;
    use hwsurvey_testkit::plans::{plan, point};

    /// The ETA follows the plan's estimate until a point finished, then the pace of the
    /// finished points, within 0.25x..4x of the estimate.
    #[test]
    fn eta_follows_the_pace_of_the_finished_points() {
        assert_eq!(eta_s(0.0, 300.0, 0.0), 300.0);
        // 60 s of estimated work took 90 s: the 240 s left take 360 s
        assert_eq!(eta_s(60.0, 240.0, 90.0), 360.0);
        // faster than estimated: 60 s took 30 s
        assert_eq!(eta_s(60.0, 240.0, 30.0), 120.0);
        // one first point 10x slower than estimated: kept to 4x
        assert_eq!(eta_s(1.0, 100.0, 10.0), 400.0);
        assert_eq!(eta_s(100.0, 0.0, 120.0), 0.0);
        let p = plan(vec![FamilyPlan {
            family: "mem.latency".into(),
            budget_s: 10.0,
            estimated_s: 6.0,
            points: vec![
                point("mem.latency", "a", 1),
                point("mem.latency", "b", 1),
                point("mem.latency", "c", 2),
            ],
            skipped: vec![],
        }]);
        let e = point_estimates(&p);
        assert_eq!(e.len(), 3);
        assert_eq!(e[&("mem.latency".to_string(), "b".to_string())], 2.0);
        // the tracker: 6 s planned; "a" (2 s estimated) took 4 s: the 4 s left take 8 s
        let mut eta = Eta::new(&p);
        assert_eq!(eta.left_s(0.0), 6.0);
        let done = crate::result::TestResult::new(
            point("mem.latency", "a", 1),
            crate::PointOutcome::Skipped { reason: "r".into() },
            "2026-12-04T00:00:00Z".into(),
            4.0,
        );
        eta.finished(&done);
        assert_eq!(eta.left_s(4.0), 8.0);
    }
}

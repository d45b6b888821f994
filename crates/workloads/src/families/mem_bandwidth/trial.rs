//! The short trial that picks a kernel's instruction path for one point: every worker runs
//! every path twice, interleaved (a, b, c, a, b, c), all workers together between barriers;
//! the path with the highest sum over workers of each worker's best rate is measured.
//!
//! Which vector width moves bytes fastest depends on the machine and on the working set
//! (measured 2026-12-04 on a 2-vCPU AMD EPYC Zen 4 guest: a 64 MiB block read from memory
//! ran fastest with 16-byte loads and a 1 MiB block in L2 with 64-byte loads, and likwid-bench's
//! `stream_mem_avx` Triad now and then beat its `stream_mem_avx512`; issue 38 measured an Intel
//! Xeon guest reading memory 1.7x faster with 64-byte loads). Choosing by a measured trial, not
//! by the widest width, is what a likwid-bench user does by taking the best of its kernels.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use hwsurvey_engine::runner::Worker;

/// Each trial of one path lasts at least this long, seconds (twice per path).
pub(super) const TRIAL_S: f64 = 0.005;

/// The paths of one point and, per path, the sum over workers of each worker's best trial
/// rate (bytes/s).
pub(super) struct PathTrial<P> {
    paths: Vec<P>,
    totals: Mutex<Vec<f64>>,
}

impl<P: Copy + Serialize> PathTrial<P> {
    /// A trial among `paths` (narrowest first; non-empty: the first is the fallback).
    pub(super) fn new(paths: Vec<P>) -> Self {
        let n = paths.len();
        PathTrial {
            paths,
            totals: Mutex::new(vec![0.0; n]),
        }
    }

    /// Runs the trial in worker `w` and returns the path every worker measures with. Every
    /// worker of the point must call it (it waits at the workers' barrier); a worker without
    /// buffers (its allocation failed) passes `None` and only waits. `pass(p)` runs one pass
    /// with path `p` and returns the bytes it credits. With one path there is no trial.
    pub(super) fn choose(&self, w: &Worker<'_>, mut pass: Option<impl FnMut(P) -> f64>) -> P {
        if self.paths.len() < 2 {
            return self.paths[0];
        }
        let mut best = vec![0.0f64; self.paths.len()];
        for _round in 0..2 {
            for (k, &path) in self.paths.iter().enumerate() {
                w.barrier.wait();
                let Some(pass) = pass.as_mut() else {
                    continue;
                };
                let t0 = Instant::now();
                let mut bytes = 0.0;
                let elapsed = loop {
                    bytes += pass(path);
                    let e = t0.elapsed().as_secs_f64();
                    if e >= TRIAL_S {
                        break e;
                    }
                };
                best[k] = best[k].max(bytes / elapsed);
            }
        }
        if let Ok(mut t) = self.totals.lock() {
            t.iter_mut().zip(&best).for_each(|(t, b)| *t += b);
        }
        // every worker has added its rates once all have passed this barrier
        w.barrier.wait();
        self.fastest()
    }

    /// The path with the highest total (the first on a tie, or when no trial ran).
    pub(super) fn fastest(&self) -> P {
        let Ok(t) = self.totals.lock() else {
            return self.paths[0];
        };
        let mut best = (self.paths[0], 0.0f64);
        for (p, r) in self.paths.iter().zip(t.iter()) {
            if *r > best.1 {
                best = (*p, *r);
            }
        }
        best.0
    }

    /// The trial's totals by path name (bytes/s, all workers); empty when no trial ran.
    pub(super) fn rates(&self) -> BTreeMap<String, f64> {
        let Ok(t) = self.totals.lock() else {
            return BTreeMap::new();
        };
        if self.paths.len() < 2 {
            return BTreeMap::new();
        }
        self.paths
            .iter()
            .zip(t.iter())
            .map(|(p, r)| {
                let name = serde_json::to_value(p)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                (name, *r)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    #[derive(Clone, Copy, Debug, PartialEq, Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Width {
        Narrow,
        Wide,
    }

    fn worker(barrier: &Barrier) -> Worker<'_> {
        Worker {
            index: 0,
            threads: 1,
            pin: hwsurvey_engine::affinity::PinStatus::Unpinned {
                intended_cpu: 0,
                reason: "test".into(),
            },
            barrier,
        }
    }

    #[test]
    fn the_path_that_moves_more_bytes_is_chosen_and_its_rates_kept() {
        let barrier = Barrier::new(1);
        let w = worker(&barrier);
        // the wide path credits 4x the bytes for the same time: it must win
        let t = PathTrial::new(vec![Width::Narrow, Width::Wide]);
        let chosen = t.choose(
            &w,
            Some(|p: Width| {
                std::thread::sleep(std::time::Duration::from_micros(200));
                match p {
                    Width::Narrow => 1e6,
                    Width::Wide => 4e6,
                }
            }),
        );
        assert_eq!(chosen, Width::Wide);
        let r = t.rates();
        assert_eq!(r.keys().collect::<Vec<_>>(), ["narrow", "wide"]);
        assert!(r["wide"] > 2.0 * r["narrow"], "{r:?}");
        // a worker without buffers takes part and gets the fallback, no rates of its own
        let t = PathTrial::new(vec![Width::Narrow, Width::Wide]);
        assert_eq!(t.choose(&w, None::<fn(Width) -> f64>), Width::Narrow);
        assert_eq!(t.rates().values().sum::<f64>(), 0.0);
        // one path: no trial, no rates
        let t = PathTrial::new(vec![Width::Wide]);
        assert_eq!(t.choose(&w, None::<fn(Width) -> f64>), Width::Wide);
        assert!(t.rates().is_empty());
    }
}

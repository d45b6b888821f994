//! `raid.parity`: RAID-6 P+Q syndrome generation (and two-data-block recovery) vs threads, in
//! bytes of data processed per second (MB = 10^6 where shown), as Linux lib/raid6 computes it.
//!
//! Each worker owns `stripes_per_thread` stripes of N data chunks + P + Q (`chunk_bytes` each,
//! 64-byte aligned as the kernel's pages and ISA-L's buffers are), first-touched in its own
//! thread; one repetition generates P and Q for all its stripes
//! (or rebuilds data blocks 0 and 1 of each from P and Q). Before timing, each worker checks
//! its path against the independent bytewise reference on its first stripe; a mismatch fails
//! the point. The `best` path is the fastest of the paths this CPU runs (`int64x4`, `neonx4`,
//! `avx2x4`, `gfni_avx2x4`, `avx512x4`, `gfni_avx512x4`), chosen by timing them all once per
//! geometry ([`raid6::select_fastest`], as the kernel chooses at boot). Each point records the
//! path it ran (`algorithm`), the choice (`best`) with every path's selection figure
//! (`paths_measured`), the paths this CPU could run that the build lacks (`paths_unbuilt`), and
//! the kernel's own boot-time choice and figure where its log is readable
//! ([`crate::raid6::kmsg`]).

use serde::{Deserialize, Serialize};

use crate::raid6::{self, Algorithm, AlignedBlock};
use hwsurvey_engine::outcome::{Measurement, Metric, PointOutcome};
use hwsurvey_engine::plan::{FamilyPoints, PlanInput, Point};
use hwsurvey_engine::profile::{CheckedParams, Checker, ProfileError};
use hwsurvey_engine::runner::{consume, RunContext};
use hwsurvey_engine::Family;

/// The family.
pub struct RaidParity;

/// What a point times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// P+Q generation over all data blocks.
    Gen,
    /// Rebuild of two lost data blocks (0 and 1) from the others and P, Q.
    #[serde(rename = "recov_2data")]
    Recov2Data,
}

/// Which generation path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathChoice {
    /// The fastest path this CPU runs ([`raid6::select_fastest`]), timed at run time.
    Best,
    /// The portable 64-bit SWAR path, on every target.
    Int64x4,
}

/// `[families."raid.parity".params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Data blocks per stripe (each geometry is N data + P + Q): non-empty, no duplicates, each
    /// 2..=255 (`raid6::MIN_DATA_BLOCKS..=MAX_DATA_BLOCKS`).
    pub data_blocks: Vec<usize>,
    /// Bytes per chunk (one block of one stripe); 1..=2^24 (any length: the vector paths do
    /// the multiple of their step, the portable code the rest).
    pub chunk_bytes: usize,
    /// Stripes each worker cycles through (its working set is this x (N + 2) x chunk_bytes);
    /// 1..=1024.
    pub stripes_per_thread: usize,
    /// Paths to time (non-empty, no duplicates).
    pub paths: Vec<PathChoice>,
    /// Operations to time (recovery with the best path only; non-empty, no duplicates).
    pub ops: Vec<Op>,
}

impl CheckedParams for Params {
    /// The ranges in the field docs.
    fn check(&self, c: &Checker<'_>) -> Result<(), ProfileError> {
        c.int_list(
            "data_blocks",
            &self.data_blocks,
            raid6::MIN_DATA_BLOCKS,
            raid6::MAX_DATA_BLOCKS,
            "RAID-6 data blocks per stripe",
        )?;
        c.int("chunk_bytes", self.chunk_bytes, 1, 1 << 24, "bytes")?;
        c.int("stripes_per_thread", self.stripes_per_thread, 1, 1024, "")?;
        c.list("paths", &self.paths)?;
        c.list("ops", &self.ops)
    }
}

/// Parameters of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointParams {
    /// Operation.
    pub op: Op,
    /// Path.
    pub path: PathChoice,
    /// Data blocks per stripe.
    pub data_blocks: usize,
    /// Bytes per chunk.
    pub chunk_bytes: usize,
    /// Stripes per worker.
    pub stripes_per_thread: usize,
}

impl Family for RaidParity {
    type Params = Params;
    type PointParams = PointParams;

    fn id(&self) -> &'static str {
        "raid.parity"
    }

    fn describe(&self) -> &'static str {
        "RAID-6 P+Q syndrome generation and 2-data recovery (Linux lib/raid6 math) vs threads"
    }

    fn plan(&self, params: Params, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        let mut out = FamilyPoints::default();
        let threads = input.thread_counts(false);
        for &op in &params.ops {
            let paths: Vec<PathChoice> = match op {
                Op::Gen => params.paths.clone(),
                Op::Recov2Data => vec![PathChoice::Best],
            };
            for &path in &paths {
                for &n in &params.data_blocks {
                    for &t in &threads {
                        let p = PointParams {
                            op,
                            path,
                            data_blocks: n,
                            chunk_bytes: params.chunk_bytes,
                            stripes_per_thread: params.stripes_per_thread,
                        };
                        let id = format!(
                            "{}.{}/{}+2/threads={t}",
                            match op {
                                Op::Gen => "gen",
                                Op::Recov2Data => "recov_2data",
                            },
                            match path {
                                PathChoice::Best => "best",
                                PathChoice::Int64x4 => "int64x4",
                            },
                            n
                        );
                        if !(raid6::MIN_DATA_BLOCKS..=raid6::MAX_DATA_BLOCKS).contains(&n)
                            || params.chunk_bytes == 0
                        {
                            out.skipped.push(input.skip(
                                id,
                                &p,
                                format!(
                                    "geometry {n}+2 with {}-byte chunks: data blocks must be {}..={} and chunks non-empty",
                                    params.chunk_bytes,
                                    raid6::MIN_DATA_BLOCKS,
                                    raid6::MAX_DATA_BLOCKS
                                ),
                            ));
                            continue;
                        }
                        let bytes = (n as u64 + 2)
                            * params.chunk_bytes as u64
                            * params.stripes_per_thread.max(1) as u64
                            * t as u64;
                        out.points.push(input.point(id, t, &p, bytes));
                    }
                }
            }
        }
        Ok(out)
    }

    fn run_point(&self, p: PointParams, point: &Point, ctx: &RunContext<'_>) -> PointOutcome {
        // The choice is timed on one thread before the workers start (cached per geometry).
        let selection = match raid6::select_fastest(p.data_blocks, p.chunk_bytes) {
            Ok(s) => s,
            Err(e) => {
                return PointOutcome::Failed {
                    error: format!("choosing the RAID-6 path: {e}"),
                }
            }
        };
        let alg = match p.path {
            PathChoice::Best => selection.best,
            PathChoice::Int64x4 => Algorithm::Int64x4,
        };
        let n = p.data_blocks;
        let chunk = p.chunk_bytes;
        let stripes = p.stripes_per_thread.max(1);
        let check_failed = std::sync::Mutex::new(None::<String>);
        let setup = |w: &hwsurvey_engine::runner::Worker<'_>| -> Vec<Vec<AlignedBlock>> {
            let mut all = Vec::with_capacity(stripes);
            for s in 0..stripes {
                let mut blocks: Vec<AlignedBlock> = (0..n + 2)
                    .map(|i| {
                        let mut b = AlignedBlock::zeroed(chunk);
                        raid6::fill_pseudo_random(
                            &mut b,
                            ((w.index * 1000 + s) * 300 + i + 1) as u64,
                        );
                        b
                    })
                    .collect();
                if let Err(e) = gen_in_place(alg, &mut blocks) {
                    record(&check_failed, e.to_string());
                }
                if s == 0 {
                    let view: Vec<&[u8]> = blocks[..n].iter().map(|b| &b[..]).collect();
                    let (rp, rq) = raid6::reference::syndromes(&view);
                    if rp[..] != blocks[n][..] || rq[..] != blocks[n + 1][..] {
                        record(
                            &check_failed,
                            format!("{} P/Q differ from the bytewise reference", alg.name()),
                        );
                    }
                }
                all.push(blocks);
            }
            all
        };
        let kernel = |state: &mut Vec<Vec<AlignedBlock>>, reps: u64| {
            for _ in 0..reps {
                for blocks in state.iter_mut() {
                    let r = match p.op {
                        Op::Gen => gen_in_place(alg, blocks).map(|_| ()),
                        Op::Recov2Data => {
                            let mut refs: Vec<&mut [u8]> =
                                blocks.iter_mut().map(|b| &mut b[..]).collect();
                            raid6::recover(alg, &mut refs, 0, 1).map(|_| ())
                        }
                    };
                    if let Err(e) = r {
                        record(&check_failed, e.to_string());
                        return;
                    }
                }
                consume(
                    state
                        .first()
                        .and_then(|b| b.last())
                        .and_then(|q| q.first())
                        .copied(),
                );
            }
        };
        let timed = match ctx.measure_parallel(point, setup, kernel) {
            Ok(t) => t,
            Err(e) => {
                return PointOutcome::Failed {
                    error: e.to_string(),
                }
            }
        };
        if let Some(e) = check_failed.lock().ok().and_then(|g| g.clone()) {
            return PointOutcome::Failed { error: e };
        }
        let data_bytes_per_rep = (n * chunk * stripes) as f64;
        let mut m = Measurement {
            metrics: vec![Metric::bandwidth_bytes_per_s(
                timed.rates(data_bytes_per_rep),
            )],
            pins: timed.pins.clone(),
            ..Default::default()
        }
        .detail("algorithm", alg.name())
        .detail(
            "available_algorithms",
            Algorithm::available()
                .iter()
                .map(|a| a.name())
                .collect::<Vec<_>>(),
        )
        .detail("best", selection.best.name())
        .detail("paths_measured", &selection.measured)
        .detail(
            "path_selection",
            serde_json::json!({
                "data_blocks": selection.data_blocks,
                "chunk_bytes": selection.chunk_bytes,
                "rounds": selection.rounds,
                "round_min_s": raid6::SELECTION_ROUND_MIN.as_secs_f64(),
                "method": "P+Q gen on 1 thread, stripe in cache, rounds interleaved, each timing batches of at least 256 KiB of data; per path the median bytes of data per s over all batches; best = highest",
            }),
        )
        .detail("paths_unbuilt", &selection.unbuilt)
        .detail("data_bytes_per_rep_per_thread", data_bytes_per_rep)
        .detail(
            "bandwidth_counts",
            "data bytes only (N x chunk per stripe), not P/Q",
        )
        .detail("reps_per_sample", timed.reps_per_sample)
        .detail("checked_against_reference", true);
        if let Some(c) = &timed.cut_short {
            m = m.detail("cut_short", c);
        }
        if p.op == Op::Gen && point.threads == 1 {
            m = match raid6::kmsg::probe_kernel_raid6() {
                Ok(Some(k)) => m.detail("kernel_raid6", k),
                Ok(None) => m.detail(
                    "kernel_raid6_unknown",
                    "no raid6 lines in the kernel log (raid6_pq not loaded, or rotated out)",
                ),
                Err(e) => m.detail("kernel_raid6_unknown", e),
            };
        }
        PointOutcome::Measured(m)
    }
}

fn record(slot: &std::sync::Mutex<Option<String>>, e: String) {
    if let Ok(mut g) = slot.lock() {
        g.get_or_insert(e);
    }
}

/// Generates P and Q of a stripe stored as N data blocks followed by P and Q.
fn gen_in_place(alg: Algorithm, blocks: &mut [AlignedBlock]) -> Result<(), raid6::Raid6Error> {
    let n = blocks.len().saturating_sub(2);
    let (data, pq) = blocks.split_at_mut(n);
    let view: Vec<&[u8]> = data.iter().map(|b| &b[..]).collect();
    match pq {
        [p, q] => raid6::gen_syndrome(alg, &view, p, q),
        _ => Err(raid6::Raid6Error::DataBlockCount { data_blocks: n }),
    }
}

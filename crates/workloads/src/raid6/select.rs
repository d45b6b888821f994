//! Run-time choice of the fastest generation path, as the kernel's `raid6_select_algo`
//! (lib/raid6/algos.c) does at boot: every runnable path is timed on one thread, in cache, and
//! the fastest wins. Unlike the kernel, the rounds are interleaved (each round times every path,
//! the order rotating), each round times short batches, and the figure of a path is its median
//! over all batches, so that a shared host's swings and preemptions do not decide the choice.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{fill_pseudo_random, gen_syndrome, Algorithm, AlignedBlock, Raid6Error};
use super::{MAX_DATA_BLOCKS, MIN_DATA_BLOCKS};

/// Interleaved rounds per selection.
pub const SELECTION_ROUNDS: usize = 7;
/// Least wall time of one path in one round.
pub const SELECTION_ROUND_MIN: Duration = Duration::from_millis(1);
/// Largest chunk the selection times (longer chunks are timed at this length: the choice is
/// about the vector unit, and the timed stripe should stay in cache as the kernel's does).
pub const SELECTION_MAX_CHUNK_BYTES: usize = 64 * 1024;

/// One path's figure in a selection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathFigure {
    /// The path.
    pub algorithm: Algorithm,
    /// Median of its P+Q generation rate over every timed batch of every round (a batch is
    /// at least 256 KiB of data), bytes of data per second (one thread, the stripe in cache).
    pub gen_bytes_per_s: f64,
}

/// A path that another implementation has for a feature this CPU reports, which this build
/// does not have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnbuiltPath {
    /// Name of the path where it exists.
    pub name: String,
    /// The CPU feature (as `/proc/cpuinfo` spells it) this CPU reports.
    pub cpu_feature: String,
    /// Where that path exists.
    pub found_in: String,
}

/// The outcome of [`select_fastest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// The fastest path: the highest [`PathFigure::gen_bytes_per_s`].
    pub best: Algorithm,
    /// Data blocks of the timed stripe.
    pub data_blocks: usize,
    /// Chunk length timed, bytes (the geometry's, at most [`SELECTION_MAX_CHUNK_BYTES`]).
    pub chunk_bytes: usize,
    /// Interleaved rounds.
    pub rounds: usize,
    /// Every runnable path with its figure, in [`Algorithm::ALL`] order.
    pub measured: Vec<PathFigure>,
    /// Paths this CPU could run that this build lacks ([`unbuilt_paths`]).
    pub unbuilt: Vec<UnbuiltPath>,
}

static SELECTIONS: Mutex<Vec<Selection>> = Mutex::new(Vec::new());

/// The fastest runnable path for stripes of `data_blocks` data chunks of `chunk_bytes`, timed
/// once per geometry and process (later calls return the first result, so that every point of
/// a run with that geometry uses one path). Takes about
/// rounds x paths x [`SELECTION_ROUND_MIN`] (some 40 ms on a machine with five paths).
///
/// Errors: [`Raid6Error::DataBlockCount`] for a count outside 2..=255, or a zero chunk length
/// (reported as a length mismatch of block 0).
pub fn select_fastest(data_blocks: usize, chunk_bytes: usize) -> Result<Selection, Raid6Error> {
    if !(MIN_DATA_BLOCKS..=MAX_DATA_BLOCKS).contains(&data_blocks) {
        return Err(Raid6Error::DataBlockCount { data_blocks });
    }
    if chunk_bytes == 0 {
        return Err(Raid6Error::LengthMismatch {
            block: 0,
            expected_bytes: 1,
            got_bytes: 0,
        });
    }
    let chunk = chunk_bytes.min(SELECTION_MAX_CHUNK_BYTES);
    if let Some(s) = SELECTIONS.lock().ok().and_then(|g| {
        g.iter()
            .find(|s| s.data_blocks == data_blocks && s.chunk_bytes == chunk)
            .cloned()
    }) {
        return Ok(s);
    }
    let s = time_paths(
        &Algorithm::available(),
        data_blocks,
        chunk,
        SELECTION_ROUNDS,
    )?;
    if let Ok(mut g) = SELECTIONS.lock() {
        g.push(s.clone());
    }
    Ok(s)
}

/// Times `paths` (gen, one thread) on a stripe of `data_blocks` x `chunk_bytes` (64-byte
/// aligned blocks, [`AlignedBlock`]) for `rounds`
/// interleaved rounds and picks the fastest; no caching. Errors: as [`gen_syndrome`].
pub fn time_paths(
    paths: &[Algorithm],
    data_blocks: usize,
    chunk_bytes: usize,
    rounds: usize,
) -> Result<Selection, Raid6Error> {
    let data: Vec<AlignedBlock> = (0..data_blocks)
        .map(|i| {
            let mut b = AlignedBlock::zeroed(chunk_bytes);
            fill_pseudo_random(&mut b, 7 + i as u64);
            b
        })
        .collect();
    let view: Vec<&[u8]> = data.iter().map(|d| &d[..]).collect();
    let mut p = AlignedBlock::zeroed(chunk_bytes);
    let mut q = AlignedBlock::zeroed(chunk_bytes);
    let bytes_per_call = (data_blocks * chunk_bytes) as f64;
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
    // Warm the stripe and every path's code once.
    for &alg in paths {
        gen_syndrome(alg, &view, &mut p, &mut q)?;
    }
    // One timed sample is a batch of calls covering at least BATCH_BYTES of data, so that the
    // clock's cost stays small on tiny stripes; a preempted sample is one of hundreds, and the
    // median ignores it.
    const BATCH_BYTES: usize = 256 * 1024;
    let batch = BATCH_BYTES.div_ceil(data_blocks * chunk_bytes).max(1) as u64;
    for round in 0..rounds.max(1) {
        for i in 0..paths.len() {
            let k = (i + round) % paths.len();
            let t0 = Instant::now();
            while t0.elapsed() < SELECTION_ROUND_MIN {
                let t = Instant::now();
                for _ in 0..batch {
                    gen_syndrome(paths[k], &view, &mut p, &mut q)?;
                }
                let s = t.elapsed().as_secs_f64();
                if s > 0.0 {
                    rates[k].push(batch as f64 * bytes_per_call / s);
                }
            }
        }
    }
    let measured: Vec<PathFigure> = paths
        .iter()
        .zip(rates)
        .map(|(&algorithm, r)| PathFigure {
            algorithm,
            gen_bytes_per_s: hwsurvey_stats::median(&r).unwrap_or(0.0),
        })
        .collect();
    let best = measured
        .iter()
        .max_by(|a, b| a.gen_bytes_per_s.total_cmp(&b.gen_bytes_per_s))
        .map_or(Algorithm::Int64x4, |f| f.algorithm);
    Ok(Selection {
        best,
        data_blocks,
        chunk_bytes,
        rounds: rounds.max(1),
        measured,
        unbuilt: unbuilt_paths(),
    })
}

/// Paths that the kernel's lib/raid6 or ISA-L have for a CPU feature this CPU reports and that
/// this build lacks: on aarch64, SVE (ISA-L's `pq_gen_sve`); on x86_64 every such feature has
/// a path here (the kernel's narrower avx512x1/x2, avx2x1/x2 and sse2 variants are the same
/// instructions unrolled less), so the list is empty; on other architectures no vector path is
/// built, and none is known to this code.
pub fn unbuilt_paths() -> Vec<UnbuiltPath> {
    #[allow(unused_mut)]
    let mut out = Vec::new();
    #[cfg(target_arch = "aarch64")]
    if std::arch::is_aarch64_feature_detected!("sve") {
        out.push(UnbuiltPath {
            name: "sve".into(),
            cpu_feature: "sve".into(),
            found_in: "ISA-L pq_gen_sve (raid/aarch64)".into(),
        });
    }
    out
}

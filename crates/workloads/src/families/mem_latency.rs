//! `mem.latency`: dependent-load pointer chase over a working set.
//!
//! The working set is cut into cache lines ([`LINE_BYTES`] apart); the first word of each line
//! holds the word index of the next line to visit, so each load's address depends on the previous
//! load and the time per step is the load-to-use latency of wherever the line lives (L1 ... DRAM),
//! plus TLB misses.
//!
//! Two visiting orders, both a single cycle through every line:
//! - **full random** ([`sattolo_cycle`]): a uniformly random cyclic permutation (Sattolo's
//!   algorithm, Sattolo 1986; Knuth TAOCP vol. 2, 3.4.2), so hardware prefetchers see no pattern
//!   and every load may also miss the TLB;
//! - **page-local random** ([`page_local_order`]): random order inside a window of pages, the
//!   windows themselves visited in random order, as multichase's TLB-locality chase does
//!   (github.com/google/multichase, `-T`): cache misses without most TLB misses.
//!
//! Pure parts (permutations, layout, the chase loop) are separated from allocation (the caller
//! hands in the buffer, usually a [`hwsurvey_engine::pages::PageBuffer`] with the page mode under test).
//! The random generator is SplitMix64 (Steele, Lea & Flood, OOPSLA 2014), written here so the
//! chase of a given profile version is the same on every build and architecture.

/// Distance between chased elements in bytes: one cache line on every target hwsurvey supports
/// (x86_64, aarch64 with 64-byte lines; 128-byte-line machines then see every other line, which
/// still defeats spatial locality).
pub const LINE_BYTES: usize = 64;

/// SplitMix64 pseudo-random generator (Steele, Lea & Flood 2014): 64-bit state, passes BigCrush,
/// identical output on every architecture and endianness.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator with the given seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// Next 64-bit value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform value in `0..bound` (Lemire's multiply-shift with rejection; `bound` > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        debug_assert!(bound > 0);
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let m = (self.next_u64() as u128) * (bound as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }
}

/// Successor array of a uniformly random single cycle over `0..n` (Sattolo's algorithm):
/// `next[i]` is the element visited after `i`; following `next` from any element visits all `n`
/// before returning. `n == 0` gives an empty array, `n == 1` the self-loop `[0]`.
pub fn sattolo_cycle(n: usize, rng: &mut SplitMix64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    let mut i = n;
    while i > 1 {
        i -= 1;
        let j = rng.below(i as u64) as usize; // j < i: never a fixed point, one cycle
        p.swap(i, j);
    }
    p
}

/// Visiting order (a permutation of `0..n`) that stays inside windows of `window` consecutive
/// elements: the windows are visited in random order, and inside each window its elements in a
/// random order (the last window may be shorter when `window` does not divide `n`).
/// `window == 0` is treated as 1.
pub fn page_local_order(n: usize, window: usize, rng: &mut SplitMix64) -> Vec<usize> {
    let window = window.max(1);
    let windows = n.div_ceil(window);
    let mut window_order: Vec<usize> = (0..windows).collect();
    shuffle(&mut window_order, rng);
    let mut order = Vec::with_capacity(n);
    for w in window_order {
        let start = w * window;
        let end = (start + window).min(n);
        let mut inner: Vec<usize> = (start..end).collect();
        shuffle(&mut inner, rng);
        order.extend(inner);
    }
    order
}

/// Fisher-Yates shuffle (Knuth's Algorithm P).
fn shuffle(v: &mut [usize], rng: &mut SplitMix64) {
    let mut i = v.len();
    while i > 1 {
        let j = rng.below(i as u64) as usize; // j <= i - 1
        i -= 1;
        v.swap(i, j);
    }
}

/// Turns a visiting order (a permutation of `0..n`) into a successor array: `next[order[k]] =
/// order[k + 1]`, and the last element leads back to the first, closing one cycle.
pub fn order_to_successors(order: &[usize]) -> Vec<usize> {
    let mut next = vec![0usize; order.len()];
    for (k, &from) in order.iter().enumerate() {
        let to = order[(k + 1) % order.len()];
        if let Some(slot) = next.get_mut(from) {
            *slot = to;
        }
    }
    next
}

/// The two visiting orders of the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChaseOrder {
    /// One random cycle over all lines ([`sattolo_cycle`]).
    FullRandom,
    /// Random inside windows of `window_bytes`, windows in random order ([`page_local_order`]).
    PageLocal {
        /// Window size in bytes (a whole number of pages).
        window_bytes: usize,
    },
}

/// Successor array over `lines` cache lines for `order`, from `seed`.
pub fn successors(order: ChaseOrder, lines: usize, seed: u64) -> Vec<usize> {
    let mut rng = SplitMix64::new(seed);
    match order {
        ChaseOrder::FullRandom => sattolo_cycle(lines, &mut rng),
        ChaseOrder::PageLocal { window_bytes } => {
            let window_lines = (window_bytes / LINE_BYTES).max(1);
            order_to_successors(&page_local_order(lines, window_lines, &mut rng))
        }
    }
}

/// Error laying out a chase.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// The buffer holds fewer lines than the successor array needs.
    #[error("chase buffer of {buffer_words} words holds fewer than {lines} lines of {stride_words} words")]
    BufferTooSmall {
        /// Lines asked for.
        lines: usize,
        /// Words per line.
        stride_words: usize,
        /// Words available.
        buffer_words: usize,
    },
    /// A successor index is out of range.
    #[error("successor {value} at line {line} is not below the line count {lines}")]
    BadSuccessor {
        /// Line holding the bad value.
        line: usize,
        /// The value.
        value: usize,
        /// Number of lines.
        lines: usize,
    },
}

/// Words per cache line on this target.
pub fn stride_words() -> usize {
    LINE_BYTES / std::mem::size_of::<usize>()
}

/// Number of cache lines a working set of `size_bytes` holds.
pub fn lines_for(size_bytes: usize) -> usize {
    size_bytes / LINE_BYTES
}

/// Writes the chase into `words`: the first word of line `i` (word `i * stride_words()`) gets the
/// word index of line `next[i]`. Other words are left as they are. Returns the word index to
/// start from (line 0).
pub fn lay_out(words: &mut [usize], next: &[usize]) -> Result<usize, LayoutError> {
    let stride = stride_words();
    let lines = next.len();
    if lines
        .checked_mul(stride)
        .is_none_or(|need| need > words.len())
    {
        return Err(LayoutError::BufferTooSmall {
            lines,
            stride_words: stride,
            buffer_words: words.len(),
        });
    }
    for (line, &to) in next.iter().enumerate() {
        if to >= lines {
            return Err(LayoutError::BadSuccessor {
                line,
                value: to,
                lines,
            });
        }
        words[line * stride] = to * stride;
    }
    Ok(0)
}

/// Follows the chase for `steps` dependent loads from word index `start` and returns where it
/// ended. After a whole number of trips around a cycle of `lines` lines it returns `start`: the
/// caller checks that, so the loads cannot be optimised away and a corrupt chase is caught.
///
/// Panics only if `words` was not laid out by [`lay_out`] (an index out of range); the bounds
/// check is off the load-to-load dependency path.
#[inline(never)]
pub fn chase(words: &[usize], start: usize, steps: u64) -> usize {
    let mut p = start;
    let mut left = steps;
    while left >= 8 {
        p = words[p];
        p = words[p];
        p = words[p];
        p = words[p];
        p = words[p];
        p = words[p];
        p = words[p];
        p = words[p];
        left -= 8;
    }
    while left > 0 {
        p = words[p];
        left -= 1;
    }
    p
}

/// Working sets of the family: powers of two from `min_bytes` up to and including the first one
/// that is at least `factor` x `llc_bytes` (e.g. 16 KiB .. >= 4 x LLC). Empty when
/// `min_bytes == 0`.
pub fn working_sets(min_bytes: usize, llc_bytes: usize, factor: usize) -> Vec<usize> {
    let mut out = Vec::new();
    if min_bytes == 0 {
        return out;
    }
    let target = llc_bytes.saturating_mul(factor).max(min_bytes);
    let mut s = min_bytes.next_power_of_two();
    loop {
        out.push(s);
        if s >= target {
            break;
        }
        match s.checked_mul(2) {
            Some(n) => s = n,
            None => break,
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The family: plan and run over the engine.

use serde::{Deserialize, Serialize};

use hwsurvey_engine::outcome::{Measurement, Metric, PointOutcome};
use hwsurvey_engine::pages::{AllocError, PageBuffer, PageMode, Verification};
use hwsurvey_engine::plan::{FamilyPoints, PlanInput, Point};
use hwsurvey_engine::profile::{CheckedParams, Checker, ProfileError};
use hwsurvey_engine::runner::{consume, RunContext};
use hwsurvey_engine::Family;

/// Seed of every chase (part of the profile's definition: same chase on every machine).
pub const CHASE_SEED: u64 = 0x6877_7375_7276_6579; // "hwsurvey"

/// Share of a THP buffer that must be huge-backed to count as "got THP" in the details.
pub const THP_MIN_FRACTION: f64 = 0.5;

/// The family.
pub struct MemLatency;

/// Page modes of the profile (`hugetlb` expands to every size with a pool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeRule {
    /// Base pages.
    Base,
    /// THP by madvise.
    Thp,
    /// Every hugetlb size the kernel offers.
    Hugetlb,
}

/// Chase orders of the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrderRule {
    /// [`ChaseOrder::FullRandom`].
    FullRandom,
    /// [`ChaseOrder::PageLocal`] with the profile's window.
    PageLocal,
}

/// `[families."mem.latency".params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Smallest working set, bytes (16 KiB in the standard profile); 128..=2^40.
    pub working_set_min_bytes: u64,
    /// Ratio between successive working sets (the largest is the run's "memory" working set,
    /// >= k x LLC); 2..=1024.
    pub working_set_step_factor: u64,
    /// Orders to chase (non-empty, no duplicates).
    pub orders: Vec<OrderRule>,
    /// Page-local window, in base pages; 1..=2^20.
    pub page_local_window_pages: u64,
    /// Page-local points only from this working set up, bytes (below it both orders are alike);
    /// 128..=2^40.
    pub page_local_min_bytes: u64,
    /// Page modes (non-empty, no duplicates).
    pub page_modes: Vec<ModeRule>,
    /// THP and hugetlb points only from this working set up, bytes; 128..=2^40.
    pub huge_min_bytes: u64,
}

impl CheckedParams for Params {
    /// The ranges in the field docs.
    fn check(&self, c: &Checker<'_>) -> Result<(), ProfileError> {
        let max = hwsurvey_engine::profile::MAX_SIZE_BYTES;
        let line2 = 2 * LINE_BYTES as u64;
        c.int(
            "working_set_min_bytes",
            self.working_set_min_bytes,
            line2,
            max,
            "bytes",
        )?;
        c.int(
            "working_set_step_factor",
            self.working_set_step_factor,
            2,
            1024,
            "",
        )?;
        c.list("orders", &self.orders)?;
        c.int(
            "page_local_window_pages",
            self.page_local_window_pages,
            1,
            1 << 20,
            "base pages",
        )?;
        c.int(
            "page_local_min_bytes",
            self.page_local_min_bytes,
            line2,
            max,
            "bytes",
        )?;
        c.list("page_modes", &self.page_modes)?;
        c.int("huge_min_bytes", self.huge_min_bytes, line2, max, "bytes")
    }
}

/// Parameters of one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointParams {
    /// Visiting order.
    pub order: ChaseOrder,
    /// Page mode asked for.
    pub page_mode: PageMode,
    /// Working set, bytes (lines x 64).
    pub working_set_bytes: u64,
    /// Cache lines chased.
    pub lines: u64,
    /// Seed of the permutation.
    pub seed: u64,
}

/// The hugetlb pages a point needs: `(page size, pages)` = the working set rounded up to whole
/// pages of its pool's size; `None` for a point of another page mode. The plan skips a point
/// whose pool has fewer free pages ("needs N"), and qualify's `pages.hugetlb` fix asks for the
/// largest of these per size ([`hugetlb_needs`]).
pub fn hugetlb_need(params: &PointParams) -> Option<(u64, u64)> {
    match params.page_mode {
        PageMode::HugeTlb { page_size_bytes } if page_size_bytes > 0 => Some((
            page_size_bytes,
            params.working_set_bytes.div_ceil(page_size_bytes),
        )),
        _ => None,
    }
}

/// The pages each hugetlb pool must hold for every hugetlb point of the standard profile's
/// plan on the machine under `root` (live, or a capture) to run, per page size (ascending):
/// the plan `run --plan-only` (`--root`) prints, built by the same function
/// ([`hwsurvey_engine::plan::build_plan`]), read by [`hugetlb_needs`]. What `hwsurvey
/// qualify` holds the pools against. `None` when the plan cannot be built (a capture whose
/// CPUs or memory cannot be read).
pub fn standard_plan_hugetlb_needs(
    root: &hwsurvey_probe::SysRoot,
    machine: &hwsurvey_probe::Machine,
) -> Option<Vec<(u64, u64)>> {
    use hwsurvey_probe::run_env::{ReadRunEnv as _, RunEnv};
    let profile = super::load_profile("standard").ok()?;
    let env = if root.is_live() {
        RunEnv::from_machine(machine, root)
    } else {
        hwsurvey_engine::ladder::captured_env(machine, RunEnv::from_machine(machine, root)).ok()?
    };
    let options = hwsurvey_engine::plan::RunOptions {
        storage_dirs: Vec::new(),
        storage_devices: Vec::new(),
        confirm_devices: Vec::new(),
        destructive: false,
        capture: !root.is_live(),
        speed: None,
    };
    let plan = hwsurvey_engine::plan::build_plan(
        &profile,
        &super::registry(),
        machine,
        &env,
        &options,
        &[],
    )
    .ok()?;
    Some(hugetlb_needs(&plan))
}

/// The pages each hugetlb pool must hold for every hugetlb point of `plan` to run: per page
/// size (ascending), the largest [`hugetlb_need`] of the family's planned and skipped points.
pub fn hugetlb_needs(plan: &hwsurvey_engine::plan::Plan) -> Vec<(u64, u64)> {
    let mine = plan.families.iter().filter(|f| f.family == "mem.latency");
    let planned = mine
        .clone()
        .flat_map(|f| f.points.iter().map(|p| &p.params));
    let skipped = mine.flat_map(|f| f.skipped.iter().map(|s| &s.params));
    let mut needs: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
    for params in planned.chain(skipped) {
        let Ok(p) = serde_json::from_value::<PointParams>(params.clone()) else {
            continue;
        };
        if let Some((size, pages)) = hugetlb_need(&p) {
            let e = needs.entry(size).or_insert(0);
            *e = (*e).max(pages);
        }
    }
    needs.into_iter().collect()
}

fn size_label(bytes: u64) -> String {
    hwsurvey_model::units::format_bytes_binary(bytes).replace(' ', "")
}

impl MemLatency {
    /// Working sets: min, min x f, ... below `max`, then `max` itself.
    fn ladder(p: &Params, max: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let step = p.working_set_step_factor;
        let mut s = p.working_set_min_bytes.max(LINE_BYTES as u64 * 2);
        while s < max {
            out.push(s);
            s = s.saturating_mul(step);
        }
        out.push(max.max(LINE_BYTES as u64 * 2));
        out
    }
}

/// Nominal load latency for the time estimate, seconds: one repetition walks every line once.
/// Memory latency of a 2-CPU EPYC VM at 256-420 MiB (full random 240-320 ns, page-local
/// 105-145 ns), rounded: the estimate is for planning, not a measurement.
fn nominal_latency_s(order: OrderRule) -> f64 {
    match order {
        OrderRule::FullRandom => 250e-9,
        OrderRule::PageLocal => 130e-9,
    }
}

/// Expected time of one chase point, seconds: the layout (first touch and a Sattolo step a
/// line at this machine's measured speeds,
/// [`hwsurvey_engine::speed::FixedWorkSpeed::chain_layout_s`]), then the larger of the standard
/// estimate and `samples_min` + 1 whole repetitions (a repetition walks all `lines`, so a
/// large working set makes samples longer than the profile's minimum).
fn estimate_s(input: &PlanInput<'_>, order: OrderRule, lines: u64) -> f64 {
    let rep_s = lines as f64 * nominal_latency_s(order);
    let reps = (input.settings.samples_min + 1) as f64;
    input.speed().chain_layout_s(lines, LINE_BYTES as u64)
        + input.estimate_point_s().max(reps * rep_s)
}

impl Family for MemLatency {
    type Params = Params;
    type PointParams = PointParams;

    fn id(&self) -> &'static str {
        "mem.latency"
    }

    fn describe(&self) -> &'static str {
        "dependent-load chase latency by working set: full random and page-local, base/THP/hugetlb pages"
    }

    fn plan(&self, p: Params, input: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        let mut out = FamilyPoints::default();
        let max = input.memory_working_set_bytes() / LINE_BYTES as u64 * LINE_BYTES as u64;
        let mut sizes = Self::ladder(&p, max);
        sizes.reverse(); // the memory point first: most important
        let base_page = input
            .env
            .base_page_size_bytes
            .known()
            .copied()
            .unwrap_or(4096);
        let window_bytes = (p.page_local_window_pages.max(1) * base_page) as usize;
        let mut modes: Vec<(PageMode, Option<String>)> = Vec::new();
        for rule in &p.page_modes {
            match rule {
                ModeRule::Base => modes.push((PageMode::Base, None)),
                ModeRule::Thp => {
                    let why = match input.env.thp_enabled.known().map(String::as_str) {
                        Some("never") => {
                            Some("THP disabled (transparent_hugepage/enabled = never)".to_string())
                        }
                        Some(_) => None,
                        // a capture without the THP file: planned, decided at run time
                        None if input.options.capture => None,
                        None => Some(format!(
                            "THP state unknown: {}",
                            input.env.thp_enabled.display()
                        )),
                    };
                    modes.push((PageMode::Thp, why));
                }
                ModeRule::Hugetlb => {
                    if input.env.huge_pools.is_empty() {
                        out.skipped.push(input.skip(
                            "hugetlb",
                            serde_json::Value::Null,
                            "no hugetlb page sizes (/sys/kernel/mm/hugepages absent or empty)",
                        ));
                    }
                    for pool in &input.env.huge_pools {
                        modes.push((
                            PageMode::HugeTlb {
                                page_size_bytes: pool.page_size_bytes,
                            },
                            None,
                        ));
                    }
                }
            }
        }
        for &(mode, ref why) in &modes {
            for &order_rule in &p.orders {
                for &ws in &sizes {
                    if mode != PageMode::Base && ws < p.huge_min_bytes {
                        continue;
                    }
                    if order_rule == OrderRule::PageLocal && ws < p.page_local_min_bytes {
                        continue;
                    }
                    let order = match order_rule {
                        OrderRule::FullRandom => ChaseOrder::FullRandom,
                        OrderRule::PageLocal => ChaseOrder::PageLocal { window_bytes },
                    };
                    let lines = ws / LINE_BYTES as u64;
                    let params = PointParams {
                        order,
                        page_mode: mode,
                        working_set_bytes: lines * LINE_BYTES as u64,
                        lines,
                        seed: CHASE_SEED,
                    };
                    let id = format!(
                        "{}/{}/ws={}",
                        match order_rule {
                            OrderRule::FullRandom => "full_random",
                            OrderRule::PageLocal => "page_local",
                        },
                        mode.label(),
                        size_label(ws)
                    );
                    let pool_short = match mode {
                        PageMode::HugeTlb { page_size_bytes } => input
                            .env
                            .huge_pools
                            .iter()
                            .find(|pool| pool.page_size_bytes == page_size_bytes)
                            .and_then(|pool| {
                                let need = hugetlb_need(&params)
                                    .map_or(0, |(_, pages)| pages);
                                // an unknown free count is no promise of pages: skipped,
                                // saying why it is unknown
                                let enough = pool.free_pages.known().is_some_and(|&f| f >= need);
                                (!enough).then(|| {
                                    format!(
                                        "hugetlb pool {} has {} free pages of {} total, needs {need}",
                                        size_label(page_size_bytes),
                                        pool.free_pages.display(),
                                        pool.total_pages.display()
                                    )
                                })
                            }),
                        _ => None,
                    };
                    if let Some(reason) = why.clone().or(pool_short) {
                        out.skipped.push(input.skip(id, &params, reason));
                        continue;
                    }
                    let mut point = input.point(id, 1, &params, params.working_set_bytes);
                    point.estimated_s = estimate_s(input, order_rule, lines);
                    out.points.push(point);
                }
            }
        }
        Ok(out)
    }

    fn run_point(&self, params: PointParams, point: &Point, ctx: &RunContext<'_>) -> PointOutcome {
        let Ok(lines) = usize::try_from(params.lines) else {
            return PointOutcome::Failed {
                error: format!("{} lines exceed the address space", params.lines),
            };
        };
        let len = lines * LINE_BYTES;
        // Trial mapping: a mode that cannot be had is a skip, not a failure (hugetlb pools are
        // reserved at mmap time, so ENOMEM shows here).
        match PageBuffer::allocate(params.page_mode, len) {
            Ok(b) => drop(b),
            Err(AllocError::Unavailable { reason, .. }) => return PointOutcome::Skipped { reason },
            Err(e) => {
                return PointOutcome::Failed {
                    error: e.to_string(),
                }
            }
        }
        let backing: std::sync::Mutex<Option<Verification>> = std::sync::Mutex::new(None);
        let broken: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
        let note = |m: &std::sync::Mutex<Option<String>>, e: String| {
            if let Ok(mut g) = m.lock() {
                g.get_or_insert(e);
            }
        };
        let timed = ctx.measure_parallel(
            point,
            |_w| -> Option<(PageBuffer, usize)> {
                let next = successors(params.order, lines, params.seed);
                let mut buf = match PageBuffer::allocate(params.page_mode, len) {
                    Ok(b) => b,
                    Err(e) => {
                        note(&broken, e.to_string());
                        return None;
                    }
                };
                // first touch by the chasing thread
                let start = match lay_out(buf.as_words_mut(), &next) {
                    Ok(s) => s,
                    Err(e) => {
                        note(&broken, e.to_string());
                        return None;
                    }
                };
                drop(next);
                if let Ok(mut g) = backing.lock() {
                    *g = Some(buf.verify());
                }
                Some((buf, start))
            },
            |state, reps| {
                let Some((buf, start)) = state else { return };
                for _ in 0..reps {
                    let end = consume(chase(buf.as_words(), *start, lines as u64));
                    if end != *start {
                        note(
                            &broken,
                            format!("chase ended at word {end}, not at its start {start}"),
                        );
                    }
                }
            },
        );
        let timed = match timed {
            Ok(t) => t,
            Err(e) => {
                return PointOutcome::Failed {
                    error: e.to_string(),
                }
            }
        };
        if let Some(e) = broken.into_inner().ok().flatten() {
            return PointOutcome::Failed { error: e };
        }
        let loads = timed.reps_per_sample as f64 * lines as f64;
        let latency: Vec<f64> = timed.sample_s.iter().map(|s| s * 1e9 / loads).collect();
        let backing = backing.into_inner().ok().flatten();
        let matches = backing
            .as_ref()
            .map(|b| b.matches(params.page_mode, THP_MIN_FRACTION));
        PointOutcome::Measured(
            Measurement {
                metrics: vec![Metric::latency("latency_ns", latency)],
                pins: timed.pins,
                ..Default::default()
            }
            .detail("loads_per_sample", loads)
            .detail("line_bytes", LINE_BYTES)
            .detail("page_mode_requested", params.page_mode.label())
            .detail("backing", &backing)
            .detail("backing_matches_request", matches)
            .detail("cut_short", &timed.cut_short),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // First outputs for seed 1234567 from the reference C (Vigna, prng.di.unimi.it/splitmix64.c).
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
    }

    #[test]
    fn small_cycles() {
        let mut r = SplitMix64::new(1);
        assert!(sattolo_cycle(0, &mut r).is_empty());
        assert_eq!(sattolo_cycle(1, &mut r), vec![0]);
        assert_eq!(sattolo_cycle(2, &mut r), vec![1, 0]);
    }

    #[test]
    fn working_set_ladder() {
        let s = working_sets(16 << 10, 32 << 20, 4);
        assert_eq!(s.first(), Some(&(16 << 10)));
        assert_eq!(s.last(), Some(&(128 << 20)));
        assert_eq!(s.len(), 14);
        assert!(working_sets(0, 1, 1).is_empty());
    }

    #[test]
    fn layout_rejects_small_buffer_and_bad_successor() {
        let mut w = vec![0usize; stride_words() * 3];
        assert!(matches!(
            lay_out(&mut w, &[1, 2, 3, 0]),
            Err(LayoutError::BufferTooSmall { .. })
        ));
        assert!(matches!(
            lay_out(&mut w, &[1, 5, 0]),
            Err(LayoutError::BadSuccessor {
                line: 1,
                value: 5,
                ..
            })
        ));
    }
}

//! TLB reach beside the latency knee (issue 34): per page mode of `mem.latency`'s full-random
//! chase, the working sets where the latency rises ([`rises`]) and the knee (the largest
//! rise), next to the reach of the first- and second-level TLBs that serve loads for that page
//! size (entries x page size, from the machine document's `cpu.tlb`; unknown with its reason
//! where the probe has none, e.g. on arm64). "base pages: knee at 4 MiB (x13.6), L1 TLB reach
//! 256 KiB, L2 TLB reach 8 MiB": a knee just past a reach is the TLB's, one far past it is a
//! cache's or the memory's.

use hwsurvey_machine::cpu::tlb::{load_reach_bytes, Tlb};
use hwsurvey_model::units::format_bytes_binary;
use hwsurvey_model::Probed;
use hwsurvey_result::ResultFile;
use serde_json::Value;

use crate::input::Input;
use crate::layout::{Cell, Row, Table};
use crate::machine::known;

/// Id of the table.
pub const TLB_ID: &str = "tlb-reach";

/// A latency rise: the median at one working set over the median at the working set before
/// it, at least this ratio (the working sets grow x4 a step: a cache level or the TLB running
/// out shows as 1.5x and more; 25% separates them from noise of a few percent).
pub const RISE: f64 = 1.25;

/// The rises of a latency curve: `(working set bytes, ratio to the previous point)` for every
/// point at least [`RISE`] x its predecessor, in increasing working sets. `curve` need not
/// be sorted; non-finite or non-positive latencies are left out.
pub fn rises(curve: &[(u64, f64)]) -> Vec<(u64, f64)> {
    let mut c: Vec<(u64, f64)> = curve
        .iter()
        .copied()
        .filter(|(_, l)| l.is_finite() && *l > 0.0)
        .collect();
    c.sort_by_key(|p| p.0);
    c.windows(2)
        .filter_map(|w| {
            let r = w[1].1 / w[0].1;
            (r >= RISE).then_some((w[1].0, r))
        })
        .collect()
}

/// The knee: the largest of [`rises`] (the first of equal ones).
pub fn knee(rises: &[(u64, f64)]) -> Option<(u64, f64)> {
    rises
        .iter()
        .copied()
        .fold(None, |best: Option<(u64, f64)>, r| match best {
            Some(b) if b.1 >= r.1 => Some(b),
            _ => Some(r),
        })
}

/// Page size of a `mem.latency` page mode label (`base`, `thp`, `hugetlb-2MiB`) on the
/// machine of `f`: the base page size (`machine.pages.base_page_size_bytes`), THP's PMD size
/// (`machine.pages.thp.pmd_size_bytes`), or the hugetlb size in the point's params.
fn page_size(f: &ResultFile, mode: &Value) -> Result<u64, String> {
    let pages = &f.machine.pages;
    match mode.get("kind").and_then(Value::as_str) {
        Some("base") => known(&pages.base_page_size_bytes).copied(),
        Some("thp") => known(&pages.thp.pmd_size_bytes)
            .copied()
            .map_err(|e| format!("THP's PMD size {e}")),
        Some("huge_tlb") => mode
            .get("page_size_bytes")
            .and_then(Value::as_u64)
            .ok_or_else(|| "hugetlb point without a page size".into()),
        other => Err(format!("page mode {other:?} has no page size")),
    }
}

/// The TLBs of the machine of `f` (`machine.cpu.tlb`), or why not: the probe's reason
/// ([`hwsurvey_model::Unknown`]'s `Display`).
fn tlbs(f: &ResultFile) -> Result<&[Tlb], String> {
    match &f.machine.cpu.tlb {
        Probed::Known(t) => Ok(t),
        Probed::Unknown(u) => Err(u.to_string()),
    }
}

/// One cell: `knee 4 MiB x13.6 (rises 64 KiB x3.2, 1 MiB x2.6); TLB reach L1 256 KiB, L2 8 MiB
/// (4 KiB pages)`.
fn cell(f: &ResultFile, mode: &str) -> Cell {
    let points: Vec<(u64, f64, Value)> = f
        .tests
        .iter()
        .filter(|t| t.point.family == "mem.latency")
        .filter(|t| t.outcome == hwsurvey_result::Outcome::Measured)
        .filter(|t| t.point.id.starts_with(&format!("full_random/{mode}/")))
        .filter_map(|t| {
            let ws = t.point.params.get("working_set_bytes")?.as_u64()?;
            let median = t.metrics.first()?.summary.as_ref()?.median;
            Some((ws, median, t.point.params.get("page_mode")?.clone()))
        })
        .collect();
    let Some(page_mode) = points.first().map(|p| p.2.clone()) else {
        return Cell::missing("no full-random chase measured with these pages");
    };
    let curve: Vec<(u64, f64)> = points.iter().map(|p| (p.0, p.1)).collect();
    let r = rises(&curve);
    let b = |v: u64| format_bytes_binary(v);
    let mut text = match knee(&r) {
        Some((ws, ratio)) => {
            let others: Vec<String> = r
                .iter()
                .filter(|x| x.0 != ws)
                .map(|(w, q)| format!("{} x{q:.1}", b(*w)))
                .collect();
            let mut t = format!("knee {} x{ratio:.1}", b(ws));
            if !others.is_empty() {
                t += &format!(" (also {})", others.join(", "));
            }
            t
        }
        None => format!("no rise of {RISE}x or more"),
    };
    match (page_size(f, &page_mode), tlbs(f)) {
        (Ok(page), Ok(t)) => {
            let reach = |level| load_reach_bytes(t, level, page).map_or("none".to_string(), b);
            text += &format!(
                "; TLB reach L1 {}, L2 {} ({} pages)",
                reach(1),
                reach(2),
                b(page)
            );
        }
        (Err(why), _) | (_, Err(why)) => text += &format!("; TLB reach unknown: {why}"),
    }
    Cell::text(text)
}

/// The table: one row per page mode any platform measured with the full-random chase;
/// `None` when no file has `mem.latency` points.
pub(crate) fn tlb_table(inputs: &[Input], flags: &[String]) -> Option<Table> {
    let mut modes: Vec<String> = Vec::new();
    for i in inputs {
        for t in i
            .file
            .tests
            .iter()
            .filter(|t| t.point.family == "mem.latency")
        {
            if let Some(m) = t
                .point
                .id
                .strip_prefix("full_random/")
                .and_then(|r| r.split('/').next())
            {
                if !modes.iter().any(|x| x == m) {
                    modes.push(m.to_string());
                }
            }
        }
    }
    if modes.is_empty() {
        return None;
    }
    let rows = modes
        .iter()
        .map(|m| Row {
            label: format!("{m} pages"),
            unit: None,
            x: None,
            cells: inputs.iter().map(|i| cell(&i.file, m)).collect(),
        })
        .collect();
    let mut notes = flags.to_vec();
    notes.push(format!(
        "rise = median latency of the full-random chase at a working set over that of the working set before it (x4 smaller), shown from {RISE}x; knee = the largest rise; TLB reach = entries x page size of the TLBs that serve loads (data, unified, load-only) at each level, from cpuid (leaf 2 / 0x18, AMD 0x80000005/6/19); a knee just past a reach is the TLB running out"
    ));
    Some(Table {
        id: TLB_ID.into(),
        title: "TLB reach beside the latency knee (mem.latency)".into(),
        row_header: "page mode".into(),
        columns: inputs.iter().map(|i| i.label.clone()).collect(),
        rows,
        notes,
        plot: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The base-page full-random curve of the x86_64 VM example (reports/examples/
    /// vm-x86_64-standard.json): L1 to L2 at 64 KiB, L2 to L3 at 1 MiB, L3 to memory at 4 MiB;
    /// the slow climb after (TLB misses) stays under the threshold.
    #[test]
    fn rises_and_knee_of_a_measured_curve() {
        const K: u64 = 1024;
        let curve = [
            (16 * K, 1.3),
            (64 * K, 4.1),
            (256 * K, 4.2),
            (1024 * K, 11.1),
            (4096 * K, 151.2),
            (16384 * K, 153.6),
            (65536 * K, 169.1),
            (262144 * K, 197.2),
        ];
        let r = rises(&curve);
        let ws: Vec<u64> = r.iter().map(|x| x.0).collect();
        assert_eq!(ws, vec![64 * K, 1024 * K, 4096 * K]);
        let (k, ratio) = knee(&r).unwrap();
        assert_eq!(k, 4096 * K);
        assert!((ratio - 151.2 / 11.1).abs() < 1e-9);
        assert_eq!(knee(&[]), None);
        // order does not matter; bad values are left out
        let mut shuffled = curve.to_vec();
        shuffled.reverse();
        shuffled.push((8 * K, f64::NAN));
        assert_eq!(rises(&shuffled), r);
    }
}

//! Page rules: `pages.thp`, `pages.hugetlb`, `pages.sizes` (what the profile's page modes
//! need).

use hwsurvey_model::units::format_bytes_binary;
use hwsurvey_model::Probed;

use crate::facts::{Facts, HugetlbNeed, PoolTotals};
use crate::{Finding, Params, RuleFinding, Verdict};

fn page_modes(f: &Facts, p: &Params) -> Vec<String> {
    match &f.result {
        Probed::Known(r) if !r.page_modes.is_empty() => r.page_modes.clone(),
        _ => p.list("page_modes"),
    }
}

/// `pages.thp`: THP set to `never` while the profile measures THP.
pub fn pages_thp(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "pages.thp";
    if !page_modes(f, p).iter().any(|m| m == "thp") {
        return vec![Finding::new(
            ID,
            Verdict::Info,
            "the profile measures no THP pages",
        )];
    }
    let mode = need!(f.pages.thp_enabled, ID);
    if mode == "never" {
        return vec![Finding::new(
            ID,
            Verdict::Warn,
            "THP disabled (never) but the profile measures THP pages",
        )
        .with("/sys/kernel/mm/transparent_hugepage/enabled", mode.clone())
        .fix("echo madvise > /sys/kernel/mm/transparent_hugepage/enabled")];
    }
    vec![]
}

/// `pages.hugetlb`: every hugetlb pool empty while the profile measures hugetlbfs pages.
pub fn pages_hugetlb(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "pages.hugetlb";
    if !page_modes(f, p).iter().any(|m| m == "hugetlb") {
        return vec![Finding::new(
            ID,
            Verdict::Info,
            "the profile measures no hugetlb pages",
        )];
    }
    let pools = *need!(known_counts(f), ID);
    if pools.is_empty() {
        return vec![Finding::new(
            ID,
            Verdict::Warn,
            "no hugetlb page sizes (kernel without hugetlbfs)",
        )
        .with("/sys/kernel/mm/hugepages", "(no pools)")];
    }
    let path = |size: u64| {
        format!(
            "/sys/kernel/mm/hugepages/hugepages-{}kB/nr_hugepages",
            size / 1024
        )
    };
    if let Some(needed) = &f.pages.hugetlb_needed {
        // what the plan needs, per pool size: the fix asks for exactly that
        let short: Vec<(&HugetlbNeed, u64)> = needed
            .iter()
            .filter_map(|n| {
                // no pool of the size holds no pages
                let have = pools
                    .iter()
                    .find(|p| p.page_size_bytes == n.page_size_bytes)
                    .map_or(0, pages);
                (have < n.pages).then_some((n, have))
            })
            .collect();
        if short.is_empty() {
            return vec![];
        }
        let what: Vec<String> = short
            .iter()
            .map(|(n, have)| {
                format!(
                    "{} pool {have} of {} pages",
                    format_bytes_binary(n.page_size_bytes),
                    n.pages
                )
            })
            .collect();
        let mut fnd = Finding::new(
            ID,
            Verdict::Warn,
            format!(
                "hugetlb pools below what the plan needs ({}): those hugetlb points will be skipped",
                what.join(", ")
            ),
        )
        .fix(
            short
                .iter()
                .map(|(n, _)| format!("echo {} > {}", n.pages, path(n.page_size_bytes)))
                .collect::<Vec<_>>()
                .join("; "),
        );
        for (n, have) in &short {
            fnd = fnd.with(path(n.page_size_bytes), have.to_string());
            fnd = fnd.with(
                "the plan (run --plan-only): largest hugetlb working set",
                format!(
                    "{} pages of {}",
                    n.pages,
                    format_bytes_binary(n.page_size_bytes)
                ),
            );
        }
        return vec![fnd];
    }
    if pools.iter().all(|p| pages(p) == 0) {
        let mut fnd = Finding::new(
            ID,
            Verdict::Warn,
            "hugetlb pools are empty: the hugetlb page mode will be skipped",
        )
        .fix("reserve as many pages as `hwsurvey run --plan-only` says the hugetlb points need (\"needs N\"): echo N > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
        for pool in pools {
            fnd = fnd.with(path(pool.page_size_bytes), pages(pool).to_string());
        }
        return vec![fnd];
    }
    vec![]
}

/// `pages.sizes`: several huge page sizes holding pages (informational, with the total).
pub fn pages_sizes(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "pages.sizes";
    let pools = *need!(known_counts(f), ID);
    let used: Vec<_> = pools.iter().filter(|p| pages(p) > 0).collect();
    if used.len() < 2 {
        return vec![];
    }
    let total: u64 = used
        .iter()
        .map(|p| pages(p).saturating_mul(p.page_size_bytes))
        .fold(0u64, |a, b| a.saturating_add(b));
    let parts: Vec<String> = used
        .iter()
        .map(|p| format!("{} x {}", pages(p), format_bytes_binary(p.page_size_bytes)))
        .collect();
    let mut fnd = Finding::new(
        ID,
        Verdict::Info,
        format!(
            "{} huge page sizes configured: {} = {} in total",
            used.len(),
            parts.join(" + "),
            format_bytes_binary(total)
        ),
    );
    for p in used {
        fnd = fnd.with(
            format!(
                "/sys/kernel/mm/hugepages/hugepages-{}kB/nr_hugepages",
                p.page_size_bytes / 1024
            ),
            pages(p).to_string(),
        );
    }
    vec![fnd]
}

/// The page count of a pool whose count [`known_counts`] found known.
fn pages(p: &PoolTotals) -> u64 {
    p.total_pages.known().copied().unwrap_or_default()
}

/// The pools of `f` when every pool's page count is known; else why the first is not (facts
/// built from a machine are unknown as a whole then, see `crate::machine`; facts written by
/// hand may hold one).
fn known_counts(f: &Facts) -> Probed<&[PoolTotals]> {
    match &f.pages.hugetlb {
        Probed::Known(pools) => match pools.iter().find_map(|p| p.total_pages.why_unknown()) {
            Some(why) => Probed::Unknown(why.clone()),
            None => Probed::Known(pools.as_slice()),
        },
        Probed::Unknown(why) => Probed::Unknown(why.clone()),
    }
}

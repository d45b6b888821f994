//! Pages: base page size, hugetlb pools of every size (system-wide and per NUMA node), the
//! total across sizes in bytes, and transparent huge pages (THP) with per-size mTHP settings.
//!
//! Sources: `sysconf(_SC_PAGESIZE)` on the live machine (the `sys` feature; without it
//! `/proc/self/smaps` `KernelPageSize`), `KernelPageSize` of a captured `/proc/self/smaps`, or
//! the architecture's fixed page size; `/sys/kernel/mm/hugepages/hugepages-<size>kB/
//! {nr,free,resv,surplus,nr_overcommit}_hugepages`; `/sys/devices/system/node/nodeN/hugepages`;
//! `/proc/meminfo` `Hugepagesize` (the default size only); `/sys/kernel/mm/transparent_hugepage/
//! {enabled,defrag,shmem_enabled,hpage_pmd_size,khugepaged/*,hugepages-<size>kB/{enabled,shmem_enabled}}`.
//!
//! numastat before numactl PR #157 summed only the default size's pool; here every size
//! is read and the totals are sums over sizes of pages x page size.

use std::collections::BTreeMap;

use hwsurvey_model::{NodeId, Probed, Unknown};

use crate::cpu::Arch;
use crate::memory::meminfo::MEMINFO;
use crate::{ProbeError, SysRoot};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::pages::*;

const HUGE_DIR: &str = "/sys/kernel/mm/hugepages";
const THP_DIR: &str = "/sys/kernel/mm/transparent_hugepage";

/// The counters of one pool under `dir` (system-wide
/// `/sys/kernel/mm/hugepages/hugepages-<size>kB` or a node's `.../nodeN/hugepages/...`), pages of
/// `size` bytes; an unreadable count or an implausible one (a pool larger than MemTotal, more
/// free pages than pages) is unknown with its reason, also pushed to `problems`.
pub(crate) fn read_pool_counts(
    root: &SysRoot,
    dir: &str,
    size: u64,
    problems: &mut Vec<Unknown>,
) -> PoolCounts {
    let mut count = |file: &str| -> Probed<u64> {
        match root.read_parsed::<u64>(&format!("{dir}/{file}"), "a page count") {
            Ok(v) => Probed::Known(v),
            Err(e) => {
                let u: Unknown = e.into();
                problems.push(u.clone());
                Probed::Unknown(u)
            }
        }
    };
    let mut total_pages = count("nr_hugepages");
    let mut free_pages = count("free_hugepages");
    let reserved_pages = if dir.starts_with("/sys/devices/system/node") {
        None
    } else {
        Some(count("resv_hugepages"))
    };
    let surplus_pages = count("surplus_hugepages");
    // Plausibility: a pool larger than the machine's memory (nr_hugepages 4294967295 of
    // 1 GiB pages), or more free pages than pages, is not what a kernel reports.
    if let (Probed::Known(n), Some(mem)) =
        (&total_pages, crate::memory::meminfo::mem_total_bytes(root))
    {
        if n.saturating_mul(size) > mem {
            let u = Unknown::Invalid {
                path: format!("{dir}/nr_hugepages"),
                detail: format!(
                    "{n} pages of {} KiB exceed the machine's memory (MemTotal {} MiB)",
                    size >> 10,
                    mem >> 20
                ),
            };
            problems.push(u.clone());
            total_pages = Probed::Unknown(u);
        }
    }
    if let (Probed::Known(f), Probed::Known(n)) = (&free_pages, &total_pages) {
        if f > n {
            let u = Unknown::Invalid {
                path: format!("{dir}/free_hugepages"),
                detail: format!("{f} free pages of a pool of {n}"),
            };
            problems.push(u.clone());
            free_pages = Probed::Unknown(u);
        }
    }
    let total_bytes = total_pages.clone().map(|n| n.saturating_mul(size));
    PoolCounts {
        page_size_bytes: size,
        total_pages,
        free_pages,
        reserved_pages,
        surplus_pages,
        total_bytes,
    }
}

fn live_page_size() -> Option<(u64, String)> {
    #[cfg(feature = "sys")]
    {
        if let Ok(Some(n)) = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE) {
            if n > 0 {
                return Some((n as u64, "sysconf(_SC_PAGESIZE)".into()));
            }
        }
    }
    None
}

fn read_choice(root: &SysRoot, path: &str, problems: &mut Vec<Unknown>) -> Probed<Choice> {
    match root.read_value(path) {
        Ok(t) => match parse_choice(&t) {
            Some(c) => Probed::Known(c),
            None => {
                let u: Unknown = ProbeError::invalid(
                    path,
                    "choices with one in brackets, like \"always [madvise] never\"",
                    &t,
                )
                .into();
                problems.push(u.clone());
                Probed::Unknown(u)
            }
        },
        Err(e) => {
            let u: Unknown = e.into();
            if !matches!(u, Unknown::Missing { .. }) {
                problems.push(u.clone());
            }
            Probed::Unknown(u)
        }
    }
}

fn sum_bytes<'a>(pools: impl Iterator<Item = (&'a Probed<u64>, u64)>) -> Probed<u64> {
    let mut total = 0u64;
    for (pages, size) in pools {
        match pages {
            Probed::Known(n) => total = total.saturating_add(n.saturating_mul(size)),
            Probed::Unknown(u) => return Probed::Unknown(u.clone()),
        }
    }
    Probed::Known(total)
}

/// Probes pages under `root`; `arch` and `cpuinfo` come from the CPU probe (used only to infer
/// the base page size of a capture). Never fails. The named steps below, in order: hugetlb
/// pools (system-wide, per node, else the default size of /proc/meminfo) and their totals,
/// the default huge page size, the base page size, THP.
pub fn probe_with(root: &SysRoot, arch: Arch) -> Pages {
    let mut problems = Vec::new();
    let (mut hugetlb, mut hugetlb_missing) = read_system_pools(root, &mut problems);
    let hugetlb_per_node = add_node_pools(root, &mut hugetlb);
    let meminfo = crate::memory::meminfo::read_fields(root);
    let mut hugetlb_source = HUGE_DIR.to_string();
    let mut meminfo_total: Option<Probed<u64>> = None;
    if hugetlb_missing.is_some() {
        match meminfo.as_ref().map(MeminfoHuge::of) {
            Ok(Ok(Some(h))) => {
                hugetlb_source = "/proc/meminfo HugePages_* (default size only)".to_string();
                hugetlb_missing = None;
                let (pool, total) = meminfo_default_pool(&h);
                hugetlb.push(pool);
                meminfo_total = Some(total);
            }
            Ok(Err(e)) => problems.push(e.into()),
            Ok(Ok(None)) | Err(_) => {}
        }
    }
    let (hugetlb_total_bytes, hugetlb_free_bytes) =
        hugetlb_totals(&hugetlb, hugetlb_missing, meminfo_total);
    let default_hugepage_size_bytes = match meminfo.map(|f| default_hugepage_size_bytes(&f)) {
        Ok(Ok(Some(v))) => Probed::Known(v),
        Ok(Ok(None)) => Probed::Unknown(Unknown::Invalid {
            path: MEMINFO.into(),
            detail: "no Hugepagesize line".into(),
        }),
        Ok(Err(e)) => Probed::Unknown(e.into()),
        Err(e) => Probed::Unknown(e.into()),
    };
    let sizes: Vec<u64> = hugetlb.iter().map(|p| p.system.page_size_bytes).collect();
    let (base_page_size_bytes, base_page_size_source) = base_page_size(root, arch, &sizes);
    let thp = read_thp(root, &mut problems);
    Pages {
        base_page_size_bytes,
        base_page_size_source,
        default_hugepage_size_bytes,
        hugetlb,
        hugetlb_source,
        hugetlb_total_bytes,
        hugetlb_free_bytes,
        hugetlb_per_node,
        thp,
        problems,
    }
}

/// The system-wide pools of `/sys/kernel/mm/hugepages/hugepages-<N>kB`, ascending by size,
/// and why the folder could not be listed.
fn read_system_pools(
    root: &SysRoot,
    problems: &mut Vec<Unknown>,
) -> (Vec<HugePool>, Option<ProbeError>) {
    let mut hugetlb: Vec<HugePool> = Vec::new();
    let names = root.list_dir(HUGE_DIR);
    let missing = names.as_ref().err().cloned();
    for name in names.unwrap_or_default() {
        let Some(size) = parse_hugepages_dir_name(&name) else {
            continue;
        };
        let dir = format!("{HUGE_DIR}/{name}");
        let system = read_pool_counts(root, &dir, size, problems);
        let overcommit_pages = match root
            .read_parsed::<u64>(&format!("{dir}/nr_overcommit_hugepages"), "a page count")
        {
            Ok(v) => Probed::Known(v),
            Err(e) => Probed::Unknown(e.into()),
        };
        hugetlb.push(HugePool {
            system,
            overcommit_pages,
            per_node: Vec::new(),
        });
    }
    hugetlb.sort_by_key(|p| p.system.page_size_bytes);
    (hugetlb, missing)
}

/// Adds each node's pools (`/sys/devices/system/node/nodeN/hugepages`) to the system pool of
/// their size; returns each node's totals over its sizes.
fn add_node_pools(root: &SysRoot, hugetlb: &mut [HugePool]) -> Vec<NodeHugeTotal> {
    let mut per_node = Vec::new();
    let Ok(nodes) = root.list_dir("/sys/devices/system/node") else {
        return per_node;
    };
    let mut ids: Vec<NodeId> = nodes
        .iter()
        .filter_map(|n| n.strip_prefix("node")?.parse().ok())
        .collect();
    ids.sort_unstable();
    for id in ids {
        let pools = read_node_pools(root, id, &mut Vec::new());
        if pools.is_empty() {
            continue;
        }
        per_node.push(NodeHugeTotal {
            node: id,
            total_bytes: sum_bytes(pools.iter().map(|p| (&p.total_pages, p.page_size_bytes))),
            free_bytes: sum_bytes(pools.iter().map(|p| (&p.free_pages, p.page_size_bytes))),
        });
        for p in pools {
            if let Some(pool) = hugetlb
                .iter_mut()
                .find(|h| h.system.page_size_bytes == p.page_size_bytes)
            {
                pool.per_node.push((id, p));
            }
        }
    }
    per_node
}

/// The default size's pool of the /proc/meminfo `HugePages_*` lines (kernels and captures
/// without /sys/kernel/mm/hugepages), and the total over all sizes: `Hugetlb:` (Linux >=
/// 4.16), else unknown (other sizes are not in these lines).
fn meminfo_default_pool(h: &MeminfoHuge) -> (HugePool, Probed<u64>) {
    let pool = HugePool {
        system: PoolCounts {
            page_size_bytes: h.page_size_bytes,
            total_pages: Probed::Known(h.total_pages),
            free_pages: Probed::Known(h.free_pages),
            reserved_pages: Some(Probed::Known(h.reserved_pages)),
            surplus_pages: Probed::Known(h.surplus_pages),
            total_bytes: Probed::Known(h.total_pages.saturating_mul(h.page_size_bytes)),
        },
        overcommit_pages: Probed::Unknown(Unknown::Missing {
            path: format!(
                "{HUGE_DIR}/hugepages-{}kB/nr_overcommit_hugepages",
                h.page_size_bytes / 1024
            ),
        }),
        per_node: Vec::new(),
    };
    let total = match h.hugetlb_bytes {
        Some(b) => Probed::Known(b),
        None => Probed::Unknown(Unknown::Other {
            detail: "/proc/meminfo has no Hugetlb line and /sys/kernel/mm/hugepages is missing: only the default size is known".into(),
        }),
    };
    (pool, total)
}

/// Total and free bytes over all pool sizes: unknown when the pools could not be listed;
/// from /proc/meminfo (`meminfo_total`), free pages are known for the default size only, so
/// the free total is known when the default size holds all huge page memory.
fn hugetlb_totals(
    hugetlb: &[HugePool],
    missing: Option<ProbeError>,
    meminfo_total: Option<Probed<u64>>,
) -> (Probed<u64>, Probed<u64>) {
    let (total, free) = match missing {
        Some(e) => {
            let u: Unknown = e.into();
            (Probed::Unknown(u.clone()), Probed::Unknown(u))
        }
        None => (
            sum_bytes(
                hugetlb
                    .iter()
                    .map(|p| (&p.system.total_pages, p.system.page_size_bytes)),
            ),
            sum_bytes(
                hugetlb
                    .iter()
                    .map(|p| (&p.system.free_pages, p.system.page_size_bytes)),
            ),
        ),
    };
    let free = match &meminfo_total {
        Some(t) if t.known() != total.known() => Probed::Unknown(Unknown::Other {
            detail: "free huge pages of non-default sizes are not in /proc/meminfo".into(),
        }),
        _ => free,
    };
    (meminfo_total.unwrap_or(total), free)
}

/// The base page size and how it was found: sysconf on the live machine, the live answer a
/// snapshot keeps (hwsurvey/live.json), `/proc/self/smaps` KernelPageSize, else what the
/// architecture and huge page sizes fix ([`infer_base_page_size`]).
fn base_page_size(root: &SysRoot, arch: Arch, huge_sizes: &[u64]) -> (Probed<u64>, String) {
    let found = if root.is_live() {
        live_page_size()
    } else {
        None
    }
    .or_else(|| {
        crate::live::read_live_facts(root).and_then(|f| {
            f.base_page_size_bytes
                .known()
                .map(|s| (*s, f.base_page_size_source.clone()))
        })
    })
    .or_else(|| {
        crate::smaps::read_first_kernel_page_size(root, crate::smaps::SELF_SMAPS_PATH)
            .map(|s| (s, "/proc/self/smaps KernelPageSize".to_string()))
    })
    .or_else(|| infer_base_page_size(arch, huge_sizes));
    match found {
        Some((s, how)) => (Probed::Known(s), how),
        None => (
            Probed::Unknown(Unknown::Other {
                detail: format!(
                    "no sysconf (capture), no /proc/self/smaps, and {} does not fix the page size",
                    arch.as_str()
                ),
            }),
            "unknown".to_string(),
        ),
    }
}

/// Transparent huge pages under `/sys/kernel/mm/transparent_hugepage`: `khugepaged/*`, the
/// per-size (mTHP) folders, `hpage_pmd_size`, `enabled`, `defrag`, `shmem_enabled`.
fn read_thp(root: &SysRoot, problems: &mut Vec<Unknown>) -> Thp {
    let mut khugepaged = BTreeMap::new();
    if let Ok(files) = root.list_dir(&format!("{THP_DIR}/khugepaged")) {
        for f in files {
            // Every khugepaged tunable and counter is a decimal number.
            let path = format!("{THP_DIR}/khugepaged/{f}");
            match root.read_parsed::<u64>(&path, "a decimal number") {
                Ok(v) => {
                    khugepaged.insert(f, v.to_string());
                }
                Err(e) => problems.push(e.into()),
            }
        }
    }
    let sizes = read_mthp_sizes(root, problems);
    let pmd_size_bytes =
        match root.read_parsed::<u64>(&format!("{THP_DIR}/hpage_pmd_size"), "bytes") {
            Ok(v) => Probed::Known(v),
            Err(e) => {
                let u: Unknown = e.into();
                if !matches!(u, Unknown::Missing { .. }) {
                    problems.push(u.clone());
                }
                Probed::Unknown(u)
            }
        };
    Thp {
        enabled: read_choice(root, &format!("{THP_DIR}/enabled"), problems),
        defrag: read_choice(root, &format!("{THP_DIR}/defrag"), problems),
        shmem_enabled: read_choice(root, &format!("{THP_DIR}/shmem_enabled"), problems),
        pmd_size_bytes,
        khugepaged,
        sizes,
    }
}

/// The mTHP sizes (`transparent_hugepage/hugepages-<N>kB/{enabled,shmem_enabled}`, kernel >=
/// 6.8), ascending.
fn read_mthp_sizes(root: &SysRoot, problems: &mut Vec<Unknown>) -> Vec<MthpSize> {
    let mut sizes = Vec::new();
    if let Ok(names) = root.list_dir(THP_DIR) {
        for name in names {
            let Some(size) = parse_hugepages_dir_name(&name) else {
                continue;
            };
            sizes.push(MthpSize {
                size_bytes: size,
                enabled: read_choice(root, &format!("{THP_DIR}/{name}/enabled"), problems),
                shmem_enabled: read_choice(
                    root,
                    &format!("{THP_DIR}/{name}/shmem_enabled"),
                    problems,
                ),
            });
        }
    }
    sizes.sort_by_key(|s| s.size_bytes);
    sizes
}

/// Per-node huge page pools under `nodeN/hugepages`.
pub(crate) fn read_node_pools(
    root: &SysRoot,
    node: NodeId,
    problems: &mut Vec<Unknown>,
) -> Vec<PoolCounts> {
    let dir = format!("/sys/devices/system/node/node{node}/hugepages");
    let Ok(names) = root.list_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in names {
        let Some(size) = parse_hugepages_dir_name(&name) else {
            continue;
        };
        out.push(read_pool_counts(
            root,
            &format!("{dir}/{name}"),
            size,
            problems,
        ));
    }
    out.sort_by_key(|p| p.page_size_bytes);
    out
}

/// Probes pages under `root`, detecting the architecture itself.
pub fn probe(root: &SysRoot) -> Pages {
    let text = root.read("/proc/cpuinfo").ok();
    let (arch, _) = crate::cpu::detect_arch(root, text.as_deref());
    probe_with(root, arch)
}

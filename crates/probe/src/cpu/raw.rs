//! Per-CPU sysfs readers: the `cpuN` folders, each CPU's `topology/*` ids and sibling lists,
//! capacity, MIDR, frequency and CPPC files, and its `cache/index*` leaves, as raw values
//! with the problems met on the way. The document is built from these in [`super::topology`]
//! and [`super::caches`].

use hwsurvey_model::{CpuId, CpuSet, Probed, Unknown};

use super::cpuinfo;
use super::midr::Midr;
use super::sets::{parse_cpulist_at, parse_cpumask_at, read_topology_set, shorten, MAX_CPUS};
use crate::{ProbeError, SysRoot};
use hwsurvey_machine::cpu::CacheType;

pub(crate) const CPU_DIR: &str = "/sys/devices/system/cpu";

/// What a cache's `shared_cpu_list` / `shared_cpu_map` say about its sharing.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sharing {
    /// The CPUs sharing the cache (containing the CPU itself).
    Known(CpuSet),
    /// Neither file says (absent, unparsable, empty, or an all-zero map): not "private".
    Unknown,
}

/// Reads a cache's sharing: `shared_cpu_list`, or `shared_cpu_map` when the list is absent,
/// unparsable or empty. An all-zero map means the kernel does not know the sharing.
pub(crate) fn read_cache_sharing(
    root: &SysRoot,
    dir: &str,
    cpu: CpuId,
    problems: &mut Vec<Unknown>,
) -> Sharing {
    let list_path = format!("{dir}/shared_cpu_list");
    let map_path = format!("{dir}/shared_cpu_map");
    let from_list = match root.read_value(&list_path) {
        Ok(text) if text.is_empty() => {
            // The kernel never writes an empty list here (the CPU itself is always in it).
            problems.push(Unknown::Invalid {
                path: list_path.clone(),
                detail: "empty; shared_cpu_map used instead".into(),
            });
            None
        }
        Ok(text) => match parse_cpulist_at(&list_path, &text) {
            Ok(set) if set.is_empty() => None,
            Ok(set) => Some(Ok(set)),
            Err(e) => {
                problems.push(e.into());
                None
            }
        },
        Err(e) => {
            if !e.is_missing() {
                problems.push(e.into());
            }
            None
        }
    };
    let got = match from_list {
        Some(r) => r,
        None => match root.read_value(&map_path) {
            Ok(text) => match parse_cpumask_at(&map_path, &text) {
                Ok(set) if set.is_empty() => return Sharing::Unknown,
                Ok(set) => Ok(set),
                Err(e) => Err(e.into()),
            },
            Err(e) if e.is_missing() => return Sharing::Unknown,
            Err(e) => Err(e),
        },
    };
    match got {
        Ok(set) if set.contains(cpu) => Sharing::Known(set),
        Ok(set) => {
            problems.push(
                ProbeError::invalid(
                    &list_path,
                    format!("a CPU list containing cpu{cpu} itself"),
                    &shorten(&set.to_list_string()),
                )
                .into(),
            );
            Sharing::Unknown
        }
        Err(e) => {
            problems.push(e.into());
            Sharing::Unknown
        }
    }
}

pub(crate) fn probed<T>(r: Result<T, ProbeError>) -> Probed<T> {
    match r {
        Ok(v) => Probed::Known(v),
        Err(e) => Probed::Unknown(e.into()),
    }
}

/// Records a non-missing error; returns the value.
pub(crate) fn keep<T>(problems: &mut Vec<Unknown>, r: Result<T, ProbeError>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            if !e.is_missing() {
                problems.push(e.into());
            }
            None
        }
    }
}

/// Like [`keep`], but a missing file is a problem too (the folder that should hold it exists).
pub(crate) fn expect<T>(problems: &mut Vec<Unknown>, r: Result<T, ProbeError>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            problems.push(e.into());
            None
        }
    }
}

pub(crate) fn read_i64(root: &SysRoot, path: &str) -> Result<i64, ProbeError> {
    root.read_parsed(path, "an integer")
}

/// The `cpuN` folder numbers, sorted; folders beyond `possible` (or [`MAX_CPUS`]) are listed
/// as problems and left out.
pub(crate) fn cpu_numbers(
    root: &SysRoot,
    possible: Option<&CpuSet>,
    problems: &mut Vec<Unknown>,
) -> Vec<CpuId> {
    match root.list_dir(CPU_DIR) {
        Ok(names) => {
            let mut v: Vec<CpuId> = Vec::new();
            for n in names.iter().filter_map(|n| n.strip_prefix("cpu")) {
                let Ok(id) = n.parse::<u64>() else {
                    continue;
                };
                let inside = match possible {
                    Some(p) => id <= u32::MAX as u64 && p.contains(id as u32),
                    None => id < MAX_CPUS as u64,
                };
                if inside {
                    v.push(id as CpuId);
                } else {
                    problems.push(Unknown::Invalid {
                        path: format!("{CPU_DIR}/cpu{}", shorten(n)),
                        detail: "a CPU folder beyond the possible CPUs; ignored".into(),
                    });
                }
            }
            v.sort_unstable();
            v
        }
        Err(e) => {
            problems.push(e.into());
            Vec::new()
        }
    }
}

pub(crate) struct RawCpu {
    pub(crate) cpu: CpuId,
    pub(crate) online: bool,
    pub(crate) has_topology: bool,
    pub(crate) package_id: Option<i64>,
    pub(crate) die_id: Option<i64>,
    pub(crate) cluster_id: Option<i64>,
    pub(crate) core_id: Option<i64>,
    /// `core_id` as written, -1 included (AMD compute units: the kernel's siblings with
    /// different or -1 core ids are separate cores).
    pub(crate) core_id_raw: Option<i64>,
    pub(crate) book_id: Option<i64>,
    pub(crate) siblings: Option<CpuSet>,
    pub(crate) package_cpus: Option<CpuSet>,
    pub(crate) die_cpus: Option<CpuSet>,
    pub(crate) cluster_cpus: Option<CpuSet>,
    pub(crate) capacity: Option<u32>,
    pub(crate) midr: Option<Midr>,
    pub(crate) max_freq_khz: Option<u64>,
    pub(crate) min_freq_khz: Option<u64>,
    pub(crate) cppc_highest_perf: Option<u32>,
    pub(crate) caches: Vec<RawCache>,
}

#[derive(Clone)]
pub(crate) struct RawCache {
    pub(crate) level: u8,
    pub(crate) cache_type: CacheType,
    pub(crate) size: Result<u64, Unknown>,
    pub(crate) line: Option<u32>,
    pub(crate) ways: Option<u32>,
    pub(crate) sets: Option<u32>,
    /// The cache `id` (>= 0; -1 and absent are `None`).
    pub(crate) id: Option<i64>,
    pub(crate) shared: Sharing,
}

pub(crate) fn optional_id(
    root: &SysRoot,
    path: &str,
    problems: &mut Vec<Unknown>,
    required: bool,
) -> Option<i64> {
    let r = read_i64(root, path);
    let v = if required {
        expect(problems, r)
    } else {
        keep(problems, r)
    };
    v.filter(|v| *v >= 0)
}

/// Drops (and lists) topology and cache sets of `r` that name CPUs beyond `possible`.
pub(crate) fn bound_to_possible(r: &mut RawCpu, possible: &CpuSet, problems: &mut Vec<Unknown>) {
    let cpu = r.cpu;
    let mut check = |what: &str, set: &mut Option<CpuSet>| {
        if let Some(s) = set {
            if !s.is_subset(possible) {
                problems.push(Unknown::Invalid {
                    path: format!("{CPU_DIR}/cpu{cpu}/{what}"),
                    detail: format!(
                        "names CPUs beyond possible ({}): {}; ignored",
                        possible.to_list_string(),
                        shorten(&s.difference(possible).to_list_string())
                    ),
                });
                *set = None;
            }
        }
    };
    check("topology/thread_siblings_list", &mut r.siblings);
    check("topology/core_siblings_list", &mut r.package_cpus);
    check("topology/die_cpus_list", &mut r.die_cpus);
    check("topology/cluster_cpus_list", &mut r.cluster_cpus);
    for c in r.caches.iter_mut() {
        if let Sharing::Known(s) = &c.shared {
            let mut opt = Some(s.clone());
            let what = format!(
                "cache (L{}{}) shared_cpu_list",
                c.level,
                c.cache_type.suffix()
            );
            check(&what, &mut opt);
            if opt.is_none() {
                c.shared = Sharing::Unknown;
            }
        }
    }
}

/// `physical_package_id`: -1 is "not known" (`None`); any other negative id is not what a
/// kernel writes (a problem, and `None`).
pub(crate) fn package_id(root: &SysRoot, path: &str, problems: &mut Vec<Unknown>) -> Option<i64> {
    let v = expect(problems, read_i64(root, path))?;
    if v < -1 {
        problems.push(ProbeError::invalid(path, "a package id >= -1", &v.to_string()).into());
    }
    (v >= 0).then_some(v)
}

pub(crate) fn read_raw_cpu(
    root: &SysRoot,
    cpu: CpuId,
    online: bool,
    problems: &mut Vec<Unknown>,
) -> RawCpu {
    let base = format!("{CPU_DIR}/cpu{cpu}");
    let topo = format!("{base}/topology");
    let has_topology = root.exists(&topo);
    let mut raw = RawCpu {
        cpu,
        online,
        has_topology,
        package_id: None,
        die_id: None,
        cluster_id: None,
        core_id: None,
        core_id_raw: None,
        book_id: None,
        siblings: None,
        package_cpus: None,
        die_cpus: None,
        cluster_cpus: None,
        capacity: None,
        midr: None,
        max_freq_khz: None,
        min_freq_khz: None,
        cppc_highest_perf: None,
        caches: Vec::new(),
    };
    if has_topology {
        raw.package_id = package_id(root, &format!("{topo}/physical_package_id"), problems);
        raw.core_id_raw = expect(problems, read_i64(root, &format!("{topo}/core_id")));
        raw.core_id = raw.core_id_raw.filter(|v| *v >= 0);
        let die_id_raw = keep(problems, read_i64(root, &format!("{topo}/die_id")));
        raw.die_id = die_id_raw.filter(|v| *v >= 0);
        raw.cluster_id = optional_id(root, &format!("{topo}/cluster_id"), problems, false);
        raw.book_id = optional_id(root, &format!("{topo}/book_id"), problems, false);
        // Each set from its `_list` file, else its hex mask (older kernels, some captures);
        // core_cpus (>= 5.6) and thread_siblings are the same set, as are package_cpus and
        // core_siblings.
        let core_cpus = keep(problems, read_topology_set(root, &topo, "core_cpus", cpu));
        raw.siblings = core_cpus.or_else(|| {
            expect(
                problems,
                read_topology_set(root, &topo, "thread_siblings", cpu),
            )
        });
        raw.package_cpus = keep(
            problems,
            read_topology_set(root, &topo, "package_cpus", cpu),
        )
        .or_else(|| {
            keep(
                problems,
                read_topology_set(root, &topo, "core_siblings", cpu),
            )
        });
        // die_cpus says something only where die_id does not say -1 (the firmware does not
        // describe dies; the kernel then writes the package or the CPU itself).
        if die_id_raw != Some(-1) {
            raw.die_cpus = keep(problems, read_topology_set(root, &topo, "die_cpus", cpu));
        }
        raw.cluster_cpus = keep(
            problems,
            read_topology_set(root, &topo, "cluster_cpus", cpu),
        );
    }
    raw.capacity = keep(
        problems,
        root.read_parsed(&format!("{base}/cpu_capacity"), "an integer capacity"),
    );
    raw.midr = keep(
        problems,
        root.read_value(&format!("{base}/regs/identification/midr_el1"))
            .and_then(|t| {
                u64::from_str_radix(t.trim_start_matches("0x"), 16)
                    .map(Midr::from_raw)
                    .map_err(|_| {
                        ProbeError::invalid(
                            format!("{base}/regs/identification/midr_el1"),
                            "a hex MIDR",
                            &t,
                        )
                    })
            }),
    );
    raw.max_freq_khz = keep(
        problems,
        root.read_parsed(&format!("{base}/cpufreq/cpuinfo_max_freq"), "kHz"),
    );
    raw.min_freq_khz = keep(
        problems,
        root.read_parsed(&format!("{base}/cpufreq/cpuinfo_min_freq"), "kHz"),
    );
    raw.cppc_highest_perf = keep(
        problems,
        root.read_parsed(&format!("{base}/acpi_cppc/highest_perf"), "an integer"),
    );
    raw.caches = read_cache_dirs(root, &base, cpu, problems);
    raw
}

pub(crate) fn read_cache_dirs(
    root: &SysRoot,
    base: &str,
    cpu: CpuId,
    problems: &mut Vec<Unknown>,
) -> Vec<RawCache> {
    let dir = format!("{base}/cache");
    let names = match root.list_dir(&dir) {
        Ok(n) => n,
        Err(e) => {
            keep::<()>(problems, Err(e));
            return Vec::new();
        }
    };
    let mut out: Vec<RawCache> = Vec::new();
    for name in names.iter().filter(|n| n.starts_with("index")) {
        let d = format!("{dir}/{name}");
        // The kernel numbers a CPU's cache leaves index0, index1, ... (a handful); a stray
        // index99999999 is not one of them and must not invent a cache or a core kind.
        match name["index".len()..].parse::<u32>() {
            Ok(i) if i < MAX_CACHE_LEAVES => {}
            _ => {
                problems.push(Unknown::Invalid {
                    path: d.clone(),
                    detail: format!(
                        "not a cache leaf the kernel writes (index0 to index{}); ignored",
                        MAX_CACHE_LEAVES - 1
                    ),
                });
                continue;
            }
        }
        let Some(level) = expect(
            problems,
            root.read_parsed::<u8>(&format!("{d}/level"), "a cache level"),
        ) else {
            continue;
        };
        if !(1..=MAX_CACHE_LEVEL).contains(&level) {
            problems.push(
                ProbeError::invalid(
                    format!("{d}/level"),
                    format!("a cache level from 1 to {MAX_CACHE_LEVEL}"),
                    &level.to_string(),
                )
                .into(),
            );
            continue;
        }
        let type_path = format!("{d}/type");
        let cache_type = match root.read_value(&type_path) {
            Ok(t) => match CacheType::parse(&t) {
                Some(ct) => ct,
                None => {
                    problems.push(
                        ProbeError::invalid(&type_path, "Data, Instruction or Unified", &t).into(),
                    );
                    continue;
                }
            },
            Err(e) => {
                problems.push(e.into());
                continue;
            }
        };
        let size_path = format!("{d}/size");
        let size = match root.read_value(&size_path) {
            Ok(t) => match cpuinfo::parse_cache_size_bytes(&t).filter(|s| *s > 0) {
                Some(b) if b > max_cache_bytes(level) => Err(Unknown::from(ProbeError::invalid(
                    &size_path,
                    format!(
                        "a plausible L{level} size (at most {} KiB)",
                        max_cache_bytes(level) >> 10
                    ),
                    &shorten(&t),
                ))),
                Some(b) => Ok(b),
                None => Err(Unknown::from(ProbeError::invalid(
                    &size_path,
                    "a size like \"32K\"",
                    &shorten(&t),
                ))),
            },
            Err(e) => Err(e.into()),
        };
        if let Err(u) = &size {
            if !matches!(u, Unknown::Missing { .. }) {
                problems.push(u.clone());
            }
        }
        out.push(RawCache {
            level,
            cache_type,
            size,
            line: keep(
                problems,
                root.read_parsed(&format!("{d}/coherency_line_size"), "bytes"),
            ),
            ways: keep(
                problems,
                root.read_parsed(&format!("{d}/ways_of_associativity"), "an integer"),
            ),
            sets: keep(
                problems,
                root.read_parsed(&format!("{d}/number_of_sets"), "an integer"),
            ),
            // -1: the firmware gives no id (seen beside real ids on other CPUs).
            id: keep(problems, read_i64(root, &format!("{d}/id"))).filter(|i| *i >= 0),
            shared: read_cache_sharing(root, &d, cpu, problems),
        });
        if out
            .iter()
            .filter(|c| c.level == level && c.cache_type == cache_type)
            .count()
            > 1
        {
            problems.push(Unknown::Invalid {
                path: d.clone(),
                detail: format!(
                    "a second L{level}{} leaf of cpu{cpu}; the first is kept",
                    cache_type.suffix()
                ),
            });
            out.pop();
        }
    }
    out
}

/// Cache leaves a CPU may have: `cache/index0` to `index{MAX_CACHE_LEAVES - 1}`.
pub const MAX_CACHE_LEAVES: u32 = 64;

/// Highest cache level a probe accepts (IBM Z has L4).
pub const MAX_CACHE_LEVEL: u8 = 5;

/// The largest plausible size of one cache instance at `level`, bytes: 4 MiB for L1 (the
/// largest real ones are 256 KiB), 256 MiB for L2, 16 GiB beyond. Larger is a damaged file
/// (a `4294967296K` L1d once invented P-core/E-core kinds on a uniform CPU).
pub fn max_cache_bytes(level: u8) -> u64 {
    match level {
        1 => 4 << 20,
        2 => 256 << 20,
        _ => 16 << 30,
    }
}

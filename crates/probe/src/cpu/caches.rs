//! The machine's caches, one entry per distinct instance: from the `cache/index*` leaves,
//! the sparc64 per-CPU files (`cpuN/l1_dcache_size` ...), or the e2k trailing `cacheN:` lines
//! of /proc/cpuinfo.

use std::collections::{BTreeMap, BTreeSet};

use hwsurvey_model::{CpuId, CpuSet, Probed, Unknown};

use super::cpuinfo::{Arch, Cpuinfo};
use super::raw::{keep, max_cache_bytes, RawCache, RawCpu, Sharing, CPU_DIR};
use super::sets::shorten;
use super::topology::is_amd_family_15h;
use crate::{ProbeError, SysRoot};
use hwsurvey_machine::cpu::{Cache, CacheType, Identity, Topology};

/// Caches of the /proc/cpuinfo `cacheN : level=.. type=.. scope=.. size=..` lines (e2k,
/// s390) above level `above`. Private caches are one per core (s390: per thread-sibling
/// group; e2k: per CPU); shared ones one per chip on e2k, and on s390 the L3 one per chip
/// (core_siblings group) and the L4 one per book (book id), each when the topology says.
pub(crate) fn cpuinfo_caches(
    arch: Arch,
    ci: &Cpuinfo,
    online: &[&RawCpu],
    above: u8,
) -> Vec<Cache> {
    let mut out = Vec::new();
    let n_cpus = online.len().max(ci.cpus.len()) as u32;
    let groups = |f: &dyn Fn(&RawCpu) -> Option<String>| -> Option<u32> {
        let keys: Option<BTreeSet<String>> = online.iter().map(|r| f(r)).collect();
        keys.map(|k| k.len() as u32).filter(|n| *n > 0)
    };
    for c in ci.e2k_caches.iter().filter(|c| c.level > above) {
        let ct = CacheType::parse(&c.cache_type).unwrap_or(CacheType::Unified);
        let shared = c.scope.as_deref() == Some("Shared");
        let (instances, grouped_by) = if arch == Arch::S390x {
            if !shared {
                match groups(&|r| r.siblings.as_ref().map(CpuSet::to_list_string)) {
                    Some(n) => (n, "s390 scope=Private (one per core)"),
                    None => (n_cpus, "s390 scope=Private (one per CPU)"),
                }
            } else if c.level >= 4 {
                match groups(&|r| r.book_id.map(|b| b.to_string())) {
                    Some(n) => (n, "s390 scope=Shared (one per book)"),
                    None => (1, "s390 scope=Shared (book count unknown: counted once)"),
                }
            } else {
                match groups(&|r| r.package_cpus.as_ref().map(CpuSet::to_list_string)) {
                    Some(n) => (n, "s390 scope=Shared (one per chip)"),
                    None => (1, "s390 scope=Shared (chip count unknown: counted once)"),
                }
            }
        } else if shared {
            (1, "e2k scope=Shared (one per chip)")
        } else {
            (n_cpus, "e2k scope=Private (one per core)")
        };
        let size_bytes = match c.size_bytes {
            Some(s) if s > max_cache_bytes(c.level) => Probed::Unknown(Unknown::Invalid {
                path: "/proc/cpuinfo".into(),
                detail: format!(
                    "cache{} size {s} bytes is not a plausible L{} size (at most {} KiB)",
                    c.level,
                    c.level,
                    max_cache_bytes(c.level) >> 10
                ),
            }),
            Some(s) => Probed::Known(s),
            None => Probed::Unknown(Unknown::Invalid {
                path: "/proc/cpuinfo".into(),
                detail: format!("cache{} line without a size", c.level),
            }),
        };
        out.push(Cache {
            level: c.level,
            cache_type: ct,
            total_bytes: size_bytes
                .clone()
                .map(|s| s.saturating_mul(instances as u64)),
            size_bytes,
            line_size_bytes: c.line_size_bytes,
            ways: c.ways,
            sets: None,
            instances,
            instance_cpus: Vec::new(),
            instance_ids: Vec::new(),
            grouped_by: grouped_by.to_string(),
        });
    }
    out
}

pub(crate) struct CacheAcc {
    size: Result<u64, Unknown>,
    line: Option<u32>,
    ways: Option<u32>,
    sets: Option<u32>,
    instances: BTreeMap<String, CpuSet>,
    grouped_by: &'static str,
}

pub(crate) fn push_caches(
    out: &mut Vec<Cache>,
    accs: BTreeMap<(u8, CacheType, Option<u64>, String), CacheAcc>,
) {
    for ((level, cache_type, _, _), acc) in accs {
        let instances = acc.instances.len() as u32;
        let size_bytes = match acc.size {
            Ok(s) => Probed::Known(s),
            Err(u) => Probed::Unknown(u),
        };
        let total_bytes = size_bytes
            .clone()
            .map(|s| s.saturating_mul(instances as u64));
        out.push(Cache {
            level,
            cache_type,
            size_bytes,
            line_size_bytes: acc.line,
            ways: acc.ways,
            sets: acc.sets,
            instances,
            total_bytes,
            instance_ids: acc
                .instances
                .keys()
                .map(|k| k.strip_prefix("id ").and_then(|id| id.parse().ok()))
                .collect(),
            instance_cpus: acc.instances.into_values().collect(),
            grouped_by: acc.grouped_by.to_string(),
        });
    }
}

/// The caches being gathered, by level, type, size and how instances are told apart.
type Accs = BTreeMap<(u8, CacheType, Option<u64>, String), CacheAcc>;

/// The machine's caches and where they came from: the `cache/index*` leaves
/// ([`index_caches`]), else the sparc64 per-CPU files ([`sparc64_caches`]), else the e2k and
/// s390 `cacheN:` lines of /proc/cpuinfo; unknown when none is there.
pub(crate) fn build_caches(
    arch: Arch,
    raws: &[RawCpu],
    ci: &Option<Cpuinfo>,
    identity: &Identity,
    topology: &Topology,
    root: &SysRoot,
    problems: &mut Vec<Unknown>,
) -> (Vec<Cache>, Probed<String>) {
    let online: Vec<&RawCpu> = raws.iter().filter(|r| r.online).collect();
    if online.iter().any(|r| !r.caches.is_empty()) {
        return index_caches(arch, &online, ci, identity, problems);
    }
    if arch == Arch::Sparc64
        || online
            .iter()
            .any(|r| root.exists(&format!("{CPU_DIR}/cpu{}/l1_dcache_size", r.cpu)))
    {
        if let Some(out) = sparc64_caches(&online, topology, root, problems) {
            return (
                out,
                Probed::Known(format!("{CPU_DIR}/cpuN/l1_dcache_size etc. (sparc64)")),
            );
        }
    }
    // e2k and s390 cpuinfo trailing lines.
    if let Some(ci) = ci {
        if !ci.e2k_caches.is_empty() {
            return (
                cpuinfo_caches(arch, ci, &online, 0),
                Probed::Known(format!("/proc/cpuinfo cacheN: lines ({})", arch.as_str())),
            );
        }
    }
    (
        Vec::new(),
        Probed::Unknown(Unknown::Missing {
            path: format!("{CPU_DIR}/cpuN/cache"),
        }),
    )
}

/// Caches of the `cache/index*` leaves, instances told apart by cache id or sharing list
/// ([`group_by_sharing`], [`place_unknown_sharing`]); on s390, whose sysfs lists L1 and L2
/// only, the higher levels from the /proc/cpuinfo `cacheN` lines.
fn index_caches(
    arch: Arch,
    online: &[&RawCpu],
    ci: &Option<Cpuinfo>,
    identity: &Identity,
    problems: &mut Vec<Unknown>,
) -> (Vec<Cache>, Probed<String>) {
    let amd15 = is_amd_family_15h(identity);
    let mut accs = Accs::new();
    let unknown_sharing = group_by_sharing(online, amd15, &mut accs);
    place_unknown_sharing(unknown_sharing, &mut accs, problems);
    let mut out = Vec::new();
    push_caches(&mut out, accs);
    let top = out.iter().map(|c| c.level).max().unwrap_or(0);
    let more = ci
        .as_ref()
        .map(|ci| cpuinfo_caches(arch, ci, online, top))
        .unwrap_or_default();
    if more.is_empty() {
        return (out, Probed::Known(format!("{CPU_DIR}/cpuN/cache/index*")));
    }
    out.extend(more);
    (
        out,
        Probed::Known(format!(
            "{CPU_DIR}/cpuN/cache/index*; levels above L{top} from /proc/cpuinfo cacheN: lines"
        )),
    )
}

/// Per (level, type): whether cache ids tell instances apart, which they do only where every
/// CPU with that cache has one (an id of -1 beside real ids once doubled the L3), where no two
/// CPUs that the sharing list puts in one instance have different ids, and not for the L1 and
/// L2 of AMD family 15h (shared by a compute unit). The QEMU `EPYC` model's kernel gives CPUs 0
/// and 1 the L3 ids 0 and 1 while each one's `shared_cpu_list` is `0-1`: grouped by id, one
/// L3 was counted twice, two instances each holding both CPUs (lstopo, reading the lists, said
/// one).
fn ids_tell_instances(online: &[&RawCpu], amd15: bool) -> BTreeMap<(u8, CacheType), bool> {
    let mut all_ids: BTreeMap<(u8, CacheType), bool> = BTreeMap::new();
    let mut ids: BTreeMap<(u8, CacheType, CpuId), i64> = BTreeMap::new();
    for r in online {
        for c in &r.caches {
            let e = all_ids.entry((c.level, c.cache_type)).or_insert(true);
            *e &= c.id.is_some() && !(amd15 && c.level <= 2);
            if let Some(id) = c.id {
                ids.insert((c.level, c.cache_type, r.cpu), id);
            }
        }
    }
    for r in online {
        for c in &r.caches {
            let (Some(id), Sharing::Known(shared)) = (c.id, &c.shared) else {
                continue;
            };
            let contradicted = shared.iter().any(|other| {
                ids.get(&(c.level, c.cache_type, other))
                    .is_some_and(|o| *o != id)
            });
            if contradicted {
                all_ids.insert((c.level, c.cache_type), false);
            }
        }
    }
    all_ids
}

/// Adds each CPU's caches whose sharing is known (or whose id tells the instance) to `accs`;
/// returns the CPUs and caches whose sharing neither file gives.
fn group_by_sharing<'a>(
    online: &[&'a RawCpu],
    amd15: bool,
    accs: &mut Accs,
) -> Vec<(&'a RawCpu, &'a RawCache)> {
    let all_ids = ids_tell_instances(online, amd15);
    let mut unknown_sharing = Vec::new();
    for r in online {
        for c in &r.caches {
            let by_id = all_ids
                .get(&(c.level, c.cache_type))
                .copied()
                .unwrap_or(false);
            let mut shared = match (&c.shared, by_id) {
                (Sharing::Known(s), _) => s.clone(),
                (Sharing::Unknown, true) => [r.cpu].into_iter().collect(),
                (Sharing::Unknown, false) => {
                    unknown_sharing.push((*r, c));
                    continue;
                }
            };
            // AMD family 15h: the compute unit (kernel thread siblings) shares L2 and L1i.
            if amd15 && (c.level == 2 || (c.level == 1 && c.cache_type == CacheType::Instruction)) {
                if let Some(sib) = &r.siblings {
                    shared = shared.union(sib);
                }
            }
            let (inst_key, grouped_by) = match c.id.filter(|_| by_id) {
                Some(id) => (format!("id {id}"), "cache id"),
                None => (shared.to_list_string(), "shared_cpu_list"),
            };
            let e = acc_of(accs, c, grouped_by)
                .instances
                .entry(inst_key)
                .or_default();
            *e = e.union(&shared);
        }
    }
    unknown_sharing
}

/// The gathered entry of cache `c` grouped by `grouped_by` in `accs`, made when new.
fn acc_of<'a>(accs: &'a mut Accs, c: &RawCache, grouped_by: &'static str) -> &'a mut CacheAcc {
    let size_key = c.size.as_ref().ok().copied();
    accs.entry((c.level, c.cache_type, size_key, grouped_by.to_string()))
        .or_insert_with(|| CacheAcc {
            size: c.size.clone(),
            line: c.line,
            ways: c.ways,
            sets: c.sets,
            instances: BTreeMap::new(),
            grouped_by,
        })
}

/// Unknown sharing (no shared_cpu_list, an empty or unparsable one, an all-zero
/// shared_cpu_map): a CPU that another CPU's instance already holds is in it; the rest are
/// assumed per core (L1, L2) or per package (L3+), and said so in `problems`.
fn place_unknown_sharing(
    unknown_sharing: Vec<(&RawCpu, &RawCache)>,
    accs: &mut Accs,
    problems: &mut Vec<Unknown>,
) {
    let mut assumed: BTreeMap<(u8, CacheType), (CpuSet, bool)> = BTreeMap::new();
    for (r, c) in unknown_sharing {
        let e = assumed.entry((c.level, c.cache_type)).or_default();
        e.0.insert(r.cpu);
        let held = accs.iter().any(|((l, t, _, _), acc)| {
            *l == c.level && *t == c.cache_type && acc.instances.values().any(|s| s.contains(r.cpu))
        });
        if held {
            continue;
        }
        e.1 = true;
        let (set, how) = if c.level <= 2 {
            (r.siblings.clone(), "assumed per core (sharing unknown)")
        } else {
            (
                r.package_cpus.clone(),
                "assumed per package (sharing unknown)",
            )
        };
        let set = set.unwrap_or_else(|| [r.cpu].into_iter().collect());
        let e = acc_of(accs, c, how)
            .instances
            .entry(set.to_list_string())
            .or_default();
        *e = e.union(&set);
    }
    for ((level, ct), (cpus, any_assumed)) in assumed {
        problems.push(Unknown::Other {
            detail: format!(
                "L{level}{} sharing unknown on cpus {} (shared_cpu_list and shared_cpu_map absent, empty or all zero): {}",
                ct.suffix(),
                shorten(&cpus.to_list_string()),
                match (any_assumed, level <= 2) {
                    (false, _) => "each is in an instance another CPU lists",
                    (true, true) => "assumed per core",
                    (true, false) => "assumed per package",
                }
            ),
        });
    }
}

/// The sparc64 per-CPU cache files (`cpuN/{l1_dcache,l1_icache,l2_cache,l3_cache}_size`):
/// `None` when no CPU has one.
fn sparc64_caches(
    online: &[&RawCpu],
    topology: &Topology,
    root: &SysRoot,
    problems: &mut Vec<Unknown>,
) -> Option<Vec<Cache>> {
    let mut accs = Accs::new();
    let mut any = false;
    let present_files: BTreeSet<&str> = ["l1_dcache", "l1_icache", "l2_cache", "l3_cache"]
        .into_iter()
        .filter(|f| {
            online
                .iter()
                .any(|r| root.exists(&format!("{CPU_DIR}/cpu{}/{f}_size", r.cpu)))
        })
        .collect();
    let all_online: CpuSet = online.iter().map(|r| r.cpu).collect();
    let per_package = topology.packages.known().is_some_and(|p| *p > 1);
    for r in online {
        let base = format!("{CPU_DIR}/cpu{}", r.cpu);
        for (file, level, ct) in [
            ("l1_dcache", 1u8, CacheType::Data),
            ("l1_icache", 1, CacheType::Instruction),
            ("l2_cache", 2, CacheType::Unified),
            ("l3_cache", 3, CacheType::Unified),
        ] {
            let Some(size) = sparc64_cache_size(root, &base, file, level, &present_files, problems)
            else {
                continue;
            };
            any = true;
            let (key, shared, grouped_by) =
                sparc64_instance(r, level, per_package, online, &all_online);
            let line = keep(
                problems,
                root.read_parsed(&format!("{base}/{file}_line_size"), "bytes"),
            );
            let acc = accs
                .entry((level, ct, size.as_ref().ok().copied(), String::new()))
                .or_insert_with(|| CacheAcc {
                    size: size.clone(),
                    line,
                    ways: None,
                    sets: None,
                    instances: BTreeMap::new(),
                    grouped_by,
                });
            acc.instances.insert(key, shared);
        }
    }
    if !any {
        return None;
    }
    if topology.packages.known().is_none() {
        problems.push(Unknown::Other {
            detail:
                "sparc64: the package count is unknown, so L2/L3 are counted once for the machine"
                    .into(),
        });
    }
    let mut out = Vec::new();
    push_caches(&mut out, accs);
    Some(out)
}

/// The size of one sparc64 cache file `<base>/<file>_size`, bytes, or why it is refused (0,
/// or above any cache of its level; recorded in `problems` too); `None` when the file is
/// absent (a hole in `problems` where other CPUs have it).
fn sparc64_cache_size(
    root: &SysRoot,
    base: &str,
    file: &str,
    level: u8,
    present_files: &BTreeSet<&str>,
    problems: &mut Vec<Unknown>,
) -> Option<Result<u64, Unknown>> {
    let size_path = format!("{base}/{file}_size");
    let size: Result<u64, Unknown> = match root.read_parsed::<u64>(&size_path, "bytes") {
        Ok(0) => Err(ProbeError::invalid(&size_path, "a size in bytes above 0", "0").into()),
        Ok(s) if s > max_cache_bytes(level) => Err(ProbeError::invalid(
            &size_path,
            format!(
                "a plausible L{level} size in bytes (at most {})",
                max_cache_bytes(level)
            ),
            &s.to_string(),
        )
        .into()),
        Ok(s) => Ok(s),
        Err(e) if e.is_missing() => {
            // Absent on every CPU: no such cache. Absent on some: a hole.
            if present_files.contains(file) {
                problems.push(e.into());
            }
            return None;
        }
        Err(e) => Err(e.into()),
    };
    if let Err(u) = &size {
        problems.push(u.clone());
    }
    Some(size)
}

/// The instance of a sparc64 cache of `level` that CPU `r` is in: L1 per core; L2/L3 one per
/// package (chip) where the machine has several, the files describing the chip's cache; on a
/// single-chip machine (and sun4v T1/T2, whose kernel gives each core a package id) one for
/// the machine. Returns the instance key, its CPUs and how it was grouped.
fn sparc64_instance(
    r: &RawCpu,
    level: u8,
    per_package: bool,
    online: &[&RawCpu],
    all_online: &CpuSet,
) -> (String, CpuSet, &'static str) {
    // A package's CPUs: its core_siblings mask, else the CPUs with its package id.
    let package_of = |r: &RawCpu| -> Option<CpuSet> {
        r.package_cpus.clone().or_else(|| {
            let id = r.package_id?;
            Some(
                online
                    .iter()
                    .filter(|o| o.package_id == Some(id))
                    .map(|o| o.cpu)
                    .collect(),
            )
        })
    };
    if level == 1 {
        let s = r
            .siblings
            .clone()
            .unwrap_or_else(|| [r.cpu].into_iter().collect());
        (s.to_list_string(), s, "per core")
    } else if let (true, Some(pkg)) = (per_package, package_of(r)) {
        (pkg.to_list_string(), pkg, "per package (chip)")
    } else {
        ("chip".to_string(), all_online.clone(), "per chip")
    }
}

//! Counts a result file records, and facts of one file that must agree ([`check_counts`]): a
//! count no run writes (a point of 0 threads, a huge page pool larger than the machine's
//! memory) or two fields of one file that contradict each other (hugetlb pools reserved in
//! the run's environment and none in the probe document) are refused by the loader with the
//! field's JSON path, as [`crate::consistency::check_document`] refuses sizes.

use hwsurvey_machine::Machine;

use crate::consistency::FieldProblem;
use crate::file::ResultFile;

/// Most worker threads a point may have, whatever its machine: the engine's cap
/// ([`crate::bounds::MAX_THREADS_PER_POINT`], 4096); [`crate::bounds`] bounds them by the
/// machine's own CPUs.
pub const MAX_THREADS: usize = crate::bounds::MAX_THREADS_PER_POINT;

/// `MemTotal` of the machine (`memory.meminfo.mem_total_bytes`), bytes, when known and not 0.
fn mem_total(m: &Machine) -> Option<u64> {
    m.memory
        .meminfo
        .known()
        .map(|i| i.mem_total_bytes)
        .filter(|&b| b > 0)
}

/// One point (`tests[i].point` or `plan.families[j].points[k]`): at least one thread, at most
/// [`MAX_THREADS`], and at least one CPU, at most one per thread.
fn check_point(p: &crate::plan::Point, field: &str) -> Result<(), FieldProblem> {
    if p.threads == 0 || p.threads > MAX_THREADS {
        return Err(FieldProblem::new(
            format!("{field}.threads"),
            format!(
                "{} is not a number of worker threads (1 to {MAX_THREADS})",
                p.threads
            ),
        ));
    }
    if p.cpus.is_empty() || p.cpus.len() > p.threads {
        return Err(FieldProblem::new(
            format!("{field}.cpus"),
            format!(
                "{} CPUs for {} threads: a point places each worker on one CPU (1 to {} CPUs)",
                p.cpus.len(),
                p.threads,
                p.threads
            ),
        ));
    }
    Ok(())
}

/// The pages of a pool of `page_size` bytes: `count` x the page size at most `MemTotal`
/// (hugetlb pages are taken from it), or at most 2^50 bytes when `MemTotal` is unknown.
fn check_pool_pages(
    field: &str,
    count: u64,
    page_size: u64,
    mem_total: Option<u64>,
) -> Result<(), FieldProblem> {
    let bytes = u128::from(count) * u128::from(page_size);
    let (limit, words) = match mem_total {
        Some(m) => (
            u128::from(m),
            format!(
                "the machine's MemTotal ({m} bytes, machine.memory.meminfo.known.mem_total_bytes)"
            ),
        ),
        None => (
            u128::from(crate::consistency::MAX_SIZE_BYTES),
            "2^50 bytes (1 PiB)".to_string(),
        ),
    };
    if bytes > limit {
        return Err(FieldProblem::new(
            field,
            format!(
                "{count} pages of {page_size} bytes ({bytes} bytes) is more than {words} can hold"
            ),
        ));
    }
    Ok(())
}

/// The hugetlb pools of the machine (`machine.pages.hugetlb[]`): system and per-node
/// counts within `MemTotal`, free pages at most the pool; and `hugetlb_total_bytes` not 0
/// when the pools hold pages, nor the other way round. Returns the total when known.
fn check_machine_pools(m: &Machine, mem: Option<u64>) -> Result<Option<u64>, FieldProblem> {
    let mut sum: Option<u128> = Some(0);
    for (i, pool) in m.pages.hugetlb.iter().enumerate() {
        let mut counts = vec![(format!("machine.pages.hugetlb[{i}].system"), &pool.system)];
        for (j, (_, node)) in pool.per_node.iter().enumerate() {
            counts.push((format!("machine.pages.hugetlb[{i}].per_node[{j}][1]"), node));
        }
        for (field, c) in counts {
            let size = c.page_size_bytes;
            for (name, n) in [
                ("total_pages", c.total_pages.known()),
                ("free_pages", c.free_pages.known()),
                (
                    "reserved_pages",
                    c.reserved_pages.as_ref().and_then(|r| r.known()),
                ),
                ("surplus_pages", c.surplus_pages.known()),
            ] {
                if let Some(&n) = n {
                    check_pool_pages(&format!("{field}.{name}.known"), n, size, mem)?;
                }
            }
            let (total, free) = (c.total_pages.known(), c.free_pages.known());
            if let (Some(&t), Some(&f)) = (total, free) {
                if f > t {
                    return Err(FieldProblem::new(
                        format!("{field}.free_pages.known"),
                        format!("{f} free pages of a pool of {t}"),
                    ));
                }
            }
            if field.ends_with(".system") {
                sum = match (sum, total) {
                    (Some(s), Some(&t)) => Some(s + u128::from(t) * u128::from(size)),
                    _ => None,
                };
            }
        }
    }
    let recorded = m.pages.hugetlb_total_bytes.known().copied();
    if let (Some(r), Some(s)) = (recorded, sum) {
        // both read at the probe's start, from /proc/meminfo's Hugetlb line and the pools:
        // a pool resized in between may change the size, never "none" against "some"
        if (r > 0) != (s > 0) {
            return Err(FieldProblem::new(
                "machine.pages.hugetlb_total_bytes.known",
                format!(
                    "{r} bytes, but the pools of machine.pages.hugetlb hold {s} bytes: the \
                     file contradicts itself"
                ),
            ));
        }
    }
    Ok(recorded.or_else(|| sum.and_then(|s| u64::try_from(s).ok())))
}

/// Checks the counts of `file` (its typed machine among them) and the facts that must agree:
///
/// - every point of the tests and of the plan has 1 to [`MAX_THREADS`] threads and 1 CPU to
///   one per thread (`threads=0, cpus=[]` was shown as a peak "@0");
/// - the plan's usable CPUs and thread counts are at least 1;
/// - a hugetlb pool (`environment.huge_pools[]`, `machine.pages.hugetlb[]`) holds at most
///   what the machine's `MemTotal` can hold (pages x page size), and no more free pages than
///   pages;
/// - `environment.mem_available_bytes` is at most `MemTotal`;
/// - the last-level cache has at least one instance and its total is instances x size;
/// - one file does not contradict itself: `machine.pages.hugetlb_total_bytes`, the probe's
///   pools and the environment's pools are all empty or all not.
///
/// Err: the first problem, with the field's JSON path.
pub fn check_counts(file: &ResultFile) -> Result<(), FieldProblem> {
    for (i, t) in file.tests.iter().enumerate() {
        check_point(&t.point, &format!("tests[{i}].point"))?;
    }
    for (j, f) in file.plan.families.iter().enumerate() {
        for (k, p) in f.points.iter().enumerate() {
            check_point(p, &format!("plan.families[{j}].points[{k}]"))?;
        }
    }
    if file.plan.usable_cpus == 0 {
        return Err(FieldProblem::new(
            "plan.usable_cpus",
            "0 usable CPUs: a plan is made for 1 or more",
        ));
    }
    if let Some(i) = file.plan.thread_counts.iter().position(|&t| t == 0) {
        return Err(FieldProblem::new(
            format!("plan.thread_counts[{i}]"),
            "0 is not a number of threads",
        ));
    }
    let mem = mem_total(&file.machine);
    let env = &file.environment;
    let mut env_pool_bytes: u128 = 0;
    for (i, p) in env.huge_pools.iter().enumerate() {
        let field = format!("environment.huge_pools[{i}]");
        // an unknown count (unreadable, or refused by the probe) has nothing to check
        if let Some(&total) = p.total_pages.known() {
            check_pool_pages(
                &format!("{field}.total_pages"),
                total,
                p.page_size_bytes,
                mem,
            )?;
            env_pool_bytes += u128::from(total) * u128::from(p.page_size_bytes);
        }
        if let (Some(free), Some(total)) = (p.free_pages.known(), p.total_pages.known()) {
            if free > total {
                return Err(FieldProblem::new(
                    format!("{field}.free_pages"),
                    format!("{free} free pages of a pool of {total}"),
                ));
            }
        }
    }
    if let (Some(m), Some(&a)) = (mem, env.mem_available_bytes.known()) {
        if a > m {
            return Err(FieldProblem::new(
                "environment.mem_available_bytes.known",
                format!("{a} bytes available of a MemTotal of {m} bytes"),
            ));
        }
    }
    if let Some(llc) = env.llc.known() {
        if llc.instances == 0
            || u128::from(llc.instances) * u128::from(llc.instance_size_bytes)
                != u128::from(llc.total_size_bytes)
        {
            return Err(FieldProblem::new(
                "environment.llc.known",
                format!(
                    "{} instances of {} bytes do not make the total of {} bytes",
                    llc.instances, llc.instance_size_bytes, llc.total_size_bytes
                ),
            ));
        }
    }
    let machine_pool_bytes = check_machine_pools(&file.machine, mem)?;
    if let Some(m) = machine_pool_bytes {
        if (m > 0) != (env_pool_bytes > 0) {
            return Err(FieldProblem::new(
                "environment.huge_pools",
                format!(
                    "hold {env_pool_bytes} bytes of huge pages, but the probe found {m} \
                     (machine.pages.hugetlb_total_bytes): the file contradicts itself"
                ),
            ));
        }
    }
    Ok(())
}

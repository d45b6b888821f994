//! The limits a run must honour, on small trees written from the facts of each interface:
//! cgroup v1 memory limits up the hierarchy (memory and memory+swap), cgroup v2 `memory.max`
//! and `memory.high` with v2 mounted at `/sys/fs/cgroup/unified`, rlimits from
//! `/proc/self/limits`, and allowed CPUs from the legacy cpuset file system as well as
//! cgroup v1 and v2 cpusets.

use hwsurvey_model::{CpuSet, Probed};
use hwsurvey_probe::{limits, SysRoot};
use hwsurvey_testkit::write;

fn set(s: &str) -> CpuSet {
    CpuSet::parse_list(s).expect("test list")
}

const MEMINFO: &str =
    "MemTotal:       24641536 kB\nMemFree:  1000 kB\nMemAvailable:   12058624 kB\n";

/// A hybrid machine as this CI host has it: v1 controllers under /sys/fs/cgroup/<name>, v2
/// at /sys/fs/cgroup/unified; the process sits in memory cgroup /jobs/run1.
fn hybrid_tree() -> tempfile::TempDir {
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    write(r, "/proc/meminfo", MEMINFO);
    write(
        r,
        "/proc/self/mountinfo",
        "25 20 0:22 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n\
         30 25 0:27 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
         31 25 0:28 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n\
         32 25 0:29 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
    );
    write(
        r,
        "/proc/self/cgroup",
        "4:memory:/jobs/run1\n3:cpuset:/pinned\n0::/user.slice/job",
    );
    // v1: the child's own limit is unlimited; its parent holds 512 MiB, memsw 768 MiB.
    write(
        r,
        "/sys/fs/cgroup/memory/jobs/run1/memory.limit_in_bytes",
        "9223372036854771712",
    );
    write(
        r,
        "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes",
        "536870912",
    );
    write(
        r,
        "/sys/fs/cgroup/memory/jobs/memory.memsw.limit_in_bytes",
        "805306368",
    );
    write(
        r,
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
        "9223372036854771712",
    );
    // v2 at /sys/fs/cgroup/unified: memory.high on the parent slice.
    write(r, "/sys/fs/cgroup/unified/user.slice/job/memory.max", "max");
    write(
        r,
        "/sys/fs/cgroup/unified/user.slice/memory.high",
        "1073741824",
    );
    write(
        r,
        "/sys/fs/cgroup/cpuset/pinned/cpuset.effective_cpus",
        "2-5",
    );
    write(
        r,
        "/proc/self/status",
        "Name:\thwsurvey\nCpus_allowed_list:\t0-7\n",
    );
    t
}

/// A root with the cgroup v2 hierarchy mounted at /sys/fs/cgroup and this process in `cgroup`
/// (`/job/step`).
fn v2_tree(cgroup: &str) -> tempfile::TempDir {
    let t = hwsurvey_testkit::scratch_tempdir();
    write(
        t.path(),
        "/proc/self/mountinfo",
        "32 25 0:29 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw",
    );
    write(t.path(), "/proc/self/cgroup", &format!("0::{cgroup}"));
    t
}

#[test]
fn v1_memory_limit_up_the_hierarchy_is_the_cap() {
    let t = hybrid_tree();
    let l = limits::probe(&SysRoot::new(t.path()));
    assert_eq!(l.mem_available_bytes, Probed::Known(12058624 * 1024));
    let bytes: Vec<u64> = l.memory_limits.iter().map(|m| m.bytes).collect();
    assert_eq!(bytes, [512 << 20, 768 << 20, 1 << 30], "{l:?}");
    let cap = l.memory_cap().expect("a cap");
    assert_eq!(cap.bytes, 512 << 20);
    assert_eq!(
        cap.source,
        "cgroup v1 memory.limit_in_bytes (/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes)"
    );
    assert_eq!(l.cgroup_limit_bytes(), Some(512 << 20));
    assert!(l.problems.is_empty(), "{:?}", l.problems);
}

#[test]
fn v2_memory_high_and_rlimits_count_too() {
    let t = hybrid_tree();
    let r = t.path();
    write(
        r,
        "/sys/fs/cgroup/unified/user.slice/job/memory.max",
        "104857600",
    );
    write(
        r,
        "/proc/self/limits",
        "Limit                     Soft Limit           Hard Limit           Units\n\
         Max data size             unlimited            unlimited            bytes\n\
         Max address space         67108864             unlimited            bytes",
    );
    let l = limits::probe(&SysRoot::new(r));
    let cap = l.memory_cap().expect("a cap");
    assert_eq!(cap.bytes, 64 << 20);
    assert_eq!(cap.source, "RLIMIT_AS (/proc/self/limits)");
    assert_eq!(l.cgroup_limit_bytes(), Some(100 << 20));
    assert!(l
        .memory_limits
        .iter()
        .any(|m| m.source
            == "cgroup v2 memory.max (/sys/fs/cgroup/unified/user.slice/job/memory.max)"));
}

/// What already counts against each limit is read beside it: v1 `memory.usage_in_bytes` and
/// `memory.memsw.usage_in_bytes`, v2 `memory.current`, and the process's own `VmSize` for
/// `RLIMIT_AS`. The cap is the limit with the least left under it, not the lowest limit: the
/// 512 MiB v1 parent holding 500 MiB leaves 12 MiB, less than 64 MiB of address space with
/// 40 MiB mapped (24 MiB left), less than the 1 GiB memory.high.
#[test]
fn the_cap_is_the_least_headroom_under_a_limit() {
    let t = hybrid_tree();
    let r = t.path();
    write(
        r,
        "/sys/fs/cgroup/memory/jobs/memory.usage_in_bytes",
        "524288000\n",
    );
    write(
        r,
        "/sys/fs/cgroup/memory/jobs/memory.memsw.usage_in_bytes",
        "600000000",
    );
    write(
        r,
        "/sys/fs/cgroup/unified/user.slice/memory.current",
        "2048",
    );
    write(
        r,
        "/proc/self/limits",
        "Limit                     Soft Limit           Hard Limit           Units\n\
         Max address space         67108864             unlimited            bytes",
    );
    write(
        r,
        "/proc/self/status",
        "Name:\thwsurvey\nVmSize:\t   40960 kB\nCpus_allowed_list:\t0-7\n",
    );
    let l = limits::probe(&SysRoot::new(r));
    let used: Vec<(u64, Option<u64>)> = l
        .memory_limits
        .iter()
        .map(|m| (m.bytes, m.in_use_bytes))
        .collect();
    assert_eq!(
        used,
        [
            (512 << 20, Some(524_288_000)),
            (768 << 20, Some(600_000_000)),
            (1 << 30, Some(2048)),
            (64 << 20, Some(40 << 20)),
        ],
        "{l:?}"
    );
    let cap = l.memory_cap().expect("a cap");
    assert_eq!(cap.headroom_bytes(), (512 << 20) - 524_288_000);
    assert_eq!(
        cap.source,
        "cgroup v1 memory.limit_in_bytes (/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes)"
    );
    // 512 MiB less 500 MiB: 12 MiB.
    assert_eq!(cap.headroom_bytes(), 12 << 20);
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    // A usage file that is there but holds no byte count is named, not taken as 0.
    write(
        r,
        "/sys/fs/cgroup/unified/user.slice/memory.current",
        "lots\n",
    );
    let l = limits::probe(&SysRoot::new(r));
    assert_eq!(l.memory_limits[2].in_use_bytes, None);
    let p = format!("{:?}", l.problems);
    assert!(
        p.contains("/sys/fs/cgroup/unified/user.slice/memory.current") && p.contains("lots"),
        "{p}"
    );
}

#[test]
fn no_limit_anywhere_leaves_mem_available() {
    let t = hwsurvey_testkit::scratch_tempdir();
    write(t.path(), "/proc/meminfo", MEMINFO);
    write(t.path(), "/proc/self/cgroup", "0::/");
    write(
        t.path(),
        "/sys/fs/cgroup/cgroup.controllers",
        "cpuset memory",
    );
    write(t.path(), "/sys/fs/cgroup/memory.max", "max");
    let l = limits::probe(&SysRoot::new(t.path()));
    let cap = l.memory_cap().expect("a cap");
    assert_eq!(cap.bytes, 12058624 * 1024);
    assert_eq!(cap.source, "MemAvailable (/proc/meminfo)");
    assert!(l.memory_limits.is_empty());
}

#[test]
fn a_bad_limit_file_is_named_not_taken_as_zero() {
    let t = hybrid_tree();
    write(
        t.path(),
        "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes",
        "half",
    );
    let l = limits::probe(&SysRoot::new(t.path()));
    assert_eq!(l.cgroup_limit_bytes(), Some(768 << 20));
    let p = format!("{:?}", l.problems);
    assert!(
        p.contains("/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes") && p.contains("half"),
        "{p}"
    );
}

#[test]
fn allowed_cpus_from_v1_cpuset_and_affinity() {
    let t = hybrid_tree();
    let l = limits::probe(&SysRoot::new(t.path()));
    let u = l.usable_cpus().expect("usable CPUs");
    assert_eq!(u.cpus, set("2-5"));
    assert_eq!(
        u.source,
        "/sys/fs/cgroup/cpuset/pinned/cpuset.effective_cpus"
    );
}

#[test]
fn allowed_cpus_from_the_legacy_cpuset_file_system() {
    // An old system: `mount -t cpuset none /dev/cpuset`, the process in cpuset /batch;
    // no cgroup v1 cpuset line and no v2 cpuset.
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    write(
        r,
        "/proc/self/mountinfo",
        "40 20 0:40 / /dev/cpuset rw,relatime - cpuset none rw",
    );
    write(r, "/proc/self/cgroup", "");
    write(r, "/proc/self/cpuset", "/batch");
    write(r, "/dev/cpuset/batch/cpus", "4-7,12-15");
    write(r, "/dev/cpuset/cpus", "0-15");
    write(
        r,
        "/proc/self/status",
        "Name:\thwsurvey\nCpus_allowed_list:\t0-13\n",
    );
    let l = limits::probe(&SysRoot::new(r));
    let u = l.usable_cpus().expect("usable CPUs");
    assert_eq!(u.cpus, set("4-7,12-13"));
    assert_eq!(
        u.source,
        "Cpus_allowed_list (/proc/self/status) ∩ /dev/cpuset/batch/cpus"
    );
}

#[test]
fn allowed_cpus_from_v2_walk_up_to_the_nearest_cpuset() {
    let t = v2_tree("/a/b");
    let r = t.path();
    write(r, "/sys/fs/cgroup/a/cpuset.cpus.effective", "1,3");
    let l = limits::probe(&SysRoot::new(r));
    let u = l.usable_cpus().expect("usable CPUs");
    assert_eq!(u.cpus, set("1,3"));
    assert_eq!(u.source, "/sys/fs/cgroup/a/cpuset.cpus.effective");
}

/// CPU quotas, as the kernel writes them (Documentation/scheduler/sched-bwc.rst): cgroup v2
/// `cpu.max` up the hierarchy (the child's `max 100000` is no limit; its parent's
/// `150000 100000` is 1.5 CPUs), and cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`
/// (`-1` = none; the parent's 50000 per 20000 is 2.5 CPUs). The least run time wins.
#[test]
fn cpu_quotas_up_the_hierarchy_in_v1_and_v2() {
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    write(r, "/proc/meminfo", MEMINFO);
    write(
        r,
        "/proc/self/mountinfo",
        "25 20 0:22 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n\
         30 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n\
         32 25 0:29 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
    );
    write(
        r,
        "/proc/self/cgroup",
        "5:cpu,cpuacct:/batch/job7\n0::/user.slice/job",
    );
    write(
        r,
        "/sys/fs/cgroup/cpu,cpuacct/batch/job7/cpu.cfs_quota_us",
        "-1",
    );
    write(
        r,
        "/sys/fs/cgroup/cpu,cpuacct/batch/job7/cpu.cfs_period_us",
        "100000",
    );
    write(
        r,
        "/sys/fs/cgroup/cpu,cpuacct/batch/cpu.cfs_quota_us",
        "50000",
    );
    write(
        r,
        "/sys/fs/cgroup/cpu,cpuacct/batch/cpu.cfs_period_us",
        "20000",
    );
    write(
        r,
        "/sys/fs/cgroup/unified/user.slice/job/cpu.max",
        "max 100000",
    );
    write(
        r,
        "/sys/fs/cgroup/unified/user.slice/cpu.max",
        "150000 100000",
    );
    let l = limits::probe(&SysRoot::new(r));
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    let got: Vec<(u64, u64, &str)> = l
        .cpu_quotas
        .iter()
        .map(|q| (q.quota_us, q.period_us, q.source.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                50000,
                20000,
                "cgroup v1 cpu.cfs_quota_us (/sys/fs/cgroup/cpu,cpuacct/batch/cpu.cfs_quota_us)"
            ),
            (
                150000,
                100000,
                "cgroup v2 cpu.max (/sys/fs/cgroup/unified/user.slice/cpu.max)"
            ),
        ]
    );
    let q = l.cpu_quota().expect("a quota");
    assert_eq!(q.cpus(), 1.5);
    assert!(q.source.ends_with("/user.slice/cpu.max)"), "{}", q.source);
}

/// A quota file that is there but malformed is named with its value, never taken as no limit.
#[test]
fn a_bad_cpu_quota_file_is_named() {
    let t = v2_tree("/job");
    let r = t.path();
    write(r, "/proc/meminfo", MEMINFO);
    write(r, "/sys/fs/cgroup/job/cpu.max", "lots 100000");
    let l = limits::probe(&SysRoot::new(r));
    assert!(l.cpu_quotas.is_empty());
    let p = format!("{:?}", l.problems);
    assert!(
        p.contains("/sys/fs/cgroup/job/cpu.max") && p.contains("lots"),
        "{p}"
    );
}

/// The machine document's cgroup CPU limit (`os.cgroup.cpu_max`) follows the walk up the
/// hierarchy: a malformed quota file on an ancestor makes it unknown, naming the file and
/// the text, never "unlimited" because the process's own cgroup says `max`.
#[test]
fn a_bad_ancestor_quota_makes_the_machines_cpu_limit_unknown() {
    let t = v2_tree("/job/step");
    let r = t.path();
    write(r, "/sys/fs/cgroup/job/step/cpu.max", "max 100000");
    write(r, "/sys/fs/cgroup/job/cpu.max", "lots 100000");
    let os = hwsurvey_probe::os::probe(&SysRoot::new(r));
    let c = os.cgroup.known().expect("cgroup").clone();
    let why = format!("{:?}", c.cpu_max);
    assert!(
        why.contains("Unknown")
            && why.contains("/sys/fs/cgroup/job/cpu.max")
            && why.contains("lots"),
        "{why}"
    );
}

/// One walk for every cgroup fact: the machine document's cpuset (`os.cgroup.cpuset_cpus`),
/// the allowed CPUs (`cpu.allowed.cgroup_cpus`) and the run's usable CPUs are the nearest
/// `cpuset.cpus.effective` on the way up, and the document's `memory_max_bytes` the lowest
/// `memory.max` on the way up. Three readers with their own rules gave 0-15 (the hierarchy's
/// top), 4-5 and 4-5 here, and "unlimited" for the memory.
#[test]
fn every_reader_takes_the_cgroup_facts_of_the_one_walk() {
    let t = v2_tree("/job/step");
    let r = t.path();
    write(r, "/sys/fs/cgroup/cpuset.cpus.effective", "0-15");
    write(r, "/sys/fs/cgroup/job/cpuset.cpus.effective", "4-5");
    write(r, "/sys/fs/cgroup/job/step/memory.max", "max");
    write(r, "/sys/fs/cgroup/job/memory.max", "1073741824");
    write(
        r,
        "/proc/self/status",
        "Name:\thwsurvey\nCpus_allowed_list:\t0-15\n",
    );
    let root = SysRoot::new(r);
    let m = hwsurvey_probe::probe_machine(&root);
    let c = m.os.cgroup.known().expect("cgroup").clone();
    assert_eq!(c.cpuset_cpus, Probed::Known(set("4-5")));
    assert_eq!(c.memory_max_bytes, Probed::Known(Some(1 << 30)));
    assert_eq!(m.cpu.allowed.cgroup_cpus, Probed::Known(set("4-5")));
    assert_eq!(
        m.cpu.allowed.cgroup_file.as_deref(),
        Some("/sys/fs/cgroup/job/cpuset.cpus.effective")
    );
    let u = limits::probe(&root).usable_cpus().expect("usable CPUs");
    assert_eq!(u.cpus, set("4-5"));
}

/// A damaged line of `/proc/self/mountinfo` is named, never skipped: a second parser of the
/// file skipped it and read the cgroup mounts of the lines around it.
#[test]
fn a_damaged_mountinfo_line_is_named() {
    let t = v2_tree("/job");
    let r = t.path();
    write(
        r,
        "/proc/self/mountinfo",
        "32 25 0:29 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n40 32 0:40 /x",
    );
    let l = limits::probe(&SysRoot::new(r));
    let p = format!("{:?}", l.problems);
    assert!(
        p.contains("/proc/self/mountinfo") && p.contains("line 2") && p.contains("40 32 0:40 /x"),
        "{p}"
    );
}

/// A damaged `/proc/self/cgroup` line makes the cgroup facts unknown, naming the file and the
/// line, where the readers skipped it and reported the cgroups of the other lines.
#[test]
fn a_damaged_cgroup_line_is_named() {
    let t = v2_tree("/job");
    let r = t.path();
    write(r, "/proc/self/cgroup", "0::/job\n4:memory");
    write(r, "/sys/fs/cgroup/job/cpu.max", "50000 100000");
    let os = hwsurvey_probe::os::probe(&SysRoot::new(r));
    let why = os.cgroup.why_unknown().expect("unknown").to_string();
    assert!(
        why.contains("/proc/self/cgroup") && why.contains("4:memory"),
        "{why}"
    );
    let l = limits::probe(&SysRoot::new(r));
    assert!(
        format!("{:?}", l.problems).contains("4:memory"),
        "{:?}",
        l.problems
    );
}

/// `/proc/meminfo` is read by one parser: a size without its `kB` is refused, naming the
/// line, by the machine document, the run's limits and the run environment alike (two of the
/// four parsers took `MemAvailable: 8000000` as 8000000 bytes).
#[test]
fn a_meminfo_size_without_its_unit_is_refused_everywhere() {
    use hwsurvey_probe::run_env::{ReadRunEnv, RunEnv};
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    write(
        r,
        "/proc/meminfo",
        "MemTotal:       16384 kB\nMemAvailable:    8000000\n",
    );
    let root = SysRoot::new(r);
    let said = |p: &Probed<u64>| p.why_unknown().map(|u| u.to_string()).unwrap_or_default();
    let l = limits::probe(&root);
    assert!(
        said(&l.mem_available_bytes).contains("MemAvailable: 8000000"),
        "{l:?}"
    );
    let env = RunEnv::read(&root);
    assert!(said(&env.mem_available_bytes).contains("MemAvailable: 8000000"));
    let m = hwsurvey_probe::memory::meminfo::read(&root);
    assert!(m
        .why_unknown()
        .unwrap()
        .to_string()
        .contains("/proc/meminfo"));
}

/// `Cpus_allowed_list` is bounded as every CPU list is (8192 CPUs): a damaged list is
/// refused before it is expanded, by the machine document and by the run's limits.
#[test]
fn a_huge_cpus_allowed_list_is_refused_before_it_is_expanded() {
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    write(
        r,
        "/proc/self/status",
        "Name:\thwsurvey\nCpus_allowed_list:\t0-1048575\n",
    );
    let root = SysRoot::new(r);
    let m = hwsurvey_probe::probe_machine(&root);
    let why = m.cpu.allowed.status_cpus.why_unknown().unwrap().to_string();
    assert!(
        why.contains("/proc/self/status") && why.contains("below 8192"),
        "{why}"
    );
    let l = limits::probe(&root);
    assert!(
        format!("{:?}", l.problems).contains("below 8192"),
        "{:?}",
        l.problems
    );
}

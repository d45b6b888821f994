//! The fault classes found by probing captures of other machines (cache sharing from
//! `shared_cpu_map`, sparc64 caches per package, s390 cache levels and architecture, SMT
//! siblings vs compute units, topology masks, package ids vs sibling masks, per-CPU online
//! files, architecture names) and the implausible values that must become problems (stray
//! cache leaves, absurd sizes, ids of -1 and -2^63, CPU lists beyond `possible` or beyond any
//! kernel). Each test writes a small tree from the facts of the class.

use std::path::Path;

use hwsurvey_model::{CpuSet, Probed};
use hwsurvey_probe::cpu::{Arch, CacheType};
use hwsurvey_probe::{probe_machine, Machine, SysRoot};
use hwsurvey_testkit::write;

const CPU: &str = "/sys/devices/system/cpu";

fn set(s: &str) -> CpuSet {
    CpuSet::parse_list(s).expect("test list")
}

fn probe(root: &Path) -> Machine {
    probe_machine(&SysRoot::new(root))
}

fn problems(m: &Machine) -> String {
    format!("{:?}", m.cpu.problems)
}

/// The first (only) cache entry of a level and type.
fn cache(m: &Machine, level: u8, ty: CacheType) -> &hwsurvey_probe::cpu::Cache {
    let v: Vec<_> = m
        .cpu
        .caches
        .iter()
        .filter(|c| c.level == level && c.cache_type == ty)
        .collect();
    assert_eq!(v.len(), 1, "one L{level} {ty:?} entry: {:#?}", m.cpu.caches);
    v[0]
}

const X86_CPUINFO: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold\nflags\t\t: fpu lm ht\n\n";

/// An x86 machine of `n` CPUs: `online`/`possible`/`present` 0..n, each CPU's package and
/// core id, and its thread siblings as a list (the other files are up to each test).
fn x86(root: &Path, n: u32, package: &dyn Fn(u32) -> i64, core: &dyn Fn(u32) -> i64) {
    let all = format!("0-{}", n - 1);
    for f in ["possible", "present", "online"] {
        write(root, &format!("{CPU}/{f}"), &all);
    }
    write(root, "/proc/cpuinfo", X86_CPUINFO);
    for c in 0..n {
        let t = format!("{CPU}/cpu{c}/topology");
        write(
            root,
            &format!("{t}/physical_package_id"),
            &package(c).to_string(),
        );
        write(root, &format!("{t}/core_id"), &core(c).to_string());
    }
}

fn cache_leaf(root: &Path, cpu: u32, index: u32, level: u8, ty: &str, size: &str) {
    let d = format!("{CPU}/cpu{cpu}/cache/index{index}");
    write(root, &format!("{d}/level"), &level.to_string());
    write(root, &format!("{d}/type"), ty);
    write(root, &format!("{d}/size"), size);
}

// --- 1. cache sharing from shared_cpu_map ---------------------------------------------------

#[test]
fn cache_sharing_from_shared_cpu_map_and_all_zero_maps_are_not_private() {
    // 8 CPUs, 4 cores x 2 threads (siblings n and n+4), two L3s of 4 CPUs ({0,1,4,5} and
    // {2,3,6,7}). No shared_cpu_list anywhere (an old kernel); cpu5's L1d map and cpu7's L3
    // map are all zero.
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    x86(r, 8, &|_| 0, &|c| (c % 4) as i64);
    for c in 0..8u32 {
        let topo = format!("{CPU}/cpu{c}/topology");
        let sib = (1u32 << (c % 4)) | (1 << (c % 4 + 4));
        write(r, &format!("{topo}/thread_siblings"), &format!("{sib:08x}"));
        write(r, &format!("{topo}/core_siblings"), "000000ff");
        cache_leaf(r, c, 0, 1, "Data", "48K");
        cache_leaf(r, c, 1, 3, "Unified", "9216K");
        let l1 = if c == 5 { 0 } else { sib };
        let l3: u32 = if c == 7 {
            0
        } else if c % 4 < 2 {
            0x33
        } else {
            0xcc
        };
        write(
            r,
            &format!("{CPU}/cpu{c}/cache/index0/shared_cpu_map"),
            &format!("{l1:08x}"),
        );
        write(
            r,
            &format!("{CPU}/cpu{c}/cache/index1/shared_cpu_map"),
            &format!("{l3:08x}"),
        );
    }
    let m = probe(r);
    let l1 = cache(&m, 1, CacheType::Data);
    assert_eq!(l1.instances, 4, "{l1:?}");
    assert_eq!(l1.total_bytes, Probed::Known(4 * 48 * 1024));
    let l3 = cache(&m, 3, CacheType::Unified);
    assert_eq!(l3.instances, 2, "{l3:?}");
    assert_eq!(l3.instance_cpus, [set("0-1,4-5"), set("2-3,6-7")]);
    assert_eq!(m.cpu.topology.cores, Probed::Known(4));

    // Every L3 map all zero: the sharing is unknown, assumed per package and said so (never
    // one L3 per CPU).
    for c in 0..8u32 {
        write(
            r,
            &format!("{CPU}/cpu{c}/cache/index1/shared_cpu_map"),
            "00000000",
        );
    }
    let m = probe(r);
    let l3 = cache(&m, 3, CacheType::Unified);
    assert_eq!(l3.instances, 1, "{l3:?}");
    assert!(l3.grouped_by.contains("sharing unknown"), "{l3:?}");
    assert!(
        problems(&m).contains("L3 sharing unknown on cpus 0-7"),
        "{}",
        problems(&m)
    );
}

#[test]
fn an_empty_or_bad_shared_cpu_list_falls_back_to_the_map() {
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    x86(r, 2, &|_| 0, &|_| 0);
    for c in 0..2u32 {
        let topo = format!("{CPU}/cpu{c}/topology");
        write(r, &format!("{topo}/thread_siblings_list"), "0-1");
        write(r, &format!("{topo}/core_siblings_list"), "0-1");
        cache_leaf(r, c, 0, 2, "Unified", "1024K");
        let d = format!("{CPU}/cpu{c}/cache/index0");
        write(
            r,
            &format!("{d}/shared_cpu_list"),
            if c == 0 { "" } else { "x" },
        );
        write(r, &format!("{d}/shared_cpu_map"), "00000003");
    }
    let m = probe(r);
    let l2 = cache(&m, 2, CacheType::Unified);
    assert_eq!(l2.instances, 1, "{l2:?}");
    assert_eq!(l2.instance_cpus, [set("0-1")]);
}

// --- 2. sparc64 per-package caches ---------------------------------------------------------

#[test]
fn sparc64_l2_files_describe_one_cache_per_package() {
    // 6 packages x 2 CPUs, no cache folders: cpuN/l2_cache_size etc. (sun4u style).
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    for f in ["possible", "present", "online"] {
        write(r, &format!("{CPU}/{f}"), "0-11");
    }
    write(
        r,
        "/proc/cpuinfo",
        "cpu\t\t: TI UltraSparc IV+  (Panther)\nfpu\t\t: UltraSparc IV+ integrated FPU\ntype\t\t: sun4u\nncpus probed\t: 12\nncpus active\t: 12\n",
    );
    for c in 0..12u32 {
        let topo = format!("{CPU}/cpu{c}/topology");
        let pkg = c / 2;
        write(r, &format!("{topo}/physical_package_id"), &pkg.to_string());
        write(r, &format!("{topo}/core_id"), &c.to_string());
        write(r, &format!("{topo}/thread_siblings_list"), &c.to_string());
        write(
            r,
            &format!("{topo}/core_siblings_list"),
            &format!("{}-{}", pkg * 2, pkg * 2 + 1),
        );
        let b = format!("{CPU}/cpu{c}");
        write(r, &format!("{b}/l1_dcache_size"), "65536");
        write(r, &format!("{b}/l1_icache_size"), "65536");
        write(r, &format!("{b}/l2_cache_size"), "1048576");
    }
    let m = probe(r);
    assert_eq!(m.cpu.arch, Arch::Sparc64);
    assert_eq!(m.cpu.topology.packages, Probed::Known(6));
    let l2 = cache(&m, 2, CacheType::Unified);
    assert_eq!(l2.instances, 6, "{l2:?}");
    assert_eq!(l2.total_bytes, Probed::Known(6 << 20));
    assert_eq!(cache(&m, 1, CacheType::Data).instances, 12);
}

// --- 3. s390 cache levels and architecture --------------------------------------------------

const S390_CPUINFO: &str = "\
vendor_id       : IBM/S390
# processors    : 4
bogomips per cpu: 14367.00
features\t: esan3 zarch stfle msa ldisp eimm dfp etf3eh highgprs
cache0          : level=1 type=Data scope=Private size=128K line_size=256 associativity=8
cache1          : level=1 type=Instruction scope=Private size=64K line_size=256 associativity=4
cache2          : level=2 type=Unified scope=Private size=1536K line_size=256 associativity=12
cache3          : level=3 type=Unified scope=Shared size=24576K line_size=256 associativity=12
cache4          : level=4 type=Unified scope=Shared size=196608K line_size=256 associativity=24
processor 0: version = 00,  identification = 279F25,  machine = 2817
processor 1: version = 00,  identification = 279F25,  machine = 2817
processor 2: version = 00,  identification = 279F25,  machine = 2817
processor 3: version = 00,  identification = 279F25,  machine = 2817
";

#[test]
fn s390_is_s390_and_its_l3_l4_come_from_cpuinfo() {
    // z196: 4 CPUs on 2 chips (core_siblings 0-1, 2-3) in one book; sysfs lists L1 and L2.
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    for f in ["possible", "present", "online"] {
        write(r, &format!("{CPU}/{f}"), "0-3");
    }
    write(r, "/proc/cpuinfo", S390_CPUINFO);
    for c in 0..4u32 {
        let topo = format!("{CPU}/cpu{c}/topology");
        write(r, &format!("{topo}/physical_package_id"), "-1");
        write(r, &format!("{topo}/core_id"), &c.to_string());
        write(r, &format!("{topo}/book_id"), "0");
        write(r, &format!("{topo}/thread_siblings_list"), &c.to_string());
        write(
            r,
            &format!("{topo}/core_siblings_list"),
            if c < 2 { "0-1" } else { "2-3" },
        );
        for (i, (level, ty, size)) in [
            (1u8, "Data", "128K"),
            (1, "Instruction", "64K"),
            (2, "Unified", "1536K"),
        ]
        .into_iter()
        .enumerate()
        {
            cache_leaf(r, c, i as u32, level, ty, size);
            write(
                r,
                &format!("{CPU}/cpu{c}/cache/index{i}/shared_cpu_list"),
                &c.to_string(),
            );
        }
    }
    let m = probe(r);
    assert_eq!(m.cpu.arch, Arch::S390x, "{}", m.cpu.arch_source);
    assert_eq!(m.pages.base_page_size_bytes, Probed::Known(4096));
    assert_eq!(cache(&m, 2, CacheType::Unified).instances, 4);
    let l3 = cache(&m, 3, CacheType::Unified);
    assert_eq!(l3.size_bytes, Probed::Known(24 << 20));
    assert_eq!(l3.instances, 2, "{l3:?}");
    let l4 = cache(&m, 4, CacheType::Unified);
    assert_eq!(l4.size_bytes, Probed::Known(192 << 20));
    assert_eq!(l4.instances, 1, "{l4:?}");
    let src = m.cpu.caches_source.known().expect("caches source");
    assert!(src.contains("levels above L2 from /proc/cpuinfo"), "{src}");

    // The kernel's word beats any cpuinfo heuristic: an e2k-looking cpuinfo on an s390x kernel.
    write(r, "/proc/sys/kernel/arch", "s390x");
    write(
        r,
        "/proc/cpuinfo",
        "cache0 : level=1 type=Data scope=Private size=64K\n",
    );
    assert_eq!(probe(r).cpu.arch, Arch::S390x);
}

// --- 4. SMT siblings vs compute units -------------------------------------------------------

fn smt_guest(root: &Path, core_ids: [i64; 4]) {
    // 4 CPUs, 2 per sibling group ({0,1}, {2,3}); the guest's cache files give each CPU a
    // private L1d.
    x86(root, 4, &|_| 0, &|c| core_ids[c as usize]);
    for c in 0..4u32 {
        let topo = format!("{CPU}/cpu{c}/topology");
        write(
            root,
            &format!("{topo}/thread_siblings_list"),
            if c < 2 { "0-1" } else { "2-3" },
        );
        write(root, &format!("{topo}/core_siblings_list"), "0-3");
        cache_leaf(root, c, 0, 1, "Data", "32K");
        write(
            root,
            &format!("{CPU}/cpu{c}/cache/index0/shared_cpu_list"),
            &c.to_string(),
        );
    }
}

#[test]
fn smt_threads_with_one_core_id_stay_one_core_whatever_the_l1d_says() {
    let t = hwsurvey_testkit::scratch_tempdir();
    smt_guest(t.path(), [0, 0, 1, 1]);
    let m = probe(t.path());
    assert_eq!(m.cpu.topology.cores, Probed::Known(2));
    assert_eq!(
        m.cpu.topology.cores_by_threads.get(&2),
        Some(&2),
        "{:?}",
        m.cpu.topology.cores_by_threads
    );
}

#[test]
fn siblings_with_different_or_unknown_core_ids_are_separate_cores() {
    // AMD compute units: the kernel pairs two cores with their own core ids (or -1).
    for ids in [[0, 1, 2, 3], [-1, -1, -1, -1]] {
        let t = hwsurvey_testkit::scratch_tempdir();
        smt_guest(t.path(), ids);
        let m = probe(t.path());
        assert_eq!(m.cpu.topology.cores, Probed::Known(4), "core ids {ids:?}");
    }
}

// --- 5. topology masks ----------------------------------------------------------------------

#[test]
fn topology_from_masks_when_the_lists_are_absent() {
    // 8 single-thread cores in two clusters of 4, one package, one die; only the hex masks
    // (core_cpus, package_cpus, die_cpus, cluster_cpus); core ids repeat per cluster.
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    x86(r, 8, &|_| 0, &|c| (c % 4) as i64);
    for c in 0..8u32 {
        let topo = format!("{CPU}/cpu{c}/topology");
        write(
            r,
            &format!("{topo}/core_cpus"),
            &format!("{:08x}", 1u32 << c),
        );
        write(r, &format!("{topo}/package_cpus"), "000000ff");
        write(r, &format!("{topo}/die_cpus"), "000000ff");
        write(
            r,
            &format!("{topo}/cluster_cpus"),
            if c < 4 { "0000000f" } else { "000000f0" },
        );
    }
    let m = probe(r);
    assert_eq!(m.cpu.topology.cores, Probed::Known(8));
    assert_eq!(m.cpu.topology.cores_by_threads.get(&1), Some(&8));
    assert_eq!(m.cpu.topology.clusters, Probed::Known(2));
    assert_eq!(m.cpu.topology.dies, Probed::Known(1));
    assert_eq!(m.cpu.topology.packages, Probed::Known(1));
}

// --- 6. package ids vs sibling masks --------------------------------------------------------

#[test]
fn package_ids_that_disagree_with_the_masks_are_a_problem_and_the_masks_count() {
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    // Two packages of two single-thread cores by the masks; every package id says 0.
    x86(r, 4, &|_| 0, &|c| (c % 2) as i64);
    for c in 0..4u32 {
        let topo = format!("{CPU}/cpu{c}/topology");
        write(r, &format!("{topo}/thread_siblings_list"), &c.to_string());
        write(
            r,
            &format!("{topo}/core_siblings_list"),
            if c < 2 { "0-1" } else { "2-3" },
        );
    }
    let m = probe(r);
    assert_eq!(m.cpu.topology.packages, Probed::Known(2));
    assert!(
        problems(&m).contains("physical_package_id and core_siblings/package_cpus disagree"),
        "{}",
        problems(&m)
    );
    assert_eq!(m.cpu.topology.cores, Probed::Known(4));

    // A package id of -2^63 on one CPU: a problem, and the cores are not split by it.
    x86(
        r,
        4,
        &|c| if c == 3 { i64::MIN } else { c as i64 / 2 },
        &|c| (c % 2) as i64,
    );
    let m = probe(r);
    assert_eq!(m.cpu.topology.packages, Probed::Known(2));
    assert_eq!(m.cpu.topology.cores, Probed::Known(4));
    assert!(
        problems(&m).contains("-9223372036854775808"),
        "{}",
        problems(&m)
    );
}

// --- 7. per-CPU online files ----------------------------------------------------------------

#[test]
fn per_cpu_online_files_when_the_global_one_is_absent() {
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    x86(r, 4, &|_| 0, &|c| c as i64);
    std::fs::remove_file(r.join("sys/devices/system/cpu/online")).expect("rm online");
    // cpu0 (boot CPU) has no online file; cpu2 is offline.
    for (c, v) in [(1, "1"), (2, "0"), (3, "1")] {
        write(r, &format!("{CPU}/cpu{c}/online"), v);
    }
    for c in 0..4u32 {
        write(
            r,
            &format!("{CPU}/cpu{c}/topology/thread_siblings_list"),
            &c.to_string(),
        );
    }
    let m = probe(r);
    assert_eq!(m.cpu.online, Probed::Known(set("0-1,3")));
    assert_eq!(m.cpu.offline, Probed::Known(set("2")));
    assert_eq!(m.cpu.topology.threads, Probed::Known(3));
}

// --- 9. architecture names ------------------------------------------------------------------

#[test]
fn ia64_loongarch_and_32_bit_x86_kernels_are_named() {
    use hwsurvey_probe::cpu::cpuinfo::detect_arch;
    let ia64 = "processor  : 0\nvendor     : GenuineIntel\narch       : IA-64\nfamily     : Itanium 2\nmodel      : 2\n";
    assert_eq!(detect_arch(ia64).map(|a| a.0), Some(Arch::Ia64));
    let la = "system type\t\t: generic-loongson-machine\n\nprocessor\t\t: 0\npackage\t\t\t: 0\ncore\t\t\t: 0\nCPU Family\t\t: Loongson-64bit\nModel Name\t\t: Loongson-3A5000\nISA\t\t\t: loongarch32 loongarch64\n";
    assert_eq!(detect_arch(la).map(|a| a.0), Some(Arch::Loongarch64));
    // A 32-bit kernel on a 64-bit CPU: flags carry lm, the fdiv_bug lines say 32-bit.
    let i686 = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nfdiv_bug\t: no\nf00f_bug\t: no\ncoma_bug\t: no\nfpu\t\t: yes\nflags\t\t: fpu pae lm\n";
    let (arch, how) = detect_arch(i686).expect("x86");
    assert_eq!(arch, Arch::X86);
    assert_eq!(arch.as_str(), "i686");
    assert!(how.contains("32-bit kernel"), "{how}");
    let x64 = "processor\t: 0\nvendor_id\t: GenuineIntel\nfpu\t\t: yes\nflags\t\t: fpu pae lm\n";
    assert_eq!(detect_arch(x64).map(|a| a.0), Some(Arch::X86_64));
    assert_eq!(Arch::from_machine("ia64"), Arch::Ia64);
    assert_eq!(Arch::from_machine("loongarch64"), Arch::Loongarch64);

    // Through a tree: the kernel's own word (/proc/sys/kernel/arch) names it.
    let t = hwsurvey_testkit::scratch_tempdir();
    write(t.path(), "/proc/cpuinfo", ia64);
    write(t.path(), "/proc/sys/kernel/arch", "ia64");
    assert_eq!(probe(t.path()).cpu.arch, Arch::Ia64);
}

// --- implausible values ---------------------------------------------------------------------

/// 4 CPUs, 2 cores x 2 threads, one package, per-core L1d and one L3 (id 0).
fn plain(root: &Path) {
    x86(root, 4, &|_| 0, &|c| (c / 2) as i64);
    for c in 0..4u32 {
        let topo = format!("{CPU}/cpu{c}/topology");
        let sib = if c < 2 { "0-1" } else { "2-3" };
        write(root, &format!("{topo}/thread_siblings_list"), sib);
        write(root, &format!("{topo}/core_siblings_list"), "0-3");
        cache_leaf(root, c, 0, 1, "Data", "48K");
        write(
            root,
            &format!("{CPU}/cpu{c}/cache/index0/shared_cpu_list"),
            sib,
        );
        write(
            root,
            &format!("{CPU}/cpu{c}/cache/index0/id"),
            &(c / 2).to_string(),
        );
        cache_leaf(root, c, 3, 3, "Unified", "30720K");
        write(
            root,
            &format!("{CPU}/cpu{c}/cache/index3/shared_cpu_list"),
            "0-3",
        );
        write(root, &format!("{CPU}/cpu{c}/cache/index3/id"), "0");
    }
}

#[test]
fn stray_cache_leaf_and_absurd_l1d_size_invent_no_core_kinds() {
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    plain(r);
    assert_eq!(probe(r).cpu.kinds.len(), 1);
    // A stray leaf on cpu3.
    cache_leaf(r, 3, 99_999_999, 2, "Unified", "2048K");
    let m = probe(r);
    assert_eq!(m.cpu.kinds.len(), 1, "{:#?}", m.cpu.kinds);
    assert!(problems(&m).contains("index99999999"), "{}", problems(&m));
    assert!(m.cpu.caches.iter().all(|c| c.level != 2));
    std::fs::remove_dir_all(r.join("sys/devices/system/cpu/cpu3/cache/index99999999")).expect("rm");
    // A 4 TiB L1d on cpu2.
    write(r, &format!("{CPU}/cpu2/cache/index0/size"), "4294967296K");
    let m = probe(r);
    assert_eq!(m.cpu.kinds.len(), 1, "{:#?}", m.cpu.kinds);
    assert!(problems(&m).contains("4294967296K"), "{}", problems(&m));
}

#[test]
fn an_l3_id_of_minus_one_does_not_double_the_l3() {
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    plain(r);
    write(r, &format!("{CPU}/cpu1/cache/index3/id"), "-1");
    let m = probe(r);
    let l3 = cache(&m, 3, CacheType::Unified);
    assert_eq!(l3.instances, 1, "{l3:?}");
    assert_eq!(l3.total_bytes, Probed::Known(30 << 20));
}

/// The x86-epyc-1s guest (QEMU's `EPYC` model): the kernel gives each CPU an L3 id of its own
/// (0, 1, 2, 3 here) while every `shared_cpu_list` says one L3 serves them all. The lists win:
/// one instance (grouped by id it was four, each holding every CPU; lstopo said one).
#[test]
fn l3_ids_that_contradict_the_sharing_lists_do_not_multiply_the_l3() {
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    plain(r);
    for c in 0..4u32 {
        write(r, &format!("{CPU}/cpu{c}/cache/index3/id"), &c.to_string());
    }
    let m = probe(r);
    let l3 = cache(&m, 3, CacheType::Unified);
    assert_eq!(
        (l3.instances, l3.grouped_by.as_str()),
        (1, "shared_cpu_list"),
        "{l3:?}"
    );
    assert_eq!(l3.total_bytes, Probed::Known(30 << 20));
    // the L1d ids agree with their lists: still grouped by id, 2 instances
    let l1 = cache(&m, 1, CacheType::Data);
    assert_eq!(
        (l1.instances, l1.grouped_by.as_str()),
        (2, "cache id"),
        "{l1:?}"
    );
}

#[test]
fn cpu_lists_beyond_possible_are_problems() {
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    plain(r);
    write(r, &format!("{CPU}/online"), "0-5");
    write(
        r,
        &format!("{CPU}/cpu0/topology/thread_siblings_list"),
        "0-1,7",
    );
    let m = probe(r);
    assert_eq!(m.cpu.online, Probed::Known(set("0-3")));
    let p = problems(&m);
    assert!(p.contains("/sys/devices/system/cpu/online"), "{p}");
    assert!(p.contains("cpu0/topology/thread_siblings_list"), "{p}");
}

#[test]
fn a_huge_possible_list_is_refused_quickly_with_a_clear_error() {
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    plain(r);
    write(r, &format!("{CPU}/possible"), "0-1048575");
    let started = std::time::Instant::now();
    let m = probe(r);
    let took = started.elapsed();
    assert!(took.as_secs_f64() < 5.0, "took {took:?}");
    let Probed::Unknown(u) = &m.cpu.possible else {
        panic!("possible accepted: {:?}", m.cpu.possible);
    };
    let text = format!("{u:?}");
    assert!(
        text.contains("/sys/devices/system/cpu/possible")
            && text.contains("below 8192")
            && text.contains("1048575"),
        "{text}"
    );
    // A mask with a bit far beyond any kernel: refused, not expanded.
    let big = format!("1{}", ",00000000".repeat(2000));
    write(r, &format!("{CPU}/cpu0/topology/thread_siblings"), &big);
    std::fs::remove_file(r.join("sys/devices/system/cpu/cpu0/topology/thread_siblings_list"))
        .expect("rm");
    let m = probe(r);
    assert!(
        problems(&m).contains("cpu0/topology/thread_siblings"),
        "{}",
        problems(&m)
    );
}

// --- 10. impossible NUMA layouts ------------------------------------------------------------

fn numa_tree(root: &Path, nodes: &[(&str, u64)], mem_total_kib: u64) {
    plain(root);
    write(
        root,
        "/proc/meminfo",
        &format!("MemTotal:       {mem_total_kib} kB\nMemFree:  1000 kB\n"),
    );
    for (i, (cpus, kib)) in nodes.iter().enumerate() {
        let d = format!("/sys/devices/system/node/node{i}");
        write(root, &format!("{d}/cpulist"), cpus);
        write(
            root,
            &format!("{d}/meminfo"),
            &format!("Node {i} MemTotal:       {kib} kB\nNode {i} MemFree:     100 kB\n"),
        );
    }
}

fn numa_problems(m: &Machine) -> String {
    format!("{:?}", m.numa.problems)
}

#[test]
fn nodes_all_listing_the_same_cpus_are_a_problem() {
    let t = hwsurvey_testkit::scratch_tempdir();
    numa_tree(t.path(), &[("0-3", 8 << 20), ("0-3", 8 << 20)], 16 << 20);
    let m = probe(t.path());
    assert!(
        numa_problems(&m).contains("every NUMA node (2) lists the same CPUs"),
        "{}",
        numa_problems(&m)
    );
    // Overlap short of identity is named by node pair.
    let t = hwsurvey_testkit::scratch_tempdir();
    numa_tree(t.path(), &[("0-2", 8 << 20), ("2-3", 8 << 20)], 16 << 20);
    let m = probe(t.path());
    assert!(
        numa_problems(&m).contains("NUMA nodes 0 and 1 both list CPUs 2"),
        "{}",
        numa_problems(&m)
    );
    // A sound layout has none of these.
    let t = hwsurvey_testkit::scratch_tempdir();
    numa_tree(t.path(), &[("0-1", 8 << 20), ("2-3", 8 << 20)], 16 << 20);
    assert_eq!(numa_problems(&probe(t.path())), "[]");
}

#[test]
fn node_memory_far_below_memtotal_is_a_problem() {
    // One node of 7.0 GiB on a machine whose MemTotal is 23.5 GiB.
    let t = hwsurvey_testkit::scratch_tempdir();
    numa_tree(t.path(), &[("0-3", 7_340_032)], 24_641_536);
    let m = probe(t.path());
    assert!(
        numa_problems(&m).contains("add up to 7.0 GiB but /proc/meminfo MemTotal is 23.5 GiB"),
        "{}",
        numa_problems(&m)
    );
}

// --- implausible hugetlb pools --------------------------------------------------------------

#[test]
fn hugetlb_pools_beyond_memory_or_with_more_free_than_total_are_problems() {
    let t = hwsurvey_testkit::scratch_tempdir();
    let r = t.path();
    plain(r);
    write(
        r,
        "/proc/meminfo",
        "MemTotal:       16384000 kB\nMemFree: 1000 kB\n",
    );
    let d1g = "/sys/kernel/mm/hugepages/hugepages-1048576kB";
    write(r, &format!("{d1g}/nr_hugepages"), "4294967295");
    write(r, &format!("{d1g}/free_hugepages"), "0");
    write(r, &format!("{d1g}/resv_hugepages"), "0");
    write(r, &format!("{d1g}/surplus_hugepages"), "0");
    let d2m = "/sys/kernel/mm/hugepages/hugepages-2048kB";
    write(r, &format!("{d2m}/nr_hugepages"), "10");
    write(r, &format!("{d2m}/free_hugepages"), "11");
    write(r, &format!("{d2m}/resv_hugepages"), "0");
    write(r, &format!("{d2m}/surplus_hugepages"), "0");
    let m = probe(r);
    let p = format!("{:?}", m.pages.problems);
    assert!(
        p.contains("hugepages-1048576kB/nr_hugepages") && p.contains("4294967295"),
        "{p}"
    );
    assert!(
        p.contains("hugepages-2048kB/free_hugepages") && p.contains("11 free pages"),
        "{p}"
    );
    let gig = m
        .pages
        .hugetlb
        .iter()
        .find(|h| h.system.page_size_bytes == 1 << 30)
        .expect("1 GiB pool");
    assert!(gig.system.total_bytes.known().is_none(), "{:?}", gig.system);
}

/// The clocksource files: the words the kernel writes (`tsc` and the list in its order), and a
/// file that is not one word, which becomes an unknown naming the file and the text (never a
/// clocksource named "tsc hpet").
#[test]
fn clocksource_is_read_and_a_garbled_file_is_named() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    let cs = "/sys/devices/system/clocksource/clocksource0";
    write(dir.path(), &format!("{cs}/current_clocksource"), "hpet\n");
    write(
        dir.path(),
        &format!("{cs}/available_clocksource"),
        "tsc hpet acpi_pm \n",
    );
    let c = hwsurvey_probe::clocksource::probe(&SysRoot::new(dir.path()));
    let c = c.known().expect("known");
    assert_eq!(
        (
            c.current.as_str(),
            c.available.known().cloned(),
            c.is_slow()
        ),
        (
            "hpet",
            Some(vec!["tsc".into(), "hpet".into(), "acpi_pm".into()]),
            true
        )
    );
    write(
        dir.path(),
        &format!("{cs}/current_clocksource"),
        "tsc hpet\n",
    );
    let why = format!(
        "{:?}",
        hwsurvey_probe::clocksource::current(&SysRoot::new(dir.path()))
    );
    assert!(
        why.contains("current_clocksource") && why.contains("tsc hpet"),
        "{why}"
    );
    // a NUL in the name, and an available list that is not names: named, not passed on
    write(dir.path(), &format!("{cs}/current_clocksource"), "tsc\0");
    let why = format!(
        "{:?}",
        hwsurvey_probe::clocksource::current(&SysRoot::new(dir.path()))
    );
    assert!(why.contains("current_clocksource"), "{why}");
    write(dir.path(), &format!("{cs}/current_clocksource"), "tsc");
    write(dir.path(), &format!("{cs}/available_clocksource"), "");
    let c = hwsurvey_probe::clocksource::probe(&SysRoot::new(dir.path()));
    let why = format!("{:?}", c.known().expect("current is readable").available);
    assert!(why.contains("available_clocksource"), "{why}");
    let none = hwsurvey_testkit::scratch_tempdir();
    let missing = hwsurvey_probe::clocksource::probe(&SysRoot::new(none.path()));
    assert!(format!("{missing:?}").contains("Missing"), "{missing:?}");
}

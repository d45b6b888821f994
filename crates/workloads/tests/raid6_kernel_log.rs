//! Parser of the kernel's raid6 boot lines (lib/raid6/algos.c formats; sample lines written from
//! those printk formats, in dmesg and /dev/kmsg framing).

use hwsurvey_workloads::raid6::kmsg::parse_kernel_log;

const MIB: u64 = 1 << 20;

#[test]
fn benchmarked_x86_boot_dmesg() {
    let text = "\
[    0.612345] raid6: avx512x4 gen() 18211 MB/s
[    0.629345] raid6: avx512x2 gen() 18102 MB/s
[    0.646345] raid6: avx2x4   gen() 13011 MB/s
[    0.663345] raid6: avx2x2   gen() 12870 MB/s
[    0.680345] raid6: sse2x1   gen()  4201 MB/s
[    0.697345] raid6: using algorithm avx512x4 gen() 18211 MB/s
[    0.714345] raid6: .... xor() 10577 MB/s, rmw enabled
[    0.714350] raid6: using avx512x2 recovery algorithm
[    0.714400] xor: automatically using best checksumming function   avx
";
    let log = parse_kernel_log(text).unwrap();
    assert_eq!(log.gen_figures.len(), 5);
    assert_eq!(log.gen_figures[2].algorithm, "avx2x4");
    assert_eq!(log.gen_figures[2].gen_bandwidth_bytes_per_s, 13011 * MIB);
    assert_eq!(log.gen_figures[4].gen_bandwidth_bytes_per_s, 4201 * MIB);
    assert_eq!(log.selected_algorithm.as_deref(), Some("avx512x4"));
    assert_eq!(log.selected_gen_bandwidth_bytes_per_s, Some(18211 * MIB));
    assert_eq!(log.xor_bandwidth_bytes_per_s, Some(10577 * MIB));
    assert_eq!(log.recovery_algorithm.as_deref(), Some("avx512x2"));
    assert!(!log.benchmark_skipped);
}

#[test]
fn skipped_benchmark_as_on_this_vm_kmsg_framing() {
    let text = "\
6,301,276695,-;raid6: skipped pq benchmark and selected avx512x4
6,302,276704,-;raid6: using avx512x2 recovery algorithm
";
    let log = parse_kernel_log(text).unwrap();
    assert!(log.benchmark_skipped);
    assert!(log.gen_figures.is_empty());
    assert_eq!(log.selected_algorithm.as_deref(), Some("avx512x4"));
    assert_eq!(log.selected_gen_bandwidth_bytes_per_s, None);
    assert_eq!(log.recovery_algorithm.as_deref(), Some("avx512x2"));
}

#[test]
fn arm64_neon_and_old_kernel_format() {
    let arm = "\
[    1.100000] raid6: neonx8   gen()  6380 MB/s
[    1.110000] raid6: neonx4   gen()  6456 MB/s
[    1.120000] raid6: int64x8  gen()  3522 MB/s
[    1.130000] raid6: using algorithm neonx4 gen() 6456 MB/s
[    1.140000] raid6: .... xor() 4704 MB/s, rmw enabled
[    1.150000] raid6: using neon recovery algorithm
";
    let log = parse_kernel_log(arm).unwrap();
    let names: Vec<&str> = log
        .gen_figures
        .iter()
        .map(|f| f.algorithm.as_str())
        .collect();
    assert_eq!(names, ["neonx8", "neonx4", "int64x8"]);
    assert_eq!(log.selected_gen_bandwidth_bytes_per_s, Some(6456 * MIB));
    assert_eq!(log.recovery_algorithm.as_deref(), Some("neon"));

    // Linux 3.x: no "gen()", parenthesised selection.
    let old = "\
raid6: sse2x1    5432 MB/s
raid6: sse2x4    8123 MB/s
raid6: using algorithm sse2x4 (8123 MB/s)
raid6: using ssse3x2 recovery algorithm
";
    let log = parse_kernel_log(old).unwrap();
    assert_eq!(log.gen_figures.len(), 2);
    assert_eq!(log.gen_figures[1].gen_bandwidth_bytes_per_s, 8123 * MIB);
    assert_eq!(log.selected_algorithm.as_deref(), Some("sse2x4"));
    assert_eq!(log.selected_gen_bandwidth_bytes_per_s, Some(8123 * MIB));
}

#[test]
fn absent_and_garbage() {
    assert_eq!(
        parse_kernel_log("[0.1] xor: using avx\n[0.2] md: raid1 personality"),
        None
    );
    // A raid6 line with a broken figure is seen but yields no figure.
    let log =
        parse_kernel_log("raid6: avx2x4   gen() lots MB/s\nraid6: Yikes! No memory available.")
            .unwrap();
    assert!(log.gen_figures.is_empty());
    assert_eq!(log.selected_algorithm, None);
}

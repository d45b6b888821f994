//! hwsurvey's storage and RAID-6 figures beside their peers on this machine.
//!
//! 1. 4 KiB random read, O_DIRECT, same file, block size, threads and queue depth: hwsurvey's
//!    engine vs fio (Debian package `fio`, `--ioengine=io_uring` when hwsurvey uses io_uring,
//!    `psync` otherwise), interleaved in pairs, the order alternating (hwsurvey then fio, fio then hwsurvey, ...); prints every raw figure, the
//!    median of the per-pair IOPS ratios with min and max (notes/measuring.md), and the load
//!    average before and after. Target: the median ratio within 10% of 1.
//! 2. Single-thread RAID-6 gen for 8+2 with 64 KiB chunks, every path this CPU runs, MB/s of data
//!    (MB = 10^6), beside the kernel's boot-time figure where its log is readable (the kernel's
//!    figure is MiB/s over 6 data pages of 4 KiB: a different stripe, shown for scale only).
//!
//! Environment: HWSURVEY_STORAGE_DIR (default: a temporary directory), HWSURVEY_PEER_PAIRS
//! (default 8; odd pairs run hwsurvey first, even pairs fio first), HWSURVEY_PEER_SECONDS (per run, default 3), HWSURVEY_PEER_THREADS (1),
//! HWSURVEY_PEER_QD (16), HWSURVEY_PEER_FILE_MIB (1024), HWSURVEY_PEER_ENGINE (`psync`: both tools
//! use synchronous reads from threads x queue depth workers, instead of io_uring). The test file is removed at the end.
//! HWSURVEY_BENCH_SMOKE=1 (scripts/bench-smoke): the short form, whose figures mean nothing: 1
//! pair of 1 s on a 16 MiB file, and 2 runs of 0.03 s per RAID-6 path (each variable above
//! still wins when set).

use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use hwsurvey_workloads::raid6::{self, Algorithm};

/// Whether `HWSURVEY_BENCH_SMOKE=1` asks for the short form (see the module docs).
fn smoke() -> bool {
    std::env::var("HWSURVEY_BENCH_SMOKE").is_ok_and(|v| v == "1")
}

/// `full` normally, `short` in the short form.
fn size<T>(full: T, short: T) -> T {
    if smoke() {
        short
    } else {
        full
    }
}

fn env_or<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// `/proc/loadavg`'s three averages, read by the probe layer.
fn loadavg() -> String {
    hwsurvey_probe::run_env::load_average_line(&hwsurvey_probe::SysRoot::live())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(feature = "sys")]
fn storage_pairs() {
    use hwsurvey_workloads::storage::engine::{
        io_uring_usable, run_point, EngineChoice, IoSpec, IoTarget,
    };
    use hwsurvey_workloads::storage::target::create_test_file;
    use hwsurvey_workloads::storage::Pattern;

    let pairs: usize = env_or("HWSURVEY_PEER_PAIRS", size(8, 1));
    let secs: u64 = env_or("HWSURVEY_PEER_SECONDS", size(3, 1));
    let threads: usize = env_or("HWSURVEY_PEER_THREADS", 1);
    let qd: usize = env_or("HWSURVEY_PEER_QD", 16);
    let size_mib: u64 = env_or("HWSURVEY_PEER_FILE_MIB", size(1024, 16));
    if Command::new("fio").arg("--version").output().is_err() {
        println!("SKIPPED: fio not installed (apt-get install -y fio); no storage comparison");
        return;
    }
    let tmp;
    let dir = match std::env::var("HWSURVEY_STORAGE_DIR") {
        Ok(d) => std::path::PathBuf::from(d),
        Err(_) => {
            tmp = tempfile::tempdir().expect("temporary directory");
            tmp.path().to_path_buf()
        }
    };
    let stop = AtomicBool::new(false);
    let tf = match create_test_file(&dir, size_mib << 20, &stop) {
        Ok(t) => t,
        Err(e) => {
            println!("SKIPPED: storage comparison: {e}");
            return;
        }
    };
    let path = tf.path().display().to_string();
    // HWSURVEY_PEER_ENGINE=psync compares the pread/pwrite engine with fio's psync.
    let force_sync = std::env::var("HWSURVEY_PEER_ENGINE").is_ok_and(|v| v == "psync");
    let uring_flags = if force_sync {
        None
    } else {
        io_uring_usable().ok()
    };
    let uring = uring_flags.is_some();
    let fio_engine = if uring { "io_uring" } else { "psync" };
    println!("== storage.iops randread_4k vs fio: file {path} ({size_mib} MiB, preconditioned), O_DIRECT");
    println!(
        "   threads {threads}, queue depth {qd}, {secs} s per run, {pairs} interleaved pairs; hwsurvey engine {}, fio --ioengine={fio_engine}{}",
        match &uring_flags {
            Some(f) => format!("io_uring (setup flags: {})", if f.is_empty() { "none".to_string() } else { f.join(", ") }),
            None => "pread_pwrite".to_string(),
        },
        if uring { "" } else { " (numjobs = threads x qd, as hwsurvey's workers)" }
    );
    println!("   load average before: {}", loadavg());
    let target = IoTarget {
        path: &path,
        file: &tf.file,
        size_bytes: tf.size_bytes,
    };
    let spec = IoSpec {
        pattern: Pattern::RandRead4k,
        threads_per_target: threads,
        queue_depth: qd,
        duration: Duration::from_secs(secs),
        engine: if force_sync {
            EngineChoice::PreadPwrite
        } else {
            EngineChoice::Auto
        },
    };
    let (fio_jobs, fio_depth) = if uring {
        (threads, qd)
    } else {
        (threads * qd, 1)
    };
    let mut ratios = Vec::new();
    println!(
        "   {:>4} {:>14} {:>14} {:>8} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}",
        "pair",
        "hwsurvey IOPS",
        "fio IOPS",
        "ratio",
        "hw p50 us",
        "fio p50 us",
        "hw p99 us",
        "fio p99 us",
        "hw CPU%",
        "fio CPU%"
    );
    let run_fio = || {
        Command::new("fio")
            .args([
                "--name=hwsurvey-peer",
                &format!("--filename={path}"),
                "--rw=randread",
                "--bs=4k",
                "--direct=1",
                &format!("--ioengine={fio_engine}"),
                &format!("--iodepth={fio_depth}"),
                &format!("--numjobs={fio_jobs}"),
                &format!("--size={}", tf.size_bytes),
                "--time_based",
                &format!("--runtime={secs}"),
                "--norandommap",
                "--randrepeat=0",
                "--group_reporting",
                "--output-format=json",
            ])
            .output()
    };
    for i in 0..pairs {
        // Alternate which tool goes first (ABBA), so that a drift or a device cache warmed by
        // the first run of a pair favours neither tool.
        let fio_first = i % 2 == 1;
        let early_fio = fio_first.then(run_fio);
        let ours = match run_point(&[target], &spec, &stop) {
            Ok(r) => r,
            Err(e) => {
                println!("   hwsurvey run failed: {e}");
                return;
            }
        };
        let out = match early_fio.unwrap_or_else(run_fio) {
            Ok(o) if o.status.success() => o,
            Ok(o) => {
                println!("   fio failed: {}", String::from_utf8_lossy(&o.stderr));
                return;
            }
            Err(e) => {
                println!("   fio could not run: {e}");
                return;
            }
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let json_start = text.find('{').unwrap_or(0);
        let v: serde_json::Value = match serde_json::from_str(&text[json_start..]) {
            Ok(v) => v,
            Err(e) => {
                println!("   fio output not JSON: {e}");
                return;
            }
        };
        let read = &v["jobs"][0]["read"];
        let fio_iops = read["iops"].as_f64().unwrap_or(f64::NAN);
        let fio_p50_us = read["clat_ns"]["percentile"]["50.000000"]
            .as_f64()
            .unwrap_or(f64::NAN)
            / 1e3;
        let fio_p99_us = read["clat_ns"]["percentile"]["99.000000"]
            .as_f64()
            .unwrap_or(f64::NAN)
            / 1e3;
        // CPU time as a share of one CPU over the run: hwsurvey's from getrusage per I/O, fio's
        // usr_cpu + sys_cpu (percent of the job's runtime).
        let fio_cpu = v["jobs"][0]["usr_cpu"].as_f64().unwrap_or(f64::NAN)
            + v["jobs"][0]["sys_cpu"].as_f64().unwrap_or(f64::NAN);
        let ours_cpu = ours
            .cpu_ns_per_io
            .map(|c| c * ours.iops / 1e7)
            .unwrap_or(f64::NAN);
        let ratio = ours.iops / fio_iops;
        if ratio.is_finite() {
            ratios.push(ratio);
        }
        println!(
            "   {:>4} {:>14.0} {:>14.0} {:>8.3} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>8.1} {:>8.1}",
            i + 1,
            ours.iops,
            fio_iops,
            ratio,
            ours.latency_p50_ns as f64 / 1e3,
            fio_p50_us,
            ours.latency_p99_ns as f64 / 1e3,
            fio_p99_us,
            ours_cpu,
            fio_cpu
        );
    }
    println!("   load average after: {}", loadavg());
    if ratios.is_empty() {
        println!("   no ratio could be computed");
        return;
    }
    let (lo, hi) = ratios
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &r| {
            (a.min(r), b.max(r))
        });
    let med = median(&mut ratios);
    println!(
        "   IOPS ratio hwsurvey/fio: median {med:.3} (min {lo:.3}, max {hi:.3}) over {} pairs: {}",
        ratios.len(),
        if (med - 1.0).abs() <= 0.10 {
            "within 10%"
        } else {
            "OUTSIDE 10%"
        }
    );
}

fn raid6_gen_figure() {
    const N: usize = 8;
    const CHUNK: usize = 64 * 1024;
    println!("== raid.parity gen, 8+2, 64 KiB chunks, 1 thread (MB = 10^6 bytes of data per s)");
    let data: Vec<Vec<u8>> = (0..N)
        .map(|i| {
            let mut b = vec![0u8; CHUNK];
            raid6::fill_pseudo_random(&mut b, i as u64 + 1);
            b
        })
        .collect();
    let view: Vec<&[u8]> = data.iter().map(|d| d.as_slice()).collect();
    let mut p = vec![0u8; CHUNK];
    let mut q = vec![0u8; CHUNK];
    let (runs, run_ms) = size((5, 300), (2, 30));
    for alg in Algorithm::available() {
        let mut rates = Vec::new();
        for _ in 0..runs {
            let t0 = Instant::now();
            let mut calls = 0u64;
            while t0.elapsed() < Duration::from_millis(run_ms) {
                for _ in 0..16 {
                    raid6::gen_syndrome(alg, &view, &mut p, &mut q).expect("valid stripe");
                }
                calls += 16;
            }
            let s = t0.elapsed().as_secs_f64();
            rates.push((calls * (N * CHUNK) as u64) as f64 / s / 1e6);
        }
        let (lo, hi) = rates
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &r| {
                (a.min(r), b.max(r))
            });
        println!(
            "   hwsurvey {:<8} median {:>9.0} MB/s (min {lo:.0}, max {hi:.0}) over {runs} runs of {run_ms} ms",
            alg.name(),
            median(&mut rates)
        );
    }
    match raid6::kmsg::probe_kernel_raid6() {
        Ok(Some(k)) => {
            for f in &k.gen_figures {
                println!(
                    "   kernel   {:<8} {:>9.0} MB/s ({} MiB/s as printed; 6 data x 4 KiB pages)",
                    f.algorithm,
                    f.gen_bandwidth_bytes_per_s as f64 / 1e6,
                    f.gen_bandwidth_bytes_per_s >> 20
                );
            }
            match (&k.selected_algorithm, k.selected_gen_bandwidth_bytes_per_s) {
                (Some(a), Some(b)) => println!("   kernel selected {a}: {:.0} MB/s", b as f64 / 1e6),
                (Some(a), None) => println!("   kernel selected {a} without benchmarking (CONFIG_RAID6_PQ_BENCHMARK unset): no kernel figure"),
                _ => {}
            }
        }
        Ok(None) => {
            println!("   kernel: no raid6 lines in the log (raid6_pq not loaded, or rotated out)")
        }
        Err(e) => println!("   kernel: log unreadable: {e}"),
    }
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing useful: run in both.
    raid6_gen_figure();
    #[cfg(feature = "sys")]
    storage_pairs();
    #[cfg(not(feature = "sys"))]
    println!("SKIPPED: storage comparison needs the `sys` feature");
}

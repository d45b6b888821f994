//! The loaded-latency driver: load levels, streaming kernels and one measured point with a
//! stand-in latency probe (the real chase is `mem.latency`'s).

use std::time::Duration;

use hwsurvey_workloads::service::loaded::{
    plan_load_levels, run_loaded_point, stream_read, stream_write, LatencyProbe, LoadKind,
    LoadLevel, LoadedRun, Role, CHUNK_BYTES,
};
use hwsurvey_workloads::service::ServiceError;

fn lvl(load_threads: usize, delay_ns_per_chunk: u64) -> LoadLevel {
    LoadLevel {
        load_threads,
        delay_ns_per_chunk,
    }
}

#[test]
fn load_levels_for_two_and_sixteen_cpus() {
    assert_eq!(
        plan_load_levels(1, &[500, 2000]),
        vec![lvl(0, 0), lvl(1, 0), lvl(1, 500), lvl(1, 2000)]
    );
    assert_eq!(
        plan_load_levels(15, &[1000]),
        vec![
            lvl(0, 0),
            lvl(1, 0),
            lvl(2, 0),
            lvl(4, 0),
            lvl(8, 0),
            lvl(15, 0),
            lvl(15, 1000)
        ]
    );
    assert_eq!(plan_load_levels(0, &[1000]), vec![lvl(0, 0)]);
}

#[test]
fn streaming_kernels_touch_every_word() {
    let mut buf: Vec<usize> = (1..=1003).collect();
    assert_eq!(stream_read(&buf), 1003 * 1004 / 2);
    stream_write(&mut buf, 7);
    assert!(buf.iter().all(|&w| w == 7));
}

/// Stands in for the chase: sleeps for the window and reports a fixed latency.
struct FixedProbe(f64);

impl LatencyProbe for FixedProbe {
    fn chase_ns_per_load(&mut self, min_duration: Duration) -> f64 {
        std::thread::sleep(min_duration);
        self.0
    }
}

#[test]
fn a_loaded_point_reports_streamed_bandwidth_and_the_chase_latency() {
    let mut a = vec![0usize; 1 << 17]; // 1 MiB on 64-bit targets
    let mut b = vec![0usize; 1 << 17];
    let mut bufs: Vec<&mut [usize]> = vec![&mut a, &mut b];
    let pinned = std::sync::Mutex::new(Vec::new());
    let pin = |r: Role| pinned.lock().unwrap().push(r);
    let mut probe = FixedProbe(87.5);
    for kind in [LoadKind::Read, LoadKind::Write] {
        let p = run_loaded_point(
            &mut probe,
            &mut bufs,
            lvl(2, 0),
            kind,
            LoadedRun {
                warmup: Duration::from_millis(5),
                duration: Duration::from_millis(300),
                first_touch: true,
            },
            &pin,
        )
        .unwrap();
        assert_eq!(p.latency_ns, 87.5);
        assert_eq!((p.load_threads, p.load_kind), (2, kind));
        // Bytes are counted per 4 KiB chunk: at least one chunk in the window (qemu-aarch64 on
        // a machine at load 26 streamed 4.6 MB/s in a debug build; natively GB/s).
        assert!(
            p.bandwidth_bytes_per_s >= CHUNK_BYTES as f64 / p.window_s,
            "{}",
            p.bandwidth_bytes_per_s
        );
        assert!(p.window_s >= 0.3);
    }
    let roles = pinned.into_inner().unwrap();
    assert!(roles.contains(&Role::Latency) && roles.contains(&Role::Load(1)));
    assert!(
        b.iter().all(|&w| w != 0),
        "write load reached the whole buffer"
    );
}

/// The first run of a point touches (zeroes) each streaming buffer; the later runs of the
/// same point leave a read load's buffers as they are (rewriting every buffer in
/// every sample made loaded-latency points in a 16-vCPU guest take 25-35 s).
#[test]
fn only_the_first_run_touches_the_streaming_buffers() {
    let mut probe = FixedProbe(80.0);
    let mut a = vec![7usize; 1 << 12];
    let mut run = |buf: &mut [usize], first_touch: bool| {
        let run = LoadedRun {
            warmup: Duration::ZERO,
            duration: Duration::from_millis(20),
            first_touch,
        };
        run_loaded_point(
            &mut probe,
            &mut [buf],
            lvl(1, 0),
            LoadKind::Read,
            run,
            &|_| {},
        )
        .unwrap();
    };
    run(&mut a, false);
    assert!(a.iter().all(|&w| w == 7), "a later run rewrote the buffer");
    run(&mut a, true);
    assert!(
        a.iter().all(|&w| w == 0),
        "the first run did not touch the buffer"
    );
}

#[test]
fn idle_point_has_zero_streamed_bytes_and_missing_buffers_are_an_error() {
    let mut probe = FixedProbe(80.0);
    let p = run_loaded_point(
        &mut probe,
        &mut [],
        lvl(0, 0),
        LoadKind::Read,
        LoadedRun {
            warmup: Duration::ZERO,
            duration: Duration::from_millis(20),
            first_touch: true,
        },
        &|_| {},
    )
    .unwrap();
    assert_eq!(p.bandwidth_bytes_per_s, 0.0);
    let mut a = vec![0usize; 1 << 10];
    let e = run_loaded_point(
        &mut probe,
        &mut [&mut a],
        lvl(2, 0),
        LoadKind::Read,
        LoadedRun {
            warmup: Duration::ZERO,
            duration: Duration::from_millis(1),
            first_touch: true,
        },
        &|_| {},
    );
    assert!(matches!(e, Err(ServiceError::BadConfig(_))));
}

//! The start gate the closed loop and the loaded-latency threads wait at
//! (`hwsurvey_engine::gate::StartGate`): waiting costs no CPU.

use hwsurvey_engine::gate::StartGate;

/// The bug the gate fixed: waiting workers burned the CPUs. 64 workers wait 300 ms at a
/// closed gate; the CPU time each worker's own thread spent from its arrival to its release
/// (CLOCK_THREAD_CPUTIME_ID), summed over the 64, stays near zero. With the old `yield_now`
/// loop it was about the wall time x the CPUs (600 ms on 2 CPUs). Per thread, not the
/// process's getrusage: the other tests of this binary run beside it.
#[cfg(feature = "sys")]
#[test]
fn waiting_workers_use_no_cpu_time() {
    use nix::time::{clock_gettime, ClockId};
    fn thread_cpu_s() -> f64 {
        let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).expect("clock_gettime");
        t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9
    }
    let gate = StartGate::new();
    let used: f64 = std::thread::scope(|s| {
        let workers: Vec<_> = (0..64)
            .map(|_| {
                s.spawn(|| {
                    let before = thread_cpu_s();
                    gate.arrive_and_wait();
                    thread_cpu_s() - before
                })
            })
            .collect();
        gate.wait_for_arrivals(64);
        std::thread::sleep(std::time::Duration::from_millis(300));
        gate.open();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    assert!(
        used < 0.05,
        "64 workers asleep at the gate used {used:.3} s of CPU in 0.3 s"
    );
}

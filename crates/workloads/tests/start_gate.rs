//! The start gate the closed loop and the loaded-latency threads wait at
//! (`hwsurvey_engine::gate::StartGate`): waiting costs no CPU (issue 13).

use hwsurvey_engine::gate::StartGate;

/// The bug the gate fixed: waiting workers burned the CPUs. 64 workers wait 300 ms at a
/// closed gate; the process's CPU time over that wait (getrusage) stays near zero. With the
/// old `yield_now` loop it was about the wall time x the CPUs (600 ms on 2 CPUs).
#[cfg(feature = "sys")]
#[test]
fn waiting_workers_use_no_cpu_time() {
    use nix::sys::resource::{getrusage, UsageWho};
    fn cpu_s() -> f64 {
        let u = getrusage(UsageWho::RUSAGE_SELF).expect("getrusage");
        let t = |v: nix::sys::time::TimeVal| v.tv_sec() as f64 + v.tv_usec() as f64 * 1e-6;
        t(u.user_time()) + t(u.system_time())
    }
    let gate = StartGate::new();
    std::thread::scope(|s| {
        for _ in 0..64 {
            s.spawn(|| gate.arrive_and_wait());
        }
        gate.wait_for_arrivals(64);
        let before = cpu_s();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let used = cpu_s() - before;
        gate.open();
        assert!(
            used < 0.05,
            "64 workers asleep at the gate used {used:.3} s of CPU in 0.3 s"
        );
    });
}

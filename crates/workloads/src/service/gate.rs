//! The start gate of a multi-threaded point: worker threads arrive and *sleep* until the
//! coordinator opens the gate, instead of spinning on a flag.
//!
//! Why it matters (issue 13): the closed loop and the loaded-latency threads used to wait for
//! the start by `yield_now` in a loop. With N threads started one after another, each new
//! thread competed for the CPUs with every thread already spinning, so starting N threads cost
//! O(N^2) CPU time. On this 2-CPU VM, 512 clients took 3-6 s to start; in a 16-vCPU guest on 2
//! host cores, 630 s (the point's measured window is 1 s). A thread asleep on a condition
//! variable costs nothing until the gate opens.
//!
//! Arrivals wake only the coordinator (one waiter on its own condition variable); the opening
//! wakes every worker once.

use std::sync::{Condvar, Mutex, MutexGuard};

/// A one-shot start gate for `started` threads and one coordinator.
#[derive(Debug, Default)]
pub struct StartGate {
    state: Mutex<GateState>,
    arrivals: Condvar,
    opened: Condvar,
}

#[derive(Debug, Default)]
struct GateState {
    arrived: usize,
    open: bool,
}

impl StartGate {
    /// A closed gate with no arrivals.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        // A worker that panicked while holding the lock leaves the counts intact.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A worker: counts itself as arrived and sleeps until [`StartGate::open`].
    pub fn arrive_and_wait(&self) {
        let mut s = self.lock();
        s.arrived += 1;
        self.arrivals.notify_one();
        while !s.open {
            s = self.opened.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// The coordinator: sleeps until `n` workers have arrived.
    pub fn wait_for_arrivals(&self, n: usize) {
        let mut s = self.lock();
        while s.arrived < n {
            s = self.arrivals.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Opens the gate: every worker waiting, and every worker arriving later, goes on.
    pub fn open(&self) {
        self.lock().open = true;
        self.opened.notify_all();
    }

    /// Workers that have arrived so far.
    pub fn arrived(&self) -> usize {
        self.lock().arrived
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn no_worker_passes_before_the_gate_opens_and_all_pass_after() {
        let gate = StartGate::new();
        let passed = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..64 {
                s.spawn(|| {
                    gate.arrive_and_wait();
                    passed.fetch_add(1, Ordering::SeqCst);
                });
            }
            gate.wait_for_arrivals(64);
            assert_eq!(gate.arrived(), 64);
            // every worker has arrived and is asleep at the gate
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert_eq!(passed.load(Ordering::SeqCst), 0);
            gate.open();
        });
        assert_eq!(passed.load(Ordering::SeqCst), 64);
    }

    /// The bug this gate fixes: waiting workers burned the CPUs. 64 workers wait 300 ms at a
    /// closed gate; the process's CPU time over that wait (getrusage) stays near zero. With
    /// the old `yield_now` loop it was about the wall time x the CPUs (600 ms on 2 CPUs).
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

    #[test]
    fn a_worker_arriving_after_the_opening_does_not_wait() {
        let gate = StartGate::new();
        gate.open();
        gate.arrive_and_wait();
        assert_eq!(gate.arrived(), 1);
    }
}

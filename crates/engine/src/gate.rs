//! A start gate for many threads: workers block in [`StartGate::wait`] or
//! [`StartGate::arrive_and_wait`] on a condition variable, not polling, so thousands of waiting
//! threads cost no CPU, until the spawning thread calls [`StartGate::open`], or
//! [`StartGate::abort`] when a spawn failed or the run was cancelled. Unlike a `Barrier` for
//! all threads, it never waits for threads that were not spawned.
//!
//! Why waiting must not poll (issue 13): the closed loop of `service.point_select` and the
//! loaded-latency threads used to wait for their start by `yield_now` in a loop. With N
//! threads started one after another, each new thread competed for the CPUs with every thread
//! already spinning, so starting N threads cost O(N^2) CPU time: 512 clients took 3-6 s to
//! start on this 2-CPU VM, and 630 s in a 16-vCPU guest on 2 host cores, for a 1 s window.
//!
//! Arrivals ([`StartGate::arrive_and_wait`]) wake only the coordinator waiting in
//! [`StartGate::wait_for_arrivals`], on a condition variable of its own; the opening wakes
//! every worker once.

use std::sync::{Condvar, Mutex, MutexGuard};

/// The gate (module doc).
#[derive(Debug, Default)]
pub struct StartGate {
    state: Mutex<GateState>,
    changed: Condvar,
    arrivals: Condvar,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct GateState {
    phase: GatePhase,
    arrived: usize,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum GatePhase {
    #[default]
    Closed,
    Open,
    Aborted,
}

impl StartGate {
    /// A closed gate with no arrivals.
    pub fn new() -> StartGate {
        StartGate::default()
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        // a worker that panicked while holding the lock leaves the state intact
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Blocks while the gate is closed; `true` when it opened, `false` when aborted.
    pub fn wait(&self) -> bool {
        let mut s = self.lock();
        while s.phase == GatePhase::Closed {
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.phase == GatePhase::Open
    }

    /// A worker: counts itself as arrived (waking [`StartGate::wait_for_arrivals`]), then
    /// [`StartGate::wait`]s.
    pub fn arrive_and_wait(&self) -> bool {
        {
            let mut s = self.lock();
            s.arrived += 1;
        }
        self.arrivals.notify_one();
        self.wait()
    }

    /// The coordinator: sleeps until `n` workers have arrived.
    pub fn wait_for_arrivals(&self, n: usize) {
        let mut s = self.lock();
        while s.arrived < n {
            s = self.arrivals.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Workers that have arrived so far.
    pub fn arrived(&self) -> usize {
        self.lock().arrived
    }

    /// Lets every waiting worker start, and every later arrival pass.
    pub fn open(&self) {
        self.set(GatePhase::Open);
    }

    /// Sends every waiting worker home without starting.
    pub fn abort(&self) {
        self.set(GatePhase::Aborted);
    }

    fn set(&self, to: GatePhase) {
        self.lock().phase = to;
        self.changed.notify_all();
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
                    assert!(gate.arrive_and_wait());
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

    #[test]
    fn late_arrivals_pass_an_open_gate_and_an_aborted_gate_says_so() {
        let gate = StartGate::new();
        gate.open();
        assert!(gate.arrive_and_wait());
        assert_eq!(gate.arrived(), 1);
        let gate = StartGate::new();
        gate.abort();
        assert!(!gate.arrive_and_wait());
        assert!(!gate.wait());
    }
}

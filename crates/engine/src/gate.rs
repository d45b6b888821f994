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

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::Thread;

const CLOSED: u8 = 0;
const OPEN: u8 = 1;
const ABORTED: u8 = 2;

/// The gate (module doc). Waiting workers are parked one by one and unparked one by one: a
/// condition variable's `notify_all` would wake them all onto one mutex, and with more
/// threads than CPUs a holder taken off its CPU makes every other wait for its next slice.
#[derive(Debug, Default)]
pub struct StartGate {
    phase: AtomicU8,
    arrived: AtomicUsize,
    parked: Mutex<Vec<Thread>>,
    arrival_lock: Mutex<()>,
    arrivals: Condvar,
}

impl StartGate {
    /// A closed gate with no arrivals.
    pub fn new() -> StartGate {
        StartGate::default()
    }

    fn parked(&self) -> MutexGuard<'_, Vec<Thread>> {
        // a worker that panicked while holding the lock leaves the list intact
        self.parked.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Blocks while the gate is closed; `true` when it opened, `false` when aborted.
    pub fn wait(&self) -> bool {
        if self.phase.load(Ordering::Acquire) == CLOSED {
            self.parked().push(std::thread::current());
            // parked until open() or abort() unparks this thread (spurious wake-ups loop)
            while self.phase.load(Ordering::Acquire) == CLOSED {
                std::thread::park();
            }
        }
        self.phase.load(Ordering::Acquire) == OPEN
    }

    /// A worker: counts itself as arrived (waking [`StartGate::wait_for_arrivals`]), then
    /// [`StartGate::wait`]s.
    pub fn arrive_and_wait(&self) -> bool {
        {
            let _g = self.arrival_lock.lock().unwrap_or_else(|p| p.into_inner());
            self.arrived.fetch_add(1, Ordering::AcqRel);
        }
        self.arrivals.notify_one();
        self.wait()
    }

    /// The coordinator: sleeps until `n` workers have arrived.
    pub fn wait_for_arrivals(&self, n: usize) {
        let mut g = self.arrival_lock.lock().unwrap_or_else(|p| p.into_inner());
        while self.arrived.load(Ordering::Acquire) < n {
            g = self.arrivals.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Workers that have arrived so far.
    pub fn arrived(&self) -> usize {
        self.arrived.load(Ordering::Acquire)
    }

    /// Lets every waiting worker start, and every later arrival pass.
    pub fn open(&self) {
        self.set(OPEN);
    }

    /// Sends every waiting worker home without starting.
    pub fn abort(&self) {
        self.set(ABORTED);
    }

    fn set(&self, to: u8) {
        self.phase.store(to, Ordering::Release);
        let waiting = std::mem::take(&mut *self.parked());
        for t in waiting {
            t.unpark();
        }
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

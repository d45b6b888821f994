//! Time seam of the drivers: a monotonic nanosecond clock that can also wait until an instant.
//! [`MonotonicClock`] is the real one (`std::time::Instant`, CLOCK_MONOTONIC on Linux);
//! [`ManualClock`] is moved by hand so tests of the rate limiter are exact and cannot flake.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A monotonic clock in nanoseconds since an arbitrary origin.
pub trait Clock: Sync {
    /// Now, in ns since the clock's origin.
    fn now_ns(&self) -> u64;
    /// Returns at or after `t_ns` (immediately when it has passed).
    fn wait_until_ns(&self, t_ns: u64);
    /// As [`Clock::wait_until_ns`], and returns the longest gap (ns) between two successive
    /// readings of the clock while it spun: time the waiting thread was off its CPU
    /// (descheduled, or its virtual CPU stolen by the host) when it should have been ready to
    /// send. 0 for clocks that do not spin.
    fn wait_until_observed_ns(&self, t_ns: u64) -> u64 {
        self.wait_until_ns(t_ns);
        0
    }
}

/// The real clock: `Instant` since construction. A wait sleeps while more than
/// [`MonotonicClock::SLEEP_ABOVE_NS`] remain (waking [`MonotonicClock::SPIN_NS`] early), then
/// spins: a sleeping client's late wake-up (timer slack, scheduling delay of a busy machine,
/// often milliseconds) would otherwise count as service latency in an open-loop run, where
/// latency starts at the intended send time. Open-loop workers number at most the usable CPUs,
/// so spinning takes no CPU from the service that another client would need.
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    origin: Instant,
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl MonotonicClock {
    /// Waits longer than this sleep first (5 ms).
    pub const SLEEP_ABOVE_NS: u64 = 5_000_000;
    /// How long before the target a sleeping wait wakes up to spin (2 ms).
    pub const SPIN_NS: u64 = 2_000_000;

    /// A clock whose origin is now.
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
        }
    }
}

impl Clock for MonotonicClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    fn wait_until_ns(&self, t_ns: u64) {
        loop {
            let now = self.now_ns();
            if now >= t_ns {
                return;
            }
            let left = t_ns - now;
            if left > Self::SLEEP_ABOVE_NS {
                std::thread::sleep(Duration::from_nanos(left - Self::SPIN_NS));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    fn wait_until_observed_ns(&self, t_ns: u64) -> u64 {
        let mut gap = 0;
        let mut prev = self.now_ns();
        while prev < t_ns {
            if t_ns - prev > Self::SLEEP_ABOVE_NS {
                // A sleep's length is asked for, not a stall.
                std::thread::sleep(Duration::from_nanos(t_ns - prev - Self::SPIN_NS));
                prev = self.now_ns();
                continue;
            }
            std::hint::spin_loop();
            let now = self.now_ns();
            gap = gap.max(now - prev);
            prev = now;
        }
        gap
    }
}

/// A clock moved only by [`ManualClock::advance_ns`] and by waits (which jump to their target).
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicU64,
}

impl ManualClock {
    /// A clock at `t_ns`.
    pub fn at(t_ns: u64) -> Self {
        Self {
            now: AtomicU64::new(t_ns),
        }
    }

    /// Moves the clock forward by `d_ns` (a simulated service time or stall).
    pub fn advance_ns(&self, d_ns: u64) {
        self.now.fetch_add(d_ns, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ns(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    fn wait_until_ns(&self, t_ns: u64) {
        self.now.fetch_max(t_ns, Ordering::SeqCst);
    }
}

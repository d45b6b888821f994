//! The hardware watch's clock check ([`AddChain`], `hwsurvey_engine::watch::ClockCheck`):
//! the `cpu.clock` family's dependent add chain ([`crate::clock`]) at 1 thread, pinned to one
//! CPU, at the run's start and end, so that a clock that fell during the run (throttling
//! where no counter shows it: VMs, arm64) is seen.

use hwsurvey_engine::affinity::{pin_current_thread, PinStatus};
use hwsurvey_engine::watch::ClockCheck;
use hwsurvey_probe::watch::ClockReading;

use crate::clock;

/// The add chain as the watch's clock.
pub struct AddChain;

impl ClockCheck for AddChain {
    /// Calibrates a chain of about `seconds` (the calibration is its warm-up) and times it on
    /// a thread pinned to `cpu`; the figure is adds per second of the thread's own CPU time.
    fn measure(&self, cpu: u32, seconds: f64) -> Result<ClockReading, String> {
        let handle = std::thread::Builder::new()
            .name("hwsurvey-clock".into())
            .spawn(move || -> Result<ClockReading, String> {
                if let PinStatus::Unpinned { reason, .. } = pin_current_thread(cpu) {
                    return Err(format!("could not pin to CPU {cpu}: {reason}"));
                }
                let blocks = clock::calibrate(seconds).map_err(|e| e.to_string())?;
                let run = clock::timed(blocks).map_err(|e| e.to_string())?;
                let method = clock::method();
                Ok(ClockReading {
                    cpu,
                    clock_hz: run.on_cpu_hz(),
                    seconds: run.elapsed_s,
                    method: method.name.to_string(),
                    reliable: method.reliable,
                })
            })
            .map_err(|e| format!("could not start the clock thread: {e}"))?;
        handle
            .join()
            .map_err(|_| "the clock thread panicked".to_string())?
    }
}

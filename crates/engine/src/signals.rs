//! Stop signals: the flag a run polls, the handler that sets it, and the cleanups a forced
//! exit (a second signal) runs. The engine names no family: a family that leaves something
//! behind on a forced exit (the storage family's test files) registers its own cleanup with
//! [`on_forced_exit`].

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;

/// Set by the signal handler (SIGINT, SIGTERM, SIGHUP); the run stops after the current
/// sample and writes the file.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Number of the first stop signal received (0: none yet).
pub static INTERRUPT_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// How the run was stopped, for skip reasons: `"Ctrl-C (SIGINT)"`, `"SIGTERM"`, `"SIGHUP"`, or
/// `"signal"` when no handler recorded one (tests with their own cancel flag).
pub fn interrupt_cause() -> &'static str {
    signal_name(INTERRUPT_SIGNAL.load(Ordering::SeqCst))
}

/// Exit status of an interrupted run: 128 + the number of the first stop signal, as a shell
/// reports a process stopped by it (130 for SIGINT, 143 for SIGTERM); 130 when no handler
/// recorded one.
pub fn interrupt_exit_status() -> u8 {
    match INTERRUPT_SIGNAL.load(Ordering::SeqCst) {
        signo @ 1..=127 => 128 + signo as u8,
        _ => 130,
    }
}

/// Name of a stop signal number (Linux numbering: 1 SIGHUP, 2 SIGINT, 15 SIGTERM).
pub fn signal_name(signo: i32) -> &'static str {
    match signo {
        1 => "SIGHUP",
        2 => "Ctrl-C (SIGINT)",
        15 => "SIGTERM",
        _ => "signal",
    }
}

/// Installs handling of SIGINT (Ctrl-C), SIGTERM and SIGHUP: the first one sets
/// [`INTERRUPTED`] (the run finishes writing, status "interrupted", test files removed by their
/// guards); a second one runs the cleanups registered with [`on_forced_exit`] (the storage
/// family's live test files) and exits with 128 + the signal number.
///
/// The three signals are blocked in the calling thread (and so in every thread it spawns
/// afterwards) and taken by a dedicated thread with `sigwait`, so the cleanup runs as
/// ordinary code, not in a signal handler. Call it early, before other threads are started.
/// Returns false when it could not be installed (std-only build: a signal then kills the
/// process, and the file keeps the finished tests).
#[cfg(feature = "sys")]
pub fn install_sigint_handler() -> bool {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        set.add(s);
    }
    if set.thread_block().is_err() {
        return false;
    }
    let spawned = std::thread::Builder::new()
        .name("hwsurvey-signals".into())
        .spawn(move || loop {
            let Ok(sig) = set.wait() else { continue };
            if INTERRUPTED.swap(true, Ordering::SeqCst) {
                run_forced_exit_cleanups();
                std::process::exit(128 + sig as i32);
            }
            INTERRUPT_SIGNAL.store(sig as i32, Ordering::SeqCst);
        });
    if spawned.is_err() {
        let _ = set.thread_unblock();
        return false;
    }
    true
}

/// Std-only build: no handler.
#[cfg(not(feature = "sys"))]
pub fn install_sigint_handler() -> bool {
    false
}

/// Cleanups for a forced exit, in registration order.
static FORCED_EXIT_CLEANUPS: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

/// Registers `cleanup` to run when a second stop signal ends the process (after the first one
/// the run stops normally and guards clean up). Registering the same function again does
/// nothing. The cleanup runs in the signal thread as ordinary code, not in a signal handler.
pub fn on_forced_exit(cleanup: fn()) {
    if let Ok(mut v) = FORCED_EXIT_CLEANUPS.lock() {
        if !v.iter().any(|f| std::ptr::fn_addr_eq(*f, cleanup)) {
            v.push(cleanup);
        }
    }
}

/// Runs every cleanup registered with [`on_forced_exit`], once each (they are taken out of the
/// list); what a forced exit does before `exit`, and what a test calls to check its cleanup.
pub fn run_forced_exit_cleanups() {
    let cleanups = FORCED_EXIT_CLEANUPS
        .lock()
        .map(|mut v| std::mem::take(&mut *v))
        .unwrap_or_default();
    for cleanup in cleanups {
        cleanup();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    static RUNS: AtomicUsize = AtomicUsize::new(0);

    fn count() {
        RUNS.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn a_cleanup_registered_twice_runs_once() {
        on_forced_exit(count);
        on_forced_exit(count);
        run_forced_exit_cleanups();
        assert_eq!(RUNS.load(Ordering::SeqCst), 1);
        // taken out of the list: a second call runs nothing
        run_forced_exit_cleanups();
        assert_eq!(RUNS.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(2), "Ctrl-C (SIGINT)");
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(1), "SIGHUP");
        assert_eq!(signal_name(9), "signal");
    }
}

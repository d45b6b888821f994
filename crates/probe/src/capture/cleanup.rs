//! Temporary folders that do not outlive the process: removed when dropped, and when a
//! terminating signal ends it ([`install_exit_on_signal`]).
//!
//! Every signal whose default action ends the process and that can be sent to it from
//! outside is taken: SIGHUP, SIGINT, SIGQUIT, SIGABRT, SIGUSR1, SIGUSR2, SIGALRM, SIGTERM,
//! SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR (those the architecture
//! has) and the real-time signals SIGRTMIN..SIGRTMAX ([`TERMINATING_SIGNALS`] and
//! [`realtime_signals`]). Left to their default are SIGKILL and SIGSTOP (which cannot be
//! caught), the signals that stop or are ignored by default, SIGPIPE (ignored by Rust
//! programs), and the fault signals SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP and SIGSYS, which
//! the kernel delivers to the faulting thread even when blocked: a process killed by one of
//! these, or by SIGKILL, leaves its folder (`$TMPDIR/.tmp*`, private to the user).

use std::path::{Path, PathBuf};

/// Temporary folders to remove when a signal ends the process ([`TempFolder`]); held by the
/// unpacking code for each entry it writes, so the removal never races a write.
static ON_SIGNAL: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Holds the registry for as long as the guard lives: a signal's removal waits until the
/// write in progress is done (the unpacking takes it for each entry).
pub(crate) fn writing() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    ON_SIGNAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes every folder registered by a live [`TempFolder`] and keeps the registry locked
/// for the rest of the process (nothing is written into them afterwards): what the signal
/// thread runs before it exits, and what a test calls to check the removal. Returns the
/// folders removed.
pub fn remove_registered() -> Vec<PathBuf> {
    let guard = writing();
    for dir in guard.iter() {
        // a file being created meanwhile can make one pass fail with ENOTEMPTY
        for _ in 0..3 {
            if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
                break;
            }
        }
    }
    let removed = guard.clone();
    std::mem::forget(guard);
    removed
}

/// A temporary folder that is removed when dropped and when a signal ends the process
/// (after [`install_exit_on_signal`]).
pub struct TempFolder(tempfile::TempDir);

impl TempFolder {
    /// A fresh private (0700) folder in the temporary directory (`$TMPDIR`, else `/tmp`);
    /// installs [`install_exit_on_signal`] on its first use.
    ///
    /// # Errors
    /// The OS error when it cannot be created.
    pub fn new() -> std::io::Result<TempFolder> {
        install_exit_on_signal();
        // created and registered under the lock: a signal in between waits for both
        let mut registered = writing();
        let dir = tempfile::tempdir()?;
        registered.push(dir.path().to_path_buf());
        Ok(TempFolder(dir))
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        // removed and forgotten under the lock: a signal meanwhile waits, then finds it gone
        // (TempDir's own drop then has nothing left to remove)
        let path = self.0.path().to_path_buf();
        let mut registered = writing();
        let _ = std::fs::remove_dir_all(&path);
        registered.retain(|d| *d != path);
    }
}

/// The terminating signals taken besides the real-time ones, by their Linux names (see the
/// module docs); those the target lacks (SIGSTKFLT on sparc64) are left out.
pub const TERMINATING_SIGNALS: &[&str] = &[
    "SIGHUP",
    "SIGINT",
    "SIGQUIT",
    "SIGABRT",
    "SIGUSR1",
    "SIGUSR2",
    "SIGALRM",
    "SIGTERM",
    "SIGSTKFLT",
    "SIGXCPU",
    "SIGXFSZ",
    "SIGVTALRM",
    "SIGPROF",
    "SIGIO",
    "SIGPWR",
    "SIGEMT",
];

/// The signal numbers taken on this target: [`TERMINATING_SIGNALS`] it has, then
/// [`realtime_signals`]. Empty in a build without signal handling.
pub fn taken_signals() -> Vec<i32> {
    #[cfg(feature = "sys")]
    {
        use nix::sys::signal::Signal;
        let mut v: Vec<i32> = Signal::iterator()
            .filter(|s| TERMINATING_SIGNALS.contains(&s.as_str()))
            .map(|s| s as i32)
            .collect();
        v.extend(realtime_signals());
        v
    }
    #[cfg(not(feature = "sys"))]
    Vec::new()
}

/// The real-time signals SIGRTMIN..=SIGRTMAX as the C library gives them (glibc keeps the
/// first two or three for its threads: SIGRTMIN is 34 on Linux with glibc).
pub fn realtime_signals() -> std::ops::RangeInclusive<i32> {
    #[cfg(feature = "sys")]
    {
        nix::libc::SIGRTMIN()..=nix::libc::SIGRTMAX()
    }
    #[cfg(not(feature = "sys"))]
    #[allow(clippy::reversed_empty_ranges)]
    {
        1..=0
    }
}

/// Makes every terminating signal ([`taken_signals`]) end the process with status 128 + its
/// number after removing the folders of live [`TempFolder`]s ([`remove_registered`]), for a
/// command that has nothing to finish writing (`probe`, `qualify`, `snapshot`,
/// `run --plan-only` on a `--root` archive). Idempotent: only the first call installs.
///
/// The signals are blocked in the calling thread (and so in every thread it spawns
/// afterwards; a spawned command gets the default mask back, as `std::process::Command`
/// resets it) and taken by a dedicated thread with `sigwait`, so the removal runs as ordinary
/// code, not in a signal handler. Call it early, from the main thread, before other threads
/// are started ([`TempFolder::new`] calls it). Returns false when it is not installed (a
/// build without the `sys` feature: a signal then ends the process as by default, and the
/// folder stays).
pub fn install_exit_on_signal() -> bool {
    static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *INSTALLED.get_or_init(install)
}

#[cfg(feature = "sys")]
fn signal_set() -> nix::libc::sigset_t {
    use nix::libc;
    // SAFETY: sigemptyset initialises the set; sigaddset only writes into it (an invalid
    // number is refused with EINVAL, leaving the set as it was).
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in taken_signals() {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

#[cfg(feature = "sys")]
fn install() -> bool {
    use nix::libc;
    let set = signal_set();
    // SAFETY: a valid, initialised set; the old mask is not asked for.
    if unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) } != 0 {
        return false;
    }
    let spawned = std::thread::Builder::new()
        .name("hwsurvey-cleanup".into())
        .spawn(move || loop {
            let set = signal_set();
            let mut sig: libc::c_int = 0;
            // SAFETY: a valid set and a place for the number.
            if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
                continue;
            }
            remove_registered();
            std::process::exit(128 + sig);
        });
    if spawned.is_err() {
        // SAFETY: as above.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
        return false;
    }
    true
}

#[cfg(not(feature = "sys"))]
fn install() -> bool {
    false
}

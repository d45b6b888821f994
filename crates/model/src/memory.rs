//! Memory this process freed, given back to the system.
//!
//! glibc's allocator keeps what a thread freed in that thread's arena: a `fleet` whose two
//! loading threads each parsed a 66 MB result file one after the other held 2.2 GB at its
//! peak (1.2 GB with one arena), though only one file was alive at a time.

/// Gives back to the system what the allocator holds freed (glibc `malloc_trim(0)`, every
/// arena); nothing in a build without the `sys` feature or on another C library. Costs a
/// walk over the arenas: for after a large input is dropped, not for every allocation.
pub fn give_back_freed() {
    #[cfg(all(feature = "sys", target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's arenas to the system.
    unsafe {
        nix::libc::malloc_trim(0);
    }
}

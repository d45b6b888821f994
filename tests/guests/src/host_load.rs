//! The host's CPU time around a guest run (`/proc/stat`, `/proc/self/stat`): how busy the host
//! was while a guest measured, and what the guest's qemu itself took.

use std::fs;

/// Clock ticks per second of `/proc/stat` and `/proc/<pid>/stat` (USER_HZ: 100 on every
/// architecture these guests run on).
const USER_HZ: f64 = 100.0;

/// The host's busy CPU time (s: every field of `/proc/stat`'s `cpu` line but idle and iowait;
/// guest time is inside user) and its CPUs (the `cpuN` lines).
pub(crate) fn host_cpu_busy_s() -> Option<(f64, usize)> {
    proc_stat_busy_s(&fs::read_to_string("/proc/stat").ok()?)
}

/// [`host_cpu_busy_s`] of a `/proc/stat` text.
pub fn proc_stat_busy_s(text: &str) -> Option<(f64, usize)> {
    let first = text.lines().next()?.strip_prefix("cpu ")?;
    let f: Vec<u64> = first
        .split_whitespace()
        .map(|w| w.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice]
    let busy: u64 = [0, 1, 2, 5, 6, 7].iter().filter_map(|&i| f.get(i)).sum();
    let cpus = text
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    Some((busy as f64 / USER_HZ, cpus))
}

/// CPU time (s) of this process's children that it has waited for (`/proc/self/stat` fields
/// 16 and 17, cutime and cstime, counted after the command name's closing parenthesis).
pub(crate) fn reaped_children_cpu_s() -> Option<f64> {
    children_cpu_s(&fs::read_to_string("/proc/self/stat").ok()?)
}

/// [`reaped_children_cpu_s`] of a `/proc/<pid>/stat` text.
pub fn children_cpu_s(text: &str) -> Option<f64> {
    let rest = &text[text.rfind(')')? + 1..];
    // fields from 3 (state) on: cutime is field 16, cstime 17
    let f: Vec<&str> = rest.split_whitespace().collect();
    let cutime: f64 = f.get(16 - 3)?.parse().ok()?;
    let cstime: f64 = f.get(17 - 3)?.parse().ok()?;
    Some((cutime + cstime) / USER_HZ)
}

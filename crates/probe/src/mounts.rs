//! The readers of `/proc/self/mountinfo` and `/proc/swaps` under a [`SysRoot`]
//! ([`read_mount_entries`], [`read_mountinfo`], [`read_swaps`]); the parsers and types are
//! `hwsurvey_machine::mounts`, re-exported here. The storage family reads through them which
//! filesystem a test directory is on and whether a raw device is mounted or in use as swap;
//! the cgroup readers ([`crate::cgroup`]) where the hierarchies are mounted.
//!
//! [`read_every_namespace`] reads the mount table of every mount namespace of the machine
//! (`/proc/PID/task/TID/ns/mnt` of every task, one `/proc/PID/task/TID/mountinfo` per
//! namespace): a file system mounted only in a container, or in a namespace made by
//! `unshare -m`, is not in this process's table, yet sits on a device all the same.

use std::collections::BTreeSet;

use crate::block_use::{parse_ns_link, parse_task_stat, PROC_PID_INIT_INO};
use crate::{ProbeError, SysRoot};

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::mounts::*;

/// Reads and parses [`MOUNTINFO_PATH`] under `root`.
///
/// # Errors
/// [`ProbeError`]: the file cannot be read, or a line is not in the kernel's format
/// ([`ProbeError::Invalid`] naming the line number and the line).
pub fn read_mount_entries(root: &SysRoot) -> Result<Vec<MountEntry>, ProbeError> {
    let text = root.read(MOUNTINFO_PATH)?;
    parse_mountinfo(&text).map_err(|e| {
        ProbeError::invalid(
            MOUNTINFO_PATH,
            format!(
                "line {} as `ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - FSTYPE SOURCE SUPEROPTS`",
                e.line_no
            ),
            &e.line,
        )
    })
}

/// [`read_mount_entries`], its error as a sentence for a refusal
/// (`"/proc/self/mountinfo: permission denied"`).
pub fn read_mountinfo(root: &SysRoot) -> Result<Vec<MountEntry>, String> {
    read_mount_entries(root).map_err(|e| e.to_string())
}

/// The filesystem type mounted from device (`major`, `minor`), the last such mount of
/// [`MOUNTINFO_PATH`] under `root` (the one on top); `None` when it cannot be read or no mount
/// has that device.
pub fn fs_type_of_device(root: &SysRoot, dev: (u32, u32)) -> Option<String> {
    read_mountinfo(root)
        .ok()?
        .into_iter()
        .rev()
        .find(|e| (e.major, e.minor) == dev)
        .map(|e| e.fs_type)
}

/// Device paths of the active swap areas in [`SWAPS_PATH`] under `root`; empty when it cannot
/// be read (no swap support).
pub fn read_swaps(root: &SysRoot) -> Vec<String> {
    root.read(SWAPS_PATH)
        .map(|t| parse_swaps(&t))
        .unwrap_or_default()
}

/// Why the mount tables of every mount namespace could not all be read: a mount there may sit
/// on any device, so a raw device is not proven free.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamespaceError {
    /// A file of /proc could not be read (permission denied, a line not in the kernel's
    /// format) while its task still runs.
    #[error("{path}: {detail}")]
    Unreadable {
        /// The /proc path.
        path: String,
        /// The error, or what was expected and what was found.
        detail: String,
    },
    /// This process runs in a PID namespace of its own (a container): processes outside it,
    /// and the mount namespaces they are in, are not in its /proc.
    #[error("hwsurvey runs in a PID namespace of its own ({ns}, not the initial pid:[{init}]): the processes outside it, and their mount namespaces, cannot be seen", init = PROC_PID_INIT_INO)]
    NotInitialPidNamespace {
        /// This process's PID namespace, `pid:[4026532180]`.
        ns: String,
    },
    /// /proc is mounted with `hidepid` and this user is not root: other users' processes,
    /// and their mount namespaces, are hidden.
    #[error("/proc is mounted with {option} and hwsurvey does not run as root: other users' processes, and their mount namespaces, are hidden")]
    HiddenProcesses {
        /// The option, `hidepid=invisible`.
        option: String,
    },
    /// A mount namespace is kept by a bind mount of its `ns/mnt` file with no process in it:
    /// its mounts cannot be read from /proc.
    #[error("mount namespace mnt:[{ns}] is kept at {at} with no process in it, so its mounts cannot be read")]
    KeptNamespace {
        /// Its inode number.
        ns: u64,
        /// Where the namespace file is bind-mounted, as [`MountEntry::shown`].
        at: String,
    },
}

/// The `hidepid` option of the /proc mount in `own` (this process's table) that hides other
/// users' processes from `euid` (`hidepid=1`, `2`, `invisible`, `noaccess`); `None` for root,
/// for `hidepid=0`/`off`, or without the option.
pub fn hiding_option(own: &[MountEntry], euid: Option<u32>) -> Option<String> {
    if euid == Some(0) {
        return None;
    }
    own.iter()
        .rev()
        .filter(|m| m.fs_type == "proc" && m.mount_point == "/proc")
        .flat_map(|m| m.super_options.split(','))
        .find(|o| {
            o.strip_prefix("hidepid=")
                .is_some_and(|v| v != "0" && v != "off")
        })
        .map(str::to_string)
}

/// The effective user id of this process ([`crate::process::ProcStatus::effective_uid`]).
fn effective_uid(root: &SysRoot) -> Option<u32> {
    crate::process::read_status(root).ok()?.effective_uid
}

/// Whether task `tid` of process `pid` is gone or exiting (its `/proc/PID/task/TID` is
/// missing, or its `stat` says zombie, dead or `PF_EXITING`): such a task holds no mount
/// namespace, and its files fail to read for that reason alone.
fn gone_or_exiting(root: &SysRoot, pid: &str, tid: &str) -> bool {
    let dir = format!("/proc/{pid}/task/{tid}");
    match root.read(&format!("{dir}/stat")) {
        Ok(text) => parse_task_stat(&text).is_none_or(|s| s.is_exiting()),
        Err(_) => !root.exists(&dir),
    }
}

/// Reads the mount table of every mount namespace on the machine: this process's own
/// (`/proc/self/mountinfo`, entries without [`MountEntry::namespace`]) first, then the
/// `mountinfo` of every task of every process in /proc whose view could differ, merged by
/// mount ID (unique over all namespaces). A task's view is known by its mount namespace
/// (`ns/mnt`, `mnt:[N]`) and its root (`root` link): one table is read per such pair; a task
/// whose links cannot be read (they need `PTRACE_MODE_READ`, which even root may lack for a
/// protected process) has its table read all the same (`mountinfo` needs no such right). The
/// other namespaces' entries carry `namespace` (`mount namespace mnt:[N] of pid P (COMM)`, or
/// `the mount namespace of pid P (COMM)` when its link could not be read); an entry equal to
/// one already listed (the same device, root, mount point, type and source: the copies a
/// namespace made by `unshare -m` starts with) is left out. Tasks that exit meanwhile
/// (missing, zombie, `PF_EXITING`) are passed over.
///
/// Errors ([`NamespaceError`], fail closed): a table of a live task that cannot be read or is
/// not in the kernel's format, a PID namespace other than the initial one, `hidepid` hiding
/// processes from a user other than root, or a mount namespace bind-mounted (`nsfs`) that no
/// process is known to be in. A namespace held only by an open file descriptor, with no process
/// in it and no bind mount, is not seen by any of these.
pub fn read_every_namespace(root: &SysRoot) -> Result<Vec<MountEntry>, NamespaceError> {
    let unreadable = |path: &str, e: crate::ProbeError| NamespaceError::Unreadable {
        path: path.to_string(),
        detail: match e {
            crate::ProbeError::Missing { .. } => "missing".to_string(),
            crate::ProbeError::PermissionDenied { .. } => "permission denied".to_string(),
            crate::ProbeError::Io { message, .. } => message,
            other => other.to_string(),
        },
    };
    let bad = |path: &str, detail: String| NamespaceError::Unreadable {
        path: path.to_string(),
        detail,
    };
    let own_text = root
        .read(MOUNTINFO_PATH)
        .map_err(|e| unreadable(MOUNTINFO_PATH, e))?;
    let mut out = parse_mountinfo(&own_text).map_err(|e| bad(MOUNTINFO_PATH, e.to_string()))?;
    // a link's target, and the namespace it names
    let link_text = |path: &str| -> Result<String, NamespaceError> {
        root.read_link(path)
            .map(|t| t.to_string_lossy().into_owned())
            .map_err(|e| unreadable(path, e))
    };
    let ns_of = |path: &str, kind: &str| -> Result<u64, NamespaceError> {
        let text = link_text(path)?;
        parse_ns_link(&text, kind)
            .ok_or_else(|| bad(path, format!("expected {kind}:[N], got {text:?}")))
    };
    let pid_ns = ns_of("/proc/self/ns/pid", "pid")?;
    if pid_ns != PROC_PID_INIT_INO {
        return Err(NamespaceError::NotInitialPidNamespace {
            ns: format!("pid:[{pid_ns}]"),
        });
    }
    if let Some(option) = hiding_option(&out, effective_uid(root)) {
        return Err(NamespaceError::HiddenProcesses { option });
    }
    let own_ns = ns_of("/proc/self/ns/mnt", "mnt")?;
    let own_root = link_text("/proc/self/root")?;
    let mut ids: BTreeSet<u64> = out.iter().map(|m| m.mount_id).collect();
    // the views read, (namespace, root); the namespaces known by number
    let mut views: BTreeSet<(u64, String)> = BTreeSet::from([(own_ns, own_root)]);
    let mut known: BTreeSet<u64> = BTreeSet::from([own_ns]);
    let mut pids: Vec<(u32, String)> = root
        .list_dir("/proc")
        .map_err(|e| unreadable("/proc", e))?
        .into_iter()
        .filter_map(|n| n.parse::<u32>().ok().map(|p| (p, n)))
        .collect();
    pids.sort();
    for (_, pid) in pids {
        let task_dir = format!("/proc/{pid}/task");
        let tids = match root.list_dir(&task_dir) {
            Ok(t) => t,
            Err(_) if !root.exists(&format!("/proc/{pid}")) => continue,
            Err(e) => return Err(unreadable(&task_dir, e)),
        };
        for tid in tids {
            let dir = format!("{task_dir}/{tid}");
            let view = match (
                ns_of(&format!("{dir}/ns/mnt"), "mnt"),
                link_text(&format!("{dir}/root")),
            ) {
                (Ok(ns), Ok(r)) => Some((ns, r)),
                _ if gone_or_exiting(root, &pid, &tid) => continue,
                _ => None,
            };
            if view.as_ref().is_some_and(|v| views.contains(v)) {
                continue;
            }
            let path = format!("{dir}/mountinfo");
            let text = match root.read(&path) {
                Ok(t) => t,
                Err(_) if gone_or_exiting(root, &pid, &tid) => continue,
                Err(e) => return Err(unreadable(&path, e)),
            };
            let comm = root
                .read_value(&format!("/proc/{pid}/comm"))
                .unwrap_or_else(|_| "?".to_string());
            let namespace = match &view {
                Some((ns, _)) => format!("mount namespace mnt:[{ns}] of pid {pid} ({comm})"),
                None => format!("the mount namespace of pid {pid} ({comm})"),
            };
            for mut m in parse_mountinfo(&text).map_err(|e| bad(&path, e.to_string()))? {
                if !ids.insert(m.mount_id) {
                    continue;
                }
                let copy = out.iter().any(|o| {
                    (o.major, o.minor) == (m.major, m.minor)
                        && o.root == m.root
                        && o.mount_point == m.mount_point
                        && o.fs_type == m.fs_type
                        && o.source == m.source
                });
                if !copy {
                    m.namespace = Some(namespace.clone());
                    out.push(m);
                }
            }
            if let Some(v) = view {
                known.insert(v.0);
                views.insert(v);
            }
        }
    }
    let kept = out.iter().find_map(|m| {
        let ns = (m.fs_type == "nsfs")
            .then(|| parse_ns_link(&m.root, "mnt"))
            .flatten()?;
        (!known.contains(&ns)).then(|| NamespaceError::KeptNamespace { ns, at: m.shown() })
    });
    match kept {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A /proc of processes under a root: `self` is pid 100 in namespace 1; each other task is
    /// (pid, its `ns/mnt` target or `None` when the link cannot be read, its `stat` state, its
    /// mountinfo or `None` when missing).
    fn fake_proc(
        tasks: &[(u32, Option<&str>, char, Option<&str>)],
        own: &str,
        proc_opts: &str,
    ) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let put = |path: &str, text: &str| {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        let link = |path: &str, target: &str| {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(target, p).unwrap();
        };
        link("proc/self", "100");
        put(
            "proc/100/mountinfo",
            &format!("22 27 0:21 / /proc rw - proc proc {proc_opts}\n{own}"),
        );
        put(
            "proc/100/status",
            "Name:\thwsurvey\nUid:\t1000\t1000\t1000\t1000\n",
        );
        link("proc/100/ns/pid", "pid:[4026531836]");
        link("proc/100/ns/mnt", "mnt:[1]");
        link("proc/100/root", "/");
        link("proc/100/task/100/ns/mnt", "mnt:[1]");
        link("proc/100/task/100/root", "/");
        put(
            "proc/100/task/100/stat",
            "100 (hwsurvey) R 1 100 100 0 -1 4194304 0",
        );
        for (pid, ns, state, mountinfo) in tasks {
            let t = format!("proc/{pid}/task/{pid}");
            std::fs::create_dir_all(dir.path().join(&t)).unwrap();
            if let Some(ns) = ns {
                link(&format!("{t}/ns/mnt"), ns);
                link(&format!("{t}/root"), "/");
            }
            put(
                &format!("{t}/stat"),
                &format!("{pid} (sleep) {state} 1 1 1 0 -1 4194304 0"),
            );
            if let Some(m) = mountinfo {
                put(&format!("{t}/mountinfo"), m);
            }
            put(&format!("proc/{pid}/comm"), "sleep\n");
        }
        dir
    }

    const OWN: &str = "27 1 254:0 / / rw - ext4 /dev/vda rw\n";

    /// A file system mounted only in another namespace is read, named with its namespace; the
    /// copies a namespace starts with are left out; a namespace is read once; a task whose
    /// links cannot be read has its table read all the same; an exiting task is passed over;
    /// a table that cannot be read while its task runs fails closed.
    #[test]
    fn every_namespace_is_read_and_what_cannot_be_fails_closed() {
        let other = format!("{OWN}90 27 7:1 / /srv/data rw - ext4 /dev/loop1 rw\n");
        let hidden = format!("{OWN}91 27 7:2 / /opt rw - xfs /dev/loop2 rw\n");
        let dir = fake_proc(
            &[
                (200, Some("mnt:[2]"), 'S', Some(&other)),
                (
                    201,
                    Some("mnt:[2]"),
                    'S',
                    Some("not read: namespace 2 is read already"),
                ),
                (300, None, 'Z', None),
                (400, None, 'S', Some(&hidden)),
            ],
            OWN,
            "rw",
        );
        let m = read_every_namespace(&SysRoot::new(dir.path())).unwrap();
        let shown: Vec<String> = m.iter().map(|e| e.shown()).collect();
        assert_eq!(
            shown,
            [
                "/proc",
                "/",
                "/srv/data (in mount namespace mnt:[2] of pid 200 (sleep))",
                "/opt (in the mount namespace of pid 400 (sleep))"
            ]
        );
        assert_eq!((m[2].major, m[2].minor, m[2].mount_id), (7, 1, 90));
        // a task that runs and whose table cannot be read
        let dir = fake_proc(&[(500, None, 'S', None)], OWN, "rw");
        assert_eq!(
            read_every_namespace(&SysRoot::new(dir.path())).unwrap_err(),
            NamespaceError::Unreadable {
                path: "/proc/500/task/500/mountinfo".into(),
                detail: "missing".into()
            }
        );
        // a table not in the kernel's format
        let dir = fake_proc(&[(600, Some("mnt:[6]"), 'S', Some("garbage\n"))], OWN, "rw");
        let e = read_every_namespace(&SysRoot::new(dir.path())).unwrap_err();
        assert!(
            matches!(&e, NamespaceError::Unreadable { path, .. } if path == "/proc/600/task/600/mountinfo"),
            "{e}"
        );
    }

    /// A namespace kept by a bind mount of its file with no process in it, and processes
    /// hidden by `hidepid` from a user other than root, refuse; a namespace that is kept and
    /// has a process is read.
    #[test]
    fn kept_namespaces_and_hidden_processes_fail_closed() {
        let kept = format!("{OWN}95 27 0:4 mnt:[4026532999] /run/ns rw - nsfs nsfs rw\n");
        let dir = fake_proc(&[], &kept, "rw");
        let e = read_every_namespace(&SysRoot::new(dir.path())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "mount namespace mnt:[4026532999] is kept at /run/ns with no process in it, so its \
             mounts cannot be read"
        );
        let dir = fake_proc(
            &[(200, Some("mnt:[4026532999]"), 'S', Some(OWN))],
            &kept,
            "rw",
        );
        assert!(read_every_namespace(&SysRoot::new(dir.path())).is_ok());
        let dir = fake_proc(&[], OWN, "rw,hidepid=invisible");
        assert_eq!(
            read_every_namespace(&SysRoot::new(dir.path())).unwrap_err(),
            NamespaceError::HiddenProcesses {
                option: "hidepid=invisible".into()
            }
        );
        let own = parse_mountinfo("22 27 0:21 / /proc rw - proc proc rw,hidepid=2\n").unwrap();
        assert_eq!(hiding_option(&own, Some(0)), None);
        assert_eq!(
            hiding_option(&own, Some(1000)).as_deref(),
            Some("hidepid=2")
        );
        let own = parse_mountinfo("22 27 0:21 / /proc rw - proc proc rw,hidepid=off\n").unwrap();
        assert_eq!(hiding_option(&own, Some(1000)), None);
    }

    /// In a container's PID namespace the processes outside it cannot be seen.
    #[test]
    fn another_pid_namespace_fails_closed() {
        let dir = fake_proc(&[], OWN, "rw");
        std::fs::remove_file(dir.path().join("proc/100/ns/pid")).unwrap();
        std::os::unix::fs::symlink("pid:[4026532180]", dir.path().join("proc/100/ns/pid")).unwrap();
        assert_eq!(
            read_every_namespace(&SysRoot::new(dir.path())).unwrap_err(),
            NamespaceError::NotInitialPidNamespace {
                ns: "pid:[4026532180]".into()
            }
        );
    }

    /// The live machine: the read succeeds as root (the tests run as root where loop devices
    /// are used), this process's own mounts first, `/` among them.
    #[test]
    fn the_live_machine_reads_as_root() {
        let root = SysRoot::live();
        match read_every_namespace(&root) {
            Ok(all) => {
                let own = all.iter().take_while(|m| m.namespace.is_none()).count();
                assert!(all[own..].iter().all(|m| m.namespace.is_some()));
                assert!(all[..own].iter().any(|m| m.mount_point == "/"), "{all:?}");
            }
            Err(e) => assert!(effective_uid(&root) != Some(0), "as root: {e}"),
        }
    }
}

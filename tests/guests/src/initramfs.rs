//! The guest's initramfs: its init script (mounts, the cgroup limit, the commands, the files
//! sent back over the console) and the `newc` cpio archive holding it with busybox and hwsurvey.

use super::*;

/// A word quoted for the guest's shell.
pub(crate) fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The start of every guest's `/init`: busybox's applets, the mounts, the kernel modules of the
/// definition (`insmod`, in order), the guest's name as its hostname.
pub(crate) fn init_head(guest: &Guest) -> String {
    let mut s = String::from(
        "#!/bin/busybox sh\n\
         /bin/busybox --install -s /bin\n\
         export PATH=/bin HOME=/root\n\
         mount -t proc proc /proc\n\
         mount -t sysfs sysfs /sys\n\
         mount -t devtmpfs devtmpfs /dev\n\
         mkdir -p /dev/hugepages /tmp /out /res /root\n\
         mount -t hugetlbfs hugetlbfs /dev/hugepages\n\
         mount -t tmpfs tmpfs /tmp\n\
         echo 1 > /proc/sys/kernel/printk\n",
    );
    for m in &guest.modules {
        let _ = writeln!(
            s,
            "insmod /lib/modules/{m}.ko || echo 'insmod {m} failed' >&2"
        );
    }
    // the guest's name as its hostname, so that result files and compare's default column
    // labels tell the guests apart (the kernel's default is "(none)")
    let _ = writeln!(s, "hostname {}", shell_quote(&guest.name));
    s
}

/// The part of `/init` that puts the init shell (and so everything it starts) into the
/// definition's cgroup with its memory limit, and its CPU quota when it has one.
pub(crate) fn init_cgroup(guest: &Guest) -> String {
    let mut s = String::new();
    match &guest.cgroup {
        Some(CgroupLimit {
            version: 2,
            memory_max_bytes,
            cpu_quota_us,
        }) => {
            let _ = write!(
                s,
                "mount -t cgroup2 cgroup2 /sys/fs/cgroup\n\
                 echo +memory +cpu +cpuset > /sys/fs/cgroup/cgroup.subtree_control\n\
                 mkdir /sys/fs/cgroup/hwsurvey\n\
                 echo {memory_max_bytes} > /sys/fs/cgroup/hwsurvey/memory.max\n"
            );
            if let Some(q) = cpu_quota_us {
                let _ = writeln!(
                    s,
                    "echo '{q} {CPU_PERIOD_US}' > /sys/fs/cgroup/hwsurvey/cpu.max"
                );
            }
            s.push_str("echo $$ > /sys/fs/cgroup/hwsurvey/cgroup.procs\n");
        }
        Some(CgroupLimit {
            version: 1,
            memory_max_bytes,
            cpu_quota_us,
        }) => {
            let _ = write!(
                s,
                "mount -t tmpfs cgroup /sys/fs/cgroup\n\
                 mkdir /sys/fs/cgroup/memory\n\
                 mount -t cgroup -o memory memory /sys/fs/cgroup/memory\n\
                 mkdir /sys/fs/cgroup/memory/hwsurvey\n\
                 echo {memory_max_bytes} > /sys/fs/cgroup/memory/hwsurvey/memory.limit_in_bytes\n\
                 echo $$ > /sys/fs/cgroup/memory/hwsurvey/tasks\n"
            );
            if let Some(q) = cpu_quota_us {
                let _ = write!(
                    s,
                    "mkdir /sys/fs/cgroup/cpu\n\
                     mount -t cgroup -o cpu cpu /sys/fs/cgroup/cpu\n\
                     mkdir /sys/fs/cgroup/cpu/hwsurvey\n\
                     echo {CPU_PERIOD_US} > /sys/fs/cgroup/cpu/hwsurvey/cpu.cfs_period_us\n\
                     echo {q} > /sys/fs/cgroup/cpu/hwsurvey/cpu.cfs_quota_us\n\
                     echo $$ > /sys/fs/cgroup/cpu/hwsurvey/tasks\n"
                );
            }
        }
        Some(other) => {
            let _ = writeln!(
                s,
                "echo 'cgroup version {} is neither 1 nor 2' >&2",
                other.version
            );
        }
        None => {}
    }
    s
}

/// Seconds a guest's command may run before the guest prints, on its console, what it is
/// doing ([`STUCK_MARKER`]): half the definition's `timeout_s`, so that a command that hangs
/// shows its processes, where each waits in the kernel and the kernel log before the host
/// gives up on the guest.
pub fn stuck_after_s(guest: &Guest) -> u64 {
    (guest.timeout_s / 2).max(1)
}

/// The guest's `/init`: mounts, the cgroup, the commands, the output on the console, power off.
///
/// Before command `i` the init prints [`COMMAND_MARKER`]` i` on the console; a command still
/// running after [`stuck_after_s`] makes a watcher print [`STUCK_MARKER`]` i`, then every
/// process (and every kernel thread in state D) with its state and kernel wait channel
/// (`/proc/PID/{stat,wchan,cmdline}`) and the kernel log's last 40 lines (the console shows only emergencies: `printk` level 1).
pub fn init_script(guest: &Guest, commands: &[Vec<String>]) -> String {
    let mut s = init_head(guest);
    let _ = writeln!(s, "echo {READY_MARKER}");
    s.push_str(&init_cgroup(guest));
    s.push_str("cd /out\n");
    let stuck = stuck_after_s(guest);
    for (i, argv) in commands.iter().enumerate() {
        let words: Vec<String> = argv.iter().map(|w| shell_quote(w)).collect();
        let _ = write!(
            s,
            "echo {COMMAND_MARKER} {i}\n\
             ( sleep {stuck}; echo {STUCK_MARKER} {i}: running after {stuck} s; \
             for p in /proc/[0-9]*; do s=$(cut -d' ' -f1-3 $p/stat 2>/dev/null); \
             c=$(tr '\\0' ' ' < $p/cmdline 2>/dev/null); \
             [ -n \"$c\" ] || case \"$s\" in *' D') ;; *) continue ;; esac; \
             echo \"$s wchan=$(cat $p/wchan 2>/dev/null) $c\"; done; \
             dmesg | tail -n 40 ) &\n\
             w=$!\n\
             {} > /res/{i}.stdout 2> /res/{i}.stderr\necho $? > /res/{i}.status\n\
             kill $w 2> /dev/null\n",
            words.join(" ")
        );
    }
    let _ = write!(
        s,
        "cd /\n\
         echo {BEGIN_MARKER}\n\
         tar -czf - out res | base64\n\
         echo {END_MARKER}\n\
         sync\n\
         poweroff -f\n"
    );
    s
}

/// Writes the initramfs (cpio newc) of `guest` running `commands` to `path`.
pub fn build_initramfs(guest: &Guest, commands: &[Vec<String>], path: &Path) -> Result<()> {
    let tree = tempfile::tempdir()?;
    let root = tree.path();
    for d in ["bin", "proc", "sys", "dev", "tmp", "etc"] {
        fs::create_dir_all(root.join(d))?;
    }
    fs::copy(busybox(guest.debian_arch())?, root.join("bin/busybox"))?;
    fs::copy(dist_binary(guest)?, root.join("bin/hwsurvey"))?;
    for package in &guest.packages {
        copy_tree(&fetch_package(guest.debian_arch(), package)?, root, GCONV)?;
    }
    if !guest.modules.is_empty() {
        fs::create_dir_all(root.join("lib/modules"))?;
        for m in &guest.modules {
            fs::copy(
                kernel_module(guest.debian_arch(), m)?,
                root.join(format!("lib/modules/{m}.ko")),
            )?;
        }
    }
    let init = root.join("init");
    fs::write(&init, init_script(guest, commands))?;
    set_executable(&init)?;
    set_executable(&root.join("bin/busybox"))?;
    set_executable(&root.join("bin/hwsurvey"))?;
    write_cpio(root, path)
}

/// Writes the tree `root` as a cpio archive (newc, every file owned by root) to `path`.
pub(crate) fn write_cpio(root: &Path, path: &Path) -> Result<()> {
    let mut list = String::new();
    for entry in walk(root)? {
        let rel = entry.strip_prefix(root)?;
        let _ = writeln!(list, "{}", rel.display());
    }
    let out =
        fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut child = Command::new("cpio")
        .args(["--quiet", "-o", "-H", "newc", "-R", "0:0"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(out)
        .spawn()
        .context("cannot start cpio (Debian package cpio)")?;
    child
        .stdin
        .take()
        .context("cpio's stdin")?
        .write_all(list.as_bytes())?;
    let status = child.wait()?;
    if !status.success() {
        bail!(
            "cpio -o -H newc failed ({status}) writing {}",
            path.display()
        );
    }
    Ok(())
}

pub(crate) fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot chmod {}", path.display()))
}

/// Every path under `root` (folders before their contents), without `root` itself. A symbolic
/// link is one entry, never followed (a package's `/lib64/ld-linux-x86-64.so.2` points to an
/// absolute path, which is the host's outside the guest).
pub(crate) fn walk(root: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<PathBuf> = fs::read_dir(&dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for p in entries {
            if p.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    Ok(out)
}

/// Paths of the packages left out of the initramfs (documentation, the test suite, IDLE, Tk,
/// character set converters, the extension modules of Python's own tests), as prefixes of
/// the path inside the package.
const PRUNED: &[&str] = &[
    "usr/share",
    "usr/lib/python3.11/test",
    "usr/lib/python3.11/idlelib",
    "usr/lib/python3.11/tkinter",
    "usr/lib/python3.11/lib2to3",
    "usr/lib/python3.11/ensurepip",
    "usr/lib/python3.11/pydoc_data",
    "usr/lib/python3.11/turtledemo",
    "usr/lib/python3.11/lib-dynload/_test",
    "usr/lib/python3.11/lib-dynload/_ctypes_test",
    "usr/lib/python3.11/lib-dynload/_xxtestfuzz",
];

/// glibc's character set converters (8 MiB of amd64's 13 MiB `libc6`): what a command
/// guest's packages run (dmsetup, mdadm) never loads them. Left out of command guests only.
const GCONV: &[&str] = &[
    "usr/lib/x86_64-linux-gnu/gconv",
    "usr/lib/aarch64-linux-gnu/gconv",
];

/// Copies the tree `from` into `to`, keeping symbolic links as links and leaving out the
/// paths under [`PRUNED`] and under `also_pruned`.
pub(crate) fn copy_tree(from: &Path, to: &Path, also_pruned: &[&str]) -> Result<()> {
    for p in walk(from)? {
        let rel = p.strip_prefix(from)?;
        let rel_text = rel.to_string_lossy();
        let pruned = PRUNED
            .iter()
            .chain(also_pruned)
            .any(|x| rel_text.starts_with(x));
        if rel_text.starts_with('.') || pruned {
            continue;
        }
        let dest = to.join(rel);
        let meta = p.symlink_metadata()?;
        if meta.is_dir() {
            fs::create_dir_all(&dest)?;
        } else if meta.file_type().is_symlink() {
            let target = fs::read_link(&p)?;
            let _ = fs::remove_file(&dest);
            std::os::unix::fs::symlink(&target, &dest)
                .with_context(|| format!("cannot link {}", dest.display()))?;
        } else {
            fs::copy(&p, &dest)
                .with_context(|| format!("cannot copy {} to {}", p.display(), dest.display()))?;
        }
    }
    Ok(())
}

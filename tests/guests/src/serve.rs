//! Guests that stay up and are reached over SSH, for the fleet playbook (`fleet/site.yml`):
//! [`Serving::start`] boots a guest whose init brings up a virtio NIC on qemu's user network,
//! starts dropbear on port 22 and waits, instead of running commands and powering off. qemu
//! forwards a port of the host's loopback address only (`hostfwd=tcp:127.0.0.1:PORT-:22`) to
//! it; nothing listens on any other address. The guest is killed when its [`Serving`] is
//! dropped, so a failing test leaves no qemu behind.
//!
//! What Ansible needs on a host, fetched from Debian's archive for the guest's architecture
//! ([`SERVE_PACKAGES`], `apt-get download` and `dpkg-deb -x` into the package cache, nothing
//! installed) and unpacked into the initramfs: dropbear (the SSH server) with its libraries,
//! Python 3.11 (the interpreter and its standard library, without the tests, the docs, IDLE,
//! Tk and the test extension modules) for Ansible's modules, and glibc. A root login with the
//! key the caller gives ([`ssh_keypair`] makes one per test run): `/root/.ssh/authorized_keys`.
//! Files go in and out over SSH (`ansible_ssh_transfer_method=piped`: `dd` on the guest,
//! busybox's), as the guest has no SFTP server.

use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::{
    busybox, copy_tree, fetch_package, init_cgroup, init_head, kernel_image, kernel_module,
    qemu_available, run_cmd, set_executable, shell_quote, workspace_root, write_cpio, Guest,
};

/// Line a serving guest's init prints once dropbear listens (a line ending with it counts).
pub const SSH_READY_MARKER: &str = "HWSURVEY-GUEST-SSH-READY";
/// Line a guest told to die during a run ([`ServeOptions::die_during`]) prints just before it
/// powers off.
pub const DYING_MARKER: &str = "HWSURVEY-GUEST-DYING";

/// Debian 12 packages unpacked into a serving guest's initramfs, for both architectures:
/// dropbear-bin and the libraries it links (libtomcrypt1 -> libgmp10, libtommath1, zlib1g,
/// libcrypt1), python3.11-minimal (the interpreter: zlib, binascii, select, pwd, grp, syslog,
/// the hashes and `_struct` are built in; it links libexpat1 and zlib1g),
/// libpython3.11-minimal and libpython3.11-stdlib (the modules Ansible's setup, file, stat,
/// copy, command, fetch and async_status import: json, subprocess, shlex, tempfile, zipfile,
/// multiprocessing, ...), and libc6. libssl3 and libffi8 are left out: hashlib falls back to
/// its built-in hashes, and no module used needs ctypes.
pub const SERVE_PACKAGES: &[&str] = &[
    "libc6",
    "zlib1g",
    "libcrypt1",
    "libgmp10",
    "libtommath1",
    "libtomcrypt1",
    "dropbear-bin",
    "libexpat1",
    "python3.11-minimal",
    "libpython3.11-minimal",
    "libpython3.11-stdlib",
];

/// The Python interpreter a serving guest has (`ansible_python_interpreter`).
pub const GUEST_PYTHON: &str = "/usr/bin/python3.11";

/// A private key made for one test run and its public line.
#[derive(Debug, Clone)]
pub struct KeyPair {
    /// The private key file (mode 0600).
    pub private_key: PathBuf,
    /// The public key, one `ssh-ed25519 AAAA... comment` line.
    pub public_line: String,
}

/// Makes an ed25519 key pair without a passphrase in `dir` (`ssh-keygen`, Debian package
/// openssh-client).
pub fn ssh_keypair(dir: &Path) -> Result<KeyPair> {
    let private_key = dir.join("id_ed25519");
    let _ = fs::remove_file(&private_key);
    run_cmd(
        Command::new("ssh-keygen")
            .args([
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                "hwsurvey-guests",
                "-f",
            ])
            .arg(&private_key),
    )
    .context("ssh-keygen (Debian package openssh-client)")?;
    let pub_path = dir.join("id_ed25519.pub");
    let public_line = fs::read_to_string(&pub_path)
        .with_context(|| format!("cannot read {}", pub_path.display()))?
        .trim()
        .to_owned();
    Ok(KeyPair {
        private_key,
        public_line,
    })
}

/// A TCP port of 127.0.0.1 that was free a moment ago (bound and released), for a forward.
pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").context("cannot bind a port on 127.0.0.1")?;
    Ok(l.local_addr()?.port())
}

/// Options of [`Serving::start`].
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The public key line put in `/root/.ssh/authorized_keys`.
    pub authorized_key: String,
    /// Port of 127.0.0.1 forwarded to the guest's port 22 ([`free_port`]).
    pub port: u16,
    /// Folder for the console log and the initramfs; created, emptied first.
    pub out_dir: PathBuf,
    /// Files put into the initramfs: (path in the guest, e.g. `etc/hwsurvey/fleet.toml`,
    /// contents).
    pub files: Vec<(String, String)>,
    /// When set, the guest powers itself off (`poweroff -f`, a host dying) 1 s after a process
    /// whose command line holds this text appears (`ps -o args`, polled every 0.2 s), printing
    /// [`DYING_MARKER`] first.
    pub die_during: Option<String>,
}

/// A guest that is up (or booting), reachable on 127.0.0.1:[`Serving::port`]; killed when
/// dropped.
#[derive(Debug)]
pub struct Serving {
    /// The guest's name (its hostname).
    pub name: String,
    /// The forwarded port on 127.0.0.1.
    pub port: u16,
    /// The console log, written as it comes.
    pub console_log: PathBuf,
    /// The initramfs, for its size.
    pub initramfs: PathBuf,
    /// From qemu's start to the init's line saying dropbear listens, once
    /// [`Serving::wait_ready`] returned.
    pub boot: Option<Duration>,
    timeout: Duration,
    start: Instant,
    child: Child,
    lines: mpsc::Receiver<(Instant, String)>,
}

/// The kernel modules of the virtio NIC (`virtio_net` and what it depends on, from each
/// module's `depends=` in its `.modinfo`), in load order; modules built into the kernel (no
/// `.ko` in the package) are left out.
pub fn net_modules(arch: &str) -> Result<Vec<(String, PathBuf)>> {
    fn visit(arch: &str, name: &str, out: &mut Vec<(String, PathBuf)>) -> Result<()> {
        if out.iter().any(|(n, _)| n == name) {
            return Ok(());
        }
        let Ok(path) = kernel_module(arch, name) else {
            return Ok(()); // built in
        };
        let bytes = fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let deps = bytes
            .windows(8)
            .position(|w| w == b"depends=")
            .map(|i| {
                let rest = &bytes[i + 8..];
                let end = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
                String::from_utf8_lossy(&rest[..end]).into_owned()
            })
            .unwrap_or_default();
        for dep in deps.split(',').filter(|d| !d.is_empty()) {
            visit(arch, dep, out)?;
        }
        out.push((name.to_owned(), path));
        Ok(())
    }
    let mut out = Vec::new();
    visit(arch, "virtio_pci", &mut out)?;
    visit(arch, "virtio_net", &mut out)?;
    if !out.iter().any(|(n, _)| n == "virtio_net") {
        bail!("the {arch} kernel package has no virtio_net.ko");
    }
    Ok(out)
}

/// The `/init` of a serving guest: the common start, the NIC (10.0.2.15/24 on qemu's user
/// network), the cgroup, dropbear, the ready line, then it waits for ever.
pub fn serve_init_script(guest: &Guest, modules: &[String], opts: &ServeOptions) -> String {
    let mut s = init_head(guest);
    for m in modules {
        let _ = writeln!(
            s,
            "insmod /lib/modules/{m}.ko || echo 'insmod {m} failed' >&2"
        );
    }
    s.push_str(
        "export PATH=/usr/sbin:/usr/bin:/bin\n\
         mkdir -p /dev/pts /etc/dropbear\n\
         mount -t devpts devpts /dev/pts\n\
         chmod 700 /root /root/.ssh\n\
         chmod 600 /root/.ssh/authorized_keys\n\
         ip link set lo up\n\
         ip link set eth0 up\n\
         ip addr add 10.0.2.15/24 dev eth0\n\
         ip route add default via 10.0.2.2\n",
    );
    s.push_str(&init_cgroup(guest));
    if let Some(pattern) = &opts.die_during {
        let _ = writeln!(
            s,
            "( while ! ps -o args | grep -F -- {} | grep -qvF grep; do usleep 200000; done; \
             sleep 1; echo {DYING_MARKER}; poweroff -f ) &",
            shell_quote(pattern)
        );
    }
    // -R: host keys made at the first connection; -s: no password logins; -E: log to stderr
    let _ = write!(
        s,
        "dropbear -R -s -E -p 22 2> /tmp/dropbear.log || echo 'dropbear failed' >&2\n\
         echo {SSH_READY_MARKER}\n\
         while true; do sleep 3600; done\n"
    );
    s
}

/// The part of a serving guest's initramfs that depends only on the architecture: busybox and
/// the packages of [`SERVE_PACKAGES`] (about 35 MiB for amd64), a cpio archive kept in the
/// package cache (`target/guests/cache/<debian-arch>/serve-base.cpio`) and made again when
/// the downloaded packages change (`serve-base.key` lists them).
pub fn serve_base_archive(arch: &str) -> Result<PathBuf> {
    let mut key = String::new();
    let mut dirs = Vec::new();
    for package in SERVE_PACKAGES.iter().chain(&["busybox-static"]) {
        let dir = fetch_package(arch, package)?;
        let deb = fs::read_to_string(dir.join(".complete")).unwrap_or_default();
        let _ = writeln!(key, "{package} {deb}");
        dirs.push(dir);
    }
    let precompiled = host_python_is_guest_python();
    let _ = writeln!(
        key,
        "stdlib byte-compiled on the host: {}",
        if precompiled { "yes" } else { "no" }
    );
    let cache = crate::cache_dir(arch);
    let archive = cache.join("serve-base.cpio");
    let key_file = cache.join("serve-base.key");
    if archive.exists() && fs::read_to_string(&key_file).is_ok_and(|k| k == key) {
        return Ok(archive);
    }
    let tree = tempfile::tempdir_in(&cache)?;
    let root = tree.path();
    for dir in &dirs[..dirs.len() - 1] {
        copy_tree(dir, root, &[])?;
    }
    if precompiled {
        byte_compile_stdlib(root)?;
    }
    fs::create_dir_all(root.join("bin"))?;
    fs::copy(busybox(arch)?, root.join("bin/busybox"))?;
    set_executable(&root.join("bin/busybox"))?;
    let tmp = cache.join(format!("serve-base.cpio.{}", std::process::id()));
    write_cpio(root, &tmp)?;
    fs::rename(&tmp, &archive)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), archive.display()))?;
    fs::write(&key_file, key)?;
    Ok(archive)
}

/// The minor version of the guests' Python ([`GUEST_PYTHON`]): byte code is the same on every
/// architecture for one minor version.
const GUEST_PYTHON_VERSION: &str = "3.11";

/// Whether this host's `python3` (Debian package python3, on the set-up's list) is of
/// [`GUEST_PYTHON_VERSION`], so that the byte code it writes is the guests' own.
fn host_python_is_guest_python() -> bool {
    Command::new("python3")
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .is_ok_and(|o| {
            o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == GUEST_PYTHON_VERSION
        })
}

/// Byte-compiles the guests' Python standard library under `root` with the host's `python3`
/// (`compileall`, `unchecked-hash` pycs: used without comparing the source's time, which the
/// initramfs does not keep). Debian's packages ship no byte code (it is made when a package is
/// installed, and the guests' packages are only unpacked), so each guest's Python compiled
/// every module it imported on its first use of it, under TCG: in the fleet test the first
/// remote task of five guests took 57 s, each later one about 20 s (2026-12-06).
fn byte_compile_stdlib(root: &Path) -> Result<()> {
    let lib = root.join(format!("usr/lib/python{GUEST_PYTHON_VERSION}"));
    run_cmd(
        Command::new("python3")
            .args([
                "-m",
                "compileall",
                "-q",
                "-j",
                "0",
                "--invalidation-mode",
                "unchecked-hash",
            ])
            .arg(&lib),
    )
    .with_context(|| format!("python3 -m compileall {}", lib.display()))?;
    Ok(())
}

/// Writes the initramfs of a serving guest to `path`: the architecture's base archive
/// ([`serve_base_archive`]: busybox, dropbear, Python, glibc) followed by a small archive of
/// this guest's own files (the kernel unpacks concatenated archives in turn): the
/// definition's and the NIC's kernel modules, the root login with the key, the caller's
/// files, the init. The static hwsurvey binary is not in it: the playbook copies it.
pub fn build_serve_initramfs(guest: &Guest, opts: &ServeOptions, path: &Path) -> Result<()> {
    let arch = guest.debian_arch();
    let base = serve_base_archive(arch)?;
    let tree = tempfile::tempdir()?;
    let root = tree.path();
    for d in [
        "proc",
        "sys",
        "dev",
        "tmp",
        "etc",
        "root/.ssh",
        "lib/modules",
    ] {
        fs::create_dir_all(root.join(d))?;
    }
    let mut names = guest.modules.clone();
    for m in &guest.modules {
        fs::copy(
            kernel_module(arch, m)?,
            root.join(format!("lib/modules/{m}.ko")),
        )?;
    }
    let mut net = Vec::new();
    for (name, file) in net_modules(arch)? {
        if !names.contains(&name) {
            fs::copy(&file, root.join(format!("lib/modules/{name}.ko")))?;
            names.push(name.clone());
            net.push(name);
        }
    }
    let etc = [
        ("etc/passwd", "root:*:0:0:root:/root:/bin/sh\n"),
        ("etc/group", "root:x:0:\n"),
        ("etc/shells", "/bin/sh\n"),
        (
            "etc/nsswitch.conf",
            "passwd: files\ngroup: files\nhosts: files\n",
        ),
        ("etc/hosts", "127.0.0.1 localhost\n"),
    ];
    for (p, text) in etc {
        fs::write(root.join(p), text)?;
    }
    fs::write(
        root.join("root/.ssh/authorized_keys"),
        format!("{}\n", opts.authorized_key),
    )?;
    for (p, text) in &opts.files {
        let dest = root.join(p.trim_start_matches('/'));
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&dest, text).with_context(|| format!("cannot write {}", dest.display()))?;
    }
    let init = root.join("init");
    fs::write(&init, serve_init_script(guest, &net, opts))?;
    set_executable(&init)?;
    let own = path.with_extension("own.cpio");
    write_cpio(root, &own)?;
    let mut out =
        fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    for part in [&base, &own] {
        let mut f =
            fs::File::open(part).with_context(|| format!("cannot read {}", part.display()))?;
        std::io::copy(&mut f, &mut out)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

impl Serving {
    /// Boots `guest` as an SSH host on 127.0.0.1:`opts.port` and returns at once (the boot
    /// goes on; [`Serving::wait_ready`] waits for it). The qemu arguments are the
    /// definition's, with a virtio NIC on qemu's user network instead of none.
    pub fn start(guest: &Guest, opts: &ServeOptions) -> Result<Serving> {
        qemu_available(&guest.qemu)?;
        let out_dir = &opts.out_dir;
        let _ = fs::remove_dir_all(out_dir);
        fs::create_dir_all(out_dir)
            .with_context(|| format!("cannot create {}", out_dir.display()))?;
        let kernel = kernel_image(guest.debian_arch())?;
        let initramfs = out_dir.join("initramfs.cpio");
        build_serve_initramfs(guest, opts, &initramfs)?;
        let console_log = out_dir.join("console.log");
        let mut args = guest.qemu_args();
        let nic = args
            .windows(2)
            .position(|w| w[0] == "-nic" && w[1] == "none")
            .context("qemu_args has no `-nic none` to replace")?;
        args[nic + 1] = format!(
            "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:{}-:22",
            opts.port
        );
        let mut child = Command::new(&guest.qemu)
            .args(&args)
            .arg("-kernel")
            .arg(&kernel)
            .arg("-initrd")
            .arg(&initramfs)
            .arg("-append")
            .arg(guest.cmdline())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", guest.qemu))?;
        let start = Instant::now();
        let stdout = child.stdout.take().context("qemu's stdout")?;
        let stderr = child.stderr.take().context("qemu's stderr")?;
        let mut log = fs::File::create(&console_log)
            .with_context(|| format!("cannot create {}", console_log.display()))?;
        let mut err_log = log.try_clone()?;
        let (tx, rx) = mpsc::channel::<(Instant, String)>();
        // the console goes to the log as it comes, for as long as the guest runs
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).split(b'\n') {
                let Ok(line) = line else { break };
                let text = String::from_utf8_lossy(&line)
                    .trim_end_matches('\r')
                    .to_owned();
                let _ = writeln!(log, "{text}");
                let _ = tx.send((Instant::now(), text));
            }
        });
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let _ = writeln!(err_log, "qemu: {line}");
            }
        });
        Ok(Serving {
            name: guest.name.clone(),
            port: opts.port,
            console_log,
            initramfs,
            boot: None,
            timeout: Duration::from_secs(guest.timeout_s),
            start,
            child,
            lines: rx,
        })
    }

    /// Waits until dropbear listens (the init's [`SSH_READY_MARKER`]), at most the
    /// definition's `timeout_s` from qemu's start; fails naming the console log when qemu
    /// ends first or the time is up.
    pub fn wait_ready(&mut self) -> Result<Duration> {
        let deadline = self.start + self.timeout;
        let where_log = format!("console log: {}", self.console_log.display());
        loop {
            let now = Instant::now();
            if now >= deadline {
                bail!(
                    "{}: dropbear not up within {} s; {where_log}",
                    self.name,
                    self.timeout.as_secs()
                );
            }
            match self.lines.recv_timeout(deadline - now) {
                Ok((at, line)) if line.trim_end().ends_with(SSH_READY_MARKER) => {
                    let boot = at - self.start;
                    self.boot = Some(boot);
                    return Ok(boot);
                }
                Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait()?;
                    bail!(
                        "{}: qemu ended ({status}) before dropbear was up; {where_log}",
                        self.name
                    );
                }
            }
        }
    }

    /// Whether qemu has ended (the guest powered off or was killed), with its status.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

impl Drop for Serving {
    /// Kills qemu (a guest must not outlive its test, passed or failed).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The host folder of a guest run: `target/guests/runs/<name>`.
pub fn run_dir(name: &str) -> PathBuf {
    workspace_root().join("target/guests/runs").join(name)
}

//! Guest machines that are not the build VM: Debian's own kernels booted under qemu-system
//! (TCG) with an initramfs holding busybox-static and the static dist binary of hwsurvey.
//!
//! - [`Guest`]: one machine, read from `tests/guests/machines/<name>.toml` (qemu binary,
//!   machine type, CPU model, topology, NUMA nodes with memory and distances, kernel command
//!   line, the cgroup limit the guest's init sets up) with the facts a correct probe derives
//!   from it ([`Expect`]).
//! - [`run`]: boots a guest, runs commands in it (each with its stdout, stderr and exit
//!   status), brings back the files they wrote under their working directory, bounded by the
//!   definition's timeout. Nothing is installed on the host: the kernel and busybox packages
//!   are fetched with `apt-get download` into `target/guests/cache/<debian-arch>/` and unpacked
//!   with `dpkg-deb -x`; the initramfs is written with `cpio -o -H newc`.
//!
//! Files come back over the serial console: the guest's init prints a gzip'd tar of its output
//! directory as base64 between two marker lines (the Debian kernels have 9p and virtio as
//! modules, which an initramfs would have to load first; the console needs nothing).
//!
//! A run may act on the guest from the host ([`Injection`]): when a command prints a marker
//! line on the console (`echo MARKER > /dev/console`), the host sends commands to qemu's human
//! monitor (a machine check with `mce`, a PCIe error with `pcie_aer_inject_error`), as the
//! hardware would raise them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use base64::Engine as _;
use serde::Deserialize;

mod expect;
mod host_load;
mod initramfs;
mod monitor;
mod packages;
pub mod serve;

pub use expect::{Expect, ExpectHardwareErrors, ExpectNode, ExpectSharedLink};
pub use host_load::{children_cpu_s, proc_stat_busy_s};
use host_load::{host_cpu_busy_s, reaped_children_cpu_s};
pub use initramfs::{build_initramfs, init_script, stuck_after_s};
pub(crate) use initramfs::{
    copy_tree, init_cgroup, init_head, set_executable, shell_quote, write_cpio,
};
use monitor::monitor_commands;
pub use monitor::Injection;
pub use packages::{busybox, dist_binary, kernel_image, kernel_module};
pub(crate) use packages::{cache_dir, fetch_package, run_cmd};

/// Line the guest's init prints when it starts (the end of the kernel's boot); a line ending
/// with it counts (the firmware's screen-clearing escapes may come first).
pub const READY_MARKER: &str = "HWSURVEY-GUEST-READY";
/// Line before the base64 tar of the guest's output.
pub const BEGIN_MARKER: &str = "HWSURVEY-GUEST-OUT-BEGIN";
/// Line after it.
pub const END_MARKER: &str = "HWSURVEY-GUEST-OUT-END";
/// The console line before the init's command `i` (`HWSURVEY-GUEST-COMMAND 3`).
pub const COMMAND_MARKER: &str = "HWSURVEY-GUEST-COMMAND";
/// The console line of a command still running after [`initramfs::stuck_after_s`], before
/// what the guest was doing ([`initramfs::init_script`]).
pub const STUCK_MARKER: &str = "HWSURVEY-GUEST-STUCK";

/// Whether guest tests run here (`HWSURVEY_GUESTS=1` on an x86_64 Linux host); prints
/// `SKIPPED: guest NAME: ...` with the reason when not.
pub fn enabled(name: &str) -> bool {
    if std::env::var_os("HWSURVEY_GUESTS").is_none_or(|v| v != "1") {
        println!(
            "SKIPPED: guest {name}: guests boot only with HWSURVEY_GUESTS=1 (scripts/test's guests stage)"
        );
        return false;
    }
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        println!("SKIPPED: guest {name}: the runner runs on an x86_64 Linux host only");
        return false;
    }
    true
}

/// The workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map_or_else(|| PathBuf::from("."), Path::to_owned)
}

/// Folder of the guest definitions: `tests/guests/machines`.
pub fn machines_dir() -> PathBuf {
    workspace_root().join("tests/guests/machines")
}

/// One guest machine, as written in `tests/guests/machines/<name>.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Guest {
    /// Name; equals the file's stem.
    pub name: String,
    /// `x86_64` or `aarch64`: the `targets/<arch>.toml` whose dist binary goes in.
    pub arch: String,
    /// qemu-system binary, e.g. `qemu-system-x86_64`.
    pub qemu: String,
    /// qemu machine type (`q35`, `virt`).
    pub machine: String,
    /// qemu CPU model (`Skylake-Server`, `cortex-a57`).
    pub cpu: String,
    /// Guest RAM, MiB; without it, the sum of the NUMA nodes' memory.
    pub memory_mib: Option<u64>,
    /// Seconds from qemu's start to its end before the run is killed.
    pub timeout_s: u64,
    /// CPU topology (`-smp`).
    pub topology: Topology,
    /// NUMA nodes (`-numa node`), in node id order; none: a single node.
    #[serde(default)]
    pub numa: Vec<NumaNode>,
    /// Distance matrix between the nodes (`-numa dist`), 10 = local.
    #[serde(default)]
    pub distances: Vec<Vec<u32>>,
    /// Extra qemu devices, each the value of one `-device` (PCIe root ports, switch ports,
    /// NVMe controllers: `pcie-root-port,id=rp1,bus=pcie.0,chassis=1,x-speed=8,x-width=4`).
    #[serde(default)]
    pub devices: Vec<String>,
    /// Raw disk images for the devices (`-drive file=<run folder>/drives/<id>.img,if=none,
    /// id=<id>,format=raw`), sparse files made for each run; a device names one with
    /// `drive=<id>`.
    #[serde(default)]
    pub drives: Vec<Drive>,
    /// Kernel modules loaded with `insmod` before the commands, in this order, by file stem
    /// (`nvme-core` is `kernel/.../nvme-core.ko` of the guest's Debian kernel package; the
    /// Debian kernels build most drivers as modules).
    #[serde(default)]
    pub modules: Vec<String>,
    /// Debian packages of the guest's architecture unpacked into its initramfs (`apt-get
    /// download`, `dpkg-deb -x`, without `usr/share`), for programs busybox has no applet of:
    /// a dynamically linked one comes with the packages of its libraries and `libc6`, named
    /// here too (`dmsetup`, `libdevmapper1.02.1`, ..., `libc6`).
    #[serde(default)]
    pub packages: Vec<String>,
    /// Kernel command line additions.
    pub kernel: KernelArgs,
    /// The cgroup the guest's init puts the commands in.
    pub cgroup: Option<CgroupLimit>,
    /// What a correct probe derives inside this guest.
    pub expect: Expect,
}

/// A raw disk image of a guest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drive {
    /// qemu's drive id.
    pub id: String,
    /// Size, MiB.
    pub size_mib: u64,
}

/// `-smp` of a guest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Sockets (packages).
    pub sockets: u32,
    /// Dies per socket (x86 only).
    pub dies: Option<u32>,
    /// Clusters per socket (arm64 only).
    pub clusters: Option<u32>,
    /// Cores per die or cluster.
    pub cores: u32,
    /// Threads per core.
    pub threads: u32,
    /// CPUs present at boot; the rest up to the product of the above are hot-pluggable
    /// (possible, not present). Default: all.
    pub present: Option<u32>,
}

impl Topology {
    /// All CPUs the topology holds (qemu's `maxcpus`).
    pub fn max_cpus(&self) -> u32 {
        self.sockets
            * self.dies.unwrap_or(1)
            * self.clusters.unwrap_or(1)
            * self.cores
            * self.threads
    }
}

/// One NUMA node of a guest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NumaNode {
    /// qemu CPU indexes, as a list (`0-3`).
    pub cpus: String,
    /// Memory, MiB.
    pub memory_mib: u64,
}

/// Kernel command line of a guest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelArgs {
    /// Appended to the console and panic settings the runner sets.
    pub cmdline: String,
}

/// A cgroup memory limit set up by the guest's init.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CgroupLimit {
    /// 1 (the memory controller's own hierarchy) or 2 (unified).
    pub version: u8,
    /// `memory.max` (v2) or `memory.limit_in_bytes` (v1), bytes.
    pub memory_max_bytes: u64,
    /// A CFS bandwidth limit, microseconds of run time per 100 ms period: `cpu.max` (v2) or
    /// `cpu.cfs_quota_us` (v1, in a `cpu` hierarchy of its own); none when absent.
    #[serde(default)]
    pub cpu_quota_us: Option<u64>,
}

/// The CFS period the guests' quotas are given in (the kernel's default), microseconds.
pub const CPU_PERIOD_US: u64 = 100_000;

impl Guest {
    /// Reads `tests/guests/machines/<name>.toml`. Errors name the file and the bad key.
    pub fn load(name: &str) -> Result<Guest> {
        let path = machines_dir().join(format!("{name}.toml"));
        Self::from_file(&path)
    }

    /// Reads one definition file and checks it for consistency.
    pub fn from_file(path: &Path) -> Result<Guest> {
        let text = fs::read_to_string(path)
            .with_context(|| format!("cannot read guest definition {}", path.display()))?;
        let guest: Guest =
            toml::from_str(&text).with_context(|| format!("{}: bad definition", path.display()))?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if guest.name != stem {
            bail!(
                "{}: name = {:?} differs from the file name {stem:?}",
                path.display(),
                guest.name
            );
        }
        let n = guest.numa.len();
        if !guest.distances.is_empty()
            && (guest.distances.len() != n || guest.distances.iter().any(|r| r.len() != n))
        {
            bail!(
                "{}: distances must be a {n} x {n} matrix (one row per [[numa]] node)",
                path.display()
            );
        }
        if guest.memory_mib.is_none() && guest.numa.is_empty() {
            bail!(
                "{}: memory_mib is required without [[numa]] nodes",
                path.display()
            );
        }
        if !matches!(guest.arch.as_str(), "x86_64" | "aarch64") {
            bail!(
                "{}: arch = {:?}: only x86_64 and aarch64 have kernels in Debian's archive here",
                path.display(),
                guest.arch
            );
        }
        Ok(guest)
    }

    /// Every definition in [`machines_dir`], by name.
    pub fn all() -> Result<Vec<Guest>> {
        let dir = machines_dir();
        let mut names: Vec<PathBuf> = fs::read_dir(&dir)
            .with_context(|| format!("cannot list {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        names.sort();
        names.iter().map(|p| Self::from_file(p)).collect()
    }

    /// Guest RAM, MiB.
    pub fn memory_mib(&self) -> u64 {
        self.memory_mib
            .unwrap_or_else(|| self.numa.iter().map(|n| n.memory_mib).sum())
    }

    /// Debian's name of the architecture (`amd64`, `arm64`).
    pub fn debian_arch(&self) -> &'static str {
        if self.arch == "aarch64" {
            "arm64"
        } else {
            "amd64"
        }
    }

    /// The Rust triple of the dist binary.
    pub fn triple(&self) -> String {
        format!("{}-unknown-linux-gnu", self.arch)
    }

    /// The serial console device of the machine type.
    pub fn console(&self) -> &'static str {
        if self.arch == "aarch64" {
            "ttyAMA0"
        } else {
            "ttyS0"
        }
    }

    /// qemu's arguments, without the kernel, initrd and command line.
    pub fn qemu_args(&self) -> Vec<String> {
        let t = &self.topology;
        let mut smp = format!(
            "cpus={},maxcpus={},sockets={}",
            t.present.unwrap_or_else(|| t.max_cpus()),
            t.max_cpus(),
            t.sockets
        );
        if let Some(d) = t.dies {
            let _ = write!(smp, ",dies={d}");
        }
        if let Some(c) = t.clusters {
            let _ = write!(smp, ",clusters={c}");
        }
        let _ = write!(smp, ",cores={},threads={}", t.cores, t.threads);
        let machine = if self.machine == "virt" {
            // GICv3: GICv2 stops at 8 CPUs.
            "virt,gic-version=3".to_owned()
        } else {
            self.machine.clone()
        };
        let mut args: Vec<String> = [
            "-machine",
            &machine,
            "-accel",
            "tcg",
            "-cpu",
            &self.cpu,
            "-m",
            &format!("{}M", self.memory_mib()),
            "-smp",
            &smp,
            "-nographic",
            "-no-reboot",
            "-nic",
            "none",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for (i, node) in self.numa.iter().enumerate() {
            args.push("-object".into());
            args.push(format!(
                "memory-backend-ram,id=mem{i},size={}M",
                node.memory_mib
            ));
            args.push("-numa".into());
            args.push(format!("node,nodeid={i},cpus={},memdev=mem{i}", node.cpus));
        }
        for (i, row) in self.distances.iter().enumerate() {
            for (j, d) in row.iter().enumerate() {
                if i != j {
                    args.push("-numa".into());
                    args.push(format!("dist,src={i},dst={j},val={d}"));
                }
            }
        }
        for d in &self.devices {
            args.push("-device".into());
            args.push(d.clone());
        }
        args
    }

    /// The kernel command line: console, panic=-1 (with qemu's -no-reboot: a panic ends qemu),
    /// nokaslr (the memory layout the definitions' huge page pools rely on), on x86
    /// no_timer_check (on a loaded host TCG is too slow for the IO-APIC timer check, which then
    /// panics), and the definition's own words.
    pub fn cmdline(&self) -> String {
        let timer = if self.arch == "x86_64" {
            " no_timer_check"
        } else {
            ""
        };
        format!(
            "console={} panic=-1 rdinit=/init quiet loglevel=3 nokaslr{timer} {}",
            self.console(),
            self.kernel.cmdline
        )
    }
}

/// Output of one command run in a guest.
#[derive(Debug, Clone)]
pub struct CommandOutput {
    /// The command's words.
    pub argv: Vec<String>,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
    /// Its exit status (as the guest's shell gives it: 128 + signal when killed).
    pub status: i32,
}

/// One finished boot of a guest.
#[derive(Debug)]
pub struct GuestRun {
    /// From qemu's start to the init's first line.
    pub boot: Duration,
    /// From the init's first line to qemu's end.
    pub commands: Duration,
    /// One per command, in order.
    pub outputs: Vec<CommandOutput>,
    /// Where the files the commands wrote in their working directory were brought back.
    pub files_dir: PathBuf,
    /// The console log (kernel messages and the init's lines).
    pub console_log: PathBuf,
    /// Share of the host's CPU time (0..=1) that went to other work than this guest's qemu
    /// while it ran: the host's busy time (`/proc/stat`) less qemu's CPU time (this process's
    /// reaped children, `/proc/self/stat` cutime + cstime), over the run's length x the host's
    /// CPUs. `None` when `/proc` could not be read. A TCG guest's vCPUs are host threads: on a
    /// busy host they are taken off their CPUs, and the guest sees its own threads stall.
    pub host_busy_elsewhere: Option<f64>,
    /// The monitor commands [`RunOptions::injections`] sent, with qemu's answers (empty when
    /// none was sent: the marker never came); an answer that is an error is qemu's text.
    pub monitor: Vec<(String, String)>,
}

/// Options of [`run`].
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Folder for the console log and the files brought back (`files/`); created, emptied
    /// first. Default: `target/guests/runs/<name>`.
    pub out_dir: Option<PathBuf>,
    /// Print the console to stderr as it comes.
    pub echo_console: bool,
    /// Seconds within which the kernel must reach the init before the boot counts as hung
    /// and is tried again; `None`: [`BOOT_DEADLINE_S`].
    pub boot_deadline_s: Option<u64>,
    /// What the host sends to qemu's monitor when the console shows a marker; none: qemu gets
    /// no monitor socket.
    pub injections: Vec<Injection>,
}

/// Whether `qemu` can be started here; `Err` says why not (for skip messages).
pub fn qemu_available(qemu: &str) -> Result<()> {
    match Command::new(qemu)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => bail!("{qemu} --version failed ({s})"),
        Err(e) => bail!(
            "{qemu} not found ({e}); Debian packages qemu-system-x86 / qemu-system-arm (scripts/lib.sh)"
        ),
    }
}

/// Boots `guest`, runs `commands` in `/out` (one after the other, inside the cgroup), and
/// brings back their outputs and the files under `/out`. Fails when qemu cannot start, when
/// the guest does not finish within its timeout, or when its output cannot be decoded; the
/// console log stays in the run folder in every case.
pub fn run(guest: &Guest, commands: &[Vec<String>], opts: &RunOptions) -> Result<GuestRun> {
    for boot in 1..=BOOTS {
        match run_once(guest, commands, opts)? {
            Booted::Ran(r) => return Ok(r),
            Booted::Hung { console_log } => {
                // kept beside the run folder, which the next boot empties
                let kept = console_log
                    .parent()
                    .and_then(Path::parent)
                    .unwrap_or(Path::new("."))
                    .join(format!("{}.hung-{boot}.log", guest.name));
                let _ = fs::rename(&console_log, &kept);
                let what = format!(
                    "{}: the kernel did not reach the init within {} s (boot {boot} of {BOOTS}; \
                     console log: {})",
                    guest.name,
                    opts.boot_deadline_s.unwrap_or(BOOT_DEADLINE_S),
                    kept.display()
                );
                if boot == BOOTS {
                    bail!("{what}");
                }
                eprintln!("guest {what}: booting again");
            }
            Booted::TimedOut {
                console_log,
                what,
                kernel_stall,
            } => {
                // a guest kernel that stalled is the emulator's fault, booted again as a hung
                // boot is; a command that hung while the guest still ran fails
                if !kernel_stall || boot == BOOTS {
                    bail!("{what}");
                }
                let kept = console_log
                    .parent()
                    .and_then(Path::parent)
                    .unwrap_or(Path::new("."))
                    .join(format!("{}.stalled-{boot}.log", guest.name));
                let _ = fs::rename(&console_log, &kept);
                eprintln!(
                    "guest {what}\nguest {}: the guest kernel stalled (console log kept: {}): \
                     booting again ({boot} of {BOOTS})",
                    guest.name,
                    kept.display()
                );
            }
        }
    }
    unreachable!("the last boot returns or fails")
}

/// Seconds within which a guest's kernel must reach its init (the [`READY_MARKER`]): boots take
/// 3-20 s, 60 s on a busy host. A kernel that does not is hung, and is booted again (up to
/// [`BOOTS`] times) instead of waiting out the guest's timeout: on 2026-12-04 the 16-vCPU
/// x86-2s4n-smt kernel locked up 3 s into its boot (every CPU's `migration/N` stopper thread
/// "stuck for 547 s", soft lockups), on an idle host, after 6 boots that had taken 6-11 s.
pub const BOOT_DEADLINE_S: u64 = 180;

/// Boots of one run, at most, when the kernel hangs before the init ([`BOOT_DEADLINE_S`]).
pub const BOOTS: usize = 3;

/// One boot's end.
enum Booted {
    /// The init ran the commands.
    Ran(GuestRun),
    /// The kernel did not reach the init within [`BOOT_DEADLINE_S`]; its console log.
    Hung { console_log: PathBuf },
    /// The guest did not power off within its `timeout_s`: its console log, what it was doing
    /// ([`Stuck`]), and whether the guest kernel itself stalled.
    TimedOut {
        console_log: PathBuf,
        what: String,
        kernel_stall: bool,
    },
}

/// Seconds a guest has to power off once it printed its output ([`END_MARKER`]): it syncs and
/// powers off in under a second; past this, qemu is stopped and the output used, the console
/// log saying so.
pub const POWER_OFF_S: u64 = 30;

/// The command index of a console line ending with [`COMMAND_MARKER`]` i`.
fn command_marker(line: &str) -> Option<usize> {
    let (head, i) = line.trim_end().rsplit_once(' ')?;
    head.ends_with(COMMAND_MARKER).then(|| i.parse().ok())?
}

/// Lines of the kernel log that say the guest kernel itself stalled (soft and hard lockups,
/// RCU stalls): under TCG a kernel can lock up on an idle host (see [`BOOT_DEADLINE_S`]).
const KERNEL_STALL_WORDS: [&str; 4] = [
    "soft lockup",
    "hard LOCKUP",
    "rcu_sched self-detected stall",
    "rcu: INFO: rcu_",
];

/// What a guest that ran out of time was doing, read from its console.
struct Stuck {
    /// One paragraph for the failure: the command, and the console after its marker (the
    /// processes and kernel log of [`STUCK_MARKER`] when it came).
    words: String,
    /// The guest kernel stalled: its log names a lockup or an RCU stall, or the command's
    /// watcher never printed although the command ran past [`initramfs::stuck_after_s`] by
    /// 30 s (nothing in the guest ran any more).
    kernel_stall: bool,
}

impl Stuck {
    /// `command`: the last command marker seen, and how long before the deadline it came.
    fn read(
        guest: &Guest,
        commands: &[Vec<String>],
        lines: &[String],
        command: Option<(usize, Duration)>,
    ) -> Stuck {
        let from = lines
            .iter()
            .rposition(|l| command_marker(l).is_some())
            .map_or(0, |k| k + 1);
        let after: Vec<&str> = lines[from..]
            .iter()
            .map(String::as_str)
            .filter(|l| !l.contains("TCG doesn't support"))
            .collect();
        // the watcher's dump from its first line; else the console's last lines
        let dump = after.iter().position(|l| l.contains(STUCK_MARKER));
        let dumped = dump.is_some();
        let tail = match dump {
            Some(k) => &after[k..after.len().min(k + 150)],
            None => &after[after.len().saturating_sub(60)..],
        };
        let stall_words = tail
            .iter()
            .any(|l| KERNEL_STALL_WORDS.iter().any(|w| l.contains(w)));
        let frozen = command.is_some_and(|(_, ran)| {
            !dumped && ran > Duration::from_secs(initramfs::stuck_after_s(guest) + 30)
        });
        let which = match command {
            Some((i, ran)) => format!(
                "command {i} ({}) ran for the last {:.0} s",
                commands.get(i).map(|a| a.join(" ")).unwrap_or_default(),
                ran.as_secs_f64()
            ),
            None => "no command had started".to_owned(),
        };
        let words = format!(
            "{which}{}; the console after it:\n{}",
            if frozen {
                " and its watcher never printed (the guest ran nothing more)"
            } else {
                ""
            },
            tail.join("\n")
        );
        Stuck {
            words,
            kernel_stall: stall_words || frozen,
        }
    }
}

/// One boot of [`run`].
fn run_once(guest: &Guest, commands: &[Vec<String>], opts: &RunOptions) -> Result<Booted> {
    qemu_available(&guest.qemu)?;
    let out_dir = opts.out_dir.clone().unwrap_or_else(|| {
        workspace_root()
            .join("target/guests/runs")
            .join(&guest.name)
    });
    let _ = fs::remove_dir_all(&out_dir);
    fs::create_dir_all(&out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    let kernel = kernel_image(guest.debian_arch())?;
    let initrd = out_dir.join("initramfs.cpio");
    build_initramfs(guest, commands, &initrd)?;
    let console_log = out_dir.join("console.log");

    let mut cmd = Command::new(&guest.qemu);
    if !guest.drives.is_empty() {
        fs::create_dir_all(out_dir.join("drives"))?;
    }
    for d in &guest.drives {
        let img = out_dir.join(format!("drives/{}.img", d.id));
        fs::File::create(&img)
            .and_then(|f| f.set_len(d.size_mib << 20))
            .with_context(|| format!("cannot create {}", img.display()))?;
        cmd.arg("-drive").arg(format!(
            "file={},if=none,id={},format=raw",
            img.display(),
            d.id
        ));
    }
    let monitor_socket = out_dir.join("monitor.sock");
    if !opts.injections.is_empty() {
        let _ = fs::remove_file(&monitor_socket);
        cmd.arg("-monitor").arg(format!(
            "unix:{},server=on,wait=off",
            monitor_socket.display()
        ));
    }
    cmd.args(guest.qemu_args())
        .arg("-kernel")
        .arg(&kernel)
        .arg("-initrd")
        .arg(&initrd)
        .arg("-append")
        .arg(guest.cmdline())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let host_before = host_cpu_busy_s();
    let children_before = reaped_children_cpu_s();
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", guest.qemu))?;
    let stdout = child.stdout.take().context("qemu's stdout")?;
    let mut stderr = child.stderr.take().context("qemu's stderr")?;
    let (tx, rx) = mpsc::channel::<(Instant, String)>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).split(b'\n') {
            let Ok(line) = line else { break };
            let text = String::from_utf8_lossy(&line)
                .trim_end_matches('\r')
                .to_owned();
            if tx.send((Instant::now(), text)).is_err() {
                break;
            }
        }
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });

    let deadline = start + Duration::from_secs(guest.timeout_s);
    let boot_deadline = start
        + Duration::from_secs(
            opts.boot_deadline_s
                .unwrap_or(BOOT_DEADLINE_S)
                .min(guest.timeout_s),
        );
    let mut log = fs::File::create(&console_log)?;
    let mut lines = Vec::new();
    let mut ready_at = None;
    let mut timed_out = false;
    let mut hung = false;
    // the output's end seen: the guest then has POWER_OFF_S to power off
    let mut output_at: Option<Instant> = None;
    let mut no_power_off = false;
    // the latest command marker: its command and when it came
    let mut command_at: Option<(usize, Instant)> = None;
    let mut injected: Vec<(String, String)> = Vec::new();
    let mut pending: Vec<&Injection> = opts.injections.iter().collect();
    loop {
        let now = Instant::now();
        if ready_at.is_none() && now >= boot_deadline {
            hung = true;
            let _ = child.kill();
            break;
        }
        if let Some(at) = output_at.filter(|at| now >= *at + Duration::from_secs(POWER_OFF_S)) {
            // the output is whole; a guest kernel that cannot power off is not the test's
            // subject, but it is said
            no_power_off = true;
            let _ = child.kill();
            writeln!(
                log,
                "--- the guest printed its output but did not power off within {POWER_OFF_S} s \
                 ({:.0} s after qemu's start): qemu stopped",
                (at - start).as_secs_f64()
            )?;
            break;
        }
        if now >= deadline {
            timed_out = true;
            let _ = child.kill();
            break;
        }
        let until = match (ready_at, output_at) {
            (None, _) => boot_deadline,
            (Some(_), Some(at)) => deadline.min(at + Duration::from_secs(POWER_OFF_S)),
            (Some(_), None) => deadline,
        };
        match rx.recv_timeout(until.saturating_duration_since(now)) {
            Ok((at, line)) => {
                writeln!(log, "{line}")?;
                if opts.echo_console {
                    eprintln!("{line}");
                }
                if ready_at.is_none() && line.trim_end().ends_with(READY_MARKER) {
                    ready_at = Some(at);
                }
                if output_at.is_none() && line.trim_end().ends_with(END_MARKER) {
                    output_at = Some(at);
                }
                if let Some(i) = command_marker(&line) {
                    command_at = Some((i, at));
                }
                if let Some(k) = pending
                    .iter()
                    .position(|i| line.trim_end().ends_with(i.marker.as_str()))
                {
                    let inj = pending.remove(k);
                    let answers =
                        monitor_commands(&monitor_socket, &inj.commands).unwrap_or_else(|e| {
                            vec![(inj.commands.join("; "), format!("error: {e:#}"))]
                        });
                    for (c, a) in &answers {
                        writeln!(log, "--- qemu monitor: {c}\n{a}")?;
                    }
                    injected.extend(answers);
                }
                lines.push(line);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let status = child.wait()?;
    let end = Instant::now();
    let host_busy_elsewhere = match (
        host_before,
        host_cpu_busy_s(),
        children_before,
        reaped_children_cpu_s(),
    ) {
        (Some((b0, cpus)), Some((b1, _)), Some(c0), Some(c1)) if cpus > 0 => {
            let span = (end - start).as_secs_f64() * cpus as f64;
            Some((((b1 - b0) - (c1 - c0)) / span).clamp(0.0, 1.0))
        }
        _ => None,
    };
    let _ = reader.join();
    let qemu_stderr = err_reader.join().unwrap_or_default();
    if !qemu_stderr.trim().is_empty() {
        writeln!(log, "--- qemu stderr ---\n{qemu_stderr}")?;
    }
    if hung {
        return Ok(Booted::Hung { console_log });
    }
    let where_log = format!("console log: {}", console_log.display());
    if no_power_off {
        eprintln!(
            "guest {}: printed its output but did not power off within {POWER_OFF_S} s: qemu \
             stopped; {where_log}",
            guest.name
        );
    }
    if timed_out {
        let stuck = Stuck::read(
            guest,
            commands,
            &lines,
            command_at.map(|(i, at)| (i, deadline.saturating_duration_since(at))),
        );
        return Ok(Booted::TimedOut {
            console_log,
            what: format!(
                "{}: no power-off within {} s; {}; {where_log}",
                guest.name, guest.timeout_s, stuck.words
            ),
            kernel_stall: stuck.kernel_stall,
        });
    }
    let Some(ready_at) = ready_at else {
        bail!(
            "{}: the guest's init never started (qemu {status}); {where_log}",
            guest.name
        );
    };
    let begin = lines
        .iter()
        .position(|l| l.trim_end().ends_with(BEGIN_MARKER));
    let finish = lines
        .iter()
        .position(|l| l.trim_end().ends_with(END_MARKER));
    let (Some(begin), Some(finish)) = (begin, finish) else {
        bail!(
            "{}: the guest printed no output between {BEGIN_MARKER} and {END_MARKER} (qemu {status}); {where_log}",
            guest.name
        );
    };
    let b64: String = lines[begin + 1..finish]
        .iter()
        .flat_map(|l| l.trim().chars())
        .collect();
    let tgz = base64::engine::general_purpose::STANDARD
        .decode(b64.as_bytes())
        .with_context(|| {
            format!(
                "{}: the guest's output is not base64; {where_log}",
                guest.name
            )
        })?;
    let unpacked = out_dir.join("guest");
    tar::Archive::new(flate2::read::GzDecoder::new(&tgz[..]))
        .unpack(&unpacked)
        .with_context(|| {
            format!(
                "{}: cannot unpack the guest's output; {where_log}",
                guest.name
            )
        })?;
    let mut outputs = Vec::new();
    for (i, argv) in commands.iter().enumerate() {
        let read = |ext: &str| {
            let p = unpacked.join(format!("res/{i}.{ext}"));
            fs::read(&p)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .with_context(|| format!("{}: {} missing; {where_log}", guest.name, p.display()))
        };
        let status_text = read("status")?;
        let status = status_text.trim().parse::<i32>().with_context(|| {
            format!(
                "{}: exit status of command {i} is {status_text:?}; {where_log}",
                guest.name
            )
        })?;
        outputs.push(CommandOutput {
            argv: argv.clone(),
            stdout: read("stdout")?,
            stderr: read("stderr")?,
            status,
        });
    }
    Ok(Booted::Ran(GuestRun {
        boot: ready_at - start,
        commands: end - ready_at,
        outputs,
        files_dir: unpacked.join("out"),
        console_log,
        host_busy_elsewhere,
        monitor: injected,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn console(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| (*l).to_owned()).collect()
    }

    #[test]
    fn command_markers_are_read_after_the_firmware_escapes() {
        assert_eq!(command_marker("HWSURVEY-GUEST-COMMAND 7"), Some(7));
        assert_eq!(
            command_marker("\u{1b}[2JHWSURVEY-GUEST-COMMAND 12\r"),
            Some(12)
        );
        assert_eq!(command_marker("HWSURVEY-GUEST-COMMAND x"), None);
        assert_eq!(
            command_marker("HWSURVEY-GUEST-STUCK 3: running after 300 s"),
            None
        );
        assert_eq!(command_marker("[   51.78] reboot: Power down"), None);
    }

    /// A command that hung while the guest ran (its watcher printed, no stall in the kernel
    /// log) fails, naming the command and the dump; a lockup in the dump, or a watcher that
    /// never printed long after it was due, is the guest kernel's stall.
    #[test]
    fn a_stuck_guest_names_its_command_and_tells_a_kernel_stall() {
        let g = Guest::load("x86-offline-cgroup1").unwrap();
        assert_eq!(stuck_after_s(&g), 300);
        let commands = vec![words(&["hwsurvey", "probe"]), words(&["sync"])];
        let hung = console(&[
            "HWSURVEY-GUEST-COMMAND 0",
            "HWSURVEY-GUEST-COMMAND 1",
            "qemu-system-x86_64: warning: TCG doesn't support requested feature: x",
            "HWSURVEY-GUEST-STUCK 1: running after 300 s",
            "231 (sync) D wchan=wb_wait_for_completion sync",
        ]);
        let s = Stuck::read(&g, &commands, &hung, Some((1, Duration::from_secs(590))));
        assert!(!s.kernel_stall, "{}", s.words);
        assert!(
            s.words
                .starts_with("command 1 (sync) ran for the last 590 s; the console after it:\n"),
            "{}",
            s.words
        );
        assert!(
            s.words.contains("wchan=wb_wait_for_completion"),
            "{}",
            s.words
        );
        assert!(!s.words.contains("TCG"), "{}", s.words);

        let mut lockup = hung.clone();
        lockup
            .push("[  402.1] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [sync:231]".into());
        let s = Stuck::read(&g, &commands, &lockup, Some((1, Duration::from_secs(590))));
        assert!(s.kernel_stall, "{}", s.words);

        // no watcher line although the command ran 590 s (due after 300): nothing ran
        let frozen = console(&["HWSURVEY-GUEST-COMMAND 0", "HWSURVEY-GUEST-COMMAND 1"]);
        let s = Stuck::read(&g, &commands, &frozen, Some((1, Duration::from_secs(590))));
        assert!(s.kernel_stall, "{}", s.words);
        assert!(s.words.contains("its watcher never printed"), "{}", s.words);
        // ... but a command that began 200 s before the end was not yet due to be watched
        let s = Stuck::read(&g, &commands, &frozen, Some((1, Duration::from_secs(200))));
        assert!(!s.kernel_stall, "{}", s.words);
    }

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_owned()).collect()
    }

    /// Every command of the init is announced on the console and watched, and the watcher is
    /// stopped after it.
    #[test]
    fn the_init_announces_and_watches_every_command() {
        let g = Guest::load("x86-2s-2cpu").unwrap();
        let script = init_script(&g, &[words(&["true"]), words(&["hwsurvey", "probe"])]);
        for i in 0..2 {
            assert!(
                script.contains(&format!("echo {COMMAND_MARKER} {i}\n")),
                "{script}"
            );
            assert!(
                script.contains(&format!("echo {STUCK_MARKER} {i}: running after")),
                "{script}"
            );
        }
        assert_eq!(script.matches("kill $w").count(), 2, "{script}");
    }
}

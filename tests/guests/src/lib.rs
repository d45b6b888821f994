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

mod boot_run;
mod expect;
mod host_load;
mod initramfs;
mod monitor;
mod packages;
pub mod serve;
mod stuck;

pub use boot_run::{run, BOOTS, BOOT_DEADLINE_S, POWER_OFF_S};
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
use stuck::{command_marker, Stuck};

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

//! Facts that only the live machine gives (no file holds them: cpuid, the sysconf page size,
//! `uname`, the running binary's ELF header), and where `hwsurvey snapshot` keeps them inside
//! a capture ([`LIVE_FACTS_PATH`]), so that a probe of the capture says what the live probe
//! said.

use hwsurvey_machine::binary::BinaryElf;
use hwsurvey_model::Probed;
use serde::{Deserialize, Serialize};

use crate::SysRoot;
use hwsurvey_machine::cpu::x86;

/// The evidence source of the CPUID hypervisor signature ([`crate::virt`]).
pub use hwsurvey_machine::virt::CPUID_SOURCE;

/// Where `hwsurvey snapshot` keeps the live-only facts (cpuid, sysconf page size) inside a
/// capture; read only when probing a capture.
pub const LIVE_FACTS_PATH: &str = "/hwsurvey/live.json";

/// Facts that only the live machine gives (no file holds them), kept in a snapshot at
/// [`LIVE_FACTS_PATH`] so a probe of the capture says the same.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LiveFacts {
    /// cpuid (x86).
    pub cpuid: Probed<x86::CpuidInfo>,
    /// The base page size and how it was found.
    pub base_page_size_bytes: Probed<u64>,
    /// How the base page size was found.
    pub base_page_size_source: String,
    /// ELF header of the binary that took the snapshot (`/proc/self/exe`, see
    /// [`crate::os::Os::binary`]); `None` in snapshots made before it was kept.
    #[serde(default)]
    pub binary: Option<Probed<BinaryElf>>,
    /// The kernel's machine as `uname` gave it live (`/proc/sys/kernel/arch` is absent on
    /// older kernels); `None` in snapshots made before it was kept.
    #[serde(default)]
    pub kernel_machine: Option<Probed<String>>,
    /// CPUID leaf 0x4000_0000's hypervisor signature read live (`KVMKVMKVM`, `TCGTCGTCGTCG`),
    /// which no file holds ([`crate::virt`]); `None` without one or in older snapshots.
    #[serde(default)]
    pub hypervisor_signature: Option<String>,
    /// The machine's identity, hashed ([`crate::os::host_id`]: no snapshot holds the files
    /// themselves); `None` in older snapshots.
    #[serde(default)]
    pub host_id: Option<hwsurvey_machine::os::host_id::HostId>,
    /// The generic timer's frequency (aarch64 CNTFRQ_EL0, Hz) read live, which no file holds
    /// ([`crate::virt::arm64`]); `None` off aarch64 or in older snapshots.
    #[serde(default)]
    pub timer_frequency_hz: Option<u64>,
    /// Whether the live arm64 kernel ran AArch32 code at EL0 (`personality(PER_LINUX32)`
    /// accepted, as lscpu asks it), which no file holds; `None` off aarch64 or in older
    /// snapshots.
    #[serde(default)]
    pub aarch32_el0: Option<bool>,
}

impl LiveFacts {
    /// The live-only facts of machine `m`, probed from `source`. The kept kernel machine is
    /// the one the CPU probe's `detect_arch` read first (`uname` live, the kept value in a capture), not
    /// `m.os.kernel.machine`, which prefers `/proc/sys/kernel/arch`: under qemu-user the two
    /// differ (uname "aarch64" on an x86_64 kernel), and keeping the latter made the snapshot
    /// probe as x86_64 a machine probed live as aarch64.
    pub fn from_machine(m: &crate::Machine, source: &SysRoot) -> LiveFacts {
        LiveFacts {
            cpuid: m.cpu.cpuid.clone(),
            base_page_size_bytes: m.pages.base_page_size_bytes.clone(),
            base_page_size_source: m.pages.base_page_size_source.clone(),
            binary: Some(m.os.binary.clone()),
            kernel_machine: Some(
                kernel_machine(source)
                    .map(|(m, _)| Probed::Known(m))
                    .unwrap_or_else(|| m.os.kernel.machine.clone()),
            ),
            hypervisor_signature: m.os.virtualization.known().and_then(|v| {
                v.evidence
                    .iter()
                    .find(|e| e.source == CPUID_SOURCE)
                    .map(|e| e.value.clone())
            }),
            host_id: Some(m.os.host_id.clone()),
            timer_frequency_hz: if source.is_live() {
                live_timer_frequency_hz()
            } else {
                read_live_facts(source).and_then(|f| f.timer_frequency_hz)
            },
            aarch32_el0: match m.cpu.arch {
                hwsurvey_machine::cpu::Arch::Aarch64 => {
                    m.cpu.op_modes.known().and_then(|o| o.bit32)
                }
                _ => None,
            },
        }
    }
}

/// The live facts of a capture, if it has them (never on the live machine).
pub(crate) fn read_live_facts(root: &SysRoot) -> Option<LiveFacts> {
    if root.is_live() {
        return None;
    }
    let text = root.read(LIVE_FACTS_PATH).ok()?;
    serde_json::from_str(&text).ok()
}

/// The kernel's machine name and where it came from: `uname` on the live machine, the value
/// a snapshot kept of it in [`LIVE_FACTS_PATH`] in a capture. Both are named "uname machine",
/// so that a snapshot probes exactly like the machine it was taken on.
pub(crate) fn kernel_machine(root: &SysRoot) -> Option<(String, &'static str)> {
    if root.is_live() {
        #[cfg(feature = "sys")]
        {
            let u = nix::sys::utsname::uname().ok()?;
            return Some((u.machine().to_string_lossy().into_owned(), "uname machine"));
        }
        #[cfg(not(feature = "sys"))]
        return None;
    }
    let facts = read_live_facts(root)?;
    let m = facts.kernel_machine?.known()?.clone();
    Some((m, "uname machine"))
}

/// CNTFRQ_EL0 on the live machine, Hz; `None` where the register reads 0 (firmware left it
/// unprogrammed).
#[cfg(target_arch = "aarch64")]
pub fn live_timer_frequency_hz() -> Option<u64> {
    let hz: u64;
    // SAFETY: reading CNTFRQ_EL0 has no side effect; Linux lets EL0 read it (CNTKCTL_EL1
    // EL0VCTEN is set for the vDSO), and a kernel that did not would trap it as an undefined
    // instruction only on configurations Linux does not ship.
    unsafe { std::arch::asm!("mrs {hz}, cntfrq_el0", hz = out(reg) hz, options(nomem, nostack)) };
    Some(hz).filter(|&h| h > 0)
}

/// Not aarch64: no generic timer register to read.
#[cfg(not(target_arch = "aarch64"))]
pub fn live_timer_frequency_hz() -> Option<u64> {
    None
}

//! Does the kernel run on the hardware itself, in a virtual machine, under full emulation, or in
//! a firmware partition? Figures measured in a guest measure the host's share of the hardware,
//! and under emulation (QEMU TCG) they measure the emulator: reports must say so.
//!
//! Sources, each recorded as evidence when it speaks (lscpu reads the same kind of places):
//! - `/proc/cpuinfo` `flags`: `hypervisor` (x86: CPUID leaf 1 ECX bit 31, set by every x86
//!   hypervisor that does not hide itself);
//! - CPUID leaf 0x4000_0000 (x86, read live; a snapshot keeps it in its live facts): the
//!   hypervisor's signature, e.g.
//!   `KVMKVMKVM`, `TCGTCGTCGTCG` (QEMU without KVM: full emulation), `VMwareVMware`,
//!   `Microsoft Hv`, `XenVMMXenVMM`;
//! - `/sys/hypervisor/type` (`xen`);
//! - `/sys/class/dmi/id/sys_vendor`, `product_name`, `bios_vendor` (SMBIOS Type 0/1 strings
//!   that hypervisors set: `QEMU`, `VMware, Inc.`, `Microsoft Corporation` + `Virtual
//!   Machine`, `innotek GmbH` (VirtualBox), `Xen`, `Amazon EC2`, `Google`, `Parallels`);
//! - `/proc/device-tree/hypervisor/compatible` (arm64 and others: `xen,xen`, `linux,kvm`);
//! - `/proc/device-tree/compatible` `linux,dummy-virt`: QEMU's `virt` board (arm64, riscv64),
//!   which exists only as a virtual machine (KVM or emulated: the board does not say which;
//!   on arm64 [`arm64`] tells them apart by the MIDR, the generic timer's frequency and the
//!   board's SMBIOS product name, and says when it cannot);
//! - `/proc/device-tree/ibm,partition-name` (POWER: a PowerVM logical partition, pHyp);
//! - `/proc/sysinfo` (s390: `LPAR` lines for a PR/SM partition, `VM00 Control Program`
//!   for a guest of z/VM or KVM).
//!
//! No source speaking is not proof of bare metal (a hypervisor can hide): the verdict is then
//! [`Platform::NoHypervisorSeen`], never "bare metal".

use crate::live::read_live_facts;
use crate::SysRoot;
use hwsurvey_machine::cpu::midr::Midr;

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::virt::*;

/// CPUID leaf 0x4000_0000's signature on the live machine (x86 with the hypervisor bit of
/// leaf 1; without it the leaf is not a hypervisor's).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn live_cpuid_signature() -> Option<String> {
    raw_cpuid::CpuId::new().get_hypervisor_info()?;
    // the signature is 12 bytes in EBX, ECX, EDX
    let r = raw_cpuid::native_cpuid::cpuid_count(0x4000_0000, 0);
    let bytes: Vec<u8> = [r.ebx, r.ecx, r.edx]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn live_cpuid_signature() -> Option<String> {
    None
}

/// cpu0's MIDR_EL1 and its source: `regs/identification/midr_el1` (hex), else the first record
/// of `/proc/cpuinfo` with `CPU implementer` / `CPU part`; `(None, None)` off arm64.
fn cpu0_midr(root: &SysRoot) -> (Option<Midr>, Option<String>) {
    const SYS: &str = "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1";
    if let Some(raw) = root
        .read(SYS)
        .ok()
        .and_then(|t| u64::from_str_radix(t.trim().trim_start_matches("0x"), 16).ok())
    {
        return (Some(Midr::from_raw(raw)), Some(SYS.into()));
    }
    let midr = root.read("/proc/cpuinfo").ok().and_then(|t| {
        hwsurvey_machine::cpu::cpuinfo::parse_cpuinfo(&t)
            .cpus
            .iter()
            .find_map(|c| c.midr)
    });
    let source = midr.map(|_| "/proc/cpuinfo CPU implementer, CPU part".to_string());
    (midr, source)
}

/// What the sources under `root` hold (CPUID and CNTFRQ_EL0 only on the live machine; a
/// capture's live facts keep them).
pub fn inputs(root: &SysRoot) -> VirtInputs {
    let text = |path: &str| root.read(path).ok().map(|t| t.trim().to_string());
    let (midr, midr_source) = cpu0_midr(root);
    VirtInputs {
        cpuinfo_hypervisor_flag: root
            .read("/proc/cpuinfo")
            .ok()
            .and_then(|t| cpuinfo_hypervisor_flag(&t)),
        cpuid_signature: if root.is_live() {
            live_cpuid_signature()
        } else {
            read_live_facts(root).and_then(|f| f.hypervisor_signature)
        },
        sys_hypervisor_type: text("/sys/hypervisor/type"),
        dmi_sys_vendor: text("/sys/class/dmi/id/sys_vendor"),
        dmi_product_name: text("/sys/class/dmi/id/product_name"),
        dmi_bios_vendor: text("/sys/class/dmi/id/bios_vendor"),
        dt_hypervisor_compatible: text("/proc/device-tree/hypervisor/compatible"),
        dt_compatible: text("/proc/device-tree/compatible"),
        ppc_partition_name: text("/proc/device-tree/ibm,partition-name"),
        s390_sysinfo: text("/proc/sysinfo"),
        midr,
        midr_source,
        timer_frequency_hz: if root.is_live() {
            crate::live::live_timer_frequency_hz()
        } else {
            read_live_facts(root).and_then(|f| f.timer_frequency_hz)
        },
    }
}

/// Reads the sources under `root` ([`inputs`]) and classifies.
pub fn probe(root: &SysRoot) -> Virtualization {
    classify(&inputs(root))
}

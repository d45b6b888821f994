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

use crate::cpu::midr::Midr;
use serde::{Deserialize, Serialize};

pub mod arm64;

/// The evidence source of the CPUID hypervisor signature in [`crate::virt`] (kept in a snapshot's live facts, so a capture
/// probes as the live machine did).
pub const CPUID_SOURCE: &str = "cpuid 0x40000000";

/// What the kernel runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    /// No source read shows a hypervisor (bare metal, or a hypervisor that hides itself).
    NoHypervisorSeen,
    /// A virtual machine (KVM, Xen, VMware, Hyper-V...); also QEMU's arm64 `virt` board, whose
    /// sources cannot tell KVM from emulation.
    VirtualMachine,
    /// Full-system emulation (QEMU's TCG): every figure measures the emulator.
    Emulated,
    /// A QEMU virtual machine whose sources do not tell KVM from emulation (arm64 `virt`
    /// board with a CPU model and timer that both could show): figures may measure the
    /// emulator, and reports treat them as not comparable.
    EmulationNotExcluded,
    /// A logical partition of the platform's firmware (PowerVM pHyp, s390 PR/SM).
    Partition,
}

impl Platform {
    /// Words for people: `native (no hypervisor seen)`, `virtual machine`, `full-system emulation`,
    /// `virtual machine, emulation not excluded`, `logical partition`.
    pub fn words(self) -> &'static str {
        match self {
            Platform::NoHypervisorSeen => "native (no hypervisor seen)",
            Platform::VirtualMachine => "virtual machine",
            Platform::Emulated => "full-system emulation",
            Platform::EmulationNotExcluded => "virtual machine, emulation not excluded",
            Platform::Partition => "logical partition",
        }
    }
}

/// One source that spoke, and what it said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VirtEvidence {
    /// The file (or `cpuid 0x40000000`).
    pub source: String,
    /// What it held.
    pub value: String,
}

/// The verdict with its evidence. Source: the files listed in the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Virtualization {
    /// What the kernel runs on.
    pub platform: Platform,
    /// The hypervisor's name where a source says it (`KVM`, `QEMU TCG`, `Xen`, `VMware`,
    /// `Hyper-V`, `pHyp`, `PR/SM`, `z/VM`, `VirtualBox`, `Firecracker`...).
    pub hypervisor: Option<String>,
    /// Every source that spoke, in the order read.
    pub evidence: Vec<VirtEvidence>,
}

impl Virtualization {
    /// One line: `virtual machine (KVM)`, `native (no hypervisor seen)`.
    pub fn summary(&self) -> String {
        match &self.hypervisor {
            Some(h) => format!("{} ({h})", self.platform.words()),
            None => self.platform.words().to_string(),
        }
    }
}

/// What the sources held; `None`: absent or unreadable. Filled by `hwsurvey_probe::virt::inputs`, by hand in tests.
#[derive(Debug, Clone, Default)]
pub struct VirtInputs {
    /// Whether the first `flags` line of /proc/cpuinfo lists `hypervisor` (`None`: no flags
    /// line, as on arm64).
    pub cpuinfo_hypervisor_flag: Option<bool>,
    /// CPUID leaf 0x4000_0000 signature (x86, live only).
    pub cpuid_signature: Option<String>,
    /// `/sys/hypervisor/type`.
    pub sys_hypervisor_type: Option<String>,
    /// `/sys/class/dmi/id/sys_vendor`.
    pub dmi_sys_vendor: Option<String>,
    /// `/sys/class/dmi/id/product_name`.
    pub dmi_product_name: Option<String>,
    /// `/sys/class/dmi/id/bios_vendor`.
    pub dmi_bios_vendor: Option<String>,
    /// `/proc/device-tree/hypervisor/compatible` (NUL-separated strings).
    pub dt_hypervisor_compatible: Option<String>,
    /// `/proc/device-tree/compatible` (the root node's, NUL-separated strings).
    pub dt_compatible: Option<String>,
    /// `/proc/device-tree/ibm,partition-name`.
    pub ppc_partition_name: Option<String>,
    /// `/proc/sysinfo`.
    pub s390_sysinfo: Option<String>,
    /// cpu0's MIDR_EL1 (aarch64): `regs/identification/midr_el1`, else `/proc/cpuinfo`.
    pub midr: Option<Midr>,
    /// Where [`VirtInputs::midr`] was read.
    pub midr_source: Option<String>,
    /// The generic timer's frequency, Hz (aarch64 CNTFRQ_EL0, read live; a snapshot's live
    /// facts keep it).
    pub timer_frequency_hz: Option<u64>,
}

/// The hypervisor a CPUID 0x4000_0000 signature names, and whether it emulates the CPU.
fn cpuid_hypervisor(signature: &str) -> Option<(&'static str, Platform)> {
    let s = signature.trim_matches(char::from(0)).trim();
    Some(match s {
        "TCGTCGTCGTCG" => ("QEMU TCG", Platform::Emulated),
        "KVMKVMKVM" => ("KVM", Platform::VirtualMachine),
        "VMwareVMware" => ("VMware", Platform::VirtualMachine),
        "Microsoft Hv" => ("Hyper-V", Platform::VirtualMachine),
        "XenVMMXenVMM" => ("Xen", Platform::VirtualMachine),
        "VBoxVBoxVBox" => ("VirtualBox", Platform::VirtualMachine),
        "bhyve bhyve" => ("bhyve", Platform::VirtualMachine),
        "ACRNACRNACRN" => ("ACRN", Platform::VirtualMachine),
        " lrpepyh  vr" | "prl hyperv" => ("Parallels", Platform::VirtualMachine),
        "" => return None,
        _ => ("unknown hypervisor", Platform::VirtualMachine),
    })
}

/// The hypervisor that DMI strings name, when they name one.
fn dmi_hypervisor(vendor: &str, product: &str, bios: &str) -> Option<&'static str> {
    let has = |s: &str, needle: &str| s.to_ascii_lowercase().contains(needle);
    let all = [vendor, product, bios];
    if all.iter().any(|s| has(s, "vmware")) {
        Some("VMware")
    } else if has(vendor, "microsoft") && has(product, "virtual machine") {
        Some("Hyper-V")
    } else if all
        .iter()
        .any(|s| has(s, "innotek") || has(s, "virtualbox"))
    {
        Some("VirtualBox")
    } else if has(vendor, "xen") || has(bios, "xen") {
        Some("Xen")
    } else if has(vendor, "amazon ec2") {
        Some("Amazon EC2 (Nitro, KVM)")
    } else if has(vendor, "google") && has(product, "compute engine") {
        Some("Google Compute Engine (KVM)")
    } else if has(vendor, "parallels") {
        Some("Parallels")
    } else if has(vendor, "firecracker") || has(product, "firecracker") {
        Some("Firecracker")
    } else if all.iter().any(|s| has(s, "qemu") || has(s, "bochs")) || has(product, "kvm") {
        Some("QEMU/KVM")
    } else {
        None
    }
}

/// Records a source's verdict: the first platform and the first hypervisor name found stand.
fn found(p: Platform, h: Option<&str>, platform: &mut Platform, hv: &mut Option<String>) {
    if *platform == Platform::NoHypervisorSeen {
        *platform = p;
    }
    if hv.is_none() {
        *hv = h.map(str::to_string);
    }
}

/// Decides from `inputs`. Precedence: a CPUID signature (names the hypervisor, and tells TCG
/// emulation from KVM), then the partition sources (POWER, s390), then the other sources.
pub fn classify(inputs: &VirtInputs) -> Virtualization {
    let mut evidence = Vec::new();
    let mut say = |source: &str, value: &str| {
        evidence.push(VirtEvidence {
            source: source.to_string(),
            value: value.trim_matches(char::from(0)).trim().to_string(),
        })
    };
    let mut platform = Platform::NoHypervisorSeen;
    let mut hypervisor: Option<String> = None;
    if let Some(sig) = &inputs.cpuid_signature {
        if let Some((name, p)) = cpuid_hypervisor(sig) {
            say(CPUID_SOURCE, sig);
            found(p, Some(name), &mut platform, &mut hypervisor);
        }
    }
    if let Some(name) = &inputs.ppc_partition_name {
        say("/proc/device-tree/ibm,partition-name", name);
        found(
            Platform::Partition,
            Some("pHyp"),
            &mut platform,
            &mut hypervisor,
        );
    }
    if let Some(info) = &inputs.s390_sysinfo {
        let field = |key: &str| {
            info.lines()
                .find_map(|l| {
                    l.strip_prefix(key)
                        .map(|v| v.trim_start_matches(':').trim())
                })
                .filter(|v| !v.is_empty())
        };
        if let Some(cp) = field("VM00 Control Program") {
            say("/proc/sysinfo", &format!("VM00 Control Program: {cp}"));
            let name = if cp.contains("z/VM") { "z/VM" } else { "KVM" };
            found(
                Platform::VirtualMachine,
                Some(name),
                &mut platform,
                &mut hypervisor,
            );
        } else if let Some(n) = field("LPAR Name") {
            say("/proc/sysinfo", &format!("LPAR Name: {n}"));
            found(
                Platform::Partition,
                Some("PR/SM"),
                &mut platform,
                &mut hypervisor,
            );
        }
    }
    if let Some(t) = &inputs.sys_hypervisor_type {
        say("/sys/hypervisor/type", t);
        let name = if t.trim() == "xen" {
            "Xen"
        } else {
            "unknown hypervisor"
        };
        found(
            Platform::VirtualMachine,
            Some(name),
            &mut platform,
            &mut hypervisor,
        );
    }
    if let Some(c) = &inputs.dt_hypervisor_compatible {
        let c = c.replace(char::from(0), " ");
        say("/proc/device-tree/hypervisor/compatible", &c);
        let name = if c.contains("xen") {
            "Xen"
        } else if c.contains("kvm") {
            "KVM"
        } else {
            "unknown hypervisor"
        };
        found(
            Platform::VirtualMachine,
            Some(name),
            &mut platform,
            &mut hypervisor,
        );
    }
    if let Some(c) = &inputs.dt_compatible {
        if c.split(char::from(0))
            .any(|s| s.trim() == "linux,dummy-virt")
        {
            say("/proc/device-tree/compatible", "linux,dummy-virt");
            found(
                Platform::VirtualMachine,
                Some("QEMU virt board"),
                &mut platform,
                &mut hypervisor,
            );
        }
    }
    if inputs.cpuinfo_hypervisor_flag == Some(true) {
        say("/proc/cpuinfo flags", "hypervisor");
        found(
            Platform::VirtualMachine,
            None,
            &mut platform,
            &mut hypervisor,
        );
    }
    let vendor = inputs.dmi_sys_vendor.as_deref().unwrap_or("");
    let product = inputs.dmi_product_name.as_deref().unwrap_or("");
    let bios = inputs.dmi_bios_vendor.as_deref().unwrap_or("");
    if let Some(name) = dmi_hypervisor(vendor, product, bios) {
        say(
            "/sys/class/dmi/id/sys_vendor, product_name, bios_vendor",
            &format!("{vendor} / {product} / {bios}"),
        );
        found(
            Platform::VirtualMachine,
            Some(name),
            &mut platform,
            &mut hypervisor,
        );
    }
    // arm64: the virt board (and QEMU's DMI strings) do not tell KVM from TCG; its MIDR, timer
    // and SMBIOS product name may
    // (only where an arm64 signal is there, and no stronger source decided: CPUID, partition)
    let arm64_inputs = inputs.midr.is_some()
        || inputs.timer_frequency_hz.is_some()
        || inputs
            .dt_compatible
            .as_deref()
            .is_some_and(|c| c.contains("linux,dummy-virt"));
    let undecided = matches!(
        platform,
        Platform::NoHypervisorSeen | Platform::VirtualMachine
    );
    let qemu_seen = hypervisor.as_deref().is_some_and(|h| h.starts_with("QEMU"));
    let arm = if arm64_inputs && undecided {
        arm64::decide(inputs, qemu_seen, platform != Platform::NoHypervisorSeen)
    } else {
        arm64::Decision::default()
    };
    for (source, value) in &arm.evidence {
        say(source, value);
    }
    match arm.platform {
        Some(Platform::Emulated) | Some(Platform::EmulationNotExcluded) => {
            platform = arm.platform.unwrap_or(platform);
            if let Some(h) = arm.hypervisor {
                hypervisor = Some(h.to_string());
            }
        }
        Some(p) => {
            platform = p;
            if let (Some(h), Some(board)) = (arm.hypervisor, &hypervisor) {
                hypervisor = Some(format!("{h}, {board}"));
            }
        }
        None => {}
    }
    Virtualization {
        platform,
        hypervisor,
        evidence,
    }
}

/// Whether the first `flags` line of /proc/cpuinfo lists `hypervisor`; `None` without one.
pub fn cpuinfo_hypervisor_flag(cpuinfo: &str) -> Option<bool> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("flags") && l.contains(':'))
        .map(|l| {
            l.split_once(':')
                .map(|(_, v)| v.split_whitespace().any(|f| f == "hypervisor"))
                .unwrap_or(false)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcg_signature_is_emulation_and_kvm_is_a_virtual_machine() {
        let v = classify(&VirtInputs {
            cpuid_signature: Some("TCGTCGTCGTCG".into()),
            cpuinfo_hypervisor_flag: Some(true),
            dmi_sys_vendor: Some("QEMU".into()),
            ..Default::default()
        });
        assert_eq!(v.platform, Platform::Emulated);
        assert_eq!(v.hypervisor.as_deref(), Some("QEMU TCG"));
        assert_eq!(v.evidence.len(), 3);
        let v = classify(&VirtInputs {
            cpuid_signature: Some("KVMKVMKVM\0\0\0".into()),
            ..Default::default()
        });
        assert_eq!(v.platform, Platform::VirtualMachine);
        assert_eq!(v.summary(), "virtual machine (KVM)");
    }
    #[test]
    fn dmi_strings_name_the_hypervisor() {
        let dmi = |v: &str, p: &str| {
            classify(&VirtInputs {
                dmi_sys_vendor: Some(v.into()),
                dmi_product_name: Some(p.into()),
                ..Default::default()
            })
        };
        assert_eq!(
            dmi("VMware, Inc.", "VMware7,1").hypervisor.as_deref(),
            Some("VMware")
        );
        assert_eq!(
            dmi("Microsoft Corporation", "Virtual Machine")
                .hypervisor
                .as_deref(),
            Some("Hyper-V")
        );
        assert_eq!(
            dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)")
                .hypervisor
                .as_deref(),
            Some("QEMU/KVM")
        );
        // a real server's DMI names no hypervisor
        let dell = dmi("Dell Inc.", "PowerEdge R640");
        assert_eq!(dell.platform, Platform::NoHypervisorSeen);
        assert!(dell.evidence.is_empty());
        assert_eq!(dell.summary(), "native (no hypervisor seen)");
        // Microsoft hardware that is not a VM
        assert_eq!(
            dmi("Microsoft Corporation", "Surface Pro").platform,
            Platform::NoHypervisorSeen
        );
    }
    #[test]
    fn s390_sysinfo_tells_an_lpar_from_a_zvm_guest() {
        let lpar = classify(&VirtInputs {
            s390_sysinfo: Some("LPAR Number:          21\nLPAR Name:            SYS1\n".into()),
            ..Default::default()
        });
        assert_eq!(lpar.platform, Platform::Partition);
        assert_eq!(lpar.hypervisor.as_deref(), Some("PR/SM"));
        let guest = classify(&VirtInputs {
            s390_sysinfo: Some(
                "LPAR Name:            SYS1\nVM00 Name:            LINUX1\nVM00 Control Program: z/VM    6.4.0\n"
                    .into(),
            ),
            ..Default::default()
        });
        assert_eq!(guest.platform, Platform::VirtualMachine);
        assert_eq!(guest.hypervisor.as_deref(), Some("z/VM"));
    }
    #[test]
    fn qemu_virt_board_by_its_device_tree() {
        let v = classify(&VirtInputs {
            dt_compatible: Some("linux,dummy-virt\0".into()),
            ..Default::default()
        });
        // the board alone does not tell KVM from TCG (arm64::tests decide with more signals)
        assert_eq!(
            v.summary(),
            "virtual machine, emulation not excluded (QEMU virt board)"
        );
        let board = classify(&VirtInputs {
            dt_compatible: Some("hisilicon,hi1620\0".into()),
            ..Default::default()
        });
        assert_eq!(board.platform, Platform::NoHypervisorSeen);
    }
    #[test]
    fn cpuinfo_flag_line() {
        assert_eq!(
            cpuinfo_hypervisor_flag("processor\t: 0\nflags\t\t: fpu vme hypervisor lahf_lm\n"),
            Some(true)
        );
        assert_eq!(cpuinfo_hypervisor_flag("flags\t\t: fpu vme\n"), Some(false));
        assert_eq!(
            cpuinfo_hypervisor_flag("processor\t: 0\nFeatures\t: fp asimd\n"),
            None
        );
    }
}

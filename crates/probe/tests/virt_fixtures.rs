//! Native, virtual machine or partition, on real captures (../shared/fixtures, facts in its
//! README and the peers' lscpu output: "Hypervisor vendor: pHyp" on the POWER7, "Hypervisor:
//! PR/SM" on the z196 LPAR) and on this machine.

use hwsurvey_probe::virt::{self, Platform};
use hwsurvey_probe::SysRoot;
use hwsurvey_testkit::shared;

fn of(fixture: &str) -> Option<virt::Virtualization> {
    let shared = shared()?;
    let dir = shared.join("fixtures").join(fixture);
    let archive = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(".tar."))
        .unwrap_or_else(|| panic!("{}: no archive", dir.display()));
    let (_tmp, root) = hwsurvey_testkit::extract(&archive);
    Some(virt::probe(&SysRoot::new(&root)))
}

#[test]
fn power7_is_a_powervm_partition() {
    let Some(v) = of("ppc64-power7-64cpu-memoryless-node") else {
        return;
    };
    assert_eq!(v.platform, Platform::Partition);
    assert_eq!(v.hypervisor.as_deref(), Some("pHyp"));
    assert_eq!(v.evidence[0].source, "/proc/device-tree/ibm,partition-name");
}

#[test]
fn z196_is_a_pr_sm_lpar() {
    let Some(v) = of("s390x-z196-lpar-offline-books") else {
        return;
    };
    assert_eq!(v.platform, Platform::Partition);
    assert_eq!(v.hypervisor.as_deref(), Some("PR/SM"));
    assert_eq!(v.evidence[0].source, "/proc/sysinfo");
}

#[test]
fn firecracker_guest_is_a_virtual_machine_by_its_cpu_flag() {
    let Some(v) = of("x86_64-firecracker-guest-epyc-2vcpu-thp-mthp") else {
        return;
    };
    assert_eq!(v.platform, Platform::VirtualMachine);
    // a snapshot has no CPUID and this guest no DMI: the flag says VM, nothing names it
    assert_eq!(v.hypervisor, None);
    assert_eq!(v.evidence.len(), 1);
    assert_eq!(v.evidence[0].source, "/proc/cpuinfo flags");
}

#[test]
fn bare_metal_servers_show_no_hypervisor() {
    for fixture in [
        "x86_64-amd-epyc7451-2s-8numa",
        "x86_64-intel-xeon-x7550-4s-numa-holes",
        "aarch64-hisilicon-kunpeng920-2s-4numa-clusters",
    ] {
        let Some(v) = of(fixture) else {
            return;
        };
        assert_eq!(v.platform, Platform::NoHypervisorSeen, "{fixture}: {v:?}");
        assert!(v.evidence.is_empty(), "{fixture}: {v:?}");
    }
}

/// This machine is a KVM guest (Firecracker): on x86 the live probe reads CPUID 0x40000000,
/// which names it; a snapshot of it would not.
#[test]
fn this_machine_agrees_with_its_cpuinfo_flag() {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let v = virt::probe(&SysRoot::live());
    match virt::cpuinfo_hypervisor_flag(&cpuinfo) {
        Some(true) => assert_ne!(v.platform, Platform::NoHypervisorSeen, "{v:?}"),
        _ => println!("SKIPPED: no x86 flags line here (or no hypervisor flag): {v:?}"),
    }
    if hwsurvey_testkit::under_qemu_user() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if virt::cpuinfo_hypervisor_flag(&cpuinfo) == Some(true) {
        assert!(v.hypervisor.is_some(), "CPUID names the hypervisor: {v:?}");
        assert_eq!(v.evidence[0].source, "cpuid 0x40000000");
    }
}

/// Real arm64 hardware is never called emulated, whatever its generic timer's frequency: the
/// captures' own sources (device tree, MIDR, DMI strings of the dmidecode text), with each
/// timer frequency QEMU TCG programs (62.5 MHz, 1 GHz) and a host's (25 MHz).
#[test]
fn real_arm64_hardware_is_never_emulated_at_any_timer_frequency() {
    let Some(shared) = shared() else {
        return;
    };
    let fixtures = shared.join("fixtures");
    let mut machines: Vec<(String, virt::VirtInputs)> = Vec::new();
    for fixture in [
        "aarch64-hisilicon-kunpeng920-2s-4numa-clusters",
        "aarch64-biglittle-a510-a710-a715-x3",
    ] {
        let dir = fixtures.join(fixture);
        let archive = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().contains(".tar."))
            .unwrap_or_else(|| panic!("{}: no archive", dir.display()));
        let (_tmp, root) = hwsurvey_testkit::extract(&archive);
        machines.push((fixture.into(), virt::inputs(&SysRoot::new(&root))));
    }
    // dmidecode text: SMBIOS Type 0 and 1 as the kernel's dmi/id files hold them
    for fixture in [
        "aarch64-ampere-altra-q80-2s",
        "aarch64-cavium-thunderx2-gigabyte-r181-2s",
    ] {
        let text = std::fs::read_to_string(fixtures.join(fixture).join("dmidecode.txt")).unwrap();
        let field = |section: &str, key: &str| {
            let start = text.find(section)?;
            text[start..]
                .lines()
                .find_map(|l| l.trim().strip_prefix(key))
                .map(|v| v.trim().to_string())
        };
        machines.push((
            fixture.into(),
            virt::VirtInputs {
                dmi_sys_vendor: field("System Information", "Manufacturer:"),
                dmi_product_name: field("System Information", "Product Name:"),
                dmi_bios_vendor: field("BIOS Information", "Vendor:"),
                ..Default::default()
            },
        ));
    }
    for (fixture, inputs) in machines {
        for hz in [
            None,
            Some(62_500_000),
            Some(1_000_000_000),
            Some(25_000_000),
        ] {
            let v = virt::classify(&virt::VirtInputs {
                timer_frequency_hz: hz,
                ..inputs.clone()
            });
            assert_eq!(
                v.platform,
                Platform::NoHypervisorSeen,
                "{fixture} at {hz:?} Hz: {v:?}"
            );
        }
    }
}

//! PCIe, block devices and OS settings: a real capture, trees written from known facts,
//! and the live machine.

use std::path::Path;

use hwsurvey_model::{CpuSet, Probed, Unknown};
use hwsurvey_probe::io::{self, BlockKind};
use hwsurvey_probe::os::{self, CgroupVersion, CpuMax};
use hwsurvey_probe::{memory, SysRoot};
use hwsurvey_testkit::shared;
use hwsurvey_testkit::write;

fn symlink(root: &Path, link: &str, target: &str) {
    let host = root.join(link.trim_start_matches('/'));
    std::fs::create_dir_all(host.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, host).unwrap();
}

/// The I/O probe of the 2-socket Intel capture (137 PCI functions, a 2013 kernel), with the
/// folder it was extracted to; `None` (after the SKIPPED line) without ../shared.
fn intel_2s_capture_io() -> Option<(tempfile::TempDir, io::Io)> {
    let archive = shared()?.join(
        "fixtures/x86_64-intel-2s-2numa-dmi-type17-raw/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2",
    );
    let (dir, root) = hwsurvey_testkit::extract(&archive);
    // no PCI ID database: the functions by class and ids (tests/pci_names.rs names them)
    let no_db = dir.path().join("no/pci.ids");
    let io = io::probe_with_pci_ids(&SysRoot::new(&root), &[&no_db]);
    Some((dir, io))
}

#[test]
fn intel_2s_capture_pci_and_sata_disk() {
    let Some((_dir, io)) = intel_2s_capture_io() else {
        return;
    };
    let pci = io.pci.known().unwrap();
    assert_eq!(pci.len(), 137);
    let nvme = pci.iter().find(|d| d.address == "0000:00:02.0").unwrap();
    assert_eq!(nvme.class_code, Probed::Known(0x010802));
    assert_eq!(nvme.class_name.as_deref(), Some("NVMe controller"));
    assert_eq!(nvme.vendor_id, Probed::Known(0x8086));
    assert_eq!(nvme.device_id, Probed::Known(0x0953));
    assert_eq!(nvme.numa_node, Probed::Known(None)); // "-1"
    assert_eq!(nvme.link, None); // a 2013 kernel: no link files
    let sata = pci.iter().find(|d| d.address == "0000:00:1f.2").unwrap();
    assert_eq!(sata.numa_node, Probed::Known(Some(0)));

    let block = io.block.known().unwrap();
    let sda = block.iter().find(|d| d.name == "sda").unwrap();
    assert_eq!(sda.kind, BlockKind::Scsi);
    assert_eq!(sda.model.as_deref(), Some("ST9250610NS"));
    assert_eq!(sda.size_bytes, Probed::Known(488_397_168 * 512));
    assert_eq!(sda.rotational, Probed::Known(true));
    assert_eq!(sda.nr_requests, Probed::Known(128));
    // Through host4/target4:0:0 up to the AHCI function 0000:00:1f.2 on node 0.
    assert_eq!(sda.numa_node, Probed::Known(Some(0)));
    assert!(block
        .iter()
        .filter(|d| d.name.starts_with("loop") || d.name.starts_with("ram"))
        .all(|d| d.kind == BlockKind::Virtual));
    let text = io::summary(&io);
    assert!(
        text.contains("NVMe controller [8086:0953], no node"),
        "{text}"
    );
    assert!(text.contains("block sda Scsi ST9250610NS"), "{text}");
}

#[test]
fn pcie_links_and_nvme_namespace() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    let r = dir.path();
    let dev = "/sys/devices/pci0000:00/0000:00:03.0";
    for (f, v) in [
        ("class", "0x010802"),
        ("vendor", "0x144d"),
        ("device", "0xa808"),
        ("numa_node", "1"),
        ("current_link_speed", "5.0 GT/s PCIe"),
        ("current_link_width", "4"),
        ("max_link_speed", "8.0 GT/s PCIe"),
        ("max_link_width", "8"),
    ] {
        write(r, &format!("{dev}/{f}"), v);
    }
    symlink(
        r,
        "/sys/bus/pci/devices/0000:00:03.0",
        "../../../devices/pci0000:00/0000:00:03.0",
    );
    let gpu = "/sys/devices/pci0000:00/0000:00:04.0";
    for (f, v) in [
        ("class", "0x030000"),
        ("vendor", "0x10de"),
        ("device", "0x1db6"),
        ("numa_node", "-1"),
        ("current_link_speed", "Unknown"),
        ("current_link_width", "0"),
        ("max_link_speed", "16.0 GT/s PCIe"),
        ("max_link_width", "16"),
    ] {
        write(r, &format!("{gpu}/{f}"), v);
    }
    symlink(
        r,
        "/sys/bus/pci/devices/0000:00:04.0",
        "../../../devices/pci0000:00/0000:00:04.0",
    );
    let ns = format!("{dev}/nvme/nvme0/nvme0n1");
    write(r, &format!("{ns}/size"), "1953525168");
    write(r, &format!("{ns}/queue/rotational"), "0");
    write(r, &format!("{ns}/queue/nr_requests"), "1023");
    write(
        r,
        &format!("{dev}/nvme/nvme0/model"),
        "Samsung SSD 970 EVO Plus 1TB   ",
    );
    symlink(r, &format!("{ns}/device"), "../../nvme0");
    symlink(
        r,
        "/sys/block/nvme0n1",
        "../devices/pci0000:00/0000:00:03.0/nvme/nvme0/nvme0n1",
    );

    let io = io::probe(&SysRoot::new(r));
    let pci = io.pci.known().unwrap();
    let l = pci[0].link.as_ref().unwrap();
    assert_eq!(l.current_width_lanes, Probed::Known(4));
    assert_eq!(l.current_speed.known().unwrap().generation, 2);
    assert_eq!(
        l.current_bandwidth_bytes_per_s,
        Probed::Known(2_000_000_000)
    );
    assert_eq!(l.max_bandwidth_bytes_per_s, Probed::Known(7_876_923_076));
    assert_eq!(
        (l.below_max_speed, l.below_max_width),
        (Some(true), Some(true))
    );
    assert_eq!(pci[0].numa_node, Probed::Known(Some(1)));
    let g = pci[1].link.as_ref().unwrap();
    let Probed::Unknown(Unknown::Invalid { path, .. }) = &g.current_speed else {
        panic!("{:?}", g.current_speed)
    };
    assert_eq!(path, "/sys/bus/pci/devices/0000:00:04.0/current_link_speed");
    assert!(g.current_width_lanes.known().is_none());
    assert!(g.current_bandwidth_bytes_per_s.known().is_none());
    assert_eq!(g.max_bandwidth_bytes_per_s, Probed::Known(31_507_692_307));
    assert_eq!(g.below_max_speed, None);
    assert_eq!(pci[1].numa_node, Probed::Known(None));

    let b = &io.block.known().unwrap()[0];
    assert_eq!(b.kind, BlockKind::Nvme);
    assert_eq!(b.size_bytes, Probed::Known(1_953_525_168 * 512));
    assert_eq!(b.rotational, Probed::Known(false));
    assert_eq!(b.nr_requests, Probed::Known(1023));
    assert_eq!(b.model.as_deref(), Some("Samsung SSD 970 EVO Plus 1TB"));
    assert_eq!(b.numa_node, Probed::Known(Some(1)));
    let text = io::summary(&io);
    assert!(
        text.contains("link Gen2 5.0 GT/s x4 (2.00 GB/s/dir) of max Gen3 8.0 GT/s x8 (7.88 GB/s/dir) (below max)"),
        "{text}"
    );
}

#[test]
fn thunderx2_cmdline_isolation() {
    let Some(shared) = shared() else {
        return;
    };
    let text = std::fs::read_to_string(
        shared.join("fixtures/aarch64-cavium-thunderx2-gigabyte-r181-2s/proc-cmdline.txt"),
    )
    .unwrap();
    let c = os::parse_cmdline(&text);
    let want: CpuSet = "1-27,29-55".parse().unwrap();
    let iso = c.isolcpus.unwrap().known().cloned().unwrap();
    assert_eq!(iso.cpus, want);
    assert_eq!(iso.cpus.len(), 54);
    assert!(iso.flags.is_empty());
    assert_eq!(c.nohz_full, Some(Probed::Known(want.clone())));
    assert_eq!(c.rcu_nocbs, Some(Probed::Known(want)));
    assert!(c
        .params
        .contains(&("processor.max_cstate".to_string(), Some("1".to_string()))));
    assert!(c.params.contains(&("nosoftlockup".to_string(), None)));

    let c = os::parse_cmdline("isolcpus=nohz,domain,managed_irq,2-5,8 nohz_full=x-1\n");
    let iso = c.isolcpus.unwrap().known().cloned().unwrap();
    assert_eq!(iso.flags, ["nohz", "domain", "managed_irq"]);
    assert_eq!(iso.cpus.to_list_string(), "2-5,8");
    let Some(Probed::Unknown(Unknown::Invalid { path, .. })) = c.nohz_full else {
        panic!()
    };
    assert_eq!(path, "/proc/cmdline nohz_full=");
}

#[test]
fn os_settings_from_a_tree() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    let r = dir.path();
    write(r, "/proc/sys/kernel/osrelease", "6.1.0-18-arm64");
    write(r, "/proc/sys/kernel/version", "#1 SMP Debian 6.1.76-1");
    write(r, "/proc/sys/kernel/arch", "aarch64");
    write(
        r,
        "/etc/os-release",
        "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nID=debian",
    );
    write(r, "/proc/cmdline", "root=/dev/sda1 isolcpus=4-7");
    let pol = "/sys/devices/system/cpu/cpufreq/policy0";
    for (f, v) in [
        ("related_cpus", "0 1 2 3 \n"),
        ("scaling_driver", "cppc_cpufreq"),
        ("scaling_governor", "schedutil"),
        ("scaling_min_freq", "1000000"),
        ("scaling_max_freq", "2800000"),
        ("cpuinfo_min_freq", "1000000"),
        ("cpuinfo_max_freq", "3000000"),
    ] {
        write(r, &format!("{pol}/{f}"), v);
    }
    write(r, "/sys/devices/system/cpu/smt/control", "notsupported");
    write(r, "/sys/devices/system/cpu/smt/active", "0");
    write(r, "/proc/sys/kernel/numa_balancing", "1");
    write(r, "/sys/kernel/mm/ksm/run", "0");
    write(
        r,
        "/sys/devices/system/cpu/vulnerabilities/spectre_v2",
        "Vulnerable",
    );
    write(
        r,
        "/sys/devices/system/cpu/vulnerabilities/meltdown",
        "Not affected",
    );
    write(r, "/proc/self/cgroup", "0::/user.slice/job.scope");
    write(
        r,
        "/sys/fs/cgroup/user.slice/job.scope/cpu.max",
        "50000 100000",
    );
    write(
        r,
        "/sys/fs/cgroup/user.slice/job.scope/cpuset.cpus.effective",
        "0-3",
    );
    write(
        r,
        "/sys/fs/cgroup/user.slice/job.scope/memory.max",
        "4294967296",
    );

    let o = os::probe(&SysRoot::new(r));
    assert_eq!(o.kernel.release, Probed::Known("6.1.0-18-arm64".into()));
    assert_eq!(o.kernel.machine, Probed::Known("aarch64".into()));
    let d = o.distro.known().unwrap();
    assert_eq!(d.id.as_deref(), Some("debian"));
    assert_eq!(
        d.pretty_name.as_deref(),
        Some("Debian GNU/Linux 12 (bookworm)")
    );
    let p = &o.cpufreq.known().unwrap()[0];
    assert_eq!(p.governor, Probed::Known("schedutil".into()));
    assert_eq!(p.scaling_max_khz, Probed::Known(2_800_000));
    assert_eq!(p.cpuinfo_max_khz, Probed::Known(3_000_000));
    assert_eq!(p.cpus.known().unwrap().len(), 4);
    let s = o.smt.known().unwrap();
    assert_eq!(
        (s.control.as_str(), &s.active),
        ("notsupported", &Probed::Known(false))
    );
    assert_eq!(o.numa_balancing, Probed::Known(1));
    assert_eq!(o.ksm_run, Probed::Known(0));
    let v = o.vulnerabilities.known().unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(v[1].name, "spectre_v2");
    let c = o.cgroup.known().unwrap();
    assert_eq!(c.cpu_version, Some(CgroupVersion::V2));
    assert_eq!(
        c.cpu_max,
        Probed::Known(CpuMax {
            quota_us: Some(50_000),
            period_us: 100_000,
            // the one walk names the file, also in a tree without mountinfo nor
            // cgroup.controllers (a second reader of the process's own cpu.max left it out)
            source: Some("cgroup v2 cpu.max (/sys/fs/cgroup/user.slice/job.scope/cpu.max)".into()),
        })
    );
    assert_eq!(c.cpuset_cpus.known().unwrap().to_list_string(), "0-3");
    assert_eq!(c.memory_max_bytes, Probed::Known(Some(4 << 30)));
    // A snapshot carries no running binary.
    assert!(o.binary.known().is_none());
    let text = os::summary(&o);
    assert!(text.contains("vulnerable: spectre_v2"), "{text}");
    assert!(text.contains("cgroup cpu 50000/100000 us"), "{text}");

    // cgroup v1 with no limits, and a corrupt quota named.
    let dir = hwsurvey_testkit::scratch_tempdir();
    let r = dir.path();
    write(
        r,
        "/proc/self/cgroup",
        "4:memory:/job\n3:cpuset:/\n1:cpu,cpuacct:/\n0::/",
    );
    write(r, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1");
    write(r, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000");
    write(r, "/sys/fs/cgroup/cpuset/cpuset.cpus", "0-1");
    write(
        r,
        "/sys/fs/cgroup/memory/job/memory.limit_in_bytes",
        "9223372036854771712",
    );
    let c = os::probe(&SysRoot::new(r)).cgroup.known().cloned().unwrap();
    assert_eq!(c.cpu_version, Some(CgroupVersion::V1));
    assert_eq!(
        c.cpu_max,
        Probed::Known(CpuMax {
            quota_us: None,
            period_us: 100_000,
            source: None,
        })
    );
    assert_eq!(c.cpuset_cpus.known().unwrap().len(), 2);
    assert_eq!(c.memory_max_bytes, Probed::Known(None));
    write(r, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "lots");
    let c = os::probe(&SysRoot::new(r)).cgroup.known().cloned().unwrap();
    assert!(c
        .cpu_max
        .why_unknown()
        .unwrap()
        .to_string()
        .contains("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us"));
}

#[test]
fn empty_root_never_panics_and_says_why() {
    let dir = hwsurvey_testkit::scratch_tempdir();
    let root = SysRoot::new(dir.path());
    let o = os::probe(&root);
    assert_eq!(
        o.kernel.release,
        Probed::Unknown(Unknown::Missing {
            path: "/proc/sys/kernel/osrelease".into()
        })
    );
    let i = io::probe(&root);
    assert_eq!(
        i.pci,
        Probed::Unknown(Unknown::Missing {
            path: "/sys/bus/pci/devices".into()
        })
    );
    let _ = (os::summary(&o), io::summary(&i));
}

#[test]
fn live_machine() {
    let root = SysRoot::live();
    let o = os::probe(&root);
    assert!(o.kernel.release.known().is_some(), "{:?}", o.kernel.release);
    let b = o.binary.known().expect("/proc/self/exe is an ELF file");
    assert_eq!(b.class_bits as usize, 8 * std::mem::size_of::<usize>());
    #[cfg(target_arch = "x86_64")]
    {
        assert_eq!(b.e_machine, 62);
        if o.kernel.machine.known().map(String::as_str) == Some("x86_64") {
            assert!(o.binary_vs_kernel.known().unwrap().native);
        }
    }
    // Under qemu-user on an x86_64 host (the aarch64 and sparc64 suites of scripts/test),
    // uname reports the emulated machine; the kernel's own /proc/sys/kernel/arch does not,
    // and the emulation must show.
    #[cfg(not(target_arch = "x86_64"))]
    if o.kernel.machine.known().map(String::as_str) == Some("x86_64") {
        assert!(!o.binary_vs_kernel.known().unwrap().native);
    }
    let m = memory::probe(&root);
    if !Path::new("/sys/firmware/dmi").exists() {
        assert!(m.smbios.known().is_none());
    }
    assert!(m.meminfo.known().unwrap().mem_total_bytes > 0);
    let text = format!(
        "{}{}{}",
        memory::summary(&m),
        io::summary(&io::probe(&root)),
        os::summary(&o)
    );
    assert!(text.contains("MemTotal"), "{text}");
}

/// The PCIe tree of the 2-socket Intel capture (a 2013 kernel: no link files, config space
/// cut at 64 bytes, so roles come from the tree): root ports on both root complexes, the
/// Ethernet functions behind 0000:00:01.1, the coprocessor behind 0000:80:03.0 on the second
/// socket, a PCIe-to-PCI bridge (ASPEED 1a03:1150) with the VGA function behind it.
#[test]
fn intel_2s_capture_pcie_tree_roles_and_paths() {
    use hwsurvey_probe::pcie::PcieRole;
    let Some((_dir, io)) = intel_2s_capture_io() else {
        return;
    };
    let pci = io.pci.known().unwrap();
    let dev = |a: &str| pci.iter().find(|d| d.address == a).unwrap();
    let roots: Vec<&str> = pci
        .iter()
        .filter(|d| d.role == Some(PcieRole::RootPort))
        .map(|d| d.address.as_str())
        .collect();
    assert_eq!(
        roots,
        [
            "0000:00:01.0",
            "0000:00:01.1",
            "0000:00:11.0",
            "0000:00:1c.0",
            "0000:00:1e.0",
            "0000:80:02.0",
            "0000:80:02.2",
            "0000:80:03.0"
        ]
    );
    assert_eq!(dev("0000:04:00.0").role, Some(PcieRole::Bridge));
    assert_eq!(dev("0000:04:00.0").parent.as_deref(), Some("0000:00:1c.0"));
    assert_eq!(dev("0000:05:00.0").parent.as_deref(), Some("0000:04:00.0"));
    assert_eq!(dev("0000:05:00.0").role, Some(PcieRole::Endpoint));
    assert_eq!(dev("0000:02:00.3").parent.as_deref(), Some("0000:00:01.1"));
    assert_eq!(dev("0000:00:02.0").parent, None);
    assert_eq!(
        dev("0000:83:00.0").root_complex.as_deref(),
        Some("pci0000:80")
    );
    let paths: Vec<(&str, Vec<&str>)> = io
        .pcie_paths
        .iter()
        .map(|p| {
            (
                p.endpoint.as_str(),
                p.via.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        paths,
        [
            ("0000:02:00.0", vec!["0000:00:01.1"]),
            ("0000:02:00.3", vec!["0000:00:01.1"]),
            ("0000:05:00.0", vec!["0000:04:00.0", "0000:00:1c.0"]),
            ("0000:82:00.0", vec!["0000:80:02.2"]),
            ("0000:83:00.0", vec!["0000:80:03.0"]),
        ]
    );
    // no link files: every ceiling unknown, named so; lanes in use unknown, not 0
    let mic = io
        .pcie_paths
        .iter()
        .find(|p| p.endpoint == "0000:83:00.0")
        .unwrap();
    assert_eq!(mic.narrowest, None);
    assert_eq!(mic.unknown_links, ["0000:83:00.0"]);
    let rcs: Vec<_> = io
        .root_complexes
        .iter()
        .map(|r| {
            (
                r.root_complex.as_str(),
                r.numa_node,
                r.root_ports,
                r.root_ports_linked,
                r.lanes_in_use,
            )
        })
        .collect();
    assert_eq!(
        rcs,
        [
            ("pci0000:00", Some(0), 5, 0, None),
            ("pci0000:80", Some(1), 3, 0, None)
        ]
    );
    let text = io::summary(&io);
    assert!(
        text.contains("root complex pci0000:80 (node 1): 3 root ports, 0 linked, lanes in use unknown (no link width known)"),
        "{text}"
    );
    assert!(
        text.contains("path 0000:05:00.0 > 0000:04:00.0 > 0000:00:1c.0: ceiling unknown"),
        "{text}"
    );
    assert!(!text.contains("not listed"), "{text}");
}

/// The seed story's platform: four x4 Gen3 NVMe drives behind one switch whose x8 Gen3
/// uplink caps them at 7.88 GB/s together (2:1), and a fifth drive on its own root port,
/// trained at Gen2: its own link is its ceiling, below its maximum.
#[test]
fn switch_uplink_shared_by_four_drives_is_their_ceiling() {
    use hwsurvey_probe::pcie::PcieRole;
    let dir = hwsurvey_testkit::scratch_tempdir();
    let r = dir.path();
    hwsurvey_testkit::pcie_switch_tree(r);

    // no PCI ID database: the lines below hold the functions by class and ids
    let no_db = r.join("no/pci.ids");
    let io = io::probe_with_pci_ids(&SysRoot::new(r), &[&no_db]);
    let pci = io.pci.known().unwrap();
    let role = |a: &str| pci.iter().find(|d| d.address == a).unwrap().role;
    assert_eq!(role("0000:00:01.0"), Some(PcieRole::RootPort));
    assert_eq!(role("0000:01:00.0"), Some(PcieRole::SwitchUpstream));
    assert_eq!(role("0000:02:02.0"), Some(PcieRole::SwitchDownstream));
    assert_eq!(role("0000:05:00.0"), Some(PcieRole::Endpoint));
    assert_eq!(io.pcie_paths.len(), 5);
    let p = &io.pcie_paths[0];
    assert_eq!(p.endpoint, "0000:03:00.0");
    assert_eq!(p.via, ["0000:02:00.0", "0000:01:00.0", "0000:00:01.0"]);
    // alone, a drive is held by its own x4 Gen3 link (3.94 GB/s) ...
    let n = p.narrowest.as_ref().unwrap();
    assert_eq!(
        (n.device.as_str(), n.width_lanes, n.generation, n.below_max),
        ("0000:03:00.0", 4, 3, false)
    );
    assert_eq!(n.bandwidth_bytes_per_s, 3_938_461_538);
    // ... together, by the switch's x8 Gen3 uplink they share: 4 x 3.94 GB/s over 7.88 GB/s
    let sh = p.shared.as_ref().unwrap();
    assert_eq!(sh.link.device, "0000:01:00.0");
    assert_eq!(sh.link.bandwidth_bytes_per_s, 7_876_923_076);
    assert_eq!(
        sh.endpoints,
        [
            "0000:03:00.0",
            "0000:04:00.0",
            "0000:05:00.0",
            "0000:06:00.0"
        ]
    );
    assert!((sh.oversubscription.unwrap() - 2.0).abs() < 1e-9);
    assert!(io.pcie_paths[..4].iter().all(|q| q.shared == p.shared));
    let lone = &io.pcie_paths[4];
    assert_eq!(lone.endpoint, "0000:07:00.0");
    let n = lone.narrowest.as_ref().unwrap();
    assert_eq!(
        (n.device.as_str(), n.generation, n.width_lanes, n.below_max),
        ("0000:07:00.0", 2, 4, true)
    );
    assert_eq!(n.bandwidth_bytes_per_s, 2_000_000_000);
    assert_eq!(lone.shared, None);
    assert_eq!(io.root_complexes.len(), 1);
    let rc = &io.root_complexes[0];
    assert_eq!(
        (
            rc.root_ports,
            rc.root_ports_linked,
            rc.lanes_in_use,
            rc.numa_node
        ),
        (2, 2, Some(12), Some(0))
    );
    let text = io::summary(&io);
    assert!(
        text.contains(
            "path 0000:03:00.0 > 0000:02:00.0 > 0000:01:00.0 > 0000:00:01.0: ceiling 3.94 GB/s/dir \
             (Gen3 x4 its own link); 0000:01:00.0 Gen3 x8 7.88 GB/s/dir shared by 4 endpoints, \
             2.00:1 oversubscribed"
        ),
        "{text}"
    );
    assert!(
        text.contains("0000:01:00.0 switch upstream port [8086:1234], node 0"),
        "{text}"
    );
    assert!(
        text.contains("ceiling 2.00 GB/s/dir (Gen2 x4 its own link, below its max)"),
        "{text}"
    );
}

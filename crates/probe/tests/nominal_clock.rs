//! The nominal clock from the /proc/cpuinfo of real captures (`../shared/fixtures`), read in
//! place from the archives: the model name's clock where Intel's brand string states one, the
//! TSC's rate (bogomips / 2) where it does not, the sparc64 tick rate, the e2k `cpu MHz`, and
//! unknown with the reason on arm64. cpuid is not in these captures (read live only); its
//! leaves 0x15/0x16 are held by the x86 module's tests over raw-cpuid's register dumps.

use hwsurvey_model::{Probed, Unknown};
use hwsurvey_probe::cpu::cpuinfo::{self, Arch};
use hwsurvey_probe::cpu::nominal::{nominal_clock, NominalKind};

/// Expected: MHz (to 0.01), kind, a fragment of the source; `None`: unknown on this platform.
type Expected = Option<(f64, NominalKind, &'static str)>;

/// (fixture folder, archive or text file, arch, expected).
const CASES: &[(&str, &str, Arch, Expected)] = &[
    (
        "x86_64-intel-2s-2numa-dmi-type17-raw",
        "32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2",
        Arch::X86_64,
        Some((2700.0, NominalKind::ModelName, "E5-2680 0 @ 2.70GHz")),
    ),
    (
        "x86_64-intel-xeon-x7550-4s-numa-holes",
        "x86_64-64cpu.tar.gz",
        Arch::X86_64,
        Some((2000.0, NominalKind::ModelName, "X7550  @ 2.00GHz")),
    ),
    (
        "x86_64-amd-epyc7451-2s-8numa",
        "x86_64-epyc_7451.tar.gz",
        Arch::X86_64,
        Some((2295.415, NominalKind::Tsc, "bogomips 4590.83 / 2")),
    ),
    (
        "x86_64-firecracker-guest-epyc-2vcpu-thp-mthp",
        "firecracker-guest-capture.tar.gz",
        Arch::X86_64,
        Some((2596.12, NominalKind::Tsc, "bogomips 5192.24 / 2")),
    ),
    (
        "x86_64-intel-raptorlake-hybrid-pe-cores",
        "20em64t-hybrid-1p6c2t+2ca4co1t.tar.bz2",
        Arch::X86_64,
        Some((2188.8, NominalKind::Tsc, "bogomips 4377.60 / 2")),
    ),
    (
        "sparc64-ultrasparc-t1-offline",
        "sparc64-UltraSparc-T1.tar.gz",
        Arch::Sparc64,
        Some((1000.0, NominalKind::Kernel, "Cpu0ClkTck = 0x3b9aca00 Hz")),
    ),
    (
        "e2k-elbrus-16c-1s",
        "linux_cpuinfo.log",
        Arch::E2k,
        Some((2000.0, NominalKind::Kernel, "cpu MHz = 2000")),
    ),
    (
        "aarch64-hisilicon-kunpeng920-2s-4numa-clusters",
        "128arm-2pa2n8cluster4co.tar.bz2",
        Arch::Aarch64,
        None,
    ),
];

#[test]
fn nominal_clock_of_real_captures() {
    let Some(fixtures) = hwsurvey_testkit::fixtures() else {
        return;
    };
    let no_cpuid = Probed::Unknown(Unknown::Other {
        detail: "not in a capture".into(),
    });
    for (folder, file, arch, expected) in CASES {
        let path = fixtures.join(folder).join(file);
        let text = if file.contains(".tar") {
            hwsurvey_testkit::archive_text(&path, "proc/cpuinfo")
                .unwrap_or_else(|| panic!("{}: no proc/cpuinfo", path.display()))
        } else {
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        };
        let ci = cpuinfo::parse_cpuinfo(&text);
        let got = nominal_clock(*arch, &no_cpuid, Some(&ci));
        match (expected, got) {
            (Some((mhz, kind, fragment)), Probed::Known(n)) => {
                assert!(
                    (n.hz / 1e6 - mhz).abs() < 0.01,
                    "{folder}: {} MHz, expected {mhz}",
                    n.hz / 1e6
                );
                assert_eq!(n.kind, *kind, "{folder}");
                assert!(n.source.contains(fragment), "{folder}: {}", n.source);
            }
            (None, Probed::Unknown(Unknown::NotOnThisPlatform { detail })) => {
                assert!(detail.contains("CNTFRQ_EL0"), "{folder}: {detail}");
            }
            (e, got) => panic!("{folder}: expected {e:?}, got {got:?}"),
        }
    }
}

/// An x86 cpuinfo without the tsc flag gives no TSC rate, and says what was looked at.
#[test]
fn x86_without_a_clock_says_where_it_looked() {
    let ci = cpuinfo::parse_cpuinfo(
        "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\n\
         flags\t\t: fpu vme\nbogomips\t: 5199.99\n",
    );
    assert_eq!(ci.bogomips, Some(5199.99));
    let got = nominal_clock(
        Arch::X86_64,
        &Probed::Unknown(Unknown::Other {
            detail: "none".into(),
        }),
        Some(&ci),
    );
    match got {
        Probed::Unknown(Unknown::Other { detail }) => {
            assert!(
                detail.contains("leaf 0x16") && detail.contains("bogomips with the tsc flag"),
                "{detail}"
            );
        }
        other => panic!("{other:?}"),
    }
}

//! BIOS, system, board and CPU microcode of the real captures that carry them: the DMI
//! strings of /sys/class/dmi/id in four snapshots, the Type 0/1/2 records of four saved
//! dmidecode texts, the microcode lines of three /proc/cpuinfo; unknown with the reason on a
//! capture without DMI and on sparc64.

use hwsurvey_model::Probed;
use hwsurvey_probe::firmware::{self, DmiIds};
use hwsurvey_probe::{probe_machine, Machine, SysRoot};
use hwsurvey_testkit::fixtures;

/// The machine of the snapshot archive `fixture/archive`; `None` without ../shared.
fn capture(fixture: &str, archive: &str) -> Option<Machine> {
    let (_dir, root) = hwsurvey_testkit::extract(&fixtures()?.join(fixture).join(archive));
    Some(probe_machine(&SysRoot::new(&root)))
}

fn ids(m: &Machine) -> &DmiIds {
    m.firmware
        .known()
        .unwrap_or_else(|| panic!("{:?}", m.firmware))
}

/// `(BIOS, system, board)` as the fleet and the text say them.
fn phrases(d: &DmiIds) -> (Option<String>, [Option<&str>; 3], [Option<&str>; 3]) {
    (
        d.bios(),
        [
            d.system_vendor.as_deref(),
            d.system_product.as_deref(),
            d.system_version.as_deref(),
        ],
        [
            d.board_vendor.as_deref(),
            d.board_name.as_deref(),
            d.board_version.as_deref(),
        ],
    )
}

fn microcode(m: &Machine) -> Result<String, String> {
    match &m.cpu.identity.microcode {
        Probed::Known(r) => Ok(firmware::microcode_words(r)),
        Probed::Unknown(u) => Err(u.to_string()),
    }
}

#[test]
fn dmi_strings_of_the_snapshots() {
    let Some(intel) = capture(
        "x86_64-intel-2s-2numa-dmi-type17-raw",
        "32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2",
    ) else {
        return;
    };
    assert_eq!(
        phrases(ids(&intel)),
        (
            Some("Dell Inc. 1.0.30 (08/06/2012)".into()),
            [Some("Dell"), Some("DCS8000Z"), None],
            [Some("Dell"), Some("0W6W6G"), Some("A00")]
        )
    );
    assert_eq!(ids(&intel).source, "/sys/class/dmi/id");
    // hwloc's gathered cpuinfo leaves the microcode line out
    assert_eq!(
        microcode(&intel),
        Err(
            "/proc/cpuinfo has no microcode line: an old kernel, or a copy of the file \
             without it"
                .into()
        )
    );
    let text = firmware::summary(&intel);
    assert_eq!(
        text,
        "Firmware\n  from /sys/class/dmi/id\n  BIOS Dell Inc. 1.0.30 (08/06/2012)\n  \
         system Dell DCS8000Z, serial not read (product_serial is root's; kept hashed when \
         read)\n  board Dell 0W6W6G A00\n  microcode unknown (/proc/cpuinfo has no microcode \
         line: an old kernel, or a copy of the file without it)\n"
    );
    // the JSON document holds them
    let doc = intel.document();
    assert_eq!(doc["firmware"]["bios_version"], "1.0.30");
    assert_eq!(doc["firmware"]["board_name"], "0W6W6G");

    let opteron = capture(
        "x86_64-amd-opteron-bulldozer-4s-8numa",
        "64amd64-4s2n4ca2co.tar.bz2",
    )
    .unwrap();
    // sys_vendor padded with spaces by the firmware: trimmed
    assert_eq!(
        phrases(ids(&opteron)),
        (
            Some("Dell Inc. 2.5.91 (11/04/2011)".into()),
            [Some("Dell"), Some("PowerEdge C6145"), None],
            [Some("Dell"), Some("040N24"), Some("A01")]
        )
    );
    let hybrid = capture(
        "x86_64-intel-raptorlake-hybrid-pe-cores",
        "20em64t-hybrid-1p6c2t+2ca4co1t.tar.bz2",
    )
    .unwrap();
    assert_eq!(
        ids(&hybrid).bios().as_deref(),
        Some("HP V70 Ver. 01.02.03 (09/13/2023)")
    );
    assert_eq!(microcode(&hybrid), Ok("0x4119 on all 20 CPUs".into()));
    let kunpeng = capture(
        "aarch64-hisilicon-kunpeng920-2s-4numa-clusters",
        "128arm-2pa2n8cluster4co.tar.bz2",
    )
    .unwrap();
    assert_eq!(
        phrases(ids(&kunpeng)),
        (
            Some("Huawei Corp. 0.86 (07/19/2019)".into()),
            [Some("Huawei"), Some("XA320 V2"), None],
            [Some("Huawei"), Some("BC82HPNBB"), Some("V200R002C00")]
        )
    );
    assert_eq!(
        microcode(&kunpeng),
        Err(
            "not on this platform: the aarch64 kernel writes no microcode revision in \
             /proc/cpuinfo"
                .into()
        )
    );
}

#[test]
fn without_dmi_the_reason_and_the_microcode_alone() {
    let Some(epyc) = capture("x86_64-amd-epyc7451-2s-8numa", "x86_64-epyc_7451.tar.gz") else {
        return;
    };
    assert_eq!(
        epyc.firmware.why_unknown().unwrap().to_string(),
        "/sys/class/dmi/id is missing: no SMBIOS in a VM, board or container without DMI, or \
         a kernel without CONFIG_DMIID"
    );
    assert_eq!(microcode(&epyc), Ok("0x8001227 on all 96 CPUs".into()));
    let t1 = capture(
        "sparc64-ultrasparc-t1-offline",
        "sparc64-UltraSparc-T1.tar.gz",
    )
    .unwrap();
    assert_eq!(
        firmware::summary(&t1),
        "Firmware\n  BIOS, system and board unknown (not on this platform: sparc64 machines \
         have no SMBIOS, /sys/class/dmi/id is missing; the OpenBoot PROM or the vendor's tools \
         name the firmware)\n  microcode unknown (not on this platform: the sparc64 kernel \
         writes no microcode revision in /proc/cpuinfo)\n"
    );
    let firecracker = capture(
        "x86_64-firecracker-guest-epyc-2vcpu-thp-mthp",
        "firecracker-guest-capture.tar.gz",
    )
    .unwrap();
    assert_eq!(
        microcode(&firecracker),
        Ok("0x1000065 on all 2 CPUs".into())
    );
}

#[test]
fn bios_system_and_board_of_saved_dmidecode_texts() {
    let Some(dir) = fixtures() else {
        return;
    };
    // the whole `dmidecode` text; the arm64 ones hold no Type 17 (their memory records are
    // in dmidecode-memory.txt), so `--dmidecode` takes the Dell's and the Oracle's only
    let of = |fixture: &str| {
        let path = dir.join(fixture).join("dmidecode.txt");
        let text = std::fs::read_to_string(&path).unwrap();
        let shown = path.display().to_string();
        let fw = firmware::from_dmidecode_text(&text, Some(&shown)).unwrap();
        assert_eq!(fw.source, format!("dmidecode text {shown}"));
        if fixture.starts_with("x86_64") {
            let (_, read) =
                hwsurvey_probe::memory::dmidecode::read_dmidecode_file_with_firmware(&path)
                    .unwrap();
            assert_eq!(read.as_ref(), Some(&fw));
        }
        fw
    };
    let r640 = of("x86_64-dell-r640-2s-dmidecode-24slots");
    assert_eq!(
        phrases(&r640),
        (
            Some("Dell Inc. 2.8.2 (08/27/2020)".into()),
            [Some("Dell Inc."), Some("PowerEdge R640"), None],
            [Some("Dell Inc."), Some("0H28RR"), Some("A00")]
        )
    );
    let x5 = of("x86_64-oracle-x5-2-2s-dmidecode-24slots");
    assert_eq!(
        phrases(&x5),
        (
            Some("American Megatrends Inc. 30080300 (05/26/2016)".into()),
            [Some("Oracle Corporation"), Some("ORACLE SERVER X5-2"), None],
            [
                Some("Oracle Corporation"),
                Some("ASM,MOTHERBOARD,1U"),
                Some("Rev 04")
            ]
        )
    );
    let tx2 = of("aarch64-cavium-thunderx2-gigabyte-r181-2s");
    assert_eq!(
        phrases(&tx2),
        (
            Some("GIGABYTE F28 (12/27/2019)".into()),
            [Some("GIGABYTE"), Some("R181-T90-00"), Some("0100")],
            [Some("GIGABYTE"), Some("MT91-FS1-00"), Some("01000100")]
        )
    );
    let altra = of("aarch64-ampere-altra-q80-2s");
    assert_eq!(
        altra.bios().as_deref(),
        Some("Ampere(R) 1.07.20210713 (SCP: 1.07.20210713) (2021/07/13)")
    );
    assert_eq!(
        altra.system_product.as_deref(),
        Some("Mt.Jade Server System B81.030Z1.0007")
    );
    // `dmidecode -t memory` text has no Type 0/1/2 record
    assert_eq!(
        firmware::from_dmidecode_text(
            &std::fs::read_to_string(dir.join("aarch64-ampere-altra-q80-2s/dmidecode-memory.txt"))
                .unwrap(),
            None
        ),
        None
    );
}

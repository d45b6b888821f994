//! A saved `dmidecode` text is held against the machine probed: the Dell R640's
//! text (2 sockets, 96 GiB, `Dell Inc. PowerEdge R640`) and the Ampere Altra's memory text
//! (128 GiB) on a 1-socket QEMU VM with 23.5 GiB disagree on every fact they state; the R640's
//! on a tree that is an R640 fits. The captures are read in place from ../shared/fixtures
//! (facts of ../shared/fixtures/README.md); the machines are small /proc and /sys trees.
//! Before, `probe --dmidecode altra.txt` showed the VM's 23.5 GiB beside the Ampere's 128 GiB
//! installed, and `qualify --dmidecode r640.txt` passed "12 channels over 2 sockets" on it.

use std::path::{Path, PathBuf};

use hwsurvey_probe::memory::dmidecode::fit::{fit, TextIdentity, MIN_MEMTOTAL_SHARE};
use hwsurvey_probe::memory::dmidecode::read_dmidecode_text_file;
use hwsurvey_probe::{probe_machine, Machine, SysRoot};
use hwsurvey_testkit::write;

const GIB: u64 = 1 << 30;

fn fixture(rel: &str) -> Option<PathBuf> {
    hwsurvey_testkit::fixtures().map(|f| f.join(rel))
}

/// A machine of `packages` sockets with 2 CPUs each (one thread per core), `mem_total_kib` of
/// MemTotal, and the DMI system strings `vendor` / `product`.
fn machine(packages: u32, mem_total_kib: u64, vendor: &str, product: &str) -> Machine {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let cpus = packages * 2;
    let list = format!("0-{}\n", cpus - 1);
    for f in ["online", "present", "possible"] {
        write(root, &format!("/sys/devices/system/cpu/{f}"), &list);
    }
    for cpu in 0..cpus {
        let t = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
        write(
            root,
            &format!("{t}/physical_package_id"),
            &format!("{}\n", cpu / 2),
        );
        write(root, &format!("{t}/core_id"), &format!("{}\n", cpu % 2));
        write(
            root,
            &format!("{t}/thread_siblings_list"),
            &format!("{cpu}\n"),
        );
    }
    write(
        root,
        "/proc/meminfo",
        &format!("MemTotal:       {mem_total_kib} kB\nMemFree:        1000 kB\n"),
    );
    write(root, "/sys/class/dmi/id/sys_vendor", &format!("{vendor}\n"));
    write(
        root,
        "/sys/class/dmi/id/product_name",
        &format!("{product}\n"),
    );
    probe_machine(&SysRoot::new(root))
}

/// This VM: 1 socket of 2 CPUs, 23.5 GiB, QEMU.
fn vm() -> Machine {
    machine(
        1,
        23 * (1 << 20) + (1 << 19),
        "QEMU",
        "Standard PC (Q35 + ICH9, 2009)",
    )
}

fn identity(path: &Path) -> TextIdentity {
    read_dmidecode_text_file(path)
        .unwrap_or_else(|e| panic!("{e}"))
        .identity
}

#[test]
fn the_r640_text_states_its_machine() {
    let Some(file) = fixture("x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let id = identity(&file);
    assert_eq!(id.system().as_deref(), Some("Dell Inc. PowerEdge R640"));
    assert_eq!(id.sockets, Some(2));
    assert_eq!(id.installed_bytes, Some(96 * GIB));
    // the capture's UUID and serial are placeholders (all zeros, redacted): never compared
    assert_eq!(id.uuid_hashed, None);
}

#[test]
fn the_r640_text_on_a_one_socket_vm_is_another_machine() {
    let Some(file) = fixture("x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let f = fit(&identity(&file), &vm());
    let facts: Vec<&str> = f.misfits.iter().map(|m| m.fact).collect();
    assert_eq!(facts, ["system", "sockets", "memory"], "{f:?}");
    let e = f.check(&file).unwrap_err().to_string();
    for words in [
        "the dmidecode text describes another machine: ",
        "system: Dell Inc. PowerEdge R640 (DMI type 1 System Information) in the text, QEMU Standard PC (Q35 + ICH9, 2009) (/sys/class/dmi/id) here",
        "sockets: 2 (populated DMI type 4 Processor Information records) in the text, 1 (packages of the online CPUs,",
        "memory: 96 GiB installed (DMI type 17 Memory Devices) in the text, MemTotal 23.5 GiB (/proc/meminfo), 24 % of it",
    ] {
        assert!(e.contains(words), "{words}\n{e}");
    }
    assert!(e.starts_with(&file.display().to_string()), "{e}");
}

#[test]
fn the_altra_memory_text_on_the_vm_is_another_machine_by_its_memory() {
    let Some(file) = fixture("aarch64-ampere-altra-q80-2s/dmidecode-memory.txt") else {
        return;
    };
    let id = identity(&file);
    assert_eq!((id.system(), id.sockets), (None, None));
    assert_eq!(id.installed_bytes, Some(128 * GIB));
    let f = fit(&id, &vm());
    assert_eq!(f.misfits.len(), 1, "{f:?}");
    assert_eq!(f.misfits[0].fact, "memory");
    assert!(f.misfits[0].text.starts_with("128 GiB installed"), "{f:?}");
    // what it does not state is said to be unchecked, with why
    assert!(
        f.unchecked
            .iter()
            .any(|u| u == "sockets: the text has no DMI type 4 Processor Information"),
        "{f:?}"
    );
}

#[test]
fn the_r640_text_on_an_r640_fits() {
    let Some(file) = fixture("x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    // 2 sockets, MemTotal 94 GiB of 96 installed, the same DMI strings (other case)
    let r640 = machine(2, 94 * (1 << 20), "DELL INC.", "PowerEdge R640");
    let f = fit(&identity(&file), &r640);
    assert!(f.misfits.is_empty(), "{f:?}");
    assert_eq!(
        f.checked,
        [
            "system Dell Inc. PowerEdge R640",
            "sockets 2",
            "memory 96 GiB installed, MemTotal 94 GiB"
        ]
    );
    assert!(f.check(&file).is_ok());
}

/// MemTotal between 40 % (memory mirroring keeps half, less reservations) and 100 % of the
/// installed size fits; below or above does not.
#[test]
fn memtotal_fits_between_mirroring_and_all_installed() {
    let Some(file) = fixture("x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let id = identity(&file);
    let installed_kib = 96 * (1 << 20);
    for (share, fits) in [
        (0.47, true),
        (MIN_MEMTOTAL_SHARE + 0.001, true),
        (0.99, true),
        (1.0, true),
        (0.39, false),
        (1.02, false),
    ] {
        let m = machine(
            2,
            (installed_kib as f64 * share) as u64,
            "Dell Inc.",
            "PowerEdge R640",
        );
        let f = fit(&id, &m);
        assert_eq!(
            f.misfits.is_empty(),
            fits,
            "MemTotal {share} of installed: {f:?}"
        );
    }
}

/// A root that tells nothing (no DMI strings, no topology, no meminfo) checks nothing: no
/// fact disagrees, and each one says why it was not compared.
#[test]
fn a_bare_root_checks_nothing_and_says_why() {
    let Some(file) = fixture("x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    std::fs::create_dir_all(dir.path().join("sys/devices/system/cpu")).unwrap();
    let m = probe_machine(&SysRoot::new(dir.path()));
    let f = fit(&identity(&file), &m);
    assert!(f.misfits.is_empty() && f.checked.is_empty(), "{f:?}");
    assert_eq!(f.unchecked.len(), 3, "{f:?}");
}

/// The text's DMI UUID is hashed as the probe keeps `product_uuid` (lower case, the same
/// prefix), so the two compare without either being kept as read.
#[test]
fn the_text_uuid_is_hashed_as_the_probe_keeps_it() {
    let text = "Handle 0x0100, DMI type 1, 27 bytes\nSystem Information\n\tManufacturer: Dell Inc.\n\tProduct Name: PowerEdge R640\n\tSerial Number: 7XK2QW2\n\tUUID: 4C4C4544-0058-4B10-8032-B7C04F515732\n\nHandle 0x1100, DMI type 17, 84 bytes\nMemory Device\n\tSize: 8 GB\n\tLocator: A1\n";
    let memory = hwsurvey_probe::memory::dmidecode::parse_dmidecode_text(text).unwrap();
    let id = TextIdentity::of_text(text, &memory);
    assert_eq!(
        id.uuid_hashed,
        hwsurvey_probe::os::host_id::hashed("dmi_uuid", "4c4c4544-0058-4b10-8032-b7c04f515732")
    );
    assert!(id.uuid_hashed.is_some());
    assert_eq!(
        id.serial_hashed,
        hwsurvey_probe::os::host_id::hashed("dmi_serial", "7XK2QW2")
    );
    // a machine whose product_uuid is another one's: another machine, whatever else agrees
    let mut m = machine(1, 7 * (1 << 20), "Dell Inc.", "PowerEdge R640");
    m.os.host_id.dmi_uuid =
        hwsurvey_probe::os::host_id::hashed("dmi_uuid", "4c4c4544-0000-0000-0000-000000000001");
    let f = fit(&id, &m);
    assert_eq!(
        f.misfits.iter().map(|m| m.fact).collect::<Vec<_>>(),
        ["DMI product UUID"],
        "{f:?}"
    );
    m.os.host_id.dmi_uuid = id.uuid_hashed.clone();
    assert!(fit(&id, &m).misfits.is_empty());
}

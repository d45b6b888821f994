//! The "could not be read" list names no loop device or RAM disk: they are no
//! storage hardware. The 2-socket Intel capture (hwloc's gather script saved their folders
//! without `size` and `queue/*`) listed 72 such lines; a real disk missing the same files is
//! still listed.

use hwsurvey_probe::probe_text::unknowns;
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_testkit::{extract, fixtures, write};

#[test]
fn loop_and_ram_disks_of_the_intel_capture_are_not_unreadable_storage() {
    let Some(fixtures) = fixtures() else { return };
    let (_tmp, root) = extract(
        &fixtures
            .join("x86_64-intel-2s-2numa-dmi-type17-raw/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2"),
    );
    let m = probe_machine(&SysRoot::new(&root));
    // the devices are still in the document, with what could not be read
    let block = m.io.block.known().expect("block devices listed");
    let pseudo: Vec<&str> = block
        .iter()
        .filter(|d| hwsurvey_probe::io::is_pseudo_disk(d))
        .map(|d| d.name.as_str())
        .collect();
    assert!(
        pseudo.contains(&"loop0") && pseudo.contains(&"ram0"),
        "{pseudo:?}"
    );
    let list = unknowns(&m);
    let named: Vec<&String> = list
        .iter()
        .filter(|u| u.contains("/sys/block/loop") || u.contains("/sys/block/ram"))
        .collect();
    assert!(named.is_empty(), "{} lines: {named:#?}", named.len());
}

#[test]
fn a_disk_without_its_size_is_still_unreadable() {
    let tmp = hwsurvey_testkit::scratch_tempdir();
    let r = tmp.path();
    for (dev, target) in [
        (
            "sda",
            "../devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda",
        ),
        ("loop0", "../devices/virtual/block/loop0"),
        ("zram0", "../devices/virtual/block/zram0"),
    ] {
        let dir = format!("/sys/{}", target.trim_start_matches("../"));
        write(r, &format!("{dir}/dev"), "8:0");
        std::fs::create_dir_all(r.join("sys/block")).unwrap();
        std::os::unix::fs::symlink(target, r.join("sys/block").join(dev)).unwrap();
    }
    let m = probe_machine(&SysRoot::new(r));
    let list = unknowns(&m);
    assert!(
        list.iter().any(|u| u == "/sys/block/sda/size is missing"),
        "{list:#?}"
    );
    assert!(
        !list
            .iter()
            .any(|u| u.contains("loop0") || u.contains("zram0")),
        "{list:#?}"
    );
}

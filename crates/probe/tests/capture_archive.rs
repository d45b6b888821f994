//! `capture::open` on an archive: every entry, folder or file or link, is made beneath the
//! unpack folder and never through a symlink the archive made (an archive holding
//! `etc/x -> DIR` and then the folder entries `etc/x/nologin/` created `DIR/nologin` as root);
//! `..` is refused; a real capture unpacks to the machine its extracted folder gives.

use std::io::Write;
use std::path::{Path, PathBuf};

use hwsurvey_probe::capture::{self, CaptureError};

/// One entry of a crafted archive.
enum E<'a> {
    Dir(&'a str),
    File(&'a str, &'a [u8]),
    Symlink(&'a str, &'a Path),
    HardLink(&'a str, &'a str),
}

/// The header of `name` written into its raw field (tar::Builder refuses `..`, which a
/// crafted archive holds anyway).
fn header(name: &str, kind: tar::EntryType, size: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(if kind.is_dir() { 0o755 } else { 0o644 });
    h.set_size(size);
    let field = &mut h.as_gnu_mut().unwrap().name;
    field.fill(0);
    field[..name.len()].copy_from_slice(name.as_bytes());
    h
}

/// Writes `entries` as a .tar.gz at `path`, after a `snap/proc/cpuinfo` that makes it a root.
fn archive(path: &Path, entries: &[E]) {
    let gz = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::fast(),
    );
    let mut t = tar::Builder::new(gz);
    let cpuinfo = b"processor\t: 0\n";
    let mut h = header(
        "snap/proc/cpuinfo",
        tar::EntryType::Regular,
        cpuinfo.len() as u64,
    );
    h.set_cksum();
    t.append(&h, &cpuinfo[..]).unwrap();
    for e in entries {
        let (mut h, data): (tar::Header, &[u8]) = match e {
            E::Dir(n) => (header(n, tar::EntryType::Directory, 0), &[]),
            E::File(n, d) => (header(n, tar::EntryType::Regular, d.len() as u64), d),
            E::Symlink(n, target) => {
                let mut h = header(n, tar::EntryType::Symlink, 0);
                h.set_link_name(target).unwrap();
                (h, &[])
            }
            E::HardLink(n, target) => {
                let mut h = header(n, tar::EntryType::Link, 0);
                h.set_link_name(target).unwrap();
                (h, &[])
            }
        };
        h.set_cksum();
        t.append(&h, data).unwrap();
    }
    t.into_inner().unwrap().finish().unwrap().flush().unwrap();
}

/// Everything under `dir`, relative, sorted (symlinks not followed).
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            out.push(e.path().strip_prefix(dir).unwrap().to_path_buf());
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// The error of opening `entries` as an archive, with what appeared in `outside`.
fn refused(entries: &[E], outside: &Path) -> (String, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("evil.tar.gz");
    archive(&a, entries);
    let e = match capture::open(&a) {
        Ok(_) => panic!("an archive reaching outside its folder was opened"),
        Err(e) => e,
    };
    assert!(matches!(e, CaptureError::Escapes { .. }), "{e}");
    (e.to_string(), tree(outside))
}

#[test]
fn folder_entries_under_a_symlink_the_archive_made_are_refused_and_nothing_is_made_outside() {
    let outside = tempfile::tempdir().unwrap();
    let (err, made) = refused(
        &[
            E::Symlink("snap/etc/x", outside.path()),
            E::Dir("snap/etc/x/nologin/"),
            E::Dir("snap/etc/x/planted/a/b/c/"),
        ],
        outside.path(),
    );
    assert!(made.is_empty(), "made outside the unpack folder: {made:?}");
    assert!(
        err.contains("entry snap/etc/x/nologin/ leads outside the folder it is unpacked into (through the symlink snap/etc/x)"),
        "{err}"
    );
}

#[test]
fn a_file_under_a_symlinked_folder_is_refused_and_nothing_is_written_outside() {
    let outside = tempfile::tempdir().unwrap();
    let (err, made) = refused(
        &[
            E::Symlink("snap/etc", outside.path()),
            E::File("snap/etc/nologin", b"planted\n"),
        ],
        outside.path(),
    );
    assert!(
        made.is_empty(),
        "written outside the unpack folder: {made:?}"
    );
    assert!(err.contains("through the symlink snap/etc)"), "{err}");
}

#[test]
fn a_relative_symlink_climbing_out_is_never_followed_either() {
    // `snap/up -> ../../..` and then `snap/up/<outside's name>/x/`: resolved as the OS
    // would, that is the outside folder
    let outside = tempfile::tempdir().unwrap();
    let name = outside.path().file_name().unwrap().to_str().unwrap();
    let climb = Path::new("../../../../../../../../../..")
        .join(outside.path().parent().unwrap().strip_prefix("/").unwrap());
    let entry = format!("snap/up/{name}/x/");
    let (err, made) = refused(
        &[E::Symlink("snap/up", &climb), E::Dir(&entry)],
        outside.path(),
    );
    assert!(made.is_empty(), "made outside the unpack folder: {made:?}");
    assert!(err.contains("through the symlink snap/up)"), "{err}");
}

#[test]
fn a_hard_link_through_a_symlink_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    let (err, made) = refused(
        &[
            E::Symlink("snap/s", outside.path()),
            E::HardLink("snap/h", "snap/s/secret"),
        ],
        outside.path(),
    );
    assert_eq!(made, vec![PathBuf::from("secret")]);
    assert!(err.contains("through the symlink snap/s)"), "{err}");
}

#[test]
fn dot_dot_in_an_entry_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("climb.tar.gz");
    archive(&a, &[E::File("snap/../../escaped", b"x")]);
    let e = capture::open(&a).err().expect("refused");
    assert!(matches!(e, CaptureError::Escapes { .. }), "{e}");
    assert!(
        e.to_string().contains(
            "entry snap/../../escaped leads outside the folder it is unpacked into (by \"..\")"
        ),
        "{e}"
    );
}

#[test]
fn a_file_entry_over_a_symlink_replaces_the_link_not_what_it_points_at() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("target");
    std::fs::write(&target, "kept").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("over.tar.gz");
    archive(
        &a,
        &[
            E::Symlink("snap/f", &target),
            E::File("snap/f", b"from the archive"),
        ],
    );
    let c = capture::open(&a).expect("opens");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
    let f = c.root.root().join("f");
    assert!(f.symlink_metadata().unwrap().is_file());
    assert_eq!(std::fs::read_to_string(f).unwrap(), "from the archive");
}

#[test]
fn symlinks_inside_the_capture_are_kept_as_links() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("links.tar.gz");
    archive(
        &a,
        &[
            E::Dir("snap/sys/devices/system/cpu/cpu0/"),
            E::Symlink(
                "snap/sys/bus/cpu/devices/cpu0",
                Path::new("../../../devices/system/cpu/cpu0"),
            ),
        ],
    );
    let c = capture::open(&a).expect("opens");
    let link = c.root.root().join("sys/bus/cpu/devices/cpu0");
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("../../../devices/system/cpu/cpu0")
    );
    assert!(link.is_dir());
}

#[test]
fn the_unpack_folder_goes_with_the_capture() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("ok.tar.gz");
    archive(&a, &[E::File("snap/proc/meminfo", b"MemTotal: 1 kB\n")]);
    let c = capture::open(&a).expect("opens");
    let unpacked = c.root.root().parent().unwrap().to_path_buf();
    assert!(unpacked.join("snap/proc/meminfo").is_file());
    drop(c);
    assert!(!unpacked.exists(), "{} left", unpacked.display());
}

#[test]
fn a_real_capture_archive_probes_as_its_extracted_folder() {
    let archive = hwsurvey_testkit::fixtures()
        .expect("../shared/fixtures is missing beside the workspace: this test reads a real capture there")
        .join("x86_64-firecracker-guest-epyc-2vcpu-thp-mthp/firecracker-guest-capture.tar.gz");
    let c = capture::open(&archive).expect("the fixture opens");
    assert!(c.skipped.is_empty(), "{:?}", c.skipped);
    let (_keep, extracted) = hwsurvey_testkit::extract(&archive);
    let from_archive = hwsurvey_probe::probe_machine(&c.root);
    let from_folder = hwsurvey_probe::probe_machine(&hwsurvey_probe::SysRoot::new(extracted));
    let doc = |m: &hwsurvey_probe::Machine| {
        let mut d = m.document();
        d.as_object_mut().unwrap().remove("root");
        d
    };
    assert_eq!(doc(&from_archive), doc(&from_folder));
    assert_eq!(
        serde_json::to_value(&from_archive.cpu.online).unwrap(),
        serde_json::json!({"known": "0-1"})
    );
}

//! The files a user names (`hwsurvey elf FILE`, `--target PATH`) are read only when they are
//! regular files: a FIFO is refused without blocking, `/dev/zero` without reading (tester
//! defect: `hwsurvey elf /dev/zero` grew to 4.5 GB, `hwsurvey elf FIFO` hung).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use hwsurvey_elf::{inspect_file, ElfError, TargetDescriptor, TargetError};

/// Runs `f` in a thread: a regression (a read that blocks or never ends) fails the test after
/// 20 s instead of hanging it.
fn within_timeout<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("reading the file blocked or did not end")
}

/// A FIFO in a fresh temporary directory, or `None` (with a SKIPPED line) without `mkfifo`.
fn fifo(dir: &Path, name: &str) -> Option<PathBuf> {
    let path = dir.join(name);
    let made = std::process::Command::new("mkfifo").arg(&path).status();
    if made.is_ok_and(|s| s.success()) {
        Some(path)
    } else {
        println!("SKIPPED: no mkfifo command");
        None
    }
}

fn elf_error(path: &Path) -> String {
    let p = path.to_owned();
    let e = within_timeout(move || inspect_file(&p).map(|_| ()).unwrap_err().to_string());
    assert!(!e.contains('\n'), "{e}");
    e
}

#[cfg(target_os = "linux")]
#[test]
fn devices_are_not_elf_input() {
    for dev in ["/dev/zero", "/dev/null"] {
        assert_eq!(
            elf_error(Path::new(dev)),
            format!(
                "{dev}: is a character device, not a regular file; an ELF file must be a regular file"
            )
        );
    }
}

#[test]
fn fifo_and_directory_are_not_elf_input() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        elf_error(dir.path()),
        format!(
            "{}: is a directory, not a regular file; an ELF file must be a regular file",
            dir.path().display()
        )
    );
    let Some(ff) = fifo(dir.path(), "ff") else {
        return;
    };
    assert_eq!(
        elf_error(&ff),
        format!(
            "{}: is a FIFO (named pipe), not a regular file; an ELF file must be a regular file",
            ff.display()
        )
    );
    let p = ff.clone();
    let e = within_timeout(move || inspect_file(&p).unwrap_err());
    assert!(matches!(e, ElfError::File(_)), "{e}");
}

#[test]
fn an_elf_file_over_the_cap_is_refused_by_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big");
    // sparse: no disk used, nothing read
    std::fs::File::create(&big)
        .unwrap()
        .set_len(hwsurvey_elf::inspect::MAX_ELF_BYTES + 1)
        .unwrap();
    assert_eq!(
        elf_error(&big),
        format!(
            "{}: 1073741825 bytes, larger than the 1 GiB limit for an ELF file",
            big.display()
        )
    );
}

#[test]
fn descriptor_must_be_a_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let descriptor_error = |path: &Path| {
        let p = path.to_owned();
        within_timeout(move || TargetDescriptor::load(&p).unwrap_err())
    };
    #[cfg(target_os = "linux")]
    {
        let e = descriptor_error(Path::new("/dev/zero"));
        assert!(matches!(e, TargetError::File(_)), "{e}");
        assert_eq!(
            e.to_string(),
            "/dev/zero: is a character device, not a regular file; a target descriptor must be a regular file"
        );
    }
    let Some(ff) = fifo(dir.path(), "x86_64.toml") else {
        return;
    };
    // a path argument to --target is loaded as is
    let p = ff.display().to_string();
    let e = within_timeout(move || {
        TargetDescriptor::resolve(&p, Path::new("targets"))
            .unwrap_err()
            .to_string()
    });
    assert_eq!(
        e,
        format!(
            "{}: is a FIFO (named pipe), not a regular file; a target descriptor must be a regular file",
            ff.display()
        )
    );
    assert!(descriptor_error(&ff).to_string().contains("is a FIFO"));
}

//! Test support shared by the workspace's test suites (a dev-dependency only, never in a
//! shipped binary): locating `../shared` (the real machine captures and known probe faults,
//! read in place), unpacking capture archives, writing small `/proc` and `/sys` trees (the
//! hardware watch's moving counters: [`watch`]), and result files for the readers' tests ([`report_sample`]: synthetic platforms;
//! [`fleet_sample`]: fleets made from `reports/examples/`), and an HTML report printed and
//! read back ([`printed`]).
//!
//! Panics on I/O failures: these are test fixtures, and a test that cannot set up its input
//! must fail loudly rather than pass.

use std::path::{Path, PathBuf};

pub mod fleet_sample;
pub mod peers;
pub mod plans;
pub mod powercap;
pub mod printed;
pub mod report_sample;
pub mod watch;

/// Environment variable: the folder that holds `fixtures/` and `bugs/`, when it is not
/// `../shared` beside the workspace (see [`shared_dir`]).
pub const SHARED_DIR_VAR: &str = "HWSURVEY_SHARED_DIR";

/// Environment variable: `1` in a checkout that truly lacks the captures. The tests that read
/// them then print `SKIPPED: ../shared not found (PATH)` and pass; without it they fail,
/// naming the path ([`shared`]).
pub const WITHOUT_SHARED_VAR: &str = "HWSURVEY_WITHOUT_SHARED";

/// Where the captures are looked for: [`SHARED_DIR_VAR`] when set and not empty, else
/// `../shared` beside the workspace.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os(SHARED_DIR_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

/// The folder holding `fixtures/` and `bugs/` ([`shared_dir`]), read in place.
///
/// `None`, after printing `SKIPPED: ../shared not found (PATH)`, only when the folder is
/// missing and [`WITHOUT_SHARED_VAR`] is `1`: the caller returns and the test passes.
///
/// Panics when the folder is missing and the switch is not set, naming the path and the
/// switch: a test that reads a capture must not pass silently where there is none.
pub fn shared() -> Option<PathBuf> {
    let without = std::env::var_os(WITHOUT_SHARED_VAR).is_some_and(|v| v == "1");
    match shared_or_why(&shared_dir(), without) {
        Ok(found) => {
            if found.is_none() {
                println!("SKIPPED: ../shared not found ({})", shared_dir().display());
            }
            found
        }
        Err(why) => panic!("{why}"),
    }
}

/// The decision of [`shared`] for the folder `dir`: `Ok(Some(dir))` when it is a folder;
/// when it is not, `Ok(None)` if `without_shared` (the switch is set), else `Err` with the
/// sentence the test fails with.
pub fn shared_or_why(dir: &Path, without_shared: bool) -> Result<Option<PathBuf>, String> {
    if dir.is_dir() {
        Ok(Some(dir.to_path_buf()))
    } else if without_shared {
        Ok(None)
    } else {
        Err(format!(
            "{}: not found: the tests read the real machine captures there (../shared beside \
             the workspace, or {SHARED_DIR_VAR}=DIR); in a checkout that truly lacks them, \
             {WITHOUT_SHARED_VAR}=1 makes these tests print SKIPPED and pass",
            dir.display()
        ))
    }
}

/// `fixtures/` of [`shared`], or `None` as [`shared`].
pub fn fixtures() -> Option<PathBuf> {
    shared().map(|s| s.join("fixtures"))
}

/// Every family of DESIGN.md, for tests that load a profile without depending on which
/// families this build registers.
pub const ALL_FAMILIES: [&str; 10] = [
    "mem.bandwidth",
    "mem.latency",
    "mem.loaded_latency",
    "cpu.clock",
    "cpu.scaling",
    "c2c.latency",
    "sync.contention",
    "service.point_select",
    "storage.iops",
    "raid.parity",
];

/// The workspace's root folder (where `targets/`, `profiles/` and `README.md` are).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `hwsurvey` binary of this build as a command, run through [`target_runner`]
/// (qemu-user under scripts/cross-test) in [`workspace_root`], so that target and profile
/// names resolve as in the README. Add `use assert_cmd::prelude::*` for `.assert()`.
pub fn hwsurvey() -> std::process::Command {
    let mut cmd = target_command(&assert_cmd::cargo::cargo_bin("hwsurvey"));
    cmd.current_dir(workspace_root());
    cmd
}

/// Unpacks a `.tar.gz`/`.tgz`, `.tar.bz2` or plain `.tar` archive into `into` (created if
/// needed). Entries that cannot be created (a symlink pointing outside, a device node) are
/// skipped, as the capture tools that made them kept what they could read.
///
/// Panics when the archive cannot be opened or is not a tar archive.
pub fn unpack(archive: &Path, into: &Path) {
    std::fs::create_dir_all(into).unwrap_or_else(|e| panic!("mkdir {}: {e}", into.display()));
    let mut tar = tar::Archive::new(decoder(archive));
    for entry in tar
        .entries()
        .unwrap_or_else(|e| panic!("{}: not a tar archive: {e}", archive.display()))
    {
        let mut entry = entry.unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
        let _ = entry.unpack_in(into);
    }
}

/// The archive's bytes, decompressed by its name (`.bz2`, `.gz`/`.tgz`, else plain tar).
fn decoder(archive: &Path) -> Box<dyn std::io::Read> {
    let file =
        std::fs::File::open(archive).unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
    let name = archive.to_string_lossy();
    if name.ends_with(".bz2") {
        Box::new(bzip2::read::BzDecoder::new(file))
    } else if name.ends_with(".gz") || name.ends_with(".tgz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    }
}

/// Whether some entry of `archive` has a path containing `fragment` (e.g. `/firmware/dmi/`),
/// read without unpacking. Panics when the archive cannot be opened or is not a tar archive.
pub fn archive_contains(archive: &Path, fragment: &str) -> bool {
    let mut tar = tar::Archive::new(decoder(archive));
    let entries = tar
        .entries()
        .unwrap_or_else(|e| panic!("{}: not a tar archive: {e}", archive.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
        if entry
            .path()
            .is_ok_and(|p| p.to_string_lossy().contains(fragment))
        {
            return true;
        }
    }
    false
}

/// The text of the first entry of `archive` whose path ends with `suffix` (e.g.
/// `proc/cpuinfo`), read without unpacking; `None` when no entry does. Panics when the
/// archive cannot be opened or read, or the entry is not UTF-8.
pub fn archive_text(archive: &Path, suffix: &str) -> Option<String> {
    use std::io::Read;
    let mut tar = tar::Archive::new(decoder(archive));
    let entries = tar
        .entries()
        .unwrap_or_else(|e| panic!("{}: not a tar archive: {e}", archive.display()));
    for entry in entries {
        let mut entry = entry.unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
        if entry
            .path()
            .is_ok_and(|p| p.to_string_lossy().ends_with(suffix))
        {
            let mut text = String::new();
            entry
                .read_to_string(&mut text)
                .unwrap_or_else(|e| panic!("{}: {suffix}: {e}", archive.display()));
            return Some(text);
        }
    }
    None
}

/// Size `/dev/shm` must have for [`scratch_tempdir`] to use it, bytes: 512 MiB (the largest
/// capture of ../shared/fixtures holds 0.4 MB of data in its files, but each file takes a page
/// of a tmpfs).
pub const SCRATCH_MIN_FREE_BYTES: u64 = 512 << 20;

/// A new temporary folder for a tree of many small files (an unpacked capture): under
/// `/dev/shm` when `TMPDIR` is not set, `/dev/shm` is a tmpfs of at least
/// [`SCRATCH_MIN_FREE_BYTES`] ([`shm_is_roomy`]: a container's default 64 MiB would fill up,
/// and [`unpack`] skips what it cannot create) and takes a folder, else in the system's
/// temporary folder. A capture's thousands of files are created and removed there at memory speed: on
/// this project's CI machine (ext4 on a virtio disk) the probe
/// suite's test that unpacks every capture took 21.0 s, 18.8 s of it in the kernel, and 2.4 s
/// under `/dev/shm` (2026-12-06). Not for files a test opens with `O_DIRECT` (tmpfs refuses
/// it): those take `tempfile::tempdir()`. Panics when no folder can be made.
pub fn scratch_tempdir() -> tempfile::TempDir {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    if std::env::var_os("TMPDIR").is_none() && shm_is_roomy(&mounts) {
        if let Ok(dir) = tempfile::Builder::new()
            .prefix("hwsurvey-test-")
            .tempdir_in("/dev/shm")
        {
            return dir;
        }
    }
    tempfile::tempdir().expect("temporary folder")
}

/// Whether `mounts` (the text of `/proc/self/mounts`) has `/dev/shm` as a tmpfs whose `size=`
/// option is at least [`SCRATCH_MIN_FREE_BYTES`] (bytes, or with a `k`, `m` or `g` suffix), a
/// share of memory (`%`), or absent (the kernel's default, half of memory). The last mount on
/// `/dev/shm` counts, as the kernel lists mounts in order.
pub fn shm_is_roomy(mounts: &str) -> bool {
    let Some(options) = mounts
        .lines()
        .rev()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 4 && f[1] == "/dev/shm").then(|| (f[2], f[3]))
        })
        .next()
        .and_then(|(fs, options)| (fs == "tmpfs").then_some(options))
    else {
        return false;
    };
    let Some(size) = options.split(',').find_map(|o| o.strip_prefix("size=")) else {
        return true;
    };
    if size.ends_with('%') {
        return true;
    }
    let (digits, unit) = match size.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&size[..i], c.to_ascii_lowercase()),
        _ => (size, 'b'),
    };
    let shift = match unit {
        'b' => 0,
        'k' => 10,
        'm' => 20,
        'g' => 30,
        _ => return false,
    };
    digits
        .parse::<u64>()
        .is_ok_and(|n| n.saturating_mul(1 << shift) >= SCRATCH_MIN_FREE_BYTES)
}

/// Unpacks `archive` into a new temporary folder ([`scratch_tempdir`]) and returns it with the
/// archive's single top-level folder (the captured root). Keep the `TempDir` alive while using the path.
///
/// Panics when the archive has no top-level folder.
pub fn extract(archive: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = scratch_tempdir();
    unpack(archive, dir.path());
    let mut tops: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .expect("read temporary folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    tops.sort();
    let top = tops
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{}: no top-level folder", archive.display()));
    (dir, top)
}

/// Writes `value` plus a newline (as the kernel ends its files) at `path` (absolute, as on the
/// machine: `/sys/devices/system/cpu/online`) under `root`, creating the folders.
pub fn write(root: &Path, path: &str, value: &str) {
    let host = root.join(path.trim_start_matches('/'));
    if let Some(parent) = host.parent() {
        std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{}: {e}", parent.display()));
    }
    std::fs::write(&host, format!("{value}\n"))
        .unwrap_or_else(|e| panic!("{}: {e}", host.display()));
}

/// Writes a PCI function into the /sys tree under `root`: `/sys/devices/<chain>` (e.g.
/// `pci0000:00/0000:00:01.0/0000:01:00.0`) with `class`, vendor 0x8086, device 0x1234,
/// `numa_node`, and when `link` is `(current speed, current width, max speed, max width)` the
/// four link files; and its `/sys/bus/pci/devices/<address>` link.
pub fn pci_function(
    root: &Path,
    chain: &str,
    class: &str,
    link: Option<(&str, u32, &str, u32)>,
    numa_node: &str,
) {
    let dev = format!("/sys/devices/{chain}");
    let address = chain.rsplit('/').next().unwrap_or(chain);
    write(root, &format!("{dev}/class"), class);
    write(root, &format!("{dev}/vendor"), "0x8086");
    write(root, &format!("{dev}/device"), "0x1234");
    write(root, &format!("{dev}/numa_node"), numa_node);
    if let Some((cs, cw, ms, mw)) = link {
        write(root, &format!("{dev}/current_link_speed"), cs);
        write(root, &format!("{dev}/current_link_width"), &cw.to_string());
        write(root, &format!("{dev}/max_link_speed"), ms);
        write(root, &format!("{dev}/max_link_width"), &mw.to_string());
    }
    let link_path = root.join(format!("sys/bus/pci/devices/{address}"));
    std::fs::create_dir_all(link_path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(format!("../../../devices/{chain}"), &link_path)
        .unwrap_or_else(|e| panic!("{}: {e}", link_path.display()));
}

/// The seed story's PCIe platform as a /sys tree under `root` ([`pci_function`]): root port
/// 0000:00:01.0 (Gen3 x8 of x16) to a switch (upstream port 0000:01:00.0, Gen3 x8) with four
/// downstream ports 0000:02:0k.0, each with an x4 Gen3 NVMe drive 0000:0{3+k}:00.0 (four x4
/// on one x8: 2:1); root port 0000:00:02.0 trained at Gen2 x4 (of Gen3 x4) with drive
/// 0000:07:00.0 whose own link files are missing. All on NUMA node 0.
pub fn pcie_switch_tree(root: &Path) {
    let g3 = "8.0 GT/s PCIe";
    let rp = "pci0000:00/0000:00:01.0";
    let up = format!("{rp}/0000:01:00.0");
    pci_function(root, rp, "0x060400", Some((g3, 8, g3, 16)), "0");
    pci_function(root, &up, "0x060400", Some((g3, 8, g3, 8)), "0");
    for k in 0..4 {
        let down = format!("{up}/0000:02:0{k}.0");
        pci_function(root, &down, "0x060400", Some((g3, 4, g3, 4)), "0");
        pci_function(
            root,
            &format!("{down}/0000:0{}:00.0", 3 + k),
            "0x010802",
            Some((g3, 4, g3, 4)),
            "0",
        );
    }
    let rp2 = "pci0000:00/0000:00:02.0";
    pci_function(
        root,
        rp2,
        "0x060400",
        Some(("5.0 GT/s PCIe", 4, g3, 4)),
        "0",
    );
    pci_function(root, &format!("{rp2}/0000:07:00.0"), "0x010802", None, "0");
}

/// Whether the command `tool` is an executable file on PATH (a name; a shell builtin of the same
/// name does not count) or exists (an absolute path).
pub fn have(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if tool.starts_with('/') {
        return Path::new(tool).exists();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| executable(&dir.join(tool))))
}

/// `scripts/lib.sh`: the one list of the external commands the tests call, with their Debian
/// packages.
pub fn tool_list_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/lib.sh")
}

/// The rows `(command, Debian package)` of the `HWSURVEY_TOOLS` list in `scripts/lib.sh`, in
/// file order (a command is a name on PATH or an absolute path).
///
/// Panics when the file cannot be read or holds no such list.
pub fn tool_rows() -> Vec<(String, String)> {
    let file = tool_list_file();
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let body = text
        .split_once("HWSURVEY_TOOLS='")
        .and_then(|(_, rest)| rest.split_once("\n'"))
        .map(|(body, _)| body)
        .unwrap_or_else(|| panic!("{}: no HWSURVEY_TOOLS='...' list", file.display()));
    body.lines()
        .filter_map(|line| {
            let mut words = line.split('#').next().unwrap_or("").split_whitespace();
            let cmd = words.next()?;
            let pkg = words
                .next()
                .unwrap_or_else(|| panic!("{}: `{cmd}` has no Debian package", file.display()));
            Some((cmd.to_owned(), pkg.to_owned()))
        })
        .collect()
}

/// The Debian package that provides `tool` according to `scripts/lib.sh`, or `None` when the
/// list lacks it.
pub fn package_of(tool: &str) -> Option<String> {
    tool_rows()
        .into_iter()
        .find(|(cmd, _)| cmd == tool)
        .map(|(_, pkg)| pkg)
}

/// Whether the external command `tool` (as listed in `scripts/lib.sh`) is there. When it is
/// not, prints `SKIPPED: <tool> missing (Debian package <pkg>; ./scripts/test installs it)` and
/// returns false: the caller skips instead of panicking (`./scripts/test` checks the whole list
/// before any test runs, so there every listed tool is present).
///
/// Panics when `tool` is not in the list: every command a test calls must be in it, so that
/// the set-up installs it.
pub fn tool(tool: &str) -> bool {
    let Some(pkg) = package_of(tool) else {
        panic!(
            "`{tool}` is not in {}: add a line `{tool} PACKAGE # who calls it`",
            tool_list_file().display()
        );
    };
    if have(tool) {
        return true;
    }
    println!("SKIPPED: {tool} missing (Debian package {pkg}; ./scripts/test installs it)");
    false
}

pub mod blockdev;
pub mod sysblock;

/// Whether this test binary runs under qemu-user: the kernel's architecture
/// (/proc/sys/kernel/arch, which qemu-user does not rewrite) differs from the binary's.
pub fn under_qemu_user() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/arch")
        .map(|a| a.trim() != std::env::consts::ARCH)
        .unwrap_or(false)
}

/// The program and leading arguments that run a binary of the test's target: the words of
/// `HWSURVEY_TEST_RUNNER` when set, else of `CARGO_TARGET_<ARCH>_RUNNER` (scripts/cross-test
/// sets both: qemu-user with its library prefix), else nothing (native). scripts/cross-test
/// bounds each test binary with `timeout -k`, but a spawned hwsurvey must not be: GNU timeout
/// forwards a signal and then SIGKILLs its child 10 s later, which cut a signalled run short of
/// its orderly end under emulation. Hence the separate, unbounded `HWSURVEY_TEST_RUNNER`.
pub fn target_runner() -> Vec<String> {
    let prefix = format!("CARGO_TARGET_{}_", std::env::consts::ARCH.to_uppercase());
    std::env::var("HWSURVEY_TEST_RUNNER")
        .ok()
        .or_else(|| {
            std::env::vars()
                .find(|(k, _)| k.starts_with(&prefix) && k.ends_with("_RUNNER"))
                .map(|(_, v)| v)
        })
        .map(|v| v.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// A command running `bin` (a binary of the test's target) through [`target_runner`].
pub fn target_command(bin: &Path) -> std::process::Command {
    let runner = target_runner();
    match runner.split_first() {
        Some((program, args)) => {
            let mut c = std::process::Command::new(program);
            c.args(args).arg(bin);
            c
        }
        None => std::process::Command::new(bin),
    }
}

/// An excerpt of a real `/proc/self/smaps` (x86_64, Linux 6.1): the heap (4 KiB pages), a
/// THP-backed anonymous region (6 MiB of 8 MiB in huge pages) and a hugetlb region (2 MiB
/// pages, 4 MiB private hugetlb), for the smaps parser's tests and its users'. Kept in
/// `crates/testkit/data/smaps-excerpt.txt`, which `hwsurvey_machine`'s own tests include too.
pub const SMAPS_EXCERPT: &str = include_str!("../data/smaps-excerpt.txt");

#[cfg(test)]
mod tests {
    use super::*;

    /// /dev/shm lines as this machine (Debian 12 KVM guest), a Docker container and a host
    /// with a `size=` in percent list them.
    #[test]
    fn shm_is_roomy_reads_the_tmpfs_size() {
        let debian = "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n\
                      tmpfs /dev/shm tmpfs rw,nosuid,nodev,inode64 0 0\n";
        assert!(shm_is_roomy(debian));
        let docker = "shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k,inode64 0 0\n";
        assert!(!shm_is_roomy(docker));
        assert!(shm_is_roomy(&docker.replace("65536k", "1g")));
        assert!(shm_is_roomy(&docker.replace("65536k", "536870912")));
        assert!(!shm_is_roomy(&docker.replace("65536k", "536870911")));
        assert!(shm_is_roomy(&docker.replace("65536k", "512m")));
        assert!(shm_is_roomy(&docker.replace("65536k", "50%")));
        // a later mount on /dev/shm hides the earlier one; not a tmpfs, or none: not used
        assert!(!shm_is_roomy(&format!("{debian}{docker}")));
        assert!(!shm_is_roomy("/dev/vda /dev/shm ext4 rw 0 0\n"));
        assert!(!shm_is_roomy(""));
    }

    /// A missing ../shared fails the test, naming the folder and the switch; with the switch
    /// it is skipped; a folder that is there is used.
    #[test]
    fn missing_shared_fails_unless_switched_off() {
        let there = tempfile::tempdir().unwrap();
        let absent = there.path().join("shared");
        let why = shared_or_why(&absent, false).unwrap_err();
        assert!(
            why.starts_with(&format!("{}: not found", absent.display())),
            "{why}"
        );
        assert!(why.contains("HWSURVEY_WITHOUT_SHARED=1"), "{why}");
        assert_eq!(shared_or_why(&absent, true), Ok(None));
        assert_eq!(
            shared_or_why(there.path(), false),
            Ok(Some(there.path().to_path_buf()))
        );
    }

    #[test]
    fn write_then_unpack_round_trip() {
        let src = tempfile::tempdir().unwrap();
        write(src.path(), "/root/sys/devices/system/cpu/online", "0-3");
        let archive = src.path().join("c.tar.gz");
        {
            let gz = flate2::write::GzEncoder::new(
                std::fs::File::create(&archive).unwrap(),
                flate2::Compression::fast(),
            );
            let mut t = tar::Builder::new(gz);
            t.append_dir_all("root", src.path().join("root")).unwrap();
            t.into_inner().unwrap().finish().unwrap();
        }
        let (_dir, top) = extract(&archive);
        assert_eq!(top.file_name().unwrap(), "root");
        assert_eq!(
            std::fs::read_to_string(top.join("sys/devices/system/cpu/online")).unwrap(),
            "0-3\n"
        );
        assert!(have("sh"));
        let absent = "no-such-tool-hwsurvey";
        assert!(!have(absent));
    }
}

//! File systems and volume signatures made by Debian's own tools, on image files and on loop
//! devices, for the tests that check a raw device holding one is refused and left unchanged.
//!
//! Every command comes from a package in scripts/lib.sh (e2fsprogs, xfsprogs, btrfs-progs,
//! dosfstools, squashfs-tools, erofs-utils, util-linux, lvm2, mdadm). A [`LoopDevice`] is
//! detached when dropped (also while a failed assertion unwinds); an MD array a [`Kind::MdMember`]
//! creates is stopped before `make` returns, an LVM PV is left unactivated (no volume group).

use std::path::{Path, PathBuf};
use std::process::Command;

/// One kind of signature a test writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `mkfs.ext4` (e2fsprogs).
    Ext4,
    /// `mkfs.xfs` (xfsprogs; 300 MiB minimum).
    Xfs,
    /// `mkfs.btrfs` (btrfs-progs).
    Btrfs,
    /// `mkfs.vfat` (dosfstools).
    Vfat,
    /// `mksquashfs` (squashfs-tools).
    Squashfs,
    /// `mkfs.erofs` (erofs-utils).
    Erofs,
    /// `mkfs.minix` (util-linux).
    Minix,
    /// `mkswap` (util-linux).
    Swap,
    /// `pvcreate` (lvm2); needs a block device.
    LvmPv,
    /// `mdadm --create` RAID-1 member, array stopped again (mdadm); needs a block device.
    MdMember,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 10] = [
        Kind::Ext4,
        Kind::Xfs,
        Kind::Btrfs,
        Kind::Vfat,
        Kind::Squashfs,
        Kind::Erofs,
        Kind::Minix,
        Kind::Swap,
        Kind::LvmPv,
        Kind::MdMember,
    ];

    /// Short name (`ext4`, `lvm-pv`, `md-member`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Ext4 => "ext4",
            Kind::Xfs => "xfs",
            Kind::Btrfs => "btrfs",
            Kind::Vfat => "vfat",
            Kind::Squashfs => "squashfs",
            Kind::Erofs => "erofs",
            Kind::Minix => "minix",
            Kind::Swap => "swap",
            Kind::LvmPv => "lvm-pv",
            Kind::MdMember => "md-member",
        }
    }

    /// libblkid's TYPE for it.
    pub fn blkid_type(self) -> &'static str {
        match self {
            Kind::Ext4 => "ext4",
            Kind::Xfs => "xfs",
            Kind::Btrfs => "btrfs",
            Kind::Vfat => "vfat",
            Kind::Squashfs => "squashfs",
            Kind::Erofs => "erofs",
            Kind::Minix => "minix",
            Kind::Swap => "swap",
            Kind::LvmPv => "LVM2_member",
            Kind::MdMember => "linux_raid_member",
        }
    }

    /// The command that makes it.
    pub fn command(self) -> &'static str {
        match self {
            Kind::Ext4 => "mkfs.ext4",
            Kind::Xfs => "mkfs.xfs",
            Kind::Btrfs => "mkfs.btrfs",
            Kind::Vfat => "mkfs.vfat",
            Kind::Squashfs => "mksquashfs",
            Kind::Erofs => "mkfs.erofs",
            Kind::Minix => "mkfs.minix",
            Kind::Swap => "mkswap",
            Kind::LvmPv => "pvcreate",
            Kind::MdMember => "mdadm",
        }
    }

    /// Why it cannot be made here (its tool is not installed; for an MD member, the kernel has
    /// no md driver), or `None`.
    pub fn unavailable(self) -> Option<String> {
        if find_tool(self.command()).is_none() {
            return Some(format!(
                "{}: {} not installed (scripts/lib.sh installs it)",
                self.name(),
                self.command()
            ));
        }
        if self == Kind::MdMember && !Path::new("/proc/mdstat").exists() {
            return Some(format!(
                "{}: this kernel has no md driver (no /proc/mdstat): mdadm cannot create an array",
                self.name()
            ));
        }
        None
    }

    /// Whether it can only be made on a block device (not on an image file).
    pub fn needs_block_device(self) -> bool {
        matches!(self, Kind::LvmPv | Kind::MdMember)
    }
}

/// Size of every image and loop device: 320 MiB (sparse), above mkfs.xfs's 300 MiB minimum.
pub const IMAGE_BYTES: u64 = 320 << 20;

/// The command `name` on PATH or in /usr/sbin, /sbin (mkfs tools live in sbin).
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let shown = format!("{cmd:?}");
    let out = cmd.output().map_err(|e| format!("{shown}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{shown}: {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A sparse file of [`IMAGE_BYTES`] at `path`.
pub fn blank_image(path: &Path) -> Result<(), String> {
    let f = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    f.set_len(IMAGE_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes `kind` onto `target` (an image file of [`IMAGE_BYTES`], or a block device), with
/// `scratch` as a directory for the source trees of squashfs and erofs.
///
/// Errors: the tool is missing (`"<cmd>: not installed"`), or its command line and stderr.
pub fn make(kind: Kind, target: &Path, scratch: &Path) -> Result<(), String> {
    let tool =
        find_tool(kind.command()).ok_or_else(|| format!("{}: not installed", kind.command()))?;
    let mut cmd = Command::new(&tool);
    match kind {
        Kind::Ext4 => cmd.args(["-q", "-F"]).arg(target),
        Kind::Xfs => cmd.args(["-q", "-f"]).arg(target),
        Kind::Btrfs => cmd.args(["-q", "-f"]).arg(target),
        Kind::Vfat => cmd.arg(target),
        Kind::Minix => cmd.arg(target),
        Kind::Swap => cmd.arg(target),
        Kind::Squashfs | Kind::Erofs => {
            let src = scratch.join(format!("{}-src", kind.name()));
            std::fs::create_dir_all(&src).map_err(|e| e.to_string())?;
            std::fs::write(src.join("hello.txt"), "a file in the image\n")
                .map_err(|e| e.to_string())?;
            let img = scratch.join(format!("{}.img", kind.name()));
            let _ = std::fs::remove_file(&img);
            if kind == Kind::Squashfs {
                run(Command::new(&tool).arg(&src).arg(&img).args([
                    "-noappend",
                    "-quiet",
                    "-no-progress",
                ]))?;
            } else {
                run(Command::new(&tool).arg("--quiet").arg(&img).arg(&src))?;
            }
            // Copied onto the start of the target: a device keeps its size, a file too.
            let bytes = std::fs::read(&img).map_err(|e| e.to_string())?;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(target)
                .map_err(|e| format!("{}: {e}", target.display()))?;
            std::io::Write::write_all(&mut f, &bytes).map_err(|e| e.to_string())?;
            return f.sync_all().map_err(|e| e.to_string());
        }
        Kind::LvmPv => cmd
            .args([
                "--config",
                "devices { use_devicesfile = 0 } global { use_lvmetad = 0 }",
                "-qq",
                "-y",
                "-ff",
            ])
            .arg(target),
        Kind::MdMember => {
            let name = format!(
                "/dev/md/hwsurvey-test-{}-{}",
                std::process::id(),
                target
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            );
            run(Command::new(&tool)
                .args([
                    "--create",
                    &name,
                    "--run",
                    "--quiet",
                    "--level=1",
                    "--raid-devices=2",
                    "--metadata=1.2",
                ])
                .arg(target)
                .arg("missing"))?;
            // Stopped again at once: only the member's superblock stays.
            return run(Command::new(&tool).args(["--stop", &name]));
        }
    };
    run(&mut cmd)
}

/// A loop device over a file, detached on drop.
#[derive(Debug)]
pub struct LoopDevice {
    /// `/dev/loopN`.
    pub path: PathBuf,
}

impl LoopDevice {
    /// `losetup --find --show FILE`.
    ///
    /// Errors: losetup missing or failing (not root, no /dev/loop-control, qemu-user).
    pub fn attach(file: &Path) -> Result<LoopDevice, String> {
        let tool = find_tool("losetup").ok_or("losetup: not installed")?;
        let out = Command::new(tool)
            .args(["--find", "--show"])
            .arg(file)
            .output()
            .map_err(|e| format!("losetup: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "losetup --find --show {}: {}",
                file.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Ok(LoopDevice { path })
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        if let Some(tool) = find_tool("losetup") {
            let _ = Command::new(tool).arg("-d").arg(&self.path).status();
        }
    }
}

/// Why loop devices cannot be used here, or `None` when they can: not root, no
/// /dev/loop-control, or running under qemu-user (which has no loop ioctls).
pub fn loop_unavailable() -> Option<String> {
    // SAFETY-free check of the effective uid: /proc/self/status "Uid:" second field.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1).map(str::to_string));
    if euid.as_deref() != Some("0") {
        return Some("not root (loop devices need root)".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control".into());
    }
    if crate::under_qemu_user() {
        return Some("under qemu-user (no loop device ioctls)".into());
    }
    if find_tool("losetup").is_none() {
        return Some("losetup (util-linux) not installed".into());
    }
    None
}

/// A SHA-256-free but collision-safe enough fingerprint for "unchanged": the bytes themselves
/// compared through a 64-bit FNV-1a hash of every byte plus the length.
pub fn checksum(path: &Path) -> Result<(u64, u64), String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut len = 0u64;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        for &b in &buf[..n] {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        len += n as u64;
    }
    Ok((h, len))
}

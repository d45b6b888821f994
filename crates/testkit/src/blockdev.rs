//! File systems and volume signatures made by Debian's own tools, on image files and on loop
//! devices, for the tests that check a raw device holding one is refused and left unchanged.
//!
//! Every command comes from a package in scripts/lib.sh (e2fsprogs, xfsprogs, btrfs-progs,
//! dosfstools, squashfs-tools, erofs-utils, util-linux, lvm2, mdadm; an MD member's v1.2
//! superblock is written by hand where the kernel has no md driver). A [`LoopDevice`] is
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
    /// An MD RAID-1 member with a v1.2 superblock: `mdadm --create`, array stopped again, where
    /// the kernel has the md driver (needs a block device); otherwise the superblock written by
    /// hand ([`md_v12_superblock`]), which libblkid recognises from its bytes alone.
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

    /// Why it cannot be made here (its tool is not installed), or `None`. An MD member can
    /// always be made: by mdadm where it and the md driver are there, by hand otherwise
    /// ([`Kind::md_by_mdadm`]).
    pub fn unavailable(self) -> Option<String> {
        if self == Kind::MdMember {
            return None;
        }
        if find_tool(self.command()).is_none() {
            return Some(format!(
                "{}: {} not installed (scripts/lib.sh installs it)",
                self.name(),
                self.command()
            ));
        }
        None
    }

    /// How an MD member is made here: `Ok(())` by `mdadm --create` (mdadm installed and the
    /// kernel has the md driver, /proc/mdstat), or `Err(why not)`, when [`make`] writes the
    /// v1.2 superblock by hand ([`md_v12_superblock`]).
    pub fn md_by_mdadm() -> Result<(), String> {
        if find_tool("mdadm").is_none() {
            return Err("mdadm not installed".into());
        }
        if !Path::new("/proc/mdstat").exists() {
            return Err("this kernel has no md driver (no /proc/mdstat)".into());
        }
        Ok(())
    }

    /// Whether it can only be made on a block device (not on an image file): an LVM PV, and
    /// an MD member made by mdadm (a hand-built one is written to an image file as well).
    pub fn needs_block_device(self) -> bool {
        match self {
            Kind::LvmPv => true,
            Kind::MdMember => Kind::md_by_mdadm().is_ok(),
            _ => false,
        }
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
    if kind == Kind::MdMember && Kind::md_by_mdadm().is_err() {
        return write_md_v12_superblock(target);
    }
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

/// Byte offset of an MD v1.2 superblock from the start of the member: 4096 (8 sectors;
/// mdadm's super1.c: "1.2: 4K from start").
pub const MD_V12_OFFSET: u64 = 4096;
/// `MD_SB_MAGIC`, include/uapi/linux/raid/md_p.h.
pub const MD_SB_MAGIC: u32 = 0xa92b_4efc;

/// The 256-byte fixed part plus `dev_roles` of an MD v1.2 superblock (`struct
/// mdp_superblock_1`, include/uapi/linux/raid/md_p.h, every field little endian) for a
/// 2-disk RAID-1 member (this device role 0, the other missing) of a member of `member_bytes`
/// bytes: magic 0xa92b4efc, major_version 1, level 1, raid_disks 2, data_offset 2048
/// sectors, super_offset 8 sectors (4096 bytes), max_dev 2 and `sb_csum` as the kernel's
/// `calc_sb_1_csum` (drivers/md/md.c) computes it: the sum of the little-endian 32-bit words of
/// the first 256 + 2 x max_dev bytes with `sb_csum` taken as 0, folded once
/// (`(sum & 0xffffffff) + (sum >> 32)`).
pub fn md_v12_superblock(member_bytes: u64) -> Vec<u8> {
    const MAX_DEV: u32 = 2;
    let mut sb = vec![0u8; 256 + 2 * MAX_DEV as usize];
    let put32 = |sb: &mut [u8], at: usize, v: u32| sb[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let put64 = |sb: &mut [u8], at: usize, v: u64| sb[at..at + 8].copy_from_slice(&v.to_le_bytes());
    let sectors = member_bytes / 512;
    let data_offset: u64 = 2048;
    put32(&mut sb, 0, MD_SB_MAGIC); // magic
    put32(&mut sb, 4, 1); // major_version
    put32(&mut sb, 8, 0); // feature_map
    sb[16..32].copy_from_slice(b"hwsurvey-md-test"); // set_uuid
    sb[32..49].copy_from_slice(b"hwsurvey:md-test0"); // set_name
    put64(&mut sb, 64, 1_764_547_200); // ctime, seconds
    put32(&mut sb, 72, 1); // level
    put64(&mut sb, 80, sectors - data_offset); // size, sectors
    put32(&mut sb, 92, 2); // raid_disks
    put64(&mut sb, 128, data_offset); // data_offset, sectors
    put64(&mut sb, 136, sectors - data_offset); // data_size, sectors
    put64(&mut sb, 144, MD_V12_OFFSET / 512); // super_offset, sectors
    put32(&mut sb, 160, 0); // dev_number
    sb[168..184].copy_from_slice(b"hwsurvey-member0"); // device_uuid
    put64(&mut sb, 192, 1_764_547_200); // utime
    put64(&mut sb, 200, 1); // events
    put64(&mut sb, 208, u64::MAX); // resync_offset: in sync
    put32(&mut sb, 220, MAX_DEV); // max_dev
    sb[256..258].copy_from_slice(&0u16.to_le_bytes()); // dev_roles[0]: role 0
    sb[258..260].copy_from_slice(&0xfffeu16.to_le_bytes()); // dev_roles[1]: faulty/missing
    let csum = md_sb_1_csum(&sb);
    put32(&mut sb, 216, csum);
    sb
}

/// `calc_sb_1_csum` of drivers/md/md.c over a v1 superblock's first 256 + 2 x `max_dev` bytes
/// (`max_dev` at byte 220), with its `sb_csum` (byte 216) counted as 0.
pub fn md_sb_1_csum(sb: &[u8]) -> u32 {
    let word = |at: usize| u32::from_le_bytes([sb[at], sb[at + 1], sb[at + 2], sb[at + 3]]);
    let size = (256 + 2 * word(220) as usize).min(sb.len());
    let mut sum: u64 = 0;
    let mut at = 0;
    while at + 4 <= size {
        if at != 216 {
            sum += word(at) as u64;
        }
        at += 4;
    }
    if size - at == 2 {
        sum += u16::from_le_bytes([sb[at], sb[at + 1]]) as u64;
    }
    ((sum & 0xffff_ffff) + (sum >> 32)) as u32
}

/// Writes [`md_v12_superblock`] at [`MD_V12_OFFSET`] of `target` (a block device or an image
/// file), sized from the target's length, and syncs it.
fn write_md_v12_superblock(target: &Path) -> Result<(), String> {
    use std::io::{Seek, SeekFrom, Write};
    let shown = |e: std::io::Error| format!("{}: {e}", target.display());
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(target)
        .map_err(shown)?;
    let bytes = f.seek(SeekFrom::End(0)).map_err(shown)?;
    if bytes < 4 << 20 {
        return Err(format!(
            "{}: {bytes} bytes, too small for an MD member",
            target.display()
        ));
    }
    f.seek(SeekFrom::Start(MD_V12_OFFSET)).map_err(shown)?;
    f.write_all(&md_v12_superblock(bytes)).map_err(shown)?;
    f.sync_all().map_err(shown)
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
        LoopDevice::attach_at(file, 0, false)
    }

    /// `losetup --find --show --offset OFFSET [--partscan] FILE`: a loop device over `file`
    /// (an image, or another block device) from byte `offset_bytes`, scanning its partition
    /// table when `partscan`.
    ///
    /// Errors: as [`LoopDevice::attach`].
    pub fn attach_at(file: &Path, offset_bytes: u64, partscan: bool) -> Result<LoopDevice, String> {
        let tool = find_tool("losetup").ok_or("losetup: not installed")?;
        let mut cmd = Command::new(tool);
        cmd.args(["--find", "--show", "--offset", &offset_bytes.to_string()]);
        if partscan {
            cmd.arg("--partscan");
        }
        let out = cmd
            .arg(file)
            .output()
            .map_err(|e| format!("losetup: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "losetup --find --show --offset {offset_bytes} {}: {}",
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

/// A file system mounted by a test, unmounted (lazily, if busy) when dropped.
#[derive(Debug)]
pub struct Mounted {
    /// The mount point.
    pub at: PathBuf,
}

impl Mounted {
    /// `mount DEVICE AT`.
    ///
    /// Errors: mount missing or failing, with its stderr.
    pub fn mount(device: &Path, at: &Path) -> Result<Mounted, String> {
        std::fs::create_dir_all(at).map_err(|e| format!("{}: {e}", at.display()))?;
        let tool = find_tool("mount").ok_or("mount: not installed")?;
        run(Command::new(tool).arg(device).arg(at))?;
        Ok(Mounted {
            at: at.to_path_buf(),
        })
    }

    /// Unmounts now (the drop does nothing after this).
    ///
    /// Errors: umount's stderr.
    pub fn unmount(mut self) -> Result<(), String> {
        let at = std::mem::take(&mut self.at);
        let tool = find_tool("umount").ok_or("umount: not installed")?;
        run(Command::new(tool).arg(&at))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if self.at.as_os_str().is_empty() {
            return;
        }
        if let Some(tool) = find_tool("umount") {
            let ok = Command::new(&tool)
                .arg(&self.at)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                let _ = Command::new(tool).arg("-l").arg(&self.at).status();
            }
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

/// libblkid's low-level probe of `device` (`blkid -p -o value -s TYPE`): the TYPE it reports,
/// `Ok(None)` when it finds no signature (exit 2), or why it could not run.
pub fn blkid_probe_type(device: &Path) -> Result<Option<String>, String> {
    let tool = find_tool("blkid").ok_or("blkid (util-linux) not installed")?;
    let out = Command::new(tool)
        .args(["-p", "-o", "value", "-s", "TYPE"])
        .arg(device)
        .output()
        .map_err(|e| format!("blkid: {e}"))?;
    match out.status.code() {
        Some(0) => Ok(Some(
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        )),
        Some(2) => Ok(None),
        _ => Err(format!(
            "blkid -p {}: {}: {}",
            device.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_superblock_fields_and_checksum() {
        let sb = md_v12_superblock(IMAGE_BYTES);
        assert_eq!(sb.len(), 260);
        assert_eq!(&sb[0..4], &[0xfc, 0x4e, 0x2b, 0xa9], "magic, little endian");
        assert_eq!(u64::from_le_bytes(sb[144..152].try_into().unwrap()), 8);
        let sectors = IMAGE_BYTES / 512 - 2048;
        assert_eq!(
            u64::from_le_bytes(sb[136..144].try_into().unwrap()),
            sectors
        );
        // the checksum is the folded sum of every other word: adding the stored checksum back
        // as a word of 0 changes nothing, and any flipped byte changes it
        let stored = u32::from_le_bytes(sb[216..220].try_into().unwrap());
        assert_eq!(md_sb_1_csum(&sb), stored);
        let sum: u64 = sb[..260]
            .chunks(4)
            .enumerate()
            .filter(|(i, _)| *i != 216 / 4)
            .map(|(_, w)| u32::from_le_bytes(w.try_into().unwrap()) as u64)
            .sum();
        assert_eq!(stored as u64, (sum & 0xffff_ffff) + (sum >> 32));
        let mut flipped = sb.clone();
        flipped[100] ^= 1;
        assert_ne!(md_sb_1_csum(&flipped), stored);
    }

    /// libblkid recognises the hand-built member from its bytes: on an image file, where no
    /// kernel driver or loop device is needed.
    #[test]
    fn blkid_recognises_the_hand_built_md_member() {
        if !crate::tool("blkid") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("md.img");
        blank_image(&img).unwrap();
        assert_eq!(blkid_probe_type(&img).unwrap(), None);
        write_md_v12_superblock(&img).unwrap();
        assert_eq!(
            blkid_probe_type(&img).unwrap().as_deref(),
            Some("linux_raid_member")
        );
        // mdadm reads the superblock as the kernel would and checks the checksum (libblkid
        // 2.38 does not; later versions do): "Checksum : <hex> - correct"
        if !crate::tool("mdadm") {
            return;
        }
        let examine = |img: &Path| {
            let out = Command::new(find_tool("mdadm").unwrap())
                .arg("--examine")
                .arg(img)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let csum = md_sb_1_csum(&md_v12_superblock(IMAGE_BYTES));
        let text = examine(&img);
        assert!(
            text.contains(&format!("Checksum : {csum:08x} - correct")),
            "{text}"
        );
        assert!(
            text.contains("Version : 1.2") && text.contains("Raid Level : raid1"),
            "{text}"
        );
        let mut f = std::fs::OpenOptions::new().write(true).open(&img).unwrap();
        use std::io::{Seek, SeekFrom, Write};
        f.seek(SeekFrom::Start(MD_V12_OFFSET + 216)).unwrap();
        f.write_all(&(csum ^ 1).to_le_bytes()).unwrap();
        f.sync_all().unwrap();
        let text = examine(&img);
        assert!(
            text.contains(&format!(
                "Checksum : {:08x} - expected {csum:08x}",
                csum ^ 1
            )),
            "{text}"
        );
    }
}

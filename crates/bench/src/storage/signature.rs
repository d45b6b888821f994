//! Filesystem, volume and partition-table signatures at the head of a block device (or any
//! file), so a raw device that holds anything is never written.
//!
//! Magic numbers and offsets, as util-linux libblkid's probers and the on-disk formats define
//! them: ext2/3/4 s_magic 0xEF53 (little-endian) at 1024+56; XFS "XFSB" at 0; btrfs "_BHRfS_M"
//! at 65536+64; Linux swap "SWAPSPACE2"/"SWAP-SPACE" in the last 10 bytes of the first page
//! (4, 8, 16 or 64 KiB pages); LVM2 "LABELONE" in one of the first four 512-byte sectors;
//! MD RAID v1.1/v1.2 superblock 0xa92b4efc (little-endian) at 0 or 4096; LUKS "LUKS\xba\xbe" at 0;
//! GPT "EFI PART" at LBA 1 (512 or 4096); MBR/boot sector 0x55 0xAA at 510; NTFS "NTFS    " at 3;
//! FAT "FAT" at 54 or 82; ISO 9660 "CD001" at 32769; bcache magic at 4096+24.

use serde::{Deserialize, Serialize};

/// Bytes of the head a caller must read for [`scan`] to see every signature it knows
/// (btrfs's superblock magic ends at 65536+72).
pub const HEAD_BYTES: usize = 68 * 1024;

/// What was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignatureKind {
    /// ext2, ext3 or ext4 superblock.
    Ext,
    /// XFS superblock.
    Xfs,
    /// btrfs superblock.
    Btrfs,
    /// Linux swap area.
    Swap,
    /// LVM2 physical volume label.
    Lvm2,
    /// Linux MD RAID v1.1/v1.2 superblock.
    MdRaid,
    /// LUKS encrypted volume.
    Luks,
    /// GUID partition table header.
    Gpt,
    /// MBR partition table or boot sector (0x55AA).
    Mbr,
    /// NTFS boot sector.
    Ntfs,
    /// FAT boot sector.
    Fat,
    /// ISO 9660 volume descriptor.
    Iso9660,
    /// bcache superblock.
    Bcache,
}

impl SignatureKind {
    /// Short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            SignatureKind::Ext => "ext2/3/4",
            SignatureKind::Xfs => "xfs",
            SignatureKind::Btrfs => "btrfs",
            SignatureKind::Swap => "swap",
            SignatureKind::Lvm2 => "LVM2 PV",
            SignatureKind::MdRaid => "MD RAID",
            SignatureKind::Luks => "LUKS",
            SignatureKind::Gpt => "GPT",
            SignatureKind::Mbr => "MBR/boot sector",
            SignatureKind::Ntfs => "NTFS",
            SignatureKind::Fat => "FAT",
            SignatureKind::Iso9660 => "ISO 9660",
            SignatureKind::Bcache => "bcache",
        }
    }
}

/// A signature and where it sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// What it is.
    pub kind: SignatureKind,
    /// Byte offset of the magic from the start of the device.
    pub offset_bytes: usize,
}

fn at(head: &[u8], off: usize, magic: &[u8]) -> bool {
    head.get(off..off + magic.len()) == Some(magic)
}

/// Every known signature in `head` (the first bytes of a device; pass at least [`HEAD_BYTES`]
/// to see them all — a shorter head simply finds fewer). An all-zero head gives an empty list.
pub fn scan(head: &[u8]) -> Vec<Signature> {
    let mut found = Vec::new();
    let mut hit = |kind, offset_bytes| found.push(Signature { kind, offset_bytes });
    if at(head, 1024 + 56, &[0x53, 0xef]) {
        hit(SignatureKind::Ext, 1024 + 56);
    }
    if at(head, 0, b"XFSB") {
        hit(SignatureKind::Xfs, 0);
    }
    if at(head, 65536 + 64, b"_BHRfS_M") {
        hit(SignatureKind::Btrfs, 65536 + 64);
    }
    for page in [4096usize, 8192, 16384, 65536] {
        let off = page - 10;
        if at(head, off, b"SWAPSPACE2") || at(head, off, b"SWAP-SPACE") {
            hit(SignatureKind::Swap, off);
        }
    }
    for sector in 0..4 {
        if at(head, sector * 512, b"LABELONE") {
            hit(SignatureKind::Lvm2, sector * 512);
        }
    }
    for off in [0usize, 4096] {
        if at(head, off, &[0xfc, 0x4e, 0x2b, 0xa9]) {
            hit(SignatureKind::MdRaid, off);
        }
    }
    if at(head, 0, b"LUKS\xba\xbe") {
        hit(SignatureKind::Luks, 0);
    }
    for off in [512usize, 4096] {
        if at(head, off, b"EFI PART") {
            hit(SignatureKind::Gpt, off);
        }
    }
    if at(head, 510, &[0x55, 0xaa]) {
        hit(SignatureKind::Mbr, 510);
    }
    if at(head, 3, b"NTFS    ") {
        hit(SignatureKind::Ntfs, 3);
    }
    for off in [54usize, 82] {
        if at(head, off, b"FAT") {
            hit(SignatureKind::Fat, off);
        }
    }
    if at(head, 32769, b"CD001") {
        hit(SignatureKind::Iso9660, 32769);
    }
    if at(
        head,
        4096 + 24,
        &[
            0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba,
            0x6d, 0x81,
        ],
    ) {
        hit(SignatureKind::Bcache, 4096 + 24);
    }
    found
}

/// Reads the first [`HEAD_BYTES`] (or fewer, if shorter) of `path` and scans them.
///
/// Errors: the open or read error of `path`.
pub fn scan_path(path: &std::path::Path) -> std::io::Result<Vec<Signature>> {
    use std::io::Read;
    let f = std::fs::File::open(path)?;
    let mut head = Vec::with_capacity(HEAD_BYTES);
    f.take(HEAD_BYTES as u64).read_to_end(&mut head)?;
    Ok(scan(&head))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_head_is_clean_and_each_magic_is_found() {
        let zero = vec![0u8; HEAD_BYTES];
        assert!(scan(&zero).is_empty());
        let cases: &[(usize, &[u8], SignatureKind)] = &[
            (1080, &[0x53, 0xef], SignatureKind::Ext),
            (0, b"XFSB", SignatureKind::Xfs),
            (65600, b"_BHRfS_M", SignatureKind::Btrfs),
            (4086, b"SWAPSPACE2", SignatureKind::Swap),
            (8182, b"SWAP-SPACE", SignatureKind::Swap),
            (512, b"LABELONE", SignatureKind::Lvm2),
            (4096, &[0xfc, 0x4e, 0x2b, 0xa9], SignatureKind::MdRaid),
            (512, b"EFI PART", SignatureKind::Gpt),
            (510, &[0x55, 0xaa], SignatureKind::Mbr),
            (32769, b"CD001", SignatureKind::Iso9660),
        ];
        for &(off, magic, kind) in cases {
            let mut h = zero.clone();
            h[off..off + magic.len()].copy_from_slice(magic);
            let got = scan(&h);
            assert!(
                got.contains(&Signature {
                    kind,
                    offset_bytes: off
                }),
                "{kind:?} at {off}: {got:?}"
            );
        }
        // Big-endian ext magic (0x53 0xef swapped) is not ext.
        let mut h = zero.clone();
        h[1080..1082].copy_from_slice(&[0xef, 0x53]);
        assert!(scan(&h).is_empty());
        // A short head cannot see btrfs and does not panic.
        assert!(scan(&[0u8; 100]).is_empty());
    }
}

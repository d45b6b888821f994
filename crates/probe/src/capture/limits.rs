//! Bounds of unpacking an archive ([`super::unpack`]). A snapshot holds small text files (the
//! largest of the fixtures' captures: 16k entries, 365 KB in all, 134 KB in one file):
//! anything far beyond is not a capture of a machine's /proc and /sys.

/// A file larger than this (4 MiB) is skipped, and reported ([`super::Capture::skipped`]).
pub const FILE_BYTES: u64 = 4 << 20;
/// At most this much of the archive is read once decompressed (64 MiB: headers, data, and
/// the data of skipped files); more refuses the archive.
pub const TOTAL_BYTES: u64 = 64 << 20;
/// At most this many entries (files, folders, links); more refuses the archive.
pub const ENTRIES: u64 = 50_000;

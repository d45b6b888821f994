//! Creating an archive's entries beneath the unpack folder, never through a symlink.
//!
//! An entry's path is given as its plain components (no `..`, no root: the caller refused
//! or stripped those). Each folder on the way is opened without following a symlink: with
//! the `sys` feature by `openat2(2)` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (one call
//! for a folder that exists), else, and where the kernel has no openat2 (before Linux 5.6;
//! qemu-user), one `openat(O_DIRECTORY | O_NOFOLLOW)` a component, creating what is missing
//! with `mkdirat`; the entry itself is then made relative to that folder's descriptor
//! (`openat(O_CREAT | O_EXCL | O_NOFOLLOW)`, `symlinkat`, `linkat` without
//! `AT_SYMLINK_FOLLOW`), so a symlink the archive made earlier is never followed, whatever
//! it points at. Without the `sys` feature, each component is checked with `lstat` before
//! use, which is as safe here: the unpack folder is private (0700) and only this process
//! writes into it.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Why an entry was not made.
#[derive(Debug)]
pub(super) enum Refusal {
    /// A component of its path is a symlink: the components up to it.
    Symlink(PathBuf),
    /// The OS refused (ENOSPC, a file where a folder is wanted).
    Io(std::io::Error),
}

impl From<std::io::Error> for Refusal {
    fn from(e: std::io::Error) -> Refusal {
        Refusal::Io(e)
    }
}

/// The `(folders, name)` of an entry's components; an empty path is an error.
fn split(comps: &[OsString]) -> Result<(&[OsString], &OsString), Refusal> {
    match comps.split_last() {
        Some((last, parents)) => Ok((parents, last)),
        None => Err(Refusal::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "empty path",
        ))),
    }
}

/// The unpack folder, where entries are made.
pub(super) struct Beneath {
    #[cfg(not(feature = "sys"))]
    root: PathBuf,
    #[cfg(feature = "sys")]
    fd: std::os::fd::OwnedFd,
}

#[cfg(feature = "sys")]
mod imp {
    use super::*;
    use nix::errno::Errno;
    use nix::fcntl::{openat, openat2, AtFlags, OFlag, OpenHow, ResolveFlag};
    use nix::sys::stat::{fstatat, mkdirat, Mode, SFlag};
    use nix::unistd::{linkat, symlinkat, unlinkat, UnlinkatFlags};
    use std::os::fd::OwnedFd;

    const DIR: OFlag = OFlag::O_DIRECTORY
        .union(OFlag::O_RDONLY)
        .union(OFlag::O_CLOEXEC)
        .union(OFlag::O_NOFOLLOW);

    fn io(e: Errno) -> Refusal {
        Refusal::Io(std::io::Error::from(e))
    }

    impl Beneath {
        /// The folder `root` (which this process made).
        pub(in crate::capture) fn new(root: &Path) -> std::io::Result<Beneath> {
            let fd = nix::fcntl::open(root, DIR, Mode::empty())?;
            Ok(Beneath { fd })
        }

        /// The folder of `comps` beneath the root, opened; with `create`, missing folders
        /// are made (0700).
        fn folder(&self, comps: &[OsString], create: bool) -> Result<OwnedFd, Refusal> {
            if !comps.is_empty() {
                let rel: PathBuf = comps.iter().collect();
                let how = OpenHow::new()
                    .flags(DIR)
                    .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS);
                // a folder that exists, in one call; anything else (a component missing or a
                // symlink, or no openat2 in this kernel) is left to the walk, which says which
                if let Ok(fd) = openat2(&self.fd, &rel, how) {
                    return Ok(fd);
                }
            }
            let mut fd = openat(&self.fd, ".", DIR, Mode::empty()).map_err(io)?;
            for (i, c) in comps.iter().enumerate() {
                let next = match openat(&fd, c.as_os_str(), DIR, Mode::empty()) {
                    Ok(next) => next,
                    Err(Errno::ENOENT) if create => {
                        match mkdirat(&fd, c.as_os_str(), Mode::from_bits_truncate(0o700)) {
                            Ok(()) | Err(Errno::EEXIST) => {}
                            Err(e) => return Err(io(e)),
                        }
                        openat(&fd, c.as_os_str(), DIR, Mode::empty())
                            .map_err(|e| why(&fd, comps, i, e))?
                    }
                    Err(e) => return Err(why(&fd, comps, i, e)),
                };
                fd = next;
            }
            Ok(fd)
        }

        /// Makes `name` in `dir` free for a new entry: a file or link there is removed (a
        /// later entry of an archive replaces an earlier one, as tar does); a folder is an
        /// error.
        fn free(dir: &OwnedFd, name: &OsString) -> Result<(), Refusal> {
            let st = fstatat(dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW).map_err(io)?;
            if SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR {
                return Err(io(Errno::EISDIR));
            }
            unlinkat(dir, name.as_os_str(), UnlinkatFlags::NoRemoveDir).map_err(io)
        }

        /// Makes the folder `comps` and the folders above it.
        pub(in crate::capture) fn dir(&self, comps: &[OsString]) -> Result<(), Refusal> {
            self.folder(comps, true).map(drop)
        }

        /// Makes the regular file `comps` with `data` and permission bits `mode & 0o777`.
        pub(in crate::capture) fn file(
            &self,
            comps: &[OsString],
            mode: u32,
            data: &mut dyn Read,
        ) -> Result<(), Refusal> {
            use std::os::unix::fs::PermissionsExt;
            let (parents, name) = split(comps)?;
            let dir = self.folder(parents, true)?;
            let flags = OFlag::O_WRONLY
                | OFlag::O_CREAT
                | OFlag::O_EXCL
                | OFlag::O_NOFOLLOW
                | OFlag::O_CLOEXEC;
            let create = || {
                openat(
                    &dir,
                    name.as_os_str(),
                    flags,
                    Mode::from_bits_truncate(0o600),
                )
            };
            let fd = match create() {
                Ok(fd) => fd,
                Err(Errno::EEXIST) => {
                    Self::free(&dir, name)?;
                    create().map_err(io)?
                }
                Err(e) => return Err(io(e)),
            };
            let mut file = std::fs::File::from(fd);
            std::io::copy(data, &mut file)?;
            file.set_permissions(std::fs::Permissions::from_mode(mode & 0o777))?;
            Ok(())
        }

        /// Makes the symlink `comps` holding `target` (never followed here).
        pub(in crate::capture) fn symlink(
            &self,
            comps: &[OsString],
            target: &Path,
        ) -> Result<(), Refusal> {
            let (parents, name) = split(comps)?;
            let dir = self.folder(parents, true)?;
            match symlinkat(target, &dir, name.as_os_str()) {
                Ok(()) => Ok(()),
                Err(Errno::EEXIST) => {
                    Self::free(&dir, name)?;
                    symlinkat(target, &dir, name.as_os_str()).map_err(io)
                }
                Err(e) => Err(io(e)),
            }
        }

        /// Makes `comps` a hard link of the entry `target` (both beneath the root; a symlink
        /// at `target` is linked itself, not followed).
        pub(in crate::capture) fn hard_link(
            &self,
            comps: &[OsString],
            target: &[OsString],
        ) -> Result<(), Refusal> {
            let (parents, name) = split(comps)?;
            let (t_parents, t_name) = split(target)?;
            let t_dir = self.folder(t_parents, false)?;
            let dir = self.folder(parents, true)?;
            let link = || {
                linkat(
                    &t_dir,
                    t_name.as_os_str(),
                    &dir,
                    name.as_os_str(),
                    AtFlags::empty(),
                )
            };
            match link() {
                Ok(()) => Ok(()),
                Err(Errno::EEXIST) => {
                    Self::free(&dir, name)?;
                    link().map_err(io)
                }
                Err(e) => Err(io(e)),
            }
        }
    }

    /// The refusal for opening component `i` of `comps` in `fd` failing with `e`: a symlink
    /// there is named, anything else is the OS error.
    fn why(fd: &OwnedFd, comps: &[OsString], i: usize, e: Errno) -> Refusal {
        let is_link =
            fstatat(fd, comps[i].as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW).is_ok_and(|st| {
                SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK
            });
        if is_link {
            Refusal::Symlink(comps[..=i].iter().collect())
        } else {
            io(e)
        }
    }
}

#[cfg(not(feature = "sys"))]
mod imp {
    use super::*;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};

    impl Beneath {
        /// The folder `root` (which this process made).
        pub(in crate::capture) fn new(root: &Path) -> std::io::Result<Beneath> {
            Ok(Beneath {
                root: root.to_path_buf(),
            })
        }

        /// The folder of `comps` beneath the root, each component checked not to be a
        /// symlink; with `create`, missing folders are made (0700).
        fn folder(&self, comps: &[OsString], create: bool) -> Result<PathBuf, Refusal> {
            let mut p = self.root.clone();
            for (i, c) in comps.iter().enumerate() {
                p.push(c);
                match std::fs::symlink_metadata(&p) {
                    Ok(m) if m.file_type().is_symlink() => {
                        return Err(Refusal::Symlink(comps[..=i].iter().collect()))
                    }
                    Ok(m) if m.is_dir() => {}
                    Ok(_) => {
                        return Err(Refusal::Io(std::io::Error::other(format!(
                            "{} is not a folder",
                            hwsurvey_model::text::path(&comps[..=i].iter().collect::<PathBuf>())
                        ))))
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
                        std::fs::DirBuilder::new()
                            .mode(0o700)
                            .create(&p)
                            .or_else(|e| match e.kind() {
                                std::io::ErrorKind::AlreadyExists => Ok(()),
                                _ => Err(e),
                            })?;
                    }
                    Err(e) => return Err(Refusal::Io(e)),
                }
            }
            Ok(p)
        }

        /// Makes `path` free for a new entry (see the `sys` version).
        fn free(path: &Path) -> Result<(), Refusal> {
            if std::fs::symlink_metadata(path)?.is_dir() {
                return Err(Refusal::Io(std::io::Error::other("is a folder")));
            }
            Ok(std::fs::remove_file(path)?)
        }

        /// Makes the folder `comps` and the folders above it.
        pub(in crate::capture) fn dir(&self, comps: &[OsString]) -> Result<(), Refusal> {
            self.folder(comps, true).map(drop)
        }

        /// Makes the regular file `comps` with `data` and permission bits `mode & 0o777`.
        pub(in crate::capture) fn file(
            &self,
            comps: &[OsString],
            mode: u32,
            data: &mut dyn Read,
        ) -> Result<(), Refusal> {
            let (parents, name) = split(comps)?;
            let path = self.folder(parents, true)?.join(name);
            // create_new: O_CREAT | O_EXCL, which never follows a symlink at the name
            let create = || {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&path)
            };
            let mut file = match create() {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    Self::free(&path)?;
                    create()?
                }
                Err(e) => return Err(Refusal::Io(e)),
            };
            std::io::copy(data, &mut file)?;
            file.set_permissions(std::fs::Permissions::from_mode(mode & 0o777))?;
            Ok(())
        }

        /// Makes the symlink `comps` holding `target` (never followed here).
        pub(in crate::capture) fn symlink(
            &self,
            comps: &[OsString],
            target: &Path,
        ) -> Result<(), Refusal> {
            let (parents, name) = split(comps)?;
            let path = self.folder(parents, true)?.join(name);
            match std::os::unix::fs::symlink(target, &path) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    Self::free(&path)?;
                    Ok(std::os::unix::fs::symlink(target, &path)?)
                }
                other => Ok(other?),
            }
        }

        /// Makes `comps` a hard link of the entry `target` (`link(2)` does not follow a
        /// symlink at `target`).
        pub(in crate::capture) fn hard_link(
            &self,
            comps: &[OsString],
            target: &[OsString],
        ) -> Result<(), Refusal> {
            let (parents, name) = split(comps)?;
            let (t_parents, t_name) = split(target)?;
            let from = self.folder(t_parents, false)?.join(t_name);
            let path = self.folder(parents, true)?.join(name);
            match std::fs::hard_link(&from, &path) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    Self::free(&path)?;
                    Ok(std::fs::hard_link(&from, &path)?)
                }
                other => Ok(other?),
            }
        }
    }
}

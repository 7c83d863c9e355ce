//! The procfs mount a handle reads (fallback) or names as the view of
//! pidmap(2), pidmap_info(2) and fdmap(2) (their requests' `procfs_fd`).

#[cfg(feature = "fallback")]
use std::ffi::CStr;
#[cfg(feature = "fallback")]
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use crate::error::{Error, Result};

/// `PROC_ROOT_INO` of fs/proc: the inode number of a procfs mount's root.
const PROC_ROOT_INO: u64 = 1;

/// An open procfs mount: `/proc` by default, opened `O_RDONLY |
/// O_DIRECTORY` (the calls refuse an `O_PATH` view: it carries no right to
/// read the directory).
#[derive(Debug)]
pub(crate) struct ProcRoot {
    fd: OwnedFd,
    path: PathBuf,
}

impl ProcRoot {
    /// Open `path` and check that it is a procfs (`fstatfs` magic).
    /// A missing path or a non-procfs is [`Error::ProcNotMounted`]; any
    /// other failure keeps its errno (`EMFILE`, `EACCES`, ...).
    pub(crate) fn open(path: &Path) -> Result<ProcRoot> {
        let context = || format!("opening the proc root {}", path.display());
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR => {
                Error::ProcNotMounted(path.to_path_buf())
            }
            e => Error::io(context(), e.into()),
        })?;
        // The calls read a view fd of 0 as "no view" (as listmount(2)
        // reads mnt_ns_fd): with stdin closed the root must move up.
        let fd = if fd.as_raw_fd() == 0 {
            rustix::io::fcntl_dupfd_cloexec(&fd, 1).map_err(|e| Error::io(context(), e.into()))?
        } else {
            fd
        };
        let st = rustix::fs::fstatfs(&fd).map_err(|e| Error::io(context(), e.into()))?;
        if st.f_type != rustix::fs::PROC_SUPER_MAGIC {
            return Err(Error::ProcNotMounted(path.to_path_buf()));
        }
        // The root of the mount (procfs's root inode is 1, PROC_ROOT_INO),
        // not a directory below it: the view of the calls must be a root.
        let st = rustix::fs::fstat(&fd).map_err(|e| Error::io(context(), e.into()))?;
        if st.st_ino != PROC_ROOT_INO {
            return Err(Error::ProcNotMounted(path.to_path_buf()));
        }
        Ok(ProcRoot {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// For the fallback, which resolves the caller through `self`: a
    /// procfs of a pid namespace we are not in has no `self`.
    #[cfg(feature = "fallback")]
    pub(crate) fn check_self(&self) -> Result<()> {
        match self.openat(c"self", OFlags::DIRECTORY | OFlags::PATH) {
            Ok(_) => Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                Err(Error::ProcNotMounted(self.path.clone()))
            }
            Err(e) => Err(Error::io(
                format!("opening {}/self", self.path.display()),
                e,
            )),
        }
    }

    /// The path it was opened from.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The directory fd.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// `openat(root, rel, flags | O_RDONLY | O_CLOEXEC)`.
    #[cfg(feature = "fallback")]
    pub(crate) fn openat(&self, rel: &CStr, flags: OFlags) -> io::Result<OwnedFd> {
        rustix::fs::openat(
            &self.fd,
            rel,
            flags | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_root_of_a_procfs_is_a_proc_root() {
        let root = ProcRoot::open(Path::new("/proc")).unwrap();
        assert_eq!(root.path(), Path::new("/proc"));
        for not_root in ["/proc/self", "/proc/sys", "/"] {
            assert!(
                matches!(
                    ProcRoot::open(Path::new(not_root)),
                    Err(Error::ProcNotMounted(_))
                ),
                "{not_root}"
            );
        }
    }
}

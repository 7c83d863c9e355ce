//! Reading one file of a task for a refresh: through the file the last
//! full refresh kept open (see [`super::kept`]) while it still names a
//! live task, else opened by its path below the proc root; `ENOENT`/`ESRCH`
//! (gone) and `EACCES`/`EPERM` (denied) are told apart, every other error
//! is returned.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::OFlags;

use super::kept::{FileKey, KeptFd, KeptFiles, TaskFile};
use super::path::{Base, ProcPath};
use super::{is_fd_table_full, is_gone_errno, read_retrying};
use crate::error::{Error, Result};
use crate::proc_root::ProcRoot;

/// What reading a task's file gave.
pub(super) enum Read {
    /// `n` bytes in the buffer.
    Bytes(usize),
    /// `EACCES`/`EPERM`: the view shows the task but not its files.
    Denied,
    /// `ENOENT`/`ESRCH`: it exited since it was listed.
    Gone,
}

/// Where a refresh reads its tasks' files: the proc root, the files kept
/// from the last refresh and the reused buffer.
pub(super) struct TaskFiles<'a> {
    pub(super) root: &'a ProcRoot,
    pub(super) kept: &'a mut KeptFiles,
    /// The handle's other kept files, closed too if the fd table is full.
    pub(super) others: [&'a mut KeptFiles; 1],
    pub(super) buf: &'a mut [u8],
}

/// Where to open a task's file when no kept file serves.
#[derive(Clone, Copy)]
pub(super) enum OpenAt<'a, 'p> {
    /// By its path below the proc root.
    Root(&'p ProcPath),
    /// `TID/<file>` below the thread group's `task` directory, open for
    /// the listing: two path components to walk instead of four.
    TaskDir(BorrowedFd<'a>),
}

impl TaskFiles<'_> {
    /// Read task `tid`'s `file` (at `path`) once into the buffer: through
    /// the file kept from the last refresh if it still names a live task,
    /// else opened by its path (and then kept, if the refresh keeps
    /// files).
    pub(super) fn read(&mut self, tid: i32, file: TaskFile, path: &ProcPath) -> Result<Read> {
        let key = FileKey {
            tgid: tid,
            tid,
            file,
        };
        let kept = self.kept.take(key);
        self.read_file(key, kept, OpenAt::Root(path))
    }

    /// Read the file `key` names once into the buffer: through `kept`
    /// (the last refresh's file for it) while that still names a live
    /// task, else opened at `at` (and then kept, if the refresh keeps
    /// files).
    pub(super) fn read_file(
        &mut self,
        key: FileKey,
        kept: Option<KeptFd>,
        at: OpenAt<'_, '_>,
    ) -> Result<Read> {
        let rel;
        let path = match at {
            OpenAt::Root(path) => path,
            OpenAt::TaskDir(_) => {
                rel = ProcPath::new(Base::Pid(key.tid), None, key.file.suffix());
                &rel
            }
        };
        #[cfg(test)]
        super::read_counter::count_read(path.as_cstr().to_bytes());
        let context = || match at {
            OpenAt::Root(path) => format!("reading {}", path.as_cstr().to_string_lossy()),
            OpenAt::TaskDir(_) => format!(
                "reading {}/task/{}",
                key.tgid,
                path.as_cstr().to_string_lossy()
            ),
        };
        let classify = |e: io::Error| match e.raw_os_error() {
            Some(libc::ENOENT | libc::ESRCH) => Ok(Read::Gone),
            Some(libc::EACCES | libc::EPERM) => Ok(Read::Denied),
            _ => Err(Error::io(context(), e)),
        };
        if let Some(fd) = kept {
            match pread_from_start(&fd, self.buf) {
                Ok(n) => {
                    self.kept.keep_again(key, fd);
                    return Ok(Read::Bytes(n));
                }
                // The task it was opened for is gone; the number may be
                // another task's now: open the path again.
                Err(e) if is_gone_errno(&e) => drop(fd),
                Err(e) => return classify(e),
            }
        }
        let dir = match at {
            OpenAt::Root(_) => None,
            OpenAt::TaskDir(dir) => Some(dir),
        };
        let fd = match self.open(dir, path) {
            Ok(fd) => fd,
            Err(e) => return classify(e),
        };
        match read_retrying(fd.as_fd(), self.buf) {
            Ok(n) => {
                self.kept.keep(key, fd);
                Ok(Read::Bytes(n))
            }
            Err(e) => classify(e),
        }
    }

    /// Read again the last refresh's file for `key`: `Gone` once its
    /// task is gone (the file is then closed), `Denied` on
    /// `EACCES`/`EPERM`.
    pub(super) fn read_kept(&mut self, key: FileKey, fd: KeptFd) -> Result<Read> {
        #[cfg(test)]
        super::read_counter::count_read(key.file.suffix());
        match pread_from_start(&fd, self.buf) {
            Ok(n) => {
                self.kept.keep_again(key, fd);
                Ok(Read::Bytes(n))
            }
            Err(e) => match e.raw_os_error() {
                Some(libc::ENOENT | libc::ESRCH) => Ok(Read::Gone),
                Some(libc::EACCES | libc::EPERM) => Ok(Read::Denied),
                _ => Err(Error::io(
                    format!(
                        "reading {}/task/{}{}",
                        key.tgid,
                        key.tid,
                        String::from_utf8_lossy(key.file.suffix())
                    ),
                    e,
                )),
            },
        }
    }

    /// Open `path` (below `dir`, else the proc root); if the fd table is
    /// full while the handle keeps files, close them and try once more.
    pub(super) fn open(
        &mut self,
        dir: Option<BorrowedFd<'_>>,
        path: &ProcPath,
    ) -> io::Result<OwnedFd> {
        let open = |root: &ProcRoot| match dir {
            Some(dir) => rustix::fs::openat(
                dir,
                path.as_cstr(),
                OFlags::RDONLY | OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .map_err(io::Error::from),
            None => root.openat(path.as_cstr(), OFlags::empty()),
        };
        match open(self.root) {
            Err(e) if is_fd_table_full(&e) && self.release_kept() => open(self.root),
            res => res,
        }
    }
}

impl TaskFiles<'_> {
    /// Close every file the handle keeps; whether there was any.
    pub(super) fn release_kept(&mut self) -> bool {
        let [other] = &mut self.others;
        // Both, not stopping at the first that had some.
        let released = [self.kept.release_all(), other.release_all()];
        released.contains(&true)
    }
}

/// `pread(fd, buf, 0)`, again on `EINTR`: procfs formats the file anew
/// for a read from offset 0.
pub(super) fn pread_from_start(fd: &impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match rustix::io::pread(fd, &mut *buf, 0) {
            Ok(n) => return Ok(n),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

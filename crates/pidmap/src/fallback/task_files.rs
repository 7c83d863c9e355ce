//! Reading one file of a task for a refresh: through the file the last
//! full refresh kept open (see [`super::kept`]) while it still names a
//! live task, else opened by its path below the proc root; `ENOENT`/`ESRCH`
//! (gone) and `EACCES`/`EPERM` (denied) are told apart, every other error
//! is returned.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::OFlags;

use super::kept::{FileKey, KeptFiles, TaskFile};
use super::path::ProcPath;
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
    pub(super) others: [&'a mut KeptFiles; 2],
    pub(super) buf: &'a mut [u8],
}

impl TaskFiles<'_> {
    /// Read task `tid`'s `file` (at `path`) once into the buffer: through
    /// the file kept from the last refresh if it still names a live task,
    /// else opened by its path (and then kept, if the refresh keeps
    /// files).
    pub(super) fn read(&mut self, tid: i32, file: TaskFile, path: &ProcPath) -> Result<Read> {
        #[cfg(test)]
        super::read_counter::count_read(path.as_cstr().to_bytes());
        let context = || format!("reading {}", path.as_cstr().to_string_lossy());
        let classify = |e: io::Error| match e.raw_os_error() {
            Some(libc::ENOENT | libc::ESRCH) => Ok(Read::Gone),
            Some(libc::EACCES | libc::EPERM) => Ok(Read::Denied),
            _ => Err(Error::io(context(), e)),
        };
        let key = FileKey { tid, file };
        if let Some(fd) = self.kept.take(key) {
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
        let fd = match self.open(path) {
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

    /// Open `path`; if the fd table is full while the handle keeps files,
    /// close them and try once more.
    fn open(&mut self, path: &ProcPath) -> io::Result<OwnedFd> {
        match self.root.openat(path.as_cstr(), OFlags::empty()) {
            Err(e) if is_fd_table_full(&e) && self.release_kept() => {
                self.root.openat(path.as_cstr(), OFlags::empty())
            }
            res => res,
        }
    }
}

impl TaskFiles<'_> {
    /// Close every file the handle keeps; whether there was any.
    fn release_kept(&mut self) -> bool {
        let [a, b] = &mut self.others;
        // All three, not stopping at the first that had some.
        let released = [self.kept.release_all(), a.release_all(), b.release_all()];
        released.contains(&true)
    }
}

/// `pread(fd, buf, 0)`, again on `EINTR`: procfs formats the file anew
/// for a read from offset 0.
fn pread_from_start(fd: &impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match rustix::io::pread(fd, &mut *buf, 0) {
            Ok(n) => return Ok(n),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

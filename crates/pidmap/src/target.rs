//! [`Target`]: whose threads, children or fds a listing is about.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use crate::error::{Error, Result};
use crate::pid::Pid;
use crate::sys;
use crate::target_id::TargetId;

/// The process (or fd table) a listing is about.
///
/// The system calls take pidfds only: the syscall backend passes
/// a [`Target::Pidfd`] as it is, the caller as `PIDFD_SELF_THREAD_GROUP`
/// (threads, children) or `PIDFD_SELF_THREAD` (fds), and opens a pidfd for
/// a [`Target::Pid`] once per listing ([`Target::open_pidfd`]), so a
/// listing read in several calls never moves on to a process that reused
/// the number. A pidfd names one `struct pid` for good: once that process
/// has exited, listings give [`Error::NoSuchProcess`].
///
/// Pids are numbers in the caller's pid namespace (where `pidfd_open(2)`
/// looks them up), the namespace of the default `/proc`.
///
/// ```
/// use pidmap::{Pid, Target};
/// let me = Target::from(Pid::this_process());
/// assert_eq!(me, Target::Pid(Pid::this_process()));
/// let pidfd = Target::open_pidfd(Pid::this_process())?;
/// let by_fd = Target::from(&pidfd);
/// assert!(matches!(by_fd, Target::Pidfd(_)));
/// # Ok::<(), pidmap::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Target<'fd> {
    /// The caller: the calling thread's thread group for threads and
    /// children, the calling thread's fd table for fds.
    Caller,
    /// A process or thread id (any thread id names its whole group for
    /// threads and children; for fds, a thread id that is not its group's
    /// leader names that thread's own table, as `/proc/TID/fd` does).
    Pid(Pid),
    /// A pidfd (`pidfd_open(2)`, `CLONE_PIDFD`).
    Pidfd(BorrowedFd<'fd>),
}

impl<'fd> Target<'fd> {
    /// `pidfd_open(pid, 0)`: a pidfd to keep as an owned target; for a
    /// thread that is not its group's leader (which `pidfd_open(2)`
    /// refuses without the flag), `pidfd_open(pid, PIDFD_THREAD)`, which
    /// needs Linux 6.9. A pid that does not exist is
    /// [`Error::NoSuchProcess`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a pid that is not positive,
    /// [`Error::NoSuchProcess`] for one that does not exist, and the
    /// other errors of `pidfd_open(2)` as a listing's
    /// ([`Pidmap::fill`](crate::Pidmap::fill)).
    pub fn open_pidfd(pid: Pid) -> Result<OwnedFd> {
        use rustix::process::{pidfd_open, PidfdFlags};
        let raw = rustix::process::Pid::from_raw(pid.as_raw())
            .ok_or(Error::InvalidArgument("a pid is a positive number"))?;
        let err =
            |e: rustix::io::Errno| Error::from_errno(e.raw_os_error(), "pidfd", TargetId::Pid(pid));
        match pidfd_open(raw, PidfdFlags::empty()) {
            // A thread that is not a leader: EINVAL on older kernels,
            // ENOENT on newer ones (no thread-group task at that pid).
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOENT) => {
                // PIDFD_THREAD is O_EXCL (include/uapi/linux/pidfd.h).
                let thread = u32::try_from(libc::O_EXCL).unwrap_or(0);
                pidfd_open(raw, PidfdFlags::from_bits_retain(thread)).map_err(err)
            }
            r => r.map_err(err),
        }
    }

    /// The pidfd argument the calls take for this target: the caller's
    /// `PIDFD_SELF_*` (`fds`: the calling thread's table; else its thread
    /// group), the pidfd itself, or a pidfd opened here for a pid.
    pub(crate) fn pidfd(self, fds: bool) -> Result<TargetFd<'fd>> {
        Ok(match self {
            Target::Caller if fds => TargetFd::Raw(sys::PIDFD_SELF_THREAD),
            Target::Caller => TargetFd::Raw(sys::PIDFD_SELF_THREAD_GROUP),
            Target::Pidfd(fd) => TargetFd::Borrowed(fd),
            Target::Pid(p) => TargetFd::Owned(Target::open_pidfd(p)?),
        })
    }

    /// An owned description, for errors and output.
    #[must_use]
    pub fn id(&self) -> TargetId {
        match *self {
            Target::Caller => TargetId::Caller,
            Target::Pid(p) => TargetId::Pid(p),
            Target::Pidfd(fd) => TargetId::Pidfd(fd.as_raw_fd()),
        }
    }
}

/// A target as the calls take it: a `PIDFD_SELF_*` value, or a pidfd,
/// borrowed or opened for the listing.
#[derive(Debug)]
pub(crate) enum TargetFd<'fd> {
    Raw(i32),
    Borrowed(BorrowedFd<'fd>),
    Owned(OwnedFd),
}

impl TargetFd<'_> {
    /// The `pidfd` field of a request.
    pub(crate) fn raw(&self) -> i32 {
        match self {
            TargetFd::Raw(v) => *v,
            TargetFd::Borrowed(fd) => fd.as_raw_fd(),
            TargetFd::Owned(fd) => fd.as_raw_fd(),
        }
    }
}

/// Two targets are equal when they name the same thing the same way (a
/// pidfd by its fd number).
impl PartialEq for Target<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

impl Eq for Target<'_> {}

impl From<Pid> for Target<'_> {
    fn from(p: Pid) -> Self {
        Target::Pid(p)
    }
}

impl<'fd> From<BorrowedFd<'fd>> for Target<'fd> {
    fn from(fd: BorrowedFd<'fd>) -> Self {
        Target::Pidfd(fd)
    }
}

impl<'fd> From<&'fd OwnedFd> for Target<'fd> {
    fn from(fd: &'fd OwnedFd) -> Self {
        Target::Pidfd(fd.as_fd())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_become_the_pidfd_arguments_of_the_calls() {
        assert_eq!(
            Target::Caller.pidfd(false).unwrap().raw(),
            sys::PIDFD_SELF_THREAD_GROUP
        );
        assert_eq!(
            Target::Caller.pidfd(true).unwrap().raw(),
            sys::PIDFD_SELF_THREAD
        );
        let own = Target::open_pidfd(Pid::this_process()).unwrap();
        assert_eq!(
            Target::from(&own).pidfd(false).unwrap().raw(),
            own.as_raw_fd()
        );
        // A pid is opened as a pidfd of that process.
        let opened = Target::Pid(Pid::this_process()).pidfd(true).unwrap();
        assert!(matches!(opened, TargetFd::Owned(_)));
        let ino = |fd: i32| {
            // SAFETY: `fd` is open for the duration of the call.
            let fd = unsafe { BorrowedFd::borrow_raw(fd) };
            rustix::fs::fstat(fd).unwrap().st_ino
        };
        // pidfs: one inode per struct pid.
        assert_eq!(ino(opened.raw()), ino(own.as_raw_fd()));
        // A thread that is not its group's leader gets a PIDFD_THREAD one.
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            tx.send(Pid::this_thread()).unwrap();
            done_rx.recv().unwrap();
        });
        let tid = rx.recv().unwrap();
        assert_ne!(tid, Pid::this_process());
        let thread = Target::open_pidfd(tid).unwrap();
        assert_ne!(ino(thread.as_raw_fd()), ino(own.as_raw_fd()));
        done_tx.send(()).unwrap();
        t.join().unwrap();
        // A pid that does not exist.
        let none = Target::Pid(Pid::from_raw(0x3fff_fff0)).pidfd(false);
        assert!(matches!(none, Err(Error::NoSuchProcess { .. })), "{none:?}");
    }
}

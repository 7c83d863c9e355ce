//! [`Target`]: whose threads, children or fds a listing is about.

use std::fmt;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use crate::error::{Error, Result};
use crate::pid::Pid;

/// The process (or fd table) a listing is about.
///
/// The v2 ABI takes either a pid or a pidfd; "the caller" is explicit
/// rather than a `0` sentinel. A pidfd names one `struct pid` for good: once
/// that process has exited, listings give [`Error::NoSuchProcess`], never
/// the ids of a process that reused the number.
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
    /// threads and children).
    Pid(Pid),
    /// A pidfd (`pidfd_open(2)`, `CLONE_PIDFD`).
    Pidfd(BorrowedFd<'fd>),
}

impl Target<'_> {
    /// `pidfd_open(pid, 0)`: a pidfd to keep as an owned target.
    pub fn open_pidfd(pid: Pid) -> Result<OwnedFd> {
        let raw = rustix::process::Pid::from_raw(pid.as_raw())
            .ok_or(Error::InvalidArgument("a pid is a positive number"))?;
        rustix::process::pidfd_open(raw, rustix::process::PidfdFlags::empty())
            .map_err(|e| Error::from_errno(e.raw_os_error(), "pidfd", TargetId::Pid(pid)))
    }

    /// An owned description, for errors and output.
    pub fn id(&self) -> TargetId {
        match *self {
            Target::Caller => TargetId::Caller,
            Target::Pid(p) => TargetId::Pid(p),
            Target::Pidfd(fd) => TargetId::Pidfd(fd.as_raw_fd()),
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

/// A [`Target`] without the borrow, as errors report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TargetId {
    /// The caller.
    Caller,
    /// A pid.
    Pid(Pid),
    /// The process of a pidfd (the fd number in the caller's table).
    Pidfd(i32),
}

impl fmt::Display for TargetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetId::Caller => f.write_str("the caller"),
            TargetId::Pid(p) => write!(f, "process {p}"),
            TargetId::Pidfd(fd) => write!(f, "the process of pidfd {fd}"),
        }
    }
}

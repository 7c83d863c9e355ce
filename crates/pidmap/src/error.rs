//! The crate's error type.

use std::io;
use std::path::PathBuf;

use crate::backend::KernelSupport;
use crate::Pid;

/// Errors returned by listings, with the same meaning whichever backend
/// produced them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No such process or thread, or it has exited (`ESRCH`).
    #[error("no such process: {0}")]
    NoSuchProcess(Pid),
    /// Not allowed to look at another process's fds (`EACCES`/`EPERM`).
    #[error("permission denied for the fds of process {0}")]
    PermissionDenied(Pid),
    /// An argument the ABI rejects (`EINVAL`), e.g. a negative pid.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// [`Backend::Syscall`](crate::Backend::Syscall) was required but the
    /// running kernel does not provide pidmap(2)/fdmap(2).
    #[error("the running kernel lacks pidmap(2)/fdmap(2): {0}")]
    SyscallUnavailable(KernelSupport),
    /// The proc root is not a mounted procfs.
    #[error("{} is not a mounted procfs (is /proc mounted?)", .0.display())]
    ProcNotMounted(PathBuf),
    /// Any other I/O error.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// The errno the syscall would have returned for this error, if any.
    ///
    /// ```
    /// use pidmap::{Error, Pid};
    /// assert_eq!(Error::NoSuchProcess(Pid::from_raw(7)).raw_os_error(), Some(libc::ESRCH));
    /// ```
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            Error::NoSuchProcess(_) => Some(libc::ESRCH),
            Error::PermissionDenied(_) => Some(libc::EACCES),
            Error::InvalidArgument(_) => Some(libc::EINVAL),
            Error::SyscallUnavailable(_) => Some(libc::ENOSYS),
            Error::ProcNotMounted(_) => Some(libc::ENOENT),
            Error::Io { source, .. } => source.raw_os_error(),
        }
    }

    pub(crate) fn io(context: &'static str, source: io::Error) -> Self {
        Error::Io { context, source }
    }

    /// Map a raw errno from pidmap(2)/fdmap(2) to an [`Error`].
    pub(crate) fn from_errno(errno: i32, pid: Pid, context: &'static str) -> Self {
        match errno {
            libc::ESRCH => Error::NoSuchProcess(pid),
            libc::EACCES | libc::EPERM => Error::PermissionDenied(pid),
            libc::EINVAL => Error::InvalidArgument("rejected by the kernel (EINVAL)"),
            e => Error::io(context, io::Error::from_raw_os_error(e)),
        }
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        let kind = match &e {
            Error::NoSuchProcess(_) => io::ErrorKind::NotFound,
            Error::PermissionDenied(_) => io::ErrorKind::PermissionDenied,
            Error::InvalidArgument(_) => io::ErrorKind::InvalidInput,
            Error::SyscallUnavailable(_) => io::ErrorKind::Unsupported,
            Error::ProcNotMounted(_) => io::ErrorKind::NotFound,
            Error::Io { source, .. } => source.kind(),
        };
        io::Error::new(kind, e)
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

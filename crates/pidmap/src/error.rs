//! The crate's error type.

use std::io;
use std::path::PathBuf;

use crate::kernel_support::KernelSupport;
use crate::target_id::TargetId;

/// Errors returned by listings, with the same meaning whichever backend
/// produced them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No such process or thread, it has exited, or the view hides it
    /// (`ESRCH`).
    #[error("no such process: {target}")]
    NoSuchProcess {
        /// Whose listing was asked for.
        target: TargetId,
    },
    /// Not allowed to list `what` of `target` (`EPERM`/`EACCES`): another
    /// user's fds, or a `hidepid=noaccess` view.
    #[error("permission denied: cannot list the {what} of {target}")]
    PermissionDenied {
        /// `"fds"`, `"threads"`, `"children"`, ...
        what: &'static str,
        /// Whose listing was asked for.
        target: TargetId,
    },
    /// An argument the ABI rejects (`EINVAL`), e.g. a target that is not a
    /// pid or pidfd.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// The syscall backend was required but is unusable: the kernel lacks
    /// pidmap(2)/fdmap(2), or a sandbox blocks them.
    #[error("the pidmap(2)/fdmap(2) system calls are unavailable: {0}")]
    SyscallUnavailable(KernelSupport),
    /// The syscall backend was required, and the kernel has pidmap(2) but
    /// pidmap_info(2) refuses its records (`EINVAL`, `E2BIG`).
    #[error("this kernel's pidmap_info(2) does not serve task records")]
    TaskInfoUnsupported,
    /// The /proc backend was asked for, but this build has no /proc code
    /// (the `fallback` feature is off).
    #[error("this build of the pidmap crate has no /proc fallback (feature `fallback` is off)")]
    FallbackNotBuilt,
    /// The proc root does not exist or is not a procfs mount, or is the
    /// procfs of a pid namespace the caller is not in.
    #[error("{} is not a mounted procfs of this pid namespace", .0.display())]
    ProcNotMounted(PathBuf),
    /// The kernel returned something the ABI rules out.
    #[error("the kernel broke the pidmap ABI: {0}")]
    AbiViolation(String),
    /// A file of `/proc` did not read as its format says
    /// ([`SystemMemory`](crate::monitor::SystemMemory), [`SystemCpu`](crate::monitor::SystemCpu)).
    ///
    /// Its `Display` names the file; what was wrong is its
    /// [`source()`](std::error::Error::source).
    #[error("malformed {}", .path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What was wrong with it.
        #[source]
        source: ParseError,
    },
    /// Any other I/O error, with its errno (`EMFILE`, `ENOMEM`, `EBADF`, ...).
    ///
    /// Its `Display` is the context alone: the cause is its
    /// [`source()`](std::error::Error::source), which error reporters
    /// (`anyhow`'s `{:#}`, ...) print after it, so it is not printed twice.
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// The errno the syscall would have returned for this error, if any.
    ///
    /// ```
    /// use pidmap::{Error, Pid, TargetId};
    /// let e = Error::NoSuchProcess { target: TargetId::Pid(Pid::new(7).unwrap()) };
    /// assert_eq!(e.raw_os_error(), Some(libc::ESRCH));
    /// ```
    #[must_use]
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            Error::NoSuchProcess { .. } => Some(libc::ESRCH),
            Error::PermissionDenied { .. } => Some(libc::EPERM),
            Error::InvalidArgument(_) | Error::TaskInfoUnsupported => Some(libc::EINVAL),
            Error::SyscallUnavailable(_) | Error::FallbackNotBuilt => Some(libc::ENOSYS),
            Error::ProcNotMounted(_) => Some(libc::ENOENT),
            Error::AbiViolation(_) | Error::Parse { .. } => None,
            Error::Io { source, .. } => source.raw_os_error(),
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// Map an errno from a listing of `what` for `target` (a syscall's, or
    /// an `open()` in /proc's) to an [`Error`], keeping the errno of
    /// anything unexpected.
    pub(crate) fn from_errno(errno: i32, what: &'static str, target: TargetId) -> Self {
        match errno {
            libc::ESRCH | libc::ENOENT => Error::NoSuchProcess { target },
            libc::EACCES | libc::EPERM => Error::PermissionDenied { what, target },
            libc::EINVAL => Error::InvalidArgument("rejected by the kernel (EINVAL)"),
            e => Error::io(
                format!("listing the {what} of {target}"),
                io::Error::from_raw_os_error(e),
            ),
        }
    }
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        let kind = match &e {
            Error::NoSuchProcess { .. } => io::ErrorKind::NotFound,
            Error::PermissionDenied { .. } => io::ErrorKind::PermissionDenied,
            Error::InvalidArgument(_) => io::ErrorKind::InvalidInput,
            Error::SyscallUnavailable(_) | Error::FallbackNotBuilt | Error::TaskInfoUnsupported => {
                io::ErrorKind::Unsupported
            }
            Error::ProcNotMounted(_) => io::ErrorKind::NotFound,
            Error::AbiViolation(_) | Error::Parse { .. } => io::ErrorKind::InvalidData,
            Error::Io { source, .. } => source.kind(),
        };
        io::Error::new(kind, e)
    }
}

/// Text that does not parse as the file it should be (`/proc/meminfo`,
/// `/proc/stat`): what was wrong, for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(String);

impl ParseError {
    pub(crate) fn new(what: impl Into<String>) -> Self {
        ParseError(what.into())
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// An I/O error's cause is printed once: by whoever walks
    /// `source()`, never also by its `Display`.
    #[test]
    fn io_error_text_names_its_cause_once() {
        let e = Error::io(
            "opening /proc/self",
            io::Error::from_raw_os_error(libc::EMFILE),
        );
        let cause = io::Error::from_raw_os_error(libc::EMFILE).to_string();
        assert_eq!(e.to_string(), "opening /proc/self");
        assert_eq!(e.source().map(ToString::to_string), Some(cause.clone()));
        let mut chain = e.to_string();
        let mut next = e.source();
        while let Some(c) = next {
            chain = format!("{chain}: {c}");
            next = c.source();
        }
        assert_eq!(chain.matches(&cause).count(), 1, "{chain}");
        // Through io::Error too (the iterators' item type).
        let wrapped = io::Error::from(e);
        assert_eq!(wrapped.raw_os_error(), None);
        let inner = wrapped.get_ref().expect("wraps the crate's error");
        assert_eq!(inner.to_string(), "opening /proc/self");
    }
}

//! [`TargetId`]: whose listing it was, as errors and output name it.

use std::fmt;

use crate::pid::Pid;

/// A [`Target`](crate::Target) without the borrow, as errors report it.
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

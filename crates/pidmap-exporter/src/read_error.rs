//! [`ReadError`]: why a read of the system failed, as a scrape counts and
//! logs it.

use std::io;

/// Why a read failed. A task that is gone is not a failure: those come
/// back as `Ok(None)` or are left out.
#[derive(Debug)]
pub struct ReadError {
    /// What was read: `processes`, `threads`, `fds`, `cmdline`, ...
    pub what: &'static str,
    /// Why it failed: `permission`, `io` or `other`.
    pub kind: &'static str,
    pub message: String,
}

impl ReadError {
    pub(crate) fn from_io(what: &'static str, whose: &str, e: &io::Error) -> ReadError {
        let kind = match e.kind() {
            io::ErrorKind::PermissionDenied => "permission",
            _ => "io",
        };
        ReadError {
            what,
            kind,
            message: format!("{what}{whose}: {e}"),
        }
    }
}

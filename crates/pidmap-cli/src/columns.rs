//! The `--long` columns of fds, read from /proc per listed fd, and the
//! status of a row. A listed id whose columns cannot be read is kept, with
//! a status saying why.

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Whether a row's columns could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Read.
    Ok,
    /// Listed, but gone from /proc by the time its columns were read.
    Vanished,
    /// Listed, but /proc refused the columns (EACCES, EPERM): the fd
    /// directory can be listed with fewer rights than its links read.
    PermissionDenied,
    /// Not readable: /proc is not mounted, or another error.
    Unknown,
}

/// One fd's columns.
#[derive(Debug, Clone)]
pub struct FdRow {
    pub pid: i32,
    pub fd: i32,
    pub target: Option<Vec<u8>>,
    pub status: Status,
    /// Why the target could not be read (not for `Vanished`).
    pub error: Option<String>,
}

/// Reads columns below a proc root; `None` when there is no usable one.
#[derive(Debug)]
pub struct Reader {
    root: Option<PathBuf>,
}

fn status_of(e: &io::Error) -> Status {
    match e.raw_os_error() {
        Some(libc::ENOENT | libc::ESRCH) => Status::Vanished,
        Some(libc::EACCES | libc::EPERM) => Status::PermissionDenied,
        _ => Status::Unknown,
    }
}

/// The warning for the fds of one process whose targets could not be
/// read (vanished fds are not failures), with the first reason; `None`
/// when every target was read.
pub fn unreadable_targets(pid: i32, rows: &[FdRow]) -> Option<String> {
    let failed: Vec<&FdRow> = rows
        .iter()
        .filter(|r| matches!(r.status, Status::PermissionDenied | Status::Unknown))
        .collect();
    let first = failed.first()?;
    Some(format!(
        "the targets of {} of {} fds of process {pid} could not be read ({}); shown as ?",
        failed.len(),
        rows.len(),
        first.error.as_deref().unwrap_or("unknown error")
    ))
}

impl Reader {
    pub fn new(root: Option<&Path>) -> Reader {
        Reader {
            root: root.map(Path::to_path_buf),
        }
    }

    /// Whether columns can be read at all.
    pub fn available(&self) -> bool {
        self.root.is_some()
    }

    /// The target of fd `fd` in `dir` (`<pid>` or `thread-self`).
    pub fn fd(&self, dir: &str, pid: i32, fd: i32) -> FdRow {
        let mut row = FdRow {
            pid,
            fd,
            target: None,
            status: Status::Unknown,
            error: None,
        };
        let Some(root) = &self.root else {
            return row;
        };
        match std::fs::read_link(root.join(dir).join("fd").join(fd.to_string())) {
            Ok(t) => {
                row.target = Some(t.as_os_str().as_bytes().to_vec());
                row.status = Status::Ok;
            }
            Err(e) => {
                row.status = status_of(&e);
                if row.status != Status::Vanished {
                    row.error = Some(error_text(&e));
                }
            }
        }
        row
    }
}

/// An error as one short phrase: `permission denied`, or the OS text.
fn error_text(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fd_keeps_a_row_with_a_status() {
        let proc = Reader::new(Some(Path::new("/proc")));
        let me = i32::try_from(std::process::id()).unwrap();
        assert_eq!(proc.fd("self", me, 0).status, Status::Ok);
        // An fd that vanished between the listing and the columns.
        assert_eq!(proc.fd("self", me, 999_999).status, Status::Vanished);
        // No proc root: unknown, never dropped.
        let none = Reader::new(None);
        assert!(!none.available());
        assert_eq!(none.fd("self", me, 0).status, Status::Unknown);
    }

    #[test]
    fn refused_targets_are_told_apart_and_warned_about() {
        let denied = io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(status_of(&denied), Status::PermissionDenied);
        assert_eq!(
            status_of(&io::Error::from_raw_os_error(libc::EPERM)),
            Status::PermissionDenied
        );
        assert_eq!(
            status_of(&io::Error::from_raw_os_error(libc::EIO)),
            Status::Unknown
        );
        let row = |fd, status, error: Option<&str>| FdRow {
            pid: 1,
            fd,
            target: None,
            status,
            error: error.map(str::to_string),
        };
        let rows = [
            row(0, Status::PermissionDenied, Some("permission denied")),
            row(1, Status::Vanished, None),
            row(2, Status::PermissionDenied, Some("permission denied")),
        ];
        assert_eq!(
            unreadable_targets(1, &rows).as_deref(),
            Some("the targets of 2 of 3 fds of process 1 could not be read (permission denied); shown as ?")
        );
        assert_eq!(unreadable_targets(1, &rows[1..2]), None);
    }
}

//! The `--long` columns of fds, read from /proc per listed fd, and the
//! status of a row. A listed id whose columns cannot be read is kept, with
//! a status saying why.

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Whether a row's columns could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Read.
    Ok,
    /// Listed, but gone from /proc by the time its columns were read.
    Vanished,
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
}

/// Reads columns below a proc root; `None` when there is no usable one.
#[derive(Debug)]
pub struct Reader {
    root: Option<PathBuf>,
}

fn status_of(e: &io::Error) -> Status {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ESRCH) => Status::Vanished,
        _ => Status::Unknown,
    }
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
        };
        let Some(root) = &self.root else {
            return row;
        };
        match std::fs::read_link(root.join(dir).join("fd").join(fd.to_string())) {
            Ok(t) => {
                row.target = Some(t.as_os_str().as_bytes().to_vec());
                row.status = Status::Ok;
            }
            Err(e) => row.status = status_of(&e),
        }
        row
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
}

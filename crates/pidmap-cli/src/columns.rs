//! The `--long` columns, read from /proc per listed id. A listed id whose
//! columns cannot be read is kept, with a status saying why.

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use pidmap::{status_tgid, Stat};
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

/// One task's columns.
#[derive(Debug, Clone)]
pub struct TaskRow {
    pub id: i32,
    pub tgid: Option<i32>,
    pub ppid: Option<i32>,
    pub state: Option<u8>,
    pub comm: Option<Vec<u8>>,
    pub status: Status,
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

    /// The columns of task `id`; `tgid` only when asked (it costs a read
    /// of `status`).
    pub fn task(&self, id: i32, with_tgid: bool) -> TaskRow {
        let mut row = TaskRow {
            id,
            tgid: None,
            ppid: None,
            state: None,
            comm: None,
            status: Status::Unknown,
        };
        let Some(root) = &self.root else {
            return row;
        };
        let dir = root.join(id.to_string());
        let text = match std::fs::read(dir.join("stat")) {
            Ok(t) => t,
            Err(e) => {
                row.status = status_of(&e);
                return row;
            }
        };
        let Some(stat) = Stat::parse(&text) else {
            return row;
        };
        row.ppid = Some(stat.ppid);
        row.state = Some(stat.state);
        row.comm = Some(stat.comm.to_vec());
        row.status = Status::Ok;
        if with_tgid {
            match std::fs::read(dir.join("status")) {
                Ok(s) => row.tgid = status_tgid(&s).map(|p| p.as_raw()),
                Err(e) => row.status = status_of(&e),
            }
        }
        row
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
    fn every_id_keeps_a_row_with_a_status() {
        let proc = Reader::new(Some(Path::new("/proc")));
        let me = i32::try_from(std::process::id()).unwrap();
        let row = proc.task(me, true);
        assert_eq!((row.status, row.tgid), (Status::Ok, Some(me)));
        // SAFETY: getppid has no preconditions.
        assert_eq!(row.ppid, Some(unsafe { libc::getppid() }));
        // An id that vanished between the listing and the columns.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = i32::try_from(child.id()).unwrap();
        child.wait().unwrap();
        let row = proc.task(gone, false);
        assert_eq!(
            (row.id, row.status, row.comm),
            (gone, Status::Vanished, None)
        );
        assert_eq!(proc.fd("self", me, 999_999).status, Status::Vanished);
        // No proc root: unknown, never dropped.
        let none = Reader::new(None);
        assert!(!none.available());
        assert_eq!(none.task(me, false).status, Status::Unknown);
        assert_eq!(none.fd("self", me, 0).status, Status::Unknown);
    }
}

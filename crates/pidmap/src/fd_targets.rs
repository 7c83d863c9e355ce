//! What each open file descriptor of a process refers to, as `lsof` and
//! `ls -l /proc/PID/fd` show it: one `readlink(2)` of `/proc/PID/fd/N`
//! per fd, each with its own outcome (an fd closed since it was listed,
//! or one the caller may not inspect, fails alone).
//!
//! ```
//! use pidmap::{fd_targets, Pid, Pidmap, Target};
//!
//! let me = Pid::this_process();
//! let mut pm = Pidmap::new()?;
//! let mut fds = Vec::new();
//! pm.fill_fds(Target::Pid(me), &mut fds)?;
//! for fd in fd_targets(me, &fds) {
//!     match &fd.target {
//!         Ok(path) => println!("{:>4} {}", fd.fd, path.display()),
//!         Err(e) => println!("{:>4} ({e})", fd.fd),
//!     }
//! }
//! # Ok::<(), pidmap::Error>(())
//! ```

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::pid::Pid;

/// One fd and its target: a path (`/etc/passwd`), or the kernel's name
/// for what has none (`socket:[1234]`, `pipe:[5678]`, `anon_inode:[eventfd]`),
/// or why it could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub struct FdTarget {
    /// The descriptor's number.
    pub fd: i32,
    /// What `readlink(2)` of `/proc/PID/fd/N` gave, or why it failed
    /// ([`Error::Io`]: `ENOENT` when the fd was closed since it was
    /// listed, `EACCES` when the caller may not see it).
    pub target: Result<PathBuf, Error>,
}

/// The targets of `fds` of process `pid` (from
/// [`Pidmap::fill_fds`](crate::Pidmap::fill_fds)), in their order, from
/// `/proc`.
#[must_use]
pub fn fd_targets(pid: Pid, fds: &[i32]) -> Vec<FdTarget> {
    fd_targets_from("/proc", pid, fds)
}

/// [`fd_targets`] below `proc_root` (a procfs mount, as
/// [`Builder::proc_root`](crate::Builder::proc_root)).
#[must_use]
pub fn fd_targets_from(proc_root: impl AsRef<Path>, pid: Pid, fds: &[i32]) -> Vec<FdTarget> {
    let dir = proc_root.as_ref().join(pid.as_raw().to_string()).join("fd");
    fds.iter()
        .map(|&fd| {
            let link = dir.join(fd.to_string());
            let target = std::fs::read_link(&link)
                .map_err(|e| Error::io(format!("reading the link {}", link.display()), e));
            FdTarget { fd, target }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn targets_are_readlinks_and_a_closed_fd_fails_alone() {
        let dir = std::env::temp_dir();
        let file = tempfile_in(&dir);
        let fd = file.0.as_raw_fd();
        let me = Pid::this_process();
        // An fd number nobody has open here.
        let closed = 1_000_000;
        let got = fd_targets(me, &[fd, closed, 0]);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].fd, fd);
        assert_eq!(got[0].target.as_ref().unwrap(), &file.1);
        let e = got[1].target.as_ref().unwrap_err();
        assert!(
            matches!(e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound),
            "{e:?}"
        );
        assert!(e.to_string().contains(&format!("/fd/{closed}")), "{e}");
        // fd 0 as /proc shows it, read independently.
        let zero = std::fs::read_link("/proc/self/fd/0");
        assert_eq!(got[2].target.as_ref().ok(), zero.as_ref().ok());
        std::fs::remove_file(&file.1).unwrap();
    }

    /// A new file in `dir`, open, and its path.
    fn tempfile_in(dir: &Path) -> (std::fs::File, PathBuf) {
        let path = dir.join(format!("pidmap-fd-targets-{}", std::process::id()));
        let f = std::fs::File::create(&path).unwrap();
        (f, std::fs::canonicalize(&path).unwrap())
    }
}

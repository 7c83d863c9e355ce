//! The task files a full refresh keeps open for the next one, as sysinfo
//! does: a kept `stat` is read again with one `pread` at offset 0 (procfs
//! formats a file read from offset 0 anew) instead of an `openat`, a
//! `read` and a `close`, and the walk of its path.
//!
//! A kept file names the task it was opened for (its inode holds the
//! task's `struct pid`), not the number: once that task is gone, reading
//! it fails with `ESRCH`, and the caller opens the path again, which finds
//! whichever task has the number now (or none). A kept file shows what a
//! fresh open shows (the fields read here are shown to every opener
//! alike), with one difference: `/proc` checks access when a file is
//! opened, so a task whose files a fresh open would now be denied (its
//! owner changed under a `hidepid` mount) goes on showing through a file
//! kept from before, as with sysinfo.
//!
//! Bounds: the handles of a process keep together at most half the soft
//! `RLIMIT_NOFILE` less 64 files (the rest of the table stays the
//! caller's); each costs the kernel about 5 KiB (a `struct file`, its
//! `seq_file` and the page it formats into). If an open fails with
//! `EMFILE`/`ENFILE` while the handle keeps files, they are all closed,
//! none is kept for the rest of the refresh and the open is tried once
//! more: the error reaches the caller unless this handle's files made it.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Files kept by every handle of the process.
static KEPT_IN_PROCESS: AtomicUsize = AtomicUsize::new(0);

/// A file counted in [`KEPT_IN_PROCESS`] while it is open.
#[derive(Debug)]
pub(crate) struct KeptFd(OwnedFd);

impl KeptFd {
    /// Count `fd` as kept if the process's budget allows; else give it
    /// back (to be closed).
    fn new(fd: OwnedFd, budget: usize) -> Result<KeptFd, OwnedFd> {
        let counted = KEPT_IN_PROCESS.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n < budget).then_some(n + 1)
        });
        match counted {
            Ok(_) => Ok(KeptFd(fd)),
            Err(_) => Err(fd),
        }
    }
}

impl AsFd for KeptFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

impl Drop for KeptFd {
    fn drop(&mut self) {
        KEPT_IN_PROCESS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Which file of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum TaskFile {
    Stat,
    Statm,
    Status,
}

impl TaskFile {
    /// Its name below a task's directory, with the leading `/`.
    pub(crate) fn suffix(self) -> &'static [u8] {
        match self {
            TaskFile::Stat => b"/stat",
            TaskFile::Statm => b"/statm",
            TaskFile::Status => b"/status",
        }
    }
}

/// A kept file's key: the task (its thread group first) and the file,
/// ordered as a refresh visits them (ascending thread groups, ascending
/// tids within a group, `stat` before the others). A process's files have
/// `tgid == tid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct FileKey {
    pub(crate) tgid: i32,
    pub(crate) tid: i32,
    pub(crate) file: TaskFile,
}

/// The files kept from one refresh to the next (one set per kind of
/// refresh: process rows and task rows read different files).
#[derive(Debug, Default)]
pub(crate) struct KeptFiles {
    /// The last refresh's files, ascending by key; a file is taken out
    /// (`None` left) when this refresh uses it again.
    last: Vec<(FileKey, Option<KeptFd>)>,
    /// Where in `last` the next key is looked for.
    cursor: usize,
    /// This refresh's files, in the order visited (ascending).
    this: Vec<(FileKey, Option<KeptFd>)>,
    /// How many files the process may keep (0: none, in a refresh that
    /// keeps none).
    budget: usize,
}

impl KeptFiles {
    /// Start a refresh: `keep` says whether it may use and keep files
    /// (a full refresh) or only opens and closes (anything else).
    pub(crate) fn begin(&mut self, keep: bool) {
        self.cursor = 0;
        self.this.clear();
        self.budget = if keep { process_budget() } else { 0 };
    }

    /// [`KeptFiles::begin`] with a budget of its own, for a test that must
    /// not depend on how many files other tests of the process keep.
    #[cfg(test)]
    fn begin_with_budget(&mut self, budget: usize) {
        self.begin(budget > 0);
        self.budget = budget;
    }

    /// The kept file for `key`, if the last refresh kept one. Keys must
    /// be asked in ascending order; those skipped are closed at
    /// [`KeptFiles::finish`].
    pub(crate) fn take(&mut self, key: FileKey) -> Option<KeptFd> {
        if self.budget == 0 {
            return None;
        }
        while let Some((k, fd)) = self.last.get_mut(self.cursor) {
            if *k > key {
                return None;
            }
            self.cursor += 1;
            if *k == key {
                return fd.take();
            }
        }
        None
    }

    /// The positions of the last refresh's files of thread group `tgid`
    /// (none in a refresh that keeps none). Groups must be asked in
    /// ascending order, after every [`KeptFiles::take`] of a lower key;
    /// those skipped are closed at [`KeptFiles::finish`]. The files are
    /// then had with [`KeptFiles::take_at`], in any order.
    pub(crate) fn group(&mut self, tgid: i32) -> std::ops::Range<usize> {
        if self.budget == 0 {
            return 0..0;
        }
        while self
            .last
            .get(self.cursor)
            .is_some_and(|(k, _)| k.tgid < tgid)
        {
            self.cursor += 1;
        }
        let first = self.cursor;
        while self
            .last
            .get(self.cursor)
            .is_some_and(|(k, _)| k.tgid == tgid)
        {
            self.cursor += 1;
        }
        first..self.cursor
    }

    /// The key at position `i` of [`KeptFiles::group`]'s range; `None`
    /// past the end (once [`KeptFiles::release_all`] emptied it).
    pub(crate) fn key_at(&self, i: usize) -> Option<FileKey> {
        self.last.get(i).map(|(k, _)| *k)
    }

    /// The file at position `i` of [`KeptFiles::group`]'s range, taken
    /// out; `None` if it was taken or is past the end.
    pub(crate) fn take_at(&mut self, i: usize) -> Option<KeptFd> {
        self.last.get_mut(i)?.1.take()
    }

    /// How many files this refresh keeps so far: the mark
    /// [`KeptFiles::sort_since`] takes.
    pub(crate) fn mark(&self) -> usize {
        self.this.len()
    }

    /// Put the files kept since `mark` (one thread group's, kept in the
    /// order they were read) in key order.
    pub(crate) fn sort_since(&mut self, mark: usize) {
        if let Some(tail) = self.this.get_mut(mark..) {
            tail.sort_unstable_by_key(|(k, _)| *k);
        }
    }

    /// Keep again a file [`KeptFiles::take`] gave.
    pub(crate) fn keep_again(&mut self, key: FileKey, fd: KeptFd) {
        self.this.push((key, Some(fd)));
    }

    /// Keep a file just opened, if the process's budget allows; else it
    /// is closed.
    pub(crate) fn keep(&mut self, key: FileKey, fd: OwnedFd) {
        if self.budget == 0 {
            return;
        }
        if let Ok(fd) = KeptFd::new(fd, self.budget) {
            self.this.push((key, Some(fd)));
        }
    }

    /// An open failed with `EMFILE`/`ENFILE`: close every kept file and
    /// keep none for the rest of the refresh. Whether any was open (so
    /// trying again may succeed).
    pub(crate) fn release_all(&mut self) -> bool {
        let open = |files: &[(FileKey, Option<KeptFd>)]| files.iter().any(|(_, fd)| fd.is_some());
        let had = open(&self.last) || open(&self.this);
        self.last.clear();
        self.this.clear();
        self.cursor = 0;
        self.budget = 0;
        had
    }

    /// End a refresh: close the last one's files it did not use, and keep
    /// its own for the next (unless it kept none: a partial refresh leaves
    /// the last full one's files alone).
    pub(crate) fn finish(&mut self, kept: bool) {
        if kept {
            std::mem::swap(&mut self.last, &mut self.this);
            self.this.clear();
        }
        self.cursor = 0;
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.last.iter().filter(|(_, fd)| fd.is_some()).count()
    }
}

/// Half the soft `RLIMIT_NOFILE` (taken as 2048 if unlimited) less 64.
fn process_budget() -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let soft = limit.current.unwrap_or(2048);
    usize::try_from((soft / 2).saturating_sub(64)).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the cache relies on: a kept `stat` is formatted anew by each
    /// `pread` from offset 0, and fails with `ESRCH` once its task is
    /// gone (it never shows another task that got the number).
    #[test]
    fn a_kept_stat_reads_anew_and_says_esrch_once_its_task_is_gone() {
        // SAFETY: the child only calls async-signal-safe functions.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            loop {
                // SAFETY: async-signal-safe; killed by the parent.
                unsafe { libc::pause() };
            }
        }
        let path = format!("/proc/{pid}/stat");
        let fd: OwnedFd = std::fs::File::open(&path).unwrap().into();
        let mut buf = [0u8; 1024];
        let first = rustix::io::pread(&fd, &mut buf[..], 0).unwrap();
        let again = rustix::io::pread(&fd, &mut buf[..], 0).unwrap();
        let line = String::from_utf8_lossy(&buf[..again]).into_owned();
        // SAFETY: killing and reaping our own child.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        let gone = rustix::io::pread(&fd, &mut buf[..], 0);
        assert!(first > 0 && line.starts_with(&format!("{pid} (")), "{line}");
        assert_eq!(
            gone.map_err(rustix::io::Errno::raw_os_error),
            Err(libc::ESRCH)
        );
    }

    /// Keys are looked up in ascending order; the ones a refresh does not
    /// ask for are closed when it ends, and the count of the process's
    /// kept files follows. The budget is this test's own: the process's
    /// is shared with the other tests running beside it.
    #[test]
    fn a_refresh_keeps_what_it_used() {
        let key = |tid| FileKey {
            tgid: tid,
            tid,
            file: TaskFile::Stat,
        };
        let open = || -> OwnedFd { std::fs::File::open("/proc/self/stat").unwrap().into() };
        let mut kept = KeptFiles::default();
        kept.begin_with_budget(usize::MAX);
        for tid in [3, 5, 7] {
            assert!(kept.take(key(tid)).is_none());
            kept.keep(key(tid), open());
        }
        kept.finish(true);
        assert_eq!(kept.len(), 3);
        kept.begin_with_budget(usize::MAX);
        assert!(kept.take(key(4)).is_none());
        let five = kept.take(key(5)).expect("kept from the last refresh");
        kept.keep_again(key(5), five);
        assert!(kept.take(key(6)).is_none());
        kept.finish(true);
        assert_eq!(kept.len(), 1, "3 and 7 were not asked for");
        // A refresh that keeps nothing leaves the last full one's files.
        kept.begin(false);
        assert!(kept.take(key(5)).is_none());
        kept.keep(key(9), open());
        kept.finish(false);
        assert_eq!(kept.len(), 1);
        assert!(kept.release_all());
        assert_eq!(kept.len(), 0);
        assert!(!kept.release_all());
    }
}

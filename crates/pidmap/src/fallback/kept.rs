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
//! A file over the budget is not kept, but its key is (and so is a
//! denied one's): the next refresh knows the task and reads it by its
//! path, without listing its group when it can prove it complete (see
//! [`super::group_refresh`] and [`Unchanged`]).
//!
//! Bounds: the handles of a process keep a file only while both its
//! number and their count of kept files are below the soft
//! `RLIMIT_NOFILE` less a reserve left to the rest of the process
//! ([`ceiling`]): 1,024 fds (the soft limit most systems start a program
//! with, so a program written for that limit keeps every fd it could have
//! had), or half the limit when that is lower. A new fd takes the lowest
//! free number, so a number at the ceiling means at least that many fds
//! are open, whoever opened them: past it a file is read and closed, and
//! only its key is kept (nothing is lost; the next refresh reads it by its
//! path). Each kept file costs the kernel about 5 KiB (a `struct file`,
//! its `seq_file` and the page it formats into). If an open fails with
//! `EMFILE`/`ENFILE` while the handle keeps files, they are all closed,
//! none is kept for the rest of the refresh and the open is tried once
//! more: the error reaches the caller unless this handle's files made it.
//!
//! A handle that keeps no files (the default) still keeps the keys of its
//! last refresh of every task: with them it reads a known group's tasks by
//! their path and lists the group only when it cannot prove it complete,
//! as for the files over the budget.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};

use rustix::fs::{AtFlags, OFlags, StatxFlags};

use crate::proc_root::ProcRoot;

/// Files kept by every handle of the process.
static KEPT_IN_PROCESS: AtomicUsize = AtomicUsize::new(0);

/// A file counted in [`KEPT_IN_PROCESS`] while it is open.
#[derive(Debug)]
pub(crate) struct KeptFd(OwnedFd);

impl KeptFd {
    /// Count `fd` as kept if its number and the process's kept files are
    /// below `ceiling`; else give it back (to be closed).
    fn new(fd: OwnedFd, ceiling: usize) -> Result<KeptFd, OwnedFd> {
        if usize::try_from(fd.as_raw_fd()).map_or(true, |n| n >= ceiling) {
            return Err(fd);
        }
        let counted = KEPT_IN_PROCESS.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n < ceiling).then_some(n + 1)
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
    /// Whether this refresh keeps the keys of the files it reads (a full
    /// refresh, until a full fd table makes it drop them).
    keys: bool,
    /// Below which fd number and count the process keeps files
    /// ([`ceiling`]; 0: this refresh keeps none, only keys).
    ceiling: usize,
    /// What tells a refresh of every task that no task was created since
    /// the last one (see [`Unchanged`]).
    pub(crate) unchanged: Unchanged,
    /// For a test: keep no file, only the keys, as if every file were
    /// over the budget (and take none of the process's budget from the
    /// tests beside it).
    #[cfg(test)]
    pub(crate) keys_only: bool,
}

impl KeptFiles {
    /// Start a refresh: `keys` says whether it uses and keeps the last
    /// one's keys (a full refresh) or only opens and closes (anything
    /// else), `files` whether it keeps files too (a handle built with
    /// `keep_files`).
    pub(crate) fn begin(&mut self, keys: bool, files: bool) {
        self.cursor = 0;
        self.this.clear();
        self.keys = keys;
        self.ceiling = if keys && files { ceiling() } else { 0 };
    }

    /// [`KeptFiles::begin`] with a ceiling of its own, for a test that
    /// must not depend on how many files other tests of the process keep.
    #[cfg(test)]
    fn begin_with_ceiling(&mut self, ceiling: usize) {
        self.begin(true, ceiling > 0);
        self.ceiling = ceiling;
    }

    /// The kept file for `key`, if the last refresh kept one. Keys must
    /// be asked in ascending order; those skipped are closed at
    /// [`KeptFiles::finish`].
    pub(crate) fn take(&mut self, key: FileKey) -> Option<KeptFd> {
        if !self.keys {
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
        if !self.keys {
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
    /// order they were read) in key order. They are in order but for the
    /// group's `statm`, read last, when no listing interleaved them: that
    /// one is moved into place, the rest sorted only if it must be.
    pub(crate) fn sort_since(&mut self, mark: usize) {
        let Some(tail) = self.this.get_mut(mark..) else {
            return;
        };
        let ordered = |s: &[(FileKey, Option<KeptFd>)]| s.windows(2).all(|w| w[0].0 < w[1].0);
        let Some(((last, _), head)) = tail.split_last() else {
            return;
        };
        if !ordered(head) {
            tail.sort_unstable_by_key(|(k, _)| *k);
            return;
        }
        let at = head.partition_point(|(k, _)| k < last);
        tail[at..].rotate_right(1);
    }

    /// Take back what this refresh kept since `mark` (one group's files
    /// and keys, for another pass over the group) into `into`, cleared
    /// first, in key order.
    pub(crate) fn take_since(&mut self, mark: usize, into: &mut Vec<(FileKey, Option<KeptFd>)>) {
        into.clear();
        if mark < self.this.len() {
            into.extend(self.this.drain(mark..));
        }
        into.sort_unstable_by_key(|(k, _)| *k);
    }

    /// Keep again a file [`KeptFiles::take`] gave.
    pub(crate) fn keep_again(&mut self, key: FileKey, fd: KeptFd) {
        self.this.push((key, Some(fd)));
    }

    /// Keep a file just opened, if the ceiling allows; else it is closed,
    /// and only its key is kept (the next refresh knows the task without
    /// listing its group: see [`Unchanged`]).
    pub(crate) fn keep(&mut self, key: FileKey, fd: OwnedFd) {
        if !self.keys {
            return;
        }
        let fd = if self.keys_only() || self.ceiling == 0 {
            None
        } else {
            KeptFd::new(fd, self.ceiling).ok()
        };
        self.this.push((key, fd));
    }

    #[cfg(test)]
    fn keys_only(&self) -> bool {
        self.keys_only
    }

    #[cfg(not(test))]
    fn keys_only(&self) -> bool {
        false
    }

    /// Keep the key of a file this refresh read but could not keep (its
    /// task's files are denied): the next refresh knows the task.
    pub(crate) fn remember(&mut self, key: FileKey) {
        if self.keys {
            self.this.push((key, None));
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
        self.keys = false;
        self.ceiling = 0;
        self.unchanged.forget();
        had
    }

    /// Whether this refresh kept the key of every file it read so far:
    /// it keeps keys and no full fd table made it drop them.
    pub(crate) fn knows_all(&self) -> bool {
        self.keys
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

/// What lets a refresh of every task skip the listings: the kernel's
/// count of the tasks ever created (`total_forks`, the `processes` line
/// of the proc root's `stat`, which `copy_process()` increments for every
/// process and thread, under `tasklist_lock` with the pid hash `/proc`
/// lists). A task's number is allocated only by `copy_process()`, so
/// while the count is the one read at the start of the last complete
/// refresh, every task alive now was alive when that refresh started,
/// and so was found by it if it is alive still: the last refresh's
/// thread groups and tasks (kept files, and the keys of the files it read
/// but could not keep or was denied) are every task there is, less those
/// gone since. Those are read again (a kept file with one `pread`, the
/// others by their path), and neither the proc root nor any `task`
/// directory is listed. A task that `execve()`s from a thread takes its
/// group's number (`de_thread()`), which the group's leader's file
/// follows. The count is global (every pid namespace), so it is a
/// superset of the mount's; a mount that hides tasks from the caller
/// (`hidepid=invisible` or `ptraceable`) could show one later without a
/// fork (its owner changed), and is always listed.
#[derive(Debug, Default)]
pub(crate) struct Unchanged {
    /// The proc root's `stat`, kept open (not counted in the budget).
    stat: Option<OwnedFd>,
    /// Its text, and the mount table's.
    text: Vec<u8>,
    /// The count read at the start of the last complete refresh.
    forks: Option<u64>,
    /// The thread groups of the last complete refresh, ascending.
    pub(crate) groups: Vec<i32>,
    /// For the tests: how many refreshes skipped the listings.
    #[cfg(test)]
    pub(crate) skips: usize,
}

impl Unchanged {
    /// Forget the last refresh: the next one lists.
    pub(crate) fn forget(&mut self) {
        self.forks = None;
        self.groups.clear();
    }

    /// The count of tasks ever created, now; `None` if the proc root
    /// does not show it (`subset=pid`, an LSM, ...).
    pub(crate) fn read_forks(&mut self, root: &ProcRoot) -> Option<u64> {
        if self.stat.is_none() {
            self.stat = root.openat(c"stat", OFlags::empty()).ok();
        }
        let fd = self.stat.as_ref()?;
        let n = read_whole(fd, &mut self.text).ok()?;
        forks_in(&self.text[..n])
    }

    /// Whether a refresh that read `forks` at its start may skip the
    /// listings: the count is the one of the last complete refresh and
    /// the mount shows the caller every task.
    pub(crate) fn may_skip_listings(&mut self, root: &ProcRoot, forks: Option<u64>) -> bool {
        let skip = forks.is_some() && forks == self.forks && self.shows_every_task(root);
        #[cfg(test)]
        {
            self.skips += usize::from(skip);
        }
        skip
    }

    /// The refresh that read `forks` at its start ended; `complete` if it
    /// found every task alive throughout it and kept the key of every
    /// file it read, `groups` the thread groups it went through.
    pub(crate) fn ended(&mut self, forks: Option<u64>, complete: bool, groups: &[i32]) {
        if complete && forks.is_some() {
            self.forks = forks;
            if self.groups != groups {
                self.groups.clear();
                self.groups.extend_from_slice(groups);
            }
        } else {
            self.forget();
        }
    }

    /// Whether the mount of `root` lists every task to every caller: its
    /// `hidepid=` is `off` or `noaccess` (which lists all, denying the
    /// files), as the caller's mount table shows it now.
    fn shows_every_task(&mut self, root: &ProcRoot) -> bool {
        let Ok(st) = rustix::fs::statx(root.fd(), c"", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)
        else {
            return false;
        };
        if st.stx_mask & StatxFlags::MNT_ID.bits() == 0 {
            return false;
        }
        let Ok(fd) = root.openat(c"self/mountinfo", OFlags::empty()) else {
            return false;
        };
        let Ok(n) = read_whole(&fd, &mut self.text) else {
            return false;
        };
        mount_lists_every_task(&self.text[..n], st.stx_mnt_id)
    }
}

/// The whole of a small /proc file (formatted anew from offset 0) into
/// `text`, grown as needed; its length.
fn read_whole(fd: &OwnedFd, text: &mut Vec<u8>) -> std::io::Result<usize> {
    if text.len() < 4096 {
        text.resize(4096, 0);
    }
    loop {
        let mut n = 0;
        loop {
            let got = loop {
                match rustix::io::pread(fd, &mut text[n..], n as u64) {
                    Err(rustix::io::Errno::INTR) => continue,
                    res => break res?,
                }
            };
            n += got;
            if got == 0 || n == text.len() {
                break;
            }
        }
        if n < text.len() {
            return Ok(n);
        }
        // Full: the file may be longer; read it all again, from 0.
        let more = text.len() * 2;
        text.resize(more, 0);
    }
}

/// The number on the `processes` line of the proc root's `stat`.
fn forks_in(text: &[u8]) -> Option<u64> {
    const KEY: &[u8] = b"\nprocesses ";
    let at = text.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let digits = text[at..].iter().take_while(|b| b.is_ascii_digit());
    let mut v: u64 = 0;
    let mut any = false;
    for &d in digits {
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        any = true;
    }
    any.then_some(v)
}

/// Whether mount `mnt_id` of a `mountinfo` text is a procfs whose super
/// options hide no task (`hidepid=` absent, `off`/`0` or `noaccess`/`1`).
fn mount_lists_every_task(text: &[u8], mnt_id: u64) -> bool {
    for line in text.split(|&b| b == b'\n') {
        let mut fields = line.split(|&b| b == b' ');
        let Some(id) = fields.next() else { continue };
        if std::str::from_utf8(id)
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            != Some(mnt_id)
        {
            continue;
        }
        // `... - FSTYPE SOURCE SUPER_OPTIONS`.
        let mut after = fields.skip_while(|f| *f != b"-").skip(1);
        if after.next() != Some(b"proc".as_slice()) {
            return false;
        }
        let Some(options) = after.nth(1) else {
            return false;
        };
        return options
            .split(|&b| b == b',')
            .all(|o| match o.strip_prefix(b"hidepid=") {
                Some(v) => matches!(v, b"off" | b"0" | b"noaccess" | b"1"),
                None => true,
            });
    }
    false
}

/// The fds the handles of a process leave to the rest of it: 1,024, the
/// soft `RLIMIT_NOFILE` most systems give a program (one written for that
/// limit then has every fd it could have had), or half the limit when
/// that is lower. A monitor's table of 10,000 tasks thus fits a limit of
/// about 11,500.
const RESERVE: u64 = 1024;

/// Below which fd number and count the handles of the process keep files:
/// the soft `RLIMIT_NOFILE` (taken as 2,048 if unlimited) less
/// [`RESERVE`], or less half of it when it is below 2,048.
pub(crate) fn ceiling() -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    ceiling_of(limit.current.unwrap_or(2048))
}

fn ceiling_of(soft: u64) -> usize {
    usize::try_from(soft - RESERVE.min(soft / 2)).unwrap_or(usize::MAX)
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

    /// The count of tasks ever created is where `Unchanged` reads it,
    /// and a thread's creation moves it (`copy_process()` counts threads
    /// too), as does a process's.
    #[test]
    fn the_fork_count_moves_with_every_thread_and_process() {
        let root = ProcRoot::open("/proc".as_ref()).unwrap();
        let mut u = Unchanged::default();
        let before = u.read_forks(&root).expect("the proc root's stat shows it");
        std::thread::spawn(|| ()).join().unwrap();
        let after_thread = u.read_forks(&root).unwrap();
        assert!(after_thread > before, "{before} {after_thread}");
        std::process::Command::new("true").status().unwrap();
        let after_process = u.read_forks(&root).unwrap();
        assert!(
            after_process > after_thread,
            "{after_thread} {after_process}"
        );
    }

    /// The reserve left to the rest of the process: 1,024 fds, or half
    /// a limit below 2,048.
    #[test]
    fn the_ceiling_leaves_a_reserve() {
        assert_eq!(ceiling_of(20_000), 18_976);
        assert_eq!(ceiling_of(2048), 1024);
        assert_eq!(ceiling_of(1024), 512);
        assert_eq!(ceiling_of(100), 50);
        assert_eq!(ceiling_of(0), 0);
    }

    #[test]
    fn the_fork_count_and_the_mount_options_parse() {
        assert_eq!(
            forks_in(b"cpu  1 2\nintr 5 0\nctxt 9\nbtime 1\nprocesses 12345\nprocs_running 2\n"),
            Some(12345)
        );
        assert_eq!(forks_in(b"cpu 1\nprocs_running 2\n"), None);
        assert_eq!(forks_in(b"cpu 1\nprocesses \n"), None);
        let info = b"22 27 0:21 / /proc rw,relatime shared:12 - proc proc rw\n\
            40 22 0:33 / /proc/sys/fs/binfmt_misc rw - binfmt_misc binfmt_misc rw\n\
            51 27 0:50 / /mnt/p1 rw - proc proc rw,hidepid=invisible,gid=5\n\
            52 27 0:51 / /mnt/p2 rw - proc proc rw,hidepid=noaccess\n\
            53 27 0:52 / /mnt/p3 rw - proc proc rw,hidepid=4\n\
            54 27 0:53 / /mnt/t rw - tmpfs tmpfs rw\n";
        assert!(mount_lists_every_task(info, 22));
        assert!(!mount_lists_every_task(info, 51));
        assert!(mount_lists_every_task(info, 52));
        assert!(!mount_lists_every_task(info, 53));
        assert!(!mount_lists_every_task(info, 54), "not a procfs");
        assert!(!mount_lists_every_task(info, 99), "not in the table");
        assert!(
            !mount_lists_every_task(info, 2),
            "an id's prefix is not the id"
        );
    }

    /// A group's files come in key order after `sort_since`, whether
    /// only its `statm` (read last) is out of place or more are.
    #[test]
    fn a_group_is_put_in_key_order() {
        let key = |tid, file| FileKey {
            tgid: 10,
            tid,
            file,
        };
        let mut kept = KeptFiles::default();
        kept.begin_with_ceiling(usize::MAX);
        kept.remember(key(3, TaskFile::Stat));
        let mark = kept.mark();
        for k in [
            key(10, TaskFile::Stat),
            key(11, TaskFile::Stat),
            key(12, TaskFile::Stat),
            key(10, TaskFile::Statm),
        ] {
            kept.remember(k);
        }
        kept.sort_since(mark);
        let keys = |kept: &KeptFiles| kept.this.iter().map(|(k, _)| *k).collect::<Vec<_>>();
        let want = vec![
            key(3, TaskFile::Stat),
            key(10, TaskFile::Stat),
            key(10, TaskFile::Statm),
            key(11, TaskFile::Stat),
            key(12, TaskFile::Stat),
        ];
        assert_eq!(keys(&kept), want);
        kept.sort_since(mark);
        assert_eq!(keys(&kept), want, "already in order");
        kept.remember(key(2, TaskFile::Stat));
        kept.remember(key(1, TaskFile::Stat));
        kept.sort_since(mark);
        let mut all = want.clone();
        all.extend([key(1, TaskFile::Stat), key(2, TaskFile::Stat)]);
        all[1..].sort_unstable();
        assert_eq!(keys(&kept), all);
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
        kept.begin_with_ceiling(usize::MAX);
        for tid in [3, 5, 7] {
            assert!(kept.take(key(tid)).is_none());
            kept.keep(key(tid), open());
        }
        kept.finish(true);
        assert_eq!(kept.len(), 3);
        kept.begin_with_ceiling(usize::MAX);
        assert!(kept.take(key(4)).is_none());
        let five = kept.take(key(5)).expect("kept from the last refresh");
        kept.keep_again(key(5), five);
        assert!(kept.take(key(6)).is_none());
        kept.finish(true);
        assert_eq!(kept.len(), 1, "3 and 7 were not asked for");
        // A refresh that keeps nothing leaves the last full one's files.
        kept.begin(false, false);
        assert!(kept.take(key(5)).is_none());
        kept.keep(key(9), open());
        kept.finish(false);
        assert_eq!(kept.len(), 1);
        assert!(kept.release_all());
        assert_eq!(kept.len(), 0);
        assert!(!kept.release_all());
    }
}

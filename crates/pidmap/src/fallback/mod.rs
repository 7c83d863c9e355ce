//! The /proc fallback: the syscalls' semantics (strictly ascending ids
//! `>= start`, the same errors) from procfs directories read with raw
//! `getdents64` into one reused buffer, names parsed in place, no
//! allocation per entry.

mod dirent;
mod group_refresh;
mod kept;
mod listed;
mod path;
#[cfg(test)]
mod read_counter;
mod record_buffers;
mod records;
mod task_files;

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{OFlags, SeekFrom};

use crate::error::{Error, Result};
use crate::proc_root::ProcRoot;
use crate::query::{Enumeration, Listing, Query};
use crate::stat::{status_tgid, Stat};
use crate::target::Target;
use crate::target_id::TargetId;
use dirent::{parse_fd, parse_id, read_ids, DIRENT_BUF_SIZE};
use listed::Listed;
use path::{Base, ProcPath};
use record_buffers::RecordBuffers;

/// `FIRST_PROCESS_ENTRY` (fs/proc/base.c): directory offsets of the proc
/// root below it are the static entries (`cpuinfo`, `sys`, ...); from it
/// on come `self`, `thread-self` and then each tgid at offset
/// `FIRST_PROCESS_ENTRY + 2 + tgid`. Seeking to `FIRST_PROCESS_ENTRY +
/// start` thus skips the static entries and the tgids well below `start`
/// (what remains below `start` is filtered).
const FIRST_PROCESS_ENTRY: u64 = 256;

/// The reader's buffers. Create it once and reuse it; listings then
/// allocate only when an output `Vec` must grow.
#[derive(Debug)]
pub(crate) struct Fallback {
    dirents: Box<[MaybeUninit<u8>]>,
    scratch: Vec<i32>,
    text: Vec<u8>,
    children_files: Option<bool>,
    root_dir: Option<OwnedFd>,
    records: RecordBuffers,
    /// Whether full refreshes keep their files open for the next
    /// ([`kept`]); off unless the handle's builder asked for it.
    keep_files: bool,
}

/// A target resolved to a directory below the proc root.
#[derive(Debug, Clone, Copy)]
struct Resolved<'a> {
    /// The proc root the directory is below.
    root: &'a ProcRoot,
    base: Base,
    id: TargetId,
    /// For a pidfd: its fd and the pid it named; checked again after the
    /// listing, so a reused number never passes for the pidfd's process.
    pidfd: Option<(i32, i32)>,
}

impl Fallback {
    #[cfg(test)]
    pub(crate) fn new() -> Self {
        Fallback::keeping_files(false)
    }

    /// A reader whose full refreshes keep their files open for the next
    /// when `keep_files` is true ([`kept`]).
    pub(crate) fn keeping_files(keep_files: bool) -> Self {
        Fallback {
            dirents: vec![MaybeUninit::uninit(); DIRENT_BUF_SIZE].into_boxed_slice(),
            scratch: Vec::new(),
            text: Vec::new(),
            children_files: None,
            root_dir: None,
            records: RecordBuffers::default(),
            keep_files,
        }
    }

    /// List `what` into `out` (cleared first): strictly ascending ids
    /// `>= start`.
    pub(crate) fn list<T: Listed>(
        &mut self,
        root: &ProcRoot,
        what: Enumeration<'_>,
        start: i32,
        out: &mut Vec<T>,
    ) -> Result<()> {
        out.clear();
        match what {
            Enumeration::Ids(q) => self.list_ids(root, q, start, out),
            Enumeration::Fds(t) => {
                let r = resolve(root, t, true)?;
                let res = self.list_fds(r, start, out);
                recheck(r, res)
            }
        }
    }

    fn list_ids<T: Listed>(
        &mut self,
        root: &ProcRoot,
        q: Query<'_>,
        start: i32,
        out: &mut Vec<T>,
    ) -> Result<()> {
        let skip_k = q.ignores_kthreads();
        match q.listing() {
            Listing::Processes => {
                let mut order = Order::new();
                self.read_root_ids(root, start, |id| {
                    order.see(id);
                    out.push(T::listed(id, id));
                })?;
                if skip_k {
                    retain_non_kthreads(root, out)?;
                }
                order.finish(out);
                Ok(())
            }
            Listing::AllTasks => self.all_tasks(root, skip_k, start, out),
            Listing::Threads => {
                let r = resolve(root, q.target(), false)?;
                let res = self.threads(r, skip_k, start, out);
                recheck(r, res)
            }
            Listing::Children => {
                let r = resolve(root, q.target(), false)?;
                let res = self.children(r, start, out).and_then(|()| {
                    if skip_k {
                        retain_non_kthreads(root, out)?;
                    }
                    Ok(())
                });
                recheck(r, res)
            }
        }
    }

    /// The numeric entries `>= start` of the proc root, in readdir order
    /// (ascending tgids), from one reused directory fd rewound with
    /// `lseek` straight past the static entries.
    fn read_root_ids(&mut self, root: &ProcRoot, start: i32, f: impl FnMut(i32)) -> Result<()> {
        let context = || format!("reading the proc root {}", root.path().display());
        let fd = match self.root_dir.take() {
            Some(fd) => fd,
            None => root
                .openat(c".", OFlags::DIRECTORY)
                .map_err(|e| Error::io(context(), e))?,
        };
        let pos = FIRST_PROCESS_ENTRY + u64::from(start.unsigned_abs());
        rustix::fs::seek(&fd, SeekFrom::Start(pos)).map_err(|e| Error::io(context(), e.into()))?;
        let r = read_ids(&mut self.dirents, fd.as_fd(), start, parse_id, f);
        self.root_dir = Some(fd);
        r.map_err(|e| Error::io(context(), e))
    }

    /// Every task `>= start`.
    fn all_tasks<T: Listed>(
        &mut self,
        root: &ProcRoot,
        skip_k: bool,
        start: i32,
        out: &mut Vec<T>,
    ) -> Result<()> {
        // Processes below `start` may still own threads >= start.
        let pids = self.take_scratch_ids(|fb, ids| fb.read_root_ids(root, 1, |id| ids.push(id)))?;
        let mut order = Order::new();
        let res = self.tasks_of(root, &pids, skip_k, start, &mut order, out);
        self.scratch = pids;
        if res.is_err() {
            out.clear();
            return res;
        }
        order.finish(out);
        Ok(())
    }

    /// The tasks `>= start` of each of `pids`, appended to `out`. A
    /// process that exits meanwhile (`ENOENT`/`ESRCH`) is skipped, as is
    /// one whose `task` directory the view denies (`EPERM` from a
    /// `hidepid=noaccess` procfs: the ABI's `PIDMAP_SCOPE_TASKS` is the
    /// union of the `*/task` directories the view lets the caller read).
    /// Any other error (`EMFILE`, `EACCES`, `ENOMEM`, ...) is returned.
    fn tasks_of<T: Listed>(
        &mut self,
        root: &ProcRoot,
        pids: &[i32],
        skip_k: bool,
        start: i32,
        order: &mut Order,
        out: &mut Vec<T>,
    ) -> Result<()> {
        let context = |pid: i32| format!("listing the tasks of process {pid}");
        for &pid in pids {
            if skip_k {
                match is_kthread(root, Base::Pid(pid))? {
                    Some(false) => {}
                    Some(true) | None => continue,
                }
            }
            // A full fd table may be of this handle's kept files: closed,
            // then tried once more.
            let opened = match open_task_dir(root, pid) {
                Err(e) if is_fd_table_full(&e) && self.records.release_kept_files() => {
                    open_task_dir(root, pid)
                }
                res => res,
            };
            let dir = match opened {
                Ok(Some(dir)) => dir,
                Ok(None) => continue,
                Err(e) => return Err(Error::io(context(pid), e)),
            };
            let r = read_ids(&mut self.dirents, dir.as_fd(), start, parse_id, |id| {
                order.see(id);
                out.push(T::listed(id, pid));
            });
            match r {
                Ok(()) => {}
                // Exited while its directory was read: what was read
                // stays, as a snapshot.
                Err(e) if is_gone_errno(&e) => {}
                Err(e) => return Err(Error::io(context(pid), e)),
            }
        }
        Ok(())
    }

    fn threads<T: Listed>(
        &mut self,
        r: Resolved<'_>,
        skip_k: bool,
        start: i32,
        out: &mut Vec<T>,
    ) -> Result<()> {
        let dir = open_dir(r, b"/task", "threads")?;
        if skip_k {
            match is_kthread(r.root, r.base)? {
                Some(false) => {}
                Some(true) => return Ok(()),
                None => return Err(Error::NoSuchProcess { target: r.id }),
            }
        }
        let tgid = if T::NEEDS_TGID {
            read_small(r.root, &ProcPath::new(r.base, None, b"/status"))
                .map_err(|e| io_error(e, "threads", r.id))?
                .and_then(|(buf, n)| status_tgid(&buf[..n]))
                .ok_or(Error::NoSuchProcess { target: r.id })?
                .as_raw()
        } else {
            0
        };
        self.read_ids_ascending(dir.as_fd(), parse_id, start, tgid, out)
            .map_err(|e| io_error(e, "threads", r.id))
    }

    fn list_fds<T: Listed>(&mut self, r: Resolved<'_>, start: i32, out: &mut Vec<T>) -> Result<()> {
        let dir = open_dir(r, b"/fd", "fds")?;
        self.read_ids_ascending(dir.as_fd(), parse_fd, start, 0, out)
            .map_err(|e| io_error(e, "fds", r.id))?;
        // A zombie's fd directory is empty; the syscall says ESRCH for it.
        if out.is_empty() && is_gone(r.root, r.base)? {
            return Err(Error::NoSuchProcess { target: r.id });
        }
        Ok(())
    }

    /// The entries of `dir` (a task's `task` or `fd` directory) that
    /// `parse` accepts and that are `>= start`, appended to `out` as
    /// ids of thread group `tgid`, strictly ascending.
    fn read_ids_ascending<T: Listed>(
        &mut self,
        dir: BorrowedFd<'_>,
        parse: fn(&[u8]) -> Option<i32>,
        start: i32,
        tgid: i32,
        out: &mut Vec<T>,
    ) -> io::Result<()> {
        let mut order = Order::new();
        read_ids(&mut self.dirents, dir, start, parse, |id| {
            order.see(id);
            out.push(T::listed(id, tgid));
        })?;
        order.finish(out);
        Ok(())
    }

    /// Whether this procfs has `/proc/PID/task/TID/children`
    /// (`CONFIG_PROC_CHILDREN`), checked once through `thread-self`.
    /// An error other than `ENOENT` (`EMFILE`, ...) is returned, and the
    /// answer is not cached.
    fn has_children_files(&mut self, root: &ProcRoot) -> Result<bool> {
        if let Some(known) = self.children_files {
            return Ok(known);
        }
        let known = match root.openat(c"thread-self/children", OFlags::empty()) {
            Ok(_) => true,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => false,
            Err(e) => {
                let context = "checking for /proc/thread-self/children";
                return Err(Error::io(context, e));
            }
        };
        self.children_files = Some(known);
        Ok(known)
    }

    /// Children of the target's thread group, whichever of its threads
    /// created them (zombies included), ascending.
    fn children<T: Listed>(&mut self, r: Resolved<'_>, start: i32, out: &mut Vec<T>) -> Result<()> {
        let root = r.root;
        let tasks = open_dir(r, b"/task", "children")?;
        if self.has_children_files(root)? {
            let tids = self.take_scratch_ids(|fb, ids| {
                read_ids(&mut fb.dirents, tasks.as_fd(), 1, parse_id, |id| {
                    ids.push(id);
                })
                .map_err(|e| io_error(e, "children", r.id))
            })?;
            let mut text = std::mem::take(&mut self.text);
            let res = children_files(r, &tids, start, &mut text, out);
            self.text = text;
            self.scratch = tids;
            if res.is_err() {
                out.clear();
                return res;
            }
            Order::unsorted().finish(out);
            return Ok(());
        }
        // No `children` files: scan every process's ppid, which names the
        // parent's thread group.
        drop(tasks);
        let Some(tgid) = read_small(root, &ProcPath::new(r.base, None, b"/status"))
            .map_err(|e| io_error(e, "children", r.id))?
            .and_then(|(buf, n)| status_tgid(&buf[..n]))
        else {
            return Err(Error::NoSuchProcess { target: r.id });
        };
        let pids =
            self.take_scratch_ids(|fb, ids| fb.read_root_ids(root, start, |id| ids.push(id)))?;
        let res = pids.iter().try_for_each(|&p| {
            let path = ProcPath::new(Base::Pid(p), None, b"/stat");
            // A process that exited meanwhile is nobody's child any more.
            let read = read_small(root, &path)
                .map_err(|e| Error::io(format!("reading the stat of process {p}"), e))?;
            if let Some((buf, n)) = read {
                if Stat::parse(&buf[..n]).is_some_and(|s| s.ppid == tgid.as_raw()) {
                    out.push(T::listed(p, p));
                }
            }
            Ok(())
        });
        self.scratch = pids;
        if res.is_err() {
            out.clear();
            return res;
        }
        Order::unsorted().finish(out);
        Ok(())
    }

    /// The reused id list, cleared, filled by `fill` and taken out of
    /// `self` so the caller can go through it while using `self`. It goes
    /// back on an error; otherwise the caller puts it back
    /// (`self.scratch = ids`) when done with it.
    fn take_scratch_ids(
        &mut self,
        fill: impl FnOnce(&mut Self, &mut Vec<i32>) -> Result<()>,
    ) -> Result<Vec<i32>> {
        let mut ids = std::mem::take(&mut self.scratch);
        ids.clear();
        match fill(self, &mut ids) {
            Ok(()) => Ok(ids),
            Err(e) => {
                self.scratch = ids;
                Err(e)
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn force_ppid_scan(&mut self) {
        self.children_files = Some(false);
    }
}

/// The ids `>= start` in the `children` files of the threads `tids` of
/// `r`, appended to `out` unsorted. A thread that exited meanwhile has no
/// children left (`ENOENT`/`ESRCH` are skipped); any other error is
/// returned.
fn children_files<T: Listed>(
    r: Resolved<'_>,
    tids: &[i32],
    start: i32,
    text: &mut Vec<u8>,
    out: &mut Vec<T>,
) -> Result<()> {
    for &tid in tids {
        let path = ProcPath::new(r.base, Some(tid), b"/children");
        let fd = match r.root.openat(path.as_cstr(), OFlags::empty()) {
            Ok(fd) => fd,
            Err(e) if is_gone_errno(&e) => continue,
            Err(e) => return Err(io_error(e, "children", r.id)),
        };
        text.clear();
        match read_all(fd.as_fd(), text) {
            Ok(()) => {}
            Err(e) if is_gone_errno(&e) => continue,
            Err(e) => return Err(io_error(e, "children", r.id)),
        }
        for tok in text.split(|&b| b == b' ' || b == b'\n') {
            match parse_id(tok) {
                Some(id) if id >= start => out.push(T::listed(id, id)),
                _ => {}
            }
        }
    }
    Ok(())
}

/// Keep the ids of `out` (processes) that are not kernel threads; drop
/// those that exited meanwhile. An unreadable `stat` (`EACCES`, `EPERM`,
/// `EMFILE`, ...) is an error: the filter cannot tell.
fn retain_non_kthreads<T: Listed>(root: &ProcRoot, out: &mut Vec<T>) -> Result<()> {
    let mut keep = 0;
    for i in 0..out.len() {
        let id = out[i];
        if is_kthread(root, Base::Pid(id.listed_id()))? == Some(false) {
            out[keep] = id;
            keep += 1;
        }
    }
    out.truncate(keep);
    Ok(())
}

/// Process `pid`'s `task` directory; `None` if it is gone
/// (`ENOENT`/`ESRCH`) or the view denies it (`EPERM` from a
/// `hidepid=noaccess` procfs).
fn open_task_dir(root: &ProcRoot, pid: i32) -> io::Result<Option<OwnedFd>> {
    let path = ProcPath::new(Base::Pid(pid), None, b"/task");
    match root.openat(path.as_cstr(), OFlags::DIRECTORY) {
        Ok(dir) => Ok(Some(dir)),
        Err(e) if is_gone_errno(&e) || e.raw_os_error() == Some(libc::EPERM) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `EMFILE`/`ENFILE`: no fd left, for the process or the system.
fn is_fd_table_full(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// `ENOENT`/`ESRCH`: the task is gone (the only errors a listing may
/// skip).
fn is_gone_errno(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH))
}

/// Resolve a target to its directory: the caller through `self` (threads,
/// children: the calling thread's group) or `thread-self` (fds: the calling
/// thread's fd table), a pidfd through `thread-self/fdinfo`.
fn resolve<'a>(root: &'a ProcRoot, target: Target<'_>, fds: bool) -> Result<Resolved<'a>> {
    let id = target.id();
    let (base, pidfd) = match target {
        Target::Caller if fds => (Base::Thread, None),
        Target::Caller => (Base::Process, None),
        Target::Pid(p) if p.as_raw() > 0 => (Base::Pid(p.as_raw()), None),
        Target::Pid(_) => {
            return Err(Error::InvalidArgument(
                "a pid target must be positive (use Target::Caller for the caller)",
            ))
        }
        Target::Pidfd(fd) => {
            let raw = std::os::fd::AsRawFd::as_raw_fd(&fd);
            let pid = pidfd_pid(root, raw, id)?;
            (Base::Pid(pid), Some((raw, pid)))
        }
    };
    Ok(Resolved {
        root,
        base,
        id,
        pidfd,
    })
}

/// The pid a pidfd names, in the proc root's namespace, from the `Pid:`
/// line of its fdinfo: `EBADF` if the fd is not open, `EINVAL` if it is not
/// a pidfd, `ESRCH` once the process has exited (`Pid: -1`).
fn pidfd_pid(root: &ProcRoot, fd: i32, id: TargetId) -> Result<i32> {
    let read = read_small(root, &ProcPath::fdinfo(fd))
        .map_err(|e| Error::io(format!("reading the fdinfo of pidfd {fd}"), e))?;
    let Some((buf, n)) = read else {
        return Err(Error::io(
            format!("reading the fdinfo of pidfd {fd}"),
            io::Error::from_raw_os_error(libc::EBADF),
        ));
    };
    let pid = buf[..n]
        .split(|&b| b == b'\n')
        .find_map(|l| l.strip_prefix(b"Pid:"))
        .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<i32>().ok())
        .ok_or(Error::InvalidArgument("the target fd is not a pidfd"))?;
    if pid <= 0 {
        return Err(Error::NoSuchProcess { target: id });
    }
    Ok(pid)
}

/// After listing a pidfd's process by number: if the pidfd no longer
/// names that number, the process exited and the number may have been
/// reused, so the listing is `ESRCH`, as the syscall says.
fn recheck(r: Resolved<'_>, res: Result<()>) -> Result<()> {
    let Some((fd, pid)) = r.pidfd else {
        return res;
    };
    match pidfd_pid(r.root, fd, r.id) {
        Ok(now) if now == pid => res,
        _ => Err(Error::NoSuchProcess { target: r.id }),
    }
}

fn open_dir(r: Resolved<'_>, suffix: &[u8], what: &'static str) -> Result<OwnedFd> {
    let path = ProcPath::new(r.base, None, suffix);
    r.root
        .openat(path.as_cstr(), OFlags::DIRECTORY)
        .map_err(|e| io_error(e, what, r.id))
}

/// An errno from opening or reading a task's directory: `ENOENT`/`ESRCH`
/// is a missing process, `EACCES`/`EPERM` a denial, anything else
/// (`EMFILE`, `ENOMEM`, ...) keeps its errno.
fn io_error(e: io::Error, what: &'static str, target: TargetId) -> Error {
    match e.raw_os_error() {
        Some(errno) => Error::from_errno(errno, what, target),
        None => Error::io(format!("listing the {what} of {target}"), e),
    }
}

/// Whether the task is a kernel thread (`PF_KTHREAD`), from its `stat`
/// flags: `None` if it is gone. A `stat` that cannot be read for any
/// other reason, or does not parse, is an error: the answer is unknown.
fn is_kthread(root: &ProcRoot, base: Base) -> Result<Option<bool>> {
    let path = ProcPath::new(base, None, b"/stat");
    let context = || format!("reading {}", path.as_cstr().to_string_lossy());
    let Some((buf, n)) = read_small(root, &path).map_err(|e| Error::io(context(), e))? else {
        return Ok(None);
    };
    match Stat::parse(&buf[..n]) {
        Some(s) => Ok(Some(s.is_kernel_thread())),
        None => Err(Error::io(
            context(),
            io::Error::new(io::ErrorKind::InvalidData, "not a stat line"),
        )),
    }
}

/// A task that is gone, or a zombie (no fd table any more).
fn is_gone(root: &ProcRoot, base: Base) -> Result<bool> {
    let path = ProcPath::new(base, None, b"/stat");
    let read = read_small(root, &path)
        .map_err(|e| Error::io(format!("reading {}", path.as_cstr().to_string_lossy()), e))?;
    Ok(match read {
        None => true,
        Some((buf, n)) => Stat::parse(&buf[..n]).map_or(true, |s| s.is_zombie()),
    })
}

/// The first 1 KiB of a small /proc file (`stat`, `status` up to `Tgid:`,
/// `fdinfo`); `Ok(None)` if the task is gone (`ENOENT`/`ESRCH`), the
/// error for anything else.
fn read_small(root: &ProcRoot, path: &ProcPath) -> io::Result<Option<([u8; 1024], usize)>> {
    let fd = match root.openat(path.as_cstr(), OFlags::empty()) {
        Ok(fd) => fd,
        Err(e) if is_gone_errno(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut buf = [0u8; 1024];
    match read_retrying(fd.as_fd(), &mut buf) {
        Ok(n) => Ok(Some((buf, n))),
        Err(e) if is_gone_errno(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

fn read_retrying(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match rustix::io::read(fd, &mut *buf) {
            Ok(n) => return Ok(n),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

fn read_all(fd: BorrowedFd<'_>, out: &mut Vec<u8>) -> io::Result<()> {
    let mut chunk = [0u8; 4096];
    loop {
        let n = read_retrying(fd, &mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// Tracks whether ids arrived ascending, so sorting is skipped when they
/// did (the proc root and task directories list in order).
struct Order {
    sorted: bool,
    last: i32,
}

impl Order {
    fn new() -> Self {
        Order {
            sorted: true,
            last: i32::MIN,
        }
    }

    fn unsorted() -> Self {
        Order {
            sorted: false,
            last: i32::MIN,
        }
    }

    #[inline]
    fn see(&mut self, id: i32) {
        self.sorted &= id > self.last;
        self.last = id;
    }

    fn finish<T: Listed>(self, out: &mut Vec<T>) {
        if !self.sorted {
            out.sort_unstable();
            out.dedup();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pid::Pid;

    #[test]
    fn children_files_and_ppid_scan_agree() {
        let mut kids = Vec::new();
        for _ in 0..3 {
            // SAFETY: the child only calls async-signal-safe functions.
            let pid = unsafe { libc::fork() };
            assert!(pid >= 0);
            if pid == 0 {
                loop {
                    // SAFETY: async-signal-safe; killed by the parent.
                    unsafe { libc::pause() };
                }
            }
            kids.push(Pid::from_raw(pid));
        }
        kids.sort();
        let root = ProcRoot::open("/proc".as_ref()).unwrap();
        let mut fb = Fallback::new();
        let me = Pid::this_process();
        let q = |t| Enumeration::Ids(Query::children(t));
        let mut a: Vec<Pid> = Vec::new();
        let mut b: Vec<Pid> = Vec::new();
        let mut c: Vec<Pid> = Vec::new();
        let mut d: Vec<Pid> = Vec::new();
        let ra = fb.list(&root, q(Target::Pid(me)), 0, &mut a);
        let rc = fb.list(&root, q(Target::Caller), 0, &mut c);
        fb.force_ppid_scan();
        let rb = fb.list(&root, q(Target::Pid(me)), 0, &mut b);
        let rd = fb.list(&root, q(Target::Caller), kids[1].as_raw(), &mut d);
        for k in &kids {
            // SAFETY: killing and reaping our own children.
            unsafe {
                libc::kill(k.as_raw(), libc::SIGKILL);
                libc::waitpid(k.as_raw(), std::ptr::null_mut(), 0);
            }
        }
        ra.unwrap();
        rb.unwrap();
        rc.unwrap();
        rd.unwrap();
        for k in &kids {
            assert!(
                a.contains(k) && b.contains(k) && c.contains(k),
                "{k}: {a:?} {b:?} {c:?}"
            );
        }
        assert!(d.iter().all(|p| *p >= kids[1]) && d.contains(&kids[2]) && !d.contains(&kids[0]));
    }
}

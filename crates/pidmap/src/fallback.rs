//! The /proc fallback: raw `getdents64` into one reused buffer, ids parsed
//! in place, no allocation per entry.
//!
//! It gives the syscall's semantics: strictly ascending ids `>= start`,
//! [`Error::NoSuchProcess`] for a missing pid, [`Error::PermissionDenied`]
//! for another user's fds. Unlike readdir order, the output is sorted.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::{sys, Listing, Pid, Query, RawId};

/// Size of the reused `getdents64` buffer (the brief asks for >= 32 KiB).
pub const DIRENT_BUF_SIZE: usize = 64 * 1024;

/// `PROC_SUPER_MAGIC` from `<linux/magic.h>`.
const PROC_SUPER_MAGIC: i64 = 0x9fa0;
/// `PF_KTHREAD` from `<linux/sched.h>`.
pub const PF_KTHREAD: u64 = 0x0020_0000;

/// `FIRST_PROCESS_ENTRY` (fs/proc/base.c): directory offsets of the proc
/// root below it are the static entries (`cpuinfo`, `sys`, ...); from it
/// on come `self`, `thread-self` and then each tgid at offset
/// `TGID_OFFSET + tgid`, with `TGID_OFFSET = FIRST_PROCESS_ENTRY + 2`
/// (`+ 1` before 3.17). Seeking to `FIRST_PROCESS_ENTRY + start` thus skips
/// the static entries and the tgids well below `start` (what remains below
/// `start` is filtered), for any `TGID_OFFSET >= FIRST_PROCESS_ENTRY`.
const FIRST_PROCESS_ENTRY: i64 = 256;

/// Offsets inside `struct linux_dirent64`.
const D_RECLEN: usize = 16;
const D_NAME: usize = 19;

/// Parse a canonical decimal id: ASCII digits, no sign, no leading zero,
/// no overflow past `i32::MAX`. `.`, `..`, `self`, `0`, `007`, `12a` give
/// `None`.
///
/// ```
/// use pidmap::fallback::parse_id;
/// assert_eq!(parse_id(b"4242"), Some(4242));
/// assert_eq!(parse_id(b"self"), None);
/// assert_eq!(parse_id(b"2147483648"), None);
/// ```
#[inline]
pub fn parse_id(name: &[u8]) -> Option<i32> {
    let (&first, _) = name.split_first()?;
    if !(b'1'..=b'9').contains(&first) || name.len() > 10 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in name {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    i32::try_from(v).ok()
}

/// Walk the `linux_dirent64` records in `buf` (as filled by
/// `getdents64`) and call `f` with every entry whose name is a canonical
/// decimal id. Other names (`.`, `..`, `self`, `thread-self`, files) are
/// skipped. Returns an error for a malformed record (bad `d_reclen` or a
/// name without its NUL).
///
/// ```
/// use pidmap::fallback::parse_dirents;
/// // One record: ino, off, reclen = 24, type, "42\0", padding.
/// let mut rec = [0u8; 24];
/// rec[16..18].copy_from_slice(&24u16.to_ne_bytes());
/// rec[19..21].copy_from_slice(b"42");
/// let mut ids = vec![];
/// parse_dirents(&rec, |id| ids.push(id)).unwrap();
/// assert_eq!(ids, [42]);
/// ```
pub fn parse_dirents(buf: &[u8], mut f: impl FnMut(i32)) -> io::Result<()> {
    let mut off = 0;
    while off < buf.len() {
        let rest = &buf[off..];
        if rest.len() < D_NAME + 1 {
            return Err(malformed());
        }
        let reclen = usize::from(u16::from_ne_bytes([rest[D_RECLEN], rest[D_RECLEN + 1]]));
        if reclen < D_NAME + 1 || reclen > rest.len() {
            return Err(malformed());
        }
        let name_area = &rest[D_NAME..reclen];
        let Some(nul) = name_area.iter().position(|&b| b == 0) else {
            return Err(malformed());
        };
        if let Some(id) = parse_id(&name_area[..nul]) {
            f(id);
        }
        off += reclen;
    }
    Ok(())
}

fn malformed() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "malformed linux_dirent64 record",
    )
}

/// An open procfs mount, by default `/proc`, possibly mounted elsewhere.
#[derive(Debug, Clone)]
pub struct ProcRoot {
    fd: Arc<OwnedFd>,
    path: PathBuf,
}

impl ProcRoot {
    /// Open `path` and check that it is a procfs (statfs magic and a
    /// `self` entry). Fails with [`Error::ProcNotMounted`] otherwise.
    ///
    /// ```
    /// use pidmap::fallback::ProcRoot;
    /// assert!(ProcRoot::open("/proc").is_ok());
    /// assert!(matches!(ProcRoot::open("/"), Err(pidmap::Error::ProcNotMounted(_))));
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let mut cpath = path.as_os_str().as_bytes().to_vec();
        cpath.push(0);
        let cpath = CStr::from_bytes_with_nul(&cpath)
            .map_err(|_| Error::InvalidArgument("proc root path contains a NUL byte"))?;
        // SAFETY: `cpath` is a valid NUL-terminated string; the returned fd,
        // if any, is owned by nobody else.
        let raw = unsafe {
            libc::open(
                cpath.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(Error::ProcNotMounted(path));
        }
        // SAFETY: `raw` is a fresh fd we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: an all-zero statfs is a valid value to be overwritten.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: `fd` is open and `st` is writable.
        if unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) } != 0
            || st.f_type as i64 != PROC_SUPER_MAGIC
        {
            return Err(Error::ProcNotMounted(path));
        }
        let root = ProcRoot {
            fd: Arc::new(fd),
            path,
        };
        // A procfs from another pid namespace still has `self` only if we
        // are visible in it; without it our answers would be meaningless.
        match root.openat(c"self", libc::O_DIRECTORY) {
            Ok(_) => Ok(root),
            Err(_) => Err(Error::ProcNotMounted(root.path)),
        }
    }

    /// The path this root was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn openat(&self, rel: &CStr, flags: i32) -> io::Result<OwnedFd> {
        // SAFETY: `rel` is NUL-terminated and the dirfd is open for the
        // lifetime of `self`.
        let raw = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                rel.as_ptr(),
                flags | libc::O_RDONLY | libc::O_CLOEXEC,
            )
        };
        if raw < 0 {
            Err(io::Error::last_os_error())
        } else {
            // SAFETY: `raw` is a fresh fd we own.
            Ok(unsafe { OwnedFd::from_raw_fd(raw) })
        }
    }
}

/// A small stack buffer for `"<pid>/<suffix>\0"` paths, so that opening
/// per-process files allocates nothing.
struct PathBuf64 {
    buf: [u8; 64],
}

impl PathBuf64 {
    fn new(pid: i32, mid: Option<i32>, suffix: &[u8]) -> Self {
        let mut buf = [0u8; 64];
        let mut n = write_dec(&mut buf, 0, pid);
        if let Some(tid) = mid {
            n = write_bytes(&mut buf, n, b"/task/");
            n = write_dec(&mut buf, n, tid);
        }
        n = write_bytes(&mut buf, n, suffix);
        buf[n] = 0;
        PathBuf64 { buf }
    }

    fn as_cstr(&self) -> &CStr {
        // The buffer always holds a NUL written by `new`.
        CStr::from_bytes_until_nul(&self.buf).unwrap_or(c".")
    }
}

fn write_bytes(buf: &mut [u8; 64], at: usize, s: &[u8]) -> usize {
    buf[at..at + s.len()].copy_from_slice(s);
    at + s.len()
}

fn write_dec(buf: &mut [u8; 64], at: usize, v: i32) -> usize {
    let mut tmp = [0u8; 12];
    let mut i = tmp.len();
    let mut v = v.unsigned_abs();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    write_bytes(buf, at, &tmp[i..])
}

/// The /proc reader: a root plus one reused `getdents64` buffer and scratch
/// space. Create it once and reuse it; listings then allocate only when an
/// output `Vec` must grow.
#[derive(Debug)]
pub struct Fallback {
    root: ProcRoot,
    dirents: Box<[u64]>,
    scratch: Vec<i32>,
    text: Vec<u8>,
    children_files: Option<bool>,
    root_dir: Option<OwnedFd>,
}

impl Clone for Fallback {
    fn clone(&self) -> Self {
        Fallback::new(self.root.clone())
    }
}

impl Fallback {
    /// A reader over `root`. Usually you want [`Pidmap`](crate::Pidmap)
    /// with [`Backend::Procfs`](crate::Backend::Procfs), which wraps this.
    ///
    /// ```
    /// use pidmap::{Fallback, ProcRoot};
    /// let fb = Fallback::new(ProcRoot::open("/proc")?);
    /// assert!(!fb.is_kthread(std::process::id() as i32));
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn new(root: ProcRoot) -> Self {
        Fallback {
            root,
            dirents: vec![0u64; DIRENT_BUF_SIZE / 8].into_boxed_slice(),
            scratch: Vec::new(),
            text: Vec::new(),
            children_files: None,
            root_dir: None,
        }
    }

    /// The root this reader lists.
    pub fn root(&self) -> &ProcRoot {
        &self.root
    }

    /// Read every numeric entry `>= start` of the directory `dir` and hand
    /// it to `f`, in directory order.
    fn read_ids(
        dirents: &mut [u64],
        dir: BorrowedFd<'_>,
        start: i32,
        mut f: impl FnMut(i32),
    ) -> io::Result<()> {
        let buf: &mut [u8] = bytemuck::cast_slice_mut(dirents);
        loop {
            let n = sys::getdents64(dir, buf)?;
            if n == 0 {
                return Ok(());
            }
            parse_dirents(&buf[..n], |id| {
                if id >= start {
                    f(id)
                }
            })?;
        }
    }

    /// The numeric entries `>= start` of the proc root, in readdir order
    /// (ascending tgids). Reuses one directory fd, rewound with `lseek`,
    /// straight past the static entries.
    fn read_root_ids(&mut self, start: i32, f: impl FnMut(i32)) -> Result<()> {
        let fd = match self.root_dir.take() {
            Some(fd) => fd,
            None => self
                .root
                .openat(c".", libc::O_DIRECTORY)
                .map_err(|e| Error::io("opening the proc root", e))?,
        };
        let pos = FIRST_PROCESS_ENTRY + i64::from(start.max(0));
        // SAFETY: lseek on a directory fd we own.
        if unsafe { libc::lseek(fd.as_raw_fd(), pos, libc::SEEK_SET) } < 0 {
            return Err(Error::io(
                "seeking in the proc root",
                io::Error::last_os_error(),
            ));
        }
        let r = Self::read_ids(&mut self.dirents, fd.as_fd(), start, f);
        self.root_dir = Some(fd);
        r.map_err(|e| Error::io("reading the proc root", e))
    }

    /// Whether `pid` is a kernel thread, from the flags field of
    /// `/proc/PID/stat`. A vanished pid counts as "not a kthread" (the
    /// caller's listing was a snapshot anyway).
    pub fn is_kthread(&self, pid: i32) -> bool {
        let mut buf = [0u8; 512];
        let Some(n) = self.read_small(&PathBuf64::new(pid, None, b"/stat"), &mut buf) else {
            return false;
        };
        stat_flags(&buf[..n]).is_some_and(|f| f & PF_KTHREAD != 0)
    }

    fn read_small(&self, path: &PathBuf64, buf: &mut [u8]) -> Option<usize> {
        let fd = self.root.openat(path.as_cstr(), 0).ok()?;
        read_fd(fd.as_fd(), buf).ok()
    }

    fn open_pid_dir(&self, pid: i32, suffix: &[u8]) -> Result<OwnedFd> {
        let path = PathBuf64::new(pid, None, suffix);
        self.root
            .openat(path.as_cstr(), libc::O_DIRECTORY)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ENOENT) | Some(libc::ESRCH) => Error::NoSuchProcess(Pid::from_raw(pid)),
                Some(libc::EACCES) | Some(libc::EPERM) => {
                    Error::PermissionDenied(Pid::from_raw(pid))
                }
                _ => Error::io("opening a /proc directory", e),
            })
    }

    /// List `query` into `out` (cleared first): strictly ascending ids
    /// `>= start`.
    pub(crate) fn list<T: RawId>(
        &mut self,
        query: Query,
        start: i32,
        out: &mut Vec<T>,
    ) -> Result<()> {
        out.clear();
        let skip_k = query.ignore_kthreads;
        match query.listing {
            Listing::Processes => {
                let mut sorted = true;
                let mut last = i32::MIN;
                self.read_root_ids(start, |id| {
                    sorted &= id > last;
                    last = id;
                    out.push(T::from_raw_id(id));
                })?;
                if skip_k {
                    out.retain(|id| !self.is_kthread(id.raw_id()));
                }
                finish(out, sorted);
            }
            Listing::AllTasks => {
                let mut pids = std::mem::take(&mut self.scratch);
                pids.clear();
                // Processes below `start` may still own threads >= start.
                let r = self.read_root_ids(1, |id| pids.push(id));
                if let Err(e) = r {
                    self.scratch = pids;
                    return Err(e);
                }
                let mut sorted = true;
                let mut last = i32::MIN;
                for &pid in &pids {
                    if skip_k && self.is_kthread(pid) {
                        continue;
                    }
                    let Ok(dir) = self.root.openat(
                        PathBuf64::new(pid, None, b"/task").as_cstr(),
                        libc::O_DIRECTORY,
                    ) else {
                        continue; // exited meanwhile
                    };
                    // A process that exits mid-read may give ENOENT/ESRCH: skip it.
                    let _ = Self::read_ids(&mut self.dirents, dir.as_fd(), start, |id| {
                        sorted &= id > last;
                        last = id;
                        out.push(T::from_raw_id(id));
                    });
                }
                self.scratch = pids;
                finish(out, sorted);
            }
            Listing::Threads(pid) => {
                let pid = resolve_self(pid)?;
                let dir = self.open_pid_dir(pid, b"/task")?;
                if skip_k && self.is_kthread(pid) {
                    return Ok(());
                }
                let mut sorted = true;
                let mut last = i32::MIN;
                Self::read_ids(&mut self.dirents, dir.as_fd(), start, |id| {
                    sorted &= id > last;
                    last = id;
                    out.push(T::from_raw_id(id));
                })
                .map_err(|e| map_gone(e, pid))?;
                if out.is_empty() && start <= pid && self.is_gone(pid) {
                    return Err(Error::NoSuchProcess(Pid::from_raw(pid)));
                }
                finish(out, sorted);
            }
            Listing::Children(pid) => {
                let pid = resolve_self(pid)?;
                self.children(pid, start, out)?;
                if skip_k {
                    out.retain(|id| !self.is_kthread(id.raw_id()));
                }
            }
        }
        Ok(())
    }

    /// List the fds of `pid` into `out` (cleared first).
    pub(crate) fn list_fds<T: RawId>(
        &mut self,
        pid: Pid,
        start: i32,
        out: &mut Vec<T>,
    ) -> Result<()> {
        out.clear();
        let pid = resolve_self(pid)?;
        let dir = self.open_pid_dir(pid, b"/fd")?;
        let mut sorted = true;
        let mut last = i32::MIN;
        // fd 0 is a valid fd but not a canonical "id": handle it apart.
        let mut zero = false;
        let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut self.dirents);
        loop {
            let n = sys::getdents64(dir.as_fd(), buf).map_err(|e| map_gone(e, pid))?;
            if n == 0 {
                break;
            }
            parse_dirents(&buf[..n], |id| {
                if id >= start {
                    sorted &= id > last;
                    last = id;
                    out.push(T::from_raw_id(id));
                }
            })
            .map_err(|e| Error::io("reading /proc/PID/fd", e))?;
            if start == 0 && !zero {
                zero = has_name(&buf[..n], b"0");
            }
        }
        if zero {
            out.push(T::from_raw_id(0));
            sorted = false;
        }
        if out.is_empty() && self.is_gone(pid) {
            return Err(Error::NoSuchProcess(Pid::from_raw(pid)));
        }
        finish(out, sorted);
        Ok(())
    }

    /// A pid that is gone or a zombie (a zombie has no fd table, and the
    /// syscall answers ESRCH for it).
    fn is_gone(&self, pid: i32) -> bool {
        let mut buf = [0u8; 512];
        match self.read_small(&PathBuf64::new(pid, None, b"/stat"), &mut buf) {
            None => true,
            Some(n) => matches!(stat_state(&buf[..n]), Some(b'Z') | Some(b'X')),
        }
    }

    /// Whether this procfs has `/proc/PID/task/TID/children`
    /// (`CONFIG_PROC_CHILDREN`), checked once through `thread-self`.
    fn has_children_files(&mut self) -> bool {
        *self
            .children_files
            .get_or_insert_with(|| self.root.openat(c"thread-self/children", 0).is_ok())
    }

    /// The thread-group id of `tid`, from the `Tgid:` line of its status.
    fn tgid_of(&self, tid: i32) -> Option<i32> {
        let mut buf = [0u8; 512];
        let n = self.read_small(&PathBuf64::new(tid, None, b"/status"), &mut buf)?;
        let text = &buf[..n];
        let at = text.windows(6).position(|w| w == b"Tgid:\t")?;
        let rest = &text[at + 6..];
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        parse_id(&rest[..end])
    }

    /// Children of the process `pid` belongs to, whichever of its threads
    /// created them (zombies included), ascending.
    fn children<T: RawId>(&mut self, pid: i32, start: i32, out: &mut Vec<T>) -> Result<()> {
        let tasks = self.open_pid_dir(pid, b"/task")?;
        if self.has_children_files() {
            let mut tids = std::mem::take(&mut self.scratch);
            tids.clear();
            Self::read_ids(&mut self.dirents, tasks.as_fd(), 1, |id| tids.push(id))
                .map_err(|e| map_gone(e, pid))?;
            let mut text = std::mem::take(&mut self.text);
            for &tid in &tids {
                let path = PathBuf64::new(pid, Some(tid), b"/children");
                // A thread that exited meanwhile has no children left.
                let Ok(fd) = self.root.openat(path.as_cstr(), 0) else {
                    continue;
                };
                text.clear();
                if read_all(fd.as_fd(), &mut text).is_ok() {
                    for tok in text.split(|&b| b == b' ' || b == b'\n') {
                        if let Some(id) = parse_id(tok) {
                            if id >= start {
                                out.push(T::from_raw_id(id));
                            }
                        }
                    }
                }
            }
            self.text = text;
            self.scratch = tids;
            finish(out, false);
            return Ok(());
        }
        // No `children` files: scan every process's ppid (field 4 of stat),
        // which names the parent's thread group.
        let Some(tgid) = self.tgid_of(pid) else {
            return Err(Error::NoSuchProcess(Pid::from_raw(pid)));
        };
        drop(tasks);
        let mut pids = std::mem::take(&mut self.scratch);
        pids.clear();
        let r = self.read_root_ids(start, |id| pids.push(id));
        if let Err(e) = r {
            self.scratch = pids;
            return Err(e);
        }
        for &p in &pids {
            let mut buf = [0u8; 512];
            if let Some(n) = self.read_small(&PathBuf64::new(p, None, b"/stat"), &mut buf) {
                if stat_field(&buf[..n], 1).and_then(parse_id) == Some(tgid) {
                    out.push(T::from_raw_id(p));
                }
            }
        }
        self.scratch = pids;
        finish(out, false);
        Ok(())
    }
}

fn has_name(buf: &[u8], want: &[u8]) -> bool {
    let mut off = 0;
    while off + D_NAME < buf.len() {
        let reclen = usize::from(u16::from_ne_bytes([
            buf[off + D_RECLEN],
            buf[off + D_RECLEN + 1],
        ]));
        if reclen <= D_NAME || off + reclen > buf.len() {
            return false;
        }
        let name = &buf[off + D_NAME..off + reclen];
        if name.starts_with(want) && name.get(want.len()) == Some(&0) {
            return true;
        }
        off += reclen;
    }
    false
}

fn resolve_self(pid: Pid) -> Result<i32> {
    match pid.as_raw() {
        0 => Ok(std::process::id() as i32),
        p if p < 0 => Err(Error::InvalidArgument("pid must not be negative")),
        p => Ok(p),
    }
}

fn map_gone(e: io::Error, pid: i32) -> Error {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ESRCH) => Error::NoSuchProcess(Pid::from_raw(pid)),
        Some(libc::EACCES) | Some(libc::EPERM) => Error::PermissionDenied(Pid::from_raw(pid)),
        _ => Error::io("reading a /proc directory", e),
    }
}

/// Sort (if needed) and dedup.
fn finish<T: RawId>(out: &mut Vec<T>, sorted: bool) {
    if !sorted {
        out.sort_unstable();
        out.dedup();
    }
}

fn read_fd(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is writable for `buf.len()` bytes.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn read_all(fd: BorrowedFd<'_>, out: &mut Vec<u8>) -> io::Result<()> {
    let mut chunk = [0u8; 4096];
    loop {
        let n = read_fd(fd, &mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// Field `i` (0 = state, 1 = ppid, ..., 6 = flags) after the `(comm)` of a
/// `/proc/PID/stat` line.
pub(crate) fn stat_field(stat: &[u8], i: usize) -> Option<&[u8]> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    stat[close + 1..]
        .split(|&b| b == b' ')
        .filter(|s| !s.is_empty())
        .nth(i)
}

fn stat_state(stat: &[u8]) -> Option<u8> {
    stat_field(stat, 0).and_then(|s| s.first().copied())
}

/// The `flags` field (field 9) of a `/proc/PID/stat` line.
pub(crate) fn stat_flags(stat: &[u8]) -> Option<u64> {
    let f = stat_field(stat, 6)?;
    std::str::from_utf8(f).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Append one `linux_dirent64` record for `name`, padded to 8 bytes.
    fn push_dirent(buf: &mut Vec<u8>, name: &[u8], d_type: u8) {
        let reclen = (D_NAME + name.len() + 1).div_ceil(8) * 8;
        let start = buf.len();
        buf.resize(start + reclen, 0);
        let rec = &mut buf[start..];
        rec[0..8].copy_from_slice(&77u64.to_ne_bytes());
        rec[8..16].copy_from_slice(&(start as i64 + reclen as i64).to_ne_bytes());
        rec[16..18].copy_from_slice(&(reclen as u16).to_ne_bytes());
        rec[18] = d_type;
        rec[D_NAME..D_NAME + name.len()].copy_from_slice(name);
    }

    #[test]
    fn parses_crafted_buffer_with_odd_names() {
        let mut buf = Vec::new();
        let names: &[&[u8]] = &[
            b".",
            b"..",
            b"1",
            b"self",
            b"thread-self",
            b"42",
            b"0",
            b"007",
            b"12a",
            b"-5",
            b"+6",
            b" 7",
            b"2147483647",
            b"2147483648",
            b"99999999999",
            b"\xff\xfe",
            b"a very long name that is not a number at all, padded out",
            b"31337",
            b"",
        ];
        for n in names {
            push_dirent(&mut buf, n, libc::DT_DIR);
        }
        let mut ids = Vec::new();
        parse_dirents(&buf, |id| ids.push(id)).unwrap();
        assert_eq!(ids, [1, 42, 2147483647, 31337]);
    }

    #[test]
    fn rejects_malformed_records() {
        let mut buf = Vec::new();
        push_dirent(&mut buf, b"12", libc::DT_DIR);
        // reclen larger than the buffer
        let mut bad = buf.clone();
        bad[16..18].copy_from_slice(&200u16.to_ne_bytes());
        assert!(parse_dirents(&bad, |_| {}).is_err());
        // reclen zero would loop forever
        let mut bad = buf.clone();
        bad[16..18].copy_from_slice(&0u16.to_ne_bytes());
        assert!(parse_dirents(&bad, |_| {}).is_err());
        // truncated tail
        assert!(parse_dirents(&buf[..10], |_| {}).is_err());
        // name without NUL
        let mut bad = buf.clone();
        for b in &mut bad[D_NAME..] {
            *b = b'1';
        }
        assert!(parse_dirents(&bad, |_| {}).is_err());
        // empty buffer is fine
        assert!(parse_dirents(&[], |_| {}).is_ok());
    }

    #[test]
    fn parse_id_edges() {
        assert_eq!(parse_id(b"1"), Some(1));
        assert_eq!(parse_id(b"4194304"), Some(4194304));
        assert_eq!(parse_id(b"0"), None);
        assert_eq!(parse_id(b""), None);
        assert_eq!(parse_id(b"1 "), None);
        assert_eq!(parse_id(b"12345678901"), None);
        assert_eq!(parse_id(b"4294967295"), None);
    }

    #[test]
    fn has_name_finds_zero() {
        let mut buf = Vec::new();
        push_dirent(&mut buf, b".", libc::DT_DIR);
        push_dirent(&mut buf, b"00", libc::DT_LNK);
        assert!(!has_name(&buf, b"0"));
        push_dirent(&mut buf, b"0", libc::DT_LNK);
        assert!(has_name(&buf, b"0"));
    }

    #[test]
    fn stat_parsing() {
        let line = b"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0\n";
        assert_eq!(stat_flags(line), Some(2129984));
        assert_eq!(stat_flags(line).unwrap() & PF_KTHREAD, PF_KTHREAD);
        assert_eq!(stat_state(line), Some(b'S'));
        let odd = b"77 (a) b) (c) Z 5 0 0 0 -1 4194560 0\n";
        assert_eq!(stat_state(odd), Some(b'Z'));
        assert_eq!(stat_field(odd, 1), Some(&b"5"[..]));
        assert_eq!(stat_flags(odd), Some(4194560));
        assert_eq!(stat_flags(b"garbage"), None);
    }

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
        let mut fb = Fallback::new(ProcRoot::open("/proc").unwrap());
        let me = Pid::this_process();
        let mut a: Vec<Pid> = Vec::new();
        let mut b: Vec<Pid> = Vec::new();
        fb.list(Query::children(me), 0, &mut a).unwrap();
        fb.children_files = Some(false);
        fb.list(Query::children(me), 0, &mut b).unwrap();
        let mut c: Vec<Pid> = Vec::new();
        fb.list(Query::children(me), kids[1].as_raw(), &mut c)
            .unwrap();
        let gone = fb.list(
            Query::children(Pid::from_raw(1 << 30)),
            0,
            &mut Vec::<Pid>::new(),
        );
        // From a non-leader thread of ours: the same children, both ways.
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            tx.send(unsafe { libc::gettid() }).unwrap();
            let _ = stop_rx.recv();
        });
        let tid = Pid::from_raw(rx.recv().unwrap());
        let mut d: Vec<Pid> = Vec::new();
        let via_tid = fb.list(Query::children(tid), 0, &mut d);
        fb.children_files = None;
        let mut e: Vec<Pid> = Vec::new();
        let via_tid_files = fb.list(Query::children(tid), 0, &mut e);
        drop(stop_tx);
        t.join().unwrap();
        for k in &kids {
            // SAFETY: killing and reaping our own children.
            unsafe {
                libc::kill(k.as_raw(), libc::SIGKILL);
                libc::waitpid(k.as_raw(), std::ptr::null_mut(), 0);
            }
        }
        for k in &kids {
            assert!(a.contains(k) && b.contains(k), "{k}: {a:?} {b:?}");
        }
        assert!(c.iter().all(|p| *p >= kids[1]) && c.contains(&kids[2]));
        assert!(matches!(gone, Err(Error::NoSuchProcess(_))));
        via_tid.unwrap();
        via_tid_files.unwrap();
        for k in &kids {
            assert!(d.contains(k) && e.contains(k), "{k}: {d:?} {e:?}");
        }
    }

    #[test]
    fn path_building() {
        assert_eq!(PathBuf64::new(123, None, b"/task").as_cstr(), c"123/task");
        assert_eq!(
            PathBuf64::new(1, Some(2147483647), b"/children").as_cstr(),
            c"1/task/2147483647/children"
        );
    }
}

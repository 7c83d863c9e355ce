//! List processes, threads, children and open file descriptors of Linux
//! processes — through the `pidmap(2)`/`fdmap(2)` system calls when the
//! kernel has them, and through a fast `/proc` reader when it does not.
//!
//! # Backends
//!
//! | [`Backend`] | behaviour |
//! |---|---|
//! | [`Backend::Auto`] (default) | probe the kernel once (cached in an atomic); use the syscalls if present, else `/proc` |
//! | [`Backend::Syscall`] | require the syscalls; [`Error::SyscallUnavailable`] if the kernel lacks them — never falls back |
//! | [`Backend::Procfs`] | always read `/proc`; the syscalls are not even probed |
//!
//! The probe issues only our own syscall numbers (pidmap = 1000, fdmap =
//! 1001 — see [`sys::NR`]) with an undefined flag bit: a patched kernel
//! answers `EINVAL`, an unpatched one `ENOSYS`, and a seccomp filter
//! usually `EPERM`; the latter two select `/proc` under `Auto`. The kernel
//! version is never consulted. [`KernelSupport::from_probe`] and
//! [`Backend::resolve`] are pure functions, so the decision is testable
//! without a patched kernel; [`Pidmap::detection`] says which backend is
//! in use and why.
//!
//! # Semantics (both backends)
//!
//! Every listing is **strictly ascending**, and the cursor is the id
//! itself: a chunk holds the ids `>= start`, and the next chunk starts at
//! `last + 1` ([`Pidmap::read_chunk`]). An id alive during the whole
//! enumeration is returned exactly once. A missing pid gives
//! [`Error::NoSuchProcess`] (`ESRCH`), another user's fds
//! [`Error::PermissionDenied`]. The `/proc` fallback sorts its output
//! (readdir order is not guaranteed), reads directories with raw
//! `getdents64` into one reused 64 KiB buffer, parses names in place and
//! allocates nothing per entry. Kernel threads are recognised by
//! `PF_KTHREAD` in the flags field of `/proc/PID/stat`.
//!
//! # Usage
//!
//! One-shot iterators, which batch internally:
//!
//! ```
//! use pidmap::Pid;
//!
//! let me = Pid::this_process();
//! let all: Vec<Pid> = pidmap::processes()?.collect::<Result<_, _>>()?;
//! assert!(all.contains(&me));
//! let threads = pidmap::threads(me)?.to_vec()?;
//! assert!(threads.contains(&me));
//! # Ok::<(), pidmap::Error>(())
//! ```
//!
//! A reusable handle that fills a caller-owned `Vec`, for monitors that
//! poll every second without allocating:
//!
//! ```
//! use pidmap::{Pidmap, Query};
//!
//! let mut pm = Pidmap::new()?;
//! let mut pids = Vec::with_capacity(4096);
//! for _ in 0..3 {
//!     pm.fill(Query::processes().without_kthreads(), &mut pids)?;
//!     // ... look at `pids` ...
//! }
//! println!("{} processes via {}", pids.len(), pm.detection());
//! # Ok::<(), pidmap::Error>(())
//! ```
//!
//! # Future work
//!
//! Queries are values ([`Query`], `#[non_exhaustive]` [`Listing`]) and the
//! handle owns its buffers, so a later bulk-info call (per-process
//! attributes for a whole listing, à la task_diag / `PIDFD_GET_INFO`) can
//! be added to [`Pidmap`] without breaking this API.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod backend;
pub mod error;
pub mod fallback;
pub mod iter;
pub mod sys;

use std::fmt;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use backend::{kernel_support, probe_kernel, ActiveBackend, Backend, Detection, KernelSupport};
pub use error::{Error, Result};
pub use fallback::{Fallback, ProcRoot};
pub use iter::{Fds, Pids};

/// A process or thread id, as seen from the caller's pid namespace.
///
/// `#[repr(transparent)]` over `i32`, so a `&mut [Pid]` is handed to the
/// kernel as a `&mut [i32]` without copying (via `bytemuck`).
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Pid(i32);

// SAFETY: `Pid` is `repr(transparent)` over `i32`, for which every bit
// pattern, including all zeroes, is valid.
unsafe impl bytemuck::Zeroable for Pid {}
// SAFETY: as above; `Pid` is `Copy`, has no padding and no invariants.
unsafe impl bytemuck::Pod for Pid {}

impl Pid {
    /// `pid == 0` in the ABI: the caller.
    pub const CALLER: Pid = Pid(0);

    /// Wrap a raw id.
    ///
    /// ```
    /// assert_eq!(pidmap::Pid::from_raw(1).as_raw(), 1);
    /// ```
    pub const fn from_raw(id: i32) -> Pid {
        Pid(id)
    }

    /// The raw id.
    pub const fn as_raw(self) -> i32 {
        self.0
    }

    /// The calling process's id (`getpid()`).
    ///
    /// ```
    /// assert_eq!(pidmap::Pid::this_process().as_raw() as u32, std::process::id());
    /// ```
    pub fn this_process() -> Pid {
        Pid(std::process::id() as i32)
    }
}

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl From<Pid> for i32 {
    fn from(p: Pid) -> i32 {
        p.0
    }
}

impl FromStr for Pid {
    type Err = Error;

    /// Parse a non-negative decimal pid.
    ///
    /// ```
    /// use pidmap::Pid;
    /// assert_eq!("42".parse::<Pid>().unwrap(), Pid::from_raw(42));
    /// assert!("-1".parse::<Pid>().is_err());
    /// assert!("abc".parse::<Pid>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Pid> {
        if !s.bytes().all(|b| b.is_ascii_digit()) || s.is_empty() {
            return Err(Error::InvalidArgument(
                "a pid is a non-negative decimal number",
            ));
        }
        s.parse::<i32>()
            .map(Pid)
            .map_err(|_| Error::InvalidArgument("pid out of range"))
    }
}

/// What to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Listing {
    /// Thread-group ids (processes) of the caller's pid namespace.
    Processes,
    /// Every task id of the namespace, threads included.
    AllTasks,
    /// The thread ids of a thread group (`Pid::CALLER`: ours).
    Threads(Pid),
    /// The children of a process (`Pid::CALLER`: ours).
    Children(Pid),
}

/// A listing plus modifiers.
///
/// ```
/// use pidmap::{Listing, Pid, Query};
/// let q = Query::processes().without_kthreads();
/// assert_eq!(q.listing, Listing::Processes);
/// assert!(q.ignore_kthreads);
/// assert_eq!(Query::threads(Pid::CALLER).listing, Listing::Threads(Pid::CALLER));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Query {
    /// What to list.
    pub listing: Listing,
    /// Leave kernel threads out (`PIDMAP_IGNORE_KTHREADS`).
    pub ignore_kthreads: bool,
}

impl Query {
    /// All processes.
    pub const fn processes() -> Query {
        Query::new(Listing::Processes)
    }
    /// All tasks (threads included).
    pub const fn all_tasks() -> Query {
        Query::new(Listing::AllTasks)
    }
    /// Threads of `pid`.
    pub const fn threads(pid: Pid) -> Query {
        Query::new(Listing::Threads(pid))
    }
    /// Children of `pid`.
    pub const fn children(pid: Pid) -> Query {
        Query::new(Listing::Children(pid))
    }
    /// A query for `listing` with no modifiers.
    pub const fn new(listing: Listing) -> Query {
        Query {
            listing,
            ignore_kthreads: false,
        }
    }
    /// Leave kernel threads out.
    pub const fn without_kthreads(mut self) -> Query {
        self.ignore_kthreads = true;
        self
    }

    fn pid_and_flags(self) -> Result<(i32, u32)> {
        let (pid, mode) = match self.listing {
            Listing::Processes => (0, sys::PIDMAP_PROC),
            Listing::AllTasks => (0, sys::PIDMAP_ALL_TASKS),
            Listing::Threads(p) => (p.0, sys::PIDMAP_TASKS),
            Listing::Children(p) => (p.0, sys::PIDMAP_CHILDREN),
        };
        if pid < 0 {
            return Err(Error::InvalidArgument("pid must not be negative"));
        }
        let k = if self.ignore_kthreads {
            sys::PIDMAP_IGNORE_KTHREADS
        } else {
            0
        };
        Ok((pid, mode | k))
    }

    fn pid(self) -> Pid {
        match self.listing {
            Listing::Threads(p) | Listing::Children(p) => p,
            _ => Pid(0),
        }
    }
}

impl From<Listing> for Query {
    fn from(l: Listing) -> Query {
        Query::new(l)
    }
}

/// An id type the kernel hands out as an `i32` ([`Pid`] or [`RawFd`]).
pub(crate) trait RawId: bytemuck::Pod + Ord + fmt::Debug {
    fn from_raw_id(id: i32) -> Self;
    fn raw_id(self) -> i32;
}

impl RawId for Pid {
    fn from_raw_id(id: i32) -> Self {
        Pid(id)
    }
    fn raw_id(self) -> i32 {
        self.0
    }
}

impl RawId for i32 {
    fn from_raw_id(id: i32) -> Self {
        id
    }
    fn raw_id(self) -> i32 {
        self
    }
}

/// Builder for [`Pidmap`].
///
/// ```
/// use pidmap::{Backend, Pidmap};
/// let pm = Pidmap::builder().backend(Backend::Procfs).proc_root("/proc").build()?;
/// assert_eq!(pm.active(), pidmap::ActiveBackend::Procfs);
/// # Ok::<(), pidmap::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    backend: Backend,
    root: PathBuf,
}

impl Builder {
    /// Choose the backend (default [`Backend::Auto`]).
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// Read a procfs mounted at `path` instead of `/proc`.
    pub fn proc_root(mut self, path: impl AsRef<Path>) -> Self {
        self.root = path.as_ref().to_path_buf();
        self
    }

    /// Detect (cached) and, for the /proc backend, open and check the root.
    pub fn build(self) -> Result<Pidmap> {
        let detection = self.backend.detect()?;
        let fallback = match detection.active {
            ActiveBackend::Procfs => Some(Fallback::new(ProcRoot::open(&self.root)?)),
            ActiveBackend::Syscall => None,
        };
        Ok(Pidmap {
            detection,
            fallback,
        })
    }
}

/// A reusable lister: the chosen backend plus its buffers.
///
/// The `fill*` methods reuse the caller's `Vec` and the handle's own
/// buffers, so a monitor polling every second allocates nothing once the
/// `Vec` is large enough.
#[derive(Debug, Clone)]
pub struct Pidmap {
    detection: Detection,
    fallback: Option<Fallback>,
}

impl Pidmap {
    /// [`Backend::Auto`] over `/proc`.
    pub fn new() -> Result<Pidmap> {
        Pidmap::builder().build()
    }

    /// A given backend over `/proc`.
    ///
    /// ```
    /// use pidmap::{Backend, Error, Pidmap};
    /// match Pidmap::with_backend(Backend::Syscall) {
    ///     Ok(pm) => println!("syscalls available: {}", pm.detection()),
    ///     Err(Error::SyscallUnavailable(why)) => println!("no syscalls: {why}"),
    ///     Err(e) => panic!("{e}"),
    /// }
    /// ```
    pub fn with_backend(backend: Backend) -> Result<Pidmap> {
        Pidmap::builder().backend(backend).build()
    }

    /// Start building a handle.
    pub fn builder() -> Builder {
        Builder {
            backend: Backend::Auto,
            root: PathBuf::from("/proc"),
        }
    }

    /// Which backend is in use, and why.
    pub fn detection(&self) -> Detection {
        self.detection
    }

    /// The backend in use.
    pub fn active(&self) -> ActiveBackend {
        self.detection.active
    }

    /// The proc root, when the /proc backend is in use.
    pub fn proc_root(&self) -> Option<&Path> {
        self.fallback.as_ref().map(|f| f.root().path())
    }

    /// Fill `out` (cleared first) with the whole listing, ascending.
    ///
    /// ```
    /// use pidmap::{Pid, Pidmap, Query};
    /// let mut pm = Pidmap::new()?;
    /// let mut v = Vec::new();
    /// pm.fill(Query::threads(Pid::CALLER), &mut v)?;
    /// assert!(v.contains(&Pid::this_process()));
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn fill(&mut self, query: Query, out: &mut Vec<Pid>) -> Result<()> {
        self.fill_raw(Enumeration::Ids(query), out)
    }

    /// Fill `out` (cleared first) with the open fds of `pid`, ascending.
    ///
    /// ```
    /// use pidmap::{Pid, Pidmap};
    /// let mut pm = Pidmap::new()?;
    /// let mut fds = Vec::new();
    /// pm.fill_fds(Pid::CALLER, &mut fds)?;
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn fill_fds(&mut self, pid: Pid, out: &mut Vec<RawFd>) -> Result<()> {
        self.fill_raw(Enumeration::Fds(pid), out)
    }

    /// One chunk with the syscall's cursor semantics: writes the ids
    /// `>= start`, ascending, at most `buf.len()`, and returns how many;
    /// 0 means the end. Resume at `last + 1`.
    ///
    /// With the /proc backend each call reads the whole directory, so
    /// prefer [`fill`](Pidmap::fill) or [`iter`](Pidmap::iter) there.
    ///
    /// ```
    /// use pidmap::{Pid, Pidmap, Query};
    /// let mut pm = Pidmap::new()?;
    /// let (mut all, mut buf, mut start) = (vec![], [Pid::default(); 3], 0);
    /// loop {
    ///     let n = pm.read_chunk(Query::threads(Pid::CALLER), start, &mut buf)?;
    ///     if n == 0 { break; }
    ///     all.extend_from_slice(&buf[..n]);
    ///     start = buf[n - 1].as_raw() + 1;
    /// }
    /// assert!(all.contains(&Pid::this_process()));
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn read_chunk(&mut self, query: Query, start: i32, buf: &mut [Pid]) -> Result<usize> {
        self.chunk_raw(Enumeration::Ids(query), start, buf)
    }

    /// [`read_chunk`](Pidmap::read_chunk) for the fds of `pid`.
    pub fn read_fd_chunk(&mut self, pid: Pid, start: i32, buf: &mut [RawFd]) -> Result<usize> {
        self.chunk_raw(Enumeration::Fds(pid), start, buf)
    }

    /// An iterator over the listing; it batches internally (256 ids per
    /// syscall, or one sorted /proc snapshot).
    ///
    /// ```
    /// use pidmap::{Pidmap, Query};
    /// let pm = Pidmap::new()?;
    /// let n = pm.iter(Query::all_tasks()).filter_map(Result::ok).count();
    /// assert!(n >= 1);
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn iter(&self, query: Query) -> Pids {
        Pids::new(self.clone(), query)
    }

    /// An iterator over the fds of `pid`.
    ///
    /// ```
    /// use pidmap::{Pid, Pidmap};
    /// let pm = Pidmap::new()?;
    /// for fd in pm.fds(Pid::CALLER) {
    ///     assert!(fd? >= 0);
    /// }
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn fds(&self, pid: Pid) -> Fds {
        Fds::new(self.clone(), pid)
    }

    fn fallback(&mut self) -> Result<&mut Fallback> {
        if self.fallback.is_none() {
            self.fallback = Some(Fallback::new(ProcRoot::open("/proc")?));
        }
        Ok(self.fallback.as_mut().expect("just set"))
    }

    /// One chunk of `what` into `buf`, with the syscall's cursor semantics.
    pub(crate) fn chunk_raw<T: RawId>(
        &mut self,
        what: Enumeration,
        start: i32,
        buf: &mut [T],
    ) -> Result<usize> {
        let (pid, flags) = what.raw_args()?;
        if start < 0 {
            return Err(Error::InvalidArgument("start must not be negative"));
        }
        match self.detection.active {
            ActiveBackend::Syscall => {
                let raw: &mut [i32] = bytemuck::cast_slice_mut(buf);
                let len = raw.len();
                // SAFETY: `raw` is valid for writes of `len` i32s.
                let n = unsafe { what.call(pid, raw.as_mut_ptr(), len, start, flags) }?;
                let n = abi_count(n, len)?;
                check_chunk(&raw[..n], start)?;
                Ok(n)
            }
            ActiveBackend::Procfs => {
                let mut v = Vec::new();
                what.read_proc(self.fallback()?, start, &mut v)?;
                let n = v.len().min(buf.len());
                buf[..n].copy_from_slice(&v[..n]);
                Ok(n)
            }
        }
    }

    /// The whole of `what` into `out` (cleared first), ascending.
    pub(crate) fn fill_raw<T: RawId>(&mut self, what: Enumeration, out: &mut Vec<T>) -> Result<()> {
        let (pid, flags) = what.raw_args()?;
        match self.detection.active {
            ActiveBackend::Syscall => fill_by_chunks(out, |start, ptr, count| {
                // SAFETY: `fill_by_chunks` hands us `count` writable slots.
                unsafe { what.call(pid, ptr, count, start, flags) }
            }),
            ActiveBackend::Procfs => what.read_proc(self.fallback()?, 0, out),
        }
    }
}

/// What one enumeration lists: the ids of a [`Query`] (pidmap(2)) or the
/// fds of a process (fdmap(2)). Both share the cursor protocol, so every
/// entry point above works on either.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Enumeration {
    Ids(Query),
    Fds(Pid),
}

impl Enumeration {
    /// The raw call's pid and flags, checked.
    fn raw_args(self) -> Result<(i32, u32)> {
        match self {
            Enumeration::Ids(q) => q.pid_and_flags(),
            Enumeration::Fds(pid) if pid.0 < 0 => {
                Err(Error::InvalidArgument("pid must not be negative"))
            }
            Enumeration::Fds(pid) => Ok((pid.0, 0)),
        }
    }

    /// The syscall, with its errno turned into this crate's error.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for writes of `count` `i32`s.
    unsafe fn call(
        self,
        pid: i32,
        ptr: *mut i32,
        count: usize,
        start: i32,
        flags: u32,
    ) -> Result<usize> {
        // SAFETY: forwarded from the caller's contract.
        let (result, target, name) = unsafe {
            match self {
                Enumeration::Ids(q) => (
                    sys::pidmap_raw(pid, ptr, count, start, flags),
                    q.pid(),
                    "pidmap(2)",
                ),
                Enumeration::Fds(target) => (
                    sys::fdmap_raw(pid, ptr, count, start, flags),
                    target,
                    "fdmap(2)",
                ),
            }
        };
        result.map_err(|e| syscall_error(e, target, name))
    }

    /// The same listing read from /proc, ids `>= start`.
    fn read_proc<T: RawId>(
        self,
        fallback: &mut Fallback,
        start: i32,
        out: &mut Vec<T>,
    ) -> Result<()> {
        match self {
            Enumeration::Ids(q) => fallback.list(q, start, out),
            Enumeration::Fds(pid) => fallback.list_fds(pid, start, out),
        }
    }
}

fn syscall_error(errno: i32, pid: Pid, what: &'static str) -> Error {
    if errno == libc::ENOSYS {
        Error::SyscallUnavailable(KernelSupport::Missing)
    } else {
        Error::from_errno(errno, pid, what)
    }
}

/// Drive a cursor-style call until it returns 0, letting it write straight
/// into the spare capacity of `out` (no zero-filling; grown geometrically
/// only when full). `call(start, ptr, count)` must write at most `count`
/// initialised entries at `ptr` and return how many.
fn fill_by_chunks<T: RawId>(
    out: &mut Vec<T>,
    mut call: impl FnMut(i32, *mut i32, usize) -> Result<usize>,
) -> Result<()> {
    const { assert!(std::mem::size_of::<T>() == 4 && std::mem::align_of::<T>() == 4) };
    out.clear();
    let mut start = 0;
    loop {
        let len = out.len();
        if out.capacity() - len < 64 {
            out.reserve(len.max(1024));
        }
        let spare = out.spare_capacity_mut();
        let count = spare.len();
        // `T` is a 4-byte Pod (checked above), so the spare capacity is a
        // valid destination for `count` i32s.
        let ptr = spare.as_mut_ptr().cast::<i32>();
        let n = abi_count(call(start, ptr, count)?, count)?;
        // SAFETY: `call` initialised the first `n` entries of the spare
        // capacity, and `n <= count`.
        unsafe { out.set_len(len + n) };
        if let Err(e) = check_chunk(&out[len..], start) {
            out.truncate(len);
            return Err(e);
        }
        match out.last() {
            Some(last) if n > 0 => {
                let l = last.raw_id();
                if l == i32::MAX {
                    return Ok(());
                }
                start = l + 1;
            }
            _ => return Ok(()),
        }
    }
}

fn abi_violation(msg: String) -> Error {
    Error::io(
        "the kernel broke the pidmap ABI",
        std::io::Error::new(std::io::ErrorKind::InvalidData, msg),
    )
}

/// The ABI promises a return value `<= count`. A larger one (for example
/// an errno that went through an unsigned type) is reported, never clamped.
fn abi_count(n: usize, count: usize) -> Result<usize> {
    if n <= count.min(libc::c_uint::MAX as usize) {
        Ok(n)
    } else {
        Err(abi_violation(format!(
            "returned {n} (as i32: {}) for a buffer of {count}",
            n as i32
        )))
    }
}

/// The ABI promises strictly ascending ids `>= start`; a kernel that
/// breaks it must not make us loop or grow without bound.
fn check_chunk<T: RawId>(chunk: &[T], start: i32) -> Result<()> {
    let mut prev = start.checked_sub(1);
    for id in chunk {
        let id = id.raw_id();
        if prev.is_some_and(|p| id <= p) || id < start {
            return Err(abi_violation(format!(
                "id {id} is not ascending from cursor {start}"
            )));
        }
        prev = Some(id);
    }
    Ok(())
}

fn default_pm() -> Result<Pidmap> {
    Pidmap::new()
}

/// All processes (thread-group ids), ascending, with [`Backend::Auto`].
///
/// ```
/// let pids = pidmap::processes()?.to_vec()?;
/// assert!(pids.contains(&pidmap::Pid::this_process()));
/// # Ok::<(), pidmap::Error>(())
/// ```
pub fn processes() -> Result<Pids> {
    Ok(default_pm()?.iter(Query::processes()))
}

/// All processes except kernel threads.
///
/// ```
/// let user = pidmap::processes_without_kthreads()?.to_vec()?;
/// assert!(user.contains(&pidmap::Pid::this_process()));
/// # Ok::<(), pidmap::Error>(())
/// ```
pub fn processes_without_kthreads() -> Result<Pids> {
    Ok(default_pm()?.iter(Query::processes().without_kthreads()))
}

/// Every task id of the namespace, threads included.
///
/// ```
/// let tasks = pidmap::all_tasks()?.to_vec()?;
/// assert!(tasks.contains(&pidmap::Pid::this_process()));
/// # Ok::<(), pidmap::Error>(())
/// ```
pub fn all_tasks() -> Result<Pids> {
    Ok(default_pm()?.iter(Query::all_tasks()))
}

/// The thread ids of `pid`.
///
/// ```
/// use pidmap::Pid;
/// let tids = pidmap::threads(Pid::this_process())?.to_vec()?;
/// assert!(tids.contains(&Pid::this_process()));
/// # Ok::<(), pidmap::Error>(())
/// ```
pub fn threads(pid: Pid) -> Result<Pids> {
    Ok(default_pm()?.iter(Query::threads(pid)))
}

/// The children of `pid`.
///
/// ```
/// let kids = pidmap::children(pidmap::Pid::this_process())?.to_vec()?;
/// # let _ = kids;
/// # Ok::<(), pidmap::Error>(())
/// ```
pub fn children(pid: Pid) -> Result<Pids> {
    Ok(default_pm()?.iter(Query::children(pid)))
}

/// The open fds of `pid`.
///
/// ```
/// use pidmap::{Error, Pid};
/// match pidmap::fds(Pid::from_raw(1))?.to_vec() {
///     Ok(fds) => println!("pid 1 has {} fds", fds.len()),
///     Err(Error::PermissionDenied(_)) => println!("not allowed"),
///     Err(e) => return Err(e),
/// }
/// # Ok::<(), pidmap::Error>(())
/// ```
pub fn fds(pid: Pid) -> Result<Fds> {
    Ok(default_pm()?.fds(pid))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake kernel with the ABI's cursor semantics over `ids`, returning
    /// at most `cap` per call.
    fn fake(ids: &[i32], cap: usize) -> impl FnMut(i32, *mut i32, usize) -> Result<usize> + '_ {
        move |start, ptr, count| {
            let from = ids.partition_point(|&id| id < start);
            let n = (ids.len() - from).min(count).min(cap);
            // SAFETY: `ptr` is writable for `count >= n` entries.
            unsafe { std::ptr::copy_nonoverlapping(ids[from..].as_ptr(), ptr, n) };
            Ok(n)
        }
    }

    #[test]
    fn fill_by_chunks_follows_the_cursor() {
        let ids: Vec<i32> = (1..5000).map(|i| i * 3).chain([i32::MAX]).collect();
        for cap in [1, 3, 64, 1000, 100_000] {
            let mut out: Vec<i32> = Vec::new();
            fill_by_chunks(&mut out, fake(&ids, cap)).unwrap();
            assert_eq!(out, ids, "cap {cap}");
            // Reuse without reallocation once large enough.
            let ptr = out.as_ptr();
            fill_by_chunks(&mut out, fake(&ids, cap)).unwrap();
            assert_eq!(out.as_ptr(), ptr);
        }
        let mut out = vec![7];
        fill_by_chunks(&mut out, fake(&[], 10)).unwrap();
        assert!(out.is_empty());
        let mut out = Vec::new();
        let r = fill_by_chunks::<i32>(&mut out, |_, _, _| Err(Error::NoSuchProcess(Pid(9))));
        assert!(matches!(r, Err(Error::NoSuchProcess(Pid(9)))));
        assert!(out.is_empty());
    }

    #[test]
    fn a_kernel_breaking_the_abi_is_an_error_not_a_loop() {
        // Ignores the cursor: always returns the same ids.
        let mut out: Vec<i32> = Vec::new();
        let r = fill_by_chunks(&mut out, |_, ptr, count| {
            let n = count.min(2);
            // SAFETY: `ptr` is writable for `count >= n` entries.
            unsafe { std::ptr::copy_nonoverlapping([3, 4].as_ptr(), ptr, n) };
            Ok(n)
        });
        assert!(matches!(r, Err(Error::Io { .. })), "{r:?}");
        // (unsigned)-EACCES, as a kernel with a `total ?: -errno` bug returns.
        let mut out: Vec<i32> = Vec::new();
        let r = fill_by_chunks(&mut out, |_, _, _| Ok(4294967283));
        assert!(matches!(r, Err(Error::Io { .. })), "{r:?}");
        assert!(format!("{}", r.unwrap_err()).contains("-13"));
        assert!(out.is_empty());
        assert!(check_chunk(&[5, 5], 0).is_err());
        assert!(check_chunk(&[4, 5], 5).is_err());
        assert!(check_chunk(&[5, 9], 5).is_ok());
        assert!(check_chunk::<i32>(&[], 0).is_ok());
    }

    #[test]
    fn pid_views_as_i32() {
        let mut v = [Pid(1), Pid(2)];
        let raw: &mut [i32] = bytemuck::cast_slice_mut(&mut v);
        raw[1] = 5;
        assert_eq!(v, [Pid(1), Pid(5)]);
    }

    #[test]
    fn query_flags() {
        assert_eq!(
            Query::processes()
                .without_kthreads()
                .pid_and_flags()
                .unwrap(),
            (0, sys::PIDMAP_PROC | sys::PIDMAP_IGNORE_KTHREADS)
        );
        assert_eq!(
            Query::children(Pid(5)).pid_and_flags().unwrap(),
            (5, sys::PIDMAP_CHILDREN)
        );
        assert!(Query::threads(Pid(-2)).pid_and_flags().is_err());
    }
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

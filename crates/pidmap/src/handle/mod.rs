//! [`Pidmap`], the reusable lister, and its [`Builder`].

mod group_fields;
mod group_records;
mod record_chunks;
mod record_sink;
mod records;

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use self::group_fields::{GroupRecord, TaskShape};
use crate::backend::{ActiveBackend, Backend, Detection};
use crate::error::{Error, Result};
#[cfg(feature = "fallback")]
use crate::fallback::Fallback;
use crate::info::TaskInfo;
use crate::kernel_support::{probe_kernel, KernelSupport};
use crate::pid::Pid;
use crate::proc_root::ProcRoot;
use crate::query::{Enumeration, Query};
use crate::raw_id::RawId;
use crate::record::TaskRecord;
use crate::sys;
use crate::target::{Target, TargetFd};

/// The default proc root.
const PROC: &str = "/proc";

/// Builder for [`Pidmap`].
///
/// ```
/// use pidmap::{ActiveBackend, Backend, Pidmap};
/// let pm = Pidmap::builder().backend(Backend::Procfs).proc_root("/proc").build()?;
/// assert_eq!(pm.active(), ActiveBackend::Procfs);
/// # Ok::<(), pidmap::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Builder {
    backend: Option<Backend>,
    proc_root: Option<PathBuf>,
    keep_files: bool,
}

impl Builder {
    /// Choose the backend. Without this call (or
    /// [`backend_from_env`](Builder::backend_from_env)) the handle uses
    /// [`Backend::Auto`]; the environment is never read implicitly.
    #[must_use]
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = Some(backend);
        self
    }

    /// The procfs mount to use instead of `/proc`: read by the fallback,
    /// and passed to pidmap(2) as its view (`procfs_fd`: that mount's
    /// pid namespace, `hidepid=` and `gid=`). An explicit root that is not
    /// a procfs is an error with either backend; the default `/proc`
    /// missing is an error only for the fallback (pidmap(2) then uses the
    /// kernel's fail-closed default view).
    #[must_use]
    pub fn proc_root(mut self, path: impl AsRef<Path>) -> Self {
        self.proc_root = Some(path.as_ref().to_path_buf());
        self
    }

    /// Let the fallback keep, from one full refresh of the records (every
    /// process or every task) to the next, each task's `stat` and `statm`
    /// and each process's `task` directory open, as the sysinfo crate
    /// does: the next refresh reads them again with one `pread` instead
    /// of a path walk, an open and a close. Off by default.
    ///
    /// The cost is file descriptors and kernel memory: the handles of a
    /// process keep a file only while its fd number and their count of
    /// kept files stay below the soft `RLIMIT_NOFILE` less 1,024 (less
    /// half the limit, below 2,048), about 5 KiB of kernel memory each;
    /// past that a file is read and closed. A file fails once
    /// its task is gone, so a reused pid is never read through it; but
    /// /proc checks access at open, so a task that a fresh open would
    /// now be denied (its owner changed under `hidepid=`) goes on showing
    /// through a file kept from before. If the fd table fills up, every
    /// kept file is closed and the open tried once more. A monitor that
    /// refreshes every task in a loop (`pidmap top`) gains from it; a
    /// library inside a program with its own use for fds may not want it.
    #[must_use]
    pub fn keep_files(mut self, keep: bool) -> Self {
        self.keep_files = keep;
        self
    }

    /// Choose the backend [`BACKEND_ENV`](crate::BACKEND_ENV) names, if it
    /// is set; else leave the choice as it is. Opt-in: a program calls it
    /// to let its users pick the backend (`PIDMAP_BACKEND=procfs` under a
    /// sandbox that kills on unknown system calls).
    ///
    /// An unset or empty variable changes nothing; a value that is not a
    /// backend is an error, never a silent probe.
    ///
    /// # Errors
    ///
    /// As [`Backend::from_env`]: [`Error::InvalidArgument`] for a value that
    /// is not a backend.
    ///
    /// ```
    /// use pidmap::Pidmap;
    /// let pm = Pidmap::builder().backend_from_env()?.build()?;
    /// # let _ = pm;
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn backend_from_env(mut self) -> Result<Self> {
        if let Some(b) = Backend::from_env()? {
            self.backend = Some(b);
        }
        Ok(self)
    }

    /// Detect the backend (probed once per process unless it is
    /// [`Backend::Procfs`]) and open the proc root.
    ///
    /// # Errors
    ///
    /// [`Error::SyscallUnavailable`] for [`Backend::Syscall`] without the
    /// calls (see [`Backend::detect`]), and for any backend that would need
    /// /proc in a build without the `fallback` feature;
    /// [`Error::FallbackNotBuilt`] for [`Backend::Procfs`] in such a build;
    /// [`Error::ProcNotMounted`] when the proc root is not a procfs mount of
    /// this pid namespace (the syscall backend does without the default
    /// `/proc`, not without one set with [`proc_root`](Builder::proc_root));
    /// [`Error::Io`] when opening it fails otherwise (`EMFILE`, ...).
    pub fn build(self) -> Result<Pidmap> {
        let backend = self.backend.unwrap_or_default();
        if cfg!(not(feature = "fallback")) && backend == Backend::Procfs {
            return Err(Error::FallbackNotBuilt);
        }
        let detection = backend.detect()?;
        if cfg!(not(feature = "fallback")) && detection.active == ActiveBackend::Procfs {
            return Err(Error::SyscallUnavailable(
                detection.support.unwrap_or(KernelSupport::Missing),
            ));
        }
        let explicit = self.proc_root.is_some();
        let path = self.proc_root.unwrap_or_else(|| PathBuf::from(PROC));
        let root = match (detection.active, ProcRoot::open(&path)) {
            (_, Ok(root)) => Some(root),
            (ActiveBackend::Syscall, Err(Error::ProcNotMounted(_))) if !explicit => None,
            (_, Err(e)) => return Err(e),
        };
        let pm = Pidmap {
            detection,
            root,
            path,
            records: Vec::new(),
            handed: Vec::new(),
            handed_from_procfs: Vec::new(),
            groups: Vec::new(),
            task_shape: TaskShape::default(),
            #[cfg(feature = "fallback")]
            keep_files: self.keep_files,
            #[cfg(feature = "fallback")]
            fallback: None,
        };
        if pm.detection.active == ActiveBackend::Procfs {
            pm.checked_root()?;
        }
        Ok(pm)
    }
}

/// A reusable lister: the chosen backend, the procfs view and the
/// fallback's buffers.
///
/// The `fill*` methods reuse the caller's `Vec` and the handle's buffers,
/// so a monitor polling every second allocates nothing once the `Vec` is
/// large enough.
#[derive(Debug)]
pub struct Pidmap {
    detection: Detection,
    root: Option<ProcRoot>,
    path: PathBuf,
    /// The syscall's task records, reused (allocated on first use).
    records: Vec<sys::PidmapInfo>,
    /// The records [`Pidmap::records`] lends: initialised as it grows,
    /// never shrunk, so that a call writes into it with no clearing.
    handed: Vec<TaskRecord>,
    /// The fallback's records of [`Pidmap::records`] before they are put
    /// in the kernel's units, reused.
    handed_from_procfs: Vec<TaskInfo>,
    /// The per-process fields of a listing of all tasks, reused.
    groups: Vec<GroupRecord>,
    /// The last listing of all tasks: whether per-process records pay.
    task_shape: TaskShape,
    /// [`Builder::keep_files`] (only the /proc fallback keeps files).
    #[cfg(feature = "fallback")]
    keep_files: bool,
    #[cfg(feature = "fallback")]
    fallback: Option<Fallback>,
}

impl Pidmap {
    /// The default handle: [`Backend::Auto`] over `/proc`. It does not read
    /// [`BACKEND_ENV`](crate::BACKEND_ENV); see
    /// [`Builder::backend_from_env`].
    ///
    /// # Errors
    ///
    /// As [`Builder::build`].
    pub fn new() -> Result<Pidmap> {
        Pidmap::builder().build()
    }

    /// The handle for a monitor that refreshes every task in a loop (a
    /// `top`, an exporter): [`Backend::Auto`] over `/proc`, with
    /// [`Builder::keep_files`] on, so that the /proc fallback reads each
    /// task's kept `stat` and `statm` again with one `pread` per refresh
    /// (BENCHMARKS.md times the refresh with and without kept files). Its
    /// fd budget: the files kept by
    /// all handles of the process stay within half the soft
    /// `RLIMIT_NOFILE` less 64, and if the fd table fills up anyway they
    /// are all closed and the open is tried again. Equal to
    /// `Pidmap::builder().keep_files(true).build()`; use the builder to
    /// choose the backend or the proc root too.
    ///
    /// # Errors
    ///
    /// As [`Builder::build`].
    ///
    /// ```
    /// use pidmap::{InfoFields, Pidmap, Query};
    /// let mut pm = Pidmap::monitor()?;
    /// let mut records = Vec::new();
    /// for _ in 0..2 {
    ///     pm.fill_info(Query::processes(), InfoFields::CPU_TIME, &mut records)?;
    /// }
    /// assert!(!records.is_empty());
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn monitor() -> Result<Pidmap> {
        Pidmap::builder().keep_files(true).build()
    }

    /// A given backend over `/proc`.
    ///
    /// # Errors
    ///
    /// As [`Builder::build`].
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
    #[must_use]
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Which backend is in use, and why.
    #[must_use]
    pub fn detection(&self) -> Detection {
        self.detection
    }

    /// The backend in use.
    #[must_use]
    pub fn active(&self) -> ActiveBackend {
        self.detection.active
    }

    /// The procfs mount in use: read by the fallback, or the view passed
    /// to pidmap(2). `None` when the syscall backend runs without one
    /// (`/proc` is not mounted, as in some containers).
    pub fn proc_root(&self) -> Option<&Path> {
        self.root.as_ref().map(ProcRoot::path)
    }

    /// Fill `out` (cleared first) with the whole listing, ascending.
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchProcess`] for a target that does not exist (or has
    /// exited), [`Error::PermissionDenied`] for one this caller may not list,
    /// [`Error::InvalidArgument`] for a target that is not a process, and
    /// [`Error::Io`] for any other error the listing met, its errno kept: a
    /// listing that meets an error fails, it never comes back shorter.
    ///
    /// ```
    /// use pidmap::{Pid, Pidmap, Query, Target};
    /// let mut pm = Pidmap::new()?;
    /// let mut v = Vec::new();
    /// pm.fill(Query::threads(Target::Caller), &mut v)?;
    /// assert!(v.contains(&Pid::this_thread()));
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn fill(&mut self, query: Query<'_>, out: &mut Vec<Pid>) -> Result<()> {
        self.fill_raw(Enumeration::Ids(query), out)
    }

    /// Fill `out` (cleared first) with the open fd numbers of `target`,
    /// ascending. The numbers are in the target's fd table, not ours.
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchProcess`] for a target that does not exist (or has
    /// exited), [`Error::PermissionDenied`] for one this caller may not list,
    /// [`Error::InvalidArgument`] for a target that is not a process, and
    /// [`Error::Io`] for any other error the listing met, its errno kept: a
    /// listing that meets an error fails, it never comes back shorter.
    ///
    /// ```
    /// use pidmap::{Pidmap, Target};
    /// let mut pm = Pidmap::new()?;
    /// let mut fds = Vec::new();
    /// pm.fill_fds(Target::Caller, &mut fds)?;
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn fill_fds<'fd>(
        &mut self,
        target: impl Into<Target<'fd>>,
        out: &mut Vec<i32>,
    ) -> Result<()> {
        self.fill_raw(Enumeration::Fds(target.into()), out)
    }

    /// One chunk with the syscall's cursor semantics: writes the ids
    /// `>= start`, ascending, at most `buf.len()`, and returns how many;
    /// 0 means the end. Resume at `last + 1`.
    ///
    /// With the /proc backend each call reads the whole directory, so
    /// prefer [`fill`](Pidmap::fill) or [`iter`](Pidmap::iter) there.
    ///
    /// # Errors
    ///
    /// As [`fill`](Pidmap::fill), and [`Error::InvalidArgument`] for a
    /// negative `start`.
    ///
    /// ```
    /// use pidmap::{Pid, Pidmap, Query, Target};
    /// let mut pm = Pidmap::new()?;
    /// let (mut all, mut buf, mut start) = (vec![], [Pid::from_raw(0); 3], 0);
    /// loop {
    ///     let n = pm.read_chunk(Query::threads(Target::Caller), start, &mut buf)?;
    ///     if n == 0 { break; }
    ///     all.extend_from_slice(&buf[..n]);
    ///     start = buf[n - 1].as_raw() + 1;
    /// }
    /// assert!(all.contains(&Pid::this_process()));
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn read_chunk(&mut self, query: Query<'_>, start: i32, buf: &mut [Pid]) -> Result<usize> {
        self.chunk_raw(Enumeration::Ids(query), start, buf)
    }

    /// [`read_chunk`](Pidmap::read_chunk) for the fds of `target`.
    ///
    /// # Errors
    ///
    /// As [`fill_fds`](Pidmap::fill_fds), and [`Error::InvalidArgument`] for
    /// a negative `start`.
    pub fn read_fd_chunk<'fd>(
        &mut self,
        target: impl Into<Target<'fd>>,
        start: i32,
        buf: &mut [i32],
    ) -> Result<usize> {
        self.chunk_raw(Enumeration::Fds(target.into()), start, buf)
    }

    /// The proc root, checked usable for the fallback.
    fn checked_root(&self) -> Result<&ProcRoot> {
        let root = self
            .root
            .as_ref()
            .ok_or_else(|| Error::ProcNotMounted(self.path.clone()))?;
        #[cfg(feature = "fallback")]
        root.check_self()?;
        Ok(root)
    }

    /// The procfs view of a request, its `procfs_fd`: the proc root's fd
    /// (opened `O_RDONLY | O_DIRECTORY`, never `O_PATH`, which the kernel
    /// refuses, and never 0), or 0 for the kernel's default view.
    fn view(&self) -> u32 {
        self.root
            .as_ref()
            .and_then(|root| u32::try_from(root.fd().as_raw_fd()).ok())
            .unwrap_or(0)
    }

    /// The pidfd argument for `what`'s target: opened here for a pid, once
    /// per listing; 0 for the untargeted listings.
    pub(crate) fn target_fd(what: Enumeration<'_>) -> Result<TargetFd<'_>> {
        match what {
            Enumeration::Ids(q) if !Enumeration::targeted(q) => Ok(TargetFd::Raw(0)),
            Enumeration::Ids(q) => q.target().pidfd(false),
            Enumeration::Fds(t) => t.pidfd(true),
        }
    }

    /// The pidmap(2)/pidmap_info(2) request for `q` after `last_id`, with
    /// this handle's procfs view and the target's pidfd.
    fn pidmap_req(&self, q: Query<'_>, pidfd: i32, last_id: u64) -> Result<sys::PidmapReq> {
        let (scope, filter) = Enumeration::pidmap_args(q)?;
        Ok(sys::PidmapReq {
            size: sys::req_size::<sys::PidmapReq>(),
            scope,
            last_id,
            pidfd,
            procfs_fd: self.view(),
            filter,
            ..sys::PidmapReq::default()
        })
    }

    /// One syscall from the inclusive cursor `start`: `Ok(n)`, or
    /// `Err(errno)`. pidmap(2)'s cursor is the last id returned, so ids
    /// from `start` are those after `start - 1` (0: from the start; no id
    /// is 0); fdmap(2)'s is the first fd, inclusive.
    fn syscall(
        &self,
        what: Enumeration<'_>,
        pidfd: i32,
        start: i32,
        buf: &mut [i32],
    ) -> Result<Result<u64, i32>> {
        let start = u32::try_from(start)
            .map_err(|_| Error::InvalidArgument("start must not be negative"))?;
        Ok(match what {
            Enumeration::Ids(q) => {
                let req = self.pidmap_req(q, pidfd, last_id(start))?;
                sys::list_ids(&req, bytemuck::cast_slice_mut(buf))
            }
            Enumeration::Fds(_) => {
                let req = sys::FdmapReq {
                    size: sys::req_size::<sys::FdmapReq>(),
                    pidfd,
                    first_fd: start,
                    procfs_fd: self.view(),
                    ..sys::FdmapReq::default()
                };
                sys::list_fds(&req, buf)
            }
        })
    }

    /// An errno from a real call: `ENOSYS`, and `EPERM` from a sandbox (a
    /// fresh probe no longer says "available"), switch an [`Backend::Auto`]
    /// handle to /proc (`Ok(true)`: retry there) and are
    /// [`Error::SyscallUnavailable`] for the others. Any other errno is the
    /// listing's own error.
    fn after_errno(&mut self, what: Enumeration<'_>, errno: i32) -> Result<bool> {
        if matches!(errno, libc::ENOSYS | libc::EPERM) {
            // ENOSYS: only a filter says it for a call the probe found.
            // EPERM: a filter, if a fresh probe no longer finds the calls;
            // else the listing's own EPERM (fds, hidepid=noaccess).
            let now = probe_kernel();
            if errno == libc::ENOSYS || !now.is_available() {
                let support = if now.is_available() {
                    KernelSupport::Missing
                } else {
                    now
                };
                if self.detection.requested != Backend::Auto || cfg!(not(feature = "fallback")) {
                    return Err(Error::SyscallUnavailable(support));
                }
                self.detection = Detection {
                    requested: Backend::Auto,
                    active: ActiveBackend::Procfs,
                    support: Some(support),
                    switched_after_call: true,
                };
                self.checked_root()?;
                return Ok(true);
            }
        }
        Err(syscall_error(what, errno))
    }

    /// One chunk of `what` into `buf`, with the syscall's cursor semantics.
    pub(crate) fn chunk_raw<T: RawId>(
        &mut self,
        what: Enumeration<'_>,
        start: i32,
        buf: &mut [T],
    ) -> Result<usize> {
        self.chunk_raw_at(what, None, start, buf)
    }

    /// [`chunk_raw`](Pidmap::chunk_raw) with the target's pidfd argument
    /// already resolved ([`Pidmap::target_fd`]), as an iterator keeps it
    /// from one chunk to the next; `None`: resolved for this call.
    pub(crate) fn chunk_raw_at<T: RawId>(
        &mut self,
        what: Enumeration<'_>,
        target: Option<&TargetFd<'_>>,
        start: i32,
        buf: &mut [T],
    ) -> Result<usize> {
        what.validate()?;
        if start < 0 {
            return Err(Error::InvalidArgument("start must not be negative"));
        }
        if self.detection.active == ActiveBackend::Syscall {
            let opened;
            let target = match target {
                Some(t) => t,
                None => {
                    opened = Pidmap::target_fd(what)?;
                    &opened
                }
            };
            let raw: &mut [i32] = bytemuck::cast_slice_mut(buf);
            match self.syscall(what, target.raw(), start, raw)? {
                Ok(n) => {
                    let n = abi_count(n, raw.len())?;
                    check_chunk(&raw[..n], start)?;
                    return Ok(n);
                }
                Err(errno) => {
                    self.after_errno(what, errno)?;
                }
            }
        }
        let mut v: Vec<T> = Vec::new();
        self.procfs(what, start, &mut v)?;
        let n = v.len().min(buf.len());
        buf[..n].copy_from_slice(&v[..n]);
        Ok(n)
    }

    /// The whole of `what` into `out` (cleared first), ascending.
    pub(crate) fn fill_raw<T: RawId>(
        &mut self,
        what: Enumeration<'_>,
        out: &mut Vec<T>,
    ) -> Result<()> {
        what.validate()?;
        if self.detection.active == ActiveBackend::Syscall {
            // One pidfd for the whole listing: every call names the same
            // process, even if the pid is reused meanwhile.
            let target = Pidmap::target_fd(what)?;
            let pidfd = target.raw();
            let mut failed = None;
            let r = fill_by_chunks(out, |start, buf| {
                match self.syscall(what, pidfd, start, buf)? {
                    Ok(n) => Ok(n),
                    Err(errno) => {
                        failed = Some(errno);
                        Err(Error::AbiViolation(String::new())) // replaced below
                    }
                }
            });
            drop(target);
            match (r, failed) {
                (Ok(()), _) => return Ok(()),
                (Err(_), Some(errno)) => {
                    self.after_errno(what, errno)?;
                }
                (Err(e), None) => return Err(e),
            }
        }
        self.procfs(what, 0, out)
    }

    #[cfg(feature = "fallback")]
    fn procfs<T: RawId>(
        &mut self,
        what: Enumeration<'_>,
        start: i32,
        out: &mut Vec<T>,
    ) -> Result<()> {
        let (root, fallback) = self.fallback_parts()?;
        fallback.list(root, what, start, out)
    }

    /// The proc root and the fallback's reader (created on first use).
    #[cfg(feature = "fallback")]
    fn fallback_parts(&mut self) -> Result<(&ProcRoot, &mut Fallback)> {
        let root = self
            .root
            .as_ref()
            .ok_or_else(|| Error::ProcNotMounted(self.path.clone()))?;
        let keep_files = self.keep_files;
        Ok((
            root,
            self.fallback
                .get_or_insert_with(|| Fallback::keeping_files(keep_files)),
        ))
    }

    #[cfg(not(feature = "fallback"))]
    fn procfs<T: RawId>(&mut self, _: Enumeration<'_>, _: i32, _: &mut Vec<T>) -> Result<()> {
        Err(Error::FallbackNotBuilt)
    }
}

/// pidmap(2)'s exclusive cursor for the ids `>= start`.
pub(crate) fn last_id(start: u32) -> u64 {
    u64::from(start.saturating_sub(1))
}

/// An errno of a real call as the listing's error. `EBADF` for a pidfd
/// target is a fd that is not a pidfd (the kernel cannot tell it from a
/// closed one, and a `BorrowedFd` is open).
pub(crate) fn syscall_error(what: Enumeration<'_>, errno: i32) -> Error {
    match (errno, what.target()) {
        (libc::EBADF, Target::Pidfd(_)) => Error::InvalidArgument("the target fd is not a pidfd"),
        _ => Error::from_errno(errno, what.what(), what.target_id()),
    }
}

/// Ids offered to the first call of a listing. The room doubles while the
/// kernel fills all of it, so a short listing zeroes (and the kernel checks)
/// a few KiB rather than the whole spare capacity of a large `Vec`, and a
/// long one still takes few calls.
const FIRST_CHUNK: usize = 256;

/// Drive a cursor-style call until it returns 0. `call(start, buf)` gets
/// initialised room at the end of `out` (zeroed: [`FIRST_CHUNK`] ids,
/// doubled after each call that filled it, within the spare capacity,
/// which grows only when it is smaller than that) and returns how many
/// ids it wrote there. Safe whatever `call` does: a count beyond the room,
/// or ids that are not strictly ascending from the cursor, are ABI
/// violations.
pub(crate) fn fill_by_chunks<T: RawId>(
    out: &mut Vec<T>,
    mut call: impl FnMut(i32, &mut [i32]) -> Result<u64>,
) -> Result<()> {
    out.clear();
    let mut start = 0;
    let mut chunk = FIRST_CHUNK;
    loop {
        let len = out.len();
        if out.capacity() - len < chunk {
            out.reserve(chunk.max(len));
        }
        let room = chunk;
        out.resize(len + room, T::from_raw_id(0));
        let n = call(start, bytemuck::cast_slice_mut(&mut out[len..]))
            .and_then(|n| abi_count(n, room))
            .and_then(|n| {
                check_chunk(bytemuck::cast_slice(&out[len..len + n]), start)?;
                Ok(n)
            });
        let n = match n {
            Ok(n) => n,
            Err(e) => {
                out.clear();
                return Err(e);
            }
        };
        out.truncate(len + n);
        if n == room {
            chunk = chunk.saturating_mul(2);
        }
        match out.last() {
            Some(last) if n > 0 => match last.raw_id().checked_add(1) {
                Some(next) => start = next,
                None => return Ok(()),
            },
            _ => return Ok(()),
        }
    }
}

/// The ABI promises a return value `<= count`. A larger one (for example
/// an errno that went through an unsigned type) is reported, never clamped.
fn abi_count(n: u64, count: usize) -> Result<usize> {
    match usize::try_from(n) {
        Ok(n) if n <= count => Ok(n),
        _ => Err(Error::AbiViolation(format!(
            "returned {n} (as a 32-bit value: {}) for a buffer of {count}",
            i32::from_ne_bytes(u32::try_from(n & 0xffff_ffff).unwrap_or(0).to_ne_bytes())
        ))),
    }
}

/// The ABI promises strictly ascending ids `>= start`; a kernel that
/// breaks it must not make us loop or grow without bound.
fn check_chunk(chunk: &[i32], start: i32) -> Result<()> {
    check_ascending(chunk.iter().copied(), start)
}

/// [`check_chunk`] for any sequence of ids (records' tids).
fn check_ascending(ids: impl IntoIterator<Item = i32>, start: i32) -> Result<()> {
    let mut prev = start.checked_sub(1);
    for id in ids {
        if prev.is_some_and(|p| id <= p) || id < start {
            return Err(Error::AbiViolation(format!(
                "id {id} is not ascending from cursor {start}"
            )));
        }
        prev = Some(id);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake kernel with the ABI's cursor semantics over `ids`, returning
    /// at most `cap` per call.
    fn fake(ids: &[i32], cap: usize) -> impl FnMut(i32, &mut [i32]) -> Result<u64> + '_ {
        move |start, buf| {
            let from = ids.partition_point(|&id| id < start);
            let n = (ids.len() - from).min(buf.len()).min(cap);
            buf[..n].copy_from_slice(&ids[from..from + n]);
            Ok(u64::try_from(n).unwrap())
        }
    }

    /// The crate's inclusive cursor as pidmap(2)'s exclusive one: ids
    /// `>= start` are those after `start - 1`, and 0 starts (no id is 0).
    #[test]
    fn inclusive_start_is_the_previous_last_id() {
        assert_eq!(last_id(0), 0);
        assert_eq!(last_id(1), 0);
        assert_eq!(last_id(2), 1);
        assert_eq!(last_id(u32::MAX), u64::from(u32::MAX) - 1);
    }

    #[test]
    fn ebadf_for_a_pidfd_target_is_not_a_pidfd() {
        let file = std::fs::File::open("/").unwrap();
        let fd = std::os::fd::AsFd::as_fd(&file);
        let what = Enumeration::Fds(Target::Pidfd(fd));
        assert!(matches!(
            syscall_error(what, libc::EBADF),
            Error::InvalidArgument(m) if m.contains("not a pidfd")
        ));
        assert!(matches!(
            syscall_error(what, libc::ESRCH),
            Error::NoSuchProcess { .. }
        ));
        let by_pid = Enumeration::Fds(Target::Pid(Pid::this_process()));
        assert_eq!(
            syscall_error(by_pid, libc::EBADF).raw_os_error(),
            Some(libc::EBADF)
        );
        assert!(matches!(
            syscall_error(by_pid, libc::EACCES),
            Error::PermissionDenied { what: "fds", .. }
        ));
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
        let mut out: Vec<Pid> = Vec::new();
        let r = fill_by_chunks(&mut out, |_, _| Err(Error::InvalidArgument("x")));
        assert!(matches!(r, Err(Error::InvalidArgument("x"))));
        assert!(out.is_empty());
    }

    /// The room offered grows from FIRST_CHUNK only while the kernel fills
    /// it, whatever the Vec's spare capacity.
    /// The rooms offered while listing `ids` into a Vec with a large spare
    /// capacity.
    fn rooms_for(ids: &[i32]) -> Vec<usize> {
        let mut rooms = Vec::new();
        let mut out: Vec<i32> = Vec::with_capacity(1 << 16);
        let mut inner = fake(ids, usize::MAX);
        fill_by_chunks(&mut out, |start, buf| {
            rooms.push(buf.len());
            inner(start, buf)
        })
        .unwrap();
        assert_eq!(out, ids);
        rooms
    }

    /// The room offered grows from FIRST_CHUNK only while the kernel fills
    /// it, whatever the Vec's spare capacity.
    #[test]
    fn short_listings_get_small_rooms() {
        let few: Vec<i32> = (1..=40).collect();
        assert_eq!(rooms_for(&few), [FIRST_CHUNK, FIRST_CHUNK]);
        let many: Vec<i32> = (1..=2000).collect();
        assert_eq!(rooms_for(&many), [256, 512, 1024, 2048, 2048]);
    }

    #[test]
    fn a_kernel_breaking_the_abi_is_an_error_not_a_loop() {
        // Ignores the cursor: always returns the same ids.
        let mut out: Vec<i32> = Vec::new();
        let r = fill_by_chunks(&mut out, |_, buf| {
            buf[..2].copy_from_slice(&[3, 4]);
            Ok(2)
        });
        assert!(matches!(r, Err(Error::AbiViolation(_))), "{r:?}");
        assert!(out.is_empty());
        // (unsigned)-EACCES, as a kernel with a `total ?: -errno` bug returns.
        let r = fill_by_chunks(&mut out, |_, _| Ok(4294967283));
        assert!(format!("{}", r.unwrap_err()).contains("-13"));
        // More than the room: an error, and nothing read past the buffer.
        let r = fill_by_chunks(&mut out, |_, buf| Ok(u64::try_from(buf.len()).unwrap() + 1));
        assert!(matches!(r, Err(Error::AbiViolation(_))), "{r:?}");
        assert!(out.is_empty());
        assert!(check_chunk(&[5, 5], 0).is_err());
        assert!(check_chunk(&[4, 5], 5).is_err());
        assert!(check_chunk(&[5, 9], 5).is_ok());
        assert!(check_chunk(&[], 0).is_ok());
    }
}

//! List processes, threads, children and open file descriptors of Linux
//! processes — through the `pidmap(2)`, `pidmap_info(2)` and `fdmap(2)`
//! system calls of the kernel series (473, 474, 475) when the kernel
//! has them, and through a fast `/proc` reader when it does not.
//!
//! # Backends
//!
//! | [`Backend`] | behaviour |
//! |---|---|
//! | [`Backend::Auto`] (default) | probe the kernel once per process; use the syscalls if present, else `/proc`; a real call answering `ENOSYS`, or `EPERM` from a sandbox installed later, switches the handle to `/proc` |
//! | [`Backend::Syscall`] | require the syscalls; [`Error::SyscallUnavailable`] otherwise — never falls back |
//! | [`Backend::Procfs`] | always read `/proc`; the syscalls are never issued, not even the probe |
//!
//! **Opt-in syscalls (`series-syscalls`).** The calls have no upstream
//! syscall numbers: the series wires 473, 474 and 475, which upstream
//! may give to another call. No probe can prove which call a number is —
//! an unknown call answering `EINVAL` to a bad flag may already have acted
//! on its arguments (as `close_range(2)` would) or used our pointers. So
//! unless the crate is built with the `series-syscalls` feature it never
//! issues those numbers, not even to probe: [`kernel_support()`] is
//! [`KernelSupport::NotBuilt`], [`Backend::Auto`] reads `/proc`, and
//! [`Backend::Syscall`] fails with [`Error::SyscallUnavailable`]. With the
//! feature, the probe below decides.
//!
//! **Sandboxes.** With `series-syscalls`, the probe issues pidmap(2) and
//! fdmap(2) with a non-zero flags argument: a patched kernel answers
//! `EINVAL`, one without them `ENOSYS`.
//! A seccomp filter answers what it was told — `EPERM`, or, for an
//! allow-list filter (Android apps, Chromium-style sandboxes, systemd's
//! `SystemCallFilter=`), possibly **killing the process**. A program that
//! may run under such a filter must not probe: build its handles with
//! [`Backend::Procfs`], or let its users choose through
//! `PIDMAP_BACKEND=procfs` ([`BACKEND_ENV`]), which the crate reads only
//! when asked ([`Builder::backend_from_env`], [`Backend::from_env`]).
//!
//! # The procfs view
//!
//! `/proc` hides what its `hidepid=`/`gid=` options say; the calls never
//! show more. Whenever the proc root (default `/proc`, see
//! [`Builder::proc_root`]) is the root of a procfs mount, the syscall
//! backend passes its fd (opened `O_RDONLY | O_DIRECTORY`) as the view
//! (the requests' `procfs_fd`), so an unprivileged listing
//! shows exactly what `ls /proc` shows. Without a mounted `/proc` the
//! kernel's default view applies: ptrace's own rule per task.
//!
//! # Semantics (both backends)
//!
//! Every listing is **strictly ascending**, and the crate's cursor is the
//! first id wanted: a chunk holds the ids `>= start`, and the next chunk
//! starts at `last + 1` ([`Pidmap::read_chunk`]); the syscall backend
//! turns it into pidmap(2)'s exclusive `last_id` and fdmap(2)'s inclusive
//! `first_fd`. An id alive during the whole enumeration is returned
//! exactly once. Targets are explicit ([`Target::Caller`], a [`Pid`], or a
//! pidfd; the calls take pidfds only, so a pid is opened as one per
//! listing): a missing target gives [`Error::NoSuchProcess`], a denied one
//! [`Error::PermissionDenied`].
//! The `/proc` fallback reads directories with `rustix`'s raw
//! `getdents64` into one reused 64 KiB buffer, allocates nothing per
//! entry, sorts its output, and resolves the caller through
//! `/proc/thread-self` (fds) and `/proc/self` (threads, children).
//!
//! # Usage
//!
//! A monitor (a `top`, an exporter) refreshes every task in a loop: build
//! its handle with [`Pidmap::monitor`], which keeps the /proc fallback's
//! task files open between refreshes within an fd budget, and turn two
//! refreshes into CPU use with [`monitor::CpuSample`]:
//!
//! ```
//! use std::time::Duration;
//! use pidmap::{InfoFields, Pidmap, Query};
//! use pidmap::monitor::CpuSample;
//!
//! let mut pm = Pidmap::monitor()?;
//! let fields = InfoFields::CPU_TIME | InfoFields::START_TIME | InfoFields::RSS | InfoFields::COMM;
//! let mut records = Vec::new();
//! pm.fill_info(Query::processes(), fields, &mut records)?;
//! let before = CpuSample::now(&records);
//! std::thread::sleep(Duration::from_millis(20));
//! pm.fill_info(Query::processes(), fields, &mut records)?;
//! let now = CpuSample::now(&records);
//! for (record, cpu) in now.records_since(&before, &records) {
//!     let _ = (record.tid, record.comm, record.rss_bytes(), cpu.and_then(|c| c.percent));
//! }
//! # Ok::<(), pidmap::Error>(())
//! ```
//!
//! Or let the crate pick the fields: a [`monitor::ProcessTable`] keeps the
//! last snapshot of every process ([`monitor::Process`]: pid, parent, name, state,
//! CPU %, memory, start time, user, threads, ...), refreshes it with one
//! call, and computes CPU % from its previous refresh, as the sysinfo
//! crate's `System::refresh_processes` does:
//!
//! ```
//! use pidmap::Pid;
//! use pidmap::monitor::ProcessTable;
//!
//! let mut table = ProcessTable::new()?;
//! table.refresh()?;
//! std::thread::sleep(std::time::Duration::from_millis(20));
//! table.refresh()?;
//! let me = table.process(Pid::this_process()).expect("listed");
//! println!("{} {:?} % CPU, {} bytes", me.name, me.cpu_percent, me.memory);
//! assert!(table.processes().count() >= 1 && table.cpu_usage().is_some());
//! # Ok::<(), pidmap::Error>(())
//! ```
//!
//! One-off listings:
//!
//! ```
//! use pidmap::{Pid, Target};
//!
//! let me = Pid::this_process();
//! let all: Vec<Pid> = pidmap::processes()?.collect::<Result<_, _>>()?;
//! assert!(all.contains(&me));
//! let threads = pidmap::threads(Target::Caller)?.to_vec()?;
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
//! }
//! println!("{} processes via {}", pids.len(), pm.detection());
//! # Ok::<(), pidmap::Error>(())
//! ```
//!
//! # Task records
//!
//! [`Pidmap::fill_info`] gives a [`TaskInfo`] per task of a [`Query`]
//! (state, CPU and start times, rss, name, uids, flags, ...), the fields
//! chosen with [`InfoFields`]: one pidmap_info(2) call per 512 tasks, or
//! `/proc/TGID/task/TID/stat` (and `statm`, or `status` for the uids) per
//! task from the fallback; both count times in clock ticks and give the
//! same values.
//!
//! ```
//! use pidmap::{InfoFields, Pidmap, Query};
//!
//! let mut pm = Pidmap::new()?;
//! let mut tasks = Vec::new();
//! pm.fill_info(Query::processes(), InfoFields::STATE | InfoFields::COMM, &mut tasks)?;
//! let me = tasks.iter().find(|t| t.tid == pidmap::Pid::this_process());
//! assert!(me.and_then(|t| t.comm).is_some());
//! # Ok::<(), pidmap::Error>(())
//! ```
//!
//! # Around the records: the monitor helpers
//!
//! The pid API is the crate root; what a `top` builds on it is in
//! [`monitor`]: CPU use ([`CpuSample`](monitor::CpuSample)), the process
//! table, and what a `top` shows beside its rows:
//! [`SystemMemory`](monitor::SystemMemory) (from `/proc/meminfo`; the
//! total for `%MEM`), [`SystemCpu`](monitor::SystemCpu) (from
//! `/proc/stat`; the `%Cpu(s)` line, all CPUs and each),
//! [`LoadAverage`](monitor::LoadAverage), [`Uptime`](monitor::Uptime),
//! and user names for [`TaskInfo::euid`]:
//! [`user_name`](monitor::user_name), [`user_id`](monitor::user_id), and
//! the cache [`UserNames`](monitor::UserNames).
//!
//! ```
//! use pidmap::{InfoFields, Pidmap, Query};
//! use pidmap::monitor::{SystemMemory, UserNames};
//!
//! let mut pm = Pidmap::new()?;
//! let mut records = Vec::new();
//! pm.fill_info(Query::processes(), InfoFields::RSS | InfoFields::UIDS, &mut records)?;
//! let memory = SystemMemory::read()?;
//! let mut names = UserNames::new();
//! for r in &records {
//!     let user = r.euid.map_or("?", |uid| names.get(uid));
//!     let mem = r.rss_bytes().map(|b| memory.percent_of(b));
//!     let _ = (r.tid, user, mem);
//! }
//! # Ok::<(), pidmap::Error>(())
//! ```
//!
//! # Features
//!
//! - `fallback` (default): the `/proc` reader. Without it the crate is
//!   syscall-only and reads no `/proc` directory; [`Backend::Procfs`] is
//!   then [`Error::FallbackNotBuilt`].
//! - `serde`: `Serialize`/`Deserialize` for [`Pid`], [`Listing`],
//!   [`Backend`], [`ActiveBackend`], [`TaskInfo`], [`TaskState`],
//!   [`TaskFlags`] and [`Comm`] (`Serialize` for [`KernelSupport`] and
//!   [`Detection`]). The forms match the `pidmap` CLI's JSON: a
//!   [`TaskState`] is its letter (`"R"`), [`TaskInfo`]'s times are whole
//!   nanoseconds named `utime_ns`, `stime_ns`, `start_time_ns` (as are
//!   [`monitor::TaskKey`]'s `start_time_ns` and [`monitor::TaskCpu`]'s
//!   `used_ns`), a
//!   [`Comm`] a string, a [`Pid`] a number.
//! - `series-syscalls` (off): issue the series' pidmap(2), pidmap_info(2)
//!   and fdmap(2) (see above).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

#[cfg(not(target_os = "linux"))]
compile_error!("pidmap lists Linux processes: it builds only for target_os = \"linux\"");

mod backend;
mod error;
#[cfg(feature = "fallback")]
mod fallback;
mod fd_targets;
mod handle;
mod info;
mod iter;
mod kernel_support;
pub mod monitor;
mod pid;
mod pid_conversions;
mod proc_root;
mod query;
mod raw_id;
mod record;
#[cfg(feature = "serde")]
mod serde_forms;
mod stat;
mod sys;
mod target;
mod target_id;

pub use backend::{ActiveBackend, Backend, Detection, BACKEND_ENV};
pub use error::{Error, ParseError, Result};
pub use fd_targets::{fd_targets, fd_targets_from, FdTarget};
pub use handle::{Builder, Pidmap};
pub use info::{Comm, InfoFields, TaskFlags, TaskInfo, TaskState};
pub use iter::{Fds, Pids};
pub use kernel_support::{kernel_support, probe_kernel, KernelSupport};
pub use pid::Pid;
pub use query::{Listing, Query};
pub use record::TaskRecord;
pub use stat::{status_ctxt_switches, status_tgid, status_vm_rss_kib, Stat, StatCounters};
pub use sys::{SyscallNumbers, SYSCALL_NUMBERS};
pub use target::Target;
pub use target_id::TargetId;

/// All processes (thread-group ids), ascending, with the default handle.
///
/// # Errors
///
/// As [`Pidmap::new`]; the listing's own errors are the iterator's
/// items.
///
/// ```
/// let pids = pidmap::processes()?.to_vec()?;
/// assert!(pids.contains(&pidmap::Pid::this_process()));
/// # Ok::<(), pidmap::Error>(())
/// ```
pub fn processes() -> Result<Pids<'static>> {
    Ok(Pids::owned(Pidmap::new()?, Query::processes()))
}

/// All processes except kernel threads.
///
/// # Errors
///
/// As [`Pidmap::new`]; the listing's own errors are the iterator's
/// items.
pub fn processes_without_kthreads() -> Result<Pids<'static>> {
    Ok(Pids::owned(
        Pidmap::new()?,
        Query::processes().without_kthreads(),
    ))
}

/// Every task id of the view, threads included.
///
/// # Errors
///
/// As [`Pidmap::new`]; the listing's own errors are the iterator's
/// items.
pub fn all_tasks() -> Result<Pids<'static>> {
    Ok(Pids::owned(Pidmap::new()?, Query::all_tasks()))
}

/// The thread ids of `target`'s thread group.
///
/// # Errors
///
/// As [`Pidmap::new`]; the listing's own errors are the iterator's
/// items.
///
/// ```
/// use pidmap::{Pid, Target};
/// let tids = pidmap::threads(Pid::this_process())?.to_vec()?;
/// assert!(tids.contains(&Pid::this_thread()));
/// # Ok::<(), pidmap::Error>(())
/// ```
pub fn threads<'fd>(target: impl Into<Target<'fd>>) -> Result<Pids<'fd>> {
    Ok(Pids::owned(Pidmap::new()?, Query::threads(target)))
}

/// The children of `target`'s thread group.
///
/// # Errors
///
/// As [`Pidmap::new`]; the listing's own errors are the iterator's
/// items.
pub fn children<'fd>(target: impl Into<Target<'fd>>) -> Result<Pids<'fd>> {
    Ok(Pids::owned(Pidmap::new()?, Query::children(target)))
}

/// The open fd numbers of `target`.
///
/// # Errors
///
/// As [`Pidmap::new`]; the listing's own errors are the iterator's
/// items.
///
/// ```
/// use pidmap::{Error, Pid};
/// match pidmap::fds(Pid::new(1).unwrap())?.to_vec() {
///     Ok(fds) => println!("pid 1 has {} fds", fds.len()),
///     Err(Error::PermissionDenied { .. }) => println!("not allowed"),
///     Err(e) => return Err(e),
/// }
/// # Ok::<(), pidmap::Error>(())
/// ```
pub fn fds<'fd>(target: impl Into<Target<'fd>>) -> Result<Fds<'fd>> {
    Ok(Fds::owned(Pidmap::new()?, target.into()))
}

/// The pid API is at the crate root and the monitor helpers in
/// `monitor`, each item at one path: the internals are not reachable by a
/// second one, and the probe cannot be called with an arbitrary syscall
/// number.
///
/// ```compile_fail
/// let _ = pidmap::sys::probe();
/// ```
/// ```compile_fail
/// use pidmap::fallback::Fallback;
/// ```
/// ```compile_fail
/// use pidmap::iter::Pids;
/// ```
/// ```compile_fail
/// use pidmap::backend::Backend;
/// ```
/// ```compile_fail
/// use pidmap::SystemMemory;
/// ```
/// ```compile_fail
/// use pidmap::monitor::system::SystemMemory;
/// ```
/// ```compile_fail
/// use pidmap::monitor::Pidmap;
/// ```
/// ```
/// use pidmap::{Backend, Pids, Fds, Pidmap, Query, Target, Pid, Error};
/// use pidmap::monitor::{CpuSample, ProcessTable, SystemMemory, UserNames};
/// ```
#[cfg(doctest)]
pub struct FlatApi;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

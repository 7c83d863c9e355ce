//! The raw system calls (crate-private): the series' `pidmap(2)` 473,
//! `pidmap_info(2)` 474 and `fdmap(2)` 475 and the ABI of
//! `include/uapi/linux/pidmap.h` and `include/uapi/linux/fdmap.h`, by
//! concern:
//!
//! - `numbers`: the per-architecture syscall numbers, one table, and
//!   whether this build may issue them;
//! - `abi`: the constants and `#[repr(C)]` structs, with their layout
//!   tests against the crate's `abi/` headers;
//! - `raw`: the one function that enters the kernel, typed per call;
//! - `calls`: the three typed calls the crate makes;
//! - `probe`: detection.
//!
//! **Which calls are issued.** The numbers are the series', not assigned
//! upstream: on a kernel without the series they may name another system
//! call, and no probe can prove which call a number is (an unknown call
//! that answers `EINVAL` to a bad flag could have had side effects before
//! answering, as `close_range(2)` would). So unless the crate is built with
//! the `series-syscalls` feature, [`enabled_numbers`] is `None` and no
//! function here enters the kernel: each returns `ENOSYS` at once.
//!
//! **Typed calls.** The series has one call per element type, so each call
//! is paired with its own buffer type: [`list_ids`] is pidmap(2) into
//! `u32`s (with the request's record fields zeroed, as pidmap(2)
//! requires), [`read_records`] is pidmap_info(2) into [`PidmapInfo`]s (with
//! `info_size` set to that struct's size), [`list_fds`] is fdmap(2) into
//! `i32`s. The `flags` argument of all three is always 0; only the probe
//! passes another, with no buffer.

mod abi;
mod calls;
mod numbers;
mod probe;
mod raw;

pub(crate) use abi::{
    req_size, FdmapReq, PidmapInfo, PidmapReq, PIDFD_SELF_THREAD, PIDFD_SELF_THREAD_GROUP,
    PIDMAP_FILTER_NO_KTHREADS, PIDMAP_INFO_COMM, PIDMAP_INFO_CPUTIME, PIDMAP_INFO_CREDS,
    PIDMAP_INFO_CTXSW, PIDMAP_INFO_FAULTS, PIDMAP_INFO_FIELDS, PIDMAP_INFO_ID,
    PIDMAP_INFO_NUM_THREADS, PIDMAP_INFO_PPID, PIDMAP_INFO_RSS, PIDMAP_INFO_SCHED,
    PIDMAP_INFO_START_TIME, PIDMAP_INFO_STATE, PIDMAP_INFO_TASK_FLAGS, PIDMAP_SCOPE_CHILDREN,
    PIDMAP_SCOPE_PROCS, PIDMAP_SCOPE_TASKS, PIDMAP_SCOPE_THREADS, PIDMAP_TASK_EXITING,
    PIDMAP_TASK_FLAGS, PIDMAP_TASK_FORKNOEXEC, PIDMAP_TASK_KTHREAD, PIDMAP_TASK_USER_WORKER,
};
pub(crate) use calls::{list_fds, list_ids, read_records};
pub(crate) use numbers::enabled_numbers;
pub use numbers::{SyscallNumbers, SYSCALL_NUMBERS};
pub(crate) use probe::{probe, probe_info};

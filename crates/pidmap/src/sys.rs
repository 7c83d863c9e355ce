//! Raw system calls: the one place that knows syscall numbers and flag bits.
//!
//! Everything here is a thin, allocation-free wrapper over
//! [`libc::syscall`]. The numbers come from `docs/ABI.md`; they are the same
//! in every table the kernel series wires, and deliberately sparse and high
//! so that an unpatched kernel answers `ENOSYS` and never runs some other
//! call.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// Syscall numbers, one row per architecture.
///
/// x86_64 (`common` in `syscall_64.tbl`), i386 (`syscall_32.tbl`) and the
/// generic table (`scripts/syscall.tbl`, used by arm64, riscv, ...) all
/// share the same pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Numbers {
    /// `pidmap(2)`.
    pub pidmap: libc::c_long,
    /// `fdmap(2)`.
    pub fdmap: libc::c_long,
}

/// The syscall numbers for the architecture this crate was built for.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "loongarch64"
))]
pub const NR: Numbers = Numbers {
    pidmap: 1000,
    fdmap: 1001,
};

/// Architectures the kernel series does not wire: any number we would use
/// could mean something else, so use one that can only yield `ENOSYS`.
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "loongarch64"
)))]
pub const NR: Numbers = Numbers {
    pidmap: -1,
    fdmap: -1,
};

/// `PIDMAP_PROC`: thread-group ids of the caller's pid namespace (`pid` must be 0).
pub const PIDMAP_PROC: u32 = 0x01;
/// `PIDMAP_ALL_TASKS`: every task id of the namespace (`pid` must be 0).
pub const PIDMAP_ALL_TASKS: u32 = 0x02;
/// `PIDMAP_TASKS`: thread ids of thread group `pid` (0: the caller's).
pub const PIDMAP_TASKS: u32 = 0x04;
/// `PIDMAP_CHILDREN`: children of process `pid` (0: the caller).
pub const PIDMAP_CHILDREN: u32 = 0x08;
/// Mask of the mode bits; exactly one must be set.
pub const PIDMAP_MODE_MASK: u32 = 0x0f;
/// `PIDMAP_IGNORE_KTHREADS`: modifier, leave kernel threads out.
pub const PIDMAP_IGNORE_KTHREADS: u32 = 0x100;

/// A flag bit no version of the ABI defines: a patched kernel must answer
/// `EINVAL`, which is what the backend probe relies on.
pub const PROBE_INVALID_FLAG: u32 = 0x8000_0000;

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// `pidmap(pid, buf, buf.len(), start, flags)`.
///
/// Returns the number of ids written, or the raw errno.
pub fn pidmap(pid: i32, buf: &mut [i32], start: i32, flags: u32) -> Result<usize, i32> {
    // SAFETY: `buf` is valid for writes of `buf.len()` i32s.
    unsafe { pidmap_raw(pid, buf.as_mut_ptr(), buf.len(), start, flags) }
}

/// `fdmap(pid, buf, buf.len(), start, flags)`.
///
/// Returns the number of fds written, or the raw errno.
pub fn fdmap(pid: i32, buf: &mut [i32], start: i32, flags: u32) -> Result<usize, i32> {
    // SAFETY: `buf` is valid for writes of `buf.len()` i32s.
    unsafe { fdmap_raw(pid, buf.as_mut_ptr(), buf.len(), start, flags) }
}

/// [`pidmap`] into possibly uninitialised memory; on success the first
/// `n` entries are initialised (the kernel never writes beyond `count`).
/// The return value is the kernel's, unclamped: a value above `count`
/// means the kernel broke the ABI.
///
/// # Safety
///
/// `buf` must be valid for writes of `count` `i32`s.
pub unsafe fn pidmap_raw(
    pid: i32,
    buf: *mut i32,
    count: usize,
    start: i32,
    flags: u32,
) -> Result<usize, i32> {
    // SAFETY: forwarded from the caller's contract.
    unsafe { call(NR.pidmap, pid, buf, count, start, flags) }
}

/// [`fdmap`] into possibly uninitialised memory.
///
/// # Safety
///
/// `buf` must be valid for writes of `count` `i32`s.
pub unsafe fn fdmap_raw(
    pid: i32,
    buf: *mut i32,
    count: usize,
    start: i32,
    flags: u32,
) -> Result<usize, i32> {
    // SAFETY: forwarded from the caller's contract.
    unsafe { call(NR.fdmap, pid, buf, count, start, flags) }
}

/// # Safety
///
/// `buf` must be valid for writes of `count` `i32`s.
unsafe fn call(
    nr: libc::c_long,
    pid: i32,
    buf: *mut i32,
    count: usize,
    start: i32,
    flags: u32,
) -> Result<usize, i32> {
    let count = libc::c_uint::try_from(count).unwrap_or(libc::c_uint::MAX);
    // SAFETY: `buf` is writable for at least `count` entries (caller's
    // contract; `count` only shrinks above); the kernel writes at most
    // `count` entries (ABI.md). On a kernel without the call this returns
    // ENOSYS without touching memory.
    let ret = unsafe {
        libc::syscall(
            nr,
            pid as libc::c_long,
            buf,
            count as libc::c_long,
            start as libc::c_long,
            flags as libc::c_long,
        )
    };
    if ret < 0 {
        Err(errno())
    } else {
        // Not clamped: a return above `count` is an ABI violation that
        // the caller must report, not hide.
        Ok(ret as usize)
    }
}

/// Issue the probe call: `pidmap` or `fdmap` with a NULL buffer, count 0
/// and an undefined flag bit. A patched kernel validates flags first and
/// answers `EINVAL`; an unpatched one answers `ENOSYS`; a seccomp filter
/// typically answers `EPERM`. Nothing is ever written.
pub fn probe(nr: libc::c_long) -> Result<i64, i32> {
    // SAFETY: the buffer is NULL with count 0, so even a kernel that
    // ignored the invalid flag would write nothing.
    let ret = unsafe {
        libc::syscall(
            nr,
            0 as libc::c_long,
            std::ptr::null_mut::<i32>(),
            0 as libc::c_long,
            0 as libc::c_long,
            PROBE_INVALID_FLAG as libc::c_long,
        )
    };
    if ret < 0 {
        Err(errno())
    } else {
        Ok(ret)
    }
}

/// Raw `getdents64(2)` into `buf`. Returns the number of bytes filled, 0 at
/// the end of the directory.
pub fn getdents64(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is writable for `buf.len()` bytes; the kernel writes
        // whole `linux_dirent64` records within that length.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                fd.as_raw_fd() as libc::c_long,
                buf.as_mut_ptr(),
                buf.len() as libc::c_long,
            )
        };
        if ret >= 0 {
            return Ok(ret as usize);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

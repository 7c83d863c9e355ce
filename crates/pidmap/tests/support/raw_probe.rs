//! Whether the kernel has pidmap(2)/fdmap(2), asked with a raw
//! `syscall(2)` and the ABI's numbers written out here: the tests' own
//! reference, never the crate's probe code (a reference must not share
//! code with the code under test). One file, included with `#[path]` by
//! the crate's unit tests, its integration tests and the CLI's.

#![allow(dead_code)]

/// The series: the same numbers on every table the tests run with
/// (`x86_64`, i386, `scripts/syscall.tbl`).
pub const NR_PIDMAP: u16 = 473;
pub const NR_PIDMAP_INFO: u16 = 474;
pub const NR_FDMAP: u16 = 475;
/// A flags argument the calls refuse (flags must be 0).
pub const PROBE_FLAG: u32 = 0x8000_0000;

/// The calls a probe may make. A closed set, not a number: the same
/// arguments given to another system call (one that writes through its
/// first pointer) would not be sound.
#[derive(Clone, Copy, Debug)]
pub enum Call {
    Pidmap,
    Fdmap,
}

impl Call {
    pub const fn nr(self) -> u16 {
        match self {
            Call::Pidmap => NR_PIDMAP,
            Call::Fdmap => NR_FDMAP,
        }
    }
}

/// Make `call` as a probe does: a readable, valid request (56 bytes for
/// pidmap(2), 32 for fdmap(2), sized by its first field), NULL buffer,
/// count 0 and a non-zero flags argument. A kernel with the call answers
/// `EINVAL`, one without it `ENOSYS`, a seccomp filter maybe `EPERM`;
/// `Ok` holds what a call that must fail returned anyway.
///
/// A build without the `series-syscalls` feature (of the crate including
/// this file) never issues these numbers, tests included: the answer is
/// then `ENOSYS`, as from a kernel without them.
pub fn probe(call: Call) -> Result<libc::c_long, std::io::Error> {
    if cfg!(not(feature = "series-syscalls")) {
        return Err(std::io::Error::from_raw_os_error(libc::ENOSYS));
    }
    let mut req = [0u32; 14];
    req[0] = match call {
        Call::Pidmap => 56,
        Call::Fdmap => 32,
    };
    // SAFETY: pidmap(2) and fdmap(2) only read the request (at most its
    // 56 bytes); the NULL buffer with count 0 is never written. A kernel
    // without them says ENOSYS; the numbers are issued only in a build
    // that opted in to them.
    let r = unsafe {
        libc::syscall(
            libc::c_long::from(call.nr()),
            req.as_ptr(),
            std::ptr::null_mut::<i32>(),
            libc::size_t::from(0u8),
            libc::c_ulong::from(PROBE_FLAG),
        )
    };
    if r == -1 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Whether the kernel has the calls: pidmap(2)'s and fdmap(2)'s probes
/// say `EINVAL`.
pub fn kernel_has_pidmap() -> bool {
    let einval = |call| probe(call).is_err_and(|e| e.raw_os_error() == Some(libc::EINVAL));
    einval(Call::Pidmap) && einval(Call::Fdmap)
}

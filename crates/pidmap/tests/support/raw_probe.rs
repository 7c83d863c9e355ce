//! Whether the kernel has pidmap(2)/fdmap(2), asked with a raw
//! `syscall(2)` and the ABI's numbers written out here: the tests' own
//! reference, never the crate's probe code (a reference must not share
//! code with the code under test). One file, included with `#[path]` by
//! the crate's unit tests, its integration tests and the CLI's.

#![allow(dead_code)]

/// docs/ABI.md: the same numbers on every wired architecture.
pub const NR_PIDMAP: u16 = 473;
pub const NR_FDMAP: u16 = 474;
/// The undefined flag bit a probe sets, in the flags argument.
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

/// Make `call` as a probe does: a readable 16-byte request, NULL buffer,
/// count 0 and the undefined flag bit. A kernel with the call answers
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
    let req = [16u32, 0, 0, 0];
    // SAFETY: pidmap(2) and fdmap(2) only read the 16-byte request; the
    // NULL buffer with count 0 is never written. A kernel without them
    // (another call at these numbers is not wired anywhere) says ENOSYS.
    let r = unsafe {
        libc::syscall(
            libc::c_long::from(call.nr()),
            req.as_ptr(),
            std::ptr::null_mut::<i32>(),
            libc::c_ulong::from(0u32),
            libc::c_ulong::from(PROBE_FLAG),
        )
    };
    if r == -1 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Whether the kernel has pidmap(2): its probe says `EINVAL`.
pub fn kernel_has_pidmap() -> bool {
    probe(Call::Pidmap).is_err_and(|e| e.raw_os_error() == Some(libc::EINVAL))
}

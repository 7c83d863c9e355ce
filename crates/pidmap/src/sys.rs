//! The raw system calls (crate-private): syscall numbers, constants and the
//! structs of `include/uapi/linux/pidmap.h` and `include/uapi/linux/fdmap.h`
//! (the series' `pidmap(2)` 473, `pidmap_info(2)` 474, `fdmap(2)` 475).
//!
//! **Which calls are issued.** The numbers are the series', not assigned
//! upstream: on a kernel without the series they may name another system
//! call, and no probe can prove which call a number is (an unknown call
//! that answers `EINVAL` to a bad flag could have had side effects before
//! answering, as `close_range(2)` would). So unless the crate is built with
//! the `series-syscalls` feature, [`enabled_numbers`] is `None` and no
//! function here enters the kernel: each returns `ENOSYS` at once.
//!
//! **Typed calls.** The series has one call per element type, so each wrapper
//! pairs its own call with its own buffer type: [`list_ids`] is pidmap(2)
//! into `u32`s (with the request's record fields zeroed, as pidmap(2)
//! requires), [`read_records`] is pidmap_info(2) into [`PidmapInfo`]s (with
//! `info_size` set here to that struct's size), [`list_fds`] is fdmap(2)
//! into `i32`s. The `flags` argument of all three is always 0.
//!
//! Every integer conversion here is explicit and lossless on 32-bit and
//! 64-bit targets alike (no `as` between integer types).

use std::mem::size_of;

/// The syscall numbers of the series on this architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyscallNumbers {
    /// `pidmap(2)`: ids.
    pub pidmap: i64,
    /// `pidmap_info(2)`: task records.
    pub pidmap_info: i64,
    /// `fdmap(2)`: fd numbers.
    pub fdmap: i64,
}

/// The numbers the series adds to every table but alpha's (583–585) and
/// MIPS's, which number relative to a per-ABI base.
const SERIES_NUMBERS: SyscallNumbers = SyscallNumbers {
    pidmap: 473,
    pidmap_info: 474,
    fdmap: 475,
};

/// [`SERIES_NUMBERS`] above a MIPS ABI's base.
#[allow(dead_code)] // used on MIPS only
const fn based(base: i64) -> SyscallNumbers {
    SyscallNumbers {
        pidmap: base + SERIES_NUMBERS.pidmap,
        pidmap_info: base + SERIES_NUMBERS.pidmap_info,
        fdmap: base + SERIES_NUMBERS.fdmap,
    }
}

/// The numbers for the architecture this crate was built for, `None` where
/// the series wires no table the crate knows (every call then reports
/// `ENOSYS` without entering the kernel).
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "riscv64",
    target_arch = "riscv32",
    target_arch = "loongarch64",
    target_arch = "csky",
    target_arch = "hexagon",
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "s390x",
    target_arch = "sparc",
    target_arch = "sparc64",
    target_arch = "m68k",
    target_arch = "xtensa",
))]
pub const SYSCALL_NUMBERS: Option<SyscallNumbers> = Some(SERIES_NUMBERS);

/// MIPS o32: `arch/mips/kernel/syscalls/syscall_o32.tbl` above 4000.
#[cfg(any(target_arch = "mips", target_arch = "mips32r6"))]
pub const SYSCALL_NUMBERS: Option<SyscallNumbers> = Some(based(4000));

/// MIPS n64: `syscall_n64.tbl` above 5000.
#[cfg(all(
    any(target_arch = "mips64", target_arch = "mips64r6"),
    target_pointer_width = "64"
))]
pub const SYSCALL_NUMBERS: Option<SyscallNumbers> = Some(based(5000));

/// See above: no wired table, so no number that could mean another call
/// (MIPS n32 included: Rust has no such Linux target to test it on).
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "riscv64",
    target_arch = "riscv32",
    target_arch = "loongarch64",
    target_arch = "csky",
    target_arch = "hexagon",
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "s390x",
    target_arch = "sparc",
    target_arch = "sparc64",
    target_arch = "m68k",
    target_arch = "xtensa",
    target_arch = "mips",
    target_arch = "mips32r6",
    all(
        any(target_arch = "mips64", target_arch = "mips64r6"),
        target_pointer_width = "64"
    ),
)))]
pub const SYSCALL_NUMBERS: Option<SyscallNumbers> = None;

/// Every table the series adds the calls to, with the numbers it gives
/// them (a MIPS table's numbers are relative to its ABI's base, added
/// here): checked against the series in the tests. The crate issues those
/// of x86_64 and i386, `scripts/syscall.tbl` (arm64, riscv, loongarch64,
/// csky, hexagon), arm, powerpc, s390x, sparc, m68k, xtensa and MIPS o32
/// and n64; the others have no Rust Linux target.
#[cfg(test)]
pub(crate) const SERIES_TABLES: [(&str, SyscallNumbers); 17] = [
    ("arch/x86/entry/syscalls/syscall_64.tbl", SERIES_NUMBERS),
    ("arch/x86/entry/syscalls/syscall_32.tbl", SERIES_NUMBERS),
    ("scripts/syscall.tbl", SERIES_NUMBERS),
    ("arch/arm/tools/syscall.tbl", SERIES_NUMBERS),
    ("arch/arm64/tools/syscall_32.tbl", SERIES_NUMBERS),
    ("arch/powerpc/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    ("arch/s390/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    ("arch/sparc/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    ("arch/m68k/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    ("arch/xtensa/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    ("arch/mips/kernel/syscalls/syscall_o32.tbl", based(4000)),
    ("arch/mips/kernel/syscalls/syscall_n64.tbl", based(5000)),
    ("arch/mips/kernel/syscalls/syscall_n32.tbl", based(6000)),
    (
        "arch/microblaze/kernel/syscalls/syscall.tbl",
        SERIES_NUMBERS,
    ),
    ("arch/parisc/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    ("arch/sh/kernel/syscalls/syscall.tbl", SERIES_NUMBERS),
    // Alpha numbers from 583: no MIPS-style base, but the same offset.
    ("arch/alpha/kernel/syscalls/syscall.tbl", based(110)),
];

/// The numbers this build may issue: [`SYSCALL_NUMBERS`] with the
/// `series-syscalls` feature, else `None` (no call is ever made).
pub(crate) const fn enabled_numbers() -> Option<SyscallNumbers> {
    if cfg!(feature = "series-syscalls") {
        SYSCALL_NUMBERS
    } else {
        None
    }
}

// `struct pidmap_req.scope`.
pub(crate) const PIDMAP_SCOPE_PROCS: u32 = 0;
pub(crate) const PIDMAP_SCOPE_TASKS: u32 = 1;
pub(crate) const PIDMAP_SCOPE_THREADS: u32 = 2;
pub(crate) const PIDMAP_SCOPE_CHILDREN: u32 = 3;
// `struct pidmap_req.filter` bits.
pub(crate) const PIDMAP_FILTER_NO_KTHREADS: u32 = 1 << 0;
pub(crate) const PIDMAP_VIEW_PROCFS: u32 = 1 << 1;
// `struct fdmap_req.view` bits.
pub(crate) const FDMAP_VIEW_PROCFS: u32 = 1 << 0;

// `struct pidmap_info.mask` / `req->info_mask` bits.
pub(crate) const PIDMAP_INFO_ID: u64 = 1 << 0;
pub(crate) const PIDMAP_INFO_PPID: u64 = 1 << 1;
pub(crate) const PIDMAP_INFO_CREDS: u64 = 1 << 2;
pub(crate) const PIDMAP_INFO_SCHED: u64 = 1 << 3;
pub(crate) const PIDMAP_INFO_NUM_THREADS: u64 = 1 << 4;
pub(crate) const PIDMAP_INFO_CPUTIME: u64 = 1 << 5;
pub(crate) const PIDMAP_INFO_START_TIME: u64 = 1 << 6;
pub(crate) const PIDMAP_INFO_RSS: u64 = 1 << 7;
pub(crate) const PIDMAP_INFO_STATE: u64 = 1 << 8;
pub(crate) const PIDMAP_INFO_COMM: u64 = 1 << 9;
pub(crate) const PIDMAP_INFO_TASK_FLAGS: u64 = 1 << 10;
/// Every field bit above (`InfoFields::ALL`): what [`probe_info`] asks for.
pub(crate) const PIDMAP_INFO_FIELDS: u64 = PIDMAP_INFO_ID
    | PIDMAP_INFO_PPID
    | PIDMAP_INFO_CREDS
    | PIDMAP_INFO_SCHED
    | PIDMAP_INFO_NUM_THREADS
    | PIDMAP_INFO_CPUTIME
    | PIDMAP_INFO_START_TIME
    | PIDMAP_INFO_RSS
    | PIDMAP_INFO_STATE
    | PIDMAP_INFO_COMM
    | PIDMAP_INFO_TASK_FLAGS;
#[cfg(test)]
pub(crate) const PIDMAP_INFO_SUPPORTED_MASK: u64 = 1 << 63;

// `struct pidmap_info.task_flags` bits.
pub(crate) const PIDMAP_TASK_KTHREAD: u32 = 1 << 0;
pub(crate) const PIDMAP_TASK_USER_WORKER: u32 = 1 << 1;
pub(crate) const PIDMAP_TASK_EXITING: u32 = 1 << 2;
pub(crate) const PIDMAP_TASK_FORKNOEXEC: u32 = 1 << 3;
/// Every task flag bit above (`TaskFlags::ALL`).
pub(crate) const PIDMAP_TASK_FLAGS: u32 =
    PIDMAP_TASK_KTHREAD | PIDMAP_TASK_USER_WORKER | PIDMAP_TASK_EXITING | PIDMAP_TASK_FORKNOEXEC;

/// `include/uapi/linux/pidfd.h`: the calling thread, and its thread group,
/// as a pidfd argument.
pub(crate) const PIDFD_SELF_THREAD: i32 = -10000;
pub(crate) const PIDFD_SELF_THREAD_GROUP: i32 = -10001;

/// The largest count the calls take (`-EOVERFLOW` above).
pub(crate) const MAX_NR: usize = 1_000_000;

/// A flags argument no version of the calls accepts (it must be 0): a
/// patched kernel answers the probe with `EINVAL`.
const PROBE_INVALID_FLAG: u32 = 0x8000_0000;

/// `struct pidmap_req`, `PIDMAP_REQ_SIZE_VER0`: the request of pidmap(2)
/// and pidmap_info(2).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PidmapReq {
    pub size: u32,
    /// `PIDMAP_SCOPE_*`.
    pub scope: u32,
    /// The last id returned, 0 to start (exclusive).
    pub last_id: u64,
    /// THREADS, CHILDREN: a pidfd or `PIDFD_SELF_*`; else 0.
    pub pidfd: i32,
    /// With `PIDMAP_VIEW_PROCFS`: the procfs root fd; else 0.
    pub procfs_fd: i32,
    /// `PIDMAP_FILTER_NO_KTHREADS`, `PIDMAP_VIEW_PROCFS`.
    pub filter: u32,
    /// pidmap_info(2): `size_of::<PidmapInfo>()`; pidmap(2): 0.
    pub info_size: u32,
    /// pidmap_info(2): the `PIDMAP_INFO_*` fields wanted; pidmap(2): 0.
    pub info_mask: u64,
    /// With `PIDMAP_VIEW_PIDNS`: a pid namespace fd; else 0 (the crate
    /// never names one).
    pub pidns_fd: i32,
    pub reserved: u32,
}

/// `struct pidmap_info`, `PIDMAP_INFO_SIZE_VER0`: one task record.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PidmapInfo {
    pub mask: u64,
    pub supported_mask: u64,
    pub pidfs_id: u64,
    pub tid: u32,
    pub tgid: u32,
    pub ppid: u32,
    pub ruid: u32,
    pub euid: u32,
    pub nice: i32,
    pub priority: i32,
    pub policy: u32,
    pub num_threads: u32,
    pub task_flags: u32,
    /// Clock ticks (`USER_HZ`).
    pub utime: u64,
    pub stime: u64,
    pub start_time: u64,
    pub rss_pages: u64,
    pub state: u8,
    pub spare: [u8; 7],
    pub comm: [u8; 64],
}

impl PidmapInfo {
    /// `tid` as a `pid_t`: the kernel writes a pid, at most
    /// `PID_MAX_LIMIT` (2^22), into the `__u32`, so the bits are the same.
    pub fn tid(&self) -> i32 {
        pid_t(self.tid)
    }

    /// `tgid` as a `pid_t`, as [`tid`](Self::tid).
    pub fn tgid(&self) -> i32 {
        pid_t(self.tgid)
    }

    /// `ppid` as a `pid_t`, as [`tid`](Self::tid); 0 for a task without a
    /// parent in the view.
    pub fn ppid(&self) -> i32 {
        pid_t(self.ppid)
    }
}

/// A record's `__u32` id as the `pid_t` it holds, bit for bit.
fn pid_t(id: u32) -> i32 {
    i32::from_ne_bytes(id.to_ne_bytes())
}

impl Default for PidmapInfo {
    fn default() -> Self {
        PidmapInfo {
            mask: 0,
            supported_mask: 0,
            pidfs_id: 0,
            tid: 0,
            tgid: 0,
            ppid: 0,
            ruid: 0,
            euid: 0,
            nice: 0,
            priority: 0,
            policy: 0,
            num_threads: 0,
            task_flags: 0,
            utime: 0,
            stime: 0,
            start_time: 0,
            rss_pages: 0,
            state: 0,
            spare: [0; 7],
            comm: [0; 64],
        }
    }
}

/// `struct fdmap_req`, `FDMAP_REQ_SIZE_VER0`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FdmapReq {
    pub size: u32,
    /// A pidfd or `PIDFD_SELF_*`.
    pub pidfd: i32,
    /// The first fd listed (inclusive).
    pub first_fd: u32,
    /// `FDMAP_VIEW_PROCFS` or 0.
    pub view: u32,
    /// With `FDMAP_VIEW_PROCFS`: the procfs root fd; else 0.
    pub procfs_fd: i32,
    /// With `FDMAP_VIEW_PIDNS`: a pid namespace fd; else 0 (the crate
    /// never names one).
    pub pidns_fd: i32,
}

pub(crate) const PIDMAP_REQ_SIZE_VER0: u32 = 48;
pub(crate) const FDMAP_REQ_SIZE_VER0: u32 = 24;
pub(crate) const PIDMAP_INFO_SIZE_VER0: u32 = 168;

// The structs this crate was built with: each one's first version.
const _: () = assert!(
    size_of::<PidmapReq>() == 48
        && PIDMAP_REQ_SIZE_VER0 == 48
        && size_of::<FdmapReq>() == 24
        && FDMAP_REQ_SIZE_VER0 == 24
        && size_of::<PidmapInfo>() == 168
        && PIDMAP_INFO_SIZE_VER0 == 168
);

/// The size field of a request (or `info_size`): the struct this crate was
/// built with.
pub(crate) fn req_size<T>() -> u32 {
    u32::try_from(size_of::<T>()).expect("an ABI struct is at most 168 bytes")
}

/// `pidmap(req, ids, nr, 0)`: ids into `ids`. The request's record fields
/// are zeroed here (pidmap(2) requires it). Returns the count the kernel
/// says it wrote, unclamped (a value above `ids.len()` is an ABI violation
/// for the caller to report), or the raw errno.
pub(crate) fn list_ids(req: &PidmapReq, ids: &mut [u32]) -> Result<u64, i32> {
    let req = PidmapReq {
        size: req_size::<PidmapReq>(),
        info_size: 0,
        info_mask: 0,
        ..*req
    };
    let Some(numbers) = enabled_numbers() else {
        return Err(libc::ENOSYS);
    };
    let nr = clamped_count(ids.len());
    // SAFETY: `req` is a live, readable `repr(C)` request of the ABI's
    // layout and size; pidmap(2) writes at most `nr <= ids.len()` `__u32`
    // ids into `ids` (its element type is fixed: records are another
    // call's), and any bytes are a valid `u32`. The number is the series'
    // pidmap(2), issued only in a build that opted in to it (see the
    // module docs). A kernel without the call returns ENOSYS without
    // touching memory.
    unsafe {
        raw(
            numbers.pidmap,
            std::ptr::from_ref(&req).cast(),
            ids.as_mut_ptr().cast(),
            nr,
        )
    }
}

/// `fdmap(req, fds, nr, 0)`: fd numbers into `fds`. Returns as
/// [`list_ids`] does.
pub(crate) fn list_fds(req: &FdmapReq, fds: &mut [i32]) -> Result<u64, i32> {
    let req = FdmapReq {
        size: req_size::<FdmapReq>(),
        ..*req
    };
    let Some(numbers) = enabled_numbers() else {
        return Err(libc::ENOSYS);
    };
    let nr = clamped_count(fds.len());
    // SAFETY: as in `list_ids`: a readable request of fdmap(2)'s layout,
    // and fdmap(2) writes at most `nr <= fds.len()` `__s32` fd numbers.
    unsafe {
        raw(
            numbers.fdmap,
            std::ptr::from_ref(&req).cast(),
            fds.as_mut_ptr().cast(),
            nr,
        )
    }
}

/// `pidmap_info(req, records, nr, 0)`: task records into `records`, with
/// `req.info_size` set to `size_of::<PidmapInfo>()` here, so the kernel
/// writes records of exactly this struct's size. Returns as [`list_ids`]
/// does.
pub(crate) fn read_records(req: &PidmapReq, records: &mut [PidmapInfo]) -> Result<u64, i32> {
    let req = PidmapReq {
        size: req_size::<PidmapReq>(),
        info_size: req_size::<PidmapInfo>(),
        ..*req
    };
    let Some(numbers) = enabled_numbers() else {
        return Err(libc::ENOSYS);
    };
    let nr = clamped_count(records.len());
    // SAFETY: a readable request whose `info_size` is the size of
    // `PidmapInfo`; pidmap_info(2) writes at most `nr <= records.len()`
    // records of `info_size` bytes each (copy_struct_to_user()).
    // `PidmapInfo` is plain integers and byte arrays, so any bytes written
    // are a valid value.
    unsafe {
        raw(
            numbers.pidmap_info,
            std::ptr::from_ref(&req).cast(),
            records.as_mut_ptr().cast(),
            nr,
        )
    }
}

/// A buffer length as the calls' `nr`, at most [`MAX_NR`].
fn clamped_count(len: usize) -> usize {
    len.min(MAX_NR)
}

/// Ask the kernel whether the calls exist: pidmap(2), then fdmap(2), each
/// with a valid, zeroed request, no buffer, count 0 and a non-zero flags
/// argument. A patched kernel answers `EINVAL`, an unpatched one `ENOSYS`,
/// a seccomp filter
/// whatever it was told (often `EPERM`, or it kills the process: see the
/// crate docs on sandboxes). Nothing is ever written. Takes no syscall
/// number: it can only issue pidmap(2) and fdmap(2).
pub(crate) fn probe() -> (Result<u64, i32>, Result<u64, i32>) {
    let Some(numbers) = enabled_numbers() else {
        return (Err(libc::ENOSYS), Err(libc::ENOSYS));
    };
    let p = PidmapReq {
        size: req_size::<PidmapReq>(),
        ..PidmapReq::default()
    };
    let f = FdmapReq {
        size: req_size::<FdmapReq>(),
        ..FdmapReq::default()
    };
    let null = std::ptr::null_mut();
    // SAFETY: readable request structs; a NULL buffer with count 0, so
    // nothing can be written even by a kernel ignoring the flags.
    let pr = unsafe {
        raw_flags(
            numbers.pidmap,
            std::ptr::from_ref(&p).cast(),
            null,
            0,
            PROBE_INVALID_FLAG,
        )
    };
    if pr != Err(libc::EINVAL) {
        // Don't issue fdmap when pidmap already says no.
        return (pr, Err(libc::EINVAL));
    }
    // SAFETY: as above.
    let fr = unsafe {
        raw_flags(
            numbers.fdmap,
            std::ptr::from_ref(&f).cast(),
            null,
            0,
            PROBE_INVALID_FLAG,
        )
    };
    (pr, fr)
}

/// Ask whether pidmap_info(2) takes our records: a valid `PROCS` request
/// for every field, over the default view, with count 0. A kernel with
/// the call answers 0 (nothing is written).
pub(crate) fn probe_info() -> Result<u64, i32> {
    let req = PidmapReq {
        scope: PIDMAP_SCOPE_PROCS,
        info_mask: PIDMAP_INFO_FIELDS,
        ..PidmapReq::default()
    };
    read_records(&req, &mut [])
}

/// `raw_flags` with flags 0, as every real call is made.
///
/// # Safety
///
/// As for [`raw_flags`].
unsafe fn raw(nr: i64, req: *const u8, buf: *mut u8, count: usize) -> Result<u64, i32> {
    // SAFETY: forwarded from the caller's contract.
    unsafe { raw_flags(nr, req, buf, count, 0) }
}

/// # Safety
///
/// `req` must point to a readable request struct of the call's ABI, and
/// `buf` must be valid for writes of `count` elements of the call's element
/// type (`u32` ids, `i32` fds, `info_size`-byte records), or `count == 0`.
unsafe fn raw_flags(
    nr: i64,
    req: *const u8,
    buf: *mut u8,
    count: usize,
    flags: u32,
) -> Result<u64, i32> {
    let nr = libc::c_long::try_from(nr).map_err(|_| libc::ENOSYS)?;
    let count = libc::size_t::from(count);
    // SAFETY: forwarded from the caller's contract. `count` is a `size_t`
    // as the ABI's `nr`; `flags` goes through the variadic call as a
    // full-width `c_ulong` (zero-extended from the ABI's `unsigned int`).
    let ret = unsafe { libc::syscall(nr, req, buf, count, libc::c_ulong::from(flags)) };
    if ret < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    } else {
        // Non-negative, so it fits; not clamped (see `list_ids`).
        Ok(u64::try_from(ret).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    //! The numbers, constants and struct layouts above against the uapi
    //! headers. The crate carries a copy of the headers (abi/pidmap.h,
    //! abi/fdmap.h) and of the series' syscall-table lines
    //! (abi/syscall-numbers.tbl), checked here always. In the repository,
    //! those copies are also checked against the series: the headers from
    //! the `+` lines of the patches in kernel-patches/ that touch
    //! include/uapi/linux/{pidmap,fdmap}.h, and the table lines the
    //! patches add. See `crate::abi_sources`.
    use super::*;
    use crate::abi_sources;
    use std::collections::BTreeMap;
    use std::mem::{align_of, offset_of};

    const CHECKED_IN_HEADER: &str = include_str!("../abi/pidmap.h");
    const CHECKED_IN_FDMAP_HEADER: &str = include_str!("../abi/fdmap.h");
    const CHECKED_IN_NUMBERS: &str = include_str!("../abi/syscall-numbers.tbl");

    /// The repository's sources, or a note that the packaged crate has
    /// none.
    fn repo(test: &str) -> Option<abi_sources::Sources> {
        let s = abi_sources::from_repo();
        if s.is_none() {
            eprintln!(
                "note: skipping {test}: no kernel-patches/ around the crate \
                 (a packaged crate checks its abi/ copies only)"
            );
        }
        s
    }

    /// A C integer literal (`0x800u`, `96`, `1ULL`).
    fn literal(v: &str) -> Option<u64> {
        let v = v.trim().trim_end_matches(['u', 'U', 'l', 'L']);
        match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => v.parse().ok(),
        }
    }

    /// `#define NAME VALUE` lines: a literal, or `(A << B)` of literals.
    fn defines(header: &str) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for line in header.lines() {
            let line = line.split("/*").next().unwrap_or("");
            let mut words = line.split_whitespace();
            if words.next() != Some("#define") {
                continue;
            }
            let Some(name) = words.next() else {
                continue;
            };
            let value: String = words.collect::<Vec<_>>().join(" ");
            let value = value.trim().trim_start_matches('(').trim_end_matches(')');
            let parsed = match value.split_once("<<") {
                Some((a, b)) => literal(a).zip(literal(b)).map(|(a, b)| a << b),
                None => literal(value),
            };
            if let Some(n) = parsed {
                out.insert(name.to_string(), n);
            }
        }
        out
    }

    /// The fields of the last `struct NAME { ... };`, in order, as (type,
    /// name, array length).
    fn fields(header: &str, name: &str) -> Vec<(String, String, usize)> {
        let open = format!("struct {name} {{");
        let start = header.rfind(&open).unwrap_or_else(|| panic!("no {open}"));
        let body = &header[start + open.len()..];
        let body = &body[..body.find("};").expect("end of struct")];
        // Drop comments, then split declarations on ';'.
        let mut text = String::new();
        let mut rest = body;
        while let Some(i) = rest.find("/*") {
            text.push_str(&rest[..i]);
            rest = &rest[i + rest[i..].find("*/").expect("comment end") + 2..];
        }
        text.push_str(rest);
        text.split(';')
            .filter_map(|decl| {
                let mut w = decl.split_whitespace();
                let ty = w.next()?.to_string();
                let declarator = w.next()?;
                let (field, len) = match declarator.split_once('[') {
                    Some((f, n)) => (f, n.trim_end_matches(']').parse().expect("array length")),
                    None => (declarator, 1),
                };
                Some((ty, field.to_string(), len))
            })
            .collect()
    }

    /// (name, offset, size, signed) of each field, with C's natural
    /// alignment, and the struct's size.
    fn layout(
        header: &str,
        name: &str,
        source: &str,
    ) -> (Vec<(String, usize, usize, bool)>, usize) {
        let mut off: usize = 0;
        let mut align_max: usize = 1;
        let mut out = Vec::new();
        for (ty, field, len) in fields(header, name) {
            let (size, signed) = match ty.as_str() {
                "__u8" | "char" => (1, false),
                "__u32" => (4, false),
                "__s32" => (4, true),
                "__u64" => (8, false),
                "__s64" => (8, true),
                other => panic!("{source}: unexpected field type {other}"),
            };
            off = off.next_multiple_of(size);
            align_max = align_max.max(size);
            out.push((field, off, size * len, signed));
            off += size * len;
        }
        (out, off.next_multiple_of(align_max))
    }

    /// Our struct's fields as (name, offset, size, signed).
    type Ours = [(&'static str, usize, usize, bool)];

    fn same_layout(header: &str, name: &str, ours: &Ours, size: usize, source: &str) {
        let (theirs, their_size) = layout(header, name, source);
        let theirs: Vec<(&str, usize, usize, bool)> = theirs
            .iter()
            .map(|(f, o, s, g)| (f.as_str(), *o, *s, *g))
            .collect();
        assert_eq!(theirs, ours, "{source}: struct {name}");
        assert_eq!(their_size, size, "{source}: sizeof(struct {name})");
    }

    macro_rules! ours {
        ($ty:ty: $($field:ident $cname:literal $size:literal $signed:literal),* $(,)?) => {
            [$(($cname, offset_of!($ty, $field), $size, $signed)),*]
        };
    }

    /// Every define of `d` is in `want`, with our value, and no other.
    fn same_defines(d: &BTreeMap<String, u64>, want: &[(&str, u64)], source: &str) {
        for (name, ours) in want {
            assert_eq!(d.get(*name), Some(ours), "{source}: {name}");
        }
        // Every define is one we know (a new one must be looked at here
        // first).
        let known: Vec<&str> = want.iter().map(|(n, _)| *n).collect();
        for name in d.keys() {
            assert!(
                known.contains(&name.as_str()),
                "{source}: unknown define {name}"
            );
        }
    }

    /// pidmap.h against this module.
    fn check(header: &str, source: &str) {
        assert!(
            header.contains("struct pidmap_req") && header.contains("struct pidmap_info"),
            "{source}: no uapi header of the series found (struct pidmap_req or pidmap_info missing)"
        );
        let d = defines(header);
        // PIDMAP_VIEW_PIDNS is the kernel's: the crate never names a pid
        // namespace, so it has no constant of its own.
        let want: [(&str, u64); 25] = [
            ("PIDMAP_SCOPE_PROCS", PIDMAP_SCOPE_PROCS.into()),
            ("PIDMAP_SCOPE_TASKS", PIDMAP_SCOPE_TASKS.into()),
            ("PIDMAP_SCOPE_THREADS", PIDMAP_SCOPE_THREADS.into()),
            ("PIDMAP_SCOPE_CHILDREN", PIDMAP_SCOPE_CHILDREN.into()),
            (
                "PIDMAP_FILTER_NO_KTHREADS",
                PIDMAP_FILTER_NO_KTHREADS.into(),
            ),
            ("PIDMAP_VIEW_PROCFS", PIDMAP_VIEW_PROCFS.into()),
            ("PIDMAP_VIEW_PIDNS", 1 << 2),
            ("PIDMAP_REQ_SIZE_VER0", PIDMAP_REQ_SIZE_VER0.into()),
            ("PIDMAP_INFO_SIZE_VER0", PIDMAP_INFO_SIZE_VER0.into()),
            ("PIDMAP_INFO_ID", PIDMAP_INFO_ID),
            ("PIDMAP_INFO_PPID", PIDMAP_INFO_PPID),
            ("PIDMAP_INFO_CREDS", PIDMAP_INFO_CREDS),
            ("PIDMAP_INFO_SCHED", PIDMAP_INFO_SCHED),
            ("PIDMAP_INFO_NUM_THREADS", PIDMAP_INFO_NUM_THREADS),
            ("PIDMAP_INFO_CPUTIME", PIDMAP_INFO_CPUTIME),
            ("PIDMAP_INFO_START_TIME", PIDMAP_INFO_START_TIME),
            ("PIDMAP_INFO_RSS", PIDMAP_INFO_RSS),
            ("PIDMAP_INFO_STATE", PIDMAP_INFO_STATE),
            ("PIDMAP_INFO_COMM", PIDMAP_INFO_COMM),
            ("PIDMAP_INFO_TASK_FLAGS", PIDMAP_INFO_TASK_FLAGS),
            ("PIDMAP_INFO_SUPPORTED_MASK", PIDMAP_INFO_SUPPORTED_MASK),
            ("PIDMAP_TASK_KTHREAD", PIDMAP_TASK_KTHREAD.into()),
            ("PIDMAP_TASK_USER_WORKER", PIDMAP_TASK_USER_WORKER.into()),
            ("PIDMAP_TASK_EXITING", PIDMAP_TASK_EXITING.into()),
            ("PIDMAP_TASK_FORKNOEXEC", PIDMAP_TASK_FORKNOEXEC.into()),
        ];
        same_defines(&d, &want, source);
        // PIDMAP_INFO_FIELDS (InfoFields::ALL) is exactly the header's
        // field bits (everything but the supported-mask request).
        let info_bits = d
            .iter()
            .filter(|(n, _)| n.starts_with("PIDMAP_INFO_") && !n.contains("SIZE"))
            .fold(0, |acc, (_, v)| acc | v);
        assert_eq!(
            info_bits & !PIDMAP_INFO_SUPPORTED_MASK,
            PIDMAP_INFO_FIELDS,
            "{source}"
        );
        // And PIDMAP_TASK_FLAGS (TaskFlags::ALL) the task flag bits.
        let task_bits = d
            .iter()
            .filter(|(n, _)| n.starts_with("PIDMAP_TASK_"))
            .fold(0, |acc, (_, v)| acc | v);
        assert_eq!(task_bits, u64::from(PIDMAP_TASK_FLAGS), "{source}");

        let req = ours!(PidmapReq:
            size "size" 4 false, scope "scope" 4 false, last_id "last_id" 8 false,
            pidfd "pidfd" 4 true, procfs_fd "procfs_fd" 4 true,
            filter "filter" 4 false, info_size "info_size" 4 false,
            info_mask "info_mask" 8 false, pidns_fd "pidns_fd" 4 true,
            reserved "__reserved" 4 false,
        );
        same_layout(header, "pidmap_req", &req, size_of::<PidmapReq>(), source);
        let info = ours!(PidmapInfo:
            mask "mask" 8 false, supported_mask "supported_mask" 8 false,
            pidfs_id "pidfs_id" 8 false, tid "tid" 4 false, tgid "tgid" 4 false,
            ppid "ppid" 4 false, ruid "ruid" 4 false, euid "euid" 4 false,
            nice "nice" 4 true, priority "priority" 4 true,
            policy "policy" 4 false, num_threads "num_threads" 4 false,
            task_flags "task_flags" 4 false, utime "utime" 8 false,
            stime "stime" 8 false, start_time "start_time" 8 false,
            rss_pages "rss_pages" 8 false, state "state" 1 false,
            spare "__spare" 7 false, comm "comm" 64 false,
        );
        same_layout(
            header,
            "pidmap_info",
            &info,
            size_of::<PidmapInfo>(),
            source,
        );
        assert_eq!(align_of::<PidmapInfo>(), 8);
        assert_eq!(
            u64::from(req_size::<PidmapReq>()),
            d["PIDMAP_REQ_SIZE_VER0"]
        );
        assert_eq!(
            u64::from(req_size::<PidmapInfo>()),
            d["PIDMAP_INFO_SIZE_VER0"]
        );
    }

    /// fdmap.h against this module.
    fn check_fdmap(header: &str, source: &str) {
        assert!(
            header.contains("struct fdmap_req"),
            "{source}: no fdmap uapi header found"
        );
        let d = defines(header);
        // FDMAP_VIEW_PIDNS, as PIDMAP_VIEW_PIDNS: the kernel's alone.
        let want: [(&str, u64); 3] = [
            ("FDMAP_VIEW_PROCFS", FDMAP_VIEW_PROCFS.into()),
            ("FDMAP_VIEW_PIDNS", 1 << 1),
            ("FDMAP_REQ_SIZE_VER0", FDMAP_REQ_SIZE_VER0.into()),
        ];
        same_defines(&d, &want, source);
        let fdreq = ours!(FdmapReq:
            size "size" 4 false, pidfd "pidfd" 4 true, first_fd "first_fd" 4 false,
            view "view" 4 false, procfs_fd "procfs_fd" 4 true,
            pidns_fd "pidns_fd" 4 true,
        );
        same_layout(header, "fdmap_req", &fdreq, size_of::<FdmapReq>(), source);
        assert_eq!(u64::from(req_size::<FdmapReq>()), d["FDMAP_REQ_SIZE_VER0"]);
    }

    #[test]
    fn abi_matches_the_checked_in_headers() {
        check(CHECKED_IN_HEADER, "abi/pidmap.h");
        check_fdmap(CHECKED_IN_FDMAP_HEADER, "abi/fdmap.h");
    }

    #[test]
    fn checked_in_headers_are_the_series() {
        if let Some(s) = repo("checked_in_headers_are_the_series") {
            let source = "kernel-patches/*.patch touching include/uapi/linux/pidmap.h";
            check(&s.header_from_patch, source);
            assert_eq!(
                s.header_from_patch.trim_end(),
                CHECKED_IN_HEADER.trim_end(),
                "abi/pidmap.h must be a copy of the header the series leaves ({source})"
            );
            let source = "kernel-patches/*.patch touching include/uapi/linux/fdmap.h";
            check_fdmap(&s.fdmap_header_from_patch, source);
            assert_eq!(
                s.fdmap_header_from_patch.trim_end(),
                CHECKED_IN_FDMAP_HEADER.trim_end(),
                "abi/fdmap.h must be a copy of the header the series leaves ({source})"
            );
        }
    }

    #[test]
    fn parser_sees_a_wrong_value() {
        check(CHECKED_IN_HEADER, "unmutated");
        let mutations = [
            (
                "PIDMAP_VIEW_PROCFS\t\t(1U << 1)",
                "PIDMAP_VIEW_PROCFS (1U << 2)",
            ),
            ("__u64 last_id;", "__u64 last_idx;"),
            ("(1ULL << 7)", "(1ULL << 11)"),
            ("__s32 nice;", "__u32 nice;"),
            ("char comm[64];", "char comm[16];"),
            ("__u64 info_mask;", "__u32 info_mask;"),
            (
                "#define PIDMAP_TASK_EXITING\t(1U << 2)",
                "#define PIDMAP_TASK_X 4",
            ),
        ];
        for (from, to) in mutations {
            let at = CHECKED_IN_HEADER
                .rfind(from)
                .unwrap_or_else(|| panic!("{from} must hit"));
            let bad = format!(
                "{}{to}{}",
                &CHECKED_IN_HEADER[..at],
                &CHECKED_IN_HEADER[at + from.len()..]
            );
            assert!(
                std::panic::catch_unwind(|| check(&bad, "mutated")).is_err(),
                "{from} -> {to} went unnoticed"
            );
        }
        let bad = CHECKED_IN_FDMAP_HEADER.replace("__u32 first_fd;", "__s32 first_fd;");
        assert_ne!(bad, CHECKED_IN_FDMAP_HEADER);
        assert!(std::panic::catch_unwind(|| check_fdmap(&bad, "mutated")).is_err());
    }

    /// `(table, number, call)` of each line of a table listing: the
    /// checked-in "path\tnr\tcall" lines, or the series' "path\tnr abi call
    /// entry" ones.
    fn table_entries(text: &str) -> Vec<(String, i64, String)> {
        text.lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|line| {
                let (file, entry) = line.split_once('\t').expect("path, tab, entry");
                let w: Vec<&str> = entry.split_whitespace().collect();
                let nr: i64 = w[0].parse().expect("a number");
                let call = if w.len() == 2 { w[1] } else { w[2] };
                (file.to_string(), nr, call.to_string())
            })
            .collect()
    }

    /// Each table in [`SERIES_TABLES`] has the three calls once each, at
    /// its numbers (less the MIPS base the table leaves out), and there is
    /// no other table.
    fn wired_tables_say(entries: &[(String, i64, String)], source: &str) {
        let mut seen: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (file, nr, call) in entries {
            let Some((table, n)) = SERIES_TABLES.iter().find(|(t, _)| t == file) else {
                panic!("{source}: {file}: a table the crate does not know");
            };
            let base = if table.contains("/mips/") {
                n.pidmap - SERIES_NUMBERS.pidmap
            } else {
                0
            };
            let want = match call.as_str() {
                "pidmap" => n.pidmap,
                "pidmap_info" => n.pidmap_info,
                "fdmap" => n.fdmap,
                other => panic!("{source}: {file}: unexpected call {other}"),
            };
            assert_eq!(nr + base, want, "{source}: {file}: {call}");
            seen.entry(table).or_default().push(call);
        }
        for (table, _) in SERIES_TABLES {
            let mut calls = seen.get(table).cloned().unwrap_or_default();
            calls.sort_unstable();
            assert_eq!(
                calls,
                ["fdmap", "pidmap", "pidmap_info"],
                "{source}: {table}: each call once"
            );
        }
    }

    #[test]
    fn syscall_numbers_match_the_checked_in_table() {
        let entries = table_entries(CHECKED_IN_NUMBERS);
        wired_tables_say(&entries, "abi/syscall-numbers.tbl");
        // The numbers of this build are one of the tables'.
        let n = SYSCALL_NUMBERS.expect("wired on the test architectures");
        assert!(SERIES_TABLES.iter().any(|(_, t)| *t == n));
    }

    #[test]
    fn syscall_numbers_match_every_table_of_the_series() {
        let Some(s) = repo("syscall_numbers_match_every_table_of_the_series") else {
            return;
        };
        let theirs = table_entries(&s.syscall_tables);
        wired_tables_say(&theirs, "kernel-patches/*.patch");
        let mut ours = table_entries(CHECKED_IN_NUMBERS);
        let mut theirs = theirs;
        ours.sort();
        theirs.sort();
        assert_eq!(ours, theirs, "abi/syscall-numbers.tbl is the series' lines");
    }

    #[test]
    fn numbers_are_the_contracts() {
        let n = SYSCALL_NUMBERS.expect("wired on the test architectures");
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            assert_eq!((n.pidmap, n.pidmap_info, n.fdmap), (473, 474, 475));
        }
        assert_eq!(
            enabled_numbers().is_some(),
            cfg!(feature = "series-syscalls")
        );
        assert_eq!(based(5000).fdmap, 5475);
    }

    /// Without the feature every wrapper answers ENOSYS without entering
    /// the kernel.
    #[test]
    fn wrappers_refuse_without_the_feature() {
        let req = PidmapReq::default();
        let mut ids = [0u32; 4];
        let mut fds = [0i32; 4];
        let mut recs = [PidmapInfo::default(); 1];
        let fdreq = FdmapReq::default();
        if cfg!(not(feature = "series-syscalls")) {
            assert_eq!(list_ids(&req, &mut ids), Err(libc::ENOSYS));
            assert_eq!(list_fds(&fdreq, &mut fds), Err(libc::ENOSYS));
            assert_eq!(read_records(&req, &mut recs), Err(libc::ENOSYS));
            assert_eq!(probe(), (Err(libc::ENOSYS), Err(libc::ENOSYS)));
            assert_eq!(probe_info(), Err(libc::ENOSYS));
        }
        assert_eq!(clamped_count(usize::MAX), MAX_NR);
        assert_eq!(clamped_count(7), 7);
    }
}

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
    //! The numbers, constants and struct layouts above against the ABI
    //! folder the crate packages (abi/: the series' uapi headers and its
    //! syscall-table lines, written from the series by `cargo xtask abi`,
    //! which checks that they still are). The layouts are not parsed here:
    //! gcc compiles a small program against the headers that prints what C
    //! makes of them.
    use super::*;
    use std::collections::BTreeMap;
    use std::mem::{align_of, offset_of};
    use std::path::PathBuf;
    use std::process::Command;

    const CHECKED_IN_NUMBERS: &str = include_str!("../abi/syscall-numbers.tbl");
    // Built in, so that the tests need no source tree where they run.
    const PIDMAP_H: &str = include_str!("../abi/linux/pidmap.h");
    const FDMAP_H: &str = include_str!("../abi/linux/fdmap.h");

    /// One field of one of our structs: its C struct, its C name, its
    /// offset and size here, whether it is signed here, whether it is an
    /// array (whose element signedness is not compared: `char` has none
    /// of its own).
    type Field = (&'static str, &'static str, usize, usize, bool, bool);

    macro_rules! fields {
        ($ty:ty, $cstruct:literal: $($field:ident $cname:literal $signed:literal $array:literal),* $(,)?) => {
            [$((
                $cstruct,
                $cname,
                offset_of!($ty, $field),
                std::mem::size_of_val(&<$ty>::default().$field),
                $signed,
                $array,
            )),*]
        };
    }

    /// Every field of our three structs, in order.
    fn our_fields() -> Vec<Field> {
        let mut v = Vec::new();
        v.extend(fields!(PidmapReq, "pidmap_req":
            size "size" false false, scope "scope" false false,
            last_id "last_id" false false, pidfd "pidfd" true false,
            procfs_fd "procfs_fd" true false, filter "filter" false false,
            info_size "info_size" false false, info_mask "info_mask" false false,
            pidns_fd "pidns_fd" true false, reserved "__reserved" false false,
        ));
        v.extend(fields!(PidmapInfo, "pidmap_info":
            mask "mask" false false, supported_mask "supported_mask" false false,
            pidfs_id "pidfs_id" false false, tid "tid" false false,
            tgid "tgid" false false, ppid "ppid" false false,
            ruid "ruid" false false, euid "euid" false false,
            nice "nice" true false, priority "priority" true false,
            policy "policy" false false, num_threads "num_threads" false false,
            task_flags "task_flags" false false, utime "utime" false false,
            stime "stime" false false, start_time "start_time" false false,
            rss_pages "rss_pages" false false, state "state" false false,
            spare "__spare" false true, comm "comm" false true,
        ));
        v.extend(fields!(FdmapReq, "fdmap_req":
            size "size" false false, pidfd "pidfd" true false,
            first_fd "first_fd" false false, view "view" false false,
            procfs_fd "procfs_fd" true false, pidns_fd "pidns_fd" true false,
        ));
        v
    }

    /// Our structs: (C name, size, alignment).
    fn our_structs() -> [(&'static str, usize, usize); 3] {
        [
            (
                "pidmap_req",
                size_of::<PidmapReq>(),
                align_of::<PidmapReq>(),
            ),
            (
                "pidmap_info",
                size_of::<PidmapInfo>(),
                align_of::<PidmapInfo>(),
            ),
            ("fdmap_req", size_of::<FdmapReq>(), align_of::<FdmapReq>()),
        ]
    }

    /// Every define of the headers, with our value. PIDMAP_VIEW_PIDNS and
    /// FDMAP_VIEW_PIDNS are the kernel's alone: the crate never names a
    /// pid namespace.
    fn our_defines() -> BTreeMap<&'static str, u64> {
        BTreeMap::from([
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
            ("FDMAP_VIEW_PROCFS", FDMAP_VIEW_PROCFS.into()),
            ("FDMAP_VIEW_PIDNS", 1 << 1),
            ("FDMAP_REQ_SIZE_VER0", FDMAP_REQ_SIZE_VER0.into()),
        ])
    }

    /// What C makes of the headers in `abi`.
    #[derive(Debug, Default)]
    struct CSays {
        /// Each `PIDMAP_*` and `FDMAP_*` define, evaluated.
        defines: BTreeMap<String, u64>,
        /// (struct, field) -> (offset, size, signed) for each of
        /// [`our_fields`].
        fields: BTreeMap<(String, String), (usize, usize, bool)>,
        /// struct -> (size, alignment).
        structs: BTreeMap<String, (usize, usize)>,
    }

    /// A folder below the temporary one, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(what: &str) -> Scratch {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "pidmap-{what}-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Runs `cmd`, panicking with its stderr if it fails; `None` if gcc
    /// is not installed (the guest that runs these tests has none).
    fn gcc_output(cmd: &mut Command) -> Option<String> {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => panic!("cannot run {cmd:?}: {e}"),
            Ok(out) => {
                assert!(
                    out.status.success(),
                    "{cmd:?} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                Some(String::from_utf8_lossy(&out.stdout).into_owned())
            }
        }
    }

    /// Compiles and runs, with gcc, a program that includes `pidmap_h` and
    /// `fdmap_h` as `<linux/pidmap.h>` and `<linux/fdmap.h>` and prints
    /// every `PIDMAP_*`/`FDMAP_*` define (the list from `gcc -dM -E`), and
    /// the offset, size and signedness of each field of [`our_fields`] and
    /// the size and alignment of each struct. `None` without gcc.
    fn c_says(pidmap_h: &str, fdmap_h: &str) -> Option<CSays> {
        let scratch = Scratch::new("abi-layout");
        let abi = scratch.0.join("abi");
        std::fs::create_dir_all(abi.join("linux")).unwrap();
        std::fs::write(abi.join("linux/pidmap.h"), pidmap_h).unwrap();
        std::fs::write(abi.join("linux/fdmap.h"), fdmap_h).unwrap();
        let includes = "#include <linux/pidmap.h>\n#include <linux/fdmap.h>\n";
        let header = scratch.0.join("headers.h");
        std::fs::write(&header, includes).unwrap();
        let macros = gcc_output(
            Command::new("gcc")
                .args(["-E", "-dM", "-I"])
                .arg(&abi)
                .arg(&header),
        )?;
        let names: Vec<&str> = macros
            .lines()
            .filter_map(|l| l.strip_prefix("#define ")?.split_whitespace().next())
            .filter(|n| n.starts_with("PIDMAP_") || n.starts_with("FDMAP_"))
            .collect();
        let mut c =
            format!("#include <stddef.h>\n#include <stdio.h>\n{includes}int main(void)\n{{\n");
        for name in &names {
            c.push_str(&format!(
                "\tprintf(\"define {name} %llu\\n\", (unsigned long long)({name}));\n"
            ));
        }
        for (st, f, _, _, _, array) in our_fields() {
            let member = format!("((struct {st} *)0)->{f}");
            let element = if array {
                format!("{member}[0]")
            } else {
                member.clone()
            };
            c.push_str(&format!(
                "\tprintf(\"field {st} {f} %zu %zu %d\\n\", offsetof(struct {st}, {f}), \
                 sizeof({member}), (__typeof__({element}))-1 < 0);\n"
            ));
        }
        for (st, _, _) in our_structs() {
            c.push_str(&format!(
                "\tprintf(\"struct {st} %zu %zu\\n\", sizeof(struct {st}), _Alignof(struct {st}));\n"
            ));
        }
        c.push_str("\treturn 0;\n}\n");
        let src = scratch.0.join("layout.c");
        let exe = scratch.0.join("layout");
        std::fs::write(&src, c).unwrap();
        gcc_output(
            Command::new("gcc")
                .args(["-Wall", "-Werror", "-I"])
                .arg(&abi)
                .arg("-o")
                .arg(&exe)
                .arg(&src),
        )?;
        let out = gcc_output(&mut Command::new(&exe)).expect("the program just built");
        let mut says = CSays::default();
        for line in out.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            let n = |i: usize| -> usize { w[i].parse().unwrap() };
            match w[0] {
                "define" => {
                    says.defines.insert(w[1].to_string(), w[2].parse().unwrap());
                }
                "field" => {
                    says.fields.insert(
                        (w[1].to_string(), w[2].to_string()),
                        (n(3), n(4), w[5] == "1"),
                    );
                }
                "struct" => {
                    says.structs.insert(w[1].to_string(), (n(2), n(3)));
                }
                _ => panic!("unexpected line {line}"),
            }
        }
        Some(says)
    }

    /// Every way what C says and this module disagree (empty if they
    /// agree).
    fn disagreements(c: &CSays) -> Vec<String> {
        let mut out = Vec::new();
        let ours = our_defines();
        for (name, value) in &c.defines {
            match ours.get(name.as_str()) {
                None => out.push(format!("{name}: a define the crate does not know")),
                Some(v) if v != value => out.push(format!("{name}: {value}, here {v}")),
                Some(_) => {}
            }
        }
        for name in ours.keys().filter(|n| !c.defines.contains_key(**n)) {
            out.push(format!("{name}: not in the headers"));
        }
        // PIDMAP_INFO_FIELDS (InfoFields::ALL) is every field bit of the
        // headers, and PIDMAP_TASK_FLAGS (TaskFlags::ALL) every task flag.
        let bits = |prefix: &str| {
            c.defines
                .iter()
                .filter(|(n, _)| n.starts_with(prefix) && !n.contains("SIZE"))
                .fold(0, |acc, (_, v)| acc | v)
        };
        if bits("PIDMAP_INFO_") & !PIDMAP_INFO_SUPPORTED_MASK != PIDMAP_INFO_FIELDS {
            out.push("PIDMAP_INFO_FIELDS is not every PIDMAP_INFO_* field bit".into());
        }
        if bits("PIDMAP_TASK_") != u64::from(PIDMAP_TASK_FLAGS) {
            out.push("PIDMAP_TASK_FLAGS is not every PIDMAP_TASK_* bit".into());
        }
        for (st, f, off, size, signed, array) in our_fields() {
            let Some(&(c_off, c_size, c_signed)) = c.fields.get(&(st.into(), f.into())) else {
                out.push(format!("{st}.{f}: not in the headers"));
                continue;
            };
            if (c_off, c_size) != (off, size) || (!array && c_signed != signed) {
                out.push(format!(
                    "{st}.{f}: offset {c_off}, size {c_size}, signed {c_signed}; \
                     here {off}, {size}, {signed}"
                ));
            }
        }
        for (st, size, align) in our_structs() {
            // Our fields tile the struct: C has no field we lack, not
            // even in what would be padding.
            let end = our_fields()
                .iter()
                .filter(|fl| fl.0 == st)
                .fold(0, |at, fl| if fl.2 == at { at + fl.3 } else { usize::MAX });
            if c.structs.get(st) != Some(&(size, align)) || end != size {
                out.push(format!(
                    "struct {st}: (size, align) {:?}, here ({size}, {align}), fields end at {end}",
                    c.structs.get(st)
                ));
            }
        }
        out
    }

    #[test]
    fn abi_matches_the_headers() {
        let Some(c) = c_says(PIDMAP_H, FDMAP_H) else {
            eprintln!("note: no gcc here: the layouts are checked where the crate is built");
            return;
        };
        assert_eq!(disagreements(&c), Vec::<String>::new(), "abi/linux/*.h");
        assert_eq!(
            u64::from(req_size::<PidmapReq>()),
            c.defines["PIDMAP_REQ_SIZE_VER0"]
        );
        assert_eq!(
            u64::from(req_size::<PidmapInfo>()),
            c.defines["PIDMAP_INFO_SIZE_VER0"]
        );
        assert_eq!(
            u64::from(req_size::<FdmapReq>()),
            c.defines["FDMAP_REQ_SIZE_VER0"]
        );
    }

    /// The comparison sees a header that differs: each change, made to a
    /// copy of the headers, is a disagreement.
    #[test]
    fn a_changed_header_disagrees() {
        let changes = [
            ("pidmap.h", "__s32 nice;", "__u32 nice;"),
            ("pidmap.h", "char comm[64];", "char comm[16];"),
            ("pidmap.h", "__u64 info_mask;", "__u32 info_mask;"),
            ("pidmap.h", "__u64 last_id;", "__u64 last_idx;"),
            ("pidmap.h", "(1ULL << 7)", "(1ULL << 11)"),
            (
                "pidmap.h",
                "__u8 __spare[7];",
                "__u8 __spare[3];\n\t__u32 new_field;",
            ),
            (
                "pidmap.h",
                "#define PIDMAP_INFO_SIZE_VER0",
                "#define PIDMAP_INFO_NEW (1ULL << 11)\n#define PIDMAP_INFO_SIZE_VER0",
            ),
            ("fdmap.h", "__u32 first_fd;", "__s32 first_fd;"),
        ];
        let mut checked = 0;
        for (file, from, to) in changes {
            let (p, f) = match file {
                "pidmap.h" => (PIDMAP_H.replacen(from, to, 1), FDMAP_H.to_string()),
                _ => (PIDMAP_H.to_string(), FDMAP_H.replacen(from, to, 1)),
            };
            assert!(p != PIDMAP_H || f != FDMAP_H, "{from} must be in {file}");
            // A field renamed away does not compile: gcc fails, and so
            // does the check.
            let c = std::panic::catch_unwind(|| c_says(&p, &f));
            match c {
                Ok(None) => return eprintln!("note: no gcc here"),
                Ok(Some(c)) => assert!(
                    !disagreements(&c).is_empty(),
                    "{from} -> {to} went unnoticed"
                ),
                Err(_) => {}
            }
            checked += 1;
        }
        assert_eq!(checked, changes.len());
    }

    /// `(table, number, call)` of each "path\tnr\tcall" line of
    /// abi/syscall-numbers.tbl.
    fn table_entries(text: &str) -> Vec<(String, i64, String)> {
        text.lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|line| {
                let (file, entry) = line.split_once('\t').expect("path, tab, entry");
                let (nr, call) = entry.split_once('\t').expect("number, tab, call");
                let nr: i64 = nr.parse().expect("a number");
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

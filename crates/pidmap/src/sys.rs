//! The raw system calls (crate-private): syscall numbers, flag bits and the
//! request structs of `include/uapi/linux/pidmap.h` (docs/ABI.md, v2).
//!
//! **Which calls are issued.** The numbers are the series', not assigned
//! upstream: on a kernel without the series they may name another system
//! call, and no probe can prove which call a number is (an unknown call
//! that answers `EINVAL` to a bad flag could have had side effects before
//! answering, as `close_range(2)` would). So unless the crate is built with
//! the `series-syscalls` feature, [`enabled_numbers`] is `None` and no
//! function here enters the kernel: each returns `ENOSYS` at once.
//!
//! **Typed calls.** Each wrapper sets the flags that decide the buffer's
//! element type itself: [`list_ids`] and [`list_fds`] write `i32`s and
//! clear `PIDMAP_INFO`; [`read_records`] writes [`PidmapInfo`]s and sets
//! `PIDMAP_INFO` and `info_size`. No caller can pair a buffer with flags
//! that make the kernel write another type into it.
//!
//! Every integer conversion here is explicit and lossless on 32-bit and
//! 64-bit targets alike (no `as` between integer types).

use std::mem::size_of;

/// The syscall numbers of the series: the same in every table it wires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyscallNumbers {
    /// `pidmap(2)`.
    pub pidmap: i64,
    /// `fdmap(2)`.
    pub fdmap: i64,
}

/// The numbers for the architecture this crate was built for, `None` where
/// the series wires no table (every call then reports `ENOSYS` without
/// entering the kernel).
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "loongarch64"
))]
pub const SYSCALL_NUMBERS: Option<SyscallNumbers> = Some(SyscallNumbers {
    pidmap: 473,
    fdmap: 474,
});

/// The numbers this build may issue: [`SYSCALL_NUMBERS`] with the
/// `series-syscalls` feature, else `None` (no call is ever made).
pub(crate) const fn enabled_numbers() -> Option<SyscallNumbers> {
    if cfg!(feature = "series-syscalls") {
        SYSCALL_NUMBERS
    } else {
        None
    }
}

/// See above: no wired table, so no number that could mean another call.
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "loongarch64"
)))]
pub const SYSCALL_NUMBERS: Option<SyscallNumbers> = None;

pub(crate) const PIDMAP_PROC: u32 = 0x01;
pub(crate) const PIDMAP_ALL_TASKS: u32 = 0x02;
pub(crate) const PIDMAP_TASKS: u32 = 0x04;
pub(crate) const PIDMAP_CHILDREN: u32 = 0x08;
#[cfg(test)]
pub(crate) const PIDMAP_MODE_MASK: u32 = 0x0f;
pub(crate) const PIDMAP_IGNORE_KTHREADS: u32 = 0x100;
pub(crate) const PIDMAP_TARGET_PIDFD: u32 = 0x200;
pub(crate) const PIDMAP_PROCFS: u32 = 0x400;
pub(crate) const PIDMAP_INFO: u32 = 0x800;
pub(crate) const FDMAP_TARGET_PIDFD: u32 = 0x01;

// `struct pidmap_info.mask` / `req->info_mask` bits.
pub(crate) const PIDMAP_INFO_TGID: u64 = 1 << 0;
pub(crate) const PIDMAP_INFO_PPID: u64 = 1 << 1;
pub(crate) const PIDMAP_INFO_STATE: u64 = 1 << 2;
pub(crate) const PIDMAP_INFO_CPUTIME: u64 = 1 << 3;
pub(crate) const PIDMAP_INFO_START_TIME: u64 = 1 << 4;
pub(crate) const PIDMAP_INFO_RSS: u64 = 1 << 5;
pub(crate) const PIDMAP_INFO_COMM: u64 = 1 << 6;
pub(crate) const PIDMAP_INFO_UID: u64 = 1 << 7;
pub(crate) const PIDMAP_INFO_FLAGS: u64 = 1 << 8;
pub(crate) const PIDMAP_INFO_NICE: u64 = 1 << 9;
pub(crate) const PIDMAP_INFO_NUM_THREADS: u64 = 1 << 10;

/// A flag bit no version of the ABI defines: a patched kernel answers the
/// probe with `EINVAL`.
const PROBE_INVALID_FLAG: u32 = 0x8000_0000;

/// `struct pidmap_req`, `PIDMAP_REQ_SIZE_VER1`: the id listings leave the
/// last three fields 0, which every kernel with pidmap(2) accepts
/// (`copy_struct_from_user()`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PidmapReq {
    pub size: u32,
    pub start: i32,
    pub target: i32,
    pub procfs_fd: i32,
    /// With `PIDMAP_INFO`: `size_of::<PidmapInfo>()`; else 0.
    pub info_size: u32,
    pub reserved: u32,
    /// With `PIDMAP_INFO`: the `PIDMAP_INFO_*` fields wanted; else 0.
    pub info_mask: u64,
}

/// `struct pidmap_info`, `PIDMAP_INFO_SIZE_VER0`: one task record.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PidmapInfo {
    pub mask: u64,
    pub tid: i32,
    pub tgid: i32,
    pub ppid: i32,
    pub ruid: u32,
    pub euid: u32,
    pub nice: i32,
    pub num_threads: u32,
    pub flags: u32,
    pub utime_ns: u64,
    pub stime_ns: u64,
    pub start_time_ns: u64,
    pub rss_pages: u64,
    pub comm: [u8; 16],
    pub state: u8,
    pub reserved: [u8; 7],
}

/// `struct fdmap_req`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FdmapReq {
    pub size: u32,
    pub start: i32,
    pub target: i32,
    pub reserved: u32,
}

#[cfg(test)]
pub(crate) const PIDMAP_REQ_SIZE_VER0: u32 = 16;
pub(crate) const PIDMAP_REQ_SIZE_VER1: u32 = 32;
pub(crate) const FDMAP_REQ_SIZE_VER0: u32 = 16;
pub(crate) const PIDMAP_INFO_SIZE_VER0: u32 = 96;

// The structs this crate was built with: pidmap_req's second version, the
// others' first.
const _: () = assert!(
    size_of::<PidmapReq>() == 32
        && PIDMAP_REQ_SIZE_VER1 == 32
        && size_of::<FdmapReq>() == 16
        && FDMAP_REQ_SIZE_VER0 == 16
        && size_of::<PidmapInfo>() == 96
        && PIDMAP_INFO_SIZE_VER0 == 96
);

/// The size field of a request (or `info_size`): the struct this crate was
/// built with.
pub(crate) fn req_size<T>() -> u32 {
    u32::try_from(size_of::<T>()).expect("an ABI struct is at most 96 bytes")
}

/// The flags an id listing may carry: the mode and the modifiers that do
/// not change what the kernel writes (`PIDMAP_INFO` is left out).
const ID_LISTING_FLAGS: u32 = PIDMAP_PROC
    | PIDMAP_ALL_TASKS
    | PIDMAP_TASKS
    | PIDMAP_CHILDREN
    | PIDMAP_IGNORE_KTHREADS
    | PIDMAP_TARGET_PIDFD
    | PIDMAP_PROCFS;

/// `pidmap(req, ids, count, flags)`: ids into `ids`. `flags` is masked to
/// the id-listing flags (no `PIDMAP_INFO`), and the request's record
/// fields are zeroed, so the kernel writes `i32`s only. Returns the count
/// the kernel says it wrote, unclamped (a value above `ids.len()` is an
/// ABI violation for the caller to report), or the raw errno.
pub(crate) fn list_ids(req: &PidmapReq, ids: &mut [i32], flags: u32) -> Result<u64, i32> {
    let req = PidmapReq {
        info_size: 0,
        info_mask: 0,
        ..*req
    };
    let flags = flags & ID_LISTING_FLAGS;
    let Some(numbers) = enabled_numbers() else {
        return Err(libc::ENOSYS);
    };
    let count = clamped_count(ids.len());
    // SAFETY: `req` is a live, readable `repr(C)` request of the ABI's
    // layout; without `PIDMAP_INFO` the kernel writes at most `count <=
    // ids.len()` `i32` ids (ABI.md), and any bytes are a valid `i32`. The
    // number is the series' pidmap(2), issued only in a build that opted
    // in to it (see the module docs). A kernel without the call returns
    // ENOSYS without touching memory.
    unsafe {
        raw(
            numbers.pidmap,
            std::ptr::from_ref(&req).cast(),
            ids.as_mut_ptr().cast(),
            count,
            flags,
        )
    }
}

/// `fdmap(req, fds, count, flags)`: fd numbers into `fds` (`flags` masked
/// to `FDMAP_TARGET_PIDFD`). Returns as [`list_ids`] does.
pub(crate) fn list_fds(req: &FdmapReq, fds: &mut [i32], flags: u32) -> Result<u64, i32> {
    let flags = flags & FDMAP_TARGET_PIDFD;
    let Some(numbers) = enabled_numbers() else {
        return Err(libc::ENOSYS);
    };
    let count = clamped_count(fds.len());
    // SAFETY: as in `list_ids`: a readable request, and fdmap(2) writes
    // at most `count <= fds.len()` `i32` fd numbers.
    unsafe {
        raw(
            numbers.fdmap,
            std::ptr::from_ref(req).cast(),
            fds.as_mut_ptr().cast(),
            count,
            flags,
        )
    }
}

/// `pidmap(req, records, count, flags | PIDMAP_INFO)`: task records into
/// `records`, with `req.info_size` set to `size_of::<PidmapInfo>()` here,
/// so the kernel writes records of exactly this struct's size. Returns as
/// [`list_ids`] does.
pub(crate) fn read_records(
    req: &PidmapReq,
    records: &mut [PidmapInfo],
    flags: u32,
) -> Result<u64, i32> {
    let req = PidmapReq {
        info_size: req_size::<PidmapInfo>(),
        ..*req
    };
    let flags = (flags & ID_LISTING_FLAGS) | PIDMAP_INFO;
    let Some(numbers) = enabled_numbers() else {
        return Err(libc::ENOSYS);
    };
    let count = clamped_count(records.len());
    // SAFETY: a readable request whose `info_size` is the size of
    // `PidmapInfo`; with `PIDMAP_INFO` the kernel writes at most `count <=
    // records.len()` records of `info_size` bytes (ABI.md). `PidmapInfo` is
    // plain integers, so any bytes written are a valid value.
    unsafe {
        raw(
            numbers.pidmap,
            std::ptr::from_ref(&req).cast(),
            records.as_mut_ptr().cast(),
            count,
            flags,
        )
    }
}

/// A buffer length as the ABI's `count`, clamped to `i32::MAX`.
fn clamped_count(len: usize) -> u32 {
    u32::try_from(len.min(MAX_COUNT)).unwrap_or(0x7fff_ffff)
}

/// The largest count handed to the kernel.
const MAX_COUNT: usize = 0x7fff_ffff;

/// Ask the kernel whether the calls exist: each with a valid, zeroed
/// request, no buffer, count 0 and an undefined flag bit. A patched kernel
/// answers `EINVAL`, an unpatched one `ENOSYS`, a seccomp filter whatever
/// it was told (often `EPERM`, or it kills the process: see the crate
/// docs on sandboxes). Nothing is ever written. Takes no syscall number:
/// it can only issue pidmap(2) and fdmap(2).
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
    // nothing can be written even by a kernel ignoring the invalid flag.
    let pr = unsafe {
        raw(
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
        raw(
            numbers.fdmap,
            std::ptr::from_ref(&f).cast(),
            null,
            0,
            PROBE_INVALID_FLAG,
        )
    };
    (pr, fr)
}

/// Ask whether pidmap(2) takes `PIDMAP_INFO`: a valid `PIDMAP_PROC`
/// request for records, over the default view, with count 0. A kernel
/// with task records answers 0; one with pidmap(2) but without them
/// answers `EINVAL` (an unknown flag) or `E2BIG` (`info_size` is beyond its
/// struct). Nothing is written.
pub(crate) fn probe_info() -> Result<u64, i32> {
    let req = PidmapReq {
        size: req_size::<PidmapReq>(),
        ..PidmapReq::default()
    };
    // An empty buffer: count 0, so nothing is written.
    read_records(&req, &mut [], PIDMAP_PROC)
}

/// # Safety
///
/// `req` must point to a readable request struct of the call's ABI, and
/// `buf` must be valid for writes of `count` elements of the size the
/// request and flags select (`i32` ids or `info_size`-byte records), or
/// `count == 0`.
unsafe fn raw(nr: i64, req: *const u8, buf: *mut u8, count: u32, flags: u32) -> Result<u64, i32> {
    let nr = libc::c_long::try_from(nr).map_err(|_| libc::ENOSYS)?;
    // SAFETY: forwarded from the caller's contract. Integer arguments go
    // through the variadic call as full-width `c_ulong`s (zero-extended
    // from the ABI's `__u32`).
    let ret = unsafe {
        libc::syscall(
            nr,
            req,
            buf,
            libc::c_ulong::from(count),
            libc::c_ulong::from(flags),
        )
    };
    if ret < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    } else {
        // Non-negative, so it fits; not clamped (see `call`).
        Ok(u64::try_from(ret).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    //! The numbers, flags and struct layouts above against the uapi header.
    //! The crate carries a copy of the header (abi/pidmap.h) and of its
    //! syscall numbers (abi/syscall-numbers.tbl), checked here always. In
    //! the repository, those copies are also checked against the series:
    //! the header from the `+` lines of the patches in kernel-patches/
    //! that touch include/uapi/linux/pidmap.h, and the contract's copy
    //! from docs/ABI.md (the header block, then the task records' layout
    //! block, which redefines `struct pidmap_req`: the last definition of a
    //! struct is the one checked). See `crate::abi_sources`.
    use super::*;
    use crate::abi_sources;
    use std::collections::BTreeMap;
    use std::mem::{align_of, offset_of};

    const CHECKED_IN_HEADER: &str = include_str!("../abi/pidmap.h");
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

    fn check(header: &str, source: &str) {
        assert!(
            header.contains("pidmap_req"),
            "{source}: no v2 uapi header found (struct pidmap_req missing)"
        );
        assert!(
            header.contains("struct pidmap_info"),
            "{source}: no task records (struct pidmap_info missing)"
        );
        let d = defines(header);
        let want: [(&str, u64); 25] = [
            ("PIDMAP_PROC", PIDMAP_PROC.into()),
            ("PIDMAP_ALL_TASKS", PIDMAP_ALL_TASKS.into()),
            ("PIDMAP_TASKS", PIDMAP_TASKS.into()),
            ("PIDMAP_CHILDREN", PIDMAP_CHILDREN.into()),
            ("PIDMAP_MODE_MASK", PIDMAP_MODE_MASK.into()),
            ("PIDMAP_IGNORE_KTHREADS", PIDMAP_IGNORE_KTHREADS.into()),
            ("PIDMAP_TARGET_PIDFD", PIDMAP_TARGET_PIDFD.into()),
            ("PIDMAP_PROCFS", PIDMAP_PROCFS.into()),
            ("PIDMAP_INFO", PIDMAP_INFO.into()),
            ("FDMAP_TARGET_PIDFD", FDMAP_TARGET_PIDFD.into()),
            ("PIDMAP_REQ_SIZE_VER0", PIDMAP_REQ_SIZE_VER0.into()),
            ("PIDMAP_REQ_SIZE_VER1", PIDMAP_REQ_SIZE_VER1.into()),
            ("FDMAP_REQ_SIZE_VER0", FDMAP_REQ_SIZE_VER0.into()),
            ("PIDMAP_INFO_SIZE_VER0", PIDMAP_INFO_SIZE_VER0.into()),
            ("PIDMAP_INFO_TGID", PIDMAP_INFO_TGID),
            ("PIDMAP_INFO_PPID", PIDMAP_INFO_PPID),
            ("PIDMAP_INFO_STATE", PIDMAP_INFO_STATE),
            ("PIDMAP_INFO_CPUTIME", PIDMAP_INFO_CPUTIME),
            ("PIDMAP_INFO_START_TIME", PIDMAP_INFO_START_TIME),
            ("PIDMAP_INFO_RSS", PIDMAP_INFO_RSS),
            ("PIDMAP_INFO_COMM", PIDMAP_INFO_COMM),
            ("PIDMAP_INFO_UID", PIDMAP_INFO_UID),
            ("PIDMAP_INFO_FLAGS", PIDMAP_INFO_FLAGS),
            ("PIDMAP_INFO_NICE", PIDMAP_INFO_NICE),
            ("PIDMAP_INFO_NUM_THREADS", PIDMAP_INFO_NUM_THREADS),
        ];
        for (name, ours) in want {
            assert_eq!(d.get(name), Some(&ours), "{source}: {name}");
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
        // Our undefined probe bit is outside every flag.
        let flags = d
            .iter()
            .filter(|(n, _)| !n.contains("SIZE") && !n.starts_with("PIDMAP_INFO_"))
            .fold(0, |acc, (_, v)| acc | v);
        assert_eq!(flags & u64::from(PROBE_INVALID_FLAG), 0, "{source}");
        // The crate's InfoFields::ALL is exactly the header's field bits.
        let info_bits = d
            .iter()
            .filter(|(n, _)| n.starts_with("PIDMAP_INFO_") && !n.contains("SIZE"))
            .fold(0, |acc, (_, v)| acc | v);
        assert_eq!(info_bits, crate::InfoFields::ALL.bits(), "{source}");

        macro_rules! ours {
            ($ty:ty: $($field:ident $cname:literal $size:literal $signed:literal),* $(,)?) => {
                [$(($cname, offset_of!($ty, $field), $size, $signed)),*]
            };
        }
        let req = ours!(PidmapReq:
            size "size" 4 false, start "start" 4 true, target "target" 4 true,
            procfs_fd "procfs_fd" 4 true, info_size "info_size" 4 false,
            reserved "__reserved" 4 false, info_mask "info_mask" 8 false,
        );
        same_layout(header, "pidmap_req", &req, size_of::<PidmapReq>(), source);
        let fdreq = ours!(FdmapReq:
            size "size" 4 false, start "start" 4 true, target "target" 4 true,
            reserved "__reserved" 4 false,
        );
        same_layout(header, "fdmap_req", &fdreq, size_of::<FdmapReq>(), source);
        let info = ours!(PidmapInfo:
            mask "mask" 8 false, tid "tid" 4 true, tgid "tgid" 4 true,
            ppid "ppid" 4 true, ruid "ruid" 4 false, euid "euid" 4 false,
            nice "nice" 4 true, num_threads "num_threads" 4 false,
            flags "flags" 4 false, utime_ns "utime_ns" 8 false,
            stime_ns "stime_ns" 8 false, start_time_ns "start_time_ns" 8 false,
            rss_pages "rss_pages" 8 false, comm "comm" 16 false,
            state "state" 1 false, reserved "__reserved" 7 false,
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
            d["PIDMAP_REQ_SIZE_VER1"]
        );
        assert_eq!(u64::from(req_size::<FdmapReq>()), d["FDMAP_REQ_SIZE_VER0"]);
        assert_eq!(
            u64::from(req_size::<PidmapInfo>()),
            d["PIDMAP_INFO_SIZE_VER0"]
        );
    }

    #[test]
    fn abi_matches_the_checked_in_header() {
        check(CHECKED_IN_HEADER, "abi/pidmap.h");
    }

    #[test]
    fn abi_matches_the_contract_in_docs() {
        if let Some(s) = repo("abi_matches_the_contract_in_docs") {
            check(&s.header_from_abi_doc, "docs/ABI.md");
        }
    }

    #[test]
    fn checked_in_header_is_the_series() {
        if let Some(s) = repo("checked_in_header_is_the_series") {
            let source = "kernel-patches/*.patch touching include/uapi/linux/pidmap.h";
            check(&s.header_from_patch, source);
            assert_eq!(
                s.header_from_patch.trim_end(),
                CHECKED_IN_HEADER.trim_end(),
                "abi/pidmap.h must be a copy of the header the series leaves ({source})"
            );
        }
    }

    #[test]
    fn parser_sees_a_wrong_value() {
        check(CHECKED_IN_HEADER, "unmutated");
        let mutations = [
            ("PIDMAP_PROCFS\t\t0x400u", "PIDMAP_PROCFS 0x800u"),
            ("__s32 start;", "__s32 startx;"),
            ("(1ULL << 7)", "(1ULL << 11)"),
            ("__s32 nice;", "__u32 nice;"),
            ("char comm[16];", "char comm[15];"),
            ("__u64 info_mask;", "__u32 info_mask;"),
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
    }

    /// The tables of the architectures this crate issues the calls on
    /// (MIPS numbers its tables relative to a per-ABI base, and the crate
    /// does not wire MIPS).
    const WIRED_TABLES: [&str; 3] = [
        "arch/x86/entry/syscalls/syscall_64.tbl",
        "arch/x86/entry/syscalls/syscall_32.tbl",
        "scripts/syscall.tbl",
    ];

    /// `(table, number, call)` of each line of a table listing.
    fn table_entries(text: &str) -> Vec<(String, i64, String)> {
        text.lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|line| {
                let (file, entry) = line.split_once('\t').expect("path, tab, entry");
                let w: Vec<&str> = entry.split_whitespace().collect();
                let nr: i64 = w[0].parse().expect("a number");
                // Checked-in lines: "nr call"; the series': "nr abi call ...".
                let call = if w.len() == 2 { w[1] } else { w[2] };
                (file.to_string(), nr, call.to_string())
            })
            .collect()
    }

    /// Each wired table has pidmap and fdmap once each, at `numbers`.
    fn wired_tables_say(entries: &[(String, i64, String)], numbers: SyscallNumbers, source: &str) {
        let mut seen = BTreeMap::new();
        for (file, nr, call) in entries {
            if !WIRED_TABLES.contains(&file.as_str()) && file != "arch/arm64/tools/syscall_64.tbl" {
                continue;
            }
            let want = if call == "pidmap" {
                numbers.pidmap
            } else {
                numbers.fdmap
            };
            assert_eq!(*nr, want, "{source}: {file}: {call}");
            *seen.entry(file.clone()).or_insert(0) += 1;
        }
        for table in WIRED_TABLES {
            assert_eq!(
                seen.get(table),
                Some(&2),
                "{source}: {table}: pidmap and fdmap, once each"
            );
        }
    }

    #[test]
    fn syscall_numbers_match_the_checked_in_table() {
        let n = SYSCALL_NUMBERS.expect("wired on the test architectures");
        let entries = table_entries(CHECKED_IN_NUMBERS);
        wired_tables_say(&entries, n, "abi/syscall-numbers.tbl");
        assert_eq!(entries.len(), 2 * WIRED_TABLES.len());
    }

    #[test]
    fn syscall_numbers_match_every_table_of_the_series() {
        let Some(s) = repo("syscall_numbers_match_every_table_of_the_series") else {
            return;
        };
        let n = SYSCALL_NUMBERS.expect("wired on the test architectures");
        let entries = table_entries(&s.syscall_tables);
        wired_tables_say(&entries, n, "kernel-patches/*.patch");
    }

    #[test]
    fn numbers_are_the_contracts() {
        let n = SYSCALL_NUMBERS.expect("wired on the test architectures");
        assert_eq!((n.pidmap, n.fdmap), (473, 474));
        assert_eq!(
            enabled_numbers().is_some(),
            cfg!(feature = "series-syscalls")
        );
    }

    /// Without the feature every wrapper answers ENOSYS without entering
    /// the kernel; with it, the record wrapper sets its own flags.
    #[test]
    fn wrappers_refuse_without_the_feature() {
        let req = PidmapReq {
            size: req_size::<PidmapReq>(),
            ..PidmapReq::default()
        };
        let mut ids = [0i32; 4];
        let mut recs = [PidmapInfo::default(); 1];
        let fdreq = FdmapReq {
            size: req_size::<FdmapReq>(),
            ..FdmapReq::default()
        };
        if cfg!(not(feature = "series-syscalls")) {
            assert_eq!(list_ids(&req, &mut ids, PIDMAP_PROC), Err(libc::ENOSYS));
            assert_eq!(list_fds(&fdreq, &mut ids, 0), Err(libc::ENOSYS));
            assert_eq!(
                read_records(&req, &mut recs, PIDMAP_PROC),
                Err(libc::ENOSYS)
            );
            assert_eq!(probe(), (Err(libc::ENOSYS), Err(libc::ENOSYS)));
            assert_eq!(probe_info(), Err(libc::ENOSYS));
        }
        // The flags that decide the element type are the wrappers' own.
        assert_eq!(ID_LISTING_FLAGS & PIDMAP_INFO, 0);
        assert_eq!(ID_LISTING_FLAGS & PROBE_INVALID_FLAG, 0);
        assert_eq!(clamped_count(usize::MAX), 0x7fff_ffff);
    }
}

//! The raw system calls (crate-private): syscall numbers, flag bits and the
//! request structs of `include/uapi/linux/pidmap.h` (docs/ABI.md, v2).
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
    pidmap: 1000,
    fdmap: 1001,
});

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

/// A request the kernel reads through a pointer.
pub(crate) trait Request: Copy {
    /// The syscall number, from [`SYSCALL_NUMBERS`].
    fn number(n: SyscallNumbers) -> i64;
}

/// An element the kernel writes into the output array: an id, or a task
/// record. Implemented only for plain-integer `repr(C)` types, for which
/// any bytes the kernel writes are a valid value.
pub(crate) trait Element: Copy {}

impl Element for i32 {}
impl Element for PidmapInfo {}

impl Request for PidmapReq {
    fn number(n: SyscallNumbers) -> i64 {
        n.pidmap
    }
}

impl Request for FdmapReq {
    fn number(n: SyscallNumbers) -> i64 {
        n.fdmap
    }
}

/// `pidmap(req, ids, count, flags)` / `fdmap(req, fds, count, flags)` into
/// `buf` (`count = buf.len()`, clamped to `i32::MAX`). Returns the number of
/// ids the kernel says it wrote, unclamped (a value above `count` is an ABI
/// violation for the caller to report), or the raw errno.
pub(crate) fn call<R: Request, E: Element>(req: &R, buf: &mut [E], flags: u32) -> Result<u64, i32> {
    let Some(numbers) = SYSCALL_NUMBERS else {
        return Err(libc::ENOSYS);
    };
    let count = u32::try_from(buf.len().min(MAX_COUNT)).expect("clamped to i32::MAX");
    // SAFETY: `req` is a live, readable `repr(C)` struct of the ABI's
    // layout; `buf` is valid for writes of `count <= buf.len()` elements
    // (ids, or records of `req.info_size == size_of::<E>()` bytes) and the
    // kernel writes at most `count` of them (ABI.md); every `Element` is
    // plain integers, so any bytes written are a valid value. A kernel
    // without the call returns ENOSYS without touching memory.
    unsafe {
        raw(
            R::number(numbers),
            std::ptr::from_ref(req).cast(),
            buf.as_mut_ptr().cast(),
            count,
            flags,
        )
    }
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
    let Some(numbers) = SYSCALL_NUMBERS else {
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
    let Some(numbers) = SYSCALL_NUMBERS else {
        return Err(libc::ENOSYS);
    };
    let req = PidmapReq {
        size: req_size::<PidmapReq>(),
        info_size: req_size::<PidmapInfo>(),
        ..PidmapReq::default()
    };
    let mut room = [PidmapInfo::default()];
    // SAFETY: a readable request; a real, writable one-record buffer, and
    // count 0, so nothing is written.
    unsafe {
        raw(
            numbers.pidmap,
            std::ptr::from_ref(&req).cast(),
            room.as_mut_ptr().cast(),
            0,
            PIDMAP_PROC | PIDMAP_INFO,
        )
    }
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
    //! build.rs extracts the header from the `+` lines of the patches in
    //! kernel-patches/ that touch include/uapi/linux/pidmap.h, and the
    //! contract's copy from docs/ABI.md (the header block, then the task
    //! records' layout block, which redefines `struct pidmap_req`: the last
    //! definition of a struct is the one checked).
    use super::*;
    use std::collections::BTreeMap;
    use std::mem::{align_of, offset_of};

    const FROM_PATCH: &str = include_str!(concat!(env!("OUT_DIR"), "/uapi_from_patch.h"));
    const FROM_ABI_DOC: &str = include_str!(concat!(env!("OUT_DIR"), "/uapi_from_abi_doc.h"));

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
    fn abi_matches_the_contract_in_docs() {
        check(FROM_ABI_DOC, "docs/ABI.md");
    }

    #[test]
    fn abi_matches_the_uapi_header_of_the_series() {
        check(
            FROM_PATCH,
            "kernel-patches/*.patch touching include/uapi/linux/pidmap.h",
        );
    }

    #[test]
    fn parser_sees_a_wrong_value() {
        check(FROM_ABI_DOC, "unmutated");
        let mutations = [
            ("PIDMAP_PROCFS          0x400u", "PIDMAP_PROCFS 0x800u"),
            ("__s32 start;", "__s32 startx;"),
            ("(1ULL << 7)", "(1ULL << 11)"),
            ("__s32 nice;", "__u32 nice;"),
            ("char  comm[16];", "char  comm[15];"),
            ("__u64 info_mask;", "__u32 info_mask;"),
        ];
        for (from, to) in mutations {
            // The last occurrence: the task records' block of ABI.md.
            let at = FROM_ABI_DOC
                .rfind(from)
                .unwrap_or_else(|| panic!("{from} must hit"));
            let bad = format!(
                "{}{to}{}",
                &FROM_ABI_DOC[..at],
                &FROM_ABI_DOC[at + from.len()..]
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

    #[test]
    fn syscall_numbers_match_every_table_of_the_series() {
        let tables = include_str!(concat!(env!("OUT_DIR"), "/uapi_syscall_tables.txt"));
        let n = SYSCALL_NUMBERS.expect("wired on the test architectures");
        let mut seen = BTreeMap::new();
        for line in tables.lines() {
            let (file, entry) = line.split_once('\t').expect("path, tab, entry");
            if !WIRED_TABLES.contains(&file) && file != "arch/arm64/tools/syscall_64.tbl" {
                continue;
            }
            let w: Vec<&str> = entry.split_whitespace().collect();
            let nr: i64 = w[0].parse().expect("a number");
            let want = if w[2] == "pidmap" { n.pidmap } else { n.fdmap };
            assert_eq!(nr, want, "{file}: {entry:?}");
            *seen.entry(file).or_insert(0) += 1;
        }
        for table in WIRED_TABLES {
            assert_eq!(
                seen.get(table),
                Some(&2),
                "{table}: pidmap and fdmap, once each"
            );
        }
    }

    #[test]
    fn numbers_are_the_contracts() {
        let n = SYSCALL_NUMBERS.expect("wired on the test architectures");
        assert_eq!((n.pidmap, n.fdmap), (1000, 1001));
    }
}

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
pub(crate) const FDMAP_TARGET_PIDFD: u32 = 0x01;

/// A flag bit no version of the ABI defines: a patched kernel answers the
/// probe with `EINVAL`.
const PROBE_INVALID_FLAG: u32 = 0x8000_0000;

/// `struct pidmap_req`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PidmapReq {
    pub size: u32,
    pub start: i32,
    pub target: i32,
    pub procfs_fd: i32,
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

pub(crate) const PIDMAP_REQ_SIZE_VER0: u32 = 16;
pub(crate) const FDMAP_REQ_SIZE_VER0: u32 = 16;

// The structs this crate was built with are the ABI's first versions.
const _: () = assert!(
    size_of::<PidmapReq>() == 16
        && PIDMAP_REQ_SIZE_VER0 == 16
        && size_of::<FdmapReq>() == 16
        && FDMAP_REQ_SIZE_VER0 == 16
);

/// The size field of a request: the struct this crate was built with.
pub(crate) fn req_size<T>() -> u32 {
    u32::try_from(size_of::<T>()).expect("a request struct is 16 bytes")
}

/// A request the kernel reads through a pointer.
pub(crate) trait Request: Copy {
    /// The syscall number, from [`SYSCALL_NUMBERS`].
    fn number(n: SyscallNumbers) -> i64;
}

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
pub(crate) fn call<R: Request>(req: &R, buf: &mut [i32], flags: u32) -> Result<u64, i32> {
    let Some(numbers) = SYSCALL_NUMBERS else {
        return Err(libc::ENOSYS);
    };
    let count = u32::try_from(buf.len().min(MAX_COUNT)).expect("clamped to i32::MAX");
    // SAFETY: `req` is a live, readable `repr(C)` struct of the ABI's
    // layout; `buf` is valid for writes of `count <= buf.len()` i32s and the
    // kernel writes at most `count` of them (ABI.md). A kernel without the
    // call returns ENOSYS without touching memory.
    unsafe {
        raw(
            R::number(numbers),
            std::ptr::from_ref(req).cast(),
            buf.as_mut_ptr(),
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

/// # Safety
///
/// `req` must point to a readable request struct of the call's ABI, and
/// `buf` must be valid for writes of `count` `i32`s (or `count == 0`).
unsafe fn raw(nr: i64, req: *const u8, buf: *mut i32, count: u32, flags: u32) -> Result<u64, i32> {
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
    //! build.rs extracts the header from the `+` lines of the patch in
    //! kernel-patches/ that adds include/uapi/linux/pidmap.h, and the
    //! contract's copy from docs/ABI.md.
    use super::*;
    use std::collections::BTreeMap;
    use std::mem::offset_of;

    const FROM_PATCH: &str = include_str!(concat!(env!("OUT_DIR"), "/uapi_from_patch.h"));
    const FROM_ABI_DOC: &str = include_str!(concat!(env!("OUT_DIR"), "/uapi_from_abi_doc.h"));

    /// `#define NAME VALUE` lines, values parsed as C integer literals.
    fn defines(header: &str) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for line in header.lines() {
            let mut words = line.split_whitespace();
            if words.next() != Some("#define") {
                continue;
            }
            let (Some(name), Some(value)) = (words.next(), words.next()) else {
                continue;
            };
            let v = value.trim_end_matches(['u', 'U', 'l', 'L']);
            let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            };
            if let Ok(n) = parsed {
                out.insert(name.to_string(), n);
            }
        }
        out
    }

    /// The fields of `struct NAME { ... };`, in order, as (type, name).
    fn fields(header: &str, name: &str) -> Vec<(String, String)> {
        let open = format!("struct {name} {{");
        let start = header.find(&open).unwrap_or_else(|| panic!("no {open}"));
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
                Some((w.next()?.to_string(), w.next()?.to_string()))
            })
            .collect()
    }

    fn check(header: &str, source: &str) {
        assert!(
            header.contains("pidmap_req"),
            "{source}: no v2 uapi header found (struct pidmap_req missing)"
        );
        let d = defines(header);
        let want: [(&str, u32); 11] = [
            ("PIDMAP_PROC", PIDMAP_PROC),
            ("PIDMAP_ALL_TASKS", PIDMAP_ALL_TASKS),
            ("PIDMAP_TASKS", PIDMAP_TASKS),
            ("PIDMAP_CHILDREN", PIDMAP_CHILDREN),
            ("PIDMAP_MODE_MASK", PIDMAP_MODE_MASK),
            ("PIDMAP_IGNORE_KTHREADS", PIDMAP_IGNORE_KTHREADS),
            ("PIDMAP_TARGET_PIDFD", PIDMAP_TARGET_PIDFD),
            ("PIDMAP_PROCFS", PIDMAP_PROCFS),
            ("FDMAP_TARGET_PIDFD", FDMAP_TARGET_PIDFD),
            ("PIDMAP_REQ_SIZE_VER0", PIDMAP_REQ_SIZE_VER0),
            ("FDMAP_REQ_SIZE_VER0", FDMAP_REQ_SIZE_VER0),
        ];
        for (name, ours) in want {
            assert_eq!(d.get(name), Some(&u64::from(ours)), "{source}: {name}");
        }
        // Every flag the header defines is one we know (a new one must
        // be looked at here first).
        let known: Vec<&str> = want.iter().map(|(n, _)| *n).collect();
        for name in d.keys() {
            assert!(
                known.contains(&name.as_str()),
                "{source}: unknown define {name}"
            );
        }
        // Our undefined probe bit is outside everything defined.
        let all = d
            .iter()
            .filter(|(n, _)| !n.contains("SIZE"))
            .fold(0, |acc, (_, v)| acc | v);
        assert_eq!(all & u64::from(PROBE_INVALID_FLAG), 0, "{source}");

        let size = |ty: &str| match ty {
            "__u32" | "__s32" => 4,
            "__u64" | "__s64" => 8,
            other => panic!("{source}: unexpected field type {other}"),
        };
        let layout = |name: &str| -> Vec<(String, usize, usize)> {
            let mut off = 0;
            fields(header, name)
                .into_iter()
                .map(|(ty, field)| {
                    let s = size(&ty);
                    let r = (field, off, s);
                    off += s;
                    r
                })
                .collect()
        };
        let signed = |ty: &str| ty.starts_with("__s");
        let p = layout("pidmap_req");
        let ours_p = [
            ("size", offset_of!(PidmapReq, size)),
            ("start", offset_of!(PidmapReq, start)),
            ("target", offset_of!(PidmapReq, target)),
            ("procfs_fd", offset_of!(PidmapReq, procfs_fd)),
        ];
        assert_eq!(p.len(), ours_p.len(), "{source}: pidmap_req fields {p:?}");
        for ((field, off, s), (name, ours)) in p.iter().zip(ours_p) {
            assert_eq!((field.as_str(), *off, *s), (name, ours, 4), "{source}");
        }
        let f = layout("fdmap_req");
        let ours_f = [
            ("size", offset_of!(FdmapReq, size)),
            ("start", offset_of!(FdmapReq, start)),
            ("target", offset_of!(FdmapReq, target)),
            ("__reserved", offset_of!(FdmapReq, reserved)),
        ];
        assert_eq!(f.len(), ours_f.len(), "{source}: fdmap_req fields {f:?}");
        for ((field, off, s), (name, ours)) in f.iter().zip(ours_f) {
            assert_eq!((field.as_str(), *off, *s), (name, ours, 4), "{source}");
        }
        // Signedness, field by field, against our Rust types.
        let types: Vec<bool> = fields(header, "pidmap_req")
            .iter()
            .map(|(t, _)| signed(t))
            .collect();
        assert_eq!(
            types,
            [false, true, true, true],
            "{source}: pidmap_req signedness"
        );
        let types: Vec<bool> = fields(header, "fdmap_req")
            .iter()
            .map(|(t, _)| signed(t))
            .collect();
        assert_eq!(
            types,
            [false, true, true, false],
            "{source}: fdmap_req signedness"
        );
        assert_eq!(
            u64::from(req_size::<PidmapReq>()),
            d["PIDMAP_REQ_SIZE_VER0"]
        );
        assert_eq!(u64::from(req_size::<FdmapReq>()), d["FDMAP_REQ_SIZE_VER0"]);
    }

    #[test]
    fn abi_matches_the_contract_in_docs() {
        check(FROM_ABI_DOC, "docs/ABI.md");
    }

    #[test]
    fn abi_matches_the_uapi_header_of_the_series() {
        check(
            FROM_PATCH,
            "kernel-patches/*.patch adding include/uapi/linux/pidmap.h",
        );
    }

    #[test]
    fn parser_sees_a_wrong_value() {
        let bad = FROM_ABI_DOC.replace("PIDMAP_PROCFS          0x400u", "PIDMAP_PROCFS 0x800u");
        assert_ne!(bad, FROM_ABI_DOC, "the replacement must hit");
        assert!(std::panic::catch_unwind(|| check(&bad, "mutated")).is_err());
        let swapped = FROM_ABI_DOC.replacen("__s32 start;", "__s32 startx;", 1);
        assert!(std::panic::catch_unwind(|| check(&swapped, "mutated")).is_err());
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

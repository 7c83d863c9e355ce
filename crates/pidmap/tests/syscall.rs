//! The syscall backend must return exactly what the /proc backend returns,
//! in every mode, and the raw ABI (request structs, pidfd targets, the
//! cursors, the procfs view, the records) must behave as the uapi headers
//! and man pages of the series say. On a kernel without
//! pidmap(2) these tests skip with a note, unless `PIDMAP_REQUIRE_SYSCALL=1`
//! (set by the QEMU guest runner), in which case they fail.
//!
//! The raw tests call `syscall(2)` with their own copy of the structs, not
//! through the crate, so they check the kernel independently of it.

#![cfg(feature = "fallback")]

mod support;

use std::collections::BTreeSet;
use std::os::fd::{AsFd, AsRawFd};

use pidmap::{ActiveBackend, Backend, Error, KernelSupport, Pid, Pidmap, Query, Target};
use support::*;

fn list(pm: &mut Pidmap, q: Query<'_>) -> Result<Vec<Pid>, String> {
    let mut v = Vec::new();
    pm.fill(q, &mut v).map_err(|e| format!("{e:?}"))?;
    Ok(v)
}

fn list_fds(pm: &mut Pidmap, t: Target<'_>) -> Result<Vec<i32>, String> {
    let mut v = Vec::new();
    pm.fill_fds(t, &mut v).map_err(|e| format!("{e:?}"))?;
    Ok(v)
}

/// Both backends, compared under the stability retry.
fn same(test: &str, q: Query<'_>) {
    let Some(mut sc) = syscall_backend(test) else {
        return;
    };
    let mut pf = procfs_backend();
    agree(test, || list(&mut pf, q), || list(&mut sc, q));
}

#[test]
fn gate_skips_or_fails() {
    use KernelSupport::*;
    assert_eq!(decide(Available, true), Gate::Run);
    assert_eq!(decide(Available, false), Gate::Run);
    assert_eq!(decide(Missing, false), Gate::Skip);
    assert_eq!(decide(Blocked, false), Gate::Skip);
    assert_eq!(decide(Missing, true), Gate::Fail);
    assert_eq!(decide(Blocked, true), Gate::Fail);
    let r = std::panic::catch_unwind(|| gate(Missing, true, "(gate self-test)"));
    assert!(r.is_err(), "a required but missing syscall must fail");
}

#[test]
fn auto_follows_kernel_support() {
    let support = pidmap::kernel_support();
    if std::env::var("PIDMAP_EXPECT_NO_SYSCALL").is_ok_and(|v| v == "1") {
        assert!(
            matches!(support, KernelSupport::Missing | KernelSupport::NotBuilt),
            "{support:?}"
        );
    }
    let auto = Pidmap::with_backend(Backend::Auto).unwrap();
    let forced = Pidmap::with_backend(Backend::Syscall);
    if support.is_available() {
        assert_eq!(auto.active(), ActiveBackend::Syscall);
        assert!(forced.is_ok());
    } else {
        assert!(
            !syscall_required(),
            "{REQUIRE_ENV}=1 but kernel says: {support}"
        );
        assert_eq!(auto.active(), ActiveBackend::Procfs);
        assert!(matches!(forced, Err(Error::SyscallUnavailable(s)) if s == support));
    }
    assert_eq!(
        Pidmap::with_backend(Backend::Procfs).unwrap().active(),
        ActiveBackend::Procfs
    );
}

#[test]
fn same_processes() {
    same("same_processes", Query::processes());
    same(
        "same_processes_without_kthreads",
        Query::processes().without_kthreads(),
    );
}

#[test]
fn same_all_tasks() {
    let _parked = ParkedThreads::spawn(5);
    same("same_all_tasks", Query::all_tasks());
    same(
        "same_all_tasks_without_kthreads",
        Query::all_tasks().without_kthreads(),
    );
}

#[test]
fn same_threads() {
    let parked = ParkedThreads::spawn(300);
    same("same_threads", Query::threads(Pid::this_process()));
    same("same_threads_caller", Query::threads(Target::Caller));
    same("same_threads_via_tid", Query::threads(parked.tids[7]));
    same("same_threads_pid1", Query::threads(Pid::from_raw(1)));
    let pidfd = Target::open_pidfd(Pid::this_process()).unwrap();
    same("same_threads_pidfd", Query::threads(&pidfd));
}

#[test]
fn same_children() {
    let fam = Family::spawn(6);
    let pidfd = Target::open_pidfd(fam.child).unwrap();
    same("same_children_family", Query::children(fam.child));
    same("same_children_pidfd", Query::children(&pidfd));
    same("same_children_leaf", Query::children(fam.grandchildren[0]));
    same("same_children_self", Query::children(Target::Caller));
    same("same_children_pid1", Query::children(Pid::from_raw(1)));
    if let Some(mut sc) = syscall_backend("same_children") {
        assert_eq!(
            list(&mut sc, Query::children(&pidfd)).unwrap(),
            fam.grandchildren
        );
    }
}

#[test]
fn same_fds() {
    let Some(mut sc) = syscall_backend("same_fds") else {
        return;
    };
    let mut pf = procfs_backend();
    let fam = Family::spawn(1);
    let pidfd = Target::open_pidfd(fam.child).unwrap();
    for t in [
        Target::Pid(fam.child),
        Target::Pid(Pid::from_raw(1)),
        Target::from(&pidfd),
    ] {
        agree("same_fds", || list_fds(&mut pf, t), || list_fds(&mut sc, t));
    }
    // Our own table: the /proc reader sees the directory fd it holds open
    // while reading /proc/thread-self/fd, which the syscall never does.
    for t in [Target::Caller, Target::Pid(Pid::this_process())] {
        let mut ok = false;
        for _ in 0..200 {
            let a = list_fds(&mut sc, t).unwrap();
            let b = list_fds(&mut pf, t).unwrap();
            let c = list_fds(&mut sc, t).unwrap();
            if a != c {
                continue;
            }
            let extra: Vec<i32> = b.iter().copied().filter(|fd| !a.contains(fd)).collect();
            // SAFETY: F_GETFD has no side effects.
            let closed = |fd: &i32| unsafe { libc::fcntl(*fd, libc::F_GETFD) } < 0;
            if a.iter().all(|fd| b.contains(fd)) && extra.len() <= 1 && extra.iter().all(closed) {
                ok = true;
                break;
            }
        }
        assert!(ok, "fds of {t:?}: the backends never agreed");
    }
}

#[test]
fn same_errors() {
    let Some(mut sc) = syscall_backend("same_errors") else {
        return;
    };
    let mut pf = procfs_backend();
    for q in [Query::threads(NO_SUCH_PID), Query::children(NO_SUCH_PID)] {
        let a = pf.fill(q, &mut Vec::new());
        let b = sc.fill(q, &mut Vec::new());
        assert!(is_esrch(&a) && is_esrch(&b), "{q:?}: {a:?} vs {b:?}");
    }
    assert!(is_esrch(&sc.fill_fds(NO_SUCH_PID, &mut Vec::new())));
    // A pidfd of an exited (reaped) process: ESRCH from both.
    let fam = Family::spawn(0);
    let pidfd = Target::open_pidfd(fam.child).unwrap();
    drop(fam);
    let a = pf.fill(Query::threads(&pidfd), &mut Vec::new());
    let b = sc.fill(Query::threads(&pidfd), &mut Vec::new());
    let c = sc.fill_fds(&pidfd, &mut Vec::new());
    assert!(
        is_esrch(&a) && is_esrch(&b) && is_esrch(&c),
        "{a:?} {b:?} {c:?}"
    );
    let file = std::fs::File::open("/proc/self/stat").unwrap();
    let r = sc.fill(Query::threads(file.as_fd()), &mut Vec::new());
    assert!(
        matches!(r, Err(Error::InvalidArgument(_))),
        "not a pidfd: {r:?}"
    );
}

#[test]
fn same_permission_error() {
    if !is_root() {
        note("skipping same_permission_error: not root");
        return;
    }
    let Some(mut sc) = syscall_backend("same_permission_error") else {
        return;
    };
    assert_fds_denied_to_nobody(&mut sc, Pid::this_process());
}

#[test]
fn chunked_step_3_equals_full_for_every_mode() {
    let Some(mut sc) = syscall_backend("chunked_step_3") else {
        return;
    };
    let _parked = ParkedThreads::spawn(10);
    let fam = Family::spawn(4);
    let qs = [
        Query::processes(),
        Query::processes().without_kthreads(),
        Query::all_tasks(),
        Query::threads(Target::Caller),
        Query::children(fam.child),
    ];
    for q in qs {
        let mut full_pm = syscall_backend("chunked_step_3").unwrap();
        agree(
            "chunked vs full",
            || list(&mut full_pm, q).unwrap(),
            || read_in_chunks_of_3(&mut sc, q),
        );
    }
}

#[test]
fn iterator_batches_across_syscalls() {
    let Some(mut sc) = syscall_backend("iterator_batches") else {
        return;
    };
    let parked = ParkedThreads::spawn(600);
    let got = sc.iter(Query::threads(Target::Caller)).to_vec().unwrap();
    assert_ascending(&got);
    assert!(got.len() > 600);
    assert!(parked.tids.iter().all(|t| got.binary_search(t).is_ok()));
}

/// `struct pidmap_req` (56 bytes), written out here from the uapi
/// header rather than taken from the crate.
#[derive(Clone, Copy, Default)]
struct Req {
    size: u32,
    scope: u32,
    last_id: u64,
    pidfd: i32,
    filter: u32,
    info_size: u32,
    reserved: u32,
    info_mask: u64,
    procfs_fd: i32,
    pidns_fd: i32,
    pidns_id: u64,
}

impl Req {
    fn bytes(&self) -> Vec<u8> {
        [
            &self.size.to_ne_bytes()[..],
            &self.scope.to_ne_bytes(),
            &self.last_id.to_ne_bytes(),
            &self.pidfd.to_ne_bytes(),
            &self.filter.to_ne_bytes(),
            &self.info_size.to_ne_bytes(),
            &self.reserved.to_ne_bytes(),
            &self.info_mask.to_ne_bytes(),
            &self.procfs_fd.to_ne_bytes(),
            &self.pidns_fd.to_ne_bytes(),
            &self.pidns_id.to_ne_bytes(),
        ]
        .concat()
    }
}

/// `struct fdmap_req` (32 bytes).
#[derive(Clone, Copy, Default)]
struct FdReq {
    size: u32,
    pidfd: i32,
    first_fd: u32,
    reserved: u32,
    procfs_fd: i32,
    pidns_fd: i32,
    pidns_id: u64,
}

impl FdReq {
    fn bytes(&self) -> Vec<u8> {
        [
            &self.size.to_ne_bytes()[..],
            &self.pidfd.to_ne_bytes(),
            &self.first_fd.to_ne_bytes(),
            &self.reserved.to_ne_bytes(),
            &self.procfs_fd.to_ne_bytes(),
            &self.pidns_fd.to_ne_bytes(),
            &self.pidns_id.to_ne_bytes(),
        ]
        .concat()
    }
}

/// The numbers the series wires on the test architectures (x86_64, i386,
/// arm64).
const NR_PIDMAP_I: i64 = 473;
const NR_PIDMAP_INFO_I: i64 = 474;
const NR_FDMAP_I: i64 = 475;
const SCOPE_PROCS: u32 = 0;
const SCOPE_THREADS: u32 = 2;
const SELF_THREAD: i32 = -10000;
const SELF_THREAD_GROUP: i32 = -10001;
/// `sizeof(struct pidmap_info)`, `PIDMAP_INFO_SIZE_VER0`.
const INFO_SIZE: usize = 200;
/// Every `PIDMAP_INFO_*` field bit, and the supported-mask request.
const INFO_ALL: u64 = 0x1fff;
const INFO_SUPPORTED_MASK: u64 = 1 << 63;

/// One call: `buf` is `nr` elements of `elem` bytes.
fn raw_call(
    nr_call: i64,
    req: &[u8],
    buf: &mut [u8],
    elem: usize,
    flags: u32,
) -> Result<usize, i32> {
    let count = buf.len() / elem;
    // SAFETY: `req` is readable for its length, `buf` writable for `count`
    // elements of `elem` bytes, the call's element size.
    let r = unsafe {
        libc::syscall(
            libc::c_long::try_from(nr_call).unwrap(),
            req.as_ptr(),
            buf.as_mut_ptr(),
            libc::size_t::from(count),
            libc::c_ulong::from(flags),
        )
    };
    if r < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap())
    } else {
        Ok(usize::try_from(r).unwrap())
    }
}

fn pidmap_raw(r: Req, ids: &mut [u32]) -> Result<usize, i32> {
    let mut bytes: Vec<u8> = vec![0; ids.len() * 4];
    let n = raw_call(NR_PIDMAP_I, &r.bytes(), &mut bytes, 4, 0)?;
    for (i, c) in bytes.chunks_exact(4).enumerate() {
        ids[i] = u32::from_ne_bytes(c.try_into().unwrap());
    }
    Ok(n)
}

fn fdmap_raw(r: FdReq, fds: &mut [i32]) -> Result<usize, i32> {
    let mut bytes: Vec<u8> = vec![0; fds.len() * 4];
    let n = raw_call(NR_FDMAP_I, &r.bytes(), &mut bytes, 4, 0)?;
    for (i, c) in bytes.chunks_exact(4).enumerate() {
        fds[i] = i32::from_ne_bytes(c.try_into().unwrap());
    }
    Ok(n)
}

/// Records of `info_size` bytes each, as raw bytes.
fn info_raw(r: Req, count: usize) -> Result<Vec<Vec<u8>>, i32> {
    let size = usize::try_from(r.info_size).unwrap().max(1);
    let mut bytes: Vec<u8> = vec![0xa5; count * size];
    let n = raw_call(NR_PIDMAP_INFO_I, &r.bytes(), &mut bytes, size, 0)?;
    Ok(bytes
        .chunks_exact(size)
        .take(n)
        .map(<[u8]>::to_vec)
        .collect())
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_ne_bytes(b[off..off + 8].try_into().unwrap())
}

fn i32_at(b: &[u8], off: usize) -> i32 {
    i32::from_ne_bytes(b[off..off + 4].try_into().unwrap())
}

#[test]
fn raw_abi_errors() {
    if !gate(
        pidmap::kernel_support(),
        syscall_required(),
        "raw_abi_errors",
    ) {
        return;
    }
    let mut b = [0u32; 8];
    let ok = Req {
        size: 56,
        scope: SCOPE_PROCS,
        ..Req::default()
    };
    let e = |r: Result<usize, i32>| r.err();
    // The flags argument must be 0.
    assert_eq!(
        e(raw_call(NR_PIDMAP_I, &ok.bytes(), &mut [0; 32], 4, 1)),
        Some(libc::EINVAL),
        "flags"
    );
    assert_eq!(
        e(raw_call(
            NR_FDMAP_I,
            &FdReq {
                size: 32,
                ..FdReq::default()
            }
            .bytes(),
            &mut [0; 32],
            4,
            1
        )),
        Some(libc::EINVAL),
        "fdmap flags"
    );
    // A count above 1,000,000: EOVERFLOW, before anything is read.
    // SAFETY: count is refused before the (NULL) buffer is looked at.
    let big = unsafe {
        libc::syscall(
            libc::c_long::try_from(NR_PIDMAP_I).unwrap(),
            ok.bytes().as_ptr(),
            std::ptr::null_mut::<u32>(),
            libc::size_t::try_from(1_000_001u32).unwrap(),
            0u32,
        )
    };
    assert_eq!(big, -1);
    assert_eq!(
        std::io::Error::last_os_error().raw_os_error(),
        Some(libc::EOVERFLOW)
    );
    assert_eq!(
        e(pidmap_raw(Req { scope: 4, ..ok }, &mut b)),
        Some(libc::EINVAL),
        "scope"
    );
    assert_eq!(
        e(pidmap_raw(
            Req {
                filter: 1 << 5,
                ..ok
            },
            &mut b
        )),
        Some(libc::EINVAL),
        "filter"
    );
    assert_eq!(
        e(pidmap_raw(Req { size: 48, ..ok }, &mut b)),
        Some(libc::EINVAL),
        "size below VER0"
    );
    assert_eq!(
        e(pidmap_raw(Req { reserved: 1, ..ok }, &mut b)),
        Some(libc::EINVAL),
        "__reserved"
    );
    assert_eq!(
        e(pidmap_raw(
            Req {
                pidns_fd: 3,
                pidns_id: 1,
                ..ok
            },
            &mut b
        )),
        Some(libc::EINVAL),
        "a pid namespace named twice"
    );
    assert_eq!(
        e(pidmap_raw(
            Req {
                pidns_id: u64::MAX,
                ..ok
            },
            &mut b
        )),
        Some(libc::ENOENT),
        "no such pid namespace id"
    );
    assert_eq!(
        e(pidmap_raw(
            Req {
                pidfd: SELF_THREAD_GROUP,
                ..ok
            },
            &mut b
        )),
        Some(libc::EINVAL),
        "pidfd with PROCS"
    );
    assert_eq!(
        e(pidmap_raw(
            Req {
                info_size: 200,
                ..ok
            },
            &mut b
        )),
        Some(libc::EINVAL),
        "info_size for pidmap(2)"
    );
    assert_eq!(
        e(pidmap_raw(Req { info_mask: 1, ..ok }, &mut b)),
        Some(libc::EINVAL),
        "info_mask for pidmap(2)"
    );
    // A longer struct than the kernel's 56 bytes: zero tail accepted,
    // non-zero tail E2BIG.
    let mut long = ok.bytes();
    long[0..4].copy_from_slice(&64u32.to_ne_bytes());
    long.extend_from_slice(&[0; 8]);
    assert!(
        raw_call(NR_PIDMAP_I, &long, &mut [0; 32], 4, 0).is_ok(),
        "zero tail"
    );
    long[60] = 1;
    assert_eq!(
        e(raw_call(NR_PIDMAP_I, &long, &mut [0; 32], 4, 0)),
        Some(libc::E2BIG),
        "non-zero tail"
    );
    // The procfs view: not procfs, or not its root, is EINVAL; not open
    // for reading (O_PATH, closed) is EBADF.
    let file = std::fs::File::open("/").unwrap();
    let view = |fd: i32| Req {
        procfs_fd: fd,
        ..ok
    };
    assert_eq!(
        e(pidmap_raw(view(file.as_raw_fd()), &mut b)),
        Some(libc::EINVAL),
        "not procfs"
    );
    let sub = std::fs::File::open("/proc/self").unwrap();
    assert_eq!(
        e(pidmap_raw(view(sub.as_raw_fd()), &mut b)),
        Some(libc::EINVAL),
        "not the root"
    );
    assert_eq!(
        e(pidmap_raw(view(999_999), &mut b)),
        Some(libc::EBADF),
        "closed fd"
    );
    let opath = rustix::fs::open(
        "/proc",
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY,
        rustix::fs::Mode::empty(),
    )
    .unwrap();
    assert_eq!(
        e(pidmap_raw(view(opath.as_raw_fd()), &mut b)),
        Some(libc::EBADF),
        "O_PATH view"
    );
    let proc = std::fs::File::open("/proc").unwrap();
    assert!(pidmap_raw(view(proc.as_raw_fd()), &mut b).unwrap() > 0);
    // Two views at once: EINVAL.
    let own_ns = std::fs::File::open("/proc/self/ns/pid").unwrap();
    assert!(
        pidmap_raw(
            Req {
                pidns_fd: own_ns.as_raw_fd(),
                ..ok
            },
            &mut b
        )
        .unwrap()
            > 0
    );
    assert_eq!(
        e(pidmap_raw(
            Req {
                pidns_fd: own_ns.as_raw_fd(),
                ..view(proc.as_raw_fd())
            },
            &mut b
        )),
        Some(libc::EINVAL),
        "procfs and pid namespace views"
    );
    // Targets: pidfds only.
    let threads = Req {
        scope: SCOPE_THREADS,
        ..ok
    };
    assert_eq!(
        pidmap_raw(
            Req {
                pidfd: SELF_THREAD_GROUP,
                ..threads
            },
            &mut []
        ),
        Ok(0),
        "count 0"
    );
    let me = u32::try_from(Pid::this_process().as_raw()).unwrap();
    let n = pidmap_raw(
        Req {
            pidfd: SELF_THREAD_GROUP,
            ..threads
        },
        &mut b,
    )
    .unwrap();
    assert!(b[..n].contains(&me) || n == b.len());
    let n = pidmap_raw(
        Req {
            pidfd: SELF_THREAD,
            ..threads
        },
        &mut b,
    )
    .unwrap();
    assert!(b[..n].contains(&me) || n == b.len());
    assert_eq!(
        e(pidmap_raw(
            Req {
                pidfd: file.as_raw_fd(),
                ..threads
            },
            &mut b
        )),
        Some(libc::EBADF),
        "not a pidfd"
    );
    assert_eq!(
        e(pidmap_raw(
            Req {
                pidfd: 999_999,
                ..threads
            },
            &mut b
        )),
        Some(libc::EBADF),
        "closed pidfd"
    );
    let fam = Family::spawn(0);
    let gone = Target::open_pidfd(fam.child).unwrap();
    drop(fam);
    assert_eq!(
        e(pidmap_raw(
            Req {
                pidfd: gone.as_raw_fd(),
                ..threads
            },
            &mut b
        )),
        Some(libc::ESRCH),
        "reaped"
    );
    // fdmap: __reserved, two views and a namespace named twice are
    // EINVAL, a non-pidfd EBADF.
    let fok = FdReq {
        size: 32,
        pidfd: SELF_THREAD_GROUP,
        ..FdReq::default()
    };
    let mut fds = [0i32; 8];
    assert_eq!(
        e(fdmap_raw(FdReq { reserved: 4, ..fok }, &mut fds)),
        Some(libc::EINVAL),
        "__reserved"
    );
    assert_eq!(
        e(fdmap_raw(
            FdReq {
                procfs_fd: proc.as_raw_fd(),
                pidns_fd: own_ns.as_raw_fd(),
                ..fok
            },
            &mut fds
        )),
        Some(libc::EINVAL),
        "two views"
    );
    assert_eq!(
        e(fdmap_raw(
            FdReq {
                pidns_fd: own_ns.as_raw_fd(),
                pidns_id: 1,
                ..fok
            },
            &mut fds
        )),
        Some(libc::EINVAL),
        "a pid namespace named twice"
    );
    assert_eq!(
        e(fdmap_raw(
            FdReq {
                pidfd: file.as_raw_fd(),
                ..fok
            },
            &mut fds
        )),
        Some(libc::EBADF),
        "not a pidfd"
    );
    assert_eq!(fdmap_raw(fok, &mut []), Ok(0));
    let pidfd = Target::open_pidfd(Pid::this_process()).unwrap();
    let by_pidfd = FdReq {
        pidfd: pidfd.as_raw_fd(),
        procfs_fd: proc.as_raw_fd(),
        ..fok
    };
    let n = fdmap_raw(by_pidfd, &mut fds).unwrap();
    assert!(fds[..n].contains(&0) || n == fds.len());
    // The fd cursor is inclusive.
    let fd = proc.as_raw_fd();
    let from = FdReq {
        first_fd: u32::try_from(fd).unwrap(),
        pidfd: SELF_THREAD,
        ..fok
    };
    assert!(fdmap_raw(from, &mut fds).unwrap() >= 1);
    assert_eq!(fds[0], fd, "first_fd is inclusive");
}

#[test]
fn raw_cursor_and_records() {
    if !gate(
        pidmap::kernel_support(),
        syscall_required(),
        "raw_cursor_and_records",
    ) {
        return;
    }
    let parked = ParkedThreads::spawn(4);
    let threads = Req {
        size: 56,
        scope: SCOPE_THREADS,
        pidfd: SELF_THREAD_GROUP,
        ..Req::default()
    };
    let mut all = [0u32; 64];
    let n = pidmap_raw(threads, &mut all).unwrap();
    assert!(n >= 5, "{n} threads");
    // The cursor is exclusive: after ids[1], the next is ids[2].
    let mut b = [0u32; 2];
    let after = Req {
        last_id: u64::from(all[1]),
        ..threads
    };
    assert_eq!(pidmap_raw(after, &mut b), Ok(2));
    assert_eq!(b, [all[2], all[3]]);
    // last_id 0 is the start; the last id gives nothing.
    let last = Req {
        last_id: u64::from(all[n - 1]),
        ..threads
    };
    assert_eq!(pidmap_raw(last, &mut b), Ok(0));
    drop(parked);

    // pidmap_info(2): info_size checks.
    let info = Req {
        info_size: 200,
        info_mask: INFO_ALL | INFO_SUPPORTED_MASK,
        ..threads
    };
    let e = |r: Result<Vec<Vec<u8>>, i32>| r.err();
    assert_eq!(
        e(info_raw(
            Req {
                info_size: 192,
                ..info
            },
            1
        )),
        Some(libc::EINVAL),
        "below VER0"
    );
    assert_eq!(
        e(info_raw(
            Req {
                info_size: 204,
                ..info
            },
            1
        )),
        Some(libc::EINVAL),
        "not a multiple of 8"
    );
    assert_eq!(
        e(info_raw(
            Req {
                info_size: 8192,
                ..info
            },
            1
        )),
        Some(libc::E2BIG),
        "above a page"
    );
    // Our own record: the ids, the supported mask, the pidfs id of a
    // pidfd of us, and a longer record's tail zeroed.
    let me = Pid::this_process().as_raw();
    let pidfd = Target::open_pidfd(Pid::this_process()).unwrap();
    let ino = rustix::fs::fstat(&pidfd).unwrap().st_ino;
    let recs = info_raw(
        Req {
            info_size: 208,
            last_id: u64::try_from(me - 1).unwrap(),
            ..info
        },
        1,
    )
    .unwrap();
    assert_eq!(recs.len(), 1);
    let r = &recs[0];
    assert_eq!((i32_at(r, 24), i32_at(r, 28)), (me, me), "tid, tgid");
    assert_eq!(u64_at(r, 0), INFO_ALL | INFO_SUPPORTED_MASK, "mask");
    assert_eq!(
        u64_at(r, 8),
        INFO_ALL | INFO_SUPPORTED_MASK,
        "supported_mask"
    );
    assert_eq!(u64_at(r, 16), ino, "pidfs_id is the pidfd's st_ino");
    assert_eq!(
        &r[INFO_SIZE..],
        &[0; 8],
        "the tail beyond the kernel's struct"
    );
    // comm (offset 104, 64 bytes) is the name stat shows.
    let comm = std::fs::read("/proc/self/comm").unwrap();
    let comm = comm.strip_suffix(b"\n").unwrap_or(&comm);
    let len = r[104..168].iter().position(|&c| c == 0).unwrap();
    assert_eq!(&r[104..104 + len], comm);
    assert!(matches!(r[96], b'R' | b'S'), "state {}", r[96]);
    // rss_bytes (88) is whole pages; min_flt (168) and the context
    // switches (184, 192) have counted: this process touched memory and
    // slept.
    let page = u64::try_from(rustix::param::page_size()).unwrap();
    assert!(u64_at(r, 88) > 0 && u64_at(r, 88) % page == 0, "rss_bytes");
    assert!(u64_at(r, 168) > 0, "min_flt");
    assert!(u64_at(r, 184) + u64_at(r, 192) > 0, "nvcsw + nivcsw");
    // Without the supported-mask bit: no supported_mask.
    let recs = info_raw(
        Req {
            info_size: 200,
            info_mask: 0,
            last_id: u64::try_from(me - 1).unwrap(),
            ..info
        },
        1,
    )
    .unwrap();
    assert_eq!(
        (u64_at(&recs[0], 0), u64_at(&recs[0], 8)),
        (1, 0),
        "ID only"
    );
}

/// The view: a procfs mounted with `hidepid=invisible` in a private mount
/// namespace; an unprivileged caller (uid 65534) listing through it with
/// the syscall backend sees exactly what `readdir` of that mount shows.
#[test]
fn view_follows_hidepid_like_ls_proc() {
    let Some(_) = syscall_backend("view_follows_hidepid") else {
        return;
    };
    if !is_root() {
        note("skipping view_follows_hidepid: not root");
        return;
    }
    let dir = std::env::temp_dir().join(format!("pidmap-view-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.clone();
    let code = in_private_mount_ns(move || {
        mount_procfs(&d, "hidepid=invisible");
        let mut v: Vec<Pid> = Vec::with_capacity(1 << 16);
        in_child(|| {
            // SAFETY: dropping privileges in the child only.
            unsafe {
                if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                    return 10;
                }
            }
            let Ok(mut pm) = Pidmap::builder()
                .backend(Backend::Syscall)
                .proc_root(&d)
                .build()
            else {
                return 11;
            };
            let ls = || -> BTreeSet<i32> {
                std::fs::read_dir(&d)
                    .unwrap()
                    .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                    .collect()
            };
            for _ in 0..100 {
                let a = ls();
                if pm.fill(Query::processes(), &mut v).is_err() {
                    return 12;
                }
                let b = ls();
                let got: BTreeSet<i32> = v.iter().map(|p| p.as_raw()).collect();
                if a == b {
                    // Root's processes (pid 1) are hidden, ours are not.
                    if got != a || got.contains(&1) || !got.contains(&Pid::this_process().as_raw())
                    {
                        note(&format!("view: {got:?} vs ls {a:?}"));
                        return 13;
                    }
                    return 0;
                }
            }
            14
        })
    })
    .expect("root must be able to unshare(CLONE_NEWNS)");
    let _ = std::fs::remove_dir(&dir);
    assert_eq!(
        code, 0,
        "child exit code (10 setuid, 11 build, 12 list, 13 differs, 14 unstable)"
    );
}

//! The syscall backend must return exactly what the /proc backend returns,
//! in every mode, and the raw v2 ABI (request structs, pidfd targets, the
//! procfs view) must behave as docs/ABI.md says. On a kernel without
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

/// `struct pidmap_req` / `struct fdmap_req`, written out here from
/// docs/ABI.md rather than taken from the crate.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Req {
    size: u32,
    start: i32,
    target: i32,
    fourth: i32,
}

/// The numbers the series wires on the test architectures (x86_64, i386, arm64).
const NR_PIDMAP_I: i64 = 473;
const NR_FDMAP_I: i64 = 474;
const PROC: u32 = 0x01;
const TASKS: u32 = 0x04;
const TARGET_PIDFD: u32 = 0x200;
const PROCFS: u32 = 0x400;
const FD_TARGET_PIDFD: u32 = 0x01;

fn raw(nr: i64, req: &[u8], buf: &mut [i32], flags: u32) -> Result<usize, i32> {
    let count = u32::try_from(buf.len()).unwrap();
    // SAFETY: `req` is readable for its length, `buf` writable for `count`.
    let r = unsafe {
        libc::syscall(
            libc::c_long::try_from(nr).unwrap(),
            req.as_ptr(),
            buf.as_mut_ptr(),
            libc::c_ulong::from(count),
            libc::c_ulong::from(flags),
        )
    };
    if r < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap())
    } else {
        Ok(usize::try_from(r).unwrap())
    }
}

fn bytes(r: &Req) -> Vec<u8> {
    [
        r.size.to_ne_bytes(),
        r.start.to_ne_bytes(),
        r.target.to_ne_bytes(),
        r.fourth.to_ne_bytes(),
    ]
    .concat()
}

fn pidmap_raw(r: Req, buf: &mut [i32], flags: u32) -> Result<usize, i32> {
    raw(NR_PIDMAP_I, &bytes(&r), buf, flags)
}

fn fdmap_raw(r: Req, buf: &mut [i32], flags: u32) -> Result<usize, i32> {
    raw(NR_FDMAP_I, &bytes(&r), buf, flags)
}

#[test]
fn raw_v2_abi_errors() {
    if !gate(
        pidmap::kernel_support(),
        syscall_required(),
        "raw_v2_abi_errors",
    ) {
        return;
    }
    let mut b = [0i32; 8];
    let ok = Req {
        size: 16,
        ..Req::default()
    };
    let e = |r: Result<usize, i32>| r.err();
    assert_eq!(
        e(pidmap_raw(ok, &mut b, PROC | 0x8000)),
        Some(libc::EINVAL),
        "unknown flag"
    );
    assert_eq!(e(pidmap_raw(ok, &mut b, 0)), Some(libc::EINVAL), "no mode");
    assert_eq!(
        e(pidmap_raw(ok, &mut b, PROC | TASKS)),
        Some(libc::EINVAL),
        "two modes"
    );
    let small = Req { size: 12, ..ok };
    assert_eq!(
        e(pidmap_raw(small, &mut b, PROC)),
        Some(libc::EINVAL),
        "size below VER0"
    );
    let neg = Req { start: -1, ..ok };
    assert_eq!(
        e(pidmap_raw(neg, &mut b, PROC)),
        Some(libc::EINVAL),
        "start < 0"
    );
    let targeted = Req { target: 1, ..ok };
    assert_eq!(
        e(pidmap_raw(targeted, &mut b, PROC)),
        Some(libc::EINVAL),
        "target with PROC"
    );
    let negt = Req { target: -1, ..ok };
    assert_eq!(
        e(pidmap_raw(negt, &mut b, TASKS)),
        Some(libc::EINVAL),
        "target < 0"
    );
    let stray = Req { fourth: 3, ..ok };
    assert_eq!(
        e(pidmap_raw(stray, &mut b, PROC)),
        Some(libc::EINVAL),
        "procfs_fd without flag"
    );
    assert_eq!(
        e(pidmap_raw(ok, &mut b, PROC | TARGET_PIDFD)),
        Some(libc::EINVAL),
        "pidfd with PROC"
    );
    // A longer struct than the kernel's 32 bytes (PIDMAP_REQ_SIZE_VER1):
    // zero tail accepted, non-zero tail E2BIG.
    let mut long = bytes(&ok);
    long[0..4].copy_from_slice(&40u32.to_ne_bytes());
    long.extend_from_slice(&[0; 24]);
    assert!(raw(NR_PIDMAP_I, &long, &mut b, PROC).is_ok(), "zero tail");
    long[36] = 1;
    assert_eq!(
        e(raw(NR_PIDMAP_I, &long, &mut b, PROC)),
        Some(libc::E2BIG),
        "non-zero tail"
    );
    // The procfs view: not open is EBADF, not procfs is EINVAL.
    let file = std::fs::File::open("/").unwrap();
    let notproc = Req {
        fourth: file.as_raw_fd(),
        ..ok
    };
    assert_eq!(
        e(pidmap_raw(notproc, &mut b, PROC | PROCFS)),
        Some(libc::EINVAL),
        "not procfs"
    );
    let closed = Req {
        fourth: 999_999,
        ..ok
    };
    assert_eq!(
        e(pidmap_raw(closed, &mut b, PROC | PROCFS)),
        Some(libc::EBADF),
        "closed fd"
    );
    let proc = std::fs::File::open("/proc").unwrap();
    let view = Req {
        fourth: proc.as_raw_fd(),
        ..ok
    };
    assert!(pidmap_raw(view, &mut b, PROC | PROCFS).unwrap() > 0);
    // Targets.
    assert_eq!(pidmap_raw(ok, &mut [], TASKS), Ok(0), "count 0");
    assert!(pidmap_raw(ok, &mut b, TASKS).unwrap() >= 1);
    let gone = Req {
        target: NO_SUCH_PID.as_raw(),
        ..ok
    };
    assert_eq!(e(pidmap_raw(gone, &mut b, TASKS)), Some(libc::ESRCH));
    let notpidfd = Req {
        target: file.as_raw_fd(),
        ..ok
    };
    assert_eq!(
        e(pidmap_raw(notpidfd, &mut b, TASKS | TARGET_PIDFD)),
        Some(libc::EINVAL)
    );
    assert_eq!(
        e(fdmap_raw(notpidfd, &mut b, FD_TARGET_PIDFD)),
        Some(libc::EINVAL)
    );
    let badfd = Req {
        target: 999_999,
        ..ok
    };
    assert_eq!(
        e(pidmap_raw(badfd, &mut b, TASKS | TARGET_PIDFD)),
        Some(libc::EBADF)
    );
    // fdmap: __reserved must be 0; unknown flags are EINVAL.
    assert_eq!(
        e(fdmap_raw(stray, &mut b, 0)),
        Some(libc::EINVAL),
        "__reserved"
    );
    assert_eq!(e(fdmap_raw(ok, &mut b, 0x80)), Some(libc::EINVAL));
    assert_eq!(fdmap_raw(ok, &mut [], 0), Ok(0));
    let pidfd = Target::open_pidfd(Pid::this_process()).unwrap();
    let by_pidfd = Req {
        target: pidfd.as_raw_fd(),
        ..ok
    };
    let n = fdmap_raw(by_pidfd, &mut b, FD_TARGET_PIDFD).unwrap();
    assert!(b[..n].contains(&0) || n == b.len());
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

//! The syscall backend must return exactly what the /proc backend returns,
//! in every mode. On a kernel without pidmap(2) these tests skip with a
//! note, unless `PIDMAP_REQUIRE_SYSCALL=1` (set by the QEMU guest runner),
//! in which case they fail.

mod support;

use pidmap::{sys, ActiveBackend, Backend, Error, KernelSupport, Pid, Pidmap, Query};
use support::*;

fn list(pm: &mut Pidmap, q: Query) -> Result<Vec<Pid>, String> {
    let mut v = Vec::new();
    pm.fill(q, &mut v).map_err(|e| format!("{e:?}"))?;
    Ok(v)
}

fn list_fds(pm: &mut Pidmap, pid: Pid) -> Result<Vec<i32>, String> {
    let mut v = Vec::new();
    pm.fill_fds(pid, &mut v).map_err(|e| format!("{e:?}"))?;
    Ok(v)
}

/// Both backends, compared under the stability retry.
fn same(test: &str, q: Query) {
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
    // The panic itself, without printing a misleading skip note.
    let r = std::panic::catch_unwind(|| gate(Missing, true, "(gate self-test)"));
    assert!(r.is_err(), "a required but missing syscall must fail");
}

#[test]
fn auto_follows_kernel_support() {
    let support = pidmap::kernel_support();
    if std::env::var("PIDMAP_EXPECT_NO_SYSCALL").is_ok_and(|v| v == "1") {
        // The guest runner's unpatched-kernel boot: the probe must say so.
        assert_eq!(support, KernelSupport::Missing);
    }
    let auto = Pidmap::new().unwrap();
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
}

#[test]
fn same_processes_without_kthreads() {
    same(
        "same_processes_without_kthreads",
        Query::processes().without_kthreads(),
    );
}

#[test]
fn same_all_tasks() {
    let _parked = ParkedThreads::spawn(5);
    same("same_all_tasks", Query::all_tasks());
}

#[test]
fn same_all_tasks_without_kthreads() {
    same(
        "same_all_tasks_without_kthreads",
        Query::all_tasks().without_kthreads(),
    );
}

#[test]
fn same_threads() {
    let parked = ParkedThreads::spawn(300);
    same("same_threads", Query::threads(Pid::this_process()));
    same("same_threads_caller", Query::threads(Pid::CALLER));
    same("same_threads_via_tid", Query::threads(parked.tids[7]));
    same("same_threads_pid1", Query::threads(Pid::from_raw(1)));
}

#[test]
fn same_children() {
    let fam = Family::spawn(6);
    same("same_children_family", Query::children(fam.child));
    same("same_children_leaf", Query::children(fam.grandchildren[0]));
    same("same_children_self", Query::children(Pid::this_process()));
    same("same_children_pid1", Query::children(Pid::from_raw(1)));
    if let Some(mut sc) = syscall_backend("same_children") {
        assert_eq!(
            list(&mut sc, Query::children(fam.child)).unwrap(),
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
    for pid in [fam.child, Pid::from_raw(1)] {
        agree(
            "same_fds",
            || list_fds(&mut pf, pid),
            || list_fds(&mut sc, pid),
        );
    }
    // Our own table: the /proc reader sees the directory fd it holds open
    // while reading /proc/self/fd, which the syscall never does. Anything
    // else must match.
    for pid in [Pid::CALLER, Pid::this_process()] {
        let mut ok = false;
        for _ in 0..200 {
            let a = list_fds(&mut sc, pid).unwrap();
            let b = list_fds(&mut pf, pid).unwrap();
            let c = list_fds(&mut sc, pid).unwrap();
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
        assert!(ok, "fds of {pid}: the backends never agreed");
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
    let neg = Pid::from_raw(-1);
    assert!(matches!(
        sc.fill(Query::threads(neg), &mut Vec::new()),
        Err(Error::InvalidArgument(_))
    ));
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
    let parent = Pid::this_process();
    assert_fds_denied_to_nobody(&mut sc, parent);
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
        Query::threads(Pid::CALLER),
        Query::children(fam.child),
    ];
    for q in qs {
        let mut full_pm = syscall_backend("chunked_step_3").unwrap();
        agree(
            "chunked vs full",
            || list(&mut full_pm, q).unwrap(),
            || {
                let mut all = Vec::new();
                let mut buf = [Pid::default(); 3];
                let mut start = 0;
                loop {
                    let n = sc.read_chunk(q, start, &mut buf).unwrap();
                    if n == 0 {
                        break all;
                    }
                    assert!(n <= 3);
                    all.extend_from_slice(&buf[..n]);
                    start = buf[n - 1].as_raw() + 1;
                }
            },
        );
    }
}

#[test]
fn iterator_batches_across_syscalls() {
    let Some(sc) = syscall_backend("iterator_batches") else {
        return;
    };
    let parked = ParkedThreads::spawn(600);
    let got = sc.iter(Query::threads(Pid::CALLER)).to_vec().unwrap();
    assert_ascending(&got);
    assert!(got.len() > pidmap::iter::BATCH * 2);
    assert!(parked.tids.iter().all(|t| got.binary_search(t).is_ok()));
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
    let mut b = [0i32; 8];
    let e = |r: Result<usize, i32>| r.err();
    assert_eq!(
        e(sys::pidmap(0, &mut b, 0, sys::PIDMAP_PROC | 0x8000)),
        Some(libc::EINVAL)
    );
    assert_eq!(e(sys::pidmap(0, &mut b, 0, 0)), Some(libc::EINVAL));
    assert_eq!(
        e(sys::pidmap(
            0,
            &mut b,
            0,
            sys::PIDMAP_PROC | sys::PIDMAP_TASKS
        )),
        Some(libc::EINVAL)
    );
    assert_eq!(
        e(sys::pidmap(0, &mut b, -1, sys::PIDMAP_PROC)),
        Some(libc::EINVAL)
    );
    assert_eq!(
        e(sys::pidmap(1, &mut b, 0, sys::PIDMAP_PROC)),
        Some(libc::EINVAL)
    );
    assert_eq!(
        e(sys::pidmap(-1, &mut b, 0, sys::PIDMAP_TASKS)),
        Some(libc::EINVAL)
    );
    assert_eq!(e(sys::fdmap(0, &mut b, 0, 1)), Some(libc::EINVAL));
    assert_eq!(sys::pidmap(0, &mut [], 0, sys::PIDMAP_PROC), Ok(0));
    assert_eq!(sys::fdmap(0, &mut [], 0, 0), Ok(0));
    assert_eq!(
        sys::pidmap(0, &mut b, 0, sys::PIDMAP_TASKS).map(|n| n >= 1),
        Ok(true)
    );
    assert_eq!(
        e(sys::pidmap(
            NO_SUCH_PID.as_raw(),
            &mut b,
            0,
            sys::PIDMAP_TASKS
        )),
        Some(libc::ESRCH)
    );
}

//! The /proc backend against the host's /proc, with threads, fds and
//! processes created by the test itself. Mounts happen only in a private
//! mount namespace (a thread that `unshare(CLONE_NEWNS)`s).

#![cfg(feature = "fallback")]

mod support;

use std::collections::BTreeSet;

use pidmap::{Backend, Error, Pid, Pidmap, Query, Target, TargetId};
use support::*;

fn std_read_dir_ids(path: &str) -> BTreeSet<i32> {
    std::fs::read_dir(path)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

#[test]
fn processes_match_read_dir_and_are_sorted() {
    let mut pm = procfs_backend();
    let mut v = Vec::new();
    pm.fill(Query::processes(), &mut v).unwrap();
    assert_ascending(&v);
    assert!(v.contains(&Pid::this_process()));
    assert!(v.iter().all(|p| p.as_raw() > 0));
    agree(
        "processes vs std::fs::read_dir",
        || std_read_dir_ids("/proc"),
        || {
            let mut v = Vec::new();
            pm.fill(Query::processes(), &mut v).unwrap();
            v.iter().map(|p| p.as_raw()).collect::<BTreeSet<_>>()
        },
    );
}

#[test]
fn threads_include_our_parked_threads() {
    let parked = ParkedThreads::spawn(12);
    let mut pm = procfs_backend();
    let mut v = Vec::new();
    for q in [
        Query::threads(Pid::this_process()),
        Query::threads(Target::Caller),
    ] {
        pm.fill(q, &mut v).unwrap();
        assert_ascending(&v);
        assert!(v.contains(&Pid::this_process()));
        assert!(v.contains(&gettid()));
        for t in &parked.tids {
            assert!(v.contains(t), "thread {t} missing from {v:?}");
        }
    }
    // A non-leader tid names the same thread group, as /proc/TID does.
    let via_tid: Vec<Pid> = pm
        .iter(Query::threads(parked.tids[0]))
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(via_tid.contains(&parked.tids[3]));
    agree(
        "threads vs read_dir(/proc/self/task)",
        || std_read_dir_ids("/proc/self/task"),
        || {
            let mut v = Vec::new();
            pm.fill(Query::threads(Target::Caller), &mut v).unwrap();
            v.iter().map(|p| p.as_raw()).collect::<BTreeSet<_>>()
        },
    );
}

#[test]
fn all_tasks_include_threads_of_every_process() {
    let parked = ParkedThreads::spawn(4);
    let mut pm = procfs_backend();
    let mut all = Vec::new();
    pm.fill(Query::all_tasks(), &mut all).unwrap();
    assert_ascending(&all);
    for t in &parked.tids {
        assert!(
            all.binary_search(t).is_ok(),
            "tid {t} missing from all tasks"
        );
    }
    // Every process listed before, between and after two equal all-task
    // listings lived through both, so it is itself a task. (A process that
    // forks and exits between the two listings shows only in the middle
    // one, which is why the process listing is taken three times.)
    let mut before = Vec::new();
    let mut procs = Vec::new();
    let mut after = Vec::new();
    let mut again = Vec::new();
    let mut stable = false;
    for _ in 0..200 {
        pm.fill(Query::processes(), &mut before).unwrap();
        pm.fill(Query::all_tasks(), &mut all).unwrap();
        pm.fill(Query::processes(), &mut procs).unwrap();
        pm.fill(Query::all_tasks(), &mut again).unwrap();
        pm.fill(Query::processes(), &mut after).unwrap();
        if all == again {
            let lived_through = procs
                .iter()
                .filter(|p| before.binary_search(p).is_ok() && after.binary_search(p).is_ok());
            for p in lived_through {
                assert!(
                    all.binary_search(p).is_ok(),
                    "process {p} not among all tasks"
                );
            }
            assert!(
                procs.binary_search(&Pid::this_process()).is_ok(),
                "our own process not listed"
            );
            stable = true;
            break;
        }
    }
    assert!(stable, "all-tasks listing never stable");
    // Iterator and fill agree on our own threads.
    let it: Vec<Pid> = pm
        .iter(Query::all_tasks())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_ascending(&it);
    assert!(parked.tids.iter().all(|t| it.binary_search(t).is_ok()));
}

#[test]
fn kthread_filter_uses_stat_flags() {
    let mut pm = procfs_backend();
    let mut all = Vec::new();
    let mut user = Vec::new();
    pm.fill(Query::processes(), &mut all).unwrap();
    pm.fill(Query::processes().without_kthreads(), &mut user)
        .unwrap();
    assert_ascending(&user);
    assert!(user.contains(&Pid::this_process()));
    let is_k = |p: Pid| -> Option<bool> {
        let s = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        let flags: u64 = s[s.rfind(')')? + 2..].split(' ').nth(6)?.parse().ok()?;
        Some(flags & 0x0020_0000 != 0)
    };
    for p in &user {
        assert_ne!(is_k(*p), Some(true), "{p} is a kernel thread");
    }
    for p in all.iter().filter(|p| user.binary_search(p).is_err()) {
        // Left out: a kernel thread, or gone meanwhile.
        assert_ne!(
            is_k(*p),
            Some(false),
            "{p} left out but not a kernel thread"
        );
    }
    // Threads of a user process are all kept; of pid 2 (kthreadd, when
    // visible in this namespace) none are.
    pm.fill(Query::threads(Target::Caller).without_kthreads(), &mut user)
        .unwrap();
    assert!(user.contains(&Pid::this_process()));
    if is_k(Pid::from_raw(2)) == Some(true) {
        pm.fill(
            Query::threads(Pid::from_raw(2)).without_kthreads(),
            &mut user,
        )
        .unwrap();
        assert!(user.is_empty());
        pm.fill(
            Query::children(Pid::from_raw(2)).without_kthreads(),
            &mut user,
        )
        .unwrap();
        assert!(user.is_empty());
    }
}

/// Move a fresh pipe end to a fixed high fd no other test uses.
fn fd_at(target: i32) -> i32 {
    let mut p = [0; 2];
    // SAFETY: valid array; dup2/close on fds we own.
    unsafe {
        assert_eq!(libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC), 0);
        assert_eq!(libc::dup2(p[0], target), target);
        libc::close(p[0]);
        libc::close(p[1]);
    }
    target
}

#[test]
fn fds_of_self_track_opens_and_closes() {
    let mut pm = procfs_backend();
    let mine: Vec<i32> = (0..5).map(|i| fd_at(700 + 3 * i)).collect();
    let mut v = Vec::new();
    pm.fill_fds(Target::Caller, &mut v).unwrap();
    assert_ascending(&v);
    for fd in &mine {
        assert!(v.contains(fd), "fd {fd} missing from {v:?}");
    }
    // fd 0 is a valid fd, not filtered as a non-id.
    // SAFETY: F_GETFD on fd 0 has no side effects.
    let zero_open = unsafe { libc::fcntl(0, libc::F_GETFD) } >= 0;
    assert_eq!(v.first() == Some(&0), zero_open);
    let via_pid = pm.fds(Pid::this_process()).to_vec().unwrap();
    assert!(mine.iter().all(|fd| via_pid.contains(fd)));
    // Chunked with a cursor, step 2.
    let mut got = Vec::new();
    let mut buf = [0; 2];
    let mut start = 700;
    loop {
        let n = pm.read_fd_chunk(Target::Caller, start, &mut buf).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        start = buf[n - 1] + 1;
    }
    assert!(mine.iter().all(|fd| got.contains(fd)));
    assert!(got.iter().all(|&fd| fd >= 700));
    for fd in &mine {
        // SAFETY: closing an fd we own.
        unsafe { libc::close(*fd) };
    }
    pm.fill_fds(Target::Caller, &mut v).unwrap();
    for fd in &mine {
        assert!(!v.contains(fd), "closed fd {fd} still listed");
    }
}

#[test]
fn children_of_a_forked_family() {
    let fam = Family::spawn(5);
    let mut pm = procfs_backend();
    let mut v = Vec::new();
    pm.fill(Query::children(fam.child), &mut v).unwrap();
    assert_eq!(v, fam.grandchildren);
    pm.fill(Query::children(Pid::this_process()), &mut v)
        .unwrap();
    assert!(v.contains(&fam.child));
    for g in &fam.grandchildren {
        pm.fill(Query::children(*g), &mut v).unwrap();
        assert!(v.is_empty());
    }
    let via_iter = pm.iter(Query::children(fam.child)).to_vec().unwrap();
    assert_eq!(via_iter, fam.grandchildren);
    // Cursor in the middle.
    let mut buf = [Pid::from_raw(0); 16];
    let start = fam.grandchildren[2].as_raw();
    let n = pm
        .read_chunk(Query::children(fam.child), start, &mut buf)
        .unwrap();
    assert_eq!(&buf[..n], &fam.grandchildren[2..]);
}

#[test]
fn missing_pid_is_esrch_in_every_mode() {
    let mut pm = procfs_backend();
    let mut v = Vec::new();
    assert!(is_esrch(&pm.fill(Query::threads(NO_SUCH_PID), &mut v)));
    assert!(is_esrch(&pm.fill(Query::children(NO_SUCH_PID), &mut v)));
    let mut f = Vec::new();
    assert!(is_esrch(&pm.fill_fds(NO_SUCH_PID, &mut f)));
    let mut it = pm.iter(Query::threads(NO_SUCH_PID));
    assert!(matches!(
        it.next(),
        Some(Err(Error::NoSuchProcess { target: TargetId::Pid(p) })) if p == NO_SUCH_PID
    ));
    assert!(it.next().is_none());
    let e = pm.fill_fds(NO_SUCH_PID, &mut Vec::new()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ESRCH));
    assert_eq!(
        e.to_string(),
        format!("no such process: process {NO_SUCH_PID}")
    );
}

#[test]
fn zombie_has_no_fds() {
    // SAFETY: the child exits at once.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: leave without unwinding.
        unsafe { libc::_exit(0) };
    }
    let z = Pid::from_raw(pid);
    // Wait until it is a zombie.
    for _ in 0..1000 {
        let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if s.contains(") Z ") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let mut pm = procfs_backend();
    let mut f = Vec::new();
    assert!(
        is_esrch(&pm.fill_fds(z, &mut f)),
        "{:?}",
        pm.fill_fds(z, &mut f)
    );
    // SAFETY: reap our child.
    unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
    assert!(is_esrch(&pm.fill_fds(z, &mut f)));
    assert!(is_esrch(&pm.fill(Query::threads(z), &mut Vec::new())));
}

#[test]
fn negative_pid_and_start_are_invalid() {
    let mut pm = procfs_backend();
    let mut v = Vec::new();
    let neg = Pid::from_raw(-4);
    assert!(matches!(
        pm.fill(Query::threads(neg), &mut v),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        pm.fill(Query::children(neg), &mut v),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        pm.fill_fds(neg, &mut Vec::new()),
        Err(Error::InvalidArgument(_))
    ));
    let mut buf = [Pid::from_raw(0); 4];
    assert!(matches!(
        pm.read_chunk(Query::processes(), -1, &mut buf),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn fds_of_another_user_are_permission_denied() {
    if !is_root() {
        note("skipping fds_of_another_user_are_permission_denied: not root");
        return;
    }
    let parent = Pid::this_process();
    // Allocate everything before fork.
    let mut pm = procfs_backend();
    assert_fds_denied_to_nobody(&mut pm, parent);
}

#[test]
fn fill_reuses_the_callers_vec() {
    let mut pm = procfs_backend();
    let mut v = Vec::with_capacity(1 << 16);
    pm.fill(Query::processes(), &mut v).unwrap();
    let ptr = v.as_ptr();
    for _ in 0..5 {
        pm.fill(Query::processes(), &mut v).unwrap();
        pm.fill(Query::threads(Target::Caller), &mut v).unwrap();
        assert_eq!(v.as_ptr(), ptr, "the Vec was reallocated");
    }
}

#[test]
fn chunked_listing_with_step_3_equals_full_listing() {
    let _parked = ParkedThreads::spawn(7);
    let mut pm = procfs_backend();
    let q = Query::threads(Target::Caller);
    let mut pm2 = procfs_backend();
    agree(
        "chunked vs full",
        || {
            let mut v = Vec::new();
            pm2.fill(q, &mut v).unwrap();
            v
        },
        || read_in_chunks_of_3(&mut pm, q),
    );
}

#[test]
fn proc_root_must_be_procfs() {
    for bad in ["/", "/nonexistent-proc-root", "/proc/self/stat"] {
        let r = Pidmap::builder()
            .backend(Backend::Procfs)
            .proc_root(bad)
            .build();
        assert!(matches!(r, Err(Error::ProcNotMounted(_))), "{bad}: {r:?}");
    }
    let msg = Pidmap::builder()
        .backend(Backend::Procfs)
        .proc_root("/")
        .build()
        .unwrap_err()
        .to_string();
    assert!(msg.contains("not a mounted procfs"), "{msg}");
    let pm = Pidmap::builder()
        .backend(Backend::Procfs)
        .proc_root("/proc/")
        .build()
        .unwrap();
    assert_eq!(pm.proc_root().unwrap(), std::path::Path::new("/proc/"));
}

/// `open()` errors keep their errno: with RLIMIT_NOFILE exhausted the
/// listing says EMFILE, not "no such process" or "not mounted".
#[test]
fn open_errors_keep_their_errno() {
    let mut pm = procfs_backend();
    let mut v: Vec<Pid> = Vec::with_capacity(1 << 16);
    let mut fds: Vec<i32> = Vec::with_capacity(1 << 12);
    let code = in_child(|| {
        // Fill the fd table up to a tiny limit, then ask for listings that
        // need to open a directory.
        let lim = libc::rlimit {
            rlim_cur: 64,
            rlim_max: 64,
        };
        // SAFETY: setrlimit/dup on our own (child) process.
        unsafe {
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return 10;
            }
            while libc::dup(2) >= 0 {}
        }
        let a = pm.fill(Query::threads(Pid::this_process()), &mut v);
        let b = pm.fill_fds(Target::Caller, &mut fds);
        let c = Pidmap::with_backend(Backend::Procfs);
        let emfile = |e: Option<i32>| e == Some(libc::EMFILE);
        let ok = [
            a.err().and_then(|e| e.raw_os_error()),
            b.err().and_then(|e| e.raw_os_error()),
            c.err().and_then(|e| e.raw_os_error()),
        ]
        .into_iter()
        .all(emfile);
        if ok {
            0
        } else {
            11
        }
    });
    assert_eq!(code, 0, "child exit code (10 setrlimit, 11 wrong errno)");
}

/// "The caller" for fds is the calling thread's table (`thread-self`), which
/// differs from the process's after `unshare(CLONE_FILES)`.
#[test]
fn caller_fds_are_the_calling_threads_table() {
    let r = std::thread::spawn(|| {
        // Other tests run in parallel and open fds in the process's table,
        // so the pipe moves to numbers none of them reaches (>= 700): a
        // listing of the process's table then names them only if it read
        // this thread's table by mistake.
        // SAFETY: unshare of this thread's fd table; pipe2 into a local
        // array; the low ends are closed once duplicated.
        let (rc, p) = unsafe {
            let rc = libc::unshare(libc::CLONE_FILES);
            let mut low = [0; 2];
            assert_eq!(libc::pipe2(low.as_mut_ptr(), libc::O_CLOEXEC), 0);
            let p = low.map(|fd| libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 700));
            assert!(p.iter().all(|&fd| fd >= 700), "F_DUPFD_CLOEXEC: {p:?}");
            for fd in low {
                libc::close(fd);
            }
            (rc, p)
        };
        assert_eq!(rc, 0, "unshare(CLONE_FILES)");
        let mut pm = procfs_backend();
        let mut mine = Vec::new();
        let mut process = Vec::new();
        pm.fill_fds(Target::Caller, &mut mine).unwrap();
        pm.fill_fds(Pid::this_process(), &mut process).unwrap();
        let via_thread_id = pm.fds(Pid::this_thread()).to_vec();
        // SAFETY: closing our pipe.
        unsafe {
            libc::close(p[0]);
            libc::close(p[1]);
        }
        (p, mine, process, via_thread_id)
    })
    .join()
    .unwrap();
    let (p, mine, process, via_thread_id) = r;
    assert!(
        mine.contains(&p[0]) && mine.contains(&p[1]),
        "{p:?} not in {mine:?}"
    );
    let via_thread_id = via_thread_id.unwrap();
    assert!(
        via_thread_id.contains(&p[0]),
        "{p:?} not in /proc/TID/fd {via_thread_id:?}"
    );
    // The leader's table was copied before the pipe existed.
    assert!(
        !process.contains(&p[0]) && !process.contains(&p[1]),
        "the process's table {process:?} lists this thread's pipe {p:?}"
    );
}

/// A pidfd target in the fallback: the same threads as the pid, and
/// NoSuchProcess once the process is gone, even though its pid number may
/// be listed again by another process.
#[test]
fn pidfd_target_follows_its_process() {
    let fam = Family::spawn(2);
    let pidfd = Target::open_pidfd(fam.child).unwrap();
    let mut pm = procfs_backend();
    let mut a = Vec::new();
    let mut b = Vec::new();
    pm.fill(Query::children(&pidfd), &mut a).unwrap();
    pm.fill(Query::children(fam.child), &mut b).unwrap();
    assert_eq!(a, fam.grandchildren);
    assert_eq!(a, b);
    let mut t = Vec::new();
    pm.fill(Query::threads(&pidfd), &mut t).unwrap();
    assert_eq!(t, [fam.child]);
    drop(fam);
    let r = pm.fill(Query::threads(&pidfd), &mut t);
    assert!(is_esrch(&r), "{r:?}");
    // Not a pidfd: EINVAL; not open: EBADF.
    let file = std::fs::File::open("/proc/self/stat").unwrap();
    let r = pm.fill(Query::threads(std::os::fd::AsFd::as_fd(&file)), &mut t);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
}

/// A procfs mounted on a fresh directory, in a private mount namespace;
/// the directory is removed afterwards.
#[test]
fn proc_mounted_elsewhere() {
    let dir = std::env::temp_dir().join(format!("pidmap-proc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.clone();
    let host_sees_it = dir.clone();
    let r = in_private_mount_ns(move || {
        mount_procfs(&d, "");
        let mut alt = Pidmap::builder()
            .backend(Backend::Procfs)
            .proc_root(&d)
            .build()
            .unwrap();
        let mut std_pm = procfs_backend();
        let _parked = ParkedThreads::spawn(3);
        agree(
            "threads via alternate root",
            || {
                let mut v = Vec::new();
                std_pm
                    .fill(Query::threads(Pid::this_process()), &mut v)
                    .unwrap();
                v
            },
            || {
                let mut v = Vec::new();
                alt.fill(Query::threads(Pid::this_process()), &mut v)
                    .unwrap();
                v
            },
        );
        let mut v = Vec::new();
        alt.fill(Query::processes(), &mut v).unwrap();
        assert!(v.contains(&Pid::this_process()));
        assert_eq!(alt.proc_root(), Some(d.as_path()));
    });
    // Not visible outside the namespace: the directory is still empty here.
    let leaked = std::fs::read_dir(&host_sees_it).unwrap().count();
    let _ = std::fs::remove_dir(&dir);
    if r.is_some() {
        assert_eq!(leaked, 0, "the procfs mount leaked into the host namespace");
    } else {
        assert!(!is_root(), "root must be able to unshare(CLONE_NEWNS)");
    }
}

/// With /proc unmounted (in a private mount namespace): the fallback
/// reports ProcNotMounted, never an empty listing.
#[test]
fn proc_unmounted_is_an_error_for_the_fallback() {
    let r = in_private_mount_ns(|| {
        // SAFETY: detaching /proc in our private namespace only.
        let rc = unsafe { libc::umount2(c"/proc".as_ptr(), libc::MNT_DETACH) };
        assert_eq!(rc, 0, "umount /proc: {}", std::io::Error::last_os_error());
        let r = Pidmap::with_backend(Backend::Procfs);
        assert!(
            matches!(r, Err(Error::ProcNotMounted(ref p)) if p == std::path::Path::new("/proc")),
            "{r:?}"
        );
        r.unwrap_err().to_string()
    });
    match r {
        Some(msg) => assert!(msg.contains("/proc is not a mounted procfs"), "{msg}"),
        None => assert!(!is_root(), "root must be able to unshare(CLONE_NEWNS)"),
    }
}

#[test]
fn process_cursor_skips_exactly_the_ids_below_start() {
    let mut pm = procfs_backend();
    let mut full = Vec::new();
    pm.fill(Query::processes(), &mut full).unwrap();
    assert!(full.contains(&Pid::from_raw(1)), "pid 1 must be listed");
    let me = Pid::this_process().as_raw();
    let mut pm2 = procfs_backend();
    for start in [0, 1, 2, 3, 255, 256, 257, 258, me - 1, me, me + 1] {
        let start = start.max(0);
        agree(
            "cursor",
            || {
                let mut v = Vec::new();
                pm2.fill(Query::processes(), &mut v).unwrap();
                v.retain(|p| p.as_raw() >= start);
                v
            },
            || {
                let mut buf = vec![Pid::from_raw(0); 1 << 16];
                let n = pm.read_chunk(Query::processes(), start, &mut buf).unwrap();
                buf.truncate(n);
                buf
            },
        );
    }
}

/// The environment is opt-in: `Pidmap::new()` ignores `PIDMAP_BACKEND`
/// (even a bad value), `Backend::from_env` and `backend_from_env` read it.
/// In a forked child: the environment is process-wide.
#[test]
fn the_backend_variable_is_read_only_when_asked() {
    let code = in_child(|| {
        std::env::set_var(pidmap::BACKEND_ENV, "bogus");
        if Pidmap::new().is_err() {
            return 10;
        }
        if Backend::from_env().is_ok() || Pidmap::builder().backend_from_env().is_ok() {
            return 11;
        }
        std::env::set_var(pidmap::BACKEND_ENV, "procfs");
        let built = Pidmap::builder()
            .backend_from_env()
            .and_then(pidmap::Builder::build);
        match built {
            Ok(pm) if pm.active() == pidmap::ActiveBackend::Procfs => {}
            _ => return 12,
        }
        if Pidmap::new().map(|pm| pm.detection().requested).ok() != Some(Backend::Auto) {
            return 13;
        }
        0
    });
    assert_eq!(
        code, 0,
        "child exit code (10 new() read the variable, 11 a bad value passed, \
         12 from_env ignored procfs, 13 new() is not Auto)"
    );
}

const EXEC_GENERATION: &str = "PIDMAP_TEST_EXEC_GENERATION";
const EXEC_DIR: &str = "PIDMAP_TEST_EXEC_DIR";
const EXEC_TEST: &str = "a_thread_that_execs_in_a_loop_is_neither_missed_nor_read_twice";

/// The child of the exec test, generation `generation`: a thread named
/// `e<generation>`, then the leader renamed `l<generation>`, then the
/// thread `execve()`s this test binary again through the link `g0` or
/// `g1` of `dir` (the next generation's parity: its leader's name until it
/// renames itself), and so on until killed.
fn exec_child(generation: u64, dir: &str) -> ! {
    use std::ffi::CString;
    let next = generation + 1;
    let path = CString::new(format!("{dir}/g{}", next % 2)).unwrap();
    let args: Vec<CString> = [
        path.to_str().unwrap(),
        "--exact",
        EXEC_TEST,
        "--test-threads=1",
        "-q",
    ]
    .iter()
    .map(|a| CString::new(*a).unwrap())
    .collect();
    let env: Vec<CString> = std::env::vars()
        .filter(|(k, _)| k != EXEC_GENERATION)
        .map(|(k, v)| format!("{k}={v}"))
        .chain([format!("{EXEC_GENERATION}={next}")])
        .map(|kv| CString::new(kv).unwrap())
        .collect();
    let (named_tx, named_rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        let name = CString::new(format!("e{generation}")).unwrap();
        // SAFETY: PR_SET_NAME reads a NUL-terminated string we own.
        unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr()) };
        named_tx.send(()).unwrap();
        go_rx.recv().unwrap();
        let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut envp: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
        envp.push(std::ptr::null());
        // SAFETY: the path, argv and envp are NUL-terminated strings and
        // NULL-terminated arrays that live until the call.
        unsafe { libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
        panic!("execve: {}", std::io::Error::last_os_error());
    });
    named_rx.recv().unwrap();
    // The leader may not be this thread (the harness's): named by its
    // `comm` file.
    let leader = std::process::id();
    std::fs::write(
        format!("/proc/self/task/{leader}/comm"),
        format!("l{generation}"),
    )
    .unwrap();
    go_tx.send(()).unwrap();
    let _ = thread.join();
    unreachable!("the thread's execve() ended this image");
}

/// A thread that `execve()`s takes its group's number (`de_thread()`), and
/// the old leader, dead, takes the thread's for a moment: a refresh that
/// reads the group across an exec must read the exec'ing thread once, and
/// not the old leader in its place. A child execs from a non-leader thread
/// in a loop, naming its tasks so that a refresh shows which generation
/// it read each in; the default and the kept-files handles refresh every
/// task meanwhile. In each refresh: the leader's number is there; a leader
/// named `l<k>` (renamed after its thread `e<k>` was named, and before
/// that thread's exec) comes with a thread `e<k>` (else the exec'ing
/// thread was missed, its number read after the exec and the leader's
/// before); a thread `e<k>` comes with a leader of its own generation,
/// `l<k>` or the link `g<k % 2>` it was started by (else the exec'ing
/// thread was read twice, before its exec and after, as the leader, which
/// shows `e<k>` too between the exchange of numbers and the exec's
/// naming).
#[test]
fn a_thread_that_execs_in_a_loop_is_neither_missed_nor_read_twice() {
    if let Ok(generation) = std::env::var(EXEC_GENERATION) {
        let dir = std::env::var(EXEC_DIR).unwrap();
        exec_child(generation.parse().unwrap(), &dir);
    }
    let dir = std::env::temp_dir().join(format!("pidmap-exec-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    let exe = std::env::current_exe().unwrap();
    for link in ["g0", "g1"] {
        std::os::unix::fs::symlink(&exe, dir.join(link)).unwrap();
    }
    let mut child = std::process::Command::new(dir.join("g0"))
        .args(["--exact", EXEC_TEST, "--test-threads=1", "-q"])
        .env(EXEC_GENERATION, "0")
        .env(EXEC_DIR, &dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let g = Pid::from_raw(i32::try_from(child.id()).unwrap());
    let fields = pidmap::InfoFields::TGID | pidmap::InfoFields::COMM;
    let mut handles = [
        procfs_backend(),
        Pidmap::builder()
            .backend(Backend::Procfs)
            .keep_files(true)
            .build()
            .unwrap(),
    ];
    let mut recs = Vec::new();
    let (mut refreshes, mut generations) = (0u32, BTreeSet::new());
    // Four seconds, and on a slow machine (a debug kernel under TCG)
    // on until five generations were seen, for two minutes at most.
    let started = std::time::Instant::now();
    let done = |generations: &BTreeSet<String>| {
        let elapsed = started.elapsed().as_secs();
        elapsed >= 120 || (elapsed >= 4 && generations.len() >= 5)
    };
    let mut failure = None;
    'refresh: while !done(&generations) {
        for (h, pm) in handles.iter_mut().enumerate() {
            pm.fill_info(Query::all_tasks(), fields, &mut recs).unwrap();
            refreshes += 1;
            let name = |r: &pidmap::TaskInfo| {
                String::from_utf8_lossy(r.comm.as_ref().map_or(&[][..], |c| c.as_bytes()))
                    .into_owned()
            };
            let group: Vec<(Pid, String)> = recs
                .iter()
                .filter(|r| r.tgid == Some(g))
                .map(|r| (r.tid, name(r)))
                .collect();
            let Some(leader) = group.iter().find(|(t, _)| *t == g).map(|(_, n)| n.clone()) else {
                let tids: Vec<_> = recs.iter().filter(|r| r.tid == g).collect();
                failure = Some(format!(
                    "handle {h}: the leader's number {g} missing from its group: {tids:?}"
                ));
                break 'refresh;
            };
            if let Some(k) = leader.strip_prefix('l') {
                generations.insert(k.to_owned());
                let thread = format!("e{k}");
                if !group.iter().any(|(t, n)| *t != g && *n == thread) {
                    failure = Some(format!(
                        "handle {h}: {thread} missed beside leader {leader}: {group:?}"
                    ));
                    break 'refresh;
                }
            }
            for (t, n) in &group {
                let Some(k) = n.strip_prefix('e').and_then(|k| k.parse::<u64>().ok()) else {
                    continue;
                };
                generations.insert(k.to_string());
                // The leader's number under `e<k>`: the exec'ing thread
                // after `de_thread()`, before the exec names it; then no
                // other task is `e<k>` (that one is checked from its side).
                if *t == g {
                    continue;
                }
                if leader != format!("l{k}") && leader != format!("g{}", k % 2) {
                    failure = Some(format!(
                        "handle {h}: {n} ({t}) beside leader {leader}: {group:?}"
                    ));
                    break 'refresh;
                }
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(failure, None, "after {refreshes} refreshes");
    assert!(
        generations.len() >= 5,
        "the child went through {} generations in {refreshes} refreshes",
        generations.len()
    );
}

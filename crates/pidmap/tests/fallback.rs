//! The /proc backend against the host's /proc, with threads, fds and
//! processes created by the test itself.

mod support;

use std::collections::BTreeSet;
use std::os::fd::RawFd;

use pidmap::{Backend, Error, Pid, Pidmap, Query};
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
        Query::threads(Pid::CALLER),
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
    let via_tid = pm.iter(Query::threads(parked.tids[0]));
    let via_tid: Vec<Pid> = via_tid.collect::<Result<_, _>>().unwrap();
    assert!(via_tid.contains(&parked.tids[3]));
    agree(
        "threads vs read_dir(/proc/self/task)",
        || std_read_dir_ids("/proc/self/task"),
        || {
            let mut v = Vec::new();
            pm.fill(Query::threads(Pid::CALLER), &mut v).unwrap();
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
    // Every process alive across two all-task listings is itself a task.
    let mut procs = Vec::new();
    let mut again = Vec::new();
    let mut stable = false;
    for _ in 0..200 {
        pm.fill(Query::all_tasks(), &mut all).unwrap();
        pm.fill(Query::processes(), &mut procs).unwrap();
        pm.fill(Query::all_tasks(), &mut again).unwrap();
        if all == again {
            for p in &procs {
                assert!(
                    all.binary_search(p).is_ok(),
                    "process {p} not among all tasks"
                );
            }
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
    pm.fill(Query::threads(Pid::CALLER).without_kthreads(), &mut user)
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
fn fd_at(target: RawFd) -> RawFd {
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
    let mine: Vec<RawFd> = (0..5).map(|i| fd_at(700 + 3 * i)).collect();
    let mut v = Vec::new();
    pm.fill_fds(Pid::CALLER, &mut v).unwrap();
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
        let n = pm.read_fd_chunk(Pid::CALLER, start, &mut buf).unwrap();
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
    pm.fill_fds(Pid::CALLER, &mut v).unwrap();
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
    let mut buf = [Pid::default(); 16];
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
    assert!(matches!(it.next(), Some(Err(Error::NoSuchProcess(p))) if p == NO_SUCH_PID));
    assert!(it.next().is_none());
    assert_eq!(
        Error::NoSuchProcess(NO_SUCH_PID).raw_os_error(),
        Some(libc::ESRCH)
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
    let mut buf = [Pid::default(); 4];
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
        pm.fill(Query::threads(Pid::CALLER), &mut v).unwrap();
        assert_eq!(v.as_ptr(), ptr, "the Vec was reallocated");
    }
}

#[test]
fn chunked_listing_with_step_3_equals_full_listing() {
    let _parked = ParkedThreads::spawn(7);
    let mut pm = procfs_backend();
    let q = Query::threads(Pid::CALLER);
    let chunked = |pm: &mut Pidmap| {
        let mut all = Vec::new();
        let mut buf = [Pid::default(); 3];
        let mut start = 0;
        loop {
            let n = pm.read_chunk(q, start, &mut buf).unwrap();
            if n == 0 {
                break all;
            }
            assert!(n <= 3);
            all.extend_from_slice(&buf[..n]);
            start = buf[n - 1].as_raw() + 1;
        }
    };
    let mut pm2 = procfs_backend();
    agree(
        "chunked vs full",
        || {
            let mut v = Vec::new();
            pm2.fill(q, &mut v).unwrap();
            v
        },
        || chunked(&mut pm),
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

#[test]
fn proc_mounted_elsewhere() {
    let dir = std::env::temp_dir().join(format!("pidmap-proc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = std::ffi::CString::new(dir.to_str().unwrap()).unwrap();
    // SAFETY: plain mount(2) of a fresh procfs on a directory we created.
    let mounted = unsafe {
        libc::mount(
            c"proc".as_ptr(),
            c.as_ptr(),
            c"proc".as_ptr(),
            0,
            std::ptr::null(),
        )
    } == 0;
    if !mounted {
        note(&format!(
            "skipping proc_mounted_elsewhere: cannot mount procfs here ({})",
            std::io::Error::last_os_error()
        ));
        let _ = std::fs::remove_dir(&dir);
        return;
    }
    let result = std::panic::catch_unwind(|| {
        let mut alt = Pidmap::builder()
            .backend(Backend::Procfs)
            .proc_root(&dir)
            .build()
            .unwrap();
        let mut std_pm = procfs_backend();
        let _parked = ParkedThreads::spawn(3);
        agree(
            "threads via alternate root",
            || {
                let mut v = Vec::new();
                std_pm.fill(Query::threads(Pid::CALLER), &mut v).unwrap();
                v
            },
            || {
                let mut v = Vec::new();
                alt.fill(Query::threads(Pid::CALLER), &mut v).unwrap();
                v
            },
        );
        let mut v = Vec::new();
        alt.fill(Query::processes(), &mut v).unwrap();
        assert!(v.contains(&Pid::this_process()));
    });
    // SAFETY: unmounting what we mounted.
    unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
    let _ = std::fs::remove_dir(&dir);
    result.unwrap();
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
                let mut buf = vec![Pid::default(); 1 << 16];
                let n = pm.read_chunk(Query::processes(), start, &mut buf).unwrap();
                buf.truncate(n);
                buf
            },
        );
    }
}

//! The fallback never turns an error into a short listing: only "that
//! task is gone" (`ENOENT`/`ESRCH`) is skipped; `EMFILE`, `EPERM`,
//! `EACCES`, ... reach the caller. Each case is provoked in a forked child
//! (RLIMIT_NOFILE, a dropped uid) so the test harness is not affected.

#![cfg(feature = "fallback")]

mod support;

use std::collections::BTreeSet;

use pidmap::{Backend, Pid, Pidmap, Query};
use support::*;

/// Exit codes of the children below, for the assertion messages.
const SETUP_FAILED: i32 = 10;
const LISTED_ANYWAY: i32 = 11;
const WRONG_ERRNO: i32 = 12;

/// `f`'s result as a child exit code: 0 if it failed with `want`.
fn expect_errno<T>(r: Result<T, pidmap::Error>, want: &[i32]) -> i32 {
    match r {
        Ok(_) => LISTED_ANYWAY,
        Err(e) if e.raw_os_error().is_some_and(|n| want.contains(&n)) => 0,
        Err(e) => {
            note(&format!("unexpected error: {e:?}"));
            WRONG_ERRNO
        }
    }
}

/// In a forked child: lower RLIMIT_NOFILE and fill the fd table, so that
/// every further `open()` fails with `EMFILE`.
fn exhaust_fds() -> bool {
    let lim = libc::rlimit {
        rlim_cur: 64,
        rlim_max: 64,
    };
    // SAFETY: setrlimit and dup on our own (child) process.
    unsafe {
        if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
            return false;
        }
        while libc::dup(2) >= 0 {}
    }
    true
}

/// A handle whose root directory and buffers are already open and
/// allocated, so only the per-task opens are left to fail.
fn warm_handle() -> Pidmap {
    let mut pm = Pidmap::with_backend(Backend::Procfs).unwrap();
    let mut v = Vec::new();
    pm.fill(Query::all_tasks(), &mut v).unwrap();
    pm.fill(Query::children(Pid::from_raw(1)), &mut v).unwrap();
    pm
}

#[test]
fn emfile_reaches_the_caller_of_every_listing() {
    let cases = [
        ("all tasks", Query::all_tasks()),
        (
            "processes without kthreads",
            Query::processes().without_kthreads(),
        ),
        ("children of pid 1", Query::children(Pid::from_raw(1))),
        (
            "all tasks without kthreads",
            Query::all_tasks().without_kthreads(),
        ),
    ];
    for (what, query) in cases {
        let mut pm = warm_handle();
        let mut v: Vec<Pid> = Vec::with_capacity(1 << 16);
        let code = in_child(|| {
            if !exhaust_fds() {
                return SETUP_FAILED;
            }
            expect_errno(pm.fill(query, &mut v), &[libc::EMFILE])
        });
        assert_eq!(
            code, 0,
            "{what}: child exit code ({SETUP_FAILED} setup, {LISTED_ANYWAY} \
             listed without an error, {WRONG_ERRNO} another error)"
        );
    }
}

/// The kthread filter cannot tell from a `stat` it may not read: under a
/// `hidepid=noaccess` procfs, uid 65534 listing root's processes without
/// kernel threads gets `EPERM`, not the kernel threads.
#[test]
fn kthread_filter_with_stat_unreadable_is_an_error() {
    let dir = std::env::temp_dir().join(format!("pidmap-noaccess-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.clone();
    let r = in_private_mount_ns(move || {
        mount_procfs(&d, "hidepid=noaccess");
        let mut codes = Vec::new();
        for (kthreads, query) in [
            (true, Query::processes().without_kthreads()),
            (true, Query::all_tasks().without_kthreads()),
            // Without the filter, the ABI's view rules: processes are
            // listed, and the tasks of groups the view denies left out.
            (false, Query::processes()),
            (false, Query::all_tasks()),
        ] {
            let mut pm = Pidmap::builder()
                .backend(Backend::Procfs)
                .proc_root(&d)
                .build()
                .unwrap();
            let mut v: Vec<Pid> = Vec::with_capacity(1 << 16);
            codes.push(in_child(|| {
                // SAFETY: dropping privileges in the child only.
                unsafe {
                    if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                        return SETUP_FAILED;
                    }
                }
                let r = pm.fill(query, &mut v);
                if kthreads {
                    return expect_errno(r, &[libc::EPERM, libc::EACCES]);
                }
                match r {
                    // Our own process, and pid 1 (visible, not readable).
                    Ok(()) if v.contains(&Pid::this_process()) => 0,
                    Ok(()) => 13,
                    Err(e) => {
                        note(&format!("unfiltered listing failed: {e:?}"));
                        14
                    }
                }
            }));
        }
        codes
    });
    let _ = std::fs::remove_dir(&dir);
    match r {
        Some(codes) => assert_eq!(
            codes,
            [0, 0, 0, 0],
            "child exit codes ({SETUP_FAILED} setup, {LISTED_ANYWAY} listed \
             without an error, {WRONG_ERRNO} another error, 13 self missing, \
             14 unfiltered failed)"
        ),
        None => assert!(!is_root(), "root must be able to unshare(CLONE_NEWNS)"),
    }
}

/// Processes and threads that exit while they are listed are skipped,
/// never an error; those that stay are listed.
#[test]
fn tasks_exiting_mid_listing_are_skipped() {
    let parked = ParkedThreads::spawn(3);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut spawned = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Short-lived processes, each with a short-lived thread.
                let mut c = std::process::Command::new("sh")
                    .args(["-c", "true & wait"])
                    .spawn()
                    .unwrap();
                c.wait().unwrap();
                spawned += 1;
            }
            spawned
        })
    };
    let mut pm = Pidmap::with_backend(Backend::Procfs).unwrap();
    let me = Pid::this_process();
    let mut v = Vec::new();
    for round in 0..200 {
        for q in [
            Query::all_tasks(),
            Query::all_tasks().without_kthreads(),
            Query::processes().without_kthreads(),
            Query::children(me),
            Query::children(me).without_kthreads(),
        ] {
            pm.fill(q, &mut v)
                .unwrap_or_else(|e| panic!("round {round}, {q:?}: {e}"));
        }
        pm.fill(Query::all_tasks(), &mut v).unwrap();
        let seen: BTreeSet<Pid> = v.iter().copied().collect();
        for t in &parked.tids {
            assert!(seen.contains(t), "round {round}: parked thread {t} missing");
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let spawned = churn.join().unwrap();
    assert!(spawned > 0, "the churn thread must have run");
}

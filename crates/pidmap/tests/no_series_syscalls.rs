//! A build without the `series-syscalls` feature never issues the series'
//! system calls: under a seccomp filter that kills the process on them
//! (today's numbers and the old ones), every backend still lists or
//! reports "not built", and the process lives.

#![cfg(all(feature = "fallback", not(feature = "series-syscalls")))]

use pidmap::{
    ActiveBackend, Backend, Error, InfoFields, KernelSupport, Pid, Pidmap, Query, Target,
};

// Classic BPF (`linux/filter.h`).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JEQ_K: u16 = 0x15;
const BPF_RET_K: u16 = 0x06;
/// `offsetof(struct seccomp_data, nr)`.
const DATA_NR: u32 = 0;
/// The series' numbers, and the ones it used before.
const KILLED: [u32; 5] = [473, 474, 475, 1000, 1001];

fn install_kill_filter() -> bool {
    let mut prog = vec![libc::sock_filter {
        code: BPF_LD_W_ABS,
        jt: 0,
        jf: 0,
        k: DATA_NR,
    }];
    for nr in KILLED {
        prog.push(libc::sock_filter {
            code: BPF_JMP_JEQ_K,
            jt: 0,
            jf: 1,
            k: nr,
        });
        prog.push(libc::sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_KILL_PROCESS,
        });
    }
    prog.push(libc::sock_filter {
        code: BPF_RET_K,
        jt: 0,
        jf: 0,
        k: libc::SECCOMP_RET_ALLOW,
    });
    let fprog = libc::sock_fprog {
        len: libc::c_ushort::try_from(prog.len()).unwrap(),
        filter: prog.as_mut_ptr(),
    };
    // SAFETY: prctl with integer arguments, then with a pointer to
    // `fprog`, which outlives the call (the kernel copies the program).
    unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
            && libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                std::ptr::from_ref(&fprog),
                0,
                0,
            ) == 0
    }
}

/// 0: everything as expected; 10: no filter; 11..: which check failed.
fn child() -> i32 {
    if !install_kill_filter() {
        return 10;
    }
    if pidmap::kernel_support() != KernelSupport::NotBuilt {
        return 11;
    }
    let Ok(mut auto) = Pidmap::with_backend(Backend::Auto) else {
        return 12;
    };
    if auto.active() != ActiveBackend::Procfs {
        return 13;
    }
    let mut ids = Vec::new();
    let mut infos = Vec::new();
    let mut fds = Vec::new();
    if auto.fill(Query::processes(), &mut ids).is_err()
        || !ids.contains(&Pid::this_process())
        || auto
            .fill_info(Query::threads(Target::Caller), InfoFields::ALL, &mut infos)
            .is_err()
        || auto.fill_fds(Target::Caller, &mut fds).is_err()
        || auto.info_backend().ok() != Some(ActiveBackend::Procfs)
    {
        return 14;
    }
    match Pidmap::with_backend(Backend::Syscall) {
        Err(Error::SyscallUnavailable(KernelSupport::NotBuilt)) => {}
        _ => return 15,
    }
    0
}

/// One test in this binary, so no other test thread can hold a lock (the
/// probe cache's `OnceLock`, stdout) when it forks: a child forked while
/// another thread was inside `kernel_support()` would wait forever.
#[test]
fn never_issues_the_series_numbers() {
    // SAFETY: the child runs `child` and `_exit`s without unwinding; this
    // is the binary's only test, so no other thread holds a lock it needs.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let code = child();
        // SAFETY: leave the child without running destructors.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: reaping our own child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status),
        "child killed (signal {}): a series syscall was issued",
        libc::WTERMSIG(status)
    );
    // The syscall backend says why it is not there (once the child is
    // done: see above).
    let e = Pidmap::with_backend(Backend::Syscall).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("not available: built without the series-syscalls feature"),
        "{msg}"
    );
    let code = libc::WEXITSTATUS(status);
    if code == 10 {
        eprintln!("note: skipping: no seccomp filter support");
        return;
    }
    assert_eq!(code, 0, "child check {code} failed");
}

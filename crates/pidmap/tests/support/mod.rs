//! Shared helpers for the integration tests: the syscall requirement,
//! stable comparisons under concurrent fork/exit, and fixtures (threads,
//! forked process families) that never spawn external programs.

#![allow(dead_code)]

use std::fmt::Debug;
use std::sync::mpsc;
use std::thread::JoinHandle;

use pidmap::{Backend, Error, KernelSupport, Pid, Pidmap, Query, Target};

/// Set to `1` by the QEMU guest runner: a missing syscall is then a failure.
pub const REQUIRE_ENV: &str = "PIDMAP_REQUIRE_SYSCALL";

/// Whether the syscalls must be present (`PIDMAP_REQUIRE_SYSCALL=1`).
pub fn syscall_required() -> bool {
    std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1")
}

/// What a syscall test does on this kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// The syscalls are there: run.
    Run,
    /// Absent and not required: skip with a note.
    Skip,
    /// Absent but `PIDMAP_REQUIRE_SYSCALL=1`: fail.
    Fail,
}

/// The decision alone, from the kernel's answer and the requirement.
pub fn decide(support: KernelSupport, required: bool) -> Gate {
    match (support.is_available(), required) {
        (true, _) => Gate::Run,
        (false, false) => Gate::Skip,
        (false, true) => Gate::Fail,
    }
}

/// Whether a syscall test runs (`true`), skips (`false`, with a note), or
/// fails (panic: required but missing). The one place that makes this
/// call for every syscall test.
pub fn gate(support: KernelSupport, required: bool, test: &str) -> bool {
    match decide(support, required) {
        Gate::Run => true,
        Gate::Fail => {
            panic!("{REQUIRE_ENV}=1 but the syscall backend is unavailable in {test}: {support}")
        }
        Gate::Skip => {
            note(&format!(
                "skipping {test}: {support} (set {REQUIRE_ENV}=1 to make this fail)"
            ));
            false
        }
    }
}

/// A handle on the syscall backend, `None` (skip, with a note) when the
/// kernel lacks the syscalls, a panic when `PIDMAP_REQUIRE_SYSCALL=1`.
pub fn syscall_backend(test: &str) -> Option<Pidmap> {
    if !gate(pidmap::kernel_support(), syscall_required(), test) {
        return None;
    }
    match Pidmap::with_backend(Backend::Syscall) {
        Ok(pm) => Some(pm),
        Err(e) => panic!("{test}: syscall backend reported available but failed: {e}"),
    }
}

/// The /proc backend over `/proc`.
pub fn procfs_backend() -> Pidmap {
    Pidmap::with_backend(Backend::Procfs).expect("/proc must be mounted for the tests")
}

/// Compare two listings of something that may change under us (other
/// processes fork and exit): retry until `a` is stable around `b`, then
/// they must agree. Panics with the last difference after many tries.
pub fn agree<T: PartialEq + Debug>(what: &str, mut a: impl FnMut() -> T, mut b: impl FnMut() -> T) {
    let mut last = None;
    for _ in 0..200 {
        let x = a();
        let y = b();
        let z = a();
        if x == z && x == y {
            return;
        }
        if x == z {
            last = Some((x, y));
        }
    }
    match last {
        Some((x, y)) => {
            panic!("{what}: backends disagree on a stable listing:\n  a = {x:?}\n  b = {y:?}")
        }
        None => panic!("{what}: the listing never became stable"),
    }
}

/// Every id of `q`, read with `read_chunk` three at a time, each chunk
/// starting just past the last id of the one before (the cursor a caller
/// of the syscall keeps).
pub fn read_in_chunks_of_3(pm: &mut Pidmap, q: Query<'_>) -> Vec<Pid> {
    let mut all = Vec::new();
    let mut buf = [Pid::from_raw(0); 3];
    let mut start = 0;
    loop {
        let n = pm.read_chunk(q, start, &mut buf).unwrap();
        if n == 0 {
            return all;
        }
        assert!(n <= 3);
        all.extend_from_slice(&buf[..n]);
        start = buf[n - 1].as_raw() + 1;
    }
}

/// Strictly ascending.
pub fn assert_ascending<T: PartialOrd + Debug>(v: &[T]) {
    for w in v.windows(2) {
        assert!(
            w[0] < w[1],
            "not strictly ascending at {:?} {:?}",
            w[0],
            w[1]
        );
    }
}

/// A pid that cannot exist (above the maximum `pid_max`, 2^22).
pub const NO_SUCH_PID: Pid = Pid::from_raw(1 << 30);

pub fn gettid() -> Pid {
    Pid::this_thread()
}

/// Threads parked until the value is dropped.
pub struct ParkedThreads {
    pub tids: Vec<Pid>,
    stop: Vec<mpsc::Sender<()>>,
    handles: Vec<JoinHandle<()>>,
}

impl ParkedThreads {
    pub fn spawn(n: usize) -> ParkedThreads {
        let (tid_tx, tid_rx) = mpsc::channel();
        let mut stop = Vec::new();
        let mut handles = Vec::new();
        for _ in 0..n {
            let (tx, rx) = mpsc::channel::<()>();
            let tid_tx = tid_tx.clone();
            handles.push(
                std::thread::Builder::new()
                    .stack_size(64 * 1024)
                    .spawn(move || {
                        tid_tx.send(gettid()).unwrap();
                        let _ = rx.recv();
                    })
                    .expect("spawn thread"),
            );
            stop.push(tx);
        }
        let mut tids: Vec<Pid> = (0..n).map(|_| tid_rx.recv().unwrap()).collect();
        tids.sort();
        ParkedThreads {
            tids,
            stop,
            handles,
        }
    }
}

impl Drop for ParkedThreads {
    fn drop(&mut self) {
        self.stop.clear();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// A forked child that itself forked `n` grandchildren; all of them sleep
/// until the value is dropped (the child is SIGKILLed and reaped, the
/// grandchildren die with it through `PR_SET_PDEATHSIG`). Only
/// async-signal-safe calls happen after `fork`.
pub struct Family {
    pub child: Pid,
    pub grandchildren: Vec<Pid>,
}

const MAX_GRANDCHILDREN: usize = 16;

impl Family {
    pub fn spawn(n: usize) -> Family {
        assert!(n <= MAX_GRANDCHILDREN);
        let mut p = [0i32; 2];
        // SAFETY: `p` is a valid array of two ints.
        assert_eq!(unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        let (rd, wr) = (p[0], p[1]);
        // SAFETY: the child only calls async-signal-safe functions
        // (fork, prctl, getppid, write, pause, _exit).
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork failed");
        if child == 0 {
            // SAFETY: async-signal-safe calls only, see above.
            unsafe {
                let me = libc::getpid();
                let mut kids = [0i32; MAX_GRANDCHILDREN];
                for k in kids.iter_mut().take(n) {
                    let g = libc::fork();
                    if g == 0 {
                        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                        if libc::getppid() != me {
                            libc::_exit(0);
                        }
                        loop {
                            libc::pause();
                        }
                    }
                    if g < 0 {
                        libc::_exit(3);
                    }
                    *k = g;
                }
                let bytes = n * 4;
                if libc::write(wr, kids.as_ptr().cast(), bytes) != bytes as isize {
                    libc::_exit(4);
                }
                loop {
                    libc::pause();
                }
            }
        }
        // SAFETY: closing our copy of the write end.
        unsafe { libc::close(wr) };
        let mut kids = [0i32; MAX_GRANDCHILDREN];
        let want = n * 4;
        let mut got = 0;
        while got < want {
            // SAFETY: reading into the unfilled tail of `kids`.
            let r = unsafe {
                libc::read(
                    rd,
                    kids.as_mut_ptr().cast::<u8>().add(got).cast(),
                    want - got,
                )
            };
            assert!(r > 0, "family child died before reporting");
            got += r as usize;
        }
        // SAFETY: closing the read end we own.
        unsafe { libc::close(rd) };
        let mut grandchildren: Vec<Pid> = kids[..n].iter().map(|&g| Pid::from_raw(g)).collect();
        grandchildren.sort();
        Family {
            child: Pid::from_raw(child),
            grandchildren,
        }
    }
}

impl Drop for Family {
    fn drop(&mut self) {
        // SAFETY: signalling and reaping our own child.
        unsafe {
            libc::kill(self.child.as_raw(), libc::SIGKILL);
            libc::waitpid(self.child.as_raw(), std::ptr::null_mut(), 0);
        }
    }
}

/// Fork a child that runs `f` (which must not allocate or lock) and
/// return its exit status.
pub fn in_child(f: impl FnOnce() -> i32) -> i32 {
    // SAFETY: the child runs `f`, documented as async-signal-safe in
    // spirit, then `_exit`s without unwinding.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let code = f();
        // SAFETY: leave the child without running destructors.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    }
}

/// `Error::NoSuchProcess` for any pid.
pub fn is_esrch<T: Debug>(r: &Result<T, Error>) -> bool {
    matches!(r, Err(Error::NoSuchProcess { .. }))
}

/// Print a note that shows even though libtest captures `eprintln!`.
pub fn note(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "note: {msg}");
}

/// Runs `f` on a new thread in a private mount namespace (its own copy of
/// ours, with no propagation back), so that mounts made by `f` are never
/// seen by the host. `None` (with a note) where unshare is not permitted.
pub fn in_private_mount_ns<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> Option<R> {
    std::thread::spawn(move || {
        // SAFETY: unshare and mount with constant arguments; both affect
        // only this thread (CLONE_NEWNS implies unsharing its fs struct).
        unsafe {
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                note(&format!(
                    "cannot unshare(CLONE_NEWNS): {}",
                    std::io::Error::last_os_error()
                ));
                return None;
            }
            assert_eq!(
                libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null()
                ),
                0,
                "making our mount namespace private"
            );
        }
        Some(f())
    })
    .join()
    .expect("the namespace thread panicked")
}

/// Mounts a fresh procfs with `options` (such as `hidepid=noaccess`, or
/// empty) on the directory `dir`; for use inside [`in_private_mount_ns`],
/// so that the host never sees the mount. Panics with the errno if the
/// mount fails.
pub fn mount_procfs(dir: &std::path::Path, options: &str) {
    let target = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    let options = std::ffi::CString::new(options).unwrap();
    // SAFETY: mount(2) with NUL-terminated strings that outlive the call.
    let rc = unsafe {
        libc::mount(
            c"proc".as_ptr(),
            target.as_ptr(),
            c"proc".as_ptr(),
            0,
            options.as_ptr().cast(),
        )
    };
    assert_eq!(
        rc,
        0,
        "mount procfs on {} with {options:?}: {}",
        dir.display(),
        std::io::Error::last_os_error()
    );
}

/// Whether we run as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Forks a child that drops to uid/gid 65534 and asks `pm` for the fds of
/// `target` (a root process), which must be refused with `PermissionDenied`.
/// `pm` and the buffer are set up before the fork, so the child allocates
/// nothing. Shared by the fallback and the syscall tests so both backends
/// face the same check.
pub fn assert_fds_denied_to_nobody(pm: &mut Pidmap, target: Pid) {
    let mut v: Vec<i32> = Vec::with_capacity(4096);
    let code = in_child(|| {
        // SAFETY: dropping privileges in the child only.
        unsafe {
            if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                return 10;
            }
        }
        match pm.fill_fds(target, &mut v) {
            Err(Error::PermissionDenied {
                what: "fds",
                target: t,
            }) if t == Target::Pid(target).id() => 0,
            Err(e) => {
                note(&format!("child as uid 65534: {e:?}"));
                11
            }
            Ok(()) => {
                note(&format!("child as uid 65534 listed {v:?}"));
                12
            }
        }
    });
    assert_eq!(
        code, 0,
        "child exit code (10 setuid, 11 other error, 12 allowed)"
    );
}

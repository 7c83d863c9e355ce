//! The crate under seccomp filters, on any kernel (host or guest).
//!
//! - A filter answering `EPERM` for pidmap(2)/fdmap(2): `Auto` falls back
//!   to /proc and still lists; `Syscall` fails with `SyscallUnavailable`.
//! - A filter that makes the *probe* look like a patched kernel's (`EINVAL`
//!   for the undefined flag bit) and lets real calls through: on an
//!   unpatched kernel the first real call says `ENOSYS`, and `Auto` must
//!   switch that handle to /proc.
//! - A handle built before a sandbox that then blocks the calls (`EPERM`):
//!   the next listing re-probes and switches to /proc.
//! - `PIDMAP_BACKEND=procfs`, read through `Builder::backend_from_env`:
//!   under a filter that *kills* on the calls, the handle must never issue
//!   them.
//! - A filter that answers `EINVAL` for pidmap_info(2), as a kernel whose
//!   records the crate cannot use would: `Auto` keeps the syscall for ids
//!   and reads the records from /proc; `Syscall` says
//!   `TaskInfoUnsupported`.
//!
//! Each check runs in a forked child (filters are irreversible and the probe
//! cache is process-wide). The child reports through its exit status and
//! writes its messages with raw `write(2)`. The tests skip only where the
//! kernel has no seccomp filter support (`PR_SET_SECCOMP` says `EINVAL`).

#![cfg(all(feature = "fallback", feature = "series-syscalls"))]

use std::collections::BTreeSet;

use pidmap::{
    ActiveBackend, Backend, Error, InfoFields, KernelSupport, Pid, Pidmap, Query, Target,
};

// Whether the kernel really has the calls, asked with a raw syscall
// before any filter (independent of the crate's probe), and the ABI's
// numbers the filters match.
#[path = "support/raw_probe.rs"]
mod raw_probe;
use raw_probe::{kernel_has_pidmap, NR_FDMAP, NR_PIDMAP, NR_PIDMAP_INFO, PROBE_FLAG};

/// `AUDIT_ARCH_*` of the target (`EM_*`, `__AUDIT_ARCH_64BIT`,
/// `__AUDIT_ARCH_LE` from `<linux/audit.h>` and `<linux/elf-em.h>`).
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "x86")]
const AUDIT_ARCH: u32 = 0x4000_0003;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;
#[cfg(target_arch = "riscv64")]
const AUDIT_ARCH: u32 = 0xc000_00f3;
#[cfg(target_arch = "loongarch64")]
const AUDIT_ARCH: u32 = 0xc000_0102;

// Classic BPF (`linux/filter.h`).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JEQ_K: u16 = 0x15;
const BPF_JMP_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;
/// `offsetof(struct seccomp_data, nr / arch / args[3])` (low word, LE).
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
const DATA_ARG3_LO: u32 = 16 + 3 * 8;

const fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

fn errno_ret(e: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (e.unsigned_abs() & libc::SECCOMP_RET_DATA)
}

/// What a filter does to pidmap(2)/fdmap(2).
#[derive(Clone, Copy, Debug)]
enum Policy {
    /// Both fail with this errno.
    Errno(i32),
    /// The probe (undefined flag bit set) gets `EINVAL`, as from a patched
    /// kernel; real calls go through.
    FakeAvailableProbe,
    /// The process is killed.
    Kill,
    /// pidmap_info(2) gets `EINVAL`; the others go through.
    RejectTaskRecords,
}

/// The filter: another architecture is killed (no bypass through a
/// second syscall table), other calls allowed, ours handled by `policy`.
fn filter(policy: Policy) -> Vec<libc::sock_filter> {
    let mut f = vec![
        stmt(BPF_LD_W_ABS, DATA_ARCH),
        jump(BPF_JMP_JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(BPF_RET_K, libc::SECCOMP_RET_KILL_PROCESS),
        stmt(BPF_LD_W_ABS, DATA_NR),
        jump(BPF_JMP_JEQ_K, u32::from(NR_PIDMAP), 3, 0),
        jump(BPF_JMP_JEQ_K, u32::from(NR_PIDMAP_INFO), 2, 0),
        jump(BPF_JMP_JEQ_K, u32::from(NR_FDMAP), 1, 0),
        stmt(BPF_RET_K, libc::SECCOMP_RET_ALLOW),
    ];
    match policy {
        Policy::Errno(e) => f.push(stmt(BPF_RET_K, errno_ret(e))),
        Policy::Kill => f.push(stmt(BPF_RET_K, libc::SECCOMP_RET_KILL_PROCESS)),
        Policy::FakeAvailableProbe => f.extend(einval_for_flag(PROBE_FLAG)),
        Policy::RejectTaskRecords => f.extend([
            // The number is still loaded.
            jump(BPF_JMP_JEQ_K, u32::from(NR_PIDMAP_INFO), 1, 0),
            stmt(BPF_RET_K, libc::SECCOMP_RET_ALLOW),
            stmt(BPF_RET_K, errno_ret(libc::EINVAL)),
        ]),
    }
    f
}

/// `EINVAL` for a call with `flag` in `args[3]`; the others go through.
fn einval_for_flag(flag: u32) -> [libc::sock_filter; 4] {
    [
        stmt(BPF_LD_W_ABS, DATA_ARG3_LO),
        jump(BPF_JMP_JSET_K, flag, 1, 0),
        stmt(BPF_RET_K, libc::SECCOMP_RET_ALLOW),
        stmt(BPF_RET_K, errno_ret(libc::EINVAL)),
    ]
}

/// Install a filter in the calling (child) process. `Ok(false)`: the
/// kernel has no seccomp filters.
fn install(policy: Policy) -> Result<bool, String> {
    let mut prog = filter(policy);
    let fprog = libc::sock_fprog {
        len: libc::c_ushort::try_from(prog.len()).unwrap(),
        filter: prog.as_mut_ptr(),
    };
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(format!(
            "PR_SET_NO_NEW_PRIVS: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: `fprog` points at `prog`, which outlives the call; the kernel
    // copies the program.
    let r = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            std::ptr::from_ref(&fprog),
            0,
            0,
        )
    };
    if r == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EINVAL) {
        return Ok(false);
    }
    Err(format!("PR_SET_SECCOMP: {e}"))
}

/// Child exit status for "seccomp filters are not supported here".
const NO_SECCOMP: i32 = 77;

fn say(msg: &str) {
    let line = format!("seccomp test child: {msg}\n");
    // SAFETY: writes `line.len()` bytes from a live buffer to fd 2.
    let _ = unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
}

/// Run `body` in a forked child; the raw wait status.
fn run_child(name: &str, body: fn() -> Result<bool, String>) -> i32 {
    // SAFETY: the child only runs `body` and `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        let code = match std::panic::catch_unwind(body) {
            Ok(Ok(true)) => 0,
            Ok(Ok(false)) => NO_SECCOMP,
            Ok(Err(msg)) => {
                say(&format!("{name}: {msg}"));
                1
            }
            Err(_) => {
                say(&format!("{name}: panicked"));
                2
            }
        };
        // SAFETY: end the child without unwinding into the harness.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: reaping our own child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    status
}

/// Run `body` in a child and require success (or a seccomp-less kernel).
fn in_child(name: &str, body: fn() -> Result<bool, String>) {
    let status = run_child(name, body);
    assert!(
        libc::WIFEXITED(status),
        "{name}: child killed, status {status:#x}"
    );
    match libc::WEXITSTATUS(status) {
        0 => {}
        NO_SECCOMP => {
            assert!(
                !std::env::var("PIDMAP_REQUIRE_SYSCALL").is_ok_and(|v| v == "1"),
                "{name}: the test guest's kernel must have seccomp filters"
            );
            eprintln!("note: skipping {name}: the kernel has no seccomp filter support");
        }
        c => panic!("{name}: child failed with {c} (see its message above)"),
    }
}

fn proc_pids() -> Result<BTreeSet<i32>, String> {
    let rd = std::fs::read_dir("/proc").map_err(|e| format!("read_dir /proc: {e}"))?;
    Ok(rd
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect())
}

/// `pm` lists processes (everything alive before and after the listing is
/// in it) and our own fds.
fn lists_correctly(pm: &mut Pidmap) -> Result<(), String> {
    let mut pids = Vec::new();
    let before = proc_pids()?;
    pm.fill(Query::processes(), &mut pids)
        .map_err(|e| format!("listing processes: {e}"))?;
    let after = proc_pids()?;
    if !pids.windows(2).all(|w| w[0] < w[1]) {
        return Err("process listing not strictly ascending".into());
    }
    let listed: BTreeSet<i32> = pids.iter().map(|p| p.as_raw()).collect();
    if let Some(p) = before.intersection(&after).find(|p| !listed.contains(p)) {
        return Err(format!("pid {p} in /proc throughout but not listed"));
    }
    if !listed.contains(&Pid::this_process().as_raw()) {
        return Err("own pid not listed".into());
    }
    let mut fds = Vec::new();
    pm.fill_fds(Target::Caller, &mut fds)
        .map_err(|e| format!("listing own fds: {e}"))?;
    if !fds.contains(&2) {
        return Err(format!("fd 2 not among own fds {fds:?}"));
    }
    Ok(())
}

/// `Auto` falls back to /proc and lists; `Syscall` refuses with `why`.
fn check_fallback(why: KernelSupport) -> Result<(), String> {
    let mut pm = Pidmap::with_backend(Backend::Auto).map_err(|e| format!("Auto: {e}"))?;
    if pm.active() != ActiveBackend::Procfs {
        return Err(format!("Auto chose {}", pm.detection()));
    }
    let reason = pm.detection().reason();
    if !reason.contains("falling back") {
        return Err(format!("Auto's reason does not say it fell back: {reason}"));
    }
    lists_correctly(&mut pm)?;
    match Pidmap::with_backend(Backend::Syscall) {
        Ok(pm) => Err(format!("Syscall backend accepted: {}", pm.detection())),
        Err(Error::SyscallUnavailable(s)) if s == why => {
            let msg = Error::SyscallUnavailable(s).to_string();
            if msg.contains("pidmap(2)") && msg.contains(&s.reason()) {
                Ok(())
            } else {
                Err(format!("Syscall error message is unclear: {msg}"))
            }
        }
        Err(e) => Err(format!(
            "Syscall backend: want SyscallUnavailable({why:?}), got {e:?}"
        )),
    }
}

fn eperm_child() -> Result<bool, String> {
    let has = kernel_has_pidmap();
    if std::env::var("PIDMAP_REQUIRE_SYSCALL").is_ok_and(|v| v == "1") && !has {
        return Err("PIDMAP_REQUIRE_SYSCALL=1 but the kernel lacks pidmap(2)".into());
    }
    if !install(Policy::Errno(libc::EPERM))? {
        return Ok(false);
    }
    let after = pidmap::probe_kernel();
    if after != KernelSupport::Blocked {
        return Err(format!("probe under seccomp: want Blocked, got {after:?}"));
    }
    check_fallback(KernelSupport::Blocked)?;
    Ok(true)
}

#[test]
fn seccomp_eperm_falls_back_to_proc() {
    in_child("eperm", eperm_child);
}

fn enosys_after_probe_child() -> Result<bool, String> {
    let has = kernel_has_pidmap();
    if !install(Policy::FakeAvailableProbe)? {
        return Ok(false);
    }
    let mut pm = Pidmap::with_backend(Backend::Auto).map_err(|e| format!("Auto: {e}"))?;
    if pm.active() != ActiveBackend::Syscall {
        return Err(format!(
            "the faked probe should select the syscalls: {}",
            pm.detection()
        ));
    }
    lists_correctly(&mut pm)?;
    let d = pm.detection();
    if has {
        // Real calls work on a patched kernel: no switch.
        if d.active != ActiveBackend::Syscall || d.switched_after_call {
            return Err(format!("switched on a patched kernel: {d}"));
        }
    } else if d.active != ActiveBackend::Procfs
        || !d.switched_after_call
        || !d.reason().contains("switched to /proc")
    {
        return Err(format!(
            "ENOSYS from a real call did not switch to /proc: {d}"
        ));
    }
    // A forced syscall handle never switches: the error says ENOSYS.
    if !has {
        let mut forced = Pidmap::with_backend(Backend::Syscall).map_err(|e| e.to_string())?;
        match forced.fill(Query::processes(), &mut Vec::new()) {
            Err(Error::SyscallUnavailable(KernelSupport::Missing)) => {}
            other => return Err(format!("forced syscall handle: {other:?}")),
        }
    }
    Ok(true)
}

#[test]
fn real_call_enosys_switches_auto_to_proc() {
    in_child("enosys-after-probe", enosys_after_probe_child);
}

fn sandboxed_later_child() -> Result<bool, String> {
    // A probe that says "available" (really, or faked on an unpatched
    // kernel), a handle built, and only then the sandbox.
    if !install(Policy::FakeAvailableProbe)? {
        return Ok(false);
    }
    let mut pm = Pidmap::with_backend(Backend::Auto).map_err(|e| format!("Auto: {e}"))?;
    let mut threads = Pidmap::with_backend(Backend::Auto).map_err(|e| format!("Auto: {e}"))?;
    let mut forced = Pidmap::with_backend(Backend::Syscall).map_err(|e| format!("Syscall: {e}"))?;
    if pm.active() != ActiveBackend::Syscall {
        return Err(format!("should start on the syscalls: {}", pm.detection()));
    }
    if !install(Policy::Errno(libc::EPERM))? {
        return Err("a second filter failed".into());
    }
    lists_correctly(&mut pm)?;
    let d = pm.detection();
    if d.active != ActiveBackend::Procfs
        || d.support != Some(KernelSupport::Blocked)
        || !d.switched_after_call
    {
        return Err(format!("EPERM from a later sandbox did not switch: {d}"));
    }
    // A forced syscall handle does not switch, and says why: blocked (not
    // "permission denied for the caller"), whatever the listing.
    match forced.fill(Query::processes(), &mut Vec::new()) {
        Err(e @ Error::SyscallUnavailable(KernelSupport::Blocked)) => {
            if !e.to_string().contains("seccomp") {
                return Err(format!("unclear: {e}"));
            }
        }
        other => return Err(format!("forced handle, processes: {other:?}")),
    }
    for r in [
        forced.fill(Query::threads(Target::Caller), &mut Vec::new()),
        forced.fill_fds(Target::Caller, &mut Vec::new()),
    ] {
        if !matches!(r, Err(Error::SyscallUnavailable(KernelSupport::Blocked))) {
            return Err(format!("forced handle, threads/fds: {r:?}"));
        }
    }
    // Every listing works and says the truth: threads of ourselves.
    let mut v = Vec::new();
    threads
        .fill(Query::threads(Target::Caller), &mut v)
        .map_err(|e| format!("threads after sandboxing: {e}"))?;
    if !v.contains(&Pid::this_process()) {
        return Err(format!("threads: {v:?}"));
    }
    Ok(true)
}

#[test]
fn sandbox_installed_later_switches_auto_to_proc() {
    in_child("sandboxed-later", sandboxed_later_child);
}

fn env_switch_child() -> Result<bool, String> {
    std::env::set_var(pidmap::BACKEND_ENV, "procfs");
    if !install(Policy::Kill)? {
        return Ok(false);
    }
    let chosen = Backend::from_env().map_err(|e| format!("from_env: {e}"))?;
    let mut pm = Pidmap::builder()
        .backend_from_env()
        .and_then(pidmap::Builder::build)
        .map_err(|e| format!("build: {e}"))?;
    if chosen != Some(Backend::Procfs) {
        return Err(format!("from_env read {chosen:?}"));
    }
    if pm.detection().support.is_some() || pm.active() != ActiveBackend::Procfs {
        return Err(format!(
            "PIDMAP_BACKEND=procfs still probed: {}",
            pm.detection()
        ));
    }
    lists_correctly(&mut pm)?;
    std::env::set_var(pidmap::BACKEND_ENV, "bogus");
    match Pidmap::builder().backend_from_env() {
        Err(Error::InvalidArgument(m)) if m.contains("PIDMAP_BACKEND") => Ok(true),
        other => Err(format!("a bad PIDMAP_BACKEND must be an error: {other:?}")),
    }
}

#[test]
fn env_switch_never_issues_the_calls() {
    in_child("env-switch", env_switch_child);
    // And the control: the same filter does kill a process that probes.
    let status = run_child("kill-control", || {
        if !install(Policy::Kill)? {
            return Ok(false);
        }
        let _ = pidmap::probe_kernel();
        Err("the probe survived a killing filter".into())
    });
    let killed = libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSYS;
    let no_seccomp = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == NO_SECCOMP;
    assert!(killed || no_seccomp, "control child: status {status:#x}");
}

fn unpatched_child() -> Result<bool, String> {
    let s = pidmap::probe_kernel();
    if s != KernelSupport::Missing {
        return Err(format!(
            "PIDMAP_EXPECT_NO_SYSCALL=1 but the probe says {s:?}"
        ));
    }
    check_fallback(KernelSupport::Missing)?;
    Ok(true)
}

#[test]
fn unpatched_kernel_falls_back_to_proc() {
    // The runner sets this when it boots the unpatched kernel; elsewhere a
    // patched kernel is possible, so the expectation cannot be assumed.
    if kernel_has_pidmap() {
        assert!(
            !std::env::var("PIDMAP_EXPECT_NO_SYSCALL").is_ok_and(|v| v == "1"),
            "PIDMAP_EXPECT_NO_SYSCALL=1 but pidmap(2) exists"
        );
        eprintln!("note: this kernel has pidmap(2); the unpatched-kernel check does not apply");
        return;
    }
    in_child("unpatched", unpatched_child);
}

fn no_task_records_child() -> Result<bool, String> {
    let has = kernel_has_pidmap();
    if std::env::var("PIDMAP_REQUIRE_SYSCALL").is_ok_and(|v| v == "1") && !has {
        return Err("PIDMAP_REQUIRE_SYSCALL=1 but the kernel lacks pidmap(2)".into());
    }
    if !install(Policy::RejectTaskRecords)? {
        return Ok(false);
    }
    let mut auto = Pidmap::with_backend(Backend::Auto).map_err(|e| format!("Auto: {e}"))?;
    let want = if has {
        ActiveBackend::Syscall
    } else {
        ActiveBackend::Procfs
    };
    if auto.active() != want {
        return Err(format!("Auto chose {} for the ids", auto.detection()));
    }
    match auto.info_backend() {
        Ok(ActiveBackend::Procfs) => {}
        other => {
            return Err(format!(
                "records under the filter: want /proc, got {other:?}"
            ))
        }
    }
    // The records still list: the caller's threads, with their tgid.
    let mut infos = Vec::new();
    auto.fill_info(Query::threads(Target::Caller), InfoFields::TGID, &mut infos)
        .map_err(|e| format!("records: {e}"))?;
    let me = Pid::this_process();
    if !infos.iter().any(|i| i.tid == me && i.tgid == Some(me)) {
        return Err(format!("own record missing or wrong: {infos:?}"));
    }
    lists_correctly(&mut auto)?;
    if has {
        let mut forced =
            Pidmap::with_backend(Backend::Syscall).map_err(|e| format!("Syscall: {e}"))?;
        match forced.fill_info(Query::processes(), InfoFields::STATE, &mut infos) {
            Err(Error::TaskInfoUnsupported) => {}
            other => {
                return Err(format!(
                    "Syscall records: want TaskInfoUnsupported, got {other:?}"
                ))
            }
        }
    }
    Ok(true)
}

#[test]
fn kernel_without_task_records_falls_back_for_records_only() {
    in_child("no task records", no_task_records_child);
}

#[test]
fn filter_shape() {
    // Jump offsets are relative to the next instruction.
    let f = filter(Policy::Errno(libc::EPERM));
    let target = |i: usize| i + 1 + usize::from(f[i].jt);
    for i in [4, 5, 6] {
        assert_eq!(f[target(i)].k, errno_ret(libc::EPERM), "{i}");
    }
    assert_eq!(
        [f[4].k, f[5].k, f[6].k],
        [
            u32::from(NR_PIDMAP),
            u32::from(NR_PIDMAP_INFO),
            u32::from(NR_FDMAP)
        ]
    );
    assert_eq!(f[7].k, libc::SECCOMP_RET_ALLOW);
    assert_eq!(f[target(1)].k, DATA_NR);
    let g = filter(Policy::FakeAvailableProbe);
    assert_eq!(g[target(4)].k, DATA_ARG3_LO);
    assert_eq!(g[9 + 1 + usize::from(g[9].jt)].k, errno_ret(libc::EINVAL));
    assert_eq!(g[10].k, libc::SECCOMP_RET_ALLOW);
    let r = filter(Policy::RejectTaskRecords);
    assert_eq!(r[8].k, u32::from(NR_PIDMAP_INFO));
    assert_eq!(r[8 + 1 + usize::from(r[8].jt)].k, errno_ret(libc::EINVAL));
    assert_eq!(r[9].k, libc::SECCOMP_RET_ALLOW);
}

//! What the interactive `pidmap top` does to processes: send a signal
//! (`k`, F9) and change a nice value (`r`, F7, F8). Each returns the
//! line the status bar shows, success or failure; none panics.

use std::io;

/// The signals the kill menu offers, htop's list less the real-time
/// ones, SIGTERM first (the default, as in htop and top).
pub const SIGNALS: [(libc::c_int, &str); 17] = [
    (libc::SIGTERM, "TERM"),
    (libc::SIGKILL, "KILL"),
    (libc::SIGHUP, "HUP"),
    (libc::SIGINT, "INT"),
    (libc::SIGQUIT, "QUIT"),
    (libc::SIGSTOP, "STOP"),
    (libc::SIGCONT, "CONT"),
    (libc::SIGTSTP, "TSTP"),
    (libc::SIGUSR1, "USR1"),
    (libc::SIGUSR2, "USR2"),
    (libc::SIGALRM, "ALRM"),
    (libc::SIGABRT, "ABRT"),
    (libc::SIGPIPE, "PIPE"),
    (libc::SIGTTIN, "TTIN"),
    (libc::SIGTTOU, "TTOU"),
    (libc::SIGWINCH, "WINCH"),
    (libc::SIGSEGV, "SEGV"),
];

/// Send `sig` to process `pid` (or, in the thread view, thread `tid` of
/// process `tgid`, with tgkill so that only that thread gets it).
pub fn send_signal(pid: i32, thread_of: Option<i32>, sig: libc::c_int) -> String {
    let name = SIGNALS
        .iter()
        .find(|(n, _)| *n == sig)
        .map_or_else(|| sig.to_string(), |(_, s)| format!("SIG{s}"));
    let r = match thread_of {
        #[allow(
            clippy::cast_possible_truncation,
            reason = "tgkill returns 0 or -1 (syscall(2) widens it to a long)"
        )]
        // SAFETY: tgkill takes plain integers; no memory is passed.
        Some(tgid) if tgid != pid => unsafe {
            libc::syscall(libc::SYS_tgkill, tgid, pid, sig) as libc::c_int
        },
        // SAFETY: kill takes plain integers. A pid <= 0 would signal a
        // group, so it is refused before.
        _ if pid > 0 => unsafe { libc::kill(pid, sig) },
        _ => return format!("kill: {pid} is not a process id"),
    };
    if r == 0 {
        format!("sent {name} to {pid}")
    } else {
        format!("kill {pid} ({name}): {}", io::Error::last_os_error())
    }
}

/// Set the nice value of each task of `tids` (a process's threads: Linux
/// sets one thread's nice value per call) to `nice`, clamped to -20..=19.
pub fn renice(pid: i32, tids: &[i32], nice: i32) -> String {
    let nice = nice.clamp(-20, 19);
    let mut failed = None;
    let mut done = 0;
    for &tid in tids {
        let Ok(who) = libc::id_t::try_from(tid) else {
            continue;
        };
        // SAFETY: setpriority takes plain integers.
        let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, who, nice) };
        if r == 0 {
            done += 1;
        } else {
            let e = io::Error::last_os_error();
            // A thread that exited meanwhile is not a failure.
            if e.raw_os_error() != Some(libc::ESRCH) {
                failed.get_or_insert(e);
            }
        }
    }
    match failed {
        Some(e) => format!("renice {pid} to {nice}: {e}"),
        None if done == 0 => format!("renice {pid}: no such process"),
        None => format!("reniced {pid} to {nice}"),
    }
}

/// The nice value `pid` has now (`getpriority`), `None` when it cannot
/// be read (gone, or not visible).
pub fn current_nice(pid: i32) -> Option<i32> {
    let who = libc::id_t::try_from(pid).ok()?;
    // SAFETY: errno is this thread's; getpriority takes plain integers.
    // -1 is a valid nice value, so errno tells it from a failure.
    unsafe {
        *libc::__errno_location() = 0;
        let n = libc::getpriority(libc::PRIO_PROCESS, who);
        (*libc::__errno_location() == 0).then_some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_lines_not_panics() {
        // No pid 0 group kill, no such process, no permission.
        assert!(send_signal(0, None, libc::SIGTERM).contains("not a process id"));
        let gone = send_signal(i32::MAX, None, 0);
        assert!(gone.starts_with("kill 2147483647"), "{gone}");
        assert!(renice(i32::MAX, &[i32::MAX], 5).contains("no such process"));
        // Signal 0 to ourselves: allowed, nothing happens.
        let me = i32::try_from(std::process::id()).unwrap();
        assert!(send_signal(me, None, 0).starts_with("sent 0 to"));
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        // SAFETY: getpriority takes plain integers.
        let mine = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        assert_eq!(current_nice(tid), Some(mine));
        assert_eq!(current_nice(i32::MAX), None);
    }
}

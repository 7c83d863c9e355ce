//! Runtime errors are one line on stderr and exit 1, each cause said once.

use std::os::unix::process::CommandExt;
use std::process::Command;

mod support;
use support::bin;

/// `pidmap ARGS` with RLIMIT_NOFILE at 4: the dynamic loader can still
/// open one library at a time, and pidmap's /proc opens fail with EMFILE.
fn without_fds(args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(bin());
    cmd.args(args);
    // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 4,
                rlim_max: 4,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().expect("run pidmap")
}

#[test]
fn emfile_is_one_line_with_each_cause_once_and_exit_1() {
    let emfile = std::io::Error::from_raw_os_error(libc::EMFILE).to_string();
    for args in [
        &["procs", "--long"][..],
        &["fds", "1", "--long"],
        &["top", "-b", "-n", "1", "-d", "0.1"],
    ] {
        let out = without_fds(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("pidmap: "), "{args:?}: {stderr}");
        assert_eq!(stderr.matches(&emfile).count(), 1, "{args:?}: {stderr}");
    }
}

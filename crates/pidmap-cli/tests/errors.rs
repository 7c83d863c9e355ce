//! Runtime errors are one line on stderr and exit 1, each cause said once.

use std::os::unix::process::CommandExt;
use std::process::Command;

mod support;
use support::bin;

/// `pidmap ARGS` with `RLIMIT_NOFILE` at 4: the dynamic loader can still
/// open one library at a time, and pidmap's /proc opens fail with EMFILE.
fn without_fds(args: &[&str]) -> std::process::Output {
    with_fd_limit(args, 4)
}

/// `pidmap ARGS` with `RLIMIT_NOFILE` at `n`.
fn with_fd_limit(args: &[&str], n: libc::rlim_t) -> std::process::Output {
    let mut cmd = Command::new(bin());
    cmd.args(args);
    // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, std::ptr::from_ref(&lim)) != 0 {
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
        // Failed before printing: no header above nothing.
        assert!(
            out.stdout.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("pidmap: "), "{args:?}: {stderr}");
        assert_eq!(stderr.matches(&emfile).count(), 1, "{args:?}: {stderr}");
    }
}

/// `threads --long` with too few fds (`ulimit -n 5`): the listing fails
/// before anything is printed, not after its header.
#[test]
fn a_failed_targeted_listing_prints_no_header() {
    for limit in [4, 5, 6] {
        let out = with_fd_limit(&["threads", "--long", "1"], limit);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            continue; // enough fds at this limit
        }
        assert_eq!(out.status.code(), Some(1), "{limit}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{limit}: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "ulimit -n {limit}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// Writing to a full device: the one line says it was writing the output.
#[test]
fn a_failed_write_says_it_was_the_output() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(bin())
        .arg("procs")
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let enospc = std::io::Error::from_raw_os_error(libc::ENOSPC).to_string();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("pidmap: writing the output: {enospc}\n")
    );
}

/// A bad `PIDMAP_BACKEND` is a usage error: one line naming it, exit 2.
#[test]
fn a_bad_backend_variable_is_a_usage_error() {
    for args in [&["procs"][..], &["info"], &["top", "-b", "-n", "1"]] {
        let out = Command::new(bin())
            .args(args)
            .env("PIDMAP_BACKEND", "bogus")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "pidmap: PIDMAP_BACKEND=\"bogus\" is not a backend: use auto, syscall or procfs\n",
            "{args:?}"
        );
    }
}

/// `info` under a backend that cannot be used: `procfs_view` and the proc
/// root line say what plain `info` says (the mount does not depend on
/// the backend), the reason says "not available" at most once, and the
/// failure is on stdout only, with exit 1.
#[test]
fn info_reports_a_failing_backend_once_and_the_real_proc_view() {
    let plain = Command::new(bin())
        .args(["--json", "info"])
        .output()
        .unwrap();
    assert!(plain.status.success());
    let plain: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    for env in [false, true] {
        let mut json = Command::new(bin());
        let mut text = Command::new(bin());
        if env {
            json.env("PIDMAP_BACKEND", "syscall")
                .args(["--json", "info"]);
            text.env("PIDMAP_BACKEND", "syscall").arg("info");
        } else {
            json.args(["--backend", "syscall", "--json", "info"]);
            text.args(["--backend", "syscall", "info"]);
        }
        let json = json.output().unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(doc["procfs_view"], plain["procfs_view"], "{doc}");
        assert_eq!(doc["procfs_view"], true, "/proc is mounted here");
        let text = text.output().unwrap();
        let stdout = String::from_utf8_lossy(&text.stdout);
        let proc_line = stdout
            .lines()
            .find(|l| l.starts_with("proc root:"))
            .unwrap();
        assert_eq!(proc_line, "proc root:      /proc", "{stdout}");
        if doc["backend"].is_null() {
            // The syscall backend cannot be used (a default build, or a
            // kernel without the series).
            assert_eq!(text.status.code(), Some(1), "{stdout}");
            assert!(text.stderr.is_empty(), "said twice: {text:?}");
            assert!(json.stderr.is_empty(), "said twice: {json:?}");
            let reason = stdout.lines().find(|l| l.starts_with("reason:")).unwrap();
            assert!(reason.matches("available").count() <= 1, "{reason}");
        } else {
            assert_eq!(text.status.code(), Some(0), "{stdout}");
        }
    }
}

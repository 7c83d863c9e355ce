//! Never silent: as uid 65534 under a `hidepid=noaccess` procfs (mounted
//! in a private mount namespace, so the host never notices), `ls /proc`
//! shows every process but only our own `task` directories can be read.
//! `pidmap tasks` (short and `--long`) and `top -b` list what they can,
//! warn with how many processes' tasks they could not list, and exit 0,
//! or 1 with `--strict`.

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};

mod support;
use support::bin;

/// `pidmap ARGS` as uid/gid 65534 with /proc remounted `hidepid=noaccess`;
/// its output and its pid.
fn as_nobody_under_hidepid(args: &[&str]) -> (Output, i32) {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env_remove("PIDMAP_BACKEND")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: the closure runs in the forked child before exec and only
    // makes async-signal-safe system calls.
    unsafe {
        cmd.pre_exec(|| {
            if libc::unshare(libc::CLONE_NEWNS) != 0
                || libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) != 0
                || libc::mount(
                    c"proc".as_ptr(),
                    c"/proc".as_ptr(),
                    c"proc".as_ptr(),
                    0,
                    c"hidepid=noaccess".as_ptr().cast(),
                ) != 0
                || libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(65534) != 0
                || libc::setuid(65534) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().expect("running pidmap as 65534");
    let pid = i32::try_from(child.id()).unwrap();
    (child.wait_with_output().unwrap(), pid)
}

/// The `(left out, of)` counts of the warning, which must be the only
/// line on stderr (or one per refresh, all alike).
fn left_out(stderr: &[u8]) -> (usize, usize) {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .find(|l| l.contains("processes could not be listed"))
        .unwrap_or_else(|| panic!("no warning: {text:?}"));
    let after = line.split("the tasks of ").nth(1).unwrap();
    let words: Vec<&str> = after.split_whitespace().collect();
    assert_eq!(words[1], "of", "{line}");
    assert!(line.contains("(permission denied"), "{line}");
    (words[0].parse().unwrap(), words[2].parse().unwrap())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn tasks_under_hidepid_noaccess_warn_with_a_count() {
    if !is_root() {
        eprintln!("note: skipping: mounting procfs needs root");
        return;
    }
    // Processes owned by someone else than 65534 right now, from our own
    // (root) view: their tasks cannot be listed by 65534.
    let others = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            e.file_name().to_str()?.parse::<i32>().ok()?;
            Some(e.metadata().ok()?.uid() != 65534)
        })
        .filter(|o| *o)
        .count();
    for strict in [false, true] {
        let mut args = vec!["tasks"];
        if strict {
            args.insert(0, "--strict");
        }
        let (out, pid) = as_nobody_under_hidepid(&args);
        let want = i32::from(strict);
        assert_eq!(out.status.code(), Some(want), "{args:?}: {out:?}");
        let ids: Vec<i32> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert!(ids.contains(&pid), "its own task is listed: {ids:?}");
        let (n, of) = left_out(&out.stderr);
        assert!(n < of, "{n} of {of}");
        // Other processes come and go meanwhile: within a few of ours.
        assert!(n.abs_diff(others) <= 10, "{n} left out, {others} not ours");
    }
    // --long: the same warning; top -b: once per refresh.
    let (out, _) = as_nobody_under_hidepid(&["tasks", "--long"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(left_out(&out.stderr).0 > 0);
    let (out, _) = as_nobody_under_hidepid(&["--strict", "top", "-b", "-n", "2", "-d", "0.1"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for n in 1..=2 {
        assert!(
            stderr.contains(&format!("warning: refresh {n}: the tasks of ")),
            "{stderr}"
        );
    }
    // procs lists every process it sees: nothing is left out, no warning.
    let (out, _) = as_nobody_under_hidepid(&["--strict", "procs"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
}

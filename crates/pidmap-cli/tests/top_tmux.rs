//! The interactive `pidmap top` in a real terminal: tmux runs it in a
//! detached 120x40 session, and the test reads the screen with
//! `capture-pane` and types with `send-keys`. It starts (header and
//! column headings, on the alternate screen, filling the terminal),
//! redraws, sorts on `N`/`P`/`M`, toggles threads on `H`, filters with
//! `-p`, and quits on `q` and Ctrl-C with status 0 and the terminal given
//! back; SIGTERM and SIGHUP end it by that signal with the terminal given
//! back too (alternate screen left, cursor shown, raw mode off). tmux is
//! required: CI installs it, and without it this test fails.

use std::process::Command;
use std::time::{Duration, Instant};

mod support;
use support::tmux::*;

#[test]
fn interactive_top_starts_redraws_sorts_and_quits() {
    let tmux = Tmux::new("main");
    tmux.start(&["top", "-d", "0.5"]);
    let first = tmux.wait_for("showed the header and the headings", started);
    assert_eq!(
        tmux.format("#{alternate_on}"),
        "1",
        "on the alternate screen"
    );
    let lines: Vec<&str> = first.lines().collect();
    assert_eq!(lines.len(), HEIGHT, "{first}");
    // Terminal-sized: with more processes than rows, the table reaches
    // the last line.
    let total: usize = lines[1].split_whitespace().nth(1).unwrap().parse().unwrap();
    let rows = table(&first).len();
    let headings_at = lines
        .iter()
        .position(|l| l.split_whitespace().eq(HEADINGS.iter().copied()))
        .unwrap();
    // Rows fill the screen between the headings and the bottom line.
    let room = HEIGHT - headings_at - 2;
    assert_eq!(rows, total.min(room), "{first}");

    // It redraws on its own.
    let n = refreshes(&first).unwrap();
    tmux.wait_for("redrew", |s| refreshes(s).is_some_and(|m| m > n));

    // N: by PID, ascending.
    tmux.keys("N");
    let s = tmux.wait_for("sorted by PID", |s| s.contains("sort PID "));
    let pids = column(&s, "PID");
    assert!(
        pids.len() > 1 && pids.windows(2).all(|w| w[0] < w[1]),
        "{s}"
    );
    // P: by %CPU, largest first.
    tmux.keys("P");
    let s = tmux.wait_for("sorted by %CPU", |s| s.contains("sort %CPU "));
    let cpu = column(&s, "%CPU");
    assert!(cpu.windows(2).all(|w| w[0] >= w[1]), "{s}");
    // M: by memory, largest resident set first.
    tmux.keys("M");
    let s = tmux.wait_for("sorted by %MEM", |s| s.contains("sort %MEM "));
    let res = column(&s, "RES");
    assert!(res.windows(2).all(|w| w[0] >= w[1]), "{s}");
    // R reverses it.
    tmux.keys("R");
    let s = tmux.wait_for("reversed", |s| s.contains("sort %MEM (reversed)"));
    let res = column(&s, "RES");
    assert!(res.windows(2).all(|w| w[0] <= w[1]), "{s}");
    // H: threads; the count line says so.
    tmux.keys("H");
    tmux.wait_for("showed threads", |s| {
        s.contains(" threads ") && s.lines().any(|l| l.starts_with("Threads:"))
    });

    tmux.keys("q");
    assert_eq!(tmux.wait_exit(), "0", "exit status");
    assert!(!tmux.alternate_on(false), "alternate screen left");
    assert!(!tmux.screen().contains("load average"), "screen restored");
}

#[test]
fn ctrl_c_quits_and_pid_filter_shows_only_that_process() {
    let tmux = Tmux::new("filter");
    let kid = support::Named::spawn(b"topkid");
    let kid_s = kid.0.to_string();
    tmux.start(&["top", "-d", "0.3", "-p", &kid_s]);
    let s = tmux.wait_for("showed the filtered table", started);
    let rows = table(&s);
    assert_eq!(rows.len(), 1, "{s}");
    assert_eq!(rows[0][0], kid_s, "{s}");
    // COMMAND: its command line (a fork of this test: this test's argv).
    let cmdline = std::fs::read(format!("/proc/{kid_s}/cmdline")).unwrap();
    let argv0 = String::from_utf8_lossy(cmdline.split(|&b| b == 0).next().unwrap()).into_owned();
    assert_eq!(rows[0][8], argv0, "{s}");
    tmux.keys("C-c");
    assert_eq!(tmux.wait_exit(), "0", "exit status after Ctrl-C");
    assert!(!tmux.alternate_on(false), "alternate screen left");
}

/// The one child of `pid` (from its main thread's `children`).
fn only_child(pid: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let kids =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        let kids: Vec<&str> = kids.split_whitespace().collect();
        if kids.len() == 1 {
            return kids[0].to_string();
        }
        assert!(Instant::now() < deadline, "pid {pid}'s children: {kids:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `pidmap top` under a shell that, once top is gone, records its status
/// and the terminal's modes; `sig` is sent to top alone.
fn killed_top_restores_the_terminal(sig: libc::c_int, name: &str) {
    let tmux = Tmux::new(name);
    let dir = std::env::temp_dir().join(format!("pidmap-top-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (status, modes) = (dir.join("status"), dir.join("stty"));
    let script = format!(
        "'{}' top -d 0.3; echo $? > '{}.tmp'; stty -a > '{}'; mv '{}.tmp' '{}'; sleep 60",
        support::bin().display(),
        status.display(),
        modes.display(),
        status.display(),
        status.display()
    );
    tmux.start_shell(&script);
    tmux.wait_for("started", started);
    assert!(tmux.alternate_on(true), "on the alternate screen");
    let top: i32 = only_child(&tmux.format("#{pane_pid}")).parse().unwrap();
    // SAFETY: kill(2) with a pid of our own tmux's grandchild.
    assert_eq!(unsafe { libc::kill(top, sig) }, 0, "kill {top}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !status.exists() {
        assert!(
            Instant::now() < deadline,
            "top did not exit on signal {sig}; screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let code = std::fs::read_to_string(&status).unwrap();
    let stty = std::fs::read_to_string(&modes).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // The shell's $? for a death by signal N is 128 + N.
    assert_eq!(code.trim(), (128 + sig).to_string(), "died of the signal");
    assert!(!tmux.alternate_on(false), "alternate screen left");
    assert_eq!(tmux.format("#{cursor_flag}"), "1", "cursor shown");
    let words: Vec<&str> = stty.split_whitespace().collect();
    for mode in ["icanon", "echo", "isig", "opost"] {
        assert!(words.contains(&mode), "{mode} is back on: {stty}");
    }
    assert!(!tmux.screen().contains("load average"), "screen restored");
}

#[test]
fn sigterm_restores_the_terminal() {
    killed_top_restores_the_terminal(libc::SIGTERM, "sigterm");
}

#[test]
fn sighup_restores_the_terminal() {
    killed_top_restores_the_terminal(libc::SIGHUP, "sighup");
}

#[test]
fn user_filter_and_iterations() {
    let tmux = Tmux::new("user");
    // Only root's tasks; `-n 2`: it quits by itself after two refreshes.
    tmux.start(&["top", "-d", "1", "-n", "2", "-u", "root"]);
    let s = tmux.wait_for("showed root's tasks", started);
    let rows = table(&s);
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r[1] == "root"),
        "{s}"
    );
    assert_eq!(tmux.wait_exit(), "0", "exit status after -n 2");
    // A user that does not exist: one line, exit 1.
    let out = Command::new(support::bin())
        .args(["top", "-u", "no-such-user-pidmap"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pidmap: no such user: \"no-such-user-pidmap\"\n"
    );
}

/// Under a small fd limit the interactive top says why it cannot run and
/// gives the terminal back at once (it used to hang on a blank screen at
/// 100 % CPU with `ulimit -n` 6 or 7, inside crossterm's cursor read).
#[test]
fn a_small_fd_limit_is_an_error_line_not_a_hang() {
    for n in [6, 7, 8] {
        let tmux = Tmux::new(&format!("ulimit{n}"));
        let started_at = Instant::now();
        // The shell stays, so that tmux has read all top wrote.
        tmux.start_shell(&format!(
            "ulimit -n {n}; '{}' top; echo status=$?; sleep 60",
            support::bin().display()
        ));
        let screen = tmux.wait_for("top to exit", |s| s.contains("status="));
        let took = started_at.elapsed();
        // A second for top itself; tmux's start and polling add to it on
        // a loaded machine.
        assert!(
            took < Duration::from_secs(3),
            "ulimit -n {n}: took {took:?}"
        );
        assert!(screen.contains("status=1"), "ulimit -n {n}:\n{screen}");
        assert!(
            !tmux.alternate_on(false),
            "ulimit -n {n}: alternate screen left"
        );
        assert!(
            screen.contains("Too many open files"),
            "ulimit -n {n}: no cause on the screen:\n{screen}"
        );
        assert_eq!(
            screen.lines().filter(|l| l.starts_with("pidmap:")).count(),
            1,
            "ulimit -n {n}: one error line:\n{screen}"
        );
    }
}

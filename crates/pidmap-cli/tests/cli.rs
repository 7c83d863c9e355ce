//! `pidmap` end to end: every subcommand, `--json` validity, and every
//! bad-input case (one line on stderr, documented exit code, no panic).

use std::io::Read;
use std::process::{Command as StdCommand, Stdio};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn pidmap() -> Command {
    Command::cargo_bin("pidmap").unwrap()
}

fn me() -> i32 {
    std::process::id() as i32
}

fn ids(out: &[u8]) -> Vec<i32> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| l.parse().unwrap_or_else(|_| panic!("not an id: {l:?}")))
        .collect()
}

fn ascending(v: &[i32]) -> bool {
    v.windows(2).all(|w| w[0] < w[1])
}

fn json(args: &[&str]) -> Value {
    let out = pidmap().arg("--json").args(args).assert().success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).expect("valid JSON");
    v
}

fn syscall_available() -> bool {
    json(&["info"])["kernel_support"] == "available"
}

/// stderr is exactly one line.
fn one_line() -> impl Predicate<str> {
    predicate::function(|s: &str| s.lines().count() == 1 && s.starts_with("pidmap: "))
}

#[test]
fn procs_lists_us_ascending() {
    for extra in [&[][..], &["--no-kthreads"], &["--backend", "procfs"]] {
        let out = pidmap().arg("procs").args(extra).assert().success();
        let v = ids(&out.get_output().stdout);
        assert!(ascending(&v));
        assert!(v.contains(&me()), "{extra:?}");
    }
}

#[test]
fn tasks_include_our_threads() {
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let h = std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        tx.send(unsafe { libc::gettid() }).unwrap();
        let _ = stop_rx.recv();
    });
    let tid = rx.recv().unwrap();
    let v = ids(&pidmap().arg("tasks").assert().success().get_output().stdout);
    assert!(ascending(&v));
    assert!(v.contains(&me()) && v.contains(&tid));
    let v = ids(&pidmap()
        .args(["threads", &me().to_string()])
        .assert()
        .success()
        .get_output()
        .stdout);
    assert!(v.contains(&me()) && v.contains(&tid));
    let j = json(&["threads", &me().to_string()]);
    assert!(j["ids"].as_array().unwrap().contains(&Value::from(tid)));
    drop(stop_tx);
    h.join().unwrap();
}

#[test]
fn children_include_a_spawned_child() {
    let mut child = StdCommand::new("sleep")
        .arg("30")
        .spawn()
        .expect("spawn sleep");
    let pid = child.id() as i32;
    let v = ids(&pidmap()
        .args(["children", &me().to_string()])
        .assert()
        .success()
        .get_output()
        .stdout);
    assert!(v.contains(&pid), "{pid} not in {v:?}");
    let j = json(&["children", &me().to_string(), "--long"]);
    let entries = j["entries"].as_array().unwrap();
    assert!(entries
        .iter()
        .any(|e| e["pid"] == pid && e["comm"] == "sleep" && e["ppid"] == me()));
    let v = ids(&pidmap()
        .args(["children", &pid.to_string()])
        .assert()
        .success()
        .get_output()
        .stdout);
    assert!(v.is_empty());
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn fds_include_a_known_fd() {
    let mut p = [0; 2];
    // SAFETY: valid array; dup2 to an fd number no other test uses.
    let fd = unsafe {
        assert_eq!(libc::pipe(p.as_mut_ptr()), 0);
        libc::dup2(p[0], 777)
    };
    assert_eq!(fd, 777);
    let v = ids(&pidmap()
        .args(["fds", &me().to_string()])
        .assert()
        .success()
        .get_output()
        .stdout);
    assert!(ascending(&v) && v.contains(&777), "{v:?}");
    pidmap()
        .args(["fds", &me().to_string(), "--long"])
        .assert()
        .success()
        .stdout(predicate::str::contains("TARGET").and(predicate::str::contains("pipe:[")));
    let j = json(&["fds", "0"]);
    assert_eq!(
        j["count"].as_u64().unwrap() as usize,
        j["ids"].as_array().unwrap().len()
    );
    // SAFETY: closing fds we own.
    unsafe {
        libc::close(777);
        libc::close(p[0]);
        libc::close(p[1]);
    }
}

#[test]
fn long_output_is_a_quick_ps() {
    let out = pidmap().args(["procs", "--long"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().contains("COMMAND"));
    let mine = lines
        .find(|l| l.split_whitespace().next() == Some(&me().to_string()))
        .expect("our own row");
    assert_eq!(
        mine.split_whitespace().nth(2).unwrap().len(),
        1,
        "state column: {mine}"
    );
}

#[test]
fn json_is_valid_for_every_subcommand() {
    let me = me().to_string();
    for args in [
        vec!["procs"],
        vec!["procs", "--no-kthreads", "--long"],
        vec!["tasks"],
        vec!["threads", &me],
        vec!["children", "1"],
        vec!["fds", &me],
        vec!["fds", &me, "--long"],
    ] {
        let j = json(&args);
        let ids = j["ids"].as_array().expect("ids");
        assert_eq!(j["count"].as_u64().unwrap() as usize, ids.len(), "{args:?}");
        assert!(j["backend"].is_string());
        if args.contains(&"--long") {
            assert!(j["entries"].is_array());
        }
    }
    let info = json(&["info"]);
    for k in [
        "backend",
        "requested",
        "kernel_support",
        "reason",
        "proc_root",
    ] {
        assert!(info.get(k).is_some(), "info lacks {k}");
    }
    assert_eq!(info["syscall_numbers"]["pidmap"], 1000);
    assert_eq!(info["syscall_numbers"]["fdmap"], 1001);
    let bench = json(&["bench", "--iterations", "2"]);
    assert!(!bench["results"].as_array().unwrap().is_empty());
    assert!(!bench["ratios"].as_array().unwrap().is_empty());
}

#[test]
fn info_explains_the_backend() {
    pidmap()
        .arg("info")
        .assert()
        .success()
        .stdout(predicate::str::contains("backend:").and(predicate::str::contains("reason:")));
    pidmap()
        .args(["info", "--backend", "procfs"])
        .assert()
        .success()
        .stdout(predicate::str::contains("procfs backend forced"));
}

#[test]
fn bench_runs_and_reports_ratios() {
    let out = pidmap()
        .args(["bench", "--iterations", "3"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(
        text.contains("std_read_dir") && text.contains("x the time of"),
        "{text}"
    );
    if !syscall_available() {
        assert!(text.contains("no pidmap(2)"), "{text}");
    }
}

#[test]
fn forced_syscall_backend() {
    if syscall_available() {
        pidmap()
            .args(["--backend", "syscall", "procs"])
            .assert()
            .success();
        return;
    }
    for args in [["procs"], ["info"], ["bench"]] {
        pidmap()
            .args(["--backend", "syscall"])
            .args(args)
            .assert()
            .code(1)
            .stderr(one_line())
            .stderr(predicate::str::contains("lacks pidmap(2)"))
            .stderr(predicate::str::contains("cargo xtask qemu-shell"));
    }
}

#[test]
fn bad_pids_are_usage_errors() {
    for cmd in ["threads", "children", "fds"] {
        for bad in ["abc", "-1", "12x", "", "99999999999"] {
            pidmap()
                .args([cmd, bad])
                .assert()
                .code(2)
                .stderr(one_line())
                .stderr(predicate::str::contains("panicked").not());
        }
    }
    pidmap().arg("threads").assert().code(2).stderr(one_line());
    pidmap()
        .arg("frobnicate")
        .assert()
        .code(2)
        .stderr(one_line());
    pidmap()
        .args(["--backend", "bogus", "procs"])
        .assert()
        .code(2)
        .stderr(one_line());
    pidmap()
        .args(["bench", "--iterations", "0"])
        .assert()
        .code(2)
        .stderr(one_line());
}

#[test]
fn nonexistent_pid_is_a_runtime_error() {
    for cmd in ["threads", "children", "fds"] {
        pidmap()
            .args([cmd, "1073741824"])
            .assert()
            .code(1)
            .stderr(one_line())
            .stderr(predicate::str::contains("no such process"));
    }
}

#[test]
fn missing_proc_root_is_a_runtime_error() {
    pidmap()
        .args([
            "--backend",
            "procfs",
            "--proc-root",
            "/nonexistent",
            "procs",
        ])
        .assert()
        .code(1)
        .stderr(one_line())
        .stderr(predicate::str::contains("not a mounted procfs"));
}

#[test]
fn fds_of_another_users_process_is_permission_denied() {
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("note: skipping the permission test: not root");
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin("pidmap");
    let mut cmd = StdCommand::new(&bin);
    cmd.args(["fds", &me().to_string()]).uid(65534).gid(65534);
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("note: skipping the permission test: cannot run as 65534: {e}");
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("Permission denied")
        && stderr.contains("os error")
        && !stderr.starts_with("pidmap:")
    {
        eprintln!("note: skipping the permission test: binary not executable by 65534");
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(one_line().eval(&stderr), "{stderr:?}");
    assert!(stderr.contains("permission denied"), "{stderr}");
}

#[test]
fn broken_pipe_exits_quietly() {
    let bin = assert_cmd::cargo::cargo_bin("pidmap");
    for args in [&["tasks", "--long"][..], &["procs"]] {
        let mut child = StdCommand::new(&bin)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

#[test]
fn help_and_version() {
    pidmap()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Exit status"));
    pidmap().arg("--version").assert().success();
    let cmd = pidmap_cli::command();
    cmd.clone().debug_assert();
    let names: Vec<_> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for want in [
        "procs", "tasks", "threads", "children", "fds", "info", "bench",
    ] {
        assert!(names.iter().any(|n| n == want), "{want}");
    }
}

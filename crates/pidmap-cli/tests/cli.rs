//! `pidmap` end to end: every subcommand, the JSON documents, names that
//! try to break rows, scoped flags, several pids, exit codes and usage
//! errors. Expected values come from /proc read here, or from processes
//! and threads the test creates, never from pidmap's own output.

use std::collections::BTreeSet;
use std::io::Read;
use std::process::{Command as StdCommand, Stdio};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

mod support;
use support::{Named, Parked};

fn pidmap() -> Command {
    Command::cargo_bin("pidmap").unwrap()
}

fn me() -> i32 {
    i32::try_from(std::process::id()).unwrap()
}

fn ids(out: &[u8]) -> Vec<i32> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| l.parse().unwrap_or_else(|_| panic!("not an id: {l:?}")))
        .collect()
}

/// A labelled listing of several targets: the heading, then
/// `(target, id)` pairs.
fn labelled(out: &[u8]) -> (Vec<String>, Vec<(i32, i32)>) {
    let text = String::from_utf8_lossy(out);
    let mut lines = text.lines();
    let heading = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let pairs = lines
        .map(|l| {
            let cells: Vec<i32> = l
                .split_whitespace()
                .map(|c| c.parse().unwrap_or_else(|_| panic!("not an id: {l:?}")))
                .collect();
            assert_eq!(cells.len(), 2, "{l:?}");
            (cells[0], cells[1])
        })
        .collect();
    (heading, pairs)
}

fn ascending(v: &[i32]) -> bool {
    v.windows(2).all(|w| w[0] < w[1])
}

fn json(args: &[&str]) -> Value {
    let out = pidmap().arg("--json").args(args).assert().success();
    serde_json::from_slice(&out.get_output().stdout).expect("valid JSON")
}

fn proc_ids(path: &str) -> BTreeSet<i32> {
    std::fs::read_dir(path)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

#[test]
fn procs_match_proc_and_are_ascending() {
    for extra in [&[][..], &["--no-kthreads"], &["--backend", "procfs"]] {
        let mut ok = false;
        for _ in 0..200 {
            let before = proc_ids("/proc");
            let out = pidmap().arg("procs").args(extra).assert().success();
            let after = proc_ids("/proc");
            let v = ids(&out.get_output().stdout);
            assert!(ascending(&v) && v.contains(&me()), "{extra:?}");
            let listed: BTreeSet<i32> = v.iter().copied().collect();
            if extra.is_empty() && before == after {
                // pidmap itself is the one extra entry; more are processes
                // that came and went in between (the other tests run
                // pidmap too): try again.
                let extra_ids: Vec<_> = listed.difference(&before).collect();
                assert!(before.is_subset(&listed), "{extra_ids:?}");
                if extra_ids.len() <= 1 {
                    ok = true;
                    break;
                }
                continue;
            }
            if !extra.is_empty() {
                ok = true;
                break;
            }
        }
        assert!(ok, "{extra:?}: /proc never stable");
    }
}

#[test]
fn tasks_have_a_tgid_column() {
    let parked = Parked::spawn(2);
    let v = ids(&pidmap().arg("tasks").assert().success().get_output().stdout);
    assert!(ascending(&v) && v.contains(&me()) && v.contains(&parked.tids[0]));
    let out = pidmap().args(["tasks", "--long"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        head,
        ["TID", "TGID", "PPID", "S", "UID", "NI", "NLWP", "RSS", "TIME", "START", "COMMAND"]
    );
    let row = lines
        .find(|l| l.split_whitespace().next() == Some(&parked.tids[1].to_string()))
        .expect("our thread's row");
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols[1], me().to_string(), "TGID of our thread: {row}");
    // SAFETY: getppid has no preconditions.
    assert_eq!(cols[2], unsafe { libc::getppid() }.to_string(), "{row}");
    let j = json(&["tasks", "--long"]);
    let e = j["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["pid"] == parked.tids[1])
        .unwrap();
    assert_eq!(e["tgid"], me());
}

#[test]
fn several_pids_and_self() {
    let parked = Parked::spawn(3);
    let kid = Named::spawn(b"kid");
    let me_s = me().to_string();
    let kid_s = kid.0.to_string();
    // Several targets: each id beside its target, under a heading.
    let out = pidmap().args(["threads", &me_s, &kid_s]).assert().success();
    let (heading, v) = labelled(&out.get_output().stdout);
    assert_eq!(heading, ["PID", "TID"]);
    assert!(
        parked.tids.iter().all(|t| v.contains(&(me(), *t))) && v.contains(&(kid.0, kid.0)),
        "{v:?}"
    );
    assert!(v.iter().all(|(p, _)| *p == me() || *p == kid.0), "{v:?}");
    // `self` is pidmap itself, resolved in JSON.
    let j = json(&["threads", "self", &kid_s]);
    let t = j["targets"].as_array().unwrap();
    assert_eq!(t.len(), 2);
    assert_eq!(t[0]["target"], "self");
    let own = t[0]["pid"].as_i64().unwrap();
    assert!(own > 0 && own != i64::from(me()));
    assert_eq!(t[0]["ids"], serde_json::json!([own]));
    assert_eq!(t[1]["pid"], kid.0);
    assert_eq!(t[1]["ids"], serde_json::json!([kid.0]));
    // One missing pid: the others are still listed, exit 1, one message.
    let out = pidmap()
        .args(["children", &me_s, "1073741824"])
        .assert()
        .code(1)
        .stderr(predicate::eq(
            "pidmap: no such process: process 1073741824\n",
        ));
    let (heading, v) = labelled(&out.get_output().stdout);
    assert_eq!(heading, ["PPID", "PID"]);
    assert!(v.contains(&(me(), kid.0)), "{v:?}");
    let out = pidmap()
        .args(["--json", "children", "1073741824", &me_s])
        .assert()
        .code(1);
    let j: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(j["targets"][0]["status"], "no_such_process");
    assert_eq!(j["targets"][1]["status"], "ok");
    assert!(j["targets"][1]["ids"]
        .as_array()
        .unwrap()
        .contains(&Value::from(kid.0)));
}

#[test]
fn names_are_escaped_like_ps_and_kept_in_json() {
    let evil = Named::spawn(b"evil\nname) Z 1");
    let bad = Named::spawn(b"bad\xff\x1b");
    let out = pidmap()
        .args(["children", "--long", "--no-headers", &me().to_string()])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    // One row per child, and no header.
    let ours: Vec<&&str> = rows
        .iter()
        .filter(|l| {
            let first = l.split_whitespace().next().unwrap();
            first == evil.0.to_string() || first == bad.0.to_string()
        })
        .collect();
    assert_eq!(ours.len(), 2, "{text:?}");
    assert!(
        rows.iter()
            .all(|l| l.split_whitespace().next().unwrap().parse::<i32>().is_ok()),
        "{text:?}"
    );
    for (kid, name) in [(&evil, "evil\\nname) Z 1"), (&bad, "bad\\xff\\x1b")] {
        let row = rows
            .iter()
            .find(|l| l.split_whitespace().next() == Some(&kid.0.to_string()))
            .unwrap();
        assert_eq!(row.split_whitespace().nth(2), Some("S"), "{row:?}");
        assert!(row.ends_with(&format!(" {name}")), "{row:?}");
    }
    let j = json(&["children", "--long", &me().to_string()]);
    let entries = j["targets"][0]["entries"].as_array().unwrap();
    let e = entries.iter().find(|e| e["pid"] == evil.0).unwrap();
    assert_eq!(e["comm"], "evil\nname) Z 1");
    assert!(e.get("comm_bytes").is_none());
    assert_eq!(e["ppid"], me());
    let b = entries.iter().find(|e| e["pid"] == bad.0).unwrap();
    assert_eq!(b["comm"], "bad\u{fffd}\u{1b}");
    assert_eq!(b["comm_bytes"], serde_json::json!([98, 97, 100, 255, 27]));
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
    let me_s = me().to_string();
    let v = ids(&pidmap()
        .args(["fds", &me_s])
        .assert()
        .success()
        .get_output()
        .stdout);
    assert!(ascending(&v) && v.contains(&777), "{v:?}");
    let link = std::fs::read_link("/proc/self/fd/777").unwrap();
    pidmap()
        .args(["fds", &me_s, "--long"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "{me_s}    777 {}",
            link.display()
        )));
    let j = json(&["fds", &me_s, "--long"]);
    let t = &j["targets"][0];
    let want: Vec<i32> = proc_ids("/proc/self/fd")
        .into_iter()
        .filter(|&fd| fd >= 700)
        .collect();
    let got: Vec<i32> = t["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| i32::try_from(v.as_i64().unwrap()).unwrap())
        .filter(|&fd| fd >= 700)
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        t["entries"].as_array().unwrap().len(),
        t["ids"].as_array().unwrap().len()
    );
    // SAFETY: closing fds we own.
    unsafe {
        libc::close(777);
        libc::close(p[0]);
        libc::close(p[1]);
    }
}

#[test]
fn json_documents_carry_the_schema() {
    let me_s = me().to_string();
    for args in [
        vec!["procs"],
        vec!["procs", "--no-kthreads", "--long"],
        vec!["tasks", "--long"],
        vec!["threads", &me_s],
        vec!["children", "1"],
        vec!["fds", "self", "--long"],
        vec!["info"],
    ] {
        let j = json(&args);
        assert_eq!(j["schema"], 2, "{args:?}");
        assert_eq!(j["command"], args[0], "{args:?}");
        if let Some(ids) = j["ids"].as_array() {
            if let Some(entries) = j["entries"].as_array() {
                // Every listed id has an entry, vanished or not.
                assert_eq!(entries.len(), ids.len(), "{args:?}");
                for (e, id) in entries.iter().zip(ids) {
                    assert_eq!(&e["pid"], id);
                    assert!(["ok", "vanished", "unknown"].contains(&e["status"].as_str().unwrap()));
                }
            }
        }
    }
    let info = json(&["info"]);
    assert_eq!(info["syscall_numbers"]["pidmap"], 473);
    assert_eq!(info["syscall_numbers"]["pidmap_info"], 474);
    assert_eq!(info["syscall_numbers"]["fdmap"], 475);
    assert_eq!(info["procfs_view"], true);
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
        .stdout(
            predicate::str::contains("procfs backend forced")
                .and(predicate::str::contains("not probed")),
        );
    pidmap()
        .arg("info")
        .env("PIDMAP_BACKEND", "procfs")
        .assert()
        .success()
        .stdout(predicate::str::contains("not probed"));
}

fn kernel_has_pidmap() -> bool {
    json(&["info"])["kernel_support"] == "available"
}

#[test]
fn forced_syscall_backend() {
    if kernel_has_pidmap() {
        pidmap()
            .args(["--backend", "syscall", "procs"])
            .assert()
            .success();
        return;
    }
    for args in [["procs"], ["tasks"]] {
        pidmap()
            .args(["--backend", "syscall"])
            .args(args)
            .assert()
            .code(1)
            .stderr(predicate::str::starts_with(
                "pidmap: the syscall backend cannot be used: ",
            ))
            .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    }
    // info reports the failure in its report, on stdout only.
    pidmap()
        .args(["--backend", "syscall", "info"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "reason:         the syscall backend cannot be used: ",
        ))
        .stderr("");
}

#[test]
fn usage_errors_are_claps_whole_message_with_exit_2() {
    pidmap().arg("fds").assert().code(2).stderr(
        predicate::str::contains("<PID>").and(predicate::str::contains("Usage: pidmap fds")),
    );
    pidmap()
        .args(["procs", "--backend"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "[possible values: auto, syscall, procfs]",
        ));
    for cmd in ["threads", "children", "fds"] {
        for bad in ["abc", "-1", "12x", "", "99999999999", "0"] {
            pidmap()
                .args([cmd, bad])
                .assert()
                .code(2)
                .stderr(predicate::str::starts_with("error: "))
                .stderr(predicate::str::contains(
                    "For more information, try '--help'.",
                ))
                .stderr(predicate::str::contains("panicked").not());
        }
    }
    pidmap()
        .args(["threads", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("use `self` for pidmap itself"));
    pidmap().arg("frobnicate").assert().code(2);
    // The bench is an example of the crate, not a subcommand.
    pidmap()
        .args(["bench", "--iterations", "2"])
        .assert()
        .code(2);
}

#[test]
fn flags_are_scoped_to_their_subcommands() {
    for bad in [
        &["-l", "info"][..],
        &["info", "--long"],
        &["info", "--no-kthreads"],
        &["fds", "self", "--no-kthreads"],
        &["--no-headers", "procs"],
    ] {
        pidmap().args(bad).assert().code(2);
    }
    for good in [
        &["procs", "--no-kthreads", "-l"][..],
        &["tasks", "--no-kthreads", "--no-headers"],
        &["threads", "self", "--no-kthreads", "-l"],
        &["children", "1", "--no-kthreads", "--long"],
        &["fds", "self", "--long", "--no-headers"],
    ] {
        pidmap().args(good).assert().success();
    }
    let out = pidmap()
        .args(["procs", "--long", "--no-headers"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse::<i32>()
        .is_ok());
}

/// `pidmap procs` through the /proc backend with a proc root that does
/// not exist: exit status 1.
fn procs_from_a_missing_proc_root() -> assert_cmd::assert::Assert {
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
}

#[test]
fn user_text_names_no_developer_tool() {
    let help = pidmap().arg("--help").assert().success();
    let mut all = String::from_utf8_lossy(&help.get_output().stdout).into_owned();
    for sub in [
        "procs", "tasks", "threads", "children", "fds", "info", "top",
    ] {
        let out = pidmap().args([sub, "--help"]).assert().success();
        all.push_str(&String::from_utf8_lossy(&out.get_output().stdout));
    }
    let out = procs_from_a_missing_proc_root();
    all.push_str(&String::from_utf8_lossy(&out.get_output().stderr));
    let out = pidmap().args(["threads", "1073741824"]).assert().code(1);
    all.push_str(&String::from_utf8_lossy(&out.get_output().stderr));
    for tool in ["cargo", "xtask", "qemu"] {
        assert!(!all.contains(tool), "user text mentions {tool}:\n{all}");
    }
    assert!(all.contains("Exit status"));
}

#[test]
fn runtime_errors_are_one_line_exit_1() {
    for cmd in ["threads", "children", "fds"] {
        pidmap()
            .args([cmd, "1073741824"])
            .assert()
            .code(1)
            .stderr(predicate::eq(
                "pidmap: no such process: process 1073741824\n",
            ));
    }
    procs_from_a_missing_proc_root().stderr(predicate::eq(
        "pidmap: /nonexistent is not a mounted procfs of this pid namespace\n",
    ));
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
    let out = cmd.output().expect("run pidmap as 65534");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "pidmap: permission denied: cannot list the fds of process {}\n",
            me()
        )
    );
}

/// `pidmap --json --long threads PID | (read a little; exit)`: the
/// document is far larger than a pipe buffer, so pidmap writes into a
/// closed pipe; it must exit 0 without a word.
#[test]
fn broken_pipe_exits_quietly() {
    let _parked = Parked::spawn(1500);
    let bin = assert_cmd::cargo::cargo_bin("pidmap");
    let me_s = me().to_string();
    for args in [
        vec!["--json", "threads", &me_s, "--long"],
        vec!["threads", &me_s, "--long"],
        vec!["--json", "tasks", "--long"],
        vec!["tasks"],
    ] {
        let mut child = StdCommand::new(&bin)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 100];
        stdout.read_exact(&mut first).unwrap();
        drop(stdout);
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
    pidmap().arg("--version").assert().success();
    let cmd = pidmap_cli::command();
    cmd.clone().debug_assert();
    let names: Vec<_> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for want in [
        "procs", "tasks", "threads", "children", "fds", "info", "top",
    ] {
        assert!(names.iter().any(|n| n == want), "{want}");
    }
    assert!(!names.iter().any(|n| n == "bench"), "{names:?}");
}

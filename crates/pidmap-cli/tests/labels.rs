//! Output that says whose each id is, and fd targets that cannot be read:
//! several pids without `--long` label each id with its target, and a
//! refused fd target is a warning on stderr and `permission_denied` in
//! JSON, not a silent `?`.

use std::process::Command;

use serde_json::Value;

mod support;
use support::{bin, me, Named};

fn run(args: &[&str]) -> std::process::Output {
    Command::new(bin()).args(args).output().expect("run pidmap")
}

#[test]
fn several_fd_targets_are_labelled_and_one_is_not() {
    let me_s = me().to_string();
    let kid = Named::spawn(b"labelkid");
    let kid_s = kid.0.to_string();
    let out = run(&["fds", &me_s, &kid_s]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines
            .next()
            .map(|l| l.split_whitespace().collect::<Vec<_>>()),
        Some(vec!["PID", "FD"])
    );
    let pairs: Vec<(i32, i32)> = lines
        .map(|l| {
            let c: Vec<i32> = l.split_whitespace().map(|c| c.parse().unwrap()).collect();
            (c[0], c[1])
        })
        .collect();
    // Each target's fds as /proc lists them, under its own pid.
    for pid in [me(), kid.0] {
        let want: std::collections::BTreeSet<i32> = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        let got: std::collections::BTreeSet<i32> = pairs
            .iter()
            .filter(|(p, _)| *p == pid)
            .map(|(_, fd)| *fd)
            .collect();
        // Our own table may change by the fds the listing itself opens.
        if pid == kid.0 {
            assert_eq!(got, want, "{text}");
        } else {
            assert!(got.contains(&0) && got.contains(&1), "{text}");
        }
    }
    // --no-headers drops the heading; one target stays one bare column.
    let out = run(&["fds", "--no-headers", &me_s, &kid_s]);
    let first = String::from_utf8(out.stdout).unwrap();
    assert_eq!(first.lines().next().unwrap().split_whitespace().count(), 2);
    let out = run(&["fds", &kid_s]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().all(|l| l.trim().parse::<i32>().is_ok()),
        "{text}"
    );
}

/// Whether this process may read pid 1's fd links (root without
/// `CAP_SYS_PTRACE` over it may list them but not read them).
fn can_read_fd_links_of_1() -> Option<bool> {
    let first = std::fs::read_dir("/proc/1/fd").ok()?.next()?.ok()?;
    match std::fs::read_link(first.path()) {
        Ok(_) => Some(true),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Some(false),
        Err(_) => None,
    }
}

#[test]
fn refused_fd_targets_are_warned_about_and_typed_in_json() {
    let Some(readable) = can_read_fd_links_of_1() else {
        panic!("/proc/1/fd can not be listed here: the test needs it");
    };
    let out = run(&["fds", "1", "--long"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    let out_json = run(&["--json", "fds", "1", "--long"]);
    let doc: Value = serde_json::from_slice(&out_json.stdout).unwrap();
    let entries = doc["targets"][0]["entries"].as_array().unwrap();
    if readable {
        // Nothing refused: no warning, and real targets.
        assert!(!stderr.contains("could not be read"), "{stderr}");
        assert!(entries.iter().any(|e| e["status"] == "ok"));
    } else {
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one warning: {stderr}");
        assert!(
            lines[0].starts_with("pidmap: warning: the targets of ")
                && lines[0].contains(" fds of process 1 could not be read (permission denied)"),
            "{stderr}"
        );
        assert!(text.lines().skip(1).all(|l| l.ends_with(" ?")), "{text}");
        assert!(
            entries
                .iter()
                .all(|e| e["status"] == "permission_denied" && e["error"] == "permission denied"),
            "{entries:?}"
        );
    }
}

//! `pidmap top -b` keeps its batch table, and takes `-p` and `-u` too.

use std::process::Command;

mod support;
use support::{bin, Named};

/// The rows of the batch tables: (TID, TGID, COMMAND).
fn rows(args: &[&str]) -> Vec<(i32, i32, String)> {
    let out = Command::new(bin())
        .args(["top", "-b", "-n", "1", "-d", "0.1"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("pidmap top - "), "{text}");
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        head,
        ["TID", "TGID", "S", "%CPU", "TIME+", "COMMAND"],
        "{text}"
    );
    lines
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            (
                c[0].parse().unwrap(),
                c[1].parse().unwrap(),
                c[5].to_string(),
            )
        })
        .collect()
}

#[test]
fn batch_pid_and_user_filters() {
    let kid = Named::spawn(b"filterkid");
    let kid_s = kid.0.to_string();
    assert_eq!(
        rows(&["-p", &kid_s]),
        [(kid.0, kid.0, "filterkid".to_string())]
    );
    // Two pids, comma-separated: both, and nothing else.
    let other = Named::spawn(b"otherkid");
    let both = rows(&["-p", &format!("{kid_s},{}", other.0)]);
    let mut ids: Vec<i32> = both.iter().map(|r| r.0).collect();
    ids.sort_unstable();
    let mut want = vec![kid.0, other.0];
    want.sort_unstable();
    assert_eq!(ids, want);
    // -u: only tasks whose effective uid is that user's, per /proc.
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() }.to_string();
    let mine = rows(&["-u", &uid]);
    assert!(mine.iter().any(|r| r.0 == kid.0), "{mine:?}");
    for (tid, _, _) in &mine {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{tid}/status")) else {
            continue; // gone since
        };
        let euid = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap();
        assert_eq!(euid, uid, "task {tid}");
    }
    // A uid nobody uses: no rows, still exit 0.
    assert!(rows(&["-u", "3999999998"]).is_empty());
}

/// The batch `Tasks:` line counts every task, before `-u`, by the rule of
/// the interactive header (D and I are sleeping): a user with no tasks
/// still sees the machine's total, and the counts add up.
#[test]
fn batch_header_counts_every_task_as_the_interactive_one() {
    let out = Command::new(bin())
        .args(["top", "-b", "-n", "1", "-d", "0.1", "-u", "3999999998"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let header = text.lines().next().unwrap();
    let after = header.split("Tasks: ").nth(1).expect(header);
    let numbers: Vec<usize> = after
        .split([',', ';'])
        .take(6)
        .map(|part| part.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    let [total, running, sleeping, stopped, zombie, shown] = numbers[..] else {
        panic!("{header}");
    };
    assert!(total > 1, "{header}");
    assert_eq!(shown, 0, "{header}");
    assert!(running + sleeping + stopped + zombie <= total, "{header}");
    assert!(sleeping > 0, "{header}");
    assert!(!header.contains("idle"), "{header}");
    assert!(
        after.starts_with(&format!(
            "{total} total, {running} running, {sleeping} sleeping, {stopped} stopped, {zombie} zombie; 0 shown;"
        )),
        "{header}"
    );
}
